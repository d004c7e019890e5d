//! `prh-native sigreg`: LeJEPA's SIGReg statistic of any embedding file, to diagnose
//! collapse outside training (paper section 4).
//!
//! ```text
//! $ prh-native sigreg runs/good-en/embeddings.npy --slices 256 --seed 0
//! SIGReg 0.9731 over 256 slices (N = 1014, D = 64, t_max = 3, knots = 17); per slice min 0.31, max 2.41
//! $ prh-native sigreg emb.npy --directions dirs.npy --json
//! {"sigreg": 0.97, ...}
//! ```
//! Near `E[T] ~ 1` for Gaussian embeddings; of order `N` for collapsed ones.

use anyhow::{Context, Result, bail};
use prh_core::formats::features;
use prh_core::train::sigreg::{Quadrature, random_directions, slice_statistics};
use std::path::PathBuf;

/// SIGReg (Epps–Pulley over random slices) of an embedding file.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Embeddings: .npy / .npz, [N, D] (or [N, L, D] with --layer).
    pub embeddings: PathBuf,
    /// Directions file [M, D] (rows normalised to unit length); default: random.
    #[arg(long, conflicts_with_all = ["slices", "seed"])]
    pub directions: Option<PathBuf>,
    /// Number of random slices.
    #[arg(long, default_value_t = 256)]
    pub slices: usize,
    /// Seed of the random slices.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Largest knot t_max of the quadrature on [0, t_max].
    #[arg(long, default_value_t = 3.0)]
    pub t_max: f64,
    /// Number of knots.
    #[arg(long, default_value_t = 17)]
    pub knots: usize,
    /// Layer of an [N, L, D] file.
    #[arg(long, default_value_t = 0)]
    pub layer: usize,
    /// Print JSON (key `sigreg`) instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let f = features::load(&args.embeddings, None)
        .with_context(|| format!("reading embeddings {}", args.embeddings.display()))?;
    if args.layer >= f.layers {
        bail!(
            "--layer {}: {} has {} layer(s)",
            args.layer,
            args.embeddings.display(),
            f.layers
        );
    }
    let z = f.layer(args.layer)?;
    let (n, d) = (f.n, f.d);
    let dirs = match &args.directions {
        Some(p) => {
            let g = features::load(p, None)
                .with_context(|| format!("reading directions {}", p.display()))?;
            if g.d != d || g.layers != 1 {
                bail!(
                    "{}: directions must be [M, {d}] to match the embeddings, got [{}, {}, {}]",
                    p.display(),
                    g.n,
                    g.layers,
                    g.d
                );
            }
            let mut rows = g.data;
            for (i, row) in rows.chunks_mut(d).enumerate() {
                let norm = row.iter().map(|v| v * v).sum::<f64>().sqrt();
                if norm == 0.0 {
                    bail!(
                        "{}: row {i} is the zero vector (expected a direction)",
                        p.display()
                    );
                }
                row.iter_mut().for_each(|v| *v /= norm);
            }
            rows
        }
        None => random_directions(d, args.slices, args.seed, 0),
    };
    let q = Quadrature::new(args.t_max, args.knots)?;
    let per = slice_statistics(&z, n, d, &dirs, &q)?;
    let m = per.len();
    let mean = per.iter().sum::<f64>() / m as f64;
    let (lo, hi) = per
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    if args.json {
        let out = serde_json::json!({
            "sigreg": mean, "n": n, "d": d, "slices": m, "t_max": args.t_max, "knots": args.knots,
            "slice_min": lo, "slice_max": hi,
            "directions": args.directions.as_ref().map(|p| p.display().to_string()),
            "seed": args.directions.is_none().then_some(args.seed),
        });
        println!("{out}");
    } else {
        println!(
            "SIGReg {mean:.6} over {m} slices (N = {n}, D = {d}, t_max = {}, knots = {}); per slice min {lo:.4}, max {hi:.4}",
            args.t_max, args.knots
        );
    }
    Ok(())
}
