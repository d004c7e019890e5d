//! `prh-native align A B`: fit the theorem's rotation f*_A = Q f*_B (paper §2) on pairs by
//! orthogonal Procrustes and rank held-out pairs through it (paper §5-6, Flickr R@1).
//!
//! ```text
//! # inputs: as in `prh-native metrics` (b = a rotated, plus noise)
//! $ prh-native align a.npy b.npy --fit 400
//! Procrustes Q [64 x 64] fit on 400 pairs (relative residual 0.4423); 100 held-out pairs
//!               R@1      R@5     R@10  mean rank
//! A -> B     1.0000   1.0000   1.0000       1.00
//! B -> A     1.0000   1.0000   1.0000       1.00
//! chance     0.0100   0.0500   0.1000      50.50
//! ```

use super::inputs::{Inputs, LayerChoice};
use anyhow::{Context, Result, bail};
use prh_core::formats::features::{self, Features};
use prh_core::linalg::to_row_major;
use prh_core::measure::preprocess::Preprocess;
use prh_core::measure::retrieval::{AlignReport, RetrievalScores, TIE_RULE, align_and_rank};
use std::path::PathBuf;

/// Arguments of `prh-native align`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The two embedding files (A, B, --array-a, --array-b).
    #[command(flatten)]
    pub inputs: Inputs,
    /// Fit on the first N pairs of A and B and rank the remaining ones.
    #[arg(long, conflicts_with_all = ["fit_a", "fit_b"])]
    pub fit: Option<usize>,
    /// Fit on these A embeddings (with --fit-b) and rank all of A and B.
    #[arg(long, requires = "fit_b")]
    pub fit_a: Option<PathBuf>,
    /// Fit on these B embeddings, paired row by row with --fit-a.
    #[arg(long, requires = "fit_a")]
    pub fit_b: Option<PathBuf>,
    /// Which layer of [N, L, D] inputs (--layer-a, --layer-b).
    #[command(flatten)]
    pub layers: LayerChoice,
    /// Skip the row L2 normalisation.
    #[arg(long)]
    pub no_normalize: bool,
    /// Save the fitted map Q [D_A, D_B] (A Q ≈ B) as a float64 .npy file.
    #[arg(long)]
    pub save_rotation: Option<PathBuf>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs `prh-native align`.
pub fn run(args: Args) -> Result<()> {
    let (a, b) = args.inputs.load()?;
    let (fit_a, fit_b, test_a, test_b) = fit_and_test(&args, a, b)?;
    let pre = Preprocess {
        outlier_q: None,
        normalize: !args.no_normalize,
    };
    let l = &args.layers;
    let (xa, xb) = (l.a(&fit_a, &pre)?, l.b(&fit_b, &pre)?);
    let (ya, yb) = (l.a(&test_a, &pre)?, l.b(&test_b, &pre)?);
    let r = align_and_rank(xa.as_ref(), xb.as_ref(), ya.as_ref(), yb.as_ref())
        .context("fitting and ranking")?;
    if let Some(path) = &args.save_rotation {
        let q = to_row_major(r.fit.q.as_ref());
        features::write_npy(path, &[r.fit.q.nrows(), r.fit.q.ncols()], &q)
            .with_context(|| format!("saving the rotation to {}", path.display()))?;
    }
    if args.json {
        let out = serde_json::json!({
            "n_fit": r.n_fit,
            "n_test": r.n_test,
            "relative_residual": r.fit.relative_residual,
            "a_to_b": r.a_to_b,
            "b_to_a": r.b_to_a,
            "chance": r.chance,
            "ties": TIE_RULE,
            "degeneracy_a": r.degeneracy_a,
            "degeneracy_b": r.degeneracy_b,
            "warnings": r.warnings,
        });
        println!("{out}");
        return Ok(());
    }
    print_table(&r);
    Ok(())
}

/// The fit pairs and the held-out pairs: the first `--fit N` rows and the rest, or the
/// `--fit-a`/`--fit-b` files and the inputs.
fn fit_and_test(
    args: &Args,
    a: Features,
    b: Features,
) -> Result<(Features, Features, Features, Features)> {
    Ok(match (args.fit, &args.fit_a, &args.fit_b) {
        (Some(n), None, None) => {
            if n == 0 || n >= a.n {
                bail!(
                    "--fit {n}: need 0 < N < {} (the rows after the first N are the held-out set)",
                    a.n
                );
            }
            let (fa, ta) = a.split_rows(n)?;
            let (fb, tb) = b.split_rows(n)?;
            (fa, fb, ta, tb)
        }
        (None, Some(pa), Some(pb)) => {
            let fa = args.inputs.load_a(pa)?;
            let fb = args.inputs.load_b(pb)?;
            features::check_same_n(&fa, &fb)
                .context("--fit-a and --fit-b must hold the same pairs")?;
            (fa, fb, a, b)
        }
        _ => bail!("give either --fit N or both --fit-a FILE and --fit-b FILE"),
    })
}

/// The rotation's fit and the retrieval table, both directions beside chance.
fn print_table(r: &AlignReport) {
    println!(
        "Procrustes Q [{} x {}] fit on {} pairs (relative residual {:.4}); {} held-out pairs",
        r.fit.q.nrows(),
        r.fit.q.ncols(),
        r.n_fit,
        r.fit.relative_residual,
        r.n_test
    );
    println!(
        "{:<8} {:>8} {:>8} {:>8} {:>10}",
        "", "R@1", "R@5", "R@10", "mean rank"
    );
    let row = |name: &str, s: &RetrievalScores| {
        println!(
            "{name:<8} {:>8.4} {:>8.4} {:>8.4} {:>10.2}",
            s.r1, s.r5, s.r10, s.mean_rank
        );
    };
    row("A -> B", &r.a_to_b);
    row("B -> A", &r.b_to_a);
    row("chance", &r.chance);
    if r.a_to_b.tied_queries > 0.0 || r.b_to_a.tied_queries > 0.0 {
        println!("tied queries: {TIE_RULE}");
    }
    for w in &r.warnings {
        println!("warning: {w}");
    }
}
