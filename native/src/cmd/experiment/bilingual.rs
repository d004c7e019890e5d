//! The two-language setting shared by `views-multilingual` and `scaling` with
//! `experiment.scaling.measure = "multilingual"`: per language a Multi30k training corpus
//! and its own tokenizer, probe texts (first caption of each fit-split image, then of each
//! test-split image; the same images on both sides), and one encoder pair trained apart.

use anyhow::{Context, Result, bail};
use prh_core::backend::burn::tensor::backend::AutodiffBackend;
use prh_core::experiments::multilingual::{
    AlignmentPoint, ExperimentConfig, RecordingTask, Snapshot,
};
use prh_core::experiments::spectral_tfidf::SpectralTfidf;
use prh_core::measure::metrics::MetricOptions;
use prh_core::models::text_encoder::TextEncoder;
use prh_core::tasks::text::TextTask;
use prh_core::text::corpus::{self, Corpus};
use prh_core::text::tfidf::Tfidf;
use prh_core::text::tokenizer::TextTokenizer;
use prh_core::theory::view_kind::ViewKind;
use prh_core::train::TrainSummary;
use std::path::Path;
use std::time::Instant;

use super::Training;
use super::partial::{Recorded, train_recording};
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

/// Side `l`'s corpus of `split`: `spec.corpora[l]` with `{split}` replaced (JSONL, one
/// `{"id", "texts"}` group a line), else Multi30k's `split` in language `spec.langs[l]`.
fn read_side(
    spec: &prh_core::experiments::multilingual::ExperimentSpec,
    dir: &Path,
    l: usize,
    split: &str,
) -> Result<(String, Corpus)> {
    if spec.corpora.is_empty() {
        let name = format!("multi30k {split}.{}", spec.langs[l]);
        return Ok((name, corpus::read_multi30k(dir, split, &spec.langs[l])?));
    }
    let path = spec.corpora[l].replace("{split}", split);
    Ok((path.clone(), corpus::read_jsonl(Path::new(&path))?))
}

/// The groups of `split` that both sides have (by id, in side A's order; at most `max`,
/// 0: all): per side, the first text and (when `need_second`; else empty) the second of
/// each, and the ids.
#[allow(clippy::type_complexity)]
fn matched(
    spec: &prh_core::experiments::multilingual::ExperimentSpec,
    dir: &Path,
    split: &str,
    max: usize,
    need_second: bool,
) -> Result<([Vec<String>; 2], [Vec<String>; 2], Vec<String>)> {
    let (name_a, a) = read_side(spec, dir, 0, split)?;
    let (name_b, b) = read_side(spec, dir, 1, split)?;
    let index: std::collections::HashMap<&str, &corpus::Group> =
        b.groups.iter().map(|g| (g.id.as_str(), g)).collect();
    let (mut first, mut second, mut ids) = (
        [Vec::new(), Vec::new()],
        [Vec::new(), Vec::new()],
        Vec::new(),
    );
    for ga in &a.groups {
        if max > 0 && ids.len() == max {
            break;
        }
        let Some(gb) = index.get(ga.id.as_str()) else {
            continue;
        };
        for (side, (g, name)) in [(ga, &name_a), (*gb, &name_b)].into_iter().enumerate() {
            first[side].push(g.texts[0].clone());
            if !need_second {
                continue;
            }
            let second_text = g.texts.get(1).with_context(|| {
                format!(
                    "{name}: group {} field texts: has {} text(s), but the within-side \
                     score (text 1 vs text 2) needs at least 2",
                    g.id,
                    g.texts.len()
                )
            })?;
            second[side].push(second_text.clone());
        }
        ids.push(ga.id.clone());
    }
    if ids.len() <= spec.k + 1 {
        bail!(
            "{name_a} and {name_b}: {} group id(s) in common, need more than k + 1 = {} \
             (the two corpora must share group ids)",
            ids.len(),
            spec.k + 1
        );
    }
    Ok((first, second, ids))
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

    /// Reads the probes and training corpora of the two sides: Multi30k's `spec.langs`
    /// under `dir`, or the JSONL files `spec.corpora` (probes: the groups of the fit and
    /// test splits whose ids both sides have).
    pub fn load(cfg: &ExperimentConfig, source: &str, dir: &Path) -> Result<Self> {
        let spec = &cfg.spec;
        if !spec.corpora.is_empty() && spec.corpora.len() != 2 {
            bail!(
                "experiment.corpora: expected two JSONL paths (one per side), got {}",
                spec.corpora.len()
            );
        }
        let (fit, _, fit_ids) = matched(spec, dir, &spec.fit_split, spec.fit_groups, false)?;
        let (test, partners, test_ids) =
            matched(spec, dir, &spec.test_split, spec.test_groups, true)?;
        let (n_fit, n_test) = (fit_ids.len(), test_ids.len());
        let [fit_a, fit_b] = fit;
        let [test_a, test_b] = test;
        let probes = [[fit_a, test_a].concat(), [fit_b, test_b].concat()];
        let ids = [fit_ids, test_ids].concat();
        let base = cfg.train_config(source, ViewKind::Good, 0, &spec.langs[0])?;
        let mut corpora = Vec::new();
        let mut toks = Vec::new();
        for (l, lang) in spec.langs.iter().enumerate() {
            let (_, mut c) = read_side(spec, dir, l, &base.data.train_split)?;
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
        Ok(Self {
            probes,
            partners,
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
        training: Training<'_, B>,
        mut on_trained: impl FnMut(
            usize,
            &RecordingTask,
            &TrainSummary<TextEncoder<B>>,
            &str,
        ) -> Result<()>,
    ) -> Result<PairRun> {
        let mut snaps = Vec::new();
        let (mut final_loss, mut train_s) = ([0.0; 2], [0.0; 2]);
        for l in 0..2 {
            let run = self.train_lang(
                cfg,
                source,
                l,
                (objective, seed),
                steps,
                eval_every,
                training,
                &mut on_trained,
            )?;
            final_loss[l] = run.final_loss;
            train_s[l] = run.train_s;
            snaps.push(run.snaps);
        }
        Ok(PairRun {
            snaps: two(snaps)?,
            final_loss,
            train_s,
        })
    }

    /// [`Bilingual::train_pair`] for language `l` only.
    #[allow(clippy::too_many_arguments)]
    pub fn train_lang<B: AutodiffBackend>(
        &self,
        cfg: &ExperimentConfig,
        source: &str,
        l: usize,
        (objective, seed): (ViewKind, u64),
        steps: Option<usize>,
        eval_every: usize,
        training: Training<'_, B>,
        on_trained: &mut impl FnMut(
            usize,
            &RecordingTask,
            &TrainSummary<TextEncoder<B>>,
            &str,
        ) -> Result<()>,
    ) -> Result<LangRun> {
        let lang = &cfg.spec.langs[l];
        let mut tcfg = cfg.train_config(source, objective, seed, lang)?;
        if let Some(s) = steps {
            tcfg.run.steps = s;
            tcfg.optim.warmup_steps = tcfg.optim.warmup_steps.min(s / 10);
        }
        tcfg.run.eval_every = eval_every;
        let config_toml = tcfg.to_toml()?;
        let inner = TextTask::new(tcfg.clone(), self.toks[l].clone(), &self.corpora[l].groups)?;
        let Recorded {
            task,
            summary,
            train_s,
        } = train_recording::<B>(
            inner,
            self.recorded_rows(l),
            &config_toml,
            &format!("{} s{seed} {lang}", objective.label()),
            training,
        )
        .with_context(|| format!("training {} seed {seed} ({lang})", objective.label()))?;
        on_trained(l, &task, &summary, &config_toml)?;
        eprintln!(
            "{} seed {seed} {lang}: {} steps, loss {:.4}, {train_s:.1} s",
            objective.label(),
            summary.steps,
            summary.last_loss,
        );
        Ok(LangRun {
            snaps: task.snapshots,
            final_loss: summary.last_loss,
            train_s,
            steps: summary.steps,
        })
    }

    /// The texts recorded for language `l`, in the row layout [`Bilingual::point`] and
    /// [`Bilingual::pair_scores`] read: the probes (fit, then test), then the test
    /// images' second captions.
    fn recorded_rows(&self, l: usize) -> Vec<String> {
        [self.probes[l].as_slice(), &self.partners[l]].concat()
    }

    /// Caption 1 vs caption 2 of the test images from one language's recorded rows `e`
    /// (width `d`, [`Bilingual::recorded_rows`]' layout).
    pub fn pair_scores(
        &self,
        e: &[f32],
        d: usize,
        opts: &MetricOptions,
    ) -> Result<prh_core::measure::retrieval::PairScores> {
        let n = self.n_fit + self.n_test;
        if e.len() != (n + self.n_test) * d {
            bail!(
                "recorded embeddings: expected [{}, {d}], got {} values",
                n + self.n_test,
                e.len()
            );
        }
        Ok(prh_core::experiments::multilingual::pair_point(
            &e[self.n_fit * d..n * d],
            &e[n * d..],
            d,
            opts,
        )?)
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
        let n = self.n_fit + self.n_test;
        let pairs = [
            self.pair_scores(emb[0], d[0], opts)?,
            self.pair_scores(emb[1], d[1], opts)?,
        ];
        let mut p = prh_core::experiments::multilingual::align_point(
            step,
            &emb[0][..n * d[0]],
            d[0],
            &emb[1][..n * d[1]],
            d[1],
            self.n_fit,
            self.n_test,
            opts,
        )?;
        p.pairs = Some(pairs);
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
        for (l, width) in d.iter_mut().enumerate() {
            let texts: Vec<&str> = self.corpora[l].texts().collect();
            let t = Tfidf::fit(&texts, spec.tfidf_features);
            *width = t.width();
            emb.push(
                t.transform(&self.recorded_rows(l))
                    .iter()
                    .map(|&v| v as f32)
                    .collect::<Vec<f32>>(),
            );
        }
        // No outlier clamp: TF-IDF rows are sparse, and the clamp at the 0.95 quantile of
        // |x| (0 here) would zero them; they are L2-normalised like the encoders' rows.
        let opts = metric_options(spec, spec.null_shuffles, false);
        self.point(0, [&emb[0], &emb[1]], d, &opts)
    }

    /// The closed-form encoders of `kind` (good or bad views) fit on each language's own
    /// training corpus ([`SpectralTfidf`], seeded by `seed`), measured as the trained
    /// encoders are (PRH outlier clamp, rotation for R@1 fit on the fit rows); also the
    /// top reached value and the d-th of each language.
    pub fn closed_form_point(
        &self,
        spec: &prh_core::experiments::multilingual::ExperimentSpec,
        kind: ViewKind,
        seed: u64,
    ) -> Result<(AlignmentPoint, [[f64; 2]; 2])> {
        let mut emb = Vec::new();
        let mut d = [0; 2];
        let mut values = [[0.0; 2]; 2];
        for l in 0..2 {
            let t0 = Instant::now();
            let groups: Vec<&[String]> = self.corpora[l]
                .groups
                .iter()
                .map(|g| g.texts.as_slice())
                .collect();
            let enc = SpectralTfidf::fit(&groups, kind, &spec.closed_form, seed)
                .with_context(|| format!("closed form, {}, {}", kind.label(), spec.langs[l]))?;
            d[l] = enc.dim();
            let v = enc.values();
            values[l] = [v[0], v[v.len() - 1]];
            emb.push(enc.embed(&self.recorded_rows(l)));
            eprintln!(
                "closed form {} {} seed {seed}: reached values {:.3} .. {:.3} ({:.1} s)",
                kind.label(),
                spec.langs[l],
                values[l][0],
                values[l][1],
                t0.elapsed().as_secs_f64()
            );
        }
        let opts = metric_options(spec, spec.null_shuffles, true);
        Ok((self.point(0, [&emb[0], &emb[1]], d, &opts)?, values))
    }
}

/// The experiment's metric settings: `spec.k` neighbours, `shuffles` null shuffles, the
/// PRH outlier clamp when `clamp` (else none), rows L2-normalised.
pub(super) fn metric_options(
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

/// One language's run: its probe snapshots, last loss, wall time and steps done.
pub(super) struct LangRun {
    pub snaps: Vec<Snapshot>,
    pub final_loss: f64,
    pub train_s: f64,
    pub steps: usize,
}

/// One objective x seed: both languages' probe snapshots, last losses and wall times.
pub(super) struct PairRun {
    pub snaps: [Vec<Snapshot>; 2],
    pub final_loss: [f64; 2],
    pub train_s: [f64; 2],
}
