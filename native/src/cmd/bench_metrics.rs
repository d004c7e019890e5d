//! `prh-native bench metrics`: the full PRH metric run at N = 1024 (the size of the PRH
//! benchmark's WIT-1024 set) for D = 768 and D = 4096, and Procrustes at N = 30,000 (the
//! paper's captioning map is fit on 30k Flickr pairs), each beside numpy doing the same
//! computation on the same arrays in the same run (`benches/metrics_numpy.py`).
//!
//! ```text
//! $ cargo run --release -p prh-native -- bench metrics --repeats 3
//! ```

use crate::progress::{Progress, note};
use anyhow::{Context, Result, bail};
use prh_core::formats::features::{Features, write_npy};
use prh_core::linalg::procrustes;
use prh_core::measure::metrics::{MetricOptions, measure};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Options of `bench metrics`.
#[derive(clap::Args, Debug)]
pub struct MetricsBenchArgs {
    /// Samples N of the metric runs.
    #[arg(long, default_value_t = 1024)]
    pub n: usize,
    /// Feature widths D of the metric runs, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "768,4096")]
    pub dims: Vec<usize>,
    /// Large-N rows, comma separated (e.g. `10000,100000`): prh's whole metric pass (no
    /// null) against numpy's blocked exact 10-NN search and the time of numpy's Gram
    /// products alone, the GEMM bound of any exact k-NN. One timed run each (minutes at
    /// N = 10^5), no warm-up. Empty: none.
    #[arg(long, value_delimiter = ',')]
    pub knn_n: Vec<usize>,
    /// Feature width of the large-N rows.
    #[arg(long, default_value_t = 768)]
    pub knn_d: usize,
    /// Pairs of the Procrustes fit (0 skips it).
    #[arg(long, default_value_t = 30_000)]
    pub procrustes_n: usize,
    /// Width of the Procrustes fit.
    #[arg(long, default_value_t = 768)]
    pub procrustes_d: usize,
    /// Timed runs per case (the median is reported), after one warm-up run.
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// Python interpreter with numpy.
    #[arg(long, default_value = "python3")]
    pub python: String,
    /// The numpy reference script.
    #[arg(long, default_value = "benches/metrics_numpy.py")]
    pub script: PathBuf,
    /// Threads on both sides: prh-core's faer kernels (`prh_core::linalg::set_threads`) and
    /// numpy's BLAS, so the comparison is like with like.
    #[arg(long = "threads", alias = "numpy-threads", default_value_t = 1)]
    pub numpy_threads: usize,
}

/// A deterministic test pair: A uniform in [-0.5, 0.5), B = a signed column permutation of
/// A (an orthogonal map) plus as much independent noise, so every metric is mid-range.
/// Values are rounded to f32, the precision of the files numpy reads.
fn pair(n: usize, d: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5) as f32
    };
    let a: Vec<f32> = (0..n * d).map(|_| next()).collect();
    let b: Vec<f32> = (0..n * d)
        .map(|t| {
            let (i, j) = (t / d, t % d);
            let src = a[i * d + (j * 7 + 3) % d];
            (if j % 2 == 0 { src } else { -src }) + next()
        })
        .collect();
    (a, b)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let m = xs.len() / 2;
    if xs.len() % 2 == 1 {
        xs[m]
    } else {
        0.5 * (xs[m - 1] + xs[m])
    }
}

fn time_it<T>(repeats: usize, mut f: impl FnMut() -> Result<T>) -> Result<(f64, T)> {
    let mut out = f()?; // warm-up, as on the numpy side
    let mut times = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let t0 = Instant::now();
        out = f()?;
        times.push(t0.elapsed().as_secs_f64());
    }
    Ok((median(times), out))
}

/// The numpy reference's JSON for `kind` on files `a`, `b`, timed over `repeats` runs.
fn numpy(
    args: &MetricsBenchArgs,
    kind: &str,
    repeats: usize,
    a: &Path,
    b: &Path,
) -> Result<serde_json::Value> {
    let out = super::bench::reference_command(&args.python, &args.script, args.numpy_threads)
        .args(["--repeats", &repeats.to_string(), kind])
        .arg(a)
        .arg(b)
        .output()
        .with_context(|| format!("running {} {}", args.python, args.script.display()))?;
    if !out.status.success() {
        bail!(
            "numpy reference failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    serde_json::from_slice(&out.stdout).context("parsing the numpy reference's JSON")
}

struct Row {
    case: String,
    /// The Gram products' flops (4 N^2 D for the two sides' X X^T), 0 where not counted.
    flops: f64,
    ours: f64,
    theirs: f64,
    /// numpy's Gram products alone (the large-N rows), for prh's time over the GEMM bound.
    gemm_s: Option<f64>,
    diff: f64,
}

/// Runs `prh-native bench metrics`.
pub fn run(args: MetricsBenchArgs) -> Result<()> {
    if args.repeats == 0 || args.numpy_threads == 0 {
        bail!("need --repeats >= 1 and --threads >= 1");
    }
    prh_core::linalg::set_threads(args.numpy_threads);
    if !args.script.is_file() {
        bail!(
            "{}: numpy reference script not found (run from the repository root or pass --script)",
            args.script.display()
        );
    }
    let dir = std::env::temp_dir().join(format!("prh-bench-metrics-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let result = cases(&args, &dir);
    std::fs::remove_dir_all(&dir).ok();
    let (rows, version) = result?;
    println!(
        "median of {} runs; prh-core ({} build, faer {} thread(s)) vs numpy {} ({} thread(s)); same f32 inputs, both in f64",
        args.repeats,
        if cfg!(debug_assertions) {
            "dev"
        } else {
            "release"
        },
        prh_core::linalg::threads(),
        version,
        args.numpy_threads
    );
    println!(
        "GFLOP/s: the Gram products' 4 N^2 D flops over the whole run's time (a lower bound on the rate; compare with `bench eigen`'s matmul peak)"
    );
    println!(
        "x GEMM: prh's time over numpy's Gram products alone (the large-N rows: the GEMM bound of any exact k-NN)"
    );
    println!(
        "{:<46} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>12}",
        "case",
        "prh (s)",
        "numpy (s)",
        "prh/numpy",
        "prh GF/s",
        "numpy GF/s",
        "x GEMM",
        "max |diff|"
    );
    for r in rows {
        let rate = |s: f64| {
            if r.flops > 0.0 {
                format!("{:.1}", r.flops / s / 1e9)
            } else {
                "-".to_string()
            }
        };
        println!(
            "{:<46} {:>10.3} {:>10.3} {:>10.2} {:>10} {:>10} {:>8} {:>12.2e}",
            r.case,
            r.ours,
            r.theirs,
            r.ours / r.theirs,
            rate(r.ours),
            rate(r.theirs),
            r.gemm_s
                .map_or("-".to_string(), |g| format!("{:.2}", r.ours / g)),
            r.diff
        );
    }
    Ok(())
}

/// The test pair `[n, d]` of `seed` written to `dir/a{tag}.npy` and `dir/b{tag}.npy` (for
/// numpy), and as prh features: (path A, path B, A, B).
fn pair_files(
    dir: &Path,
    tag: &str,
    n: usize,
    d: usize,
    seed: u64,
) -> Result<(PathBuf, PathBuf, Features, Features)> {
    let (a, b) = pair(n, d, seed);
    let (pa, pb) = (
        dir.join(format!("a{tag}.npy")),
        dir.join(format!("b{tag}.npy")),
    );
    write_npy(&pa, &[n, d], &a)?;
    write_npy(&pb, &[n, d], &b)?;
    let fa = Features::new("a", n, 1, d, a.iter().map(|&x| f64::from(x)).collect())?;
    let fb = Features::new("b", n, 1, d, b.iter().map(|&x| f64::from(x)).collect())?;
    Ok((pa, pb, fa, fb))
}

/// One large-N row: prh's whole metric pass (every metric, no null: the k-NN lists and
/// kernel sums in one blocked pass) against numpy's blocked exact 10-NN search.
fn large_row(args: &MetricsBenchArgs, dir: &Path, n: usize) -> Result<Row> {
    let d = args.knn_d;
    let (pa, pb, fa, fb) = pair_files(dir, &format!("k{n}"), n, d, 11)?;
    let opts = MetricOptions {
        null_shuffles: 0,
        ..MetricOptions::default()
    };
    let t0 = Instant::now();
    let report = measure(&fa, &fb, &opts)?;
    let t = t0.elapsed().as_secs_f64();
    drop((fa, fb));
    note(&format!("prh metrics N = {n} D = {d} (no null): {t:.1} s"));
    let np = numpy(args, "knn", 1, &pa, &pb)?;
    std::fs::remove_file(&pa).ok();
    std::fs::remove_file(&pb).ok();
    let theirs = np["values"]["mutual_knn"]
        .as_f64()
        .context("numpy: no mutual_knn")?;
    Ok(Row {
        case: format!("k-NN N={n} D={d} (prh: all metrics; numpy: 10-NN)"),
        flops: 4.0 * (n as f64).powi(2) * d as f64,
        ours: t,
        theirs: np["median_s"].as_f64().context("numpy: no median_s")?,
        gemm_s: np["values"]["gemm_s"].as_f64(),
        diff: (report.scores.mutual_knn - theirs).abs(),
    })
}

fn cases(args: &MetricsBenchArgs, dir: &Path) -> Result<(Vec<Row>, String)> {
    let mut rows = Vec::new();
    let mut version = String::from("?");
    let keys = [
        "mutual_knn",
        "cycle_knn",
        "lcs_knn",
        "cka",
        "cka_rbf",
        "unbiased_cka",
        "cknna",
    ];
    let cases = args.dims.len() + usize::from(args.procrustes_n > 0) + args.knn_n.len();
    let mut progress = Progress::new("bench metrics", cases, 0, 0);
    for &d in &args.dims {
        let (pa, pb, fa, fb) = pair_files(dir, &d.to_string(), args.n, d, d as u64)?;
        let opts = MetricOptions::default();
        let (t, report) = time_it(args.repeats, || Ok(measure(&fa, &fb, &opts)?))?;
        note(&format!("prh metrics N = {} D = {d}: {t:.3} s", args.n));
        let np = numpy(args, "metrics", args.repeats, &pa, &pb)?;
        version = format!(
            "{}, BLAS {}",
            np["numpy"].as_str().unwrap_or("?"),
            np["blas"].as_str().unwrap_or("?")
        );
        let ours = serde_json::to_value(&report)?;
        let diff = keys
            .iter()
            .map(|k| {
                (ours[k].as_f64().unwrap_or(f64::NAN)
                    - np["values"][k].as_f64().unwrap_or(f64::NAN))
                .abs()
            })
            .fold(0.0, f64::max);
        rows.push(Row {
            // prh also computes SVCCA, edit-distance k-NN and the null of all nine
            // metrics; the numpy side has the seven PRH metrics and the mutual k-NN null.
            case: format!("metrics N={} D={d} (all + null; prh: 9 nulls)", args.n),
            flops: 4.0 * (args.n as f64).powi(2) * d as f64,
            ours: t,
            theirs: np["median_s"].as_f64().context("numpy: no median_s")?,
            gemm_s: None,
            diff,
        });
        progress.count(rows.len());
    }
    if args.procrustes_n > 0 {
        let (n, d) = (args.procrustes_n, args.procrustes_d);
        let (a, b) = pair(n, d, 7);
        let (pa, pb) = (dir.join("pa.npy"), dir.join("pb.npy"));
        write_npy(&pa, &[n, d], &a)?;
        write_npy(&pb, &[n, d], &b)?;
        let ma = prh_core::linalg::Matrix::from_fn(n, d, |i, j| f64::from(a[i * d + j]));
        let mb = prh_core::linalg::Matrix::from_fn(n, d, |i, j| f64::from(b[i * d + j]));
        drop((a, b));
        let (t, fit) = time_it(args.repeats, || {
            Ok(procrustes::fit(ma.as_ref(), mb.as_ref())?)
        })?;
        note(&format!("prh procrustes N = {n} D = {d}: {t:.3} s"));
        let np = numpy(args, "procrustes", args.repeats, &pa, &pb)?;
        let theirs = np["values"]["relative_residual"]
            .as_f64()
            .context("numpy: no residual")?;
        rows.push(Row {
            case: format!("procrustes N={n} D={d} (fit + resid)"),
            flops: 0.0,
            ours: t,
            theirs: np["median_s"].as_f64().context("numpy: no median_s")?,
            gemm_s: None,
            diff: (fit.relative_residual - theirs).abs(),
        });
        progress.count(rows.len());
    }
    for &n in &args.knn_n {
        rows.push(large_row(args, dir, n)?);
        progress.count(rows.len());
    }
    progress.finish();
    Ok((rows, version))
}
