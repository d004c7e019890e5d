//! A run folder, once for every task kind (text or scene, in-memory or streamed data, one
//! or several replicas): create a new one, resume one from its latest checkpoint, load one
//! for embedding and export, and compare a checkpoint's stored config with the requested one.
//!
//! ```text
//! $ prh-native train --config configs/tiny.toml --out runs/t2 --set run.stop_at=30
//! $ prh-native train --resume runs/t2          # continues exactly, text or scene alike
//! ```
//!
//! Layout: `config.toml` (resolved), `tokenizer.json` (text and caption runs), `spec.json`
//! (text runs), `metrics.jsonl` (one JSON object per logged step), `checkpoints/latest.ckpt`
//! (and `best.ckpt`; atomic), `embeddings.npy` + `embeddings_ids.txt`.

use crate::progress::Progress;
use anyhow::{Context, Result, bail};
use prh_core::backend::burn::prelude::Backend;
use prh_core::models::text_encoder::{EncoderSpec, TextEncoder};
use prh_core::tasks::scene::SceneTrainConfig;
use prh_core::tasks::text::TrainConfig;
use prh_core::tasks::{TaskKind, task_kind};
use prh_core::text::tokenizer::TextTokenizer;
use prh_core::train::RunSink;
use prh_core::train::checkpoint::{Checkpoint, module_from_bytes, write_atomic};
use prh_core::train::config::RunConfig;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What `train` was asked for: a new run from `config` into `out`, or `--resume` of a folder.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Run config file (a new run).
    pub config: Option<PathBuf>,
    /// Run folder of a new run (default `runs/<config name>`).
    pub out: Option<PathBuf>,
    /// The run folder to continue.
    pub resume: Option<PathBuf>,
    /// `--set key=value` overrides.
    pub sets: Vec<String>,
}

/// A run config type stored in a run folder's `config.toml` and in its checkpoints.
pub trait RunConfigFile: Sized {
    /// What a restart without a checkpoint reuses (said on stderr).
    const SAVED: &'static str;
    /// Parses `text` (named `source` in errors) with the `sets` overrides.
    fn parse(source: &str, text: &str, sets: &[String]) -> Result<Self>;
    /// `None` when a checkpoint written for `stored` loads into this config's model, else
    /// both models described (stored, requested): burn's record loading panics (or
    /// mis-shapes tensors) on another architecture, so this is checked first.
    fn model_mismatch(&self, stored: &Self) -> Option<(String, String)>;
}

impl RunConfigFile for TrainConfig {
    const SAVED: &'static str = "the saved config and tokenizer";
    fn parse(source: &str, text: &str, sets: &[String]) -> Result<Self> {
        Ok(TrainConfig::from_toml(source, text, sets)?)
    }
    fn model_mismatch(&self, stored: &Self) -> Option<(String, String)> {
        (stored.model != self.model)
            .then(|| (format!("{:?}", stored.model), format!("{:?}", self.model)))
    }
}

impl RunConfigFile for SceneTrainConfig {
    const SAVED: &'static str = "the saved config";
    fn parse(source: &str, text: &str, sets: &[String]) -> Result<Self> {
        Ok(SceneTrainConfig::from_toml(source, text, sets)?)
    }
    fn model_mismatch(&self, stored: &Self) -> Option<(String, String)> {
        let describe = |c: &Self| format!("{:?} / {:?}", c.task.kind, (&c.image, &c.caption));
        (!self.same_model(stored)).then(|| (describe(stored), describe(self)))
    }
}

impl RunConfigFile for prh_core::tasks::decoder::DecoderTrainConfig {
    const SAVED: &'static str = "the saved config and tokenizer";
    fn parse(source: &str, text: &str, sets: &[String]) -> Result<Self> {
        Ok(Self::from_toml(source, text, sets)?)
    }
    fn model_mismatch(&self, stored: &Self) -> Option<(String, String)> {
        let describe = |c: &Self| {
            let mut d = c.decoder.clone();
            // What the checkpoint does not depend on.
            (d.batch_size, d.noise, d.beam) = (0, 0.0, 0);
            format!("{d:?}")
        };
        (describe(stored) != describe(self)).then(|| (describe(stored), describe(self)))
    }
}

/// The config stored in checkpoint `ck` (read from `path`).
pub fn stored_config<C: RunConfigFile>(ck: &Checkpoint, path: &Path) -> Result<C> {
    let source = format!("{} (stored config)", path.display());
    C::parse(&source, &ck.meta.config, &[])
}

/// Reads a run config file, refusing one with no settings at all: an empty (or
/// comments-only) file would otherwise silently train with every default.
pub fn read_config(p: &Path) -> Result<String> {
    let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
    let settings = text
        .lines()
        .map(str::trim)
        .any(|l| !l.is_empty() && !l.starts_with('#'));
    if !settings {
        bail!(
            "{}: config file is empty: expected TOML sections such as [run], [data], [model] \
             (see configs/tiny.toml)",
            p.display()
        );
    }
    Ok(text)
}

/// A tokenizer file (`tokenizer.json` of a run, or a configured one).
pub fn read_tokenizer(p: &Path) -> Result<TextTokenizer> {
    let bytes = std::fs::read(p).with_context(|| format!("reading {}", p.display()))?;
    Ok(TextTokenizer::from_bytes(&p.display().to_string(), &bytes)?)
}

impl Request {
    /// The config file this request reads: the run folder's on `--resume`.
    fn config_path(&self) -> Option<PathBuf> {
        match (&self.resume, &self.config) {
            (Some(dir), _) => Some(dir.join("config.toml")),
            (None, p) => p.clone(),
        }
    }

    /// The task kind of the requested run (its config's `task.kind`, after `--set`).
    /// Unreadable or malformed configs answer `text`: the text path reports them.
    pub fn task_kind(&self) -> TaskKind {
        let Some(path) = self.config_path() else {
            return TaskKind::Text;
        };
        let Ok(text) = std::fs::read_to_string(&path) else {
            return TaskKind::Text;
        };
        task_kind(&path.display().to_string(), &text, &self.sets).unwrap_or(TaskKind::Text)
    }

    /// The run folder of this request as a node other than node 0 of a multi-node run
    /// sees it: node 0's folder (which may already hold this run's first files), read and
    /// never written here.
    pub fn open_shared<C: RunConfigFile>(&self) -> Result<RunFolder<C>> {
        self.open_as(false)
    }

    /// The run folder of this request, with its resolved config: a new one (refused where
    /// a run already is) or, with `--resume`, the existing one and its latest checkpoint.
    pub fn open<C: RunConfigFile>(&self) -> Result<RunFolder<C>> {
        self.open_as(true)
    }

    /// [`Request::open`]; `owner`: whether this process creates the folder (and so
    /// refuses one that already holds a run).
    fn open_as<C: RunConfigFile>(&self, owner: bool) -> Result<RunFolder<C>> {
        match &self.resume {
            Some(dir) => resume(dir, &self.sets),
            None => {
                let p = self.config.as_ref().context("--config is required")?;
                let cfg = C::parse(&p.display().to_string(), &read_config(p)?, &self.sets)?;
                let dir = if owner {
                    new_run_dir(self.out.as_deref(), p)?
                } else {
                    run_dir(self.out.as_deref(), p)
                };
                Ok(RunFolder::new(cfg, dir))
            }
        }
    }
}

/// The folder of a run from config `p`: `out`, else `runs/<config name>`.
fn run_dir(out: Option<&Path>, p: &Path) -> PathBuf {
    let stem = p
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "run".into());
    out.map_or_else(|| PathBuf::from("runs").join(stem), Path::to_path_buf)
}

/// The folder of a new run from config `p`: `out`, else `runs/<config name>`; refuses one
/// that already holds a run (that one continues with `--resume`).
fn new_run_dir(out: Option<&Path>, p: &Path) -> Result<PathBuf> {
    let dir = run_dir(out, p);
    if dir.join("metrics.jsonl").exists() {
        bail!(
            "{} already holds a run; continue it with --resume {0} or choose another --out",
            dir.display()
        );
    }
    Ok(dir)
}

/// `--resume dir`: its config (to the end unless `sets` say otherwise) and latest
/// checkpoint, checked to be of the config's model.
fn resume<C: RunConfigFile>(dir: &Path, sets: &[String]) -> Result<RunFolder<C>> {
    let p = dir.join("config.toml");
    if !p.exists() {
        bail!(
            "{}: not found: {} is not a run folder, or its run was killed before it saved \
             its config; start it again with --config FILE --out {1}",
            p.display(),
            dir.display()
        );
    }
    let text = read_config(&p)?;
    // A resumed run goes to the end unless told otherwise.
    let sets: Vec<String> = std::iter::once("run.stop_at=0".to_string())
        .chain(sets.iter().cloned())
        .collect();
    let cfg = C::parse(&p.display().to_string(), &text, &sets)?;
    let mut folder = RunFolder::new(cfg, dir.to_path_buf());
    folder.restart = true;
    let ck_path = dir.join("checkpoints").join("latest.ckpt");
    if !ck_path.exists() {
        // Killed before the first checkpoint: nothing to continue from, but the saved
        // config (and tokenizer) make a restart reproduce the same run.
        eprintln!(
            "{}: no checkpoint yet (the run stopped before its first one): restarting from \
             step 0 with {}",
            ck_path.display(),
            C::SAVED
        );
        return Ok(folder);
    }
    let ck = Checkpoint::read(&ck_path)?;
    let stored: C = stored_config(&ck, &ck_path)?;
    if let Some((was, says)) = folder.cfg.model_mismatch(&stored) {
        bail!(
            "{}: checkpoint of another model config: it was written for {was}, but {} says \
             {says}",
            ck_path.display(),
            p.display()
        );
    }
    folder.resume = Some(ck);
    Ok(folder)
}

/// One run folder and its resolved config.
pub struct RunFolder<C> {
    /// The resolved config (saved as `config.toml`).
    pub cfg: C,
    /// The folder.
    pub dir: PathBuf,
    /// The checkpoint to continue from (`None`: from step 0).
    pub resume: Option<Checkpoint>,
    /// Whether this continues a run (`--resume`, with or without a checkpoint): metrics
    /// logged after the checkpoint are dropped and the run's own tokenizer is read back.
    pub restart: bool,
}

impl<C> RunFolder<C> {
    /// A new run of `cfg` in `dir`.
    pub fn new(cfg: C, dir: PathBuf) -> Self {
        RunFolder {
            cfg,
            dir,
            resume: None,
            restart: false,
        }
    }

    /// A new run of `cfg` in `dir`, which may hold an earlier run of the same program (the
    /// demo's own output): its metrics are cleared so this run's start afresh.
    pub fn replace(cfg: C, dir: PathBuf) -> Result<Self> {
        let metrics = dir.join("metrics.jsonl");
        if metrics.exists() {
            std::fs::remove_file(&metrics)
                .with_context(|| format!("removing the earlier {}", metrics.display()))?;
        }
        Ok(RunFolder::new(cfg, dir))
    }

    /// The step this run starts at (the checkpoint's, else 0).
    pub fn start_step(&self) -> usize {
        self.resume.as_ref().map_or(0, |c| c.meta.step)
    }

    /// The folder's name (the progress bar's label), `train` for a nameless one.
    pub fn name(&self) -> String {
        self.dir
            .file_name()
            .map_or_else(|| "train".into(), |n| n.to_string_lossy().into_owned())
    }

    /// The path of file `name` in the folder.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Writes file `name` of the folder atomically.
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<()> {
        Ok(write_atomic(&self.path(name), bytes)?)
    }

    /// The folder's metrics and checkpoints sink, progress labelled `label` (default: the
    /// folder's name), `samples_per_step` samples a step.
    pub fn sink(
        &self,
        run: &RunConfig,
        label: Option<&str>,
        samples_per_step: usize,
    ) -> Result<FsSink> {
        let label = label.map_or_else(|| self.name(), str::to_string);
        FsSink::open(
            &self.dir,
            self.restart,
            self.start_step(),
            run,
            &label,
            samples_per_step,
        )
    }
}

/// Metrics, checkpoints and progress into a run folder.
pub struct FsSink {
    dir: PathBuf,
    metrics: std::fs::File,
    /// Bar or status lines on stderr (`crate::progress`).
    pub progress: Progress,
    start: Instant,
}

impl FsSink {
    /// Opens `dir/metrics.jsonl` for appending; on a restart (`--resume`) first drops the
    /// lines logged after `start_step`, the checkpoint's step (they will be redone).
    /// Progress (named `label`, `samples_per_step` samples a step) goes to stderr.
    fn open(
        dir: &Path,
        restart: bool,
        start_step: usize,
        run: &RunConfig,
        label: &str,
        samples_per_step: usize,
    ) -> Result<Self> {
        let metrics_path = dir.join("metrics.jsonl");
        if restart && metrics_path.exists() {
            let kept: String = std::fs::read_to_string(&metrics_path)?
                .lines()
                .filter(|l| {
                    serde_json::from_str::<serde_json::Value>(l)
                        .ok()
                        .and_then(|v| v["step"].as_u64())
                        .is_some_and(|s| s as usize <= start_step)
                })
                .map(|l| format!("{l}\n"))
                .collect();
            write_atomic(&metrics_path, kept.as_bytes())?;
        }
        let metrics = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&metrics_path)
            .with_context(|| format!("opening {}", metrics_path.display()))?;
        Ok(FsSink {
            dir: dir.to_path_buf(),
            metrics,
            progress: Progress::new(label, run.steps, start_step, samples_per_step),
            start: Instant::now(),
        })
    }
}

impl RunSink for FsSink {
    fn now(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }
    fn log(&mut self, record: &serde_json::Value) -> prh_core::Result<()> {
        let path = self.dir.join("metrics.jsonl");
        writeln!(self.metrics, "{record}").map_err(|e| prh_core::Error::io(&path, e))
    }
    fn save(&mut self, name: &str, ck: &Checkpoint) -> prh_core::Result<()> {
        ck.write(&self.dir.join("checkpoints").join(format!("{name}.ckpt")))
    }
    fn progress(&mut self, step: usize, _total: usize, loss: f64) {
        self.progress.update(step, loss);
    }
}

/// Loads a text run folder for inference: its spec, tokenizer and checkpoint `which`
/// (`best` falls back to `latest`), checked to agree with each other.
pub fn load_text(dir: &Path, which: &str) -> Result<(EncoderSpec, TextTokenizer, Checkpoint)> {
    let spec_path = dir.join("spec.json");
    let spec: EncoderSpec = serde_json::from_slice(
        &std::fs::read(&spec_path)
            .with_context(|| format!("reading {} (is this a run folder?)", spec_path.display()))?,
    )
    .with_context(|| format!("parsing {}", spec_path.display()))?;
    let tok_path = dir.join("tokenizer.json");
    let tok = read_tokenizer(&tok_path)?;
    let mut ck_path = dir.join("checkpoints").join(format!("{which}.ckpt"));
    if which == "best" && !ck_path.exists() {
        ck_path = dir.join("checkpoints").join("latest.ckpt");
    }
    let ck = Checkpoint::read(&ck_path)?;
    // burn's `load_record` panics (or mis-shapes tensors) on a record of another
    // architecture, so compare the checkpoint's own model config with spec.json first.
    let stored: TrainConfig = stored_config(&ck, &ck_path)?;
    let ck_spec = EncoderSpec::from_config(&stored.model, spec.vocab, spec.causal)?;
    if ck_spec != spec {
        bail!(
            "{}: checkpoint of another model config: it was written for {ck_spec:?}, but {} \
             describes {spec:?}",
            ck_path.display(),
            spec_path.display()
        );
    }
    if tok.vocab_size() != spec.vocab {
        bail!(
            "{}: vocabulary of {} tokens, but {} expects {}",
            tok_path.display(),
            tok.vocab_size(),
            spec_path.display(),
            spec.vocab
        );
    }
    Ok((spec, tok, ck))
}

/// Rebuilds the text encoder of checkpoint `ck` (of a run with `spec`) on an inference
/// backend.
pub fn load_text_model<B: Backend>(
    spec: &EncoderSpec,
    ck: &Checkpoint,
    device: &B::Device,
) -> Result<TextEncoder<B>> {
    Ok(module_from_bytes::<B, _>(
        spec.init::<B>(device)?,
        &ck.model,
        device,
    )?)
}

/// A scene run folder loaded for inference ([`load_scene`]).
pub struct SceneRun<B: Backend> {
    /// The run's resolved config (`config.toml`).
    pub cfg: SceneTrainConfig,
    /// Its world.
    pub world: prh_core::scene::SceneWorld,
    /// Its caption tokenizer (rendered caption runs).
    pub tokenizer: Option<TextTokenizer>,
    /// Its latest checkpoint (the final model of a finished run).
    pub ck: Checkpoint,
    /// The trained encoder.
    pub model: prh_core::tasks::scene::SceneModel<B>,
}

/// Loads the scene run folder `dir` (a `scene-image` or `scene-caption` run of `prh-native
/// train` or `demo`) for inference: its config, tokenizer and latest checkpoint, checked
/// to agree. `flag` names the command-line flag in errors.
pub fn load_scene<B: Backend>(dir: &Path, flag: &str, device: &B::Device) -> Result<SceneRun<B>> {
    let p = dir.join("config.toml");
    if !p.exists() {
        bail!(
            "{flag} {}: {} not found (expected a scene run folder of `prh-native train` or \
             `prh-native demo`)",
            dir.display(),
            p.display()
        );
    }
    let text = read_config(&p)?;
    let kind = task_kind(&p.display().to_string(), &text, &[])?;
    if !matches!(kind, TaskKind::SceneImage | TaskKind::SceneCaption) {
        bail!(
            "{flag} {}: {} has task.kind = {kind:?}, expected a scene JEPA run (scene-image or \
             scene-caption)",
            dir.display(),
            p.display()
        );
    }
    let cfg = SceneTrainConfig::parse(&p.display().to_string(), &text, &[])?;
    let ck_path = dir.join("checkpoints").join("latest.ckpt");
    if !ck_path.exists() {
        bail!(
            "{flag} {}: {} not found: the run has not saved a checkpoint yet",
            dir.display(),
            ck_path.display()
        );
    }
    let ck = Checkpoint::read(&ck_path)?;
    let stored: SceneTrainConfig = stored_config(&ck, &ck_path)?;
    if let Some((was, says)) = cfg.model_mismatch(&stored) {
        bail!(
            "{}: checkpoint of another model config: it was written for {was}, but {} says \
             {says}",
            ck_path.display(),
            p.display()
        );
    }
    let world = cfg.build_world()?;
    let tokenizer = if cfg.needs_tokenizer() {
        Some(read_tokenizer(&dir.join("tokenizer.json"))?)
    } else {
        None
    };
    let model = prh_core::tasks::scene::load_model::<B>(
        &cfg,
        &world,
        tokenizer.as_ref(),
        &ck.model,
        device,
    )
    .with_context(|| format!("loading {}", ck_path.display()))?;
    Ok(SceneRun {
        cfg,
        world,
        tokenizer,
        ck,
        model,
    })
}
