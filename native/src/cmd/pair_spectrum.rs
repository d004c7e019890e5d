//! `prh-native pair-spectrum`: the spectrum an encoder reaches on positive pairs (paper
//! §2-3; `prh_core::measure::view_spectrum`), from two embedding files whose row i are the
//! two views of pair i (caption 1 and caption 2 of one image, two crops of one photo).
//!
//! ```text
//! $ prh-native pair-spectrum caption1.npy caption2.npy --top 8
//! spectrum reached on 1014 positive pairs (D = 64): 0.912 0.871 0.860 ...
//! ```
//! Each value is the largest pair correlation E[g(x) g(x+)] of a unit-variance direction g
//! of the embedding orthogonal to the ones before: the eigenvalues of the positive-pair
//! kernel K restricted to what the encoder holds (never above K's own, equal where the
//! encoder holds K's eigen-directions). Invariant to any invertible linear map.

use super::inputs::{Inputs, LayerChoice};
use anyhow::{Context, Result};
use prh_core::measure::preprocess::Preprocess;
use prh_core::measure::view_spectrum::view_spectrum;

/// The reached spectrum of two embedding files of positive pairs.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The two views: row i of A and row i of B are the views of positive pair i.
    #[command(flatten)]
    pub inputs: Inputs,
    #[command(flatten)]
    pub layers: LayerChoice,
    /// Values printed (all when 0).
    #[arg(long, default_value_t = 0)]
    pub top: usize,
    /// Print JSON (key `spectrum`) instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let (fa, fb) = args.inputs.load()?;
    // Raw features: the spectrum is invariant to linear maps, and a row normalisation
    // (not linear) would change the encoder being measured.
    let raw = Preprocess {
        outlier_q: None,
        normalize: false,
    };
    let (a, b) = (args.layers.a(&fa, &raw)?, args.layers.b(&fb, &raw)?);
    let mut rho = view_spectrum(a.as_ref(), b.as_ref()).with_context(|| {
        format!(
            "{} and {}",
            args.inputs.a.display(),
            args.inputs.b.display()
        )
    })?;
    let held = rho.len();
    if args.top > 0 {
        rho.truncate(args.top);
    }
    let (n, d) = (a.nrows(), a.ncols());
    if args.json {
        let out = serde_json::json!({
            "spectrum": rho, "pairs": n, "d": d, "directions_with_variance": held,
        });
        println!("{out}");
    } else {
        let vals: Vec<String> = rho.iter().map(|x| format!("{x:.3}")).collect();
        println!(
            "spectrum reached on {n} positive pairs (D = {d}, {held} directions with variance): {}",
            vals.join(" ")
        );
    }
    Ok(())
}
