//! The scene world's theory per modality (paper §2) and how far a learned encoder is from
//! it: K's spectrum, gap and predicted representation F = D^-1/2 U_d of one modality under
//! one view kind ([`modality_theory`]), the renderings it is read at ([`augmented_views`],
//! [`paired_views`]), and the comparison of learned embeddings with F
//! ([`compare_to_theory`], [`TheoryProbe`] for tracking it during training).
//!
//! No tensors here: the training tasks and the demo hand in embeddings as rows of f64.

use crate::linalg::{Matrix, principal_angles, select_rows, svd};
use crate::scene::{Modality, SceneView, SceneWorld};
use crate::theory::spectrum::SpectrumSummary;
use crate::theory::theorem::analyse;
use crate::theory::view_kind::ViewKind;
use crate::{Error, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

/// A gap after d at or below this is zero: the top-d subspace is not unique.
pub const GAP_TOLERANCE: f64 = 1e-9;

/// One modality's kernel under one view kind: spectrum, gap and predicted representation.
#[derive(Debug, Clone, Serialize)]
pub struct ModalityTheory {
    /// Image or text.
    pub modality: Modality,
    /// Good or bad views.
    pub kind: ViewKind,
    /// Leading eigenvalues of K (descending, the trivial 1 first), `d + 6` of them.
    pub eigenvalues: Vec<f64>,
    /// lambda_{d+1} - lambda_{d+2}: the gap after the top d non-trivial eigenvalues (paper
    /// §2: the optimum is unique up to rotation when it is positive).
    pub gap: f64,
    /// Whether the gap is positive (above [`GAP_TOLERANCE`]): without it the top-d
    /// subspace, and so the predicted representation, is not unique, and `f` / `u` are one
    /// arbitrary basis of a window that ends inside a degenerate eigenspace.
    pub unique: bool,
    /// p(z, u) over augmented states.
    #[serde(skip)]
    pub p: Vec<f64>,
    /// F = D^-1/2 U_d over augmented states (z, u), trivial direction skipped: `[n_m, d]`.
    #[serde(skip)]
    pub f: Matrix,
    /// U_d, the orthonormal top-d non-trivial eigenvectors: `[n_m, d]`.
    #[serde(skip)]
    pub u: Matrix,
    /// The factors K is a Kronecker product of, in [`SceneWorld::pi`]'s index order
    /// (shape, colour, size, position, then the nuisance): what names its eigenspaces
    /// ([`eigenspace_shares`]).
    #[serde(skip)]
    pub modes: Vec<KernelMode>,
}

/// One factor of the augmented state as K sees it. Pi's factor `Pi_i[a, b] = p_a (v_i
/// d_ab + (1 - v_i) p_b)` gives `K_i = v_i I + (1 - v_i) sqrt(p) sqrt(p)^T`: eigenvalue 1
/// on sqrt(p) (the trivial direction) and v_i on its orthogonal complement (c_i - 1
/// directions). K = (x)_i K_i, so each of K's eigenspaces is the product of the
/// complements of a subset S of the factors with the trivial directions of the rest,
/// eigenvalue prod_{i in S} v_i.
#[derive(Debug, Clone)]
pub struct KernelMode {
    /// The factor's name (`shape`, ..., and `background` or `template` for the nuisance).
    pub name: &'static str,
    /// sqrt(p_i) over the factor's values.
    pub sqrt_p: Vec<f64>,
    /// v_i: the factor's visibility (the nuisance's is 0 under good views, whose two
    /// views never share it).
    pub visibility: f64,
}

/// The kernel's factors for modality `m` under `kind` views, in [`SceneWorld::pi`]'s order.
pub fn kernel_modes(world: &SceneWorld, m: Modality, kind: ViewKind) -> Vec<KernelMode> {
    let vis = world.visibility(m);
    let sqrt = |p: &[f64]| p.iter().map(|x| x.sqrt()).collect::<Vec<f64>>();
    let mut modes: Vec<KernelMode> = (0..4)
        .map(|f| KernelMode {
            name: crate::scene::FACTORS[f],
            sqrt_p: sqrt(&world.factor_probs[f]),
            visibility: vis.factors[f],
        })
        .collect();
    modes.push(KernelMode {
        name: match m {
            Modality::Image => "background",
            Modality::Text => "template",
        },
        sqrt_p: sqrt(world.q(m)),
        visibility: world.nuisance_visibility(m, kind),
    });
    modes
}

/// How much of a subspace lies in one of K's eigenspaces (see [`KernelMode`]).
#[derive(Debug, Clone, Serialize)]
pub struct EigenspaceShare {
    /// The factors whose non-trivial directions the eigenspace combines, e.g. `["shape"]`
    /// or `["colour", "template"]` (their products: interactions).
    pub factors: Vec<&'static str>,
    /// Its eigenvalue, prod_{i in S} v_i.
    pub eigenvalue: f64,
    /// Its dimension, prod_{i in S} (c_i - 1).
    pub dim: usize,
    /// Dimensions of the prediction span(U_d) in it: ||P_S U_d||_F^2.
    pub predicted: f64,
    /// Dimensions of the learned top-d subspace in it: ||P_S Q||_F^2, Q the orthonormal
    /// basis that sin-theta is measured with ([`compare_to_theory`]).
    pub learned: f64,
}

/// `P_S x` in place for one vector over augmented states: along each factor i, keep the
/// component off sqrt(p_i) (i in S, bit i of `subset`) or the one on it (i not in S).
///
/// # Shapes
/// `x [prod c_i]`, index in [`SceneWorld::pi`]'s mixed radix (last factor fastest)
fn project_eigenspace(x: &mut [f64], modes: &[KernelMode], subset: usize) {
    let mut stride = x.len();
    for (i, mode) in modes.iter().enumerate() {
        let c = mode.sqrt_p.len();
        stride /= c;
        let block = c * stride;
        let complement = subset & (1 << i) != 0;
        for outer in (0..x.len()).step_by(block) {
            for inner in 0..stride {
                let at = |k: usize| outer + k * stride + inner;
                let dot: f64 = (0..c).map(|k| mode.sqrt_p[k] * x[at(k)]).sum();
                for k in 0..c {
                    let on = mode.sqrt_p[k] * dot;
                    x[at(k)] = if complement { x[at(k)] - on } else { on };
                }
            }
        }
    }
}

/// Which of K's eigenspaces the learned subspace and the prediction occupy: for every
/// non-empty subset S of the factors, ||P_S Q||_F^2 and ||P_S U_d||_F^2 (P_S the
/// orthogonal projector on the eigenspace S, [`KernelMode`]), largest eigenvalue first.
/// The projectors sum to the identity, so each column sums to the subspace's dimension
/// (the trivial S = {} holds nothing of a p-centred subspace). Where sin-theta says
/// *that* a predicted direction is missed, this says *which* one, and what took its place.
///
/// # Shapes
/// `q [n_m, r]` orthonormal (the learned subspace, D^1/2-weighted and p-centred),
/// `theory.u [n_m, d]`
pub fn eigenspace_shares(q: &Matrix, theory: &ModalityTheory) -> Result<Vec<EigenspaceShare>> {
    let modes = &theory.modes;
    let n: usize = modes.iter().map(|m| m.sqrt_p.len()).product();
    if modes.is_empty() || q.nrows() != n || theory.u.nrows() != n {
        return Err(Error::invalid(format!(
            "eigenspace shares: the kernel's factors give {n} augmented states, the \
             subspaces have {} and {} rows",
            q.nrows(),
            theory.u.nrows()
        )));
    }
    let share = |basis: &Matrix, subset: usize| -> f64 {
        (0..basis.ncols())
            .map(|j| {
                let mut x: Vec<f64> = (0..n).map(|i| basis[(i, j)]).collect();
                project_eigenspace(&mut x, modes, subset);
                x.iter().map(|v| v * v).sum::<f64>()
            })
            .sum()
    };
    let mut out: Vec<EigenspaceShare> = (1..1usize << modes.len())
        .map(|subset| {
            let inside: Vec<&KernelMode> = (0..modes.len())
                .filter(|i| subset & (1 << i) != 0)
                .map(|i| &modes[i])
                .collect();
            EigenspaceShare {
                factors: inside.iter().map(|m| m.name).collect(),
                eigenvalue: inside.iter().map(|m| m.visibility).product(),
                dim: inside.iter().map(|m| m.sqrt_p.len() - 1).product(),
                predicted: share(&theory.u, subset),
                learned: share(q, subset),
            }
        })
        .filter(|s| s.dim > 0)
        .collect();
    out.sort_by(|a, b| b.eigenvalue.total_cmp(&a.eigenvalue));
    Ok(out)
}

/// The share of a representation's variance in each single-factor eigenspace of K (a
/// factor's or the nuisance's own directions, [`KernelMode`]) and in all their products
/// together: `||P_S X_w||_F^2 / ||X_w||_F^2` with `X_w = D^1/2 (X - 1 mu_p^T)` as in
/// [`compare_to_theory`]. Where [`eigenspace_shares`] counts the dimensions a subspace
/// holds, this weighs them by how much variance they carry, which is what a neighbour
/// search sees. The shares sum to 1.
///
/// # Shapes
/// `x [n_m, e]` -> one `(name, share)` per factor, then `("interactions", share)`
pub fn variance_shares(x: &Matrix, theory: &ModalityTheory) -> Result<Vec<(&'static str, f64)>> {
    let xw = weighted_centred(x, theory)?;
    let columns: Vec<Vec<f64>> = (0..xw.ncols())
        .map(|j| (0..xw.nrows()).map(|i| xw[(i, j)]).collect())
        .collect();
    let total: f64 = columns.iter().flatten().map(|v| v * v).sum();
    if total <= 0.0 {
        return Err(Error::invalid(
            "variance shares of a constant representation".to_string(),
        ));
    }
    let share = |subset: usize| -> f64 {
        columns
            .iter()
            .map(|c| {
                let mut c = c.clone();
                project_eigenspace(&mut c, &theory.modes, subset);
                c.iter().map(|v| v * v).sum::<f64>()
            })
            .sum::<f64>()
            / total
    };
    let mut out: Vec<(&'static str, f64)> = theory
        .modes
        .iter()
        .enumerate()
        .map(|(i, mode)| (mode.name, share(1 << i)))
        .collect();
    let singles: f64 = out.iter().map(|s| s.1).sum();
    // Rounding can leave a p-centred product-free representation at -1e-17.
    out.push(("interactions", (1.0 - singles).max(0.0)));
    Ok(out)
}

/// One line naming what a learned subspace holds: the eigenspaces of the prediction with
/// the dimensions held of each (`shape 2.98/3`), then those outside it that hold at least
/// 0.05 of a dimension (`outside F: shape x position 0.84`).
pub fn describe_shares(shares: &[EigenspaceShare]) -> String {
    let name = |s: &EigenspaceShare| s.factors.join(" x ");
    let inside: Vec<String> = shares
        .iter()
        .filter(|s| s.predicted >= 0.5)
        .map(|s| format!("{} {:.2}/{:.0}", name(s), s.learned, s.predicted))
        .collect();
    let outside: Vec<String> = shares
        .iter()
        .filter(|s| s.predicted < 0.5 && s.learned >= 0.05)
        .map(|s| format!("{} {:.2}", name(s), s.learned))
        .collect();
    let mut line = inside.join(", ");
    if !outside.is_empty() {
        line += &format!(" | outside F: {}", outside.join(", "));
    }
    line
}

/// K's spectrum, gap and F = D^-1/2 U_d for one modality and view kind, through the theory
/// engine ([`crate::theory::theorem::analyse`] on [`SceneWorld::pi`]; paper §2).
///
/// # Shapes
/// -> f, u `[|Z| |U_m|, d]`
pub fn modality_theory(
    world: &SceneWorld,
    m: Modality,
    kind: ViewKind,
    d: usize,
) -> Result<ModalityTheory> {
    let (kernel, spectrum) = analyse(&world.pi(m, kind))?;
    let summary: SpectrumSummary = spectrum.summary(d);
    let n = kernel.p.len();
    if d == 0 || d + 1 >= n {
        return Err(Error::invalid(format!(
            "d = {d}: the representation dimension must be at least 1 and below the {n} \
             augmented states less the trivial direction (at most {})",
            n.saturating_sub(2)
        )));
    }
    let gap = spectrum
        .gap(d, true)?
        .ok_or_else(|| Error::invalid(format!("d = {d} leaves no eigenvalue after the window")))?;
    Ok(ModalityTheory {
        modality: m,
        kind,
        eigenvalues: summary.eigenvalues.iter().take(d + 6).copied().collect(),
        gap,
        unique: gap > GAP_TOLERANCE,
        f: spectrum.embedding(d, true)?,
        u: spectrum.top(d, true)?,
        p: kernel.p,
        modes: kernel_modes(world, m, kind),
    })
}

/// One uncorrupted rendering per augmented state (z, u) of modality m, in
/// [`SceneWorld::pi`]'s index order (s = z |U_m| + u); style seeds drawn from `seed`.
pub fn augmented_views(world: &SceneWorld, m: Modality, seed: u64) -> Vec<SceneView> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let nu = world.q(m).len();
    (0..world.n_augmented(m))
        .map(|s| SceneView::full(world.state(s / nu), s % nu, rng.random()))
        .collect()
}

/// The paired evaluation set: for every state z, one uncorrupted picture and one caption,
/// each with its own nuisance drawn from q_m (pairs exist only here, never in training).
pub fn paired_views(world: &SceneWorld, seed: u64) -> (Vec<SceneView>, Vec<SceneView>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..world.n_states())
        .map(|i| {
            let z = world.state(i);
            let ui = world.sample_nuisance(Modality::Image, &mut rng);
            let ut = world.sample_nuisance(Modality::Text, &mut rng);
            (
                SceneView::full(z, ui, rng.random()),
                SceneView::full(z, ut, rng.random()),
            )
        })
        .unzip()
}

/// Seed of the paired evaluation set ([`paired_views`]) of a run seeded `seed`: the
/// demo's evaluation and every scene run's embeddings export draw the same renderings.
pub fn paired_seed(seed: u64) -> u64 {
    (seed ^ 0xe7a1).wrapping_add(2)
}

/// The augmented index (z, u) of each view of modality `m`, in [`SceneWorld::pi`]'s
/// order (s = z |U_m| + u): the row of any representation over augmented states that the
/// view reads.
///
/// # Shapes
/// `views [n]` -> `[n]`
pub fn augmented_indices(world: &SceneWorld, m: Modality, views: &[SceneView]) -> Vec<usize> {
    let nu = world.q(m).len();
    views
        .iter()
        .map(|v| world.state_index(&v.state) * nu + v.nuisance)
        .collect()
}

/// The predicted representation read at given views: row r = F[(z_r, u_r), :].
///
/// # Shapes
/// `views [n]` -> `[n, d]`
pub fn predicted_rows(world: &SceneWorld, theory: &ModalityTheory, views: &[SceneView]) -> Matrix {
    select_rows(
        theory.f.as_ref(),
        &augmented_indices(world, theory.modality, views),
    )
}

/// How far a learned representation is from the predicted F (paper §2).
#[derive(Debug, Clone, Serialize)]
pub struct LearnedVsTheory {
    /// p-weighted linear CKA between learned X and F over augmented states, in [0, 1].
    pub cka: f64,
    /// ||sin Theta|| (op) between X's top-d principal subspace and span(F), p-weighted.
    pub sin_theta_op: f64,
    /// ||sin Theta||_F.
    pub sin_theta_fro: f64,
    /// The principal angles, degrees, ascending.
    pub principal_angles_deg: Vec<f64>,
    /// Which of K's eigenspaces the learned top-d subspace and F occupy
    /// ([`eigenspace_shares`]; those holding at least [`SHARE_SHOWN`] of a dimension of
    /// either).
    pub eigenspaces: Vec<EigenspaceShare>,
}

/// Compares learned embeddings of every augmented state (rows in [`SceneWorld::pi`]'s
/// order) with the prediction. Both are weighted by p, the distribution the encoder was
/// trained on: X_w = D^1/2 (X - 1 mu_p^T), F_w = D^1/2 F = U_d (already p-centred,
/// being orthogonal to sqrt(p)). Linear CKA = ||X_w^T U||_F^2 / (||X_w^T X_w||_F
/// ||U^T U||_F), written here rather than via [`crate::measure::cka`] because that one centres
/// and weights rows uniformly.
///
/// # Shapes
/// `x [n_m, e]` -> scalars
pub fn compare_to_theory(x: &Matrix, theory: &ModalityTheory) -> Result<LearnedVsTheory> {
    let (cka, basis) = cka_and_basis(x, theory)?;
    let (sin_theta_op, sin_theta_fro, principal_angles_deg) = principal_angles(&basis, &theory.u)?;
    Ok(LearnedVsTheory {
        cka,
        sin_theta_op,
        sin_theta_fro,
        principal_angles_deg,
        // The eigenspaces either subspace occupies: of the 2^5 - 1, most hold nothing.
        eigenspaces: eigenspace_shares(&basis, theory)?
            .into_iter()
            .filter(|s| s.predicted >= SHARE_SHOWN || s.learned >= SHARE_SHOWN)
            .collect(),
    })
}

/// The share of a dimension below which [`LearnedVsTheory::eigenspaces`] leaves an
/// eigenspace out (of either subspace).
pub const SHARE_SHOWN: f64 = 0.005;

/// `X_w = D^1/2 (X - 1 mu_p^T)`, `mu_p = X^T p`: rows weighted and centred by the
/// distribution the encoder was trained on.
///
/// # Shapes
/// `x [n_m, e]` -> `[n_m, e]`
fn weighted_centred(x: &Matrix, theory: &ModalityTheory) -> Result<Matrix> {
    let (n, e) = (x.nrows(), x.ncols());
    let p = &theory.p;
    if n != p.len() {
        return Err(Error::invalid(format!(
            "learned embeddings have {n} rows, the world has {} augmented states",
            p.len()
        )));
    }
    let mu: Vec<f64> = (0..e)
        .map(|j| (0..n).map(|i| p[i] * x[(i, j)]).sum())
        .collect();
    Ok(Matrix::from_fn(n, e, |i, j| {
        p[i].sqrt() * (x[(i, j)] - mu[j])
    }))
}

/// [`compare_to_theory`]'s CKA and the learned top-d subspace's orthonormal basis
/// (D^1/2-weighted, p-centred).
///
/// # Shapes
/// `x [n_m, e]` -> basis `[n_m, min(d, e)]`
fn cka_and_basis(x: &Matrix, theory: &ModalityTheory) -> Result<(f64, Matrix)> {
    let e = x.ncols();
    let xw = weighted_centred(x, theory)?;
    let u = &theory.u;
    let cross = (xw.transpose() * u).norm_l2().powi(2);
    let cka = cross / ((xw.transpose() * &xw).norm_l2() * (u.transpose() * u).norm_l2());
    let d = u.ncols().min(e);
    Ok((cka, svd(xw.as_ref())?.u.subcols(0, d).to_owned()))
}

/// Seed of the renderings at which a run of modality `m` seeded `seed` is compared with
/// its prediction ([`augmented_views`]); the demo's final comparison uses the same ones.
pub fn probe_seed(seed: u64, m: Modality) -> u64 {
    let base = seed ^ 0xe7a1;
    match m {
        Modality::Image => base,
        Modality::Text => base.wrapping_add(1),
    }
}

/// The distance of a training run to the theorem's prediction, measured as it trains:
/// one uncorrupted rendering per augmented state and the modality's [`ModalityTheory`].
/// The scene tasks score their model with it at each evaluation (`run.eval_every`), so
/// metrics.jsonl holds the convergence curve.
#[derive(Debug, Clone)]
pub struct TheoryProbe {
    /// The renderings, in [`SceneWorld::pi`]'s order.
    pub views: Vec<SceneView>,
    /// What they are compared with.
    pub theory: ModalityTheory,
}

impl TheoryProbe {
    /// The probe of modality `m` under `kind` views in dimension `d` (seeded by the run
    /// seed, [`probe_seed`]).
    pub fn new(
        world: &SceneWorld,
        m: Modality,
        kind: ViewKind,
        d: usize,
        seed: u64,
    ) -> Result<Self> {
        Ok(TheoryProbe {
            views: augmented_views(world, m, probe_seed(seed, m)),
            theory: modality_theory(world, m, kind, d)?,
        })
    }

    /// Embeddings of [`TheoryProbe::views`] against the prediction: everything
    /// [`compare_to_theory`] measures (what a finished run reports).
    ///
    /// # Shapes
    /// `rows`: `n_m` rows of `e` numbers
    pub fn compare(&self, rows: &[Vec<f64>]) -> Result<LearnedVsTheory> {
        compare_to_theory(&rows_matrix(rows), &self.theory)
    }

    /// Scores embeddings of [`TheoryProbe::views`]: `cka_to_theory` and
    /// `sin_theta_to_theory` ([`compare_to_theory`]).
    ///
    /// # Shapes
    /// `rows`: `n_m` rows of `e` numbers -> two named scores
    pub fn score(&self, rows: &[Vec<f64>]) -> Result<Vec<(String, f64)>> {
        // The two scores only: the eigenspace shares are for the final comparison.
        let (cka, basis) = cka_and_basis(&rows_matrix(rows), &self.theory)?;
        let (sin_theta_op, _, _) = principal_angles(&basis, &self.theory.u)?;
        Ok(vec![
            ("cka_to_theory".to_string(), cka),
            ("sin_theta_to_theory".to_string(), sin_theta_op),
        ])
    }
}

/// Rows of equal length as a matrix.
///
/// # Shapes
/// `rows`: `n` rows of `e` -> `[n, e]`
fn rows_matrix(rows: &[Vec<f64>]) -> Matrix {
    let e = rows.first().map_or(0, Vec::len);
    Matrix::from_fn(rows.len(), e, |i, j| rows[i][j])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::SceneConfig;

    /// F is whitened under p (F^T D F = I), so each factor's eigenspace holds variance in
    /// proportion to the directions F takes from it (closed form: shape 3/11, size 2/11,
    /// position 0 under the demo world's bad views), nothing in interactions; and the
    /// shares are invariant to a rotation and a scaling of the columns.
    #[test]
    fn variance_shares_of_f_are_its_dimensions() {
        let w = SceneWorld::new(SceneConfig::demo(0)).unwrap();
        let th = modality_theory(&w, Modality::Image, ViewKind::Bad, 11).unwrap();
        let shares = variance_shares(&th.f, &th).unwrap();
        let want = [3.0, 3.0, 2.0, 0.0, 3.0, 0.0].map(|v| v / 11.0);
        for ((name, got), want) in shares.iter().zip(want) {
            assert!((got - want).abs() < 1e-9, "{name}: {got} against {want}");
        }
        let (c, sn) = (0.6f64, 0.8f64);
        let rotated = Matrix::from_fn(th.f.nrows(), 11, |i, j| match j {
            0 => 3.0 * (c * th.f[(i, 0)] - sn * th.f[(i, 1)]),
            1 => 3.0 * (sn * th.f[(i, 0)] + c * th.f[(i, 1)]),
            _ => 3.0 * th.f[(i, j)],
        });
        for (a, b) in shares.iter().zip(variance_shares(&rotated, &th).unwrap()) {
            assert!((a.1 - b.1).abs() < 1e-9, "{}: {} against {}", a.0, a.1, b.1);
        }
    }

    /// A world whose window ends inside a degenerate eigenspace: position's visibility
    /// 0.64 equals the shape x colour product 0.8 x 0.8, so lambda_d = lambda_{d+1} and
    /// uniqueness does not hold; the demo's world has a gap.
    #[test]
    fn a_zero_gap_is_reported_as_no_uniqueness() {
        let mut c = SceneConfig::quick(0);
        c.image.factors = [0.8, 0.8, 0.76, 0.64];
        let w = SceneWorld::new(c).unwrap();
        let d = 8;
        let t = modality_theory(&w, Modality::Image, ViewKind::Good, d).unwrap();
        assert!(!t.unique && t.gap.abs() <= GAP_TOLERANCE, "gap {}", t.gap);
        let w = SceneWorld::new(SceneConfig::quick(0)).unwrap();
        let t = modality_theory(&w, Modality::Image, ViewKind::Good, d).unwrap();
        assert!(t.unique && t.gap > 0.05, "gap {}", t.gap);
    }

    /// d must leave room for an eigenvalue after the window.
    #[test]
    fn d_at_or_above_the_states_is_refused() {
        let w = SceneWorld::new(SceneConfig::quick(0)).unwrap();
        let n = w.n_augmented(Modality::Text);
        for d in [0, n - 1, n, n + 5] {
            let e = modality_theory(&w, Modality::Text, ViewKind::Good, d)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(
                e.contains(&format!("d = {d}")) && e.contains("augmented states"),
                "{e}"
            );
        }
    }

    /// Each projector P_S maps onto eigenvectors of the exact K (built from Pi, not from
    /// the factors) with eigenvalue prod_{i in S} v_i, the projectors sum to the identity,
    /// and F occupies the eigenspaces its eigenvalues name: for the quick world's good
    /// views the single factors, for bad views the nuisance instead of the weakest factor.
    /// Tolerance 1e-9 (f64 sums over a few hundred states).
    #[test]
    fn eigenspaces_are_k_eigenspaces_and_name_what_f_holds() {
        let w = SceneWorld::new(SceneConfig::quick(3)).unwrap();
        for (m, kind) in [
            (Modality::Image, ViewKind::Good),
            (Modality::Text, ViewKind::Bad),
        ] {
            let pi = w.pi(m, kind);
            let n = pi.nrows();
            let rows: Vec<f64> = (0..n).map(|a| (0..n).map(|b| pi[(a, b)]).sum()).collect();
            let k = Matrix::from_fn(n, n, |a, b| pi[(a, b)] / (rows[a] * rows[b]).sqrt());
            let modes = kernel_modes(&w, m, kind);
            let mut rng = ChaCha8Rng::seed_from_u64(9);
            let x: Vec<f64> = (0..n).map(|_| rng.random::<f64>() - 0.5).collect();
            let mut total = vec![0.0; n];
            for subset in 0..1usize << modes.len() {
                let mut y = x.clone();
                project_eigenspace(&mut y, &modes, subset);
                let lambda: f64 = (0..modes.len())
                    .filter(|i| subset & (1 << i) != 0)
                    .map(|i| modes[i].visibility)
                    .product();
                for a in 0..n {
                    let ky: f64 = (0..n).map(|b| k[(a, b)] * y[b]).sum();
                    assert!(
                        (ky - lambda * y[a]).abs() < 1e-9,
                        "{m:?} {kind:?} S = {subset}"
                    );
                    total[a] += y[a];
                }
            }
            for a in 0..n {
                assert!((total[a] - x[a]).abs() < 1e-9);
            }
            let d = 8;
            let t = modality_theory(&w, m, kind, d).unwrap();
            let c = compare_to_theory(&t.f, &t).unwrap();
            let held: f64 = c.eigenspaces.iter().map(|s| s.learned).sum();
            assert!((held - d as f64).abs() < 1e-9, "{held}");
            let named: Vec<(String, usize)> = c
                .eigenspaces
                .iter()
                .filter(|s| s.predicted > 1e-6)
                .map(|s| {
                    assert!((s.predicted - s.learned).abs() < 1e-9);
                    assert!((s.predicted - s.dim as f64).abs() < 1e-9, "{s:?}");
                    (s.factors.join(" x "), s.dim)
                })
                .collect();
            let total: usize = named.iter().map(|(_, k)| k).sum();
            assert_eq!(total, d, "{named:?}");
            let has = |f: &str| named.iter().any(|(n, _)| n == f);
            match kind {
                ViewKind::Good => assert!(!named.iter().any(|(n, _)| n.contains(" x "))),
                _ => assert!(has("template"), "{named:?}"),
            }
        }
    }

    /// What a subspace holds does not depend on its basis: X and X A (A invertible) give
    /// the same shares, to 1e-9.
    #[test]
    fn eigenspace_shares_are_invariant_to_an_invertible_map() {
        let w = SceneWorld::new(SceneConfig::quick(1)).unwrap();
        let t = modality_theory(&w, Modality::Image, ViewKind::Good, 6).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let x = Matrix::from_fn(t.p.len(), 6, |_, _| rng.random::<f64>());
        let a = Matrix::from_fn(
            6,
            6,
            |i, j| if i == j { 2.0 } else { 0.0 } + rng.random::<f64>(),
        );
        let (s1, s2) = (
            compare_to_theory(&x, &t).unwrap().eigenspaces,
            compare_to_theory(&(&x * &a), &t).unwrap().eigenspaces,
        );
        for (u, v) in s1.iter().zip(&s2) {
            assert!((u.learned - v.learned).abs() < 1e-9, "{u:?} {v:?}");
        }
        let line = describe_shares(&s1);
        assert!(line.starts_with("shape "), "{line}");
    }

    /// The probe scores F itself as reached (CKA 1, sin-theta 0).
    #[test]
    fn the_probe_scores_the_prediction_as_reached() {
        let w = SceneWorld::new(SceneConfig::quick(2)).unwrap();
        let p = TheoryProbe::new(&w, Modality::Image, ViewKind::Bad, 8, 0).unwrap();
        let rows: Vec<Vec<f64>> = (0..p.theory.f.nrows())
            .map(|i| (0..8).map(|j| p.theory.f[(i, j)]).collect())
            .collect();
        let s = p.score(&rows).unwrap();
        assert_eq!(s[0].0, "cka_to_theory");
        assert!((s[0].1 - 1.0).abs() < 1e-9 && s[1].1 < 1e-6, "{s:?}");
        assert_eq!(p.views.len(), w.n_augmented(Modality::Image));
    }
}
