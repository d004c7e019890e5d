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
    /// Also write the run's held-out embeddings (RUN/embeddings.npy, labelled by
    /// RUN/embeddings_ids.txt) as the TensorFlow Embedding Projector's pair: vectors in this
    /// .tsv file, labels in the metadata .tsv beside it.
    #[arg(long)]
    pub tsv: Option<PathBuf>,
}

/// `--tsv`: the run's `embeddings.npy` and `embeddings_ids.txt` as the Projector's pair.
#[cfg(feature = "cpu")]
fn export_tsv(run: &std::path::Path, out: &std::path::Path) -> Result<()> {
    use anyhow::{Context, bail};
    let z = prh_core::formats::features::load(&run.join("embeddings.npy"), None)?;
    if z.layers != 1 {
        bail!(
            "{}: [N, L, D] with L = {}: expected [N, D]",
            z.source,
            z.layers
        );
    }
    let ids_path = run.join("embeddings_ids.txt");
    let ids = std::fs::read_to_string(&ids_path)
        .with_context(|| format!("reading {}", ids_path.display()))?;
    let labels: Vec<String> = ids.lines().map(String::from).collect();
    if labels.len() != z.n {
        bail!(
            "{}: {} labels for {} rows of embeddings.npy: expected one id per row",
            ids_path.display(),
            labels.len(),
            z.n
        );
    }
    let values: Vec<f32> = z.data.iter().map(|&x| x as f32).collect();
    crate::output::write_embeddings(out, z.d, &values, &labels)?;
    println!("wrote {} [{}, {}]", out.display(), z.n, z.d);
    Ok(())
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
    if let Some(tsv) = &args.tsv {
        if !tsv
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("tsv"))
        {
            bail!(
                "--tsv {}: expected a file name ending in .tsv",
                tsv.display()
            );
        }
        export_tsv(&args.run, tsv)?;
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
