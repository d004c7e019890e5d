//! `prh-native bench train`: the text-JEPA training step of prh (burn, CPU backend) beside
//! the equivalent PyTorch step (`benches/torch_step.py`), measured in the same run.
//!
//! ```text
//! $ prh-native bench train --sizes tiny,bert-s --batch 8 --len 16 --steps 5
//! ```
//!
//! Both sides run the same network (token + position embeddings, pre-LN transformer with
//! GELU, final LayerNorm, mean pooling), the same loss (invariance + 0.02 SIGReg with the
//! same slices and knots), backward, global-norm clipping and AdamW, on `8 * batch`
//! sequences of exactly `len` tokens (no padding). prh's side is the real training loop:
//! [`prh_core::train::train_on_devices`] driving a [`TextTask`] whose views are whole texts
//! (`global_frac = local_frac = 1`), so view sampling, masking and batch staging are timed
//! too. With `--threads 2` PyTorch splits each op over two threads, and prh runs two
//! data-parallel replicas (`run.data_parallel = 2`), each a thread computing half of the
//! same batch; the loss and gradients are the whole batch's either way (tested in
//! `crates/prh-core/tests/data_parallel_step.rs`), so the two do the same work per step.
//! Each side reports the median of `steps` step times after `warmup` untimed steps.
//!
//! Model FLOP utilisation (MFU) uses the usual dense-transformer count per step (forward
//! and backward = 3x forward, embeddings and element-wise work not counted):
//! `F = 6 T P + 12 T layers L d`, with `T` tokens per step, `P = layers (4 d^2 + 2 d d_ff)`
//! weights in matmuls and `L` the sequence length; MFU = `F / step time / peak`, where the
//! peak is the best of 3 square f32 matmuls measured in the same run, on each side's own
//! library (torch/MKL, prh's CPU backend: burn-flex or ndarray) as each side trains:
//! PyTorch with `--threads` threads, prh with one matmul per data-parallel replica at
//! once (`--replicas`, each on its own thread).

use crate::backend::Devices;
use crate::progress::{Progress, note};
use anyhow::{Context, Result, bail};
use prh_core::backend::burn::tensor::backend::AutodiffBackend;
use prh_core::tasks::text::TrainConfig;
use prh_core::tasks::text::{TextTask, random_corpus};
use prh_core::text::corpus::Group;
use prh_core::text::tokenizer::TextTokenizer;
use prh_core::text::tokenizer::TokenizerConfig;
use prh_core::train::checkpoint::Checkpoint;
use prh_core::train::{RunSink, train_on_devices};
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

/// Options of `bench train`.
#[derive(clap::Args, Debug)]
pub struct TrainBenchArgs {
    /// Model sizes (presets of `model.size`), comma separated.
    #[arg(long, value_delimiter = ',', default_value = "tiny,bert-s")]
    pub sizes: Vec<String>,
    /// Samples (groups) per step; each gives 8 views (2 global + 6 local) = 8 sequences.
    #[arg(long, default_value_t = 8)]
    pub batch: usize,
    /// Tokens per sequence (every view has exactly this many).
    #[arg(long, default_value_t = 16)]
    pub len: usize,
    /// Timed steps per side (the median is reported).
    #[arg(long, default_value_t = 5)]
    pub steps: usize,
    /// Untimed warm-up steps per side.
    #[arg(long, default_value_t = 2)]
    pub warmup: usize,
    /// SIGReg slices per step.
    #[arg(long, default_value_t = 64)]
    pub slices: usize,
    /// Vocabulary size (token embedding rows).
    #[arg(long, default_value_t = 2000)]
    pub vocab: usize,
    /// Threads for PyTorch, and prh's data-parallel replicas unless `--replicas` says
    /// otherwise (prh's CPU backend runs each replica's ops on one thread, or splits them
    /// over every core with the `cpu-fast` build; `RAYON_NUM_THREADS` caps that).
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// prh's data-parallel replicas (`run.data_parallel`), each a thread working on its
    /// share of the same batch (`prh_core::train::data_parallel`); 0: as many as `--threads` on
    /// the CPU, 1 on a GPU (one device gains nothing from replicas). Must divide `--batch`.
    #[arg(long, default_value_t = 0)]
    pub replicas: usize,
    /// Side of the square f32 matmul that measures each library's peak (0: skip MFU).
    #[arg(long, default_value_t = 2048)]
    pub peak_n: usize,
    /// Backend of prh's side: `cpu`, `wgpu` or `cuda` (as compiled). With `cuda` the
    /// PyTorch step runs on CUDA too (`--device cuda`); with `cpu` and `wgpu` on the CPU.
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// Time prh's side only (for profiling: `perf record prh-native bench train --prh-only`).
    #[arg(long)]
    pub prh_only: bool,
    /// Python interpreter with torch.
    #[arg(long, default_value = "python3")]
    pub python: String,
    /// The PyTorch reference script.
    #[arg(long, default_value = "benches/torch_step.py")]
    pub script: PathBuf,
}

/// A [`RunSink`] that only records when each step finished (nothing is written).
struct StepClock {
    origin: Instant,
    marks: Vec<f64>,
}

impl RunSink for StepClock {
    fn now(&self) -> f64 {
        self.origin.elapsed().as_secs_f64()
    }
    fn log(&mut self, _record: &serde_json::Value) -> prh_core::Result<()> {
        Ok(())
    }
    fn save(&mut self, _name: &str, _checkpoint: &Checkpoint) -> prh_core::Result<()> {
        Ok(())
    }
    fn progress(&mut self, _step: usize, _total: usize, _loss: f64) {
        self.marks.push(self.origin.elapsed().as_secs_f64());
    }
}

/// Median of a non-empty sample.
fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let m = xs.len() / 2;
    if xs.len() % 2 == 1 {
        xs[m]
    } else {
        0.5 * (xs[m - 1] + xs[m])
    }
}

/// `6 T P + 12 T layers L d` (see the module docs) for `tokens` tokens of length `len`.
fn step_flops(d: usize, layers: usize, d_ff: usize, len: usize, tokens: usize) -> f64 {
    let p = (layers * (4 * d * d + 2 * d * d_ff)) as f64;
    6.0 * tokens as f64 * p + 12.0 * (tokens * layers * len * d) as f64
}

/// prh's peak in GFLOP/s as its training runs: one `n x n` f32 matmul per replica device
/// at once on backend `B`, one per replica thread ([`prh_core::train::data_parallel::on_replicas`], as the
/// training step runs its replicas), best of 3 rounds, each round's time taken until the
/// last product is read back (which waits for a GPU to finish).
fn burn_peak_gflops<B: prh_core::backend::burn::prelude::Backend>(
    n: usize,
    devices: &[B::Device],
) -> f64 {
    use prh_core::backend::burn::prelude::*;
    use prh_core::backend::burn::tensor::Distribution;
    use prh_core::train::data_parallel::on_replicas;
    let replicas = devices.len();
    let pairs: Vec<_> = devices
        .iter()
        .map(|device| {
            let a = Tensor::<B, 2>::random([n, n], Distribution::Default, device);
            let b = Tensor::<B, 2>::random([n, n], Distribution::Default, device);
            (a, b)
        })
        .collect();
    let round = || {
        let t0 = Instant::now();
        on_replicas(pairs.clone(), |_, (a, b)| {
            let _ = a.matmul(b).into_data();
        });
        t0.elapsed().as_secs_f64()
    };
    round(); // warm-up
    let best = (0..3).map(|_| round()).fold(f64::INFINITY, f64::min);
    replicas as f64 * 2.0 * (n as f64).powi(3) / best / 1e9
}

/// prh's side: per-step seconds of `train` on backend `B` on random token sequences (the
/// loop reads each step's loss before the backward, so on a GPU a step's time includes
/// waiting for it).
fn prh_steps<B: AutodiffBackend>(
    size: &str,
    args: &TrainBenchArgs,
    devices: Devices<B>,
) -> Result<(Vec<f64>, TextTask)> {
    let config = format!(
        "[run]\nsteps = {steps}\nlog_every = 1000000\ncheckpoint_every = 1000000\n\
         data_parallel = {replicas}\n\
         [model]\nsize = \"{size}\"\nmax_len = {len}\ndropout = 0.0\n\
         [views]\nbatch_size = {batch}\nglobal_frac = 1.0\nlocal_frac = 1.0\n\
         [loss]\nslices = {slices}\n",
        steps = args.steps + args.warmup,
        replicas = replicas(args),
        len = args.len,
        batch = args.batch,
        slices = args.slices,
    );
    let cfg = TrainConfig::from_toml("bench train", &config, &[])?;
    // A tokenizer for the special ids only; the corpus is random ids below.
    let tok = TextTokenizer::train(
        ["a b c d", "e f g h"].into_iter(),
        &TokenizerConfig {
            vocab_size: 50,
            min_frequency: 1,
            ..TokenizerConfig::default()
        },
    )?;
    let seed_groups = vec![Group {
        id: "0".into(),
        texts: vec!["a b".into(), "c d".into()],
    }];
    let mut task = TextTask::new(cfg.clone(), tok, &seed_groups)?;
    // 1024 groups of 3 texts of exactly `len` random ids (above the special tokens).
    let low = task.tokenizer.vocab_size() as u32;
    if args.vocab as u32 <= low {
        bail!("--vocab must exceed the {low} special tokens");
    }
    task.corpus = random_corpus(1024, 3, args.len, low..args.vocab as u32, 0);
    task.spec.vocab = args.vocab;
    let mut clock = StepClock {
        origin: Instant::now(),
        marks: Vec::new(),
    };
    let replicas = devices.replicas(cfg.run.data_parallel);
    train_on_devices::<B, _>(
        &mut task, &cfg.run, &cfg.optim, "", None, &mut clock, &replicas,
    )
    .with_context(|| format!("prh training step ({size})"))?;
    // Step k took marks[k] - marks[k-1]; step 0 also paid for model set-up, so skip it.
    let times: Vec<f64> = clock.marks.windows(2).map(|w| w[1] - w[0]).collect();
    Ok((times[args.warmup.saturating_sub(1)..].to_vec(), task))
}

/// prh's replicas: `--replicas`, or when that is 0 `--threads` on the CPU and 1 on a GPU.
fn replicas(args: &TrainBenchArgs) -> usize {
    match (args.replicas, args.device.as_str()) {
        (0, "cpu") => args.threads,
        (0, _) => 1,
        (r, _) => r,
    }
}

/// PyTorch's side: the script's JSON line.
fn torch_steps(args: &TrainBenchArgs, task: &TextTask, peak: bool) -> Result<serde_json::Value> {
    let s = &task.spec;
    let out = Command::new(&args.python)
        .arg(&args.script)
        .args(["--d", &s.d_model.to_string()])
        .args(["--layers", &s.layers.to_string()])
        .args(["--heads", &s.heads.to_string()])
        .args(["--dff", &s.d_ff.to_string()])
        .args(["--vocab", &args.vocab.to_string()])
        .args(["--seqs", &(8 * args.batch).to_string()])
        .args(["--len", &args.len.to_string()])
        .args(["--slices", &args.slices.to_string()])
        .args(["--steps", &args.steps.to_string()])
        .args(["--warmup", &args.warmup.to_string()])
        .args(["--threads", &args.threads.to_string()])
        .args(["--device", torch_device(&args.device)])
        .args(["--peak", &if peak { args.peak_n } else { 0 }.to_string()])
        .output()
        .with_context(|| format!("running {} {}", args.python, args.script.display()))?;
    if !out.status.success() {
        bail!(
            "PyTorch reference failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("parsing the PyTorch reference's JSON")?;
    if let Some(e) = v.get("error") {
        bail!("PyTorch reference: {e}");
    }
    Ok(v)
}

/// PyTorch's device for prh's `--device`: CUDA beside CUDA, else the CPU.
fn torch_device(prh_device: &str) -> &'static str {
    if prh_device == "cuda" { "cuda" } else { "cpu" }
}

/// Runs the comparison on the backend `--device` names and prints the table.
pub fn run(args: TrainBenchArgs) -> Result<()> {
    struct Compare(TrainBenchArgs);
    impl crate::backend::OnTrainBackend for Compare {
        type Out = ();
        fn run<B: AutodiffBackend>(self, devices: crate::backend::Devices<B>) -> Result<()> {
            compare::<B>(self.0, devices)
        }
    }
    let device = args.device.clone();
    crate::backend::on_train_backend(&device, Compare(args))
}

/// The flags' consistency (before any work).
fn check_args(args: &TrainBenchArgs) -> Result<()> {
    if args.steps == 0 || args.batch == 0 || args.len == 0 || args.threads == 0 {
        bail!("need --steps, --batch, --len, --threads >= 1");
    }
    if args.sizes.is_empty() {
        bail!("need at least one size (--sizes)");
    }
    if !args.batch.is_multiple_of(replicas(args)) {
        bail!(
            "--batch {} is not a multiple of prh's {} replicas (--replicas, default --threads)",
            args.batch,
            replicas(args)
        );
    }
    if !args.script.is_file() {
        bail!(
            "{}: PyTorch reference script not found (run from the repository root or pass --script)",
            args.script.display()
        );
    }
    Ok(())
}

/// One size's measurements: size, tokens a step, FLOPs a step, prh's and PyTorch's
/// median step seconds, PyTorch's JSON line.
type Row = (String, usize, f64, f64, f64, serde_json::Value);

/// The comparison on backend `B` and its `devices`.
fn compare<B: AutodiffBackend>(args: TrainBenchArgs, devices: Devices<B>) -> Result<()> {
    check_args(&args)?;
    let (burn_peak, mut torch_peak) = (
        (args.peak_n > 0).then(|| {
            burn_peak_gflops::<B::InnerBackend>(args.peak_n, &devices.replicas(replicas(&args)))
        }),
        None,
    );
    let mut rows: Vec<Row> = Vec::new();
    let mut progress = Progress::new("bench train", args.sizes.len(), 0, 0);
    for (done, size) in args.sizes.iter().enumerate() {
        let (times, task) = prh_steps::<B>(size, &args, devices)?;
        let ours = median(times.clone());
        note(&format!(
            "prh {size}: median {:.2} ms; steps {times:.3?} s",
            ours * 1e3
        ));
        if args.prh_only {
            progress.count(done + 1);
            continue;
        }
        let theirs = torch_steps(&args, &task, torch_peak.is_none() && args.peak_n > 0)?;
        if let Some(p) = theirs["peak_gflops"].as_f64() {
            torch_peak = Some(p);
        }
        let t_med = theirs["median_s"]
            .as_f64()
            .context("PyTorch reference: no median_s")?;
        note(&format!("torch {size}: steps {} s", theirs["step_s"]));
        let s = &task.spec;
        let tokens = 8 * args.batch * args.len;
        let flops = step_flops(s.d_model, s.layers, s.d_ff, args.len, tokens);
        rows.push((size.clone(), tokens, flops, ours, t_med, theirs));
        progress.count(done + 1);
    }
    progress.finish();
    print_table(&args, &rows, burn_peak, torch_peak);
    Ok(())
}

/// The comparison's header lines and its table, one row per size.
fn print_table(
    args: &TrainBenchArgs,
    rows: &[Row],
    burn_peak: Option<f64>,
    torch_peak: Option<f64>,
) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "text-JEPA training step, {} sequences x {} tokens, {} timed steps after {} warm-up (median); \
         prh {} build, {}, {} replica(s); PyTorch {} on {} ({} CPU threads); {cores} cores",
        8 * args.batch,
        args.len,
        args.steps,
        args.warmup,
        if cfg!(debug_assertions) {
            "dev"
        } else {
            "release"
        },
        match args.device.as_str() {
            "cpu" => prh_core::backend::cpu_backend_description(),
            other => format!("burn {other}"),
        },
        replicas(args),
        rows.first()
            .and_then(|r| r.5["torch"].as_str())
            .unwrap_or("?"),
        torch_device(&args.device),
        args.threads,
    );
    if let (Some(b), Some(t)) = (burn_peak, torch_peak) {
        println!(
            "peak (best of 3 f32 {n}x{n} matmuls; prh: {r} at once, one per replica): \
             prh/burn {b:.1} GFLOP/s, torch {t:.1} GFLOP/s",
            n = args.peak_n,
            r = replicas(args),
        );
    }
    println!(
        "{:<8} {:>7} {:>10} {:>12} {:>12} {:>10} {:>9} {:>9}",
        "model",
        "tokens",
        "GFLOP/step",
        "prh tok/s",
        "torch tok/s",
        "prh/torch",
        "prh MFU",
        "torch MFU"
    );
    for (size, tokens, flops, ours, theirs, _) in rows {
        let mfu = |t: f64, peak: Option<f64>| {
            peak.map_or("-".to_string(), |p| {
                format!("{:.1}%", 100.0 * flops / t / (p * 1e9))
            })
        };
        println!(
            "{size:<8} {tokens:>7} {:>10.2} {:>12.0} {:>12.0} {:>10.2} {:>9} {:>9}",
            flops / 1e9,
            *tokens as f64 / ours,
            *tokens as f64 / theirs,
            theirs / ours,
            mfu(*ours, burn_peak),
            mfu(*theirs, torch_peak),
        );
    }
}
