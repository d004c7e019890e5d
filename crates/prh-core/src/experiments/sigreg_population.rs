//! SIGReg's own optimum on the scene world, in expectation (issue 19): what the paper's
//! training loss prefers when neither the encoder class nor sampling limits it.
//!
//! The theorem predicts what a *whitened second-order* objective learns (F = D^-1/2 U_d);
//! it says nothing about SIGReg (PAPER.md §7). The demo's SIGReg bad-view pairs align at
//! 0.14-0.23 against the theorem's 0.42, and a sweep of trained encoders suggested the
//! objective, not the optimiser, is at fault. This module settles that by minimising the
//! *expected* training loss exactly, with a free (tabular) encoder of views:
//!
//! - **Views.** A view of modality m hides factor i with probability 1 - v_i and the
//!   nuisance with 1 - v_u ([`crate::scene`]'s model), so the views are the atoms
//!   x = (x_1..x_4, x_u), each x_i a value or "hidden": prod_i (c_i + 1) (|U| + 1) of them
//!   (2,500 in the demo's world). The latent of a group of V views is the augmented state
//!   l = (z, u) ~ p; given it the views are independent with
//!   `P(x | l) = prod_i [v_i 1(x_i = z_i) + (1 - v_i) 1(x_i = hidden)]` times the nuisance's
//!   factor: the same form with u under bad views, `v_u q(x_u)` or `1 - v_u` under good
//!   views (each view renders its own nuisance).
//! - **The encoder** is a free table f: atoms -> R^d, so nothing but the objective decides.
//! - **The expected training loss** ([`crate::train::jepa_loss`], `loss.kind = "sigreg"`,
//!   batches of N groups x V views, all V global):
//!
//! ```text
//! L(f) = (V-1)/(V d) E_l tr Cov(f(x) | l)                            the invariance term
//!      + lambda E_a sum_j w_j [ N |phi_a(t_j) - g_j|^2 + beta (1 - |phi_a(t_j)|^2) ]
//! phi_a(t) = sum_x P(x) exp(i t a^T f(x)),  g_j = exp(-t_j^2/2)
//! ```
//!
//!   with a uniform on the sphere and (t_j, w_j) SIGReg's quadrature
//!   ([`crate::train::sigreg`]). The second line is the expectation of SIGReg's statistic
//!   `N sum_j w_j |phi_N - g|^2` on N independent rows: `E|phi_N - phi|^2 = (1 - |phi|^2)/N`
//!   adds the `beta = 1` term, a finite-batch bias; `beta = 0` is the population statistic
//!   N D(f) alone. Both are exact over the atoms; only the directions a are sampled.
//!
//! [`minimise`] runs Adam on L from a random table or from the theorem's optimum read at
//! views (the posterior mean E[F(s) | x]); [`solve`] scores the result as the demo scores a
//! trained encoder, against F at the clean views (CKA, sin-theta, the variance in each of
//! K's eigenspaces), and [`pair`] aligns image vs text at paired clean views.

use crate::linalg::{Matrix, from_row_major, select_rows, to_row_major};
use crate::rng::{Stream, generator, standard_normal};
use crate::scene::theory::{
    ModalityTheory, augmented_indices, compare_to_theory, modality_theory, paired_seed,
    paired_views, predicted_rows, variance_shares,
};
use crate::scene::{Modality, SceneWorld};
use crate::theory::view_kind::ViewKind;
use crate::train::sigreg::{Quadrature, random_directions};
use crate::{Error, Result};
use serde::Serialize;

/// The free encoder's world: the view atoms of one modality under one view kind.
#[derive(Debug, Clone)]
pub struct ViewModel {
    /// p(l) over latents l = (z, u), in [`SceneWorld::pi`]'s order.
    pub latent_p: Vec<f64>,
    /// For each latent, its views with their probabilities: `(atom, P(x | l))`, the 2^5
    /// combinations of shown and hidden (fewer where a visibility is 0 or 1).
    pub views_of: Vec<Vec<(usize, f64)>>,
    /// P(x) = sum_l p(l) P(x | l) over atoms.
    pub view_p: Vec<f64>,
    /// The clean atom (everything shown) of each augmented state (z, u).
    pub clean: Vec<usize>,
}

/// The atoms of modality `m` under `kind` views (module docs). Atom index: mixed radix
/// over (x_1, .., x_4, x_u), the nuisance fastest, value `c_i` meaning hidden.
pub fn view_model(world: &SceneWorld, m: Modality, kind: ViewKind) -> Result<ViewModel> {
    if kind == ViewKind::NextToken {
        return Err(Error::invalid(
            "SIGReg's population optimum: next-token pairs are not JEPA views".to_string(),
        ));
    }
    let vis = world.visibility(m);
    let q = world.q(m);
    let radix: Vec<usize> = world
        .config
        .cardinality
        .iter()
        .copied()
        .chain([q.len()])
        .map(|c| c + 1)
        .collect();
    let n_atoms: usize = radix.iter().product();
    // Per coordinate k (4 factors, then the nuisance): given the latent's value a, the
    // view's values with their probabilities.
    let coord = |k: usize, a: usize| -> Vec<(usize, f64)> {
        let (c, v) = match k {
            4 => (q.len(), vis.nuisance),
            _ => (world.config.cardinality[k], vis.factors[k]),
        };
        let shown: Vec<(usize, f64)> = if k == 4 && kind == ViewKind::Good {
            // Each view renders its own nuisance: shown with a fresh draw from q.
            (0..c).map(|b| (b, v * q[b])).collect()
        } else {
            vec![(a, v)]
        };
        shown
            .into_iter()
            .chain([(c, 1.0 - v)])
            .filter(|&(_, pr)| pr > 0.0)
            .collect()
    };
    let latent_p = world.p_augmented(m);
    let nu = q.len();
    let mut views_of = Vec::with_capacity(latent_p.len());
    let mut clean = Vec::with_capacity(latent_p.len());
    for s in 0..latent_p.len() {
        let z = world.state(s / nu);
        let values = [z[0], z[1], z[2], z[3], s % nu];
        let mut acc: Vec<(usize, f64)> = vec![(0, 1.0)];
        for (k, &a) in values.iter().enumerate() {
            let (r, options) = (radix[k], coord(k, a));
            acc = acc
                .iter()
                .flat_map(|&(idx, pr)| options.iter().map(move |&(b, pb)| (idx * r + b, pr * pb)))
                .collect();
        }
        views_of.push(acc);
        clean.push(values.iter().zip(&radix).fold(0, |i, (&a, &r)| i * r + a));
    }
    let mut view_p = vec![0.0; n_atoms];
    for (views, &pl) in views_of.iter().zip(&latent_p) {
        for &(x, pr) in views {
            view_p[x] += pl * pr;
        }
    }
    Ok(ViewModel {
        latent_p,
        views_of,
        view_p,
        clean,
    })
}

/// The expected loss's settings: the training batch it is the expectation of, and SIGReg's.
#[derive(Debug, Clone, Serialize)]
pub struct PopulationLoss {
    /// SIGReg's weight lambda.
    pub lambda: f64,
    /// Independent groups per batch, N (SIGReg's statistic scales with it).
    pub batch: usize,
    /// Views per group, V (the invariance term's (V - 1) / V).
    pub views: usize,
    /// Weight beta of the finite-batch bias `1 - |phi|^2`: 1 for the expected minibatch
    /// statistic (what training minimises), 0 for the population statistic.
    pub bias: f64,
    /// SIGReg's quadrature range and knots (training's defaults: 3 and 17).
    pub t_max: f64,
    /// Knots of the quadrature.
    pub knots: usize,
}

/// The loss's terms at one table.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct LossTerms {
    /// `(V-1)/(V d) E_l tr Cov(f | l)`.
    pub invariance: f64,
    /// `E_a sum_j w_j N |phi_a(t_j) - g_j|^2`.
    pub gaussianity: f64,
    /// `E_a sum_j w_j (1 - |phi_a(t_j)|^2)` (unweighted by beta).
    pub bias: f64,
    /// `invariance + lambda (gaussianity + beta bias)`.
    pub total: f64,
}

/// L(f) and its gradient (module docs), SIGReg averaged over the rows of `directions`.
///
/// # Shapes
/// `f [atoms, d]`, `directions [m, d]` row-major -> terms, gradient `[atoms, d]`
pub fn loss_and_grad(
    model: &ViewModel,
    f: &Matrix,
    cfg: &PopulationLoss,
    directions: &[f64],
) -> Result<(LossTerms, Matrix)> {
    let (n_atoms, d) = (f.nrows(), f.ncols());
    let mut grad = vec![0.0; n_atoms * d];
    let terms = loss_and_grad_rows(
        model,
        &to_row_major(f.as_ref()),
        d,
        cfg,
        directions,
        &mut grad,
    )?;
    Ok((terms, from_row_major(n_atoms, d, &grad)?))
}

/// [`loss_and_grad`] on a row-major table, the gradient written into `grad` (the solver's
/// inner loop: plain slices, so it stays fast at the test profile's opt-level).
///
/// # Shapes
/// `f`, `grad` `[atoms * d]` row-major, `directions [m * d]` -> terms
fn loss_and_grad_rows(
    model: &ViewModel,
    f: &[f64],
    d: usize,
    cfg: &PopulationLoss,
    directions: &[f64],
    grad: &mut [f64],
) -> Result<LossTerms> {
    let n_atoms = model.view_p.len();
    if d == 0
        || f.len() != n_atoms * d
        || grad.len() != f.len()
        || !directions.len().is_multiple_of(d)
        || directions.is_empty()
    {
        return Err(Error::invalid(format!(
            "SIGReg's population loss: a table of {} values (d = {d}) for {n_atoms} atoms, {} direction values",
            f.len(),
            directions.len()
        )));
    }
    grad.iter_mut().for_each(|g| *g = 0.0);
    // Invariance: E_x ||f||^2 - E_l ||m(l)||^2, m(l) = E[f(x) | l].
    let c_inv = (cfg.views as f64 - 1.0) / (cfg.views as f64 * d as f64);
    let mut inv = 0.0;
    for ((fx, gx), &px) in f
        .chunks_exact(d)
        .zip(grad.chunks_exact_mut(d))
        .zip(&model.view_p)
    {
        for (v, g) in fx.iter().zip(gx) {
            inv += px * v * v;
            *g += 2.0 * c_inv * px * v;
        }
    }
    let mut mean = vec![0.0; d];
    for (views, &pl) in model.views_of.iter().zip(&model.latent_p) {
        mean.iter_mut().for_each(|v| *v = 0.0);
        for &(x, pr) in views {
            for (mj, v) in mean.iter_mut().zip(&f[x * d..(x + 1) * d]) {
                *mj += pr * v;
            }
        }
        inv -= pl * mean.iter().map(|v| v * v).sum::<f64>();
        for &(x, pr) in views {
            for (g, mj) in grad[x * d..(x + 1) * d].iter_mut().zip(&mean) {
                *g -= 2.0 * c_inv * pl * pr * mj;
            }
        }
    }
    let invariance = c_inv * inv;
    // SIGReg: per direction, the ECF at the knots by the recurrence e^{i t_j s} = (e^{i dt s})^j.
    let q = Quadrature::new(cfg.t_max, cfg.knots)?;
    let k = q.t.len();
    let dt = q.t[1];
    let g: Vec<f64> = q.t.iter().map(|t| (-0.5 * t * t).exp()).collect();
    let n = cfg.batch as f64;
    let m = directions.len() / d;
    let (mut gauss, mut bias) = (0.0, 0.0);
    let (mut cos, mut sin) = (vec![0.0; n_atoms * k], vec![0.0; n_atoms * k]);
    let (mut c_sum, mut s_sum) = (vec![0.0; k], vec![0.0; k]);
    let (mut d_c, mut d_s) = (vec![0.0; k], vec![0.0; k]);
    for a in directions.chunks_exact(d) {
        c_sum
            .iter_mut()
            .chain(s_sum.iter_mut())
            .for_each(|v| *v = 0.0);
        for (x, fx) in f.chunks_exact(d).enumerate() {
            let s: f64 = fx.iter().zip(a).map(|(v, w)| v * w).sum();
            let (s1, c1) = (dt * s).sin_cos();
            let (mut cr, mut ci) = (1.0, 0.0);
            let px = model.view_p[x];
            let (cx, sx) = (&mut cos[x * k..(x + 1) * k], &mut sin[x * k..(x + 1) * k]);
            for jj in 0..k {
                cx[jj] = cr;
                sx[jj] = ci;
                c_sum[jj] += px * cr;
                s_sum[jj] += px * ci;
                (cr, ci) = (cr * c1 - ci * s1, cr * s1 + ci * c1);
            }
        }
        // d/dC and d/dS of sum_j w_j [N |phi - g|^2 + beta (1 - |phi|^2)].
        for jj in 0..k {
            let (cj, sj) = (c_sum[jj], s_sum[jj]);
            gauss += q.w[jj] * n * ((cj - g[jj]).powi(2) + sj * sj);
            bias += q.w[jj] * (1.0 - cj * cj - sj * sj);
            d_c[jj] = q.t[jj] * q.w[jj] * (2.0 * n * (cj - g[jj]) - 2.0 * cfg.bias * cj);
            d_s[jj] = q.t[jj] * q.w[jj] * (2.0 * n * sj - 2.0 * cfg.bias * sj);
        }
        // dC_j/ds_x = -P(x) t_j sin(t_j s_x), dS_j/ds_x = P(x) t_j cos(t_j s_x).
        let scale = cfg.lambda / m as f64;
        for (x, gx) in grad.chunks_exact_mut(d).enumerate() {
            let (cx, sx) = (&cos[x * k..(x + 1) * k], &sin[x * k..(x + 1) * k]);
            let ds: f64 = (0..k)
                .map(|jj| d_s[jj] * cx[jj] - d_c[jj] * sx[jj])
                .sum::<f64>()
                * model.view_p[x]
                * scale;
            for (g, w) in gx.iter_mut().zip(a) {
                *g += ds * w;
            }
        }
    }
    let (gauss, bias) = (gauss / m as f64, bias / m as f64);
    Ok(LossTerms {
        invariance,
        gaussianity: gauss,
        bias,
        total: invariance + cfg.lambda * (gauss + cfg.bias * bias),
    })
}

/// Where [`minimise`] starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Start {
    /// A random table, entries N(0, 0.1^2).
    Random,
    /// The theorem's optimum read at views, E[F(s) | x] (F of the same view kind).
    Theorem,
}

/// Adam's settings for [`minimise`].
#[derive(Debug, Clone, Serialize)]
pub struct Solver {
    /// Steps.
    pub steps: usize,
    /// Peak learning rate, decayed to 0 on a cosine (Adam's betas 0.9 / 0.999).
    pub lr: f64,
    /// Directions drawn afresh per step (an unbiased estimate of E_a).
    pub slices: usize,
    /// Seed of the start and the directions.
    pub seed: u64,
}

/// The table `start` gives (see [`Start`]).
///
/// # Shapes
/// -> `[atoms, d]`
pub fn start_table(model: &ViewModel, theory: &ModalityTheory, start: Start, seed: u64) -> Matrix {
    let (n_atoms, d) = (model.view_p.len(), theory.f.ncols());
    match start {
        Start::Random => {
            let mut rng = generator(seed, Stream::Init, 0);
            Matrix::from_fn(n_atoms, d, |_, _| 0.1 * standard_normal(&mut rng))
        }
        Start::Theorem => {
            let mut f = Matrix::zeros(n_atoms, d);
            for (l, views) in model.views_of.iter().enumerate() {
                for &(x, pr) in views {
                    for j in 0..d {
                        f[(x, j)] += model.latent_p[l] * pr * theory.f[(l, j)];
                    }
                }
            }
            for (x, &px) in model.view_p.iter().enumerate() {
                for j in 0..d {
                    f[(x, j)] /= px.max(f64::MIN_POSITIVE);
                }
            }
            f
        }
    }
}

/// Adam on L from `f`; returns the table and the loss every `steps / 20` steps (on that
/// step's directions).
///
/// # Shapes
/// `f [atoms, d]` -> `[atoms, d]`
pub fn minimise(
    model: &ViewModel,
    f: Matrix,
    cfg: &PopulationLoss,
    solver: &Solver,
) -> Result<(Matrix, Vec<(usize, f64)>)> {
    let (n_atoms, d) = (f.nrows(), f.ncols());
    let mut x = to_row_major(f.as_ref());
    let mut g = vec![0.0; x.len()];
    let (mut m1, mut m2) = (vec![0.0; x.len()], vec![0.0; x.len()]);
    let (b1, b2, eps) = (0.9f64, 0.999f64, 1e-12);
    let every = (solver.steps / 20).max(1);
    let mut curve = Vec::new();
    for step in 0..solver.steps {
        let dirs = random_directions(d, solver.slices, solver.seed, step as u64);
        let terms = loss_and_grad_rows(model, &x, d, cfg, &dirs, &mut g)?;
        if step % every == 0 || step + 1 == solver.steps {
            curve.push((step, terms.total));
        }
        let t = (step + 1) as i32;
        let (c1, c2) = (1.0 - b1.powi(t), 1.0 - b2.powi(t));
        // Cosine decay to 0: the directions are sampled, and a constant rate would leave
        // the table jittering around the minimum by the gradient's noise.
        let lr = solver.lr
            * 0.5
            * (1.0 + (std::f64::consts::PI * step as f64 / solver.steps as f64).cos());
        for (((xi, gi), a), b) in x.iter_mut().zip(&g).zip(m1.iter_mut()).zip(m2.iter_mut()) {
            *a = b1 * *a + (1.0 - b1) * gi;
            *b = b2 * *b + (1.0 - b2) * gi * gi;
            *xi -= lr * (*a / c1) / ((*b / c2).sqrt() + eps);
        }
    }
    Ok((from_row_major(n_atoms, d, &x)?, curve))
}

/// The table read at the clean view of every augmented state, in [`SceneWorld::pi`]'s
/// order: what [`crate::scene::theory::compare_to_theory`] compares with F.
///
/// # Shapes
/// `f [atoms, d]` -> `[n_m, d]`
pub fn clean_rows(model: &ViewModel, f: &Matrix) -> Matrix {
    select_rows(f.as_ref(), &model.clean)
}

/// One minimised table scored as the demo scores a trained encoder.
#[derive(Debug, Clone, Serialize)]
pub struct TableReport {
    /// SIGReg's weight.
    pub lambda: f64,
    /// Image or text.
    pub modality: Modality,
    /// Good or bad views.
    pub kind: ViewKind,
    /// Where Adam started.
    pub start: Start,
    /// The loss's terms at the end, on [`EVAL_SLICES`] fixed directions (one set for every
    /// table, so two ends of one loss compare without direction noise).
    pub terms: LossTerms,
    /// The loss every `steps / 20` steps, on that step's directions.
    pub curve: Vec<(usize, f64)>,
    /// p-weighted CKA with F at the clean views.
    pub cka: f64,
    /// sin-theta (operator norm) to span(F) at the clean views.
    pub sin_theta: f64,
    /// The share of its variance per factor's eigenspace ([`crate::scene::theory::variance_shares`]).
    pub variance: Vec<(&'static str, f64)>,
    /// F's own shares, for comparison.
    pub variance_of_f: Vec<(&'static str, f64)>,
}

/// Directions the final loss of every table is evaluated on.
pub const EVAL_SLICES: usize = 1024;

/// The image and text tables of one view kind and start, paired as the demo pairs its
/// encoders.
#[derive(Debug, Clone, Serialize)]
pub struct PairReport {
    /// SIGReg's weight.
    pub lambda: f64,
    /// Good or bad views.
    pub kind: ViewKind,
    /// Where both tables started.
    pub start: Start,
    /// Mutual 10-NN of the tables at paired clean views (the demo's measure, all states).
    pub mutual_knn: f64,
    /// The same for the theorem's F on both sides: the prediction.
    pub predicted: f64,
    /// The permutation null's mean.
    pub null: f64,
}

/// One minimised table: its report, its rows at the clean views ([`clean_rows`]) and the
/// theory it was compared with (what [`pair`] reads the prediction from).
#[derive(Debug, Clone)]
pub struct Solved {
    /// The scores.
    pub report: TableReport,
    /// The table at the clean view of every augmented state, `[n_m, d]`.
    pub rows: Matrix,
    /// The modality's theory (F of the same view kind).
    pub theory: ModalityTheory,
}

/// Minimises L for one modality, view kind and start, and scores the table (see
/// [`TableReport`]).
pub fn solve(
    world: &SceneWorld,
    m: Modality,
    kind: ViewKind,
    d: usize,
    start: Start,
    loss: &PopulationLoss,
    solver: &Solver,
) -> Result<Solved> {
    let model = view_model(world, m, kind)?;
    let theory = modality_theory(world, m, kind, d)?;
    let f0 = start_table(&model, &theory, start, solver.seed);
    let (f, curve) = minimise(&model, f0, loss, solver)?;
    let eval_dirs = random_directions(d, EVAL_SLICES, solver.seed ^ 0xe7a1, u64::MAX);
    let (terms, _) = loss_and_grad(&model, &f, loss, &eval_dirs)?;
    let rows = clean_rows(&model, &f);
    let cmp = compare_to_theory(&rows, &theory)?;
    Ok(Solved {
        report: TableReport {
            lambda: loss.lambda,
            modality: m,
            kind,
            start,
            terms,
            curve,
            cka: cmp.cka,
            sin_theta: cmp.sin_theta_op,
            variance: variance_shares(&rows, &theory)?,
            variance_of_f: variance_shares(&theory.f, &theory)?,
        },
        rows,
        theory,
    })
}

/// Pairs an image and a text table at the demo's paired views (one nuisance per side and
/// state, drawn from `seed`), with the prediction's pair (F on both sides) beside it. The
/// image table's report names the pair (weight, view kind, start).
pub fn pair(world: &SceneWorld, image: &Solved, text: &Solved, seed: u64) -> Result<PairReport> {
    let (vi, vt) = paired_views(world, paired_seed(seed));
    let at = |t: &Solved, views| {
        select_rows(
            t.rows.as_ref(),
            &augmented_indices(world, t.theory.modality, views),
        )
    };
    let learned = crate::experiments::demo::alignment(&at(image, &vi), &at(text, &vt), 10, seed)?;
    let predicted = crate::experiments::demo::alignment(
        &predicted_rows(world, &image.theory, &vi),
        &predicted_rows(world, &text.theory, &vt),
        10,
        seed,
    )?;
    let of = &image.report;
    Ok(PairReport {
        lambda: of.lambda,
        kind: of.kind,
        start: of.start,
        mutual_knn: learned.mutual_knn,
        predicted: predicted.mutual_knn,
        null: learned.mutual_knn_null[0],
    })
}

/// The experiment's settings (`prh-native experiment sigreg-population --set key=value`).
/// The world, d, the batch (N groups x V views) and SIGReg's quadrature are the demo's
/// ([`crate::experiments::demo::DemoConfig`]), so the expectation is that of the loss the
/// demo's SIGReg runs train on.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PopulationConfig {
    /// The demo's seed (its world and evaluation draws).
    pub seed: u64,
    /// The quick demo's world and settings (72 states, d = 8) instead of the full one.
    pub quick: bool,
    /// Adam steps per table.
    pub steps: usize,
    /// Adam's peak rate (cosine decay to 0).
    pub lr: f64,
    /// SIGReg directions drawn per step.
    pub slices: usize,
    /// SIGReg weights: the first is the demo's (0.05); any others are a diagnostic.
    pub lambdas: Vec<f64>,
    /// Weight of the finite-batch bias (1: the expected minibatch loss, what training
    /// minimises; 0: the population statistic).
    pub bias: f64,
    /// The view kinds.
    pub kinds: Vec<ViewKind>,
    /// The starts, each a full set of tables.
    pub starts: Vec<Start>,
}

impl Default for PopulationConfig {
    fn default() -> Self {
        PopulationConfig {
            seed: 0,
            quick: false,
            steps: 3000,
            lr: 0.01,
            slices: 64,
            lambdas: vec![0.05],
            bias: 1.0,
            kinds: vec![ViewKind::Good, ViewKind::Bad],
            starts: vec![Start::Theorem, Start::Random],
        }
    }
}

impl PopulationConfig {
    /// Parses the settings (defaults, then `overrides`), validated.
    pub fn from_overrides(overrides: &[String]) -> Result<Self> {
        let cfg: PopulationConfig =
            crate::config::parse_toml("sigreg-population settings", "", overrides)?;
        let bad = |what: &str| Err(Error::invalid(format!("sigreg-population: {what}")));
        if cfg.steps == 0 || cfg.slices == 0 {
            return bad(&format!(
                "steps and slices must be positive, got {} and {}",
                cfg.steps, cfg.slices
            ));
        }
        if !(cfg.lr > 0.0 && cfg.lr.is_finite()) {
            return bad(&format!("lr must be a positive number, got {}", cfg.lr));
        }
        if cfg.lambdas.is_empty() || cfg.lambdas.iter().any(|l| !(*l > 0.0 && l.is_finite())) {
            return bad(&format!(
                "lambdas must be positive numbers, got {:?}",
                cfg.lambdas
            ));
        }
        if !(0.0..=1.0).contains(&cfg.bias) {
            return bad(&format!("bias must lie in [0, 1], got {}", cfg.bias));
        }
        if cfg.kinds.is_empty() || cfg.kinds.contains(&ViewKind::NextToken) || cfg.starts.is_empty()
        {
            return bad("kinds must name good and/or bad views, and starts at least one start");
        }
        Ok(cfg)
    }
}

/// Every table and pair of one experiment.
#[derive(Debug, Clone, Serialize)]
pub struct PopulationReport {
    /// The settings.
    pub config: PopulationConfig,
    /// The expected loss (lambda is each table's).
    pub loss: PopulationLoss,
    /// d.
    pub d: usize,
    /// Every table, in the order lambda, kind, start, image then text.
    pub tables: Vec<TableReport>,
    /// Every pair, in the same order.
    pub pairs: Vec<PairReport>,
}

/// Runs the experiment: for every weight, view kind and start, the image and text tables
/// (on two threads), scored and paired. `tick` hears each finished pair.
pub fn run(cfg: &PopulationConfig, mut tick: impl FnMut(&PairReport)) -> Result<PopulationReport> {
    let demo = if cfg.quick {
        crate::experiments::demo::DemoConfig::quick(cfg.seed)
    } else {
        crate::experiments::demo::DemoConfig::full(cfg.seed)
    };
    let world = SceneWorld::new(demo.image.world.clone())?;
    let d = demo.d();
    let base = PopulationLoss {
        lambda: cfg.lambdas[0],
        batch: demo.image.views.batch_size,
        views: demo.image.views.views,
        bias: cfg.bias,
        t_max: demo.image.loss.t_max,
        knots: demo.image.loss.knots,
    };
    let solver = Solver {
        steps: cfg.steps,
        lr: cfg.lr,
        slices: cfg.slices,
        seed: cfg.seed,
    };
    let (mut tables, mut pairs) = (Vec::new(), Vec::new());
    for &lambda in &cfg.lambdas {
        let loss = PopulationLoss {
            lambda,
            ..base.clone()
        };
        for &kind in &cfg.kinds {
            for &start in &cfg.starts {
                let one = |m| solve(&world, m, kind, d, start, &loss, &solver);
                let (image, text) = std::thread::scope(|s| {
                    let h = s.spawn(|| one(Modality::Image));
                    let text = one(Modality::Text);
                    (h.join(), text)
                });
                let image = image.map_err(|_| {
                    Error::invalid("sigreg-population: a solver thread panicked".to_string())
                })??;
                let text = text?;
                let p = pair(&world, &image, &text, cfg.seed)?;
                tick(&p);
                tables.extend([image.report, text.report]);
                pairs.push(p);
            }
        }
    }
    Ok(PopulationReport {
        config: cfg.clone(),
        loss: base,
        d,
        tables,
        pairs,
    })
}

/// The report's markdown: per weight and view kind, each start's pair beside the
/// prediction, and each table's loss, distance to F and variance per factor.
pub fn markdown(r: &PopulationReport) -> String {
    let mut md = String::from(
        "# SIGReg's own optimum on the scene world\n\n\
         A free (tabular) encoder of views per modality minimises the *expected* SIGReg \
         training loss (invariance + lambda x the expectation of SIGReg's minibatch \
         statistic), exact over the views; only SIGReg's directions are sampled. \
         Scored as the demo scores a trained encoder: mutual 10-NN of image vs text at \
         paired clean views (all states) beside the theorem's prediction (F on both \
         sides) and the permutation null; each table's CKA and sin-theta to F at the \
         clean views, and the share of its variance in each factor's eigenspace of K.\n\n",
    );
    md += &format!(
        "Batch N = {} groups x V = {} views, d = {}, SIGReg quadrature t_max = {}, {} knots; \
         finite-batch bias weight {}; Adam {} steps, peak rate {}, {} directions a step; \
         final losses on {} fixed directions.\n\n",
        r.loss.batch,
        r.loss.views,
        r.d,
        r.loss.t_max,
        r.loss.knots,
        r.loss.bias,
        r.config.steps,
        r.config.lr,
        r.config.slices,
        EVAL_SLICES
    );
    md += "| lambda | views | start | mutual 10-NN | predicted | null | loss image / text | CKA to F image / text | sin-theta to F image / text |\n|---|---|---|---|---|---|---|---|---|\n";
    for (p, t) in r.pairs.iter().zip(r.tables.chunks_exact(2)) {
        md += &format!(
            "| {} | {} | {} | **{:.3}** | {:.3} | {:.3} | {:.4} / {:.4} | {:.3} / {:.3} | {:.2} / {:.2} |\n",
            p.lambda,
            p.kind.label(),
            start_name(p.start),
            p.mutual_knn,
            p.predicted,
            p.null,
            t[0].terms.total,
            t[1].terms.total,
            t[0].cka,
            t[1].cka,
            t[0].sin_theta,
            t[1].sin_theta
        );
    }
    md += "\nThe share of each table's variance per eigenspace of K (F's own shares first):\n\n\
           | lambda | views | modality | start | shape | colour | size | position | nuisance | interactions |\n\
           |---|---|---|---|---|---|---|---|---|---|\n";
    let row = |lambda: f64, t: &TableReport, what: &str, v: &[(&str, f64)]| {
        let cells: Vec<String> = v.iter().map(|x| format!("{:.3}", x.1)).collect();
        format!(
            "| {} | {} | {:?} | {} | {} |\n",
            lambda,
            t.kind.label(),
            t.modality,
            what,
            cells.join(" | ")
        )
    };
    for t in &r.tables {
        if t.start == r.config.starts[0] {
            md += &row(t.lambda, t, "F (the theorem)", &t.variance_of_f);
        }
        md += &row(t.lambda, t, start_name(t.start), &t.variance);
    }
    md
}

fn start_name(s: Start) -> &'static str {
    match s {
        Start::Random => "random table",
        Start::Theorem => "the theorem's F",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::SceneConfig;
    use crate::train::sigreg::sigreg_f64;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn small_world() -> SceneWorld {
        SceneWorld::new(SceneConfig {
            cardinality: [2, 3, 2, 2],
            nuisance: [2, 2],
            ..SceneConfig::demo(3)
        })
        .unwrap()
    }

    fn cfg(bias: f64) -> PopulationLoss {
        PopulationLoss {
            lambda: 0.05,
            batch: 8,
            views: 4,
            bias,
            t_max: 3.0,
            knots: 17,
        }
    }

    /// Each latent's views are a distribution, and P(x) sums to 1.
    #[test]
    fn views_are_distributions() {
        let w = small_world();
        for kind in [ViewKind::Good, ViewKind::Bad] {
            let vm = view_model(&w, Modality::Image, kind).unwrap();
            for views in &vm.views_of {
                let s: f64 = views.iter().map(|v| v.1).sum();
                assert!((s - 1.0).abs() < 1e-12, "{s}");
            }
            let total: f64 = vm.view_p.iter().sum();
            assert!((total - 1.0).abs() < 1e-12, "{total}");
        }
    }

    /// The analytic gradient equals central differences (relative 1e-5) for both betas.
    #[test]
    fn gradient_matches_finite_differences() {
        let w = small_world();
        let vm = view_model(&w, Modality::Text, ViewKind::Bad).unwrap();
        let th = modality_theory(&w, Modality::Text, ViewKind::Bad, 4).unwrap();
        let f = start_table(&vm, &th, Start::Random, 1);
        let dirs = random_directions(4, 5, 2, 0);
        for bias in [0.0, 1.0] {
            let c = cfg(bias);
            let (_, g) = loss_and_grad(&vm, &f, &c, &dirs).unwrap();
            for &(x, j) in &[(0, 0), (7, 3), (vm.clean[5], 1), (vm.view_p.len() - 1, 2)] {
                let h = 1e-6;
                let (mut fp, mut fm) = (f.clone(), f.clone());
                fp[(x, j)] += h;
                fm[(x, j)] -= h;
                let lp = loss_and_grad(&vm, &fp, &c, &dirs).unwrap().0.total;
                let lm = loss_and_grad(&vm, &fm, &c, &dirs).unwrap().0.total;
                let fd = (lp - lm) / (2.0 * h);
                assert!(
                    (fd - g[(x, j)]).abs() <= 1e-5 * g[(x, j)].abs().max(1e-3),
                    "atom {x}, column {j}: finite difference {fd}, gradient {}",
                    g[(x, j)]
                );
            }
        }
    }

    /// The expected loss (beta = 1) is the mean of the sampled training loss: batches of N
    /// groups x V views drawn from the view model, invariance to the group mean and SIGReg
    /// per view ([`sigreg_f64`], training's statistic), on fixed directions. 40,000
    /// batches; the tolerance is 4 standard errors of their mean.
    #[test]
    fn expected_loss_is_the_mean_of_the_sampled_loss() {
        let w = small_world();
        let vm = view_model(&w, Modality::Image, ViewKind::Bad).unwrap();
        let d = 3;
        let th = modality_theory(&w, Modality::Image, ViewKind::Bad, d).unwrap();
        let f = start_table(&vm, &th, Start::Theorem, 0);
        let dirs = random_directions(d, 4, 9, 0);
        let c = cfg(1.0);
        let exact = loss_and_grad(&vm, &f, &c, &dirs).unwrap().0.total;
        let q = Quadrature::new(c.t_max, c.knots).unwrap();
        let cum = |p: &[(usize, f64)], u: f64| {
            let mut acc = 0.0;
            for &(i, pi) in p {
                acc += pi;
                if u < acc {
                    return i;
                }
            }
            p[p.len() - 1].0
        };
        let latents: Vec<(usize, f64)> = vm.latent_p.iter().copied().enumerate().collect();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let batches = 40_000;
        let (mut sum, mut sum2) = (0.0, 0.0);
        for _ in 0..batches {
            let mut z = vec![vec![0.0; c.batch * d]; c.views];
            let mut inv = 0.0;
            for gi in 0..c.batch {
                let l = cum(&latents, rng.random());
                let xs: Vec<usize> = (0..c.views)
                    .map(|_| cum(&vm.views_of[l], rng.random()))
                    .collect();
                for j in 0..d {
                    let mean = xs.iter().map(|&x| f[(x, j)]).sum::<f64>() / c.views as f64;
                    for (v, &x) in xs.iter().enumerate() {
                        z[v][gi * d + j] = f[(x, j)];
                        inv += (f[(x, j)] - mean).powi(2);
                    }
                }
            }
            let inv = inv / (c.views * c.batch * d) as f64;
            let sig: f64 = z
                .iter()
                .map(|zv| sigreg_f64(zv, c.batch, d, &dirs, &q).unwrap())
                .sum::<f64>()
                / c.views as f64;
            let l = inv + c.lambda * sig;
            sum += l;
            sum2 += l * l;
        }
        let mean = sum / batches as f64;
        let se = ((sum2 / batches as f64 - mean * mean) / batches as f64).sqrt();
        assert!(
            (mean - exact).abs() < 4.0 * se,
            "sampled mean {mean} (se {se}), expected {exact}"
        );
    }
}
