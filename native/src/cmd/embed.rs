//! `prh-native embed`: embed any texts with a trained run's checkpoint.
//!
//! ```text
//! $ prh-native embed --run runs/good-en --texts captions.txt --out emb.npy
//! embedded 1014 texts -> emb.npy [1014, 384]
//! ```
//! The embedding is the pooled last hidden state before any projector (mean-pooled for
//! the next-token baseline), the representation compared across modalities (paper §5).

use anyhow::{Context, Result, bail};
use prh_core::backend::burn::prelude::Backend;
use prh_core::backend::burn::tensor::backend::AutodiffBackend;
use prh_core::tasks::text::embed_texts;
use prh_core::text::corpus;
use std::path::{Path, PathBuf};

use crate::backend::{Devices, OnTrainBackend, on_train_backend};
use crate::run_folder::{load_text, load_text_model};

/// Embed texts with a trained run's checkpoint, or texts / images with a pretrained
/// Hugging Face checkpoint folder (`--hf`), into an .npy file [N, D].
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Run folder written by `prh-native train`.
    #[arg(long, required_unless_present = "hf", conflicts_with = "hf")]
    pub run: Option<PathBuf>,
    /// A Hugging Face checkpoint folder as published: config.json + model.safetensors, and
    /// tokenizer.json (BERT family, sentence-transformers layouts) or
    /// preprocessor_config.json (ViT, DINOv2).
    #[arg(long)]
    pub hf: Option<PathBuf>,
    /// Texts: one per line (.txt), or a corpus (.jsonl: the first text of each group).
    #[arg(long, conflicts_with = "images", required_unless_present = "images")]
    pub texts: Option<PathBuf>,
    /// Images (with --hf): a PNG/JPEG file, a folder of them (sorted by name), or a .txt
    /// list of paths relative to the list.
    #[arg(long, requires = "hf")]
    pub images: Option<PathBuf>,
    /// Output .npy (float32 [N, D]); a name ending in .tsv writes the Embedding
    /// Projector's pair instead: the vectors there and the texts in metadata.tsv beside it
    /// (`<stem>.metadata.tsv` unless the file is named vectors.tsv).
    #[arg(long)]
    pub out: PathBuf,
    /// Which checkpoint of a run: best (falls back to latest) or latest.
    #[arg(long, default_value = "best")]
    pub checkpoint: String,
    /// Pooling of a pretrained encoder (--hf): mean or cls (default: the folder's
    /// sentence-transformers pooling, else mean for text; cls for images).
    #[arg(long, requires = "hf")]
    pub pool: Option<String>,
    /// Inputs per forward pass.
    #[arg(long, default_value_t = 256)]
    pub batch: usize,
    /// Backend: cpu, wgpu or cuda.
    #[arg(long, default_value = "cpu")]
    pub device: String,
}

pub(crate) fn read_texts(path: &Path) -> Result<Vec<String>> {
    if path.extension().is_some_and(|e| e == "jsonl") {
        let c = corpus::read_jsonl(path)?;
        return Ok(c.groups.into_iter().map(|g| g.texts[0].clone()).collect());
    }
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let lines: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    if lines.is_empty() {
        bail!("{}: no texts (expected one text per line)", path.display());
    }
    Ok(lines)
}

fn embed_on<B: Backend>(args: &Args, device: B::Device) -> Result<()> {
    if !matches!(args.checkpoint.as_str(), "best" | "latest") {
        bail!(
            "--checkpoint: expected best or latest, got `{}`",
            args.checkpoint
        );
    }
    let (Some(run), Some(texts)) = (&args.run, &args.texts) else {
        bail!("embed: expected --run with --texts, or --hf");
    };
    let (spec, tok, ck) = load_text(run, &args.checkpoint)?;
    let model = load_text_model::<B>(&spec, &ck, &device)?;
    let texts = read_texts(texts)?;
    let z = embed_texts(&model, &spec, &tok, &texts, args.batch, &device)?;
    crate::output::write_embeddings(&args.out, spec.d_model, &z, &texts)?;
    println!(
        "embedded {} texts -> {} [{}, {}] (checkpoint step {})",
        texts.len(),
        args.out.display(),
        texts.len(),
        spec.d_model,
        ck.meta.step
    );
    Ok(())
}

pub fn run(args: Args) -> Result<()> {
    if let Some(hf) = &args.hf {
        let job = super::pretrained::Job {
            hf,
            sources: super::pretrained::Sources {
                texts: args.texts.as_deref(),
                images: args.images.as_deref(),
            },
            out: &args.out,
            pool: args.pool.as_deref(),
            batch: args.batch,
            all_states: false,
        };
        return super::pretrained::run(&job, &args.device);
    }
    struct Embed<'a>(&'a Args);
    impl OnTrainBackend for Embed<'_> {
        type Out = ();
        fn run<B: AutodiffBackend>(self, devices: Devices<B>) -> Result<()> {
            // Inference only: the training backend's inner (non-autodiff) backend.
            embed_on::<B::InnerBackend>(self.0, devices.main())
        }
    }
    on_train_backend(&args.device, Embed(&args))
}
