//! Pretrained Hugging Face encoders, no Python: `prh-native embed --hf DIR` and
//! `prh-native features --hf DIR` (see `prh_core::tasks::pretrained`).
//!
//! ```text
//! $ prh-native embed --hf all-MiniLM-L6-v2 --texts captions.txt --out minilm.npy
//! bert (6 layers, width 384), pooling mean, L2-normalised: 1014 texts -> minilm.npy [1014, 384]
//! $ prh-native features --hf dinov2-small --images photos/ --out dino.npy
//! dinov2 (12 layers, width 384), pooling cls: 1014 images -> dino.npy [1014, 13, 384]
//! ```

use anyhow::{Context, Result, bail};
use prh_core::backend::burn::prelude::Backend;
use prh_core::backend::burn::tensor::backend::AutodiffBackend;
use prh_core::formats::features;
use prh_core::models::text_encoder::Pooling;
use prh_core::tasks::pretrained::{Input, Pretrained, PretrainedFiles};
use std::path::{Path, PathBuf};

use crate::backend::{Devices, OnTrainBackend, on_train_backend};
use crate::progress::Phases;

/// Where the inputs of a pretrained encoder come from.
pub struct Sources<'a> {
    /// Texts: one per line (.txt), or a corpus (.jsonl: the first text of each group).
    pub texts: Option<&'a Path>,
    /// Images: a PNG/JPEG file, a folder of them (sorted by name), or a .txt list of paths
    /// (relative to the list's folder).
    pub images: Option<&'a Path>,
}

/// What to compute and where to write it.
pub struct Job<'a> {
    /// The checkpoint folder.
    pub hf: &'a Path,
    /// The inputs.
    pub sources: Sources<'a>,
    /// Output .npy, or .tsv for the Embedding Projector's pair (embed only).
    pub out: &'a Path,
    /// `mean` or `cls`, or the model's default.
    pub pool: Option<&'a str>,
    /// Inputs per forward pass.
    pub batch: usize,
    /// Every hidden state `[N, L + 1, H]` (features) instead of one vector `[N, H]`.
    pub all_states: bool,
}

fn image_paths(path: &Path) -> Result<Vec<PathBuf>> {
    let is_image = |p: &Path| {
        p.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "png" | "jpg" | "jpeg"))
    };
    let paths: Vec<PathBuf> = if path.is_dir() {
        let mut v: Vec<PathBuf> = std::fs::read_dir(path)
            .with_context(|| format!("reading {}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| is_image(p))
            .collect();
        v.sort();
        v
    } else if is_image(path) {
        vec![path.to_path_buf()]
    } else {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| base.join(l))
            .collect()
    };
    if paths.is_empty() {
        bail!(
            "{}: no images (expected a .png/.jpg file, a folder of them, or a .txt list of paths)",
            path.display()
        );
    }
    Ok(paths)
}

/// The inputs as labels (texts or file names) and their bytes.
fn read_inputs(sources: &Sources) -> Result<(Vec<String>, Vec<Vec<u8>>)> {
    match (sources.texts, sources.images) {
        (Some(t), None) => Ok((super::embed::read_texts(t)?, Vec::new())),
        (None, Some(i)) => {
            let paths = image_paths(i)?;
            let bytes = paths
                .iter()
                .map(|p| std::fs::read(p).with_context(|| format!("reading {}", p.display())))
                .collect::<Result<Vec<_>>>()?;
            Ok((
                paths.iter().map(|p| p.display().to_string()).collect(),
                bytes,
            ))
        }
        _ => bail!("expected exactly one of --texts and --images"),
    }
}

fn run_on<B: Backend>(job: &Job, device: B::Device) -> Result<()> {
    let pooling = job.pool.map(str::parse::<Pooling>).transpose()?;
    let files = PretrainedFiles::read_dir(job.hf)?;
    let model = Pretrained::<B>::load(&files, pooling, &device)?;
    let (labels, bytes) = read_inputs(&job.sources)?;
    let inputs: Vec<Input> = if bytes.is_empty() {
        if !model.is_text() {
            bail!(
                "{}: an image encoder: give --images, not --texts",
                job.hf.display()
            );
        }
        labels.iter().map(|t| Input::Text(t)).collect()
    } else {
        if model.is_text() {
            bail!(
                "{}: a text encoder: give --texts, not --images",
                job.hf.display()
            );
        }
        labels
            .iter()
            .zip(&bytes)
            .map(|(l, b)| Input::Image(l, b))
            .collect()
    };
    let mut phases = Phases::new("embed");
    let mut tick = |t| phases.tick(t);
    let z = if job.all_states {
        model.features(&inputs, job.batch, &mut tick)?
    } else {
        model.embed(&inputs, job.batch, &mut tick)?
    };
    phases.finish();
    let shape: Vec<usize> = if job.all_states {
        vec![z.n, z.layers, z.d]
    } else {
        vec![z.n, z.d]
    };
    let values: Vec<f32> = z.data.iter().map(|&x| x as f32).collect();
    if job.all_states {
        if job
            .out
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("tsv"))
        {
            bail!(
                "--out {}: a .tsv holds [N, D] vectors; features are [N, L, D]: write .npy",
                job.out.display()
            );
        }
        features::write_npy(job.out, &shape, &values)?;
    } else {
        crate::output::write_embeddings(job.out, z.d, &values, &labels)?;
    }
    let what = if model.is_text() { "texts" } else { "images" };
    println!(
        "{}: {} {what} -> {} {:?}",
        model.describe(),
        labels.len(),
        job.out.display(),
        shape
    );
    Ok(())
}

/// Runs `job` on the backend named by `device` (its inference backend).
pub fn run(job: &Job, device: &str) -> Result<()> {
    struct Work<'a>(&'a Job<'a>);
    impl OnTrainBackend for Work<'_> {
        type Out = ();
        fn run<B: AutodiffBackend>(self, devices: Devices<B>) -> Result<()> {
            run_on::<B::InnerBackend>(self.0, devices.main())
        }
    }
    on_train_backend(device, Work(job))
}

/// Every hidden state of a pretrained encoder, pooled: `[N, L + 1, H]` (the input of the
/// layer search in `metrics`).
#[derive(clap::Args, Debug)]
pub struct FeaturesArgs {
    /// A Hugging Face checkpoint folder (config.json, model.safetensors, tokenizer.json or
    /// preprocessor_config.json).
    #[arg(long)]
    pub hf: PathBuf,
    /// Texts: one per line (.txt), or a corpus (.jsonl: the first text of each group).
    #[arg(long, conflicts_with = "images", required_unless_present = "images")]
    pub texts: Option<PathBuf>,
    /// Images: a PNG/JPEG file, a folder of them (sorted by name), or a .txt list of paths.
    #[arg(long)]
    pub images: Option<PathBuf>,
    /// Output .npy (float32 [N, L + 1, H]).
    #[arg(long)]
    pub out: PathBuf,
    /// Pooling: mean or cls (default: the folder's sentence-transformers pooling, else mean
    /// for text; cls for images).
    #[arg(long)]
    pub pool: Option<String>,
    /// Inputs per forward pass.
    #[arg(long, default_value_t = 32)]
    pub batch: usize,
    /// Backend: cpu, wgpu or cuda.
    #[arg(long, default_value = "cpu")]
    pub device: String,
}

/// `prh-native features`.
pub fn features(args: FeaturesArgs) -> Result<()> {
    let job = Job {
        hf: &args.hf,
        sources: Sources {
            texts: args.texts.as_deref(),
            images: args.images.as_deref(),
        },
        out: &args.out,
        pool: args.pool.as_deref(),
        batch: args.batch,
        all_states: true,
    };
    run(&job, &args.device)
}
