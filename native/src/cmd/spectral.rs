//! `prh-native spectral`: the spectrum of a world's positive-pair kernel K = D^-1/2 Pi D^-1/2,
//! its gap, the optimal representation F = D^-1/2 U_d, and (with a second kernel) the
//! measured sin-theta next to the Davis–Kahan and Yu–Wang–Samworth bounds (paper §2).
//!
//! ```text
//! $ prh-native spectral --world clusters --n 9 --dim 3 --views mix --alpha 0.3
//! $ prh-native spectral --world scenes --dim 4 --skip-trivial --views2 bad --json
//! $ prh-native spectral --pi a.npy --pi2 b.npy --dim 2 --save-embedding f.npy
//! $ prh-native spectral --world clusters --n 2000 --dim 3 --solver top
//! ```
//!
//! `--solver auto` (the default) finds only the top d + 2 eigenpairs by block Lanczos once
//! K has at least [`AUTO_TOP_FROM`] observations and d + 2 is at most
//! [`AUTO_TOP_MAX_PAIRS`] (both gaps need the value after the window), within a budget of
//! n products, and every eigenpair otherwise or past the budget; the table and JSON say
//! which ran.

use anyhow::{Context, Result, bail};
use prh_core::linalg::{Matrix, to_row_major};
use prh_core::theory::kernel::Kernel;
use prh_core::theory::pair_graph::{self, Pairing};
use prh_core::theory::spectrum::{Solver, Spectrum, SpectrumSummary};
use prh_core::theory::theorem::{self, RotationCheck, SubspaceComparison};
use prh_core::theory::world::{Preset, PresetSpec, World};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Spectrum of a positive-pair kernel, its gap, and the two-kernel sin-theta bounds.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["world", "pi"])))]
pub struct Args {
    /// World: a preset (clusters, ring, grid, scenes) or a JSON world file (*.json).
    #[arg(long)]
    pub world: Option<String>,
    /// Positive-pair matrix Pi as .npy (f32/f64, square, symmetric, >= 0, sums to 1).
    #[arg(long)]
    pub pi: Option<PathBuf>,
    /// Number of states of a preset (grid and scenes round it to a product of three sizes).
    #[arg(long, default_value_t = 12)]
    pub n: usize,
    /// Seed of the preset (p(z), q(u), cluster sizes).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Nuisance values per rendering for single-modality presets (1 = none).
    #[arg(long, default_value_t = 2)]
    pub nuisances: usize,
    /// Number of clusters for `clusters` (default round(sqrt(n))).
    #[arg(long)]
    pub clusters: Option<usize>,
    /// Unevenness of p and q in [0, 1): 0 = uniform.
    #[arg(long, default_value_t = 0.5)]
    pub skew: f64,
    /// Probability that a pair's second view shows a related state, in [0, 1].
    #[arg(long, default_value_t = 0.5)]
    pub relatedness: f64,
    /// Index of the modality whose observations the kernel is over.
    #[arg(long, default_value_t = 0)]
    pub modality: usize,
    /// Positive pairs: good, bad, next-token or mix.
    #[arg(long, default_value = "good")]
    pub views: String,
    /// Share of bad pairs for `--views mix` (0 = good, 1 = bad).
    #[arg(long, default_value_t = 0.5)]
    pub alpha: f64,
    /// Probability that a next-token continuation drifts off the state.
    #[arg(long, default_value_t = 0.5)]
    pub drift: f64,
    /// Dimension d of the representation.
    #[arg(long, default_value_t = 3)]
    pub dim: usize,
    /// Take the top d eigenvectors after the trivial one (sqrt(p), a constant feature).
    #[arg(long)]
    pub skip_trivial: bool,
    /// Second Pi (.npy) over the same states: measure sin-theta and the bounds against it.
    #[arg(long, conflicts_with = "views2")]
    pub pi2: Option<PathBuf>,
    /// Second view kind for the same world: sin-theta and bounds within `--modality`, and the
    /// cross-modal rotation check uses it for modality 1.
    #[arg(long)]
    pub views2: Option<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Write F = D^-1/2 U_d (float64, [n, d]) to this .npy file.
    #[arg(long)]
    pub save_embedding: Option<PathBuf>,
    /// Eigensolver: full (every eigenpair), top (only the top d + 2, block Lanczos), or
    /// auto (top from 1,000 observations on and d + 2 <= 64, where it measured 4x faster;
    /// full otherwise). Lanczos slows down where K's top eigenvalues crowd together (a
    /// ring's: 2.4 s at 1,200 observations against 0.6 s in full): --solver full then.
    #[arg(long, default_value = "auto", value_parser = ["auto", "full", "top"])]
    pub solver: String,
}

/// Size of K from which `--solver auto` uses block Lanczos: at n = 1,000 the top 3 took
/// 0.043 s against 0.171 s for the full decomposition (docs/benchmarks.md, 4 December);
/// below it the full decomposition takes milliseconds and shows the whole spectrum.
pub const AUTO_TOP_FROM: usize = 1000;

/// Most pairs `--solver auto` asks block Lanczos for: its block grows to the count, and
/// with hundreds of vectors per block its orthogonalisation costs what the full
/// decomposition does (it was measured for the top 3-11, docs/benchmarks.md).
pub const AUTO_TOP_MAX_PAIRS: usize = 64;

/// The solver `--solver` asks for on a K with `n` observations, for window size `d`: the
/// top d + 2 (the trivial pair, the window after it, and the value after that for the gap).
fn solver_for(choice: &str, n: usize, d: usize) -> Solver {
    let count = Spectrum::needed(d + 1, n);
    match choice {
        "full" => Solver::Full,
        "top" => Solver::Top(count),
        _ if n >= AUTO_TOP_FROM && count <= AUTO_TOP_MAX_PAIRS => Solver::Auto(count),
        _ => Solver::Full,
    }
}

/// K and its spectrum with the chosen solver. Under `auto`, Lanczos that needs more than
/// n products (crowded top eigenvalues) or meets a top eigenvalue repeated more often
/// than the pairs asked for falls back to the full decomposition ([`Solver::Auto`]);
/// under `top` the latter is an error naming the cause.
fn analyse(args: &Args, pi: &Matrix) -> Result<(Kernel, Spectrum)> {
    Ok(theorem::analyse_with(
        pi,
        solver_for(&args.solver, pi.nrows(), args.dim),
    )?)
}

/// "full" or "top": what ran for `s`.
fn solver_label(s: &Spectrum) -> &'static str {
    if s.is_complete() { "full" } else { "top" }
}

/// Writes a matrix `[n, d]` as a C-order float64 .npy file (through the core's writer).
pub fn write_npy(path: &Path, m: &Matrix) -> Result<()> {
    prh_core::formats::features::write_npy(path, &[m.nrows(), m.ncols()], &to_row_major(m.as_ref()))
        .with_context(|| format!("writing {}", path.display()))
}

fn load_world(args: &Args, name: &str) -> Result<World> {
    if name.ends_with(".json") || Path::new(name).is_file() {
        return Ok(World::load_json(Path::new(name))?);
    }
    let spec = PresetSpec {
        preset: Preset::parse(name)?,
        n: args.n,
        seed: args.seed,
        nuisances: args.nuisances,
        clusters: args.clusters,
        skew: args.skew,
        relatedness: args.relatedness,
    };
    Ok(World::preset(&spec)?)
}

/// Prints `text` to stdout; a reader that went away (broken pipe) is not an error.
fn emit(text: &str) -> Result<()> {
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r.context("writing to stdout")?),
    }
}

/// Fixed notation for ordinary magnitudes, scientific for tiny or huge ones (gaps of 1e-6
/// must not print as 0.000000).
fn fmt_num(x: f64) -> String {
    if x == 0.0 || (1e-3..1e5).contains(&x.abs()) {
        format!("{x:.6}")
    } else {
        format!("{x:.3e}")
    }
}

fn fmt_opt(x: Option<f64>) -> String {
    x.map_or("n/a (gap <= 0)".to_string(), fmt_num)
}

/// The kernel's positive-pair matrix Pi, its name and its observations' names: from the
/// world and `views`, or from `--pi`.
fn first_pi(
    args: &Args,
    world: Option<&World>,
    views: Pairing,
) -> Result<(Matrix, String, Vec<String>)> {
    match (world, &args.pi) {
        (Some(w), _) => {
            let pi = pair_graph::pair_matrix(w, args.modality, views)?;
            let source = format!(
                "{} · {} · {}",
                w.name,
                w.modality(args.modality)?.name,
                views.label()
            );
            Ok((pi, source, pair_graph::observation_names(w, args.modality)?))
        }
        (None, Some(path)) => {
            let pi = pair_graph::load_pi_npy(path)?;
            let names = (0..pi.nrows()).map(|i| i.to_string()).collect();
            Ok((pi, path.display().to_string(), names))
        }
        (None, None) => bail!("give --world PRESET|FILE.json or --pi FILE.npy"),
    }
}

/// The second kernel (`--pi2`, or `--views2` on the world) compared with the first: the
/// comparison, the second spectrum's eigenvalues and the second kernel's name.
fn second_kernel(
    args: &Args,
    world: Option<&World>,
    views2: Option<Pairing>,
    (k1, s1): (&Kernel, &Spectrum),
) -> Result<Option<(SubspaceComparison, Vec<f64>, String)>> {
    let second = match (&args.pi2, views2, world) {
        (Some(path), _, _) => Some((pair_graph::load_pi_npy(path)?, path.display().to_string())),
        (None, Some(v), Some(w)) => {
            Some((pair_graph::pair_matrix(w, args.modality, v)?, v.label()))
        }
        (None, Some(_), None) => {
            bail!("--views2 needs --world (a .npy Pi has no view kinds); use --pi2")
        }
        (None, None, _) => None,
    };
    let Some((pi2, label)) = second else {
        return Ok(None);
    };
    let (k2, s2) = analyse(args, &pi2).with_context(|| format!("second kernel ({label})"))?;
    let c = theorem::compare(k1, s1, &k2, &s2, args.dim, args.skip_trivial)
        .with_context(|| format!("comparing with {label}"))?;
    Ok(Some((c, s2.values, label)))
}

/// Everything `spectral` reports.
struct Report {
    source: String,
    names: Vec<String>,
    s1: Spectrum,
    summary: SpectrumSummary,
    gap: Option<f64>,
    comparison: Option<(SubspaceComparison, Vec<f64>, String)>,
    rotation: Option<RotationCheck>,
}

pub fn run(args: Args) -> Result<()> {
    let views = Pairing::parse(&args.views, args.alpha, args.drift)?;
    let views2 = args
        .views2
        .as_deref()
        .map(|v| Pairing::parse(v, args.alpha, args.drift))
        .transpose()?;
    let world = args
        .world
        .as_deref()
        .map(|w| load_world(&args, w))
        .transpose()?;
    let (pi, source, names) = first_pi(&args, world.as_ref(), views)?;
    let (k1, s1) = analyse(&args, &pi)?;
    let d = args.dim;
    let gap = s1.gap(d, args.skip_trivial)?;
    let summary = s1.summary(d);
    if let Some(path) = &args.save_embedding {
        write_npy(path, &s1.embedding(d, args.skip_trivial)?)?;
    }
    let comparison = second_kernel(&args, world.as_ref(), views2, (&k1, &s1))?;
    let rotation = match &world {
        Some(w) if w.modalities.len() >= 2 => Some(rotation_check(&args, w, (views, views2), &s1)?),
        _ => None,
    };
    let report = Report {
        source,
        names,
        s1,
        summary,
        gap,
        comparison,
        rotation,
    };
    if args.json {
        return emit(&format!(
            "{}\n",
            serde_json::to_string_pretty(&json_report(&args, &report)?)?
        ));
    }
    // Buffered so a closed pipe (`| head`) ends quietly instead of panicking in println!.
    let mut o = String::new();
    spectrum_table(&mut o, &args, &report)?;
    if let Some((c, _, label)) = &report.comparison {
        comparison_table(&mut o, c, label)?;
    }
    if let Some(r) = &report.rotation {
        writeln!(
            o,
            "\nrotation theorem: {} ({}) vs {} ({}): Procrustes relative residual {:.3e}",
            r.modalities[0], r.views[0], r.modalities[1], r.views[1], r.relative_residual
        )?;
    }
    emit(&o)
}

/// The rotation theorem between modalities 0 and 1 of `w` (views, and views2 for modality
/// 1 when given), with spectra from the same solver; `s1` is reused when it is modality
/// 0's under `views`.
fn rotation_check(
    args: &Args,
    w: &World,
    (views, views2): (Pairing, Option<Pairing>),
    s1: &Spectrum,
) -> Result<RotationCheck> {
    let spectrum = |m: usize, v: Pairing| -> Result<Spectrum> {
        Ok(analyse(args, &pair_graph::pair_matrix(w, m, v)?)?.1)
    };
    let other;
    let sa = if args.modality == 0 {
        s1
    } else {
        other = spectrum(0, views)?;
        &other
    };
    let vb = views2.unwrap_or(views);
    let sb = spectrum(1, vb)?;
    Ok(
        theorem::cross_modal_from(w, (0, views, sa), (1, vb, &sb), args.dim, args.skip_trivial)?
            .check,
    )
}

/// The `--json` object.
fn json_report(args: &Args, r: &Report) -> Result<Value> {
    let (s1, summary) = (&r.s1, &r.summary);
    let mut out = json!({
        "source": r.source,
        "n": s1.n(),
        "solver": solver_label(s1),
        "eigenvalues_computed": s1.computed(),
        "d": args.dim,
        "skip_trivial": args.skip_trivial,
        "eigenvalues": summary.eigenvalues,
        "p": s1.p,
        "gap": r.gap,
        "gap_with_trivial": summary.gap_with_trivial,
        "gap_without_trivial": summary.gap_without_trivial,
        "trivial_index": s1.trivial_index,
        "names": r.names,
    });
    if let (Some((c, values2, label)), Value::Object(map)) = (&r.comparison, &mut out) {
        if let Value::Object(cmp) = serde_json::to_value(c)? {
            map.extend(cmp);
        }
        map.insert("eigenvalues2".into(), json!(values2));
        map.insert("second".into(), json!(label));
    }
    if let (Some(rot), Value::Object(map)) = (&r.rotation, &mut out) {
        map.insert("rotation".into(), serde_json::to_value(rot)?);
    }
    Ok(out)
}

/// The eigenvalues (the top-d window and the trivial pair marked) and the gaps.
fn spectrum_table(o: &mut String, args: &Args, r: &Report) -> Result<()> {
    let (s1, d) = (&r.s1, args.dim);
    writeln!(
        o,
        "{}: {} observations, d = {d}{}; {}",
        r.source,
        s1.n(),
        if args.skip_trivial {
            " after the trivial pair"
        } else {
            ""
        },
        if s1.is_complete() {
            "every eigenpair (full decomposition)".to_string()
        } else {
            format!(
                "the top {} eigenpairs (block Lanczos; --solver full for all)",
                s1.computed()
            )
        }
    )?;
    let w = s1.window(d, args.skip_trivial)?;
    let shown = s1.computed().min(w.end + 8);
    writeln!(o, "{:>5}  {:>10}", "#", "eigenvalue")?;
    for j in 0..shown {
        let mut tag = String::new();
        if j == s1.trivial_index {
            tag.push_str("trivial (sqrt p) ");
        }
        if w.contains(&j) {
            tag.push_str("top-d");
        }
        writeln!(o, "{j:>5}  {:>10.6}  {tag}", s1.values[j])?;
        if j + 1 == w.end {
            writeln!(
                o,
                "{:>5}  {:>10}  gap {}",
                "",
                "---",
                r.gap.map_or("(none: window reaches n)".into(), fmt_num)
            )?;
        }
    }
    if !s1.is_complete() {
        writeln!(
            o,
            "{:>5}  ... {} more not computed",
            "",
            s1.n() - s1.computed()
        )?;
    } else if shown < s1.n() {
        writeln!(
            o,
            "{:>5}  ... {} more, smallest {:.6}",
            "",
            s1.n() - shown,
            s1.values[s1.n() - 1]
        )?;
    }
    writeln!(
        o,
        "gap with trivial: {}   without trivial: {}",
        fmt_opt(r.summary.gap_with_trivial),
        fmt_opt(r.summary.gap_without_trivial)
    )?;
    Ok(())
}

/// The second kernel's distance and the measured sin-theta beside its bounds.
fn comparison_table(o: &mut String, c: &SubspaceComparison, label: &str) -> Result<()> {
    writeln!(
        o,
        "\nagainst {label}: ||K2 - K1||_op = {:.6}, ||K2 - K1||_F = {:.6}",
        c.e_op, c.e_fro
    )?;
    writeln!(o, "{:<28} {:>16} {:>16}", "", "operator", "Frobenius")?;
    writeln!(
        o,
        "{:<28} {:>16} {:>16}",
        "measured sin-theta",
        fmt_num(c.sin_theta_op),
        fmt_num(c.sin_theta_fro)
    )?;
    writeln!(
        o,
        "{:<28} {:>16} {:>16}",
        format!("Davis–Kahan (delta {})", fmt_num(c.davis_kahan_gap)),
        fmt_opt(c.davis_kahan_bound),
        fmt_opt(c.davis_kahan_bound_fro)
    )?;
    writeln!(
        o,
        "{:<28} {:>16} {:>16}",
        format!("Yu–Wang–Samworth (gap {})", fmt_num(c.yws_gap)),
        fmt_opt(c.yws_bound),
        fmt_opt(c.yws_bound)
    )?;
    if c.sin_theta_fro < 1e-12 {
        // Eigenvectors carry ~n * 1e-16 error, so a measured angle and a bound that are
        // both this small are round-off of an exact 0 and may come out in either order.
        writeln!(
            o,
            "(sin-theta at round-off: the two top-d subspaces coincide)"
        )?;
    }
    Ok(())
}
