//! `prh-native metrics A B`: every PRH alignment metric between two embedding files
//! (paper §5: mutual 10-NN, CKA), each with its permutation null (docs/measurement.md).
//!
//! ```text
//! # inputs: python3 -c "import numpy as np; r = np.random.default_rng(0);
//! #   a = r.standard_normal((500, 64)); q, _ = np.linalg.qr(r.standard_normal((64, 64)));
//! #   np.save('a.npy', a); np.save('b.npy', a @ q + 0.5 * r.standard_normal((500, 64)))"
//! $ prh-native metrics a.npy b.npy
//! a.npy [500 x 1 x 64]  vs  b.npy [500 x 1 x 64]
//! N = 500, k = 10, clamp A = Some(1.9525153767667187), clamp B = Some(2.1887961284529585)
//! metric                  score  null mean  null std        p calibrated
//! mutual_knn           0.382400   0.020326  0.002359   0.0099     0.3696
//! cycle_knn            0.990000   0.185340  0.019296   0.0099     0.9877
//! lcs_knn              2.440000   0.195160  0.021949   0.0099     0.2290
//! cka                  0.805661   0.113732  0.002999   0.0099     0.7807
//! cka_rbf              0.838639   0.268501  0.002472   0.0099     0.7794
//! unbiased_cka         0.780660  -0.000057  0.003384   0.0099     0.7807
//! cknna                0.407635   0.016854  0.002532   0.0099     0.3975
//! svcca                0.704745   0.119665  0.008299   0.0099     0.6646
//! edit_distance_knn    0.068600   0.001980  0.000667   0.0099     0.0668
//! null: 100 shuffles of B's rows (seed 0); p = (1 + #{null >= score}) / (1 + shuffles); calibrated = (score - null mean) / (perfect - null mean)
//! mutual_knn null over 100 shuffles: 0.020326 ± 0.002359 (chance k/(N-1) = 0.020040); z = 153.5
//! ```

use super::inputs::Inputs;
use crate::backend::{Devices, OnTrainBackend, on_train_backend};
use crate::progress::Phases;
use anyhow::{Context, Result, bail};
use prh_core::backend::burn::tensor::backend::AutodiffBackend;
use prh_core::experiments::report::{ScalingSeries, svg_log_x};
use prh_core::formats::features::Features;
use prh_core::measure::gallery::{GalleryPoint, gallery_curve};
use prh_core::measure::metrics::{
    AlignmentReport, MetricOptions, measure_reporting, measure_with_pass,
};
use prh_core::measure::preprocess::Preprocess;
use prh_core::progress::OnTick;
use prh_core::tasks::gram_device::device_pass;
use std::path::{Path, PathBuf};

/// Arguments of `prh-native metrics`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The two embedding files (A, B, --array-a, --array-b).
    #[command(flatten)]
    pub inputs: Inputs,
    /// Neighbours per sample (PRH: 10).
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    /// Outlier clamp quantile of |x| over the whole array (PRH: 0.95; 1 disables).
    #[arg(long, default_value_t = 0.95)]
    pub outlier_q: f64,
    /// Skip the outlier clamp.
    #[arg(long)]
    pub no_clamp: bool,
    /// Skip the row L2 normalisation.
    #[arg(long)]
    pub no_normalize: bool,
    /// RBF bandwidth for `cka_rbf` (PRH: 1.0 on unit rows).
    #[arg(long, default_value_t = 1.0)]
    pub rbf_sigma: f64,
    /// CKNNA with biased HSIC and self-neighbours allowed (PRH default is unbiased).
    #[arg(long)]
    pub biased_cknna: bool,
    /// Shuffles for the permutation null of every metric (0 skips it); with layer search,
    /// each shuffle's score is the max over all layer pairs.
    #[arg(long, visible_alias = "null-shuffles", default_value_t = 100)]
    pub null: usize,
    /// SVD directions per side for SVCCA (PRH: 10).
    #[arg(long, default_value_t = 10)]
    pub cca_dim: usize,
    /// Seed of the shuffles.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Instead of the full report: mutual k-NN (with its null) on nested random subsets of
    /// these sizes (comma separated, each at most N), the gallery curve.
    #[arg(long, value_delimiter = ',')]
    pub gallery_curve: Option<Vec<usize>>,
    /// Also draw the gallery curve as an SVG plot to this file.
    #[arg(long, requires = "gallery_curve")]
    pub curve_svg: Option<PathBuf>,
    /// Run the kernel pass (Gram row blocks, neighbour lists, kernel sums) on a burn
    /// backend instead of the host's cores: `cuda`, `wgpu`, or `cpu` (burn's CPU backend).
    /// The device works in f32 (docs/measurement.md, "On a GPU").
    #[arg(long, conflicts_with = "gallery_curve")]
    pub device: Option<String>,
    /// Device memory the pass's row blocks may hold, in MiB (4 `[B, N]` f32 buffers per
    /// layer).
    #[arg(long, default_value_t = 4096, requires = "device")]
    pub device_mib: usize,
}

/// The measurement with its kernel pass on the backend `--device` names.
struct OnDevice<'a> {
    a: &'a Features,
    b: &'a Features,
    opts: &'a MetricOptions,
    budget: usize,
    phases: &'a mut Phases,
}

impl OnTrainBackend for OnDevice<'_> {
    type Out = prh_core::Result<AlignmentReport>;

    fn run<B: AutodiffBackend>(self, devices: Devices<B>) -> Result<Self::Out> {
        let device = devices.main();
        let budget = self.budget;
        let pass = |xa: &[_], xb: &[_], o: &_, t: OnTick<'_>| {
            device_pass::<B::InnerBackend>(&device, xa, xb, o, budget, t)
        };
        let phases = self.phases;
        Ok(measure_with_pass(
            self.a,
            self.b,
            self.opts,
            &pass,
            &mut |t| phases.tick(t),
        ))
    }
}

/// Runs `prh-native metrics`.
pub fn run(args: Args) -> Result<()> {
    let (a, b) = args.inputs.load()?;
    if !(args.outlier_q > 0.0 && args.outlier_q <= 1.0) {
        bail!("--outlier-q {} must lie in (0, 1]", args.outlier_q);
    }
    let opts = options(&args);
    if let Some(sizes) = &args.gallery_curve {
        return curve(&args, &a, &b, sizes, &opts);
    }
    let mut phases = Phases::new("metrics");
    let r = match &args.device {
        None => measure_reporting(&a, &b, &opts, &mut |t| phases.tick(t)),
        Some(device) => on_train_backend(
            device,
            OnDevice {
                a: &a,
                b: &b,
                opts: &opts,
                budget: args.device_mib << 20,
                phases: &mut phases,
            },
        )?,
    };
    phases.finish();
    let r = r.with_context(|| {
        format!(
            "measuring {} against {}",
            args.inputs.a.display(),
            args.inputs.b.display()
        )
    })?;
    if args.json {
        println!("{}", serde_json::to_string(&r)?);
        return Ok(());
    }
    println!(
        "{} [{} x {} x {}]  vs  {} [{} x {} x {}]",
        a.source, a.n, a.layers, a.d, b.source, b.n, b.layers, b.d
    );
    println!(
        "N = {}, k = {}, clamp A = {:?}, clamp B = {:?}",
        r.n, r.k, r.clamp_a, r.clamp_b
    );
    score_table(&r);
    notes(&args, &r);
    Ok(())
}

/// The metric options the flags ask for.
fn options(args: &Args) -> MetricOptions {
    MetricOptions {
        k: args.k,
        rbf_sigma: args.rbf_sigma,
        null_shuffles: args.null,
        seed: args.seed,
        cca_dim: args.cca_dim,
        cknna_unbiased: !args.biased_cknna,
        preprocess: Preprocess {
            outlier_q: if args.no_clamp {
                None
            } else {
                Some(args.outlier_q)
            },
            normalize: !args.no_normalize,
        },
        ..MetricOptions::default()
    }
}

/// One row per metric: score, its null (mean, std, p, calibrated) and best layers.
fn score_table(r: &AlignmentReport) {
    let multi = r.layers_a > 1 || r.layers_b > 1;
    let s = &r.scores;
    let l = &r.best_layers;
    let nl = r.null.as_ref();
    let rows = [
        (
            "mutual_knn",
            s.mutual_knn,
            l.mutual_knn,
            nl.map(|n| n.mutual_knn),
        ),
        (
            "cycle_knn",
            s.cycle_knn,
            l.cycle_knn,
            nl.map(|n| n.cycle_knn),
        ),
        ("lcs_knn", s.lcs_knn, l.lcs_knn, nl.map(|n| n.lcs_knn)),
        ("cka", s.cka, l.cka, nl.and_then(|n| n.cka)),
        ("cka_rbf", s.cka_rbf, l.cka_rbf, nl.and_then(|n| n.cka_rbf)),
        (
            "unbiased_cka",
            s.unbiased_cka,
            l.unbiased_cka,
            nl.and_then(|n| n.unbiased_cka),
        ),
        ("cknna", s.cknna, l.cknna, nl.map(|n| n.cknna)),
        ("svcca", s.svcca, l.svcca, nl.map(|n| n.svcca)),
        (
            "edit_distance_knn",
            s.edit_distance_knn,
            l.edit_distance_knn,
            nl.map(|n| n.edit_distance_knn),
        ),
    ];
    let null_head = if nl.is_some() {
        format!(
            " {:>10} {:>9} {:>8} {:>10}",
            "null mean", "null std", "p", "calibrated"
        )
    } else {
        String::new()
    };
    println!(
        "{:<18} {:>10}{null_head}{}",
        "metric",
        "score",
        if multi { "   best layers (A, B)" } else { "" }
    );
    let opt = |v: Option<f64>, w: usize, p: usize| {
        v.map_or_else(|| format!("{:>w$}", "-"), |x| format!("{x:>w$.p$}"))
    };
    for (name, v, (i, j), null) in rows {
        let nul = match (nl, null) {
            (None, _) => String::new(),
            (Some(_), None) => format!(" {:>10} {:>9} {:>8} {:>10}", "-", "-", "-", "-"),
            (Some(_), Some(n)) => format!(
                " {:>10.6} {:>9.6} {:>8.4} {}",
                n.mean,
                n.std,
                n.p_value,
                opt(n.calibrated, 10, 4)
            ),
        };
        let at = if multi {
            format!("   ({i}, {j})")
        } else {
            String::new()
        };
        println!("{name:<18} {v:>10.6}{nul}{at}");
    }
}

/// The lines under the table: the null's definition, the mutual k-NN null against
/// chance, tied neighbour lists and warnings.
fn notes(args: &Args, r: &AlignmentReport) {
    let (s, nl) = (&r.scores, r.null.as_ref());
    if let Some(n) = nl {
        println!(
            "null: {} shuffles of B's rows (seed {}){}; p = (1 + #{{null >= score}}) / (1 + shuffles); \
             calibrated = (score - null mean) / (perfect - null mean)",
            n.shuffles,
            n.seed,
            if n.max_over_layer_pairs {
                ", each the max over all layer pairs"
            } else {
                ""
            }
        );
        if let Some(note) = &n.kernel_note {
            println!("{note}");
        }
    }
    if let (Some(m), Some(sd)) = (r.null_mutual_knn_mean, r.null_mutual_knn_std) {
        let z = if sd > 0.0 {
            (s.mutual_knn - m) / sd
        } else {
            f64::INFINITY
        };
        println!(
            "mutual_knn null over {} shuffles: {m:.6} ± {sd:.6} (chance k/(N-1) = {:.6}); z = {z:.1}",
            args.null,
            r.k as f64 / (r.n as f64 - 1.0)
        );
    }
    if r.tied_lists_a > 0.0 || r.tied_lists_b > 0.0 {
        println!(
            "neighbour lists tied at the k-th neighbour (broken by row index): A {:.1}%, B {:.1}%",
            100.0 * r.tied_lists_a,
            100.0 * r.tied_lists_b
        );
    }
    for w in &r.warnings {
        println!("warning: {w}");
    }
}

/// The gallery curve as an SVG (log x): mutual k-NN, the null's mean where computed, and
/// chance k / (n - 1).
fn write_curve_svg(path: &Path, points: &[GalleryPoint], k: usize) -> Result<()> {
    let raw: Vec<(f64, f64)> = points.iter().map(|p| (p.n as f64, p.mutual_knn)).collect();
    let null: Vec<(f64, f64)> = points
        .iter()
        .filter_map(|p| p.null.map(|s| (p.n as f64, s.mean)))
        .collect();
    let chance: Vec<(f64, f64)> = points.iter().map(|p| (p.n as f64, p.chance)).collect();
    let label = format!("mutual {}-NN", k);
    let mut series = vec![ScalingSeries {
        label: &label,
        points: &raw,
        law: None,
    }];
    if !null.is_empty() {
        series.push(ScalingSeries {
            label: "null mean",
            points: &null,
            law: None,
        });
    }
    series.push(ScalingSeries {
        label: "chance k/(n-1)",
        points: &chance,
        law: None,
    });
    let svg = svg_log_x(
        "mutual k-NN against gallery size",
        "samples in the gallery (log scale)",
        &label,
        &series,
    );
    std::fs::write(path, svg)
        .with_context(|| format!("writing the gallery curve to {}", path.display()))?;
    Ok(())
}

/// `--gallery-curve`: the table (or JSON) and the optional SVG.
fn curve(
    args: &Args,
    a: &Features,
    b: &Features,
    sizes: &[usize],
    opts: &MetricOptions,
) -> Result<()> {
    let mut phases = Phases::new("gallery");
    let points = gallery_curve(a, b, sizes, opts, &mut |t| phases.tick(t));
    phases.finish();
    let points = points.with_context(|| {
        format!(
            "--gallery-curve on {} and {}",
            args.inputs.a.display(),
            args.inputs.b.display()
        )
    })?;
    if let Some(path) = &args.curve_svg {
        write_curve_svg(path, &points, opts.k)?;
    }
    if args.json {
        println!(
            "{}",
            serde_json::json!({ "k": opts.k, "seed": opts.seed, "gallery_curve": points })
        );
        return Ok(());
    }
    println!(
        "{:>10} {:>10} {:>10} {:>10} {:>8} {:>10} {:>10}",
        "samples", "mutual_knn", "null mean", "null std", "p", "calibrated", "chance"
    );
    for p in &points {
        let nul = p.null.map_or_else(
            || format!("{:>10} {:>10} {:>8} {:>10}", "-", "-", "-", "-"),
            |s| {
                format!(
                    "{:>10.6} {:>10.6} {:>8.4} {:>10}",
                    s.mean,
                    s.std,
                    s.p_value,
                    s.calibrated.map_or("-".into(), |c| format!("{c:.4}"))
                )
            },
        );
        println!(
            "{:>10} {:>10.6} {nul} {:>10.6}",
            p.n, p.mutual_knn, p.chance
        );
    }
    Ok(())
}
