//! Experiments on real data (paper sections 5-6): two encoders that never see each other
//! are trained with one objective each, and their alignment on held-out pairs is measured
//! over training.
//!
//! `views-multilingual`: an English text encoder trained only on English captions and a
//! German one trained only on German captions of the same images. The two languages are
//! two "modalities" observing one world (the images); the paper predicts that good views
//! (two captions of one image) align them better than bad views (spans of one caption)
//! or next-token prediction.
//!
//! This module is the computation (config, a [`TrainTask`] wrapper that records
//! embeddings during training, the alignment of one checkpoint pair, seed statistics);
//! files are written by the native command (`prh-native experiment`), and the report text
//! and plots by [`crate::experiments::report`].

use burn::module::AutodiffModule;
use burn::prelude::*;
use burn::tensor::backend::AutodiffBackend;
use serde::{Deserialize, Serialize};

use crate::formats::features::Features;
use crate::linalg::from_row_major;
use crate::measure::metrics::{MetricOptions, measure};
use crate::measure::preprocess::l2_normalize_rows;
use crate::measure::retrieval::{PairScores, align_and_rank};
use crate::rng::{Stream, derive_seed};
use crate::tasks::text::TrainConfig;
use crate::tasks::text::{TextTask, embed_texts};
use crate::theory::view_kind::ViewKind;
use crate::train::{StepOutput, TrainTask};
use crate::{Error, Result};

/// The experiment's own settings (the `[experiment]` table of its TOML).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExperimentSpec {
    /// Experiment name (report title).
    pub name: String,
    /// Objectives compared, all with the same architecture, data and sample budget.
    pub objectives: Vec<ViewKind>,
    /// Seeds per objective (each seed trains both languages).
    pub seeds: Vec<u64>,
    /// The two languages ("modalities"); never paired during training.
    pub langs: [String; 2],
    /// Record embeddings every this many steps (plus at step 0 and at the end).
    pub eval_every: usize,
    /// Split whose pairs fit the rotation for retrieval (Multi30k `val`: 1,014 images).
    pub fit_split: String,
    /// Split on which alignment is measured (Multi30k `test_2016`: 1,000 images).
    pub test_split: String,
    /// Use at most this many fit groups (0: all).
    pub fit_groups: usize,
    /// Use at most this many test groups (0: all).
    pub test_groups: usize,
    /// Neighbours for mutual k-NN (PRH: 10).
    pub k: usize,
    /// Shuffles of the mutual k-NN permutation null at the final step.
    pub null_shuffles: usize,
    /// `views-multilingual`: write seed 0's test-set embeddings of every objective and
    /// language (`export/<objective>.<lang>.test.npy`) and its good-view encoders
    /// (`export/good.<lang>.prh.safetensors`) for the web app.
    pub export: bool,
    /// `views-vision` and `scaling`: corpus and evaluation settings.
    pub vision: crate::experiments::vision::VisionSpec,
    /// `scaling`: the sample budgets.
    pub scaling: ScalingSpec,
    /// Training steps of one objective in place of `[train] run.steps` (e.g.
    /// `next-token = 800` while good and bad views train 8,192: a next-token step pays a
    /// vocabulary-sized softmax, so its budget is set apart); it wins over `--set
    /// train.run.steps`. `views-vision` and `views-multilingual` (`scaling` has
    /// `scaling.objective_budgets`); their reports state each objective's steps.
    pub objective_steps: std::collections::BTreeMap<ViewKind, usize>,
    /// Two JSONL corpora (`{"id", "texts": [...]}` a line), one per side, with `{split}`
    /// standing for the split name (`fit_split`, `test_split`, `[train] data.train_split`),
    /// e.g. `["my/en.{split}.jsonl", "my/fr.{split}.jsonl"]`; groups are matched by id.
    /// Empty: Multi30k in `langs` under the data directory.
    pub corpora: Vec<String>,
    /// `text-ablation`: the rows, each a set of `[train]` overrides (module docs of the
    /// native command).
    pub ablation: Vec<AblationRow>,
    /// Terms of the TF-IDF baseline ([`crate::text::tfidf`]; the most frequent in each
    /// language's training texts; 0: all).
    pub tfidf_features: usize,
    /// `views-multilingual`: view kinds that also get the closed-form encoder per seed and
    /// language ([`crate::experiments::spectral_tfidf`]: the spectral loss minimised
    /// exactly over linear maps of TF-IDF; rows "closed form, good" / "closed form, bad").
    /// Empty: none.
    pub closed_form_views: Vec<ViewKind>,
    /// The `[experiment.closed_form]` table: the closed-form encoder's settings.
    pub closed_form: crate::experiments::spectral_tfidf::SpectralTfidfConfig,
}

/// One row of `text-ablation` (`[[experiment.ablation]]`): what it changes, as `[train]`
/// overrides applied after the experiment's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AblationRow {
    /// What the row tries, in words (the report's first column).
    pub name: String,
    /// `[train]` overrides, `key.path=value` as `--set train.key.path=value` takes them.
    #[serde(default)]
    pub set: Vec<String>,
    /// Objective of the row (default good views).
    #[serde(default = "good_views")]
    pub objective: ViewKind,
    /// Also train the second language and score the two against each other.
    #[serde(default)]
    pub cross: bool,
}

fn good_views() -> ViewKind {
    ViewKind::Good
}

/// The `[experiment.scaling]` table: one run per objective and budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScalingSpec {
    /// Training steps of each run (samples = steps x batch size), ascending.
    pub budgets: Vec<usize>,
    /// Budgets of one objective in place of `budgets` (e.g. `next-token = [...]`: an
    /// objective that needs far more samples to move than good views, so that each
    /// curve is measured where it changes; the sample-efficiency crossing needs good
    /// views' curve to bracket next-token's best). Same rules as `budgets`.
    pub objective_budgets: std::collections::BTreeMap<ViewKind, Vec<usize>>,
    /// Index into each objective's budgets of the run left out of the law's fit and
    /// predicted by it.
    pub held_out: usize,
    /// Index into each objective's budgets of the first one the law is fit on (0: all).
    /// `a - b n^-c` describes a saturating curve; budgets before the curve's onset (where
    /// alignment still accelerates with samples) are measured and plotted, and locate
    /// where good views pass next-token's best, but would bend the fit.
    pub fit_from: usize,
    /// What "alignment" is: `vision` (mutual 10-NN of the class texts with
    /// EfficientNet-Lite0, the views-vision setting) or `multilingual` (en vs de mutual
    /// 10-NN on the test split, the views-multilingual setting: both encoders trained).
    pub measure: String,
}

impl ScalingSpec {
    /// The budgets (steps) of `objective`: its `objective_budgets` entry, else `budgets`.
    pub fn budgets_for(&self, objective: ViewKind) -> &[usize] {
        self.objective_budgets
            .get(&objective)
            .map_or(&self.budgets[..], |b| &b[..])
    }
}

impl Default for ScalingSpec {
    fn default() -> Self {
        Self {
            budgets: vec![25, 50, 100, 200, 400, 800],
            objective_budgets: Default::default(),
            held_out: 5,
            fit_from: 0,
            measure: "vision".into(),
        }
    }
}

impl Default for ExperimentSpec {
    fn default() -> Self {
        Self {
            name: "views-multilingual".into(),
            objectives: vec![ViewKind::Good, ViewKind::Bad, ViewKind::NextToken],
            seeds: vec![0, 1, 2],
            langs: ["en".into(), "de".into()],
            eval_every: 100,
            fit_split: "val".into(),
            test_split: "test_2016".into(),
            fit_groups: 0,
            test_groups: 0,
            k: 10,
            null_shuffles: 100,
            export: false,
            vision: Default::default(),
            scaling: Default::default(),
            objective_steps: Default::default(),
            tfidf_features: 2048,
            ablation: Vec::new(),
            corpora: Vec::new(),
            closed_form_views: Vec::new(),
            closed_form: Default::default(),
        }
    }
}

/// An experiment config: `[experiment]` plus a `[train]` table that is a whole
/// [`TrainConfig`] shared by every run (objective, seed and language are set per run).
#[derive(Debug, Clone, PartialEq)]
pub struct ExperimentConfig {
    /// The experiment's settings.
    pub spec: ExperimentSpec,
    /// The shared training config as TOML text.
    pub train_toml: String,
    /// `--set` overrides for the training config (`train.` prefix removed).
    pub train_overrides: Vec<String>,
}

impl ExperimentConfig {
    /// Parses the TOML `text` (`source` names it in errors) and applies overrides:
    /// `experiment.<field>=<toml value>` or `train.<dotted path>=<value>`.
    pub fn from_toml(source: &str, text: &str, overrides: &[String]) -> Result<Self> {
        let mut table: toml::Table =
            toml::from_str(text).map_err(|e| Error::format(source, "toml", e.to_string()))?;
        let mut exp = match table.remove("experiment") {
            Some(toml::Value::Table(t)) => t,
            Some(_) => return Err(Error::format(source, "experiment", "expected a table")),
            None => toml::Table::new(),
        };
        let train = match table.remove("train") {
            Some(toml::Value::Table(t)) => t,
            Some(_) => return Err(Error::format(source, "train", "expected a table")),
            None => toml::Table::new(),
        };
        if let Some(key) = table.keys().next() {
            return Err(Error::format(
                source,
                key.as_str(),
                "unknown table: expected only [experiment] and [train]",
            ));
        }
        let mut train_overrides = Vec::new();
        for o in overrides {
            let (key, value) = o
                .split_once('=')
                .ok_or_else(|| Error::invalid(format!("--set {o}: expected key=value")))?;
            if let Some(field) = key.strip_prefix("experiment.") {
                // The value as TOML (numbers, arrays), else as a plain string.
                let parsed = toml::from_str::<toml::Table>(&format!("v = {value}"))
                    .ok()
                    .and_then(|mut t| t.remove("v"))
                    .unwrap_or_else(|| toml::Value::String(value.to_string()));
                // Dotted fields reach nested tables (`experiment.vision.export=false`).
                let mut parts: Vec<&str> = field.split('.').collect();
                let leaf = parts.pop().unwrap_or(field);
                let mut table = &mut exp;
                for p in parts {
                    let entry = table
                        .entry(p.to_string())
                        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
                    table = entry.as_table_mut().ok_or_else(|| {
                        Error::invalid(format!("--set {o}: `{p}` is not a table"))
                    })?;
                }
                table.insert(leaf.to_string(), parsed);
            } else if let Some(path) = key.strip_prefix("train.") {
                train_overrides.push(format!("{path}={value}"));
            } else {
                return Err(Error::invalid(format!(
                    "--set {o}: keys start with `experiment.` or `train.`"
                )));
            }
        }
        let spec: ExperimentSpec = toml::Value::Table(exp)
            .try_into()
            .map_err(|e: toml::de::Error| Error::format(source, "experiment", e.to_string()))?;
        if spec.objectives.is_empty() || spec.seeds.is_empty() {
            return Err(Error::format(
                source,
                "experiment",
                "objectives and seeds must each name at least one entry",
            ));
        }
        spec.closed_form
            .validate(&format!("{source}: experiment.closed_form"))?;
        if spec.closed_form_views.contains(&ViewKind::NextToken) {
            return Err(Error::format(
                source,
                "experiment.closed_form_views",
                "expected good and/or bad: next-token has no closed-form encoder",
            ));
        }
        if let Some((kind, _)) = spec.objective_steps.iter().find(|(_, s)| **s == 0) {
            return Err(Error::format(
                source,
                format!("experiment.objective_steps.{}", kind.label()),
                "expected at least 1 step",
            ));
        }
        let train_toml =
            toml::to_string(&train).map_err(|e| Error::format(source, "train", e.to_string()))?;
        let cfg = Self {
            spec,
            train_toml,
            train_overrides,
        };
        // Fail early on a bad [train] table rather than after the first runs.
        cfg.train_config(source, ViewKind::Good, 0, "en")?;
        Ok(cfg)
    }

    /// The training config of one run: the shared `[train]` table with `run.objective`,
    /// `run.seed` and `data.lang` set, and `run.steps` from `objective_steps` where it
    /// names the objective.
    pub fn train_config(
        &self,
        source: &str,
        objective: ViewKind,
        seed: u64,
        lang: &str,
    ) -> Result<TrainConfig> {
        let obj = objective.label();
        let mut sets = self.train_overrides.clone();
        sets.push(format!("run.objective=\"{obj}\""));
        sets.push(format!("run.seed={seed}"));
        sets.push(format!("data.lang=\"{lang}\""));
        if let Some(steps) = self.spec.objective_steps.get(&objective) {
            sets.push(format!("run.steps={steps}"));
        }
        TrainConfig::from_toml(source, &self.train_toml, &sets)
    }

    /// Each objective's training steps, in `objectives` order.
    pub fn steps_per_objective(&self, source: &str) -> Result<Vec<(ViewKind, usize)>> {
        let lang = &self.spec.langs[0];
        self.spec
            .objectives
            .iter()
            .map(|&o| Ok((o, self.train_config(source, o, 0, lang)?.run.steps)))
            .collect()
    }

    /// Each objective's training steps keyed by its label, as results.json's
    /// `objective_steps` records them: `{"good": 8192, "next-token": 800}`.
    pub fn steps_by_label(
        &self,
        source: &str,
    ) -> Result<std::collections::BTreeMap<String, usize>> {
        Ok(self
            .steps_per_objective(source)?
            .into_iter()
            .map(|(o, s)| (o.label().to_string(), s))
            .collect())
    }

    /// The steps in words: `"800 steps"` when every objective trains as many, else
    /// `"good 8192, bad 8192, next-token 800 steps"`.
    pub fn describe_steps(&self, source: &str) -> Result<String> {
        let per = self.steps_per_objective(source)?;
        Ok(if per.windows(2).all(|w| w[0].1 == w[1].1) {
            format!("{} steps", per.first().map_or(0, |p| p.1))
        } else {
            let parts: Vec<String> = per
                .iter()
                .map(|(o, s)| format!("{} {s}", o.label()))
                .collect();
            format!("{} steps", parts.join(", "))
        })
    }
}

/// Embeddings of the probe texts at one training step, row-major `[n, d]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Optimiser steps done (0: the initialisation).
    pub step: usize,
    /// Row-major `[texts, d_model]`.
    pub embeddings: Vec<f32>,
}

/// A [`TextTask`] that, at each evaluation of the training loop, embeds fixed probe texts
/// and keeps the result: the alignment curve is computed afterwards, once both languages
/// are trained (they never see each other during training).
pub struct RecordingTask {
    /// The objective being trained.
    pub inner: TextTask,
    /// Probe texts (fit rows first, then test rows).
    pub texts: Vec<String>,
    /// Recorded embeddings, in step order.
    pub snapshots: Vec<Snapshot>,
    /// Called with each new snapshot once it is kept (prh-native writes it beside the
    /// run's checkpoint, so that an interrupted experiment resumes with the snapshots it
    /// had; files are the shell's business, not this module's).
    pub on_record: Option<OnRecord>,
}

/// What [`RecordingTask::on_record`] holds.
pub type OnRecord = Box<dyn Fn(&Snapshot) -> Result<()> + Send + Sync>;

impl RecordingTask {
    /// Embeds the probe texts with `model` and stores them as step `step`.
    ///
    /// # Shapes
    /// `texts` `n` -> snapshot `[n, d_model]`
    pub fn record<B: Backend>(
        &mut self,
        model: &crate::models::text_encoder::TextEncoder<B>,
        step: usize,
        device: &B::Device,
    ) -> Result<()> {
        let z = embed_texts(
            model,
            &self.inner.spec,
            &self.inner.tokenizer,
            &self.texts,
            256,
            device,
        )?;
        let snapshot = Snapshot {
            step,
            embeddings: z,
        };
        if let Some(f) = &self.on_record {
            f(&snapshot)?;
        }
        self.snapshots.push(snapshot);
        Ok(())
    }

    /// Records step 0: the model [`crate::train::train`] will start from (the backend
    /// is seeded exactly as the loop seeds it, so this is the same initialisation).
    pub fn record_init<B: AutodiffBackend>(&mut self, device: &B::Device) -> Result<()> {
        let seed = derive_seed(self.inner.cfg.run.seed, Stream::Init, 0);
        let model = crate::backend::seeded::<B, _>(device, seed, || {
            let model = self.inner.spec.init::<B>(device)?;
            crate::backend::materialise::<B, _>(&model);
            Ok::<_, crate::Error>(model)
        })?;
        self.record(&model.valid(), 0, device)
    }
}

impl<B: AutodiffBackend> TrainTask<B> for RecordingTask {
    type Model = crate::models::text_encoder::TextEncoder<B>;

    fn init_model(&self, device: &B::Device) -> Result<Self::Model> {
        <TextTask as TrainTask<B>>::init_model(&self.inner, device)
    }

    fn step(
        &mut self,
        model: &Self::Model,
        step: usize,
        device: &B::Device,
    ) -> Result<StepOutput<B>> {
        <TextTask as TrainTask<B>>::step(&mut self.inner, model, step, device)
    }

    fn prepare_step(&mut self, step: usize) -> Result<()> {
        <TextTask as TrainTask<B>>::prepare_step(&mut self.inner, step)
    }

    fn shard_step(
        &self,
        model: &Self::Model,
        step: usize,
        shard: crate::train::data_parallel::Shard,
        device: &B::Device,
    ) -> Result<crate::train::data_parallel::ShardOutput<B>> {
        <TextTask as TrainTask<B>>::shard_step(&self.inner, model, step, shard, device)
    }

    /// Records the probe embeddings; reports nothing (no target during training).
    async fn evaluate(
        &mut self,
        model: &crate::models::text_encoder::TextEncoder<B::InnerBackend>,
        step: usize,
    ) -> Result<Vec<(String, f64)>> {
        // The first device of the model is where its weights live (the default for CPU).
        let device = model.devices().into_iter().next().unwrap_or_default();
        self.record(model, step, &device)?;
        Ok(Vec::new())
    }
}

/// Alignment of two encoders at one step (paper section 5's measurements).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AlignmentPoint {
    /// Optimiser steps done by both encoders.
    pub step: usize,
    /// Mutual k-NN on the test rows (PRH preprocessing: clamp, L2-normalise).
    pub mutual_knn: f64,
    /// Mean and std of mutual k-NN over shuffled pairings (None when not computed).
    pub null_mean: Option<f64>,
    pub null_std: Option<f64>,
    /// Linear CKA on the test rows.
    pub cka: f64,
    /// Linear CKA with unbiased HSIC on the test rows (absent in results written before
    /// it was recorded).
    #[serde(default)]
    pub unbiased_cka: Option<f64>,
    /// R@1 of A -> B and B -> A on the test rows after a rotation fit on the fit rows.
    pub r1_a_to_b: f64,
    pub r1_b_to_a: f64,
    /// R@1 of a random ranking of the test rows, 1 / n_test.
    pub r1_chance: f64,
    /// Within each language, no second model: caption 1 vs caption 2 of the test-split
    /// images ([`PairScores`]), for languages A and B (absent in older results).
    #[serde(default)]
    pub pairs: Option<[PairScores; 2]>,
}

/// Measures encoders A and B on probe rows whose first `n_fit` rows are the fit split
/// and the next `n_test` the test split (row i of A and of B describe the same image):
/// mutual k-NN (with `opts.null_shuffles` shuffles of its permutation null when > 0,
/// `opts.k` neighbours and `opts.preprocess`) and CKA
/// on the test rows, and R@1 on the test rows after the rotation
/// `Q = argmin_{Q^T Q = I} ||A_fit Q - B_fit||_F` (rows L2-normalised first).
///
/// # Shapes
/// `a [n_fit + n_test, d_a]`, `b [n_fit + n_test, d_b]` (row-major) -> point
#[allow(clippy::too_many_arguments)]
pub fn align_point(
    step: usize,
    a: &[f32],
    d_a: usize,
    b: &[f32],
    d_b: usize,
    n_fit: usize,
    n_test: usize,
    opts: &MetricOptions,
) -> Result<AlignmentPoint> {
    let n = n_fit + n_test;
    if a.len() != n * d_a || b.len() != n * d_b {
        return Err(Error::invalid(format!(
            "probe embeddings: expected [{n}, {d_a}] and [{n}, {d_b}], got {} and {} values",
            a.len(),
            b.len()
        )));
    }
    let wide = |x: &[f32]| x.iter().map(|&v| f64::from(v)).collect::<Vec<f64>>();
    let (a, b) = (wide(a), wide(b));
    let test_a = Features::new("A test", n_test, 1, d_a, a[n_fit * d_a..].to_vec())?;
    let test_b = Features::new("B test", n_test, 1, d_b, b[n_fit * d_b..].to_vec())?;
    let r = measure(&test_a, &test_b, opts)?;
    let unit = |x: &[f64], rows: usize, d: usize| -> Result<crate::linalg::Matrix> {
        let mut m = from_row_major(rows, d, x)?;
        l2_normalize_rows(&mut m);
        Ok(m)
    };
    let fa = unit(&a[..n_fit * d_a], n_fit, d_a)?;
    let fb = unit(&b[..n_fit * d_b], n_fit, d_b)?;
    let ta = unit(&a[n_fit * d_a..], n_test, d_a)?;
    let tb = unit(&b[n_fit * d_b..], n_test, d_b)?;
    let ret = align_and_rank(fa.as_ref(), fb.as_ref(), ta.as_ref(), tb.as_ref())?;
    Ok(AlignmentPoint {
        step,
        mutual_knn: r.scores.mutual_knn,
        null_mean: r.null_mutual_knn_mean,
        null_std: r.null_mutual_knn_std,
        cka: r.scores.cka,
        unbiased_cka: Some(r.scores.unbiased_cka),
        r1_a_to_b: ret.a_to_b.r1,
        r1_b_to_a: ret.b_to_a.r1,
        r1_chance: ret.chance.r1,
        pairs: None,
    })
}

/// Caption 1 vs caption 2 within one language: `first [n, d]` and `second [n, d]`
/// row-major, row i of each describing image i ([`PairScores::of`]).
pub fn pair_point(
    first: &[f32],
    second: &[f32],
    d: usize,
    opts: &MetricOptions,
) -> Result<PairScores> {
    let n = first.len() / d.max(1);
    if first.len() != n * d || second.len() != n * d {
        return Err(Error::invalid(format!(
            "pair embeddings: expected two [{n}, {d}] arrays, got {} and {} values",
            first.len(),
            second.len()
        )));
    }
    let wide = |x: &[f32], name: &str| {
        Features::new(name, n, 1, d, x.iter().map(|&v| f64::from(v)).collect())
    };
    PairScores::of(
        &wide(first, "caption 1")?,
        &wide(second, "caption 2")?,
        opts,
    )
}

/// Spread of one score over seeds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SeedStats {
    /// Seeds.
    pub n: usize,
    /// Mean over seeds.
    pub mean: f64,
    /// Sample std over seeds, `sqrt(sum (x - mean)^2 / (n - 1))` (0 for one seed).
    pub std: f64,
    /// Smallest and largest seed value.
    pub min: f64,
    pub max: f64,
}

/// Mean, sample std, min and max of `values` (one per seed).
///
/// # Shapes
/// `values [seeds]` -> stats
pub fn seed_stats(values: &[f64]) -> Result<SeedStats> {
    if values.is_empty() {
        return Err(Error::invalid("seed statistics need at least one value"));
    }
    let n = values.len();
    let mean = values.iter().sum::<f64>() / n as f64;
    let ss = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>();
    Ok(SeedStats {
        n,
        mean,
        std: if n > 1 {
            (ss / (n - 1) as f64).sqrt()
        } else {
            0.0
        },
        min: values.iter().copied().fold(f64::INFINITY, f64::min),
        max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

/// Per-step spread of a curve over seeds: `(step, stats)` at each step that every seed
/// recorded.
///
/// # Shapes
/// `curves [seeds][points] (step, value)` -> `[common steps]`
pub fn bands(curves: &[Vec<(usize, f64)>]) -> Result<Vec<(usize, SeedStats)>> {
    let Some(first) = curves.first() else {
        return Ok(Vec::new());
    };
    first
        .iter()
        .filter_map(|&(step, _)| {
            let vals: Option<Vec<f64>> = curves
                .iter()
                .map(|c| c.iter().find(|p| p.0 == step).map(|p| p.1))
                .collect();
            vals.map(|v| seed_stats(&v).map(|s| (step, s)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_stats_closed_form() {
        // mean 2, sample variance ((1)^2 + 0 + 1^2) / 2 = 1.
        let s = seed_stats(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!((s.n, s.mean, s.std, s.min, s.max), (3, 2.0, 1.0, 1.0, 3.0));
        assert_eq!(seed_stats(&[0.5]).unwrap().std, 0.0);
        assert!(seed_stats(&[]).is_err());
        let b = bands(&[vec![(0, 1.0), (5, 2.0)], vec![(0, 3.0)]]).unwrap();
        assert_eq!(b.len(), 1, "step 5 is missing from the second seed");
        assert_eq!((b[0].0, b[0].1.mean), (0, 2.0));
    }

    #[test]
    fn identical_encoders_align_perfectly_and_rotations_are_undone() {
        // B = A Q for a rotation Q: every test row is retrieved, mutual k-NN = 1, CKA = 1.
        let (n_fit, n_test, d) = (40, 30, 4);
        let n = n_fit + n_test;
        let a: Vec<f32> = (0..n * d)
            .map(|i| ((i * 7919 % 101) as f32 / 50.0 - 1.0) + (i % 3) as f32 * 0.1)
            .collect();
        let (c, s) = (0.6f32, 0.8f32); // rotation in the plane of coordinates 0 and 1
        let b: Vec<f32> = (0..n)
            .flat_map(|i| {
                let r = &a[i * d..(i + 1) * d];
                [c * r[0] - s * r[1], s * r[0] + c * r[1], r[2], r[3]]
            })
            .collect();
        let opts = |null_shuffles| MetricOptions {
            k: 5,
            null_shuffles,
            ..MetricOptions::default()
        };
        let p = align_point(7, &a, d, &b, d, n_fit, n_test, &opts(10)).unwrap();
        assert_eq!(p.step, 7);
        assert_eq!((p.r1_a_to_b, p.r1_b_to_a), (1.0, 1.0));
        assert!((p.mutual_knn - 1.0).abs() < 1e-12, "{p:?}");
        // Not exactly 1: PRH's outlier clamp acts per coordinate, so it is not
        // rotation invariant (here 0.99984).
        assert!((p.cka - 1.0).abs() < 1e-3, "{p:?}");
        assert!(p.null_mean.is_some_and(|m| m < 0.5), "{p:?}");
        assert!((p.r1_chance - 1.0 / 30.0).abs() < 1e-15);
        assert!(align_point(0, &a, d, &b[1..], d, n_fit, n_test, &opts(0)).is_err());
    }

    #[test]
    fn config_overrides_reach_both_tables() {
        let text = "[experiment]\nseeds = [0, 1, 2]\n[train.run]\nsteps = 50\n[train.model]\nmax_len = 16\n";
        let sets = vec![
            "experiment.seeds=[4]".to_string(),
            "experiment.vision.export=false".to_string(),
            "experiment.scaling.budgets=[1,2,3,4]".to_string(),
            "train.run.steps=7".to_string(),
        ];
        let cfg = ExperimentConfig::from_toml("x.toml", text, &sets).unwrap();
        assert_eq!(cfg.spec.seeds, [4]);
        assert!(!cfg.spec.vision.export);
        assert_eq!(cfg.spec.scaling.budgets, [1, 2, 3, 4]);
        // Per-objective budgets replace `budgets` for that objective only.
        let per = ExperimentConfig::from_toml(
            "x.toml",
            "[experiment.scaling]\nbudgets = [1, 2, 3, 4]\nobjective_budgets = { next-token = [5, 6, 7, 8] }\n",
            &[],
        )
        .unwrap();
        let sc = &per.spec.scaling;
        assert_eq!(sc.budgets_for(ViewKind::Good), [1, 2, 3, 4]);
        assert_eq!(sc.budgets_for(ViewKind::NextToken), [5, 6, 7, 8]);
        let t = cfg
            .train_config("x.toml", ViewKind::NextToken, 4, "de")
            .unwrap();
        assert_eq!((t.run.steps, t.run.seed, t.model.max_len), (7, 4, 16));
        assert_eq!(
            (t.run.objective, t.data.lang.as_str()),
            (ViewKind::NextToken, "de")
        );
        // Per-objective steps win over `[train] run.steps` (and its --set) for that
        // objective only; the description says so; 0 steps is refused naming the field.
        let sets = vec![
            "train.run.steps=7".to_string(),
            "experiment.objective_steps.next-token=3".to_string(),
        ];
        let per = ExperimentConfig::from_toml("x.toml", text, &sets).unwrap();
        let steps = |kind| per.train_config("x.toml", kind, 0, "en").unwrap().run.steps;
        assert_eq!((steps(ViewKind::Good), steps(ViewKind::NextToken)), (7, 3));
        assert_eq!(
            per.describe_steps("x.toml").unwrap(),
            "good 7, bad 7, next-token 3 steps"
        );
        assert_eq!(cfg.describe_steps("x.toml").unwrap(), "7 steps");
        let by_label = per.steps_by_label("x.toml").unwrap();
        let want = [("bad", 7), ("good", 7), ("next-token", 3)];
        assert_eq!(
            by_label
                .iter()
                .map(|(k, v)| (k.as_str(), *v))
                .collect::<Vec<_>>(),
            want
        );
        let e =
            ExperimentConfig::from_toml("x.toml", "[experiment.objective_steps]\nbad = 0\n", &[])
                .unwrap_err()
                .to_string();
        assert!(
            e.contains("x.toml") && e.contains("experiment.objective_steps.bad"),
            "{e}"
        );
        let e = ExperimentConfig::from_toml("x.toml", "[oops]\n", &[]).unwrap_err();
        assert!(
            e.to_string().contains("x.toml") && e.to_string().contains("oops"),
            "{e}"
        );
        let e = ExperimentConfig::from_toml("x.toml", text, &["steps=3".into()]).unwrap_err();
        assert!(e.to_string().contains("experiment."), "{e}");
        // The closed-form rows: settings reach the table; next-token and a bad ridge are
        // refused naming the file and the field.
        let sets = vec![
            "experiment.closed_form_views=[\"good\"]".to_string(),
            "experiment.closed_form.dim=64".to_string(),
        ];
        let cfg = ExperimentConfig::from_toml("x.toml", text, &sets).unwrap();
        assert_eq!(cfg.spec.closed_form_views, [ViewKind::Good]);
        assert_eq!(cfg.spec.closed_form.dim, 64);
        let e = ExperimentConfig::from_toml(
            "x.toml",
            text,
            &["experiment.closed_form_views=[\"next-token\"]".into()],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("x.toml") && e.contains("closed_form_views"),
            "{e}"
        );
        let e = ExperimentConfig::from_toml(
            "x.toml",
            text,
            &["experiment.closed_form.ridge=-1".into()],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("x.toml") && e.contains("closed_form.ridge"),
            "{e}"
        );
    }
}
