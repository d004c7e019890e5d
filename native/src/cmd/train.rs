//! `prh-native train`: train a text encoder with good views, bad views or next-token
//! prediction (paper sections 3-4) and keep everything in a run folder; a config with
//! `[task] kind = "scene-image" | "scene-caption"` trains a scene JEPA instead
//! ([`super::train_scene`]). Creating, resuming and loading the folder is
//! [`crate::run_folder`]'s, the replicas' devices [`crate::backend`]'s, for both.
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

use super::train_decoder;
use super::train_scene;
use crate::backend::{Devices, OnTrainBackend, on_train_backend};
use crate::cluster::{Cluster, NodeArgs};
use crate::run_folder::{Request, RunFolder, read_tokenizer};
use anyhow::{Context, Result, bail};
use prh_core::backend::burn::tensor::backend::AutodiffBackend;
use prh_core::formats::features::{self, Features};
use prh_core::tasks::TaskKind;
use prh_core::tasks::text::TrainConfig;
use prh_core::tasks::text::{EvalSet, TextTask, embed_texts};
use prh_core::text::corpus::{self, Corpus, DataSource};
use prh_core::text::shards::{self, ShardStream};
use prh_core::text::tokenizer::TextTokenizer;
use prh_core::theory::view_kind::ViewKind;
use prh_core::train::{RunSink, TrainSummary, train_on_nodes};
use std::path::{Path, PathBuf};

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
    /// Several processes or machines training one run (docs/scaling.md).
    #[command(flatten)]
    pub nodes: NodeArgs,
}

impl Args {
    /// The run these flags ask for.
    fn request(&self) -> Request {
        Request {
            config: self.config.clone(),
            out: self.out.clone(),
            resume: self.resume.clone(),
            sets: self.set.clone(),
        }
    }
}

/// Loads corpus `split` as the config says (Multi30k split, or a JSONL file).
pub(crate) fn load_corpus(
    cfg: &TrainConfig,
    data: Option<&Path>,
    eval: bool,
) -> Result<Option<Corpus>> {
    match cfg.data.source {
        DataSource::Multi30k => {
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
        DataSource::Jsonl => {
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
        DataSource::Shards => {
            if eval {
                return Ok(None);
            }
            // Training streams the shards (TextTask::streaming_parts); this bounded sample of
            // part 0's first epoch (part 0 is always node 0's) only trains the tokenizer and
            // supplies held-out texts.
            let mut stream = part_stream(cfg, 0)?;
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
    }
}

/// The seeded group stream of part `part` of `data.stream_parts` over its shard files
/// (`data.path`: a comma list or globs, with or without `{part}`).
fn part_stream(cfg: &TrainConfig, part: usize) -> Result<ShardStream> {
    let parts = cfg.data.stream_parts;
    let paths = shards::part_files(&cfg.data.path, parts, part)?;
    Ok(ShardStream::from_files(
        paths,
        cfg.data.shuffle_buffer,
        shards::part_seed(cfg.run.seed, parts, part),
    )?)
}

/// Held-out texts: each group's first text, its id, and its second text ("" for a
/// one-text group).
struct Heldout {
    texts: Vec<String>,
    ids: Vec<String>,
    partners: Vec<String>,
}

/// The first `eval.max_groups` groups of the eval split (else of the training corpus).
fn heldout(cfg: &TrainConfig, data: Option<&Path>, train: &Corpus) -> Result<Heldout> {
    let eval = load_corpus(cfg, data, true)?;
    let src = eval.as_ref().unwrap_or(train);
    let n = src.groups.len().min(cfg.eval.max_groups.max(1));
    let groups = &src.groups[..n];
    Ok(Heldout {
        texts: groups.iter().map(|g| g.texts[0].clone()).collect(),
        ids: groups.iter().map(|g| g.id.clone()).collect(),
        partners: groups
            .iter()
            .map(|g| g.texts.get(1).cloned().unwrap_or_default())
            .collect(),
    })
}

/// The training corpus as the config says, truncated to `data.max_groups`; for good views
/// without its one-text groups (counted on stderr).
fn training_corpus(cfg: &TrainConfig, data: Option<&Path>) -> Result<Corpus> {
    let mut train_corpus = load_corpus(cfg, data, false)?.context("no training corpus")?;
    train_corpus.truncate(cfg.data.max_groups);
    if cfg.run.objective == ViewKind::Good {
        // Good views pair two different texts of a group; a one-text group would silently
        // give bad views, so skip it (counted) and fail when none remain.
        let source = match cfg.data.source {
            DataSource::Jsonl | DataSource::Shards => cfg.data.path.clone(),
            DataSource::Multi30k => format!("multi30k {}", cfg.data.train_split),
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
    Ok(train_corpus)
}

/// The run's tokenizer: its own on resume, else the configured file, else trained on
/// `train_corpus`.
fn tokenizer(folder: &RunFolder<TrainConfig>, train_corpus: &Corpus) -> Result<TextTokenizer> {
    let cfg = &folder.cfg;
    let own = folder.path("tokenizer.json");
    if folder.restart && (folder.resume.is_some() || own.exists()) {
        read_tokenizer(&own)
    } else if !cfg.tokenizer.path.is_empty() {
        read_tokenizer(Path::new(&cfg.tokenizer.path))
    } else {
        Ok(TextTokenizer::train(train_corpus.texts(), &cfg.tokenizer)?)
    }
}

/// The text task of `cfg`: on `train_corpus` in memory, or streaming `data.source =
/// "shards"`: this node's parts of `data.stream_parts` (all of them on one process; with
/// one part, the whole stream on every node).
fn text_task(
    cfg: &TrainConfig,
    tok: TextTokenizer,
    train_corpus: &Corpus,
    nodes: &NodeArgs,
) -> Result<TextTask> {
    Ok(if cfg.data.source == DataSource::Shards {
        let count = if nodes.multi() { nodes.nodes } else { 1 };
        let mine = shards::node_parts(cfg.data.stream_parts, count, nodes.node_rank);
        let first = mine.start;
        let streams = mine
            .map(|p| part_stream(cfg, p))
            .collect::<Result<Vec<_>>>()?;
        TextTask::streaming_parts(cfg.clone(), tok, streams, first)?
    } else {
        TextTask::new(cfg.clone(), tok, &train_corpus.groups)?
    })
}

/// The text task (in-memory corpus or streamed shards), after checking that the folder
/// has room for its checkpoints; writes the folder's config (and, for a new run, its
/// tokenizer and spec). Returns the task and its parameter count.
fn prepare_task<B: AutodiffBackend>(
    folder: &RunFolder<TrainConfig>,
    train_corpus: &Corpus,
    config_toml: &str,
    nodes: &NodeArgs,
    device: &B::Device,
) -> Result<(TextTask, usize)> {
    let cfg = &folder.cfg;
    let task = text_task(cfg, tokenizer(folder, train_corpus)?, train_corpus, nodes)?;
    let params = task
        .spec
        .init::<B>(device)
        .map(|m| prh_core::backend::burn::module::Module::num_params(&m))?;
    prh_core::train::checkpoint::preflight(&folder.dir, params)?;
    if folder.resume.is_none() {
        folder.write("tokenizer.json", task.tokenizer.to_json()?.as_bytes())?;
        folder.write("config.toml", config_toml.as_bytes())?;
        folder.write(
            "spec.json",
            serde_json::to_string_pretty(&task.spec)?.as_bytes(),
        )?;
    } else {
        folder.write("config.toml", config_toml.as_bytes())?;
    }
    Ok((task, params))
}

/// The periodic evaluation: against `eval.target` (rows of the held-out texts), if set,
/// and caption vs caption when `eval.pairs` is on and every held-out group has a second
/// text; `None` when neither applies.
fn eval_set(cfg: &TrainConfig, held: &Heldout) -> Result<Option<EvalSet>> {
    let mut n = held.texts.len();
    let mut target = None;
    if !cfg.eval.target.is_empty() {
        let t = features::load(Path::new(&cfg.eval.target), None)?;
        n = n.min(t.n);
        if n <= cfg.eval.k {
            bail!(
                "eval.target {}: {n} rows, need more than eval.k = {}",
                cfg.eval.target,
                cfg.eval.k
            );
        }
        let row = t.layers * t.d;
        target = Some(Features::new(
            &t.source,
            n,
            t.layers,
            t.d,
            t.data[..n * row].to_vec(),
        )?);
    }
    let pairs =
        cfg.eval.pairs && n > cfg.eval.k && held.partners[..n].iter().all(|p| !p.is_empty());
    if target.is_none() && !pairs {
        return Ok(None);
    }
    Ok(Some(EvalSet {
        texts: held.texts[..n].to_vec(),
        target,
        partners: if pairs {
            held.partners[..n].to_vec()
        } else {
            Vec::new()
        },
        k: cfg.eval.k,
    }))
}

/// Trains the text run of `args` (stages in [`prh_core::train`]) into its run folder on
/// `devices` (one per `run.data_parallel` replica; replica 0 holds the model, optimiser
/// and checkpoints).
fn train_text<B: AutodiffBackend>(args: &Args, devices: Devices<B>) -> Result<()> {
    if args.nodes.node_rank > 0 {
        return follow_text::<B>(args, devices);
    }
    let device = devices.main();
    let folder = args.request().open::<TrainConfig>()?;
    let cfg = &folder.cfg;
    check_nodes(&args.nodes, cfg)?;
    // Fail now, not at the first checkpoint, if the folder cannot be written (the free
    // space check needs the model size and follows once the model is built).
    prh_core::train::checkpoint::check_writable(&folder.dir)?;
    let data = args.data.as_deref();
    let train_corpus = training_corpus(cfg, data)?;
    let config_toml = cfg.to_toml()?;
    let (mut task, params) =
        prepare_task::<B>(&folder, &train_corpus, &config_toml, &args.nodes, &device)?;
    let held = heldout(cfg, data, &train_corpus)?;
    if let Some(eval) = eval_set(cfg, &held)? {
        task.eval = Some(eval);
    }
    let mut sink = folder.sink(&cfg.run, None, cfg.views.batch_size)?;
    eprintln!(
        "training {:?} {} ({} groups, vocab {}, {} params) on {} into {}",
        cfg.run.objective,
        cfg.model.size,
        task.corpus.groups.len(),
        task.tokenizer.vocab_size(),
        params,
        args.device,
        folder.dir.display()
    );
    let replicas = devices.replicas(cfg.run.data_parallel);
    if replicas.len() > 1 {
        eprintln!(
            "data-parallel: {} replicas on {:?}, batch {} split into {} groups each",
            replicas.len(),
            replicas,
            cfg.views.batch_size,
            cfg.views.batch_size / replicas.len()
        );
    }
    // Node 0 joins after writing the folder's tokenizer and config, which the others read.
    let cluster = join_nodes::<B>(&args.nodes, &config_toml, folder.start_step(), &device)?;
    let summary = train_on_nodes::<B, _>(
        &mut task,
        &cfg.run,
        &cfg.optim,
        &config_toml,
        folder.resume.as_ref(),
        &mut sink,
        &replicas,
        cluster.as_ref().map(|c| c as _),
    )?;
    sink.progress.finish();
    export_embeddings(&folder, &task, &summary, (&held.texts, &held.ids), &device)?;
    if let Some(c) = cluster {
        c.finish();
    }
    Ok(())
}

/// Refuses a multi-node split that the batch cannot take (naming --nodes).
fn check_nodes(nodes: &NodeArgs, cfg: &TrainConfig) -> Result<()> {
    if !nodes.multi() {
        return Ok(());
    }
    nodes.check()?;
    let parts = cfg.data.stream_parts;
    if cfg.data.source == DataSource::Shards && parts > 1 && !parts.is_multiple_of(nodes.nodes) {
        bail!(
            "--nodes {} does not divide data.stream_parts = {parts}: each node reads \
             stream_parts / nodes whole parts (or set data.stream_parts = 1: every node \
             then reads every shard file)",
            nodes.nodes
        );
    }
    let workers = nodes.nodes * cfg.run.data_parallel;
    if !cfg.views.batch_size.is_multiple_of(workers) {
        bail!(
            "--nodes {} x run.data_parallel = {} = {workers} workers do not divide \
             views.batch_size = {}: each worker takes batch_size / (nodes x data_parallel) groups",
            nodes.nodes,
            cfg.run.data_parallel,
            cfg.views.batch_size
        );
    }
    Ok(())
}

/// Joins the other nodes (`None` for a run of one process), on the inner backend of `B`.
fn join_nodes<B: AutodiffBackend>(
    nodes: &NodeArgs,
    config_toml: &str,
    start_step: usize,
    device: &B::Device,
) -> Result<Option<Cluster>> {
    if !nodes.multi() {
        return Ok(None);
    }
    eprintln!(
        "node {}/{}: joining the run at {} (waiting up to {} s for every node)",
        nodes.node_rank, nodes.nodes, nodes.coordinator, nodes.join_timeout
    );
    let c = Cluster::join::<B::InnerBackend>(nodes, config_toml, start_step, device)?;
    eprintln!(
        "node {}/{}: all {} nodes joined; training",
        nodes.node_rank, nodes.nodes, nodes.nodes
    );
    Ok(Some(c))
}

/// A node other than node 0: trains its shards of every step in step with the others and
/// writes nothing (node 0 writes the run folder, logs and checkpoints). It reads node 0's
/// tokenizer from the run folder (or `tokenizer.path`) and, with `--resume`, node 0's
/// checkpoint: the folder must be on a file system every node sees.
fn follow_text<B: AutodiffBackend>(args: &Args, devices: Devices<B>) -> Result<()> {
    let device = devices.main();
    let folder = args.request().open_shared::<TrainConfig>()?;
    let cfg = &folder.cfg;
    check_nodes(&args.nodes, cfg)?;
    let data = args.data.as_deref();
    // A streamed corpus is read in the task, from this node's parts only (node 0 samples
    // part 0 for the tokenizer and the held-out texts).
    let train_corpus = if cfg.data.source == DataSource::Shards {
        Corpus::default()
    } else {
        training_corpus(cfg, data)?
    };
    let config_toml = cfg.to_toml()?;
    let cluster = join_nodes::<B>(&args.nodes, &config_toml, folder.start_step(), &device)?
        .context("--node-rank > 0 needs --nodes > 1")?;
    let tok = if cfg.tokenizer.path.is_empty() {
        read_tokenizer(&folder.path("tokenizer.json")).context(
            "reading node 0's tokenizer from the run folder (is --out shared by every node?)",
        )?
    } else {
        read_tokenizer(Path::new(&cfg.tokenizer.path))?
    };
    let mut task = text_task(cfg, tok, &train_corpus, &args.nodes)?;
    let replicas = devices.replicas(cfg.run.data_parallel);
    let mut sink = Silent(std::time::Instant::now());
    let summary = train_on_nodes::<B, _>(
        &mut task,
        &cfg.run,
        &cfg.optim,
        &config_toml,
        folder.resume.as_ref(),
        &mut sink,
        &replicas,
        Some(&cluster),
    )?;
    cluster.finish();
    eprintln!(
        "node {}/{}: done, {} steps, last loss {:.4}",
        args.nodes.node_rank, args.nodes.nodes, summary.steps, summary.last_loss
    );
    Ok(())
}

/// The sink of a node other than node 0: it logs and saves nothing.
struct Silent(std::time::Instant);

impl RunSink for Silent {
    fn now(&self) -> f64 {
        self.0.elapsed().as_secs_f64()
    }
    fn log(&mut self, _: &serde_json::Value) -> prh_core::Result<()> {
        Ok(())
    }
    fn save(
        &mut self,
        _: &str,
        _: &prh_core::train::checkpoint::Checkpoint,
    ) -> prh_core::Result<()> {
        Ok(())
    }
}

/// `embeddings.npy` (the held-out `texts` embedded by the final model) and
/// `embeddings_ids.txt`; then the closing line on stderr.
fn export_embeddings<B: AutodiffBackend>(
    folder: &RunFolder<TrainConfig>,
    task: &TextTask,
    summary: &TrainSummary<prh_core::models::text_encoder::TextEncoder<B>>,
    (texts, ids): (&[String], &[String]),
    device: &B::Device,
) -> Result<()> {
    let inner = prh_core::backend::burn::module::AutodiffModule::valid(&summary.model);
    let z = embed_texts(&inner, &task.spec, &task.tokenizer, texts, 256, device)?;
    features::write_npy(
        &folder.path("embeddings.npy"),
        &[texts.len(), task.spec.d_model],
        &z,
    )?;
    std::fs::write(folder.path("embeddings_ids.txt"), ids.join("\n") + "\n")?;
    eprintln!(
        "done: {} steps, last loss {:.4}{}; run folder {}",
        summary.steps,
        summary.last_loss,
        summary
            .best
            .map(|b| {
                let name = prh_core::train::TrainTask::<B>::best_metric(task).unwrap_or("score");
                format!(", best {name} {b:.4}")
            })
            .unwrap_or_default(),
        folder.dir.display()
    );
    Ok(())
}

pub fn run(args: Args) -> Result<()> {
    struct Train<'a>(&'a Args);
    impl OnTrainBackend for Train<'_> {
        type Out = ();
        fn run<B: AutodiffBackend>(self, devices: Devices<B>) -> Result<()> {
            let kind = self.0.request().task_kind();
            if self.0.nodes.multi() && kind != TaskKind::Text {
                bail!(
                    "--nodes {}: only text runs train on several nodes (this config's task.kind \
                     is a scene run); use run.data_parallel for replicas in one process",
                    self.0.nodes.nodes
                );
            }
            match kind {
                TaskKind::Text => train_text::<B>(self.0, devices),
                TaskKind::SceneImage | TaskKind::SceneCaption => {
                    train_scene::train(&self.0.request(), devices)
                }
                TaskKind::SceneDecoder => {
                    train_decoder::train(&self.0.request(), self.0.data.as_deref(), devices)
                }
            }
        }
    }
    on_train_backend(&args.device, Train(&args))
}
