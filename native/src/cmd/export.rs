//! `prh-native export`: write a run's encoder as the versioned bundle the web app loads
//! (one `.safetensors` file: weights + spec + tokenizer + config; see `prh_core::tasks::bundle`).
//!
//! ```text
//! $ prh-native export --run runs/good-en
//! wrote runs/good-en/export/model.prh.safetensors (1.4 MB, format prh-text-encoder v1, step 2000)
//! ```

use anyhow::Result;
#[cfg(feature = "cpu")]
use anyhow::{Context, bail};
#[cfg(feature = "cpu")]
use prh_core::tasks::bundle::{BUNDLE_FORMAT, BUNDLE_VERSION, read_bundle, write_bundle};
#[cfg(feature = "cpu")]
use prh_core::train::checkpoint::write_atomic;
use std::path::PathBuf;

#[cfg(feature = "cpu")]
use crate::run_folder::{load_text, load_text_model};

/// Export a trained encoder as a web-loadable bundle.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Run folder written by `prh-native train`.
    #[arg(long)]
    pub run: PathBuf,
    /// Output file (default RUN/export/model.prh.safetensors).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Which checkpoint: best (falls back to latest) or latest.
    #[arg(long, default_value = "best")]
    pub checkpoint: String,
}

#[cfg(feature = "cpu")]
pub fn run(args: Args) -> Result<()> {
    type B = prh_core::backend::Cpu;
    if !matches!(args.checkpoint.as_str(), "best" | "latest") {
        bail!(
            "--checkpoint: expected best or latest, got `{}`",
            args.checkpoint
        );
    }
    let device = Default::default();
    let (spec, tok, ck) = load_text(&args.run, &args.checkpoint)?;
    let model = load_text_model::<B>(&spec, &ck, &device)?;
    let bytes = write_bundle(&model, &spec, &tok, &ck.meta.config)?;
    // Check the bundle loads back before calling it done.
    read_bundle::<B>("exported bundle", &bytes, &device)
        .context("the written bundle does not load back")?;
    let out = args
        .out
        .unwrap_or_else(|| args.run.join("export").join("model.prh.safetensors"));
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    write_atomic(&out, &bytes)?;
    println!(
        "wrote {} ({:.1} MB, format {BUNDLE_FORMAT} v{BUNDLE_VERSION}, step {})",
        out.display(),
        bytes.len() as f64 / 1e6,
        ck.meta.step
    );
    Ok(())
}

#[cfg(not(feature = "cpu"))]
pub fn run(_args: Args) -> Result<()> {
    Err(crate::backend::not_compiled("cpu"))
}
