//! The two embedding files every comparison command reads (`metrics`, `align`, `match`;
//! paper §5): their positional paths, `--array-a/-b` and, for the commands that use one
//! layer, `--layer-a/-b`, declared once and flattened into each command's arguments.
//!
//! ```text
//! $ prh-native metrics a.npz b.npy --array-a image
//! $ prh-native align a.npy b.npy --fit 400 --layer-a 3
//! ```

use anyhow::{Context, Result};
use prh_core::formats::features::{self, Features};
use prh_core::linalg::Matrix;
use prh_core::measure::preprocess::Preprocess;
use std::path::{Path, PathBuf};

/// Two embedding files whose row i describes the same sample.
#[derive(clap::Args, Debug)]
pub struct Inputs {
    /// Embeddings of modality A: .npy, .npz, .safetensors, shape [N, D] or [N, L, D], or the
    /// Embedding Projector's vectors.tsv.
    pub a: PathBuf,
    /// Embeddings of modality B (row i describes the same sample as row i of A).
    pub b: PathBuf,
    /// Array to read from A-side files when they hold several (.npz / .safetensors).
    #[arg(long)]
    pub array_a: Option<String>,
    /// Array to read from B-side files when they hold several.
    #[arg(long)]
    pub array_b: Option<String>,
}

impl Inputs {
    /// Loads A and B and checks that they describe the same N samples.
    pub fn load(&self) -> Result<(Features, Features)> {
        let fa = self.load_a(&self.a)?;
        let fb = self.load_b(&self.b)?;
        features::check_same_n(&fa, &fb)
            .context("the two embedding files must have one row per shared sample")?;
        Ok((fa, fb))
    }

    /// Loads another A-side file (e.g. `align --fit-a`) with A's `--array-a`.
    pub fn load_a(&self, path: &Path) -> Result<Features> {
        load(path, self.array_a.as_deref())
    }

    /// Loads another B-side file with B's `--array-b`.
    pub fn load_b(&self, path: &Path) -> Result<Features> {
        load(path, self.array_b.as_deref())
    }
}

/// Which layer of `[N, L, D]` inputs a one-layer command uses.
#[derive(clap::Args, Debug)]
pub struct LayerChoice {
    /// Layer of A to use for [N, L, D] inputs (default: the last).
    #[arg(long)]
    pub layer_a: Option<usize>,
    /// Layer of B to use (default: the last).
    #[arg(long)]
    pub layer_b: Option<usize>,
}

impl LayerChoice {
    /// A-side features as a preprocessed `[N, D]` matrix of the chosen layer.
    pub fn a(&self, f: &Features, pre: &Preprocess) -> Result<Matrix> {
        layer(f, self.layer_a, pre)
    }

    /// B-side features as a preprocessed `[N, D]` matrix of the chosen layer.
    pub fn b(&self, f: &Features, pre: &Preprocess) -> Result<Matrix> {
        layer(f, self.layer_b, pre)
    }
}

/// Loads one embedding file with a message naming it on failure.
pub fn load(path: &Path, array: Option<&str>) -> Result<Features> {
    features::load(path, array).with_context(|| format!("reading embeddings {}", path.display()))
}

/// Layer `which` (default: the last) of `f`, preprocessed, as `[N, D]`.
fn layer(f: &Features, which: Option<usize>, pre: &Preprocess) -> Result<Matrix> {
    let l = which.unwrap_or(f.layers.saturating_sub(1));
    pre.layer_matrix(f, l)
        .with_context(|| format!("{}: choosing layer {l} of {}", f.source, f.layers))
}
