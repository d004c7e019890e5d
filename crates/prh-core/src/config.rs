//! Typed training configuration (paper section 4, "Recipe"), read from TOML.
//!
//! Every field has a one-line doc and a default, so a config file only names what it
//! changes. `--set key=value` overrides any dotted path (`optim.lr=1e-4`) before the
//! typed parse, and the resolved config is saved with each run (`config.toml`).
//!
//! ```toml
//! [run]
//! objective = "good"      # good | bad | next-token
//! steps = 2000
//! [data]
//! source = "multi30k"
//! lang = "en"
//! ```

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// What the encoder is trained to do (paper section 3's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Objective {
    /// JEPA whose views are spans of *different* texts of one group.
    Good,
    /// JEPA whose views are spans of *one* text.
    Bad,
    /// Causal language modelling (cross-entropy on the next token).
    NextToken,
}

/// Which model a `prh-native train` config trains; the rest of the file is read by that
/// task's config type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum TaskKind {
    /// A text encoder on a corpus ([`TrainConfig`]).
    #[default]
    Text,
    /// The scene world's image JEPA ([`crate::scene_run::SceneTrainConfig`]).
    SceneImage,
    /// The scene world's caption JEPA ([`crate::scene_run::SceneTrainConfig`]).
    SceneCaption,
}

/// The `[task]` section every training config shares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct TaskConfig {
    /// `text` (default), `scene-image` or `scene-caption`.
    pub kind: TaskKind,
}

/// Reads only `task.kind` of a config (after `overrides`), so the caller can pick the
/// config type that parses the rest.
pub fn task_kind(source: &str, text: &str, overrides: &[String]) -> Result<TaskKind> {
    /// Every other section is ignored here (its own type checks it).
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Peek {
        task: TaskConfig,
    }
    Ok(parse_toml::<Peek>(source, text, overrides)?.task.kind)
}

/// Parses TOML text into a config type (`source` names it in errors) after applying
/// `overrides` (`key.path=value`, the value parsed as TOML, else taken as a string); an
/// unknown key's error names the nearest valid one.
pub fn parse_toml<T: serde::de::DeserializeOwned>(
    source: &str,
    text: &str,
    overrides: &[String],
) -> Result<T> {
    let mut value: toml::Table =
        toml::from_str(text).map_err(|e| Error::format(source, "toml", e.to_string()))?;
    for o in overrides {
        set_path(&mut value, o)?;
    }
    toml::Value::Table(value)
        .try_into()
        .map_err(|e: toml::de::Error| Error::format(source, "config", suggest(&e.to_string())))
}

/// The whole configuration of a training run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct TrainConfig {
    /// Which trainer reads this file (`text` here).
    pub task: TaskConfig,
    /// Run length, seed, objective and logging cadence.
    pub run: RunConfig,
    /// Which corpus to read.
    pub data: DataConfig,
    /// Tokenizer to train or load.
    pub tokenizer: TokenizerConfig,
    /// Encoder architecture.
    pub model: ModelConfig,
    /// View sampling.
    pub views: ViewsConfig,
    /// JEPA loss (invariance + lambda SIGReg).
    pub loss: LossConfig,
    /// AdamW and its schedule.
    pub optim: OptimConfig,
    /// Periodic alignment evaluation against a frozen target.
    pub eval: EvalConfig,
}

/// Run length and bookkeeping.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunConfig {
    /// Training objective: `good`, `bad` or `next-token`.
    pub objective: Objective,
    /// Seed of every random draw (init, views, SIGReg directions).
    pub seed: u64,
    /// Number of optimiser steps.
    pub steps: usize,
    /// Write a metrics line every this many steps.
    pub log_every: usize,
    /// Write the `latest` checkpoint every this many steps (and at the end).
    pub checkpoint_every: usize,
    /// Evaluate alignment every this many steps (0: only at the end, if a target is set).
    pub eval_every: usize,
    /// Stop when the embeddings' mean per-dimension std falls below this (collapse).
    pub collapse_std: f64,
    /// Stop after this many steps with a `latest` checkpoint, as if interrupted; the
    /// schedule still spans `steps` (time-boxed chunks; 0: run to the end).
    pub stop_at: usize,
    /// Data-parallel model replicas `W` (`crate::data_parallel`): each step's batch is
    /// split over `W` replicas (devices 0..W-1 on GPU backends, one device on the CPU);
    /// must divide `views.batch_size`. 1: single-device training.
    pub data_parallel: usize,
    /// Stop on a plateau of the loss: compare mean losses of windows of this many steps
    /// (`crate::checkpoint::Plateau`); `steps` is then the budget. 0: run all `steps`.
    pub plateau_window: usize,
    /// Windows the plateau rule looks back over (at least 1).
    pub plateau_patience: usize,
    /// The plateau's tolerance: stop when the last `plateau_patience` windows lowered the
    /// best mean loss by less than this share of the drop since the first window.
    pub plateau_tol: f64,
}

impl RunConfig {
    /// The plateau tolerance must lie in (0, 1) when the rule is on.
    pub fn check_plateau(&self) -> std::result::Result<(), String> {
        if self.plateau_window > 0 && !(self.plateau_tol > 0.0 && self.plateau_tol < 1.0) {
            return Err(format!(
                "expected a share in (0, 1) with run.plateau_window = {}, got {}",
                self.plateau_window, self.plateau_tol
            ));
        }
        Ok(())
    }
}

impl Default for RunConfig {
    fn default() -> Self {
        Self {
            objective: Objective::Good,
            seed: 0,
            steps: 1000,
            log_every: 10,
            checkpoint_every: 200,
            eval_every: 0,
            collapse_std: 1e-4,
            stop_at: 0,
            data_parallel: 1,
            plateau_window: 0,
            plateau_patience: 4,
            plateau_tol: 0.01,
        }
    }
}

/// Corpus selection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DataConfig {
    /// `multi30k` (task-2 layout under the data dir), `jsonl` (`{"id", "texts"}` lines) or
    /// `shards` (JSONL shards, plain or gzip, streamed: `crate::shards`).
    pub source: String,
    /// JSONL: the training file. Shards: comma-separated files or glob patterns.
    /// Multi30k: ignored (read from the data dir).
    pub path: String,
    /// JSONL: optional held-out file for evaluation.
    pub eval_path: String,
    /// Multi30k language: `en` or `de`.
    pub lang: String,
    /// Multi30k training split.
    pub train_split: String,
    /// Multi30k held-out split used for evaluation and the embeddings export.
    pub eval_split: String,
    /// Keep only the first this many training groups (0: all).
    pub max_groups: usize,
    /// Shards: groups held in the shuffle buffer (bounds memory; larger mixes better).
    pub shuffle_buffer: usize,
}

impl Default for DataConfig {
    fn default() -> Self {
        Self {
            source: "multi30k".into(),
            path: String::new(),
            eval_path: String::new(),
            lang: "en".into(),
            train_split: "train".into(),
            eval_split: "val".into(),
            max_groups: 0,
            shuffle_buffer: 10_000,
        }
    }
}

/// Tokenizer: trained on the training texts unless `path` names a `tokenizer.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TokenizerConfig {
    /// Existing `tokenizer.json` to load ("" = train a WordPiece on the training texts).
    pub path: String,
    /// WordPiece vocabulary size when training.
    pub vocab_size: usize,
    /// Minimum count for a merge when training.
    pub min_frequency: u64,
    /// Lower-case before tokenizing (BERT uncased).
    pub lowercase: bool,
}

impl Default for TokenizerConfig {
    fn default() -> Self {
        Self {
            path: String::new(),
            vocab_size: 8000,
            min_frequency: 2,
            lowercase: true,
        }
    }
}

/// Encoder architecture (paper section 4: BERT-S = 12 x 384, BERT-B = 12 x 768).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelConfig {
    /// `tiny`, `bert-s`, `bert-b`, or `custom` (then the four size fields below are used).
    pub size: String,
    /// Width (custom only).
    pub d_model: usize,
    /// Layers (custom only).
    pub layers: usize,
    /// Attention heads (custom only).
    pub heads: usize,
    /// Feed-forward width (custom only).
    pub d_ff: usize,
    /// Maximum tokens per sequence (learned positions).
    pub max_len: usize,
    /// `mean` over non-pad tokens or `cls` (the first token).
    pub pooling: String,
    /// Output width of a 2-layer MLP projector after pooling (0: no projector).
    pub projector_dim: usize,
    /// Dropout inside the transformer (0 keeps training exactly reproducible).
    pub dropout: f64,
}

impl Default for ModelConfig {
    fn default() -> Self {
        Self {
            size: "tiny".into(),
            d_model: 64,
            layers: 2,
            heads: 4,
            d_ff: 128,
            max_len: 64,
            pooling: "mean".into(),
            projector_dim: 0,
            dropout: 0.0,
        }
    }
}

impl ModelConfig {
    /// `(d_model, layers, heads, d_ff)` of the named size.
    pub fn dims(&self) -> Result<(usize, usize, usize, usize)> {
        match self.size.as_str() {
            "tiny" => Ok((64, 2, 4, 128)),
            "bert-s" => Ok((384, 12, 6, 1536)),
            "bert-b" => Ok((768, 12, 12, 3072)),
            "custom" => Ok((self.d_model, self.layers, self.heads, self.d_ff)),
            other => Err(Error::invalid(format!(
                "model.size: expected tiny, bert-s, bert-b or custom, got `{other}`"
            ))),
        }
    }
}

/// View sampling (paper section 4: 2 global + 6 local contiguous, partly masked spans).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ViewsConfig {
    /// Global views per sample.
    pub n_global: usize,
    /// Local views per sample.
    pub n_local: usize,
    /// Global span length as a fraction of the text's token count.
    pub global_frac: f64,
    /// Local span length as a fraction of the text's token count.
    pub local_frac: f64,
    /// Fraction of a view's tokens replaced by `[MASK]`.
    pub mask_ratio: f64,
    /// Trim each text to at most this many tokens before taking spans (0: no trim).
    pub trim: usize,
    /// Samples (groups) per batch.
    pub batch_size: usize,
}

impl Default for ViewsConfig {
    fn default() -> Self {
        Self {
            n_global: 2,
            n_local: 6,
            global_frac: 0.8,
            local_frac: 0.4,
            mask_ratio: 0.15,
            trim: 0,
            batch_size: 64,
        }
    }
}

/// Which JEPA objective trains the encoder (`loss.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum LossKind {
    /// LeJEPA's `invariance + lambda * SIGReg`: the paper's training loss. The theorem's
    /// uniqueness proof does not cover it (paper §7).
    #[default]
    Sigreg,
    /// The whitened second-order objective the theorem is proven for: the centred spectral
    /// contrastive loss ([`crate::spectral_loss`]), whose optimum spans exactly
    /// F = D^-1/2 U_d. `lambda`, `slices`, `t_max` and `knots` are not used.
    Spectral,
}

impl LossKind {
    /// The config spelling (`sigreg` / `spectral`).
    pub fn name(self) -> &'static str {
        match self {
            LossKind::Sigreg => "sigreg",
            LossKind::Spectral => "spectral",
        }
    }
}

/// JEPA loss: `invariance + lambda * SIGReg` (LeJEPA's convention, lambda multiplies
/// SIGReg), or with `kind = "spectral"` the centred spectral contrastive loss.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LossConfig {
    /// `sigreg` (the paper's LeJEPA loss, default) or `spectral` (the theorem's objective).
    pub kind: LossKind,
    /// SIGReg coefficient (paper: 0.02).
    pub lambda: f64,
    /// Random slices per step.
    pub slices: usize,
    /// Largest Epps–Pulley knot.
    pub t_max: f64,
    /// Number of knots on `[0, t_max]`.
    pub knots: usize,
}

impl Default for LossConfig {
    fn default() -> Self {
        Self {
            kind: LossKind::Sigreg,
            lambda: 0.02,
            slices: 256,
            t_max: 3.0,
            knots: 17,
        }
    }
}

/// AdamW with linear warmup then cosine decay (paper section 4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OptimConfig {
    /// Peak learning rate (paper: 5e-4; 1e-4 for long/large runs).
    pub lr: f64,
    /// Learning rate at the end of the cosine.
    pub min_lr: f64,
    /// Linear warmup steps from 0 to `lr`.
    pub warmup_steps: usize,
    /// Decoupled weight decay (paper: 0.05).
    pub weight_decay: f64,
    /// Clip the global gradient norm to this (0: no clipping).
    pub grad_clip: f64,
    /// Adam beta1.
    pub beta1: f64,
    /// Adam beta2.
    pub beta2: f64,
}

impl Default for OptimConfig {
    fn default() -> Self {
        Self {
            lr: 5e-4,
            min_lr: 0.0,
            warmup_steps: 100,
            weight_decay: 0.05,
            grad_clip: 1.0,
            beta1: 0.9,
            beta2: 0.999,
        }
    }
}

/// Alignment evaluation against a frozen target (paper section 5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EvalConfig {
    /// Frozen target features (`.npy`/`.npz`, one row per held-out group); "" = none.
    pub target: String,
    /// Use at most this many held-out groups.
    pub max_groups: usize,
    /// Neighbours for mutual k-NN.
    pub k: usize,
}

impl Default for EvalConfig {
    fn default() -> Self {
        Self {
            target: String::new(),
            max_groups: 1000,
            k: 10,
        }
    }
}

impl TrainConfig {
    /// Parses TOML text (`source` names it in errors), then applies `overrides`
    /// (`key.path=value`, the value parsed as TOML, else taken as a string).
    pub fn from_toml(source: &str, text: &str, overrides: &[String]) -> Result<Self> {
        let cfg: TrainConfig = parse_toml(source, text, overrides)?;
        cfg.validate(source)?;
        Ok(cfg)
    }

    /// The resolved config as TOML (saved in each run folder).
    pub fn to_toml(&self) -> Result<String> {
        toml::to_string_pretty(self).map_err(|e| Error::invalid(format!("config to TOML: {e}")))
    }

    /// Checks ranges that serde cannot: positive sizes, fractions in (0, 1].
    pub fn validate(&self, source: &str) -> Result<()> {
        let bad = |field: &str, msg: &str| Err(Error::format(source, field, msg));
        if self.task.kind != TaskKind::Text {
            return bad(
                "task.kind",
                "a scene task is read by scene_run::SceneTrainConfig, not the text config",
            );
        }
        self.model
            .dims()
            .map_err(|e| Error::format(source, "model.size", e.to_string()))?;
        let (d, _, h, _) = self.model.dims()?;
        if h == 0 || !d.is_multiple_of(h) {
            return bad(
                "model.heads",
                "d_model must be a positive multiple of heads",
            );
        }
        if !matches!(self.model.pooling.as_str(), "mean" | "cls") {
            return bad("model.pooling", "expected `mean` or `cls`");
        }
        if self.views.n_global == 0 {
            return bad(
                "views.n_global",
                "at least one global view is needed (they are the prediction target)",
            );
        }
        for (f, v) in [
            ("views.global_frac", self.views.global_frac),
            ("views.local_frac", self.views.local_frac),
        ] {
            if !(v > 0.0 && v <= 1.0) {
                return bad(f, "expected a fraction in (0, 1]");
            }
        }
        if !(0.0..1.0).contains(&self.views.mask_ratio) {
            return bad("views.mask_ratio", "expected a fraction in [0, 1)");
        }
        if self.views.batch_size < 2 {
            return bad(
                "views.batch_size",
                "expected at least 2 (SIGReg needs a batch)",
            );
        }
        if let Err(e) = self.run.check_plateau() {
            return bad("run.plateau_tol", &e);
        }
        if self.run.steps == 0 {
            return bad("run.steps", "expected at least 1");
        }
        if self.run.data_parallel == 0 {
            return bad(
                "run.data_parallel",
                "expected at least 1 (the number of model replicas; 1 = one device)",
            );
        }
        if !self.views.batch_size.is_multiple_of(self.run.data_parallel) {
            return bad(
                "run.data_parallel",
                &format!(
                    "{} replicas do not divide views.batch_size = {}: each replica takes \
                     batch_size / data_parallel groups",
                    self.run.data_parallel, self.views.batch_size
                ),
            );
        }
        if self.model.max_len < 4 {
            return bad("model.max_len", "expected at least 4 tokens");
        }
        if self.loss.slices == 0 || self.loss.knots < 2 {
            return bad("loss.slices", "expected slices >= 1 and knots >= 2");
        }
        Ok(())
    }
}

/// Appends "did you mean `x`?" to serde's "unknown field `k`, expected one of ..." message:
/// the valid field nearest to `k` in edit distance (within half of `k`'s length), so a
/// typo points at its fix. Other messages pass through unchanged.
fn suggest(message: &str) -> String {
    let Some((_, rest)) = message.split_once("unknown field `") else {
        return message.to_string();
    };
    let Some((key, tail)) = rest.split_once('`') else {
        return message.to_string();
    };
    // The candidates are the back-quoted names on the same line ("\nin `table`" follows).
    let line = tail.lines().next().unwrap_or("");
    let nearest = line
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|c| (edit_distance(key, c), c))
        .min();
    match nearest {
        Some((d, c)) if d <= key.chars().count().div_ceil(2) => {
            format!("{message} (did you mean `{c}`?)")
        }
        _ => message.to_string(),
    }
}

/// Levenshtein distance between `a` and `b` (insertions, deletions, substitutions).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Sets `a.b.c=value` in a TOML table, creating intermediate tables.
fn set_path(table: &mut toml::Table, assignment: &str) -> Result<()> {
    let (key, raw) = assignment
        .split_once('=')
        .ok_or_else(|| Error::invalid(format!("--set expects key=value, got `{assignment}`")))?;
    let value = toml::from_str::<toml::Table>(&format!("v = {raw}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_string()));
    let parts: Vec<&str> = key.trim().split('.').collect();
    let mut cur = table;
    for part in &parts[..parts.len() - 1] {
        let entry = cur
            .entry(part.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        cur = entry
            .as_table_mut()
            .ok_or_else(|| Error::invalid(format!("--set {key}: `{part}` is not a table")))?;
    }
    cur.insert(parts[parts.len() - 1].to_string(), value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_paper_recipe() {
        let c = TrainConfig::from_toml("t", "", &[]).unwrap();
        assert_eq!(c.loss.lambda, 0.02);
        assert_eq!(c.optim.lr, 5e-4);
        assert_eq!(c.optim.weight_decay, 0.05);
        assert_eq!((c.views.n_global, c.views.n_local), (2, 6));
        assert_eq!((c.loss.t_max, c.loss.knots), (3.0, 17));
    }

    #[test]
    fn overrides_and_round_trip() {
        let c = TrainConfig::from_toml(
            "t",
            "[run]\nobjective = \"bad\"\n",
            &[
                "optim.lr=1e-4".into(),
                "data.lang=de".into(),
                "model.size=\"bert-s\"".into(),
            ],
        )
        .unwrap();
        assert_eq!(c.run.objective, Objective::Bad);
        assert_eq!(c.optim.lr, 1e-4);
        assert_eq!(c.data.lang, "de");
        assert_eq!(c.model.dims().unwrap(), (384, 12, 6, 1536));
        let back = TrainConfig::from_toml("t", &c.to_toml().unwrap(), &[]).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn errors_name_the_field() {
        let e = TrainConfig::from_toml("cfg.toml", "[optim]\nlr = \"x\"\n", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("cfg.toml") && e.contains("lr"), "{e}");
        let e = TrainConfig::from_toml("cfg.toml", "[views]\nmask_ratio = 1.5\n", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("views.mask_ratio"), "{e}");
        let e = TrainConfig::from_toml("cfg.toml", "[run]\nnope = 1\n", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("nope"), "{e}");
        // An unknown objective is refused, naming the field and the valid ones.
        let e = TrainConfig::from_toml("cfg.toml", "[loss]\nkind = \"vicreg\"\n", &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cfg.toml") && e.contains("kind") && e.contains("spectral"),
            "{e}"
        );
        let c = TrainConfig::from_toml("cfg.toml", "[loss]\nkind = \"spectral\"\n", &[]).unwrap();
        assert_eq!(c.loss.kind, LossKind::Spectral);
        let e = TrainConfig::from_toml(
            "cfg.toml",
            "[run]\nplateau_window = 5\nplateau_tol = 0\n",
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("run.plateau_tol"), "{e}");
    }

    #[test]
    fn unknown_keys_name_the_nearest_valid_one() {
        let e = TrainConfig::from_toml("cfg.toml", "[optim]\nlrr = 1e-3\n", &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`lrr`") && e.contains("did you mean `lr`?"),
            "{e}"
        );
        let e = TrainConfig::from_toml("cfg.toml", "[optimiser]\nlr = 1e-3\n", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean `optim`?"), "{e}");
        // Nothing close: no guess, the list of valid keys stays.
        let e = TrainConfig::from_toml("cfg.toml", "[optim]\nlearning_rate = 1\n", &[])
            .unwrap_err()
            .to_string();
        assert!(!e.contains("did you mean") && e.contains("`lr`"), "{e}");
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "ab"), 2);
    }
}
