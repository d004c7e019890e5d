//! The two-language setting shared by `views-multilingual` and `scaling` with
//! `experiment.scaling.measure = "multilingual"`: per language a Multi30k training corpus
//! and its own tokenizer, probe texts (first caption of each fit-split image, then of each
//! test-split image; the same images on both sides), and one encoder pair trained apart.

use crate::backend::Devices;
use anyhow::{Context, Result, bail};
use prh_core::backend::burn::tensor::backend::AutodiffBackend;
use prh_core::experiments::multilingual::{
    AlignmentPoint, ExperimentConfig, RecordingTask, Snapshot,
};
use prh_core::models::text_encoder::TextEncoder;
use prh_core::tasks::text::TextTask;
use prh_core::text::corpus::{self, Corpus};
use prh_core::measure::metrics::MetricOptions;
use prh_core::text::tfidf::Tfidf;
use prh_core::text::tokenizer::TextTokenizer;
use prh_core::theory::view_kind::ViewKind;
use prh_core::train::TrainSummary;
use std::path::Path;
use std::time::Instant;

use super::train_recording;
use crate::run_folder::read_tokenizer;

/// Both languages' corpora, tokenizers and probe texts.
pub(super) struct Bilingual {
    /// Probe texts per language: `n_fit` fit rows, then `n_test` test rows.
    pub probes: [Vec<String>; 2],
    /// Image ids of the probe rows (the same on both sides).
    pub ids: Vec<String>,
    /// Per language, the second caption of each test-split image (row-aligned with the
    /// last `n_test` probes): the within-language caption-vs-caption score.
    pub partners: [Vec<String>; 2],
    pub n_fit: usize,
    pub n_test: usize,
    /// Training corpus per language.
    pub corpora: [Corpus; 2],
    /// One tokenizer per language, trained on that language's corpus only.
    pub toks: [TextTokenizer; 2],
    /// Mean tokens of one caption, and of all captions of one image (each capped at
    /// max_len), in the first language: what one bad-view / next-token sample and one
    /// good-view sample read.
    pub tokens_per_text: f64,
    pub tokens_per_group: f64,
}

/// Language `lang`'s tokenizer: read from `cfg.path` when set (`{lang}` in it becomes the
/// language, e.g. `--set train.tokenizer.path=runs/x/tokenizer.{lang}.json`), else trained
/// on its corpus. Why a path: HF's WordPiece trainer breaks tied merge counts in a
/// process-dependent order (measured: 26 of 16,000 Multi30k-en tokens differ between two
/// runs), so only a saved tokenizer makes a rerun bit-exact; [`Bilingual::save_tokenizers`]
/// writes the ones a run trained.
fn tokenizer_for(
    cfg: &prh_core::text::tokenizer::TokenizerConfig,
    lang: &str,
    corpus: &corpus::Corpus,
) -> Result<TextTokenizer> {
    if cfg.path.is_empty() {
        return Ok(TextTokenizer::train(corpus.texts(), cfg)?);
    }
    let path = cfg.path.replace("{lang}", lang);
    read_tokenizer(Path::new(&path))
        .with_context(|| format!("train.tokenizer.path (the {lang} tokenizer)"))
}

/// The two entries of a per-language list.
fn two<T>(v: Vec<T>) -> Result<[T; 2]> {
    v.try_into()
        .map_err(|v: Vec<T>| anyhow::anyhow!("expected 2 languages, got {}", v.len()))
}

/// Caption `which` (0: the first) of the first `max` (0: all) groups of `split`, and the
/// image ids.
fn probe(
    dir: &Path,
    split: &str,
    lang: &str,
    max: usize,
    which: usize,
) -> Result<(Vec<String>, Vec<String>)> {
    let mut c = corpus::read_multi30k(dir, split, lang)?;
    c.truncate(max);
    c.groups
        .into_iter()
        .map(|g| {
            let t = g.texts.get(which).cloned().with_context(|| {
                format!("multi30k {split} ({lang}) image {}: no caption {}", g.id, which + 1)
            })?;
            Ok((t, g.id))
        })
        .collect()
}

impl Bilingual {
    /// Writes each language's tokenizer as `dir/tokenizer.<lang>.json`, which
    /// `--set train.tokenizer.path=dir/tokenizer.{lang}.json` reads back.
    pub fn save_tokenizers(&self, langs: &[String], dir: &Path) -> Result<()> {
        for (tok, lang) in self.toks.iter().zip(langs) {
            let path = dir.join(format!("tokenizer.{lang}.json"));
            crate::output::write_file(&path, tok.to_json()?.as_bytes())?;
        }
        Ok(())
    }

    /// Reads the probes and training corpora of `spec.langs` from `dir` (Multi30k).
    pub fn load(cfg: &ExperimentConfig, source: &str, dir: &Path) -> Result<Self> {
        let spec = &cfg.spec;
        let mut probes: Vec<Vec<String>> = Vec::new();
        let mut partners: Vec<Vec<String>> = Vec::new();
        let mut ids: Vec<Vec<String>> = Vec::new();
        let (mut n_fit, mut n_test) = (0, 0);
        for lang in &spec.langs {
            let (mut t, mut i) = probe(dir, &spec.fit_split, lang, spec.fit_groups, 0)?;
            n_fit = t.len();
            partners.push(probe(dir, &spec.test_split, lang, spec.test_groups, 1)?.0);
            let (t2, i2) = probe(dir, &spec.test_split, lang, spec.test_groups, 0)?;
            n_test = t2.len();
            t.extend(t2);
            i.extend(i2);
            probes.push(t);
            ids.push(i);
        }
        if ids[0] != ids[1] || probes[0].len() != probes[1].len() {
            bail!(
                "the {} and {} probe splits do not list the same images",
                spec.langs[0],
                spec.langs[1]
            );
        }
        let base = cfg.train_config(source, ViewKind::Good, 0, &spec.langs[0])?;
        let mut corpora = Vec::new();
        let mut toks = Vec::new();
        for lang in &spec.langs {
            let mut c = corpus::read_multi30k(dir, &base.data.train_split, lang)?;
            c.truncate(base.data.max_groups);
            toks.push(tokenizer_for(&base.tokenizer, lang, &c)?);
            corpora.push(c);
        }
        // Token statistics on a fixed stride of groups (all of them cost seconds).
        let cap = base.model.max_len;
        let stride = (corpora[0].groups.len() / 2000).max(1);
        let (mut nt, mut tt, mut ng) = (0usize, 0usize, 0usize);
        for g in corpora[0].groups.iter().step_by(stride) {
            ng += 1;
            for t in &g.texts {
                nt += 1;
                tt += toks[0].encode(t)?.len().min(cap);
            }
        }
        let ids = ids.swap_remove(0);
        Ok(Self {
            probes: two(probes)?,
            partners: two(partners)?,
            ids,
            n_fit,
            n_test,
            corpora: two(corpora)?,
            toks: two(toks)?,
            tokens_per_text: tt as f64 / nt.max(1) as f64,
            tokens_per_group: tt as f64 / ng.max(1) as f64,
        })
    }

    /// Trains one encoder per language with `objective` and `seed` (for `steps` steps
    /// when given, with a proportionate warmup, else the config's), recording the probe
    /// embeddings at step 0, every `eval_every` steps and at the end. `on_trained(lang
    /// index, task, summary, config)` sees each trained encoder (exports).
    #[allow(clippy::too_many_arguments)]
    pub fn train_pair<B: AutodiffBackend>(
        &self,
        cfg: &ExperimentConfig,
        source: &str,
        objective: ViewKind,
        seed: u64,
        steps: Option<usize>,
        eval_every: usize,
        devices: Devices<B>,
        mut on_trained: impl FnMut(
            usize,
            &RecordingTask,
            &TrainSummary<TextEncoder<B>>,
            &str,
        ) -> Result<()>,
    ) -> Result<PairRun> {
        let mut snaps = Vec::new();
        let (mut final_loss, mut train_s) = ([0.0; 2], [0.0; 2]);
        for (l, lang) in cfg.spec.langs.iter().enumerate() {
            let mut tcfg = cfg.train_config(source, objective, seed, lang)?;
            if let Some(s) = steps {
                tcfg.run.steps = s;
                tcfg.optim.warmup_steps = tcfg.optim.warmup_steps.min(s / 10);
            }
            tcfg.run.eval_every = eval_every;
            let config_toml = tcfg.to_toml()?;
            let inner = TextTask::new(tcfg.clone(), self.toks[l].clone(), &self.corpora[l].groups)?;
            let t = Instant::now();
            // Recorded rows: the probes (fit, then test), then the test images' second captions.
            let recorded = [self.probes[l].as_slice(), &self.partners[l]].concat();
            let (task, summary) = train_recording::<B>(
                inner,
                recorded,
                &config_toml,
                &format!("{} s{seed} {lang}", objective.label()),
                devices,
            )
            .with_context(|| format!("training {} seed {seed} ({lang})", objective.label()))?;
            train_s[l] = t.elapsed().as_secs_f64();
            final_loss[l] = summary.last_loss;
            on_trained(l, &task, &summary, &config_toml)?;
            eprintln!(
                "{} seed {seed} {lang}: {} steps, loss {:.4}, {:.1} s",
                objective.label(),
                summary.steps,
                summary.last_loss,
                train_s[l]
            );
            snaps.push(task.snapshots);
        }
        Ok(PairRun {
            snaps: two(snaps)?,
            final_loss,
            train_s,
        })
    }

    /// Alignment of the two languages at every recorded step of `run` (the permutation
    /// null, with `null_shuffles` shuffles, only at the last one).
    pub fn curve(
        &self,
        cfg: &ExperimentConfig,
        source: &str,
        run: &PairRun,
    ) -> Result<Vec<AlignmentPoint>> {
        let spec = &cfg.spec;
        let d = cfg
            .train_config(source, ViewKind::Good, 0, &spec.langs[0])?
            .model
            .dims()
            .0;
        let last = run.snaps[0].len().min(run.snaps[1].len());
        let mut curve = Vec::new();
        for (i, (a, b)) in run.snaps[0].iter().zip(&run.snaps[1]).enumerate() {
            if a.step != b.step {
                bail!("snapshot steps differ: {} vs {}", a.step, b.step);
            }
            // The null at the first point (the random initialisation, a baseline row) and
            // the last.
            let shuffles = if i == 0 || i + 1 == last {
                spec.null_shuffles
            } else {
                0
            };
            curve.push(self.point(
                a.step,
                [&a.embeddings, &b.embeddings],
                [d, d],
                &metric_options(spec, shuffles, true),
            )?);
        }
        Ok(curve)
    }

    /// Alignment of one pair of recorded embeddings (rows: `n_fit` fit probes, `n_test`
    /// test probes, `n_test` second captions of the test images; widths `d`), with the
    /// within-language caption 1 vs caption 2 scores on the test images.
    fn point(
        &self,
        step: usize,
        emb: [&[f32]; 2],
        d: [usize; 2],
        opts: &MetricOptions,
    ) -> Result<AlignmentPoint> {
        let (n_fit, n) = (self.n_fit, self.n_fit + self.n_test);
        for (e, w) in emb.iter().zip(d) {
            if e.len() != (n + self.n_test) * w {
                bail!(
                    "recorded embeddings: expected [{}, {w}], got {} values",
                    n + self.n_test,
                    e.len()
                );
            }
        }
        let mut p = prh_core::experiments::multilingual::align_point(
            step,
            &emb[0][..n * d[0]],
            d[0],
            &emb[1][..n * d[1]],
            d[1],
            n_fit,
            self.n_test,
            opts,
        )?;
        let pair = |l: usize| {
            prh_core::experiments::multilingual::pair_point(
                &emb[l][n_fit * d[l]..n * d[l]],
                &emb[l][n * d[l]..],
                d[l],
                opts,
            )
        };
        p.pairs = Some([pair(0)?, pair(1)?]);
        Ok(p)
    }

    /// The training-free baseline: each language's TF-IDF ([`Tfidf`], fit on its own
    /// training captions, `tfidf_features` terms) of the same probe rows, measured as the
    /// encoders are (the rotation for R@1 fit on the fit rows).
    pub fn tfidf_point(
        &self,
        spec: &prh_core::experiments::multilingual::ExperimentSpec,
    ) -> Result<AlignmentPoint> {
        let mut emb = Vec::new();
        let mut d = [0; 2];
        for l in 0..2 {
            let texts: Vec<&str> = self.corpora[l].texts().collect();
            let t = Tfidf::fit(&texts, spec.tfidf_features);
            d[l] = t.width();
            let rows = [self.probes[l].as_slice(), &self.partners[l]].concat();
            emb.push(t.transform(&rows).iter().map(|&v| v as f32).collect::<Vec<f32>>());
        }
        // No outlier clamp: TF-IDF rows are sparse, and the clamp at the 0.95 quantile of
        // |x| (0 here) would zero them; they are L2-normalised like the encoders' rows.
        let opts = metric_options(spec, spec.null_shuffles, false);
        self.point(0, [&emb[0], &emb[1]], d, &opts)
    }
}

/// The experiment's metric settings: `spec.k` neighbours, `shuffles` null shuffles, the
/// PRH outlier clamp when `clamp` (else none), rows L2-normalised.
fn metric_options(
    spec: &prh_core::experiments::multilingual::ExperimentSpec,
    shuffles: usize,
    clamp: bool,
) -> MetricOptions {
    let mut opts = MetricOptions {
        k: spec.k,
        null_shuffles: shuffles,
        ..MetricOptions::default()
    };
    if !clamp {
        opts.preprocess.outlier_q = None;
    }
    opts
}

/// One objective x seed: both languages' probe snapshots, last losses and wall times.
pub(super) struct PairRun {
    pub snaps: [Vec<Snapshot>; 2],
    pub final_loss: [f64; 2],
    pub train_s: [f64; 2],
}
