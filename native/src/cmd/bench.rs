//! `prh-native bench`: benchmarks printed side by side with a reference implementation
//! measured in the same run. Never a test: timings vary with the machine.
//!
//! ```text
//! $ prh-native bench eigen --sizes 250,500,1000,2000 --repeats 3
//! ```
//! Other helpers add their benchmarks as further variants of [`Bench`].
//!
//! faer's solver is generic, so it is compiled (monomorphised) inside prh-core, at
//! prh-core's opt-level: in the dev profile that is 1. For numbers worth quoting build with
//! `--release`, or `--config 'profile.dev.package.prh-core.opt-level=3'` (measured here:
//! faer/numpy 2.2x at n = 2000 with opt-level 1, 1.7x with 3).

use crate::progress::{Progress, note};
use anyhow::{Context, Result, bail};
use clap::Subcommand;
use prh_core::linalg::{sym_eigen, sym_eigen_faer};
use prh_core::theory::kernel::Kernel;
use prh_core::theory::pair_graph::random_pi;
use prh_core::theory::top_eigen::{TopEigen, TopEigenParams, sym_eigen_top};
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

/// The available benchmarks (`prh-native bench <name>`).
#[derive(Subcommand, Debug)]
pub enum Bench {
    /// Full symmetric eigendecomposition of kernels K (faer) vs numpy.linalg.eigh (LAPACK).
    Eigen(EigenArgs),
    /// PRH metrics at N = 1024 (D = 768, 4096) and Procrustes at N = 30,000 vs numpy.
    Metrics(super::bench_metrics::MetricsBenchArgs),
    /// Text-JEPA training step (tiny, bert-s) vs the same step in PyTorch: tokens/s, MFU.
    Train(super::bench_train::TrainBenchArgs),
}

/// Options of `bench eigen`.
#[derive(clap::Args, Debug)]
pub struct EigenArgs {
    /// Matrix sizes n, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "250,500,1000,2000")]
    pub sizes: Vec<usize>,
    /// Timed runs per size (the median is reported), after one warm-up run.
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// Seed of the random positive-pair graphs the kernels are built from.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Python interpreter with numpy.
    #[arg(long, default_value = "python3")]
    pub python: String,
    /// The numpy reference script.
    #[arg(long, default_value = "benches/eigen_numpy.py")]
    pub script: PathBuf,
    /// Threads on both sides: faer's (`prh_core::linalg::set_threads`) and numpy's
    /// BLAS/LAPACK threads (OMP/OPENBLAS/MKL_NUM_THREADS), so the comparison is like with like.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Overrides numpy's thread count (default: `--threads`).
    #[arg(long)]
    pub numpy_threads: Option<usize>,
    /// Also time the top-D eigenpairs only: prh's block Lanczos
    /// (`prh_core::theory::top_eigen::sym_eigen_top`) vs scipy's eigsh (ARPACK) and
    /// eigh(subset_by_index) (LAPACK syevr); 0 skips it.
    #[arg(long, default_value_t = 0)]
    pub top: usize,
    /// Relative residual tolerance of both top-D iterative solvers.
    #[arg(long, default_value_t = 1e-10)]
    pub top_tol: f64,
    /// Size of the f64 matmul timed on both sides as the machine's practical FLOP peak
    /// (0 skips it).
    #[arg(long, default_value_t = 2000)]
    pub peak_n: usize,
}

/// The command that runs a Python reference script with `threads` BLAS / OpenMP threads
/// and the machine's OpenBLAS kernel pins removed: `OPENBLAS_CORETYPE` and
/// `OPENBLAS_L2_SIZE`, set on some machines for old OpenBLAS builds, hold numpy to slower
/// kernels (one-thread f64 matmul 62 vs 105 GFLOP/s measured where they were set), which
/// would flatter prh. The scripts report the kernels OpenBLAS then chose
/// (`benches/blas_info.py`).
pub(crate) fn reference_command(python: &str, script: &std::path::Path, threads: usize) -> Command {
    let t = threads.to_string();
    let mut c = Command::new(python);
    c.arg(script)
        .env("OMP_NUM_THREADS", &t)
        .env("OPENBLAS_NUM_THREADS", &t)
        .env("MKL_NUM_THREADS", &t)
        .env_remove("OPENBLAS_CORETYPE")
        .env_remove("OPENBLAS_L2_SIZE");
    c
}

/// Flops of a full symmetric eigendecomposition with eigenvectors, 9 n^3 (Golub & Van
/// Loan, "Matrix Computations", 4th ed., §8.3: tridiagonal reduction, accumulating Q and
/// the implicit QR iteration on the vectors). faer and LAPACK's syevd use divide and
/// conquer, often cheaper, so the rate this implies is an upper estimate of the work done.
pub fn eigen_flops(n: usize) -> f64 {
    9.0 * (n as f64).powi(3)
}

/// Median seconds of C = A B for random `n x n` f64 matrices in faer (`--threads`), after a
/// warm-up: 2 n^3 flops each.
fn faer_matmul_seconds(n: usize, repeats: usize) -> Result<f64> {
    use prh_core::linalg::Matrix;
    let a = Matrix::from_fn(n, n, |i, j| ((i * 7 + j * 13) % 17) as f64 - 8.0);
    let b = Matrix::from_fn(n, n, |i, j| ((i * 5 + j * 3) % 11) as f64 - 5.0);
    let (seconds, c) = timed(repeats, || Ok(&a * &b))?;
    std::hint::black_box(&c);
    Ok(seconds)
}

/// Runs `f` once as a warm-up, then `repeats` times timed: the median seconds of the timed
/// runs and the last run's output.
fn timed<T>(repeats: usize, mut f: impl FnMut() -> Result<T>) -> Result<(f64, T)> {
    let mut out = f()?;
    let mut times = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let t0 = Instant::now();
        out = f()?;
        times.push(t0.elapsed().as_secs_f64());
    }
    Ok((median(times), out))
}

pub fn run(bench: Bench) -> Result<()> {
    match bench {
        Bench::Eigen(a) => eigen(a),
        Bench::Metrics(a) => super::bench_metrics::run(a),
        Bench::Train(a) => super::bench_train::run(a),
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let m = xs.len() / 2;
    if !xs.len().is_multiple_of(2) {
        xs[m]
    } else {
        0.5 * (xs[m - 1] + xs[m])
    }
}

fn eigen(args: EigenArgs) -> Result<()> {
    if args.repeats == 0 || args.sizes.is_empty() {
        bail!("need --repeats >= 1 and at least one size");
    }
    if !args.script.is_file() {
        bail!(
            "{}: numpy reference script not found (run from the repository root or pass --script)",
            args.script.display()
        );
    }
    if args.threads == 0 {
        bail!("need --threads >= 1 (the same count is given to numpy)");
    }
    prh_core::linalg::set_threads(args.threads);
    let numpy_threads = args.numpy_threads.unwrap_or(args.threads);
    let dir = std::env::temp_dir().join(format!("prh-bench-eigen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut rows = Vec::new();
    let mut files = Vec::new();
    // One unit per size on prh's side, and one for the numpy reference run over all.
    let mut progress = Progress::new("bench eigen", args.sizes.len() + 1, 0, 0);
    for &n in &args.sizes {
        // The kernel of a random sparse-ish positive-pair graph: the matrix `spectral` decomposes.
        let k = Kernel::new(random_pi(n, 0.05, args.seed + n as u64).as_ref())?.k;
        let path = dir.join(format!("k{n}.npy"));
        super::spectral::write_npy(&path, &k)?;
        rows.push(time_prh(&args, n, &k)?);
        files.push(path);
        progress.count(rows.len());
    }
    let peak = (args.peak_n > 0)
        .then(|| faer_matmul_seconds(args.peak_n, args.repeats))
        .transpose()?;
    let out = reference_command(&args.python, &args.script, numpy_threads)
        .arg("--repeats")
        .arg(args.repeats.to_string())
        .arg("--matmul")
        .arg(args.peak_n.to_string())
        .args([
            "--top",
            &args.top.to_string(),
            "--tol",
            &args.top_tol.to_string(),
        ])
        .args(&files)
        .output()
        .with_context(|| format!("running {} {}", args.python, args.script.display()))?;
    std::fs::remove_dir_all(&dir).ok();
    progress.count(args.sizes.len() + 1);
    progress.finish();
    if !out.status.success() {
        bail!(
            "numpy reference failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let reference: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("parsing the numpy reference's JSON")?;
    let results = reference["results"]
        .as_array()
        .context("numpy reference: no `results`")?;
    eigen_table(&args, &rows, &reference, results, peak, numpy_threads)?;
    if args.top > 0 {
        top_table(&args, &rows, results)?;
    }
    Ok(())
}

/// prh's side for one size: the full decomposition of `k` by `sym_eigen` and by faer's own
/// path (and with `--top` the block Lanczos top-d) timed, median of `--repeats` after a
/// warm-up each.
fn time_prh(args: &EigenArgs, n: usize, k: &prh_core::linalg::Matrix) -> Result<EigenRow> {
    // Warm-up as on the numpy side.
    let (seconds, values) = timed(args.repeats, || Ok(sym_eigen(k.as_ref())?.values))?;
    note(&format!("prh n = {n}: {seconds:.4} s"));
    // faer's own solver on the same matrix, what `sym_eigen` ran before its blocked
    // reduction: the before and after of that change in one run.
    let (faer_alone, _) = timed(args.repeats, || Ok(sym_eigen_faer(k.as_ref())?))?;
    let top = if args.top > 0 {
        let params = TopEigenParams {
            tol: args.top_tol,
            ..TopEigenParams::default()
        };
        let (t, found) = timed(args.repeats, || {
            Ok(sym_eigen_top(k.as_ref(), args.top, params)?)
        })?;
        note(&format!(
            "thick-restart block Lanczos n = {n}, top {}: {t:.4} s",
            args.top
        ));
        Some((t, found))
    } else {
        None
    };
    Ok((n, seconds, values, top, faer_alone))
}

/// The first line of `bench eigen`: what is timed, on which libraries and threads.
fn eigen_header(args: &EigenArgs, reference: &serde_json::Value, numpy_threads: usize) {
    println!(
        "full symmetric eigendecomposition (values + vectors) of K, median of {} runs; prh's sym_eigen (from n = 192: blocked tridiagonal reduction, faer 0.24's divide and conquer with a SIMD secular equation, faer's back-transformation; {} thread(s), {} build) and faer 0.24's own self_adjoint_eigen vs numpy {} eigh ({}, {} thread(s))",
        args.repeats,
        prh_core::linalg::threads(),
        if cfg!(debug_assertions) {
            "dev"
        } else {
            "release"
        },
        reference["numpy"].as_str().unwrap_or("?"),
        reference["blas"].as_str().unwrap_or("?"),
        numpy_threads
    );
}

/// The full-decomposition table: faer vs numpy per size, GFLOP/s against each side's
/// matmul peak (`peak`: faer's seconds), and the largest eigenvalue difference.
fn eigen_table(
    args: &EigenArgs,
    rows: &[EigenRow],
    reference: &serde_json::Value,
    results: &[serde_json::Value],
    peak: Option<f64>,
    numpy_threads: usize,
) -> Result<()> {
    eigen_header(args, reference, numpy_threads);
    let gflops = |flops: f64, s: f64| flops / s / 1e9;
    let peaks = match (peak, reference["matmul"]["median_s"].as_f64()) {
        (Some(tf), Some(tn)) => {
            let f = 2.0 * (args.peak_n as f64).powi(3);
            println!(
                "peak: {n} x {n} f64 matmul (2 n^3 flops): faer {:.4} s = {:.1} GFLOP/s, numpy {:.4} s = {:.1} GFLOP/s",
                tf,
                gflops(f, tf),
                tn,
                gflops(f, tn),
                n = args.peak_n
            );
            Some((gflops(f, tf), gflops(f, tn)))
        }
        _ => None,
    };
    println!(
        "GFLOP/s below count 9 n^3 flops per decomposition; % is of the same side's matmul peak"
    );
    println!(
        "{:>6} {:>12} {:>12} {:>12} {:>16} {:>16} {:>12} {:>15} {:>10}",
        "n",
        "prh (s)",
        "numpy (s)",
        "prh/numpy",
        "prh GFLOP/s (%)",
        "numpy GFLOP/s (%)",
        "max |dlam|",
        "faer alone (s)",
        "faer/numpy"
    );
    for ((n, t, values, _, tf), r) in rows.iter().zip(results) {
        let tn = r["median_s"]
            .as_f64()
            .context("numpy reference: no median_s")?;
        let theirs: Vec<f64> = r["eigenvalues"]
            .as_array()
            .context("numpy reference: no eigenvalues")?
            .iter()
            .filter_map(|v| v.as_f64())
            .collect();
        if theirs.len() != values.len() {
            bail!("numpy returned {} eigenvalues for n = {n}", theirs.len());
        }
        let diff = values
            .iter()
            .zip(&theirs)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        let (gf, gn) = (gflops(eigen_flops(*n), *t), gflops(eigen_flops(*n), tn));
        let pct = |g: f64, p: Option<f64>| {
            p.map_or(String::new(), |p| format!(" ({:.0}%)", 100.0 * g / p))
        };
        println!(
            "{n:>6} {t:>12.4} {tn:>12.4} {:>12.2} {:>16} {:>16} {diff:>12.2e} {tf:>15.4} {:>10.2}",
            t / tn,
            format!("{gf:.1}{}", pct(gf, peaks.map(|p| p.0))),
            format!("{gn:.1}{}", pct(gn, peaks.map(|p| p.1))),
            tf / tn,
        );
    }
    Ok(())
}

/// One timed size: n, full-decomposition seconds, its eigenvalues, the top-d run, and
/// faer's own full decomposition's seconds.
type EigenRow = (usize, f64, Vec<f64>, Option<(f64, TopEigen)>, f64);

/// Second table of `bench eigen --top d`: the top d eigenpairs only, prh's block Lanczos
/// vs scipy's two routes, with each one's eigenvalue error against the full numpy `eigh`.
fn top_table(args: &EigenArgs, rows: &[EigenRow], results: &[serde_json::Value]) -> Result<()> {
    let values = |v: &serde_json::Value| -> Result<Vec<f64>> {
        Ok(v.as_array()
            .context("numpy reference: eigenvalues missing")?
            .iter()
            .filter_map(|x| x.as_f64())
            .collect())
    };
    let err = |a: &[f64], b: &[f64]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    };
    println!(
        "top {} eigenpairs only (values + vectors), median of {} runs, residual tol {:e}; error = max |lambda - lambda(full numpy eigh)| over the top {}",
        args.top, args.repeats, args.top_tol, args.top
    );
    println!(
        "{:>6} {:>10} {:>8} {:>11} {:>11} {:>12} {:>11} {:>10} {:>10} {:>10}",
        "n",
        "prh (s)",
        "A x",
        "eigsh (s)",
        "syevr (s)",
        "prh/eigsh",
        "prh/syevr",
        "prh err",
        "eigsh err",
        "syevr err"
    );
    for ((n, _, _, top, _), r) in rows.iter().zip(results) {
        let (t, found) = top.as_ref().context("top-d run missing")?;
        let full = values(&r["eigenvalues"])?;
        let ts = &r["top"];
        let (te, ve) = (
            ts["eigsh"]["median_s"].as_f64().context("no eigsh time")?,
            values(&ts["eigsh"]["eigenvalues"])?,
        );
        let (tr, vr) = (
            ts["subset"]["median_s"].as_f64().context("no syevr time")?,
            values(&ts["subset"]["eigenvalues"])?,
        );
        println!(
            "{n:>6} {t:>10.4} {:>8} {te:>11.4} {tr:>11.4} {:>12.3} {:>11.3} {:>10.1e} {:>10.1e} {:>10.1e}",
            found.products,
            t / te,
            t / tr,
            err(&found.values, &full),
            err(&ve, &full),
            err(&vr, &full),
        );
    }
    Ok(())
}
