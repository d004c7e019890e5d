//! `prh-native train`: train a text encoder with good views, bad views or next-token
//! prediction (paper sections 3-4) and keep everything in a run folder.
//!
//! ```text
//! $ prh-native train --config configs/tiny.toml --out runs/tiny
//! step 10/60 loss 0.2411 lr 5.0e-4 12.3 steps/s
//! ...
//! run folder runs/tiny: config.toml tokenizer.json spec.json metrics.jsonl checkpoints/ embeddings.npy
//! $ prh-native train --config configs/tiny.toml --out runs/t2 --set run.stop_at=30  # "interrupted"
//! $ prh-native train --resume runs/t2                            # continues exactly
//! ```
//!
//! Run folder: `config.toml` (resolved), `tokenizer.json`, `spec.json` (architecture),
//! `metrics.jsonl` (one JSON object per logged step), `checkpoints/latest.ckpt` and
//! `checkpoints/best.ckpt` (atomic), `embeddings.npy` + `embeddings_ids.txt` (held-out
//! texts embedded by the final model).

use crate::progress::Progress;
use anyhow::{Context, Result, bail};
use prh_core::backend::burn::prelude::Backend;
use prh_core::backend::burn::tensor::backend::AutodiffBackend;
use prh_core::formats::features::{self, Features};
use prh_core::models::text_encoder::ModelConfig;
use prh_core::models::text_encoder::{EncoderSpec, TextEncoder};
use prh_core::tasks::text::TrainConfig;
use prh_core::tasks::text::{EvalSet, TextTask, embed_texts};
use prh_core::text::corpus::{self, Corpus};
use prh_core::text::tokenizer::TextTokenizer;
use prh_core::theory::view_kind::ViewKind;
use prh_core::train::checkpoint::{Checkpoint, module_from_bytes, write_atomic};
use prh_core::train::{RunSink, train_on_devices};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Train a text JEPA (good / bad views) or the next-token baseline.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Run config (TOML); see configs/. Not needed with --resume.
    #[arg(long, required_unless_present = "resume")]
    pub config: Option<PathBuf>,
    /// Override a config field, e.g. --set optim.lr=1e-4 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Run folder (default runs/<config name>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Continue the run in this folder from its latest checkpoint.
    #[arg(long, conflicts_with_all = ["config", "out"])]
    pub resume: Option<PathBuf>,
    /// Backend: cpu, wgpu or cuda (must be compiled in with the cargo feature of that name).
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// Data directory (default $PRH_DATA, else ../shared/data).
    #[arg(long)]
    pub data: Option<PathBuf>,
}

/// The error for a backend that this binary was built without.
pub fn not_compiled(name: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "--device {name}: this binary was built without the `{name}` backend (compiled: {}); \
         rebuild with `cargo build -p prh-native --features {name}`",
        prh_core::backend::compiled().join(", ")
    )
}

/// Loads corpus `split` as the config says (Multi30k split, or a JSONL file).
fn load_corpus(cfg: &TrainConfig, data: Option<&Path>, eval: bool) -> Result<Option<Corpus>> {
    match cfg.data.source.as_str() {
        "multi30k" => {
            let dir = corpus::data_dir(data)
                .context("no data directory: pass --data DIR or set PRH_DATA (Multi30k lives under DIR/multi30k)")?;
            let split = if eval {
                &cfg.data.eval_split
            } else {
                &cfg.data.train_split
            };
            if split.is_empty() {
                return Ok(None);
            }
            Ok(Some(corpus::read_multi30k(&dir, split, &cfg.data.lang)?))
        }
        "jsonl" => {
            let p = if eval {
                &cfg.data.eval_path
            } else {
                &cfg.data.path
            };
            if p.is_empty() {
                if eval {
                    return Ok(None);
                }
                bail!("data.path: a JSONL corpus file is required when data.source = \"jsonl\"");
            }
            Ok(Some(corpus::read_jsonl(Path::new(p))?))
        }
        "shards" => {
            if eval {
                return Ok(None);
            }
            // Training streams the shards (TextTask::streaming); this bounded sample of the
            // stream's first epoch only trains the tokenizer and supplies held-out texts.
            let mut stream = shard_stream(cfg)?;
            let cap = if cfg.data.max_groups > 0 {
                cfg.data.max_groups
            } else {
                cfg.data.shuffle_buffer
            };
            let mut groups = Vec::new();
            while groups.len() < cap {
                let g = stream.next_group()?;
                if stream.epoch() > 0 {
                    break;
                }
                groups.push(g);
            }
            Ok(Some(Corpus { groups }))
        }
        other => bail!("data.source: expected `multi30k`, `jsonl` or `shards`, got `{other}`"),
    }
}

/// The seeded group stream over the shard files named by `data.path` (comma list or globs).
fn shard_stream(cfg: &TrainConfig) -> Result<prh_core::text::shards::ShardStream> {
    let paths = prh_core::text::shards::resolve_shards(&cfg.data.path)?;
    Ok(prh_core::text::shards::ShardStream::from_files(
        paths,
        cfg.data.shuffle_buffer,
        cfg.run.seed,
    )?)
}

/// Reads a run config file, refusing one with no settings at all: an empty (or
/// comments-only) file would otherwise silently train with every default.
fn read_config(p: &Path) -> Result<String> {
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

/// Metrics, checkpoints and progress into a run folder.
pub(crate) struct FsSink {
    dir: PathBuf,
    metrics: std::fs::File,
    /// Bar or status lines on stderr (`crate::progress`).
    pub(crate) progress: Progress,
    start: Instant,
}

impl FsSink {
    /// Opens `dir/metrics.jsonl` for appending; on a restart (`--resume`) first drops the
    /// lines logged after `start_step`, the checkpoint's step (they will be redone).
    /// Progress (named `label`, `samples_per_step` samples a step) goes to stderr.
    pub(crate) fn open(
        dir: &Path,
        restart: bool,
        start_step: usize,
        run: &prh_core::train::config::RunConfig,
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

/// Reads a run folder's spec, tokenizer and a checkpoint (`best` falls back to `latest`).
pub fn load_run(dir: &Path, which: &str) -> Result<(EncoderSpec, TextTokenizer, Checkpoint)> {
    let spec_path = dir.join("spec.json");
    let spec: EncoderSpec = serde_json::from_slice(
        &std::fs::read(&spec_path)
            .with_context(|| format!("reading {} (is this a run folder?)", spec_path.display()))?,
    )
    .with_context(|| format!("parsing {}", spec_path.display()))?;
    let tok_path = dir.join("tokenizer.json");
    let tok_bytes =
        std::fs::read(&tok_path).with_context(|| format!("reading {}", tok_path.display()))?;
    let tok = TextTokenizer::from_bytes(&tok_path.display().to_string(), &tok_bytes)?;
    let mut ck_path = dir.join("checkpoints").join(format!("{which}.ckpt"));
    if which == "best" && !ck_path.exists() {
        ck_path = dir.join("checkpoints").join("latest.ckpt");
    }
    let ck = Checkpoint::read(&ck_path)?;
    // burn's `load_record` panics (or mis-shapes tensors) on a record of another
    // architecture, so compare the checkpoint's own model config with spec.json first.
    let ck_model = checkpoint_model(&ck, &ck_path)?;
    let ck_spec = EncoderSpec::from_config(&ck_model, spec.vocab, spec.causal)?;
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

/// The `[model]` section of the config stored in a checkpoint.
fn checkpoint_model(ck: &Checkpoint, path: &Path) -> Result<ModelConfig> {
    let source = format!("{} (stored config)", path.display());
    Ok(TrainConfig::from_toml(&source, &ck.meta.config, &[])?.model)
}

/// Rebuilds the encoder of a checkpoint on an inference backend.
pub fn load_model<B: Backend>(
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

/// Held-out texts (one per group) and their ids.
fn heldout(
    cfg: &TrainConfig,
    data: Option<&Path>,
    train: &Corpus,
) -> Result<(Vec<String>, Vec<String>)> {
    let eval = load_corpus(cfg, data, true)?;
    let src = eval.as_ref().unwrap_or(train);
    let n = src.groups.len().min(cfg.eval.max_groups.max(1));
    Ok(src.groups[..n]
        .iter()
        .map(|g| (g.texts[0].clone(), g.id.clone()))
        .unzip())
}

/// The folder of a new run from config `p`: `--out`, else `runs/<config name>`; refuses
/// one that already holds a run (that one continues with `--resume`).
pub(crate) fn new_run_dir(args: &Args, p: &Path) -> Result<PathBuf> {
    let stem = p
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "run".into());
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("runs").join(stem));
    if dir.join("metrics.jsonl").exists() {
        bail!(
            "{} already holds a run; continue it with --resume {0} or choose another --out",
            dir.display()
        );
    }
    Ok(dir)
}

/// Trains on the backend `B`; `device_of(i, w)` is the device of data-parallel replica `i`
/// of `w` (`run.data_parallel`; replica 0 holds the model, optimiser and checkpoints).
fn train_on<B: AutodiffBackend>(
    args: &Args,
    device_of: fn(usize, usize) -> B::Device,
) -> Result<()> {
    let device = device_of(0, 1);
    if super::train_scene::is_scene(args) {
        return super::train_scene::train_on::<B>(args, device);
    }
    // Config, run folder and (on resume) the checkpoint.
    let (cfg, dir, resume) = match &args.resume {
        Some(dir) => {
            let p = dir.join("config.toml");
            if !p.exists() {
                bail!(
                    "{}: not found: {} is not a run folder, or its run was killed before it \
                     saved its config; start it again with --config FILE --out {1}",
                    p.display(),
                    dir.display()
                );
            }
            let text = read_config(&p)?;
            // A resumed run goes to the end unless told otherwise.
            let sets: Vec<String> = std::iter::once("run.stop_at=0".to_string())
                .chain(args.set.iter().cloned())
                .collect();
            let cfg = TrainConfig::from_toml(&p.display().to_string(), &text, &sets)?;
            let ck_path = dir.join("checkpoints").join("latest.ckpt");
            if !ck_path.exists() {
                // Killed before the first checkpoint: nothing to continue from, but the
                // saved config and tokenizer make a restart reproduce the same run.
                eprintln!(
                    "{}: no checkpoint yet (the run stopped before its first one): \
                     restarting from step 0 with the saved config and tokenizer",
                    ck_path.display()
                );
                (cfg, dir.clone(), None)
            } else {
                let ck = Checkpoint::read(&ck_path)?;
                let ck_model = checkpoint_model(&ck, &ck_path)?;
                if ck_model != cfg.model {
                    bail!(
                        "{}: checkpoint of another model config: it was written for {ck_model:?}, \
                         but {} says {:?}",
                        ck_path.display(),
                        p.display(),
                        cfg.model
                    );
                }
                (cfg, dir.clone(), Some(ck))
            }
        }
        None => {
            let p = args.config.as_ref().context("--config is required")?;
            let text = read_config(p)?;
            let cfg = TrainConfig::from_toml(&p.display().to_string(), &text, &args.set)?;
            (cfg, new_run_dir(args, p)?, None)
        }
    };
    // Fail now, not at the first checkpoint, if the folder cannot be written (the free
    // space check needs the model size and follows once the model is built).
    prh_core::train::checkpoint::check_writable(&dir)?;
    let data = args.data.as_deref();
    let mut train_corpus = load_corpus(&cfg, data, false)?.context("no training corpus")?;
    train_corpus.truncate(cfg.data.max_groups);
    if cfg.run.objective == ViewKind::Good {
        // Good views pair two different texts of a group; a one-text group would silently
        // give bad views, so skip it (counted) and fail when none remain.
        let source = match cfg.data.source.as_str() {
            "jsonl" | "shards" => cfg.data.path.clone(),
            _ => format!("multi30k {}", cfg.data.train_split),
        };
        let before = train_corpus.groups.len();
        train_corpus.groups.retain(|g| g.texts.len() >= 2);
        let skipped = before - train_corpus.groups.len();
        if train_corpus.groups.is_empty() {
            bail!(
                "{source}: all {before} groups have a single text, but good views need at \
                 least two texts per group (use run.objective = \"bad\" or \"next-token\")"
            );
        }
        if skipped > 0 {
            eprintln!(
                "warning: {source}: skipped {skipped} of {before} groups with a single text \
                 (good views need two texts per group)"
            );
        }
    }
    // Tokenizer: the run's own on resume, else a given file, else trained here.
    let tok_path = dir.join("tokenizer.json");
    let restart = args.resume.is_some();
    let tok = if restart && (resume.is_some() || tok_path.exists()) {
        let bytes =
            std::fs::read(&tok_path).with_context(|| format!("reading {}", tok_path.display()))?;
        TextTokenizer::from_bytes(&tok_path.display().to_string(), &bytes)?
    } else if !cfg.tokenizer.path.is_empty() {
        let p = Path::new(&cfg.tokenizer.path);
        TextTokenizer::from_bytes(
            &p.display().to_string(),
            &std::fs::read(p).with_context(|| format!("reading {}", p.display()))?,
        )?
    } else {
        TextTokenizer::train(train_corpus.texts(), &cfg.tokenizer)?
    };
    let config_toml = cfg.to_toml()?;
    let mut task = if cfg.data.source == "shards" {
        TextTask::streaming(cfg.clone(), tok, shard_stream(&cfg)?)?
    } else {
        TextTask::new(cfg.clone(), tok, &train_corpus.groups)?
    };
    let params = task
        .spec
        .init::<B>(&device)
        .map(|m| prh_core::backend::burn::module::Module::num_params(&m))?;
    prh_core::train::checkpoint::preflight(&dir, params)?;
    if resume.is_none() {
        write_atomic(&tok_path, task.tokenizer.to_json()?.as_bytes())?;
        write_atomic(&dir.join("config.toml"), config_toml.as_bytes())?;
        write_atomic(
            &dir.join("spec.json"),
            serde_json::to_string_pretty(&task.spec)?.as_bytes(),
        )?;
    } else {
        write_atomic(&dir.join("config.toml"), config_toml.as_bytes())?;
    }
    let (texts, ids) = heldout(&cfg, data, &train_corpus)?;
    if !cfg.eval.target.is_empty() {
        let mut target = features::load(Path::new(&cfg.eval.target), None)?;
        let n = texts.len().min(target.n);
        if n <= cfg.eval.k {
            bail!(
                "eval.target {}: {n} rows, need more than eval.k = {}",
                cfg.eval.target,
                cfg.eval.k
            );
        }
        let row = target.layers * target.d;
        target = Features::new(
            &target.source,
            n,
            target.layers,
            target.d,
            target.data[..n * row].to_vec(),
        )?;
        task.eval = Some(EvalSet {
            texts: texts[..n].to_vec(),
            target,
            k: cfg.eval.k,
        });
    }
    let start_step = resume.as_ref().map_or(0, |c| c.meta.step);
    let label = dir
        .file_name()
        .map_or_else(|| "train".into(), |n| n.to_string_lossy().into_owned());
    let mut sink = FsSink::open(
        &dir,
        restart,
        start_step,
        &cfg.run,
        &label,
        cfg.views.batch_size,
    )?;
    eprintln!(
        "training {:?} {} ({} groups, vocab {}, {} params) on {} into {}",
        cfg.run.objective,
        cfg.model.size,
        task.corpus.groups.len(),
        task.tokenizer.vocab_size(),
        params,
        args.device,
        dir.display()
    );
    let w = cfg.run.data_parallel;
    let devices: Vec<B::Device> = (0..w).map(|i| device_of(i, w)).collect();
    if devices.len() > 1 {
        eprintln!(
            "data-parallel: {} replicas on {:?}, batch {} split into {} groups each",
            devices.len(),
            devices,
            cfg.views.batch_size,
            cfg.views.batch_size / devices.len()
        );
    }
    let summary = train_on_devices::<B, _>(
        &mut task,
        &cfg.run,
        &cfg.optim,
        &config_toml,
        resume.as_ref(),
        &mut sink,
        &devices,
    )?;
    sink.progress.finish();
    // Embeddings export of the held-out texts with the final model.
    let inner = prh_core::backend::burn::module::AutodiffModule::valid(&summary.model);
    let z = embed_texts(&inner, &task.spec, &task.tokenizer, &texts, 256, &device)?;
    features::write_npy(
        &dir.join("embeddings.npy"),
        &[texts.len(), task.spec.d_model],
        &z,
    )?;
    std::fs::write(dir.join("embeddings_ids.txt"), ids.join("\n") + "\n")?;
    eprintln!(
        "done: {} steps, last loss {:.4}{}; run folder {}",
        summary.steps,
        summary.last_loss,
        summary
            .best
            .map(|b| format!(", best mutual_knn {b:.4}"))
            .unwrap_or_default(),
        dir.display()
    );
    Ok(())
}

/// wgpu replica `i` of `w`: the default (best available) adapter for single-device
/// training, else discrete GPU `i mod n` for the `n` discrete GPUs wgpu finds, so replicas
/// beyond the GPUs share them round-robin (all on the default adapter when there is no
/// discrete GPU). Multi-GPU data parallelism is not run on this project's machines.
#[cfg(feature = "wgpu")]
fn wgpu_device(i: usize, w: usize) -> prh_core::backend::burn::backend::wgpu::WgpuDevice {
    use prh_core::backend::burn::backend::wgpu::WgpuDevice;
    use prh_core::backend::burn::prelude::Backend;
    if w == 1 {
        return WgpuDevice::default();
    }
    // DiscreteGpu's type id in cubecl-wgpu's `DeviceId`s.
    match prh_core::backend::WgpuTrain::device_count(0) {
        0 => WgpuDevice::default(),
        n => WgpuDevice::DiscreteGpu(i % n),
    }
}

/// CUDA replica `i` of `w`: device `i mod n` for the `n` devices CUDA reports, so replicas
/// beyond the GPUs share them round-robin (e.g. `run.data_parallel = 2` on one GPU).
#[cfg(feature = "cuda")]
fn cuda_device(i: usize, w: usize) -> prh_core::backend::burn::backend::cuda::CudaDevice {
    use prh_core::backend::burn::prelude::Backend;
    let n = if w > 1 {
        prh_core::backend::CudaTrain::device_count(0).max(1)
    } else {
        1
    };
    prh_core::backend::burn::backend::cuda::CudaDevice { index: i % n }
}

/// Work that runs on whichever training backend `--device` names (a generic method, since
/// a closure cannot be generic over the backend).
pub trait OnTrainBackend {
    /// What the work returns.
    type Out;
    /// Runs on backend `B`; `device_of(i, w)` is the device of data-parallel replica `i` of
    /// `w` (`device_of(0, 1)` for single-device work; the inference backend of `B` is
    /// `B::InnerBackend`, on the same devices).
    fn run<B: AutodiffBackend>(self, device_of: fn(usize, usize) -> B::Device)
    -> Result<Self::Out>;
}

/// Runs `work` on the training backend named by `device` (`cpu`, `wgpu` or `cuda`), or says
/// that this binary was built without it. The one place that maps `--device` to a backend
/// type and its devices for every subcommand.
pub fn on_train_backend<W: OnTrainBackend>(device: &str, work: W) -> Result<W::Out> {
    match device {
        // The CPU backend has one device: data-parallel replicas share it.
        "cpu" => {
            #[cfg(feature = "cpu")]
            return work.run::<prh_core::backend::CpuTrain>(|_, _| Default::default());
            #[cfg(not(feature = "cpu"))]
            return Err(not_compiled("cpu"));
        }
        "wgpu" => {
            #[cfg(feature = "wgpu")]
            return work.run::<prh_core::backend::WgpuTrain>(wgpu_device);
            #[cfg(not(feature = "wgpu"))]
            return Err(not_compiled("wgpu"));
        }
        "cuda" => {
            #[cfg(feature = "cuda")]
            return work.run::<prh_core::backend::CudaTrain>(cuda_device);
            #[cfg(not(feature = "cuda"))]
            return Err(not_compiled("cuda"));
        }
        other => bail!("--device: expected cpu, wgpu or cuda, got `{other}`"),
    }
}

pub fn run(args: Args) -> Result<()> {
    struct Train<'a>(&'a Args);
    impl OnTrainBackend for Train<'_> {
        type Out = ();
        fn run<B: AutodiffBackend>(self, device_of: fn(usize, usize) -> B::Device) -> Result<()> {
            train_on::<B>(self.0, device_of)
        }
    }
    on_train_backend(&args.device, Train(&args))
}
