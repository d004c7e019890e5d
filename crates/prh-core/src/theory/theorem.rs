//! The theorem, checked numerically (paper §2).
//!
//! 1. *Same Pi, one rotation.* Two modalities whose positive pairs induce the same K over
//!    states have optimal representations F_1 = F_2 Q with Q orthogonal (Q absorbs the
//!    solver's free choice of basis inside degenerate eigenspaces). [`cross_modal`] fits Q by
//!    Procrustes on rows paired by state; its residual is round-off when the gap after the
//!    window is positive.
//! 2. *Different Pi, bounded misalignment.* For K_1, K_2 over the same index set,
//!    [`compare`] measures sin Theta between the two top-d eigenspaces and states two bounds:
//!    - Davis–Kahan (Stewart & Sun, Thm V.3.6): if U_1's eigenvalues (of K_1) lie in [a, b]
//!      and K_2's eigenvalues outside its window lie outside (a - delta, b + delta), then
//!      ||sin Theta|| <= ||(K_2 - K_1) U_1|| / delta in every unitarily invariant norm.
//!      With the window at the top, delta = lambda_d(K_1) - lambda_{d+1}(K_2) (the issue's
//!      formula). When the window skips the trivial pair, K_2's trivial eigenvalue (1) must
//!      also clear the window: delta = min(lambda_1(K_2) - lambda_2(K_1), lambda_{d+1}(K_1) -
//!      lambda_{d+2}(K_2)), unless both kernels share p, in which case sqrt(p) is a common
//!      eigenvector, the problem deflates to its orthogonal complement and only the second
//!      term remains.
//!    - Yu–Wang–Samworth (2015, Thm 2), population gap only: ||sin Theta||_F <=
//!      2 min(sqrt(d) ||E||_op, ||E||_F) / min(lambda_{r-1}(K_1) - lambda_r(K_1),
//!      lambda_s(K_1) - lambda_{s+1}(K_1)) for the window r..s (lambda_0 = +inf,
//!      lambda_{n+1} = -inf); it also bounds the operator norm since ||.||_op <= ||.||_F.
//!
//! A gap delta <= 0 (numerically: <= [`GAP_TOL`]) makes a bound inapplicable: it is reported
//! as `None` ("n/a"), never as a number. An infinite gap (window = everything) gives 0.
//! Both sides are computed in floating point: when the subspaces coincide exactly (e.g. good
//! views vs a light mixture, whose extra eigenvalues stay below the window) the measured
//! angle and the bound are both round-off (~1e-15) and may come out in either order; the
//! property test allows 1e-10.

use crate::linalg::procrustes;
use crate::linalg::{Matrix, fro_norm, op_norm};
use crate::theory::kernel::Kernel;
use crate::theory::pair_graph::{Pairing, pair_matrix};
use crate::theory::spectrum::{Solver, Spectrum, SpectrumSummary};
use crate::theory::world::World;
use crate::{Error, Result};
use serde::Serialize;

/// Measured subspace distance and its two bounds, for one pair of kernels.
#[derive(Debug, Clone, Serialize)]
pub struct SubspaceComparison {
    /// Window size.
    pub d: usize,
    /// Whether the window starts after the trivial pair.
    pub skip_trivial: bool,
    /// ||sin Theta(U_1, U_2)||_op = ||(I - U_2 U_2^T) U_1||_op.
    pub sin_theta_op: f64,
    /// ||sin Theta(U_1, U_2)||_F.
    pub sin_theta_fro: f64,
    /// ||K_2 - K_1||_op.
    pub e_op: f64,
    /// ||K_2 - K_1||_F.
    pub e_fro: f64,
    /// Davis–Kahan separation delta (may be <= 0: bound not applicable).
    pub davis_kahan_gap: f64,
    /// ||(K_2 - K_1) U_1||_op / delta; None when delta <= 0.
    pub davis_kahan_bound: Option<f64>,
    /// ||(K_2 - K_1) U_1||_F / delta; None when delta <= 0.
    pub davis_kahan_bound_fro: Option<f64>,
    /// Yu–Wang–Samworth population gap of K_1 (may be 0: bound not applicable).
    pub yws_gap: f64,
    /// 2 min(sqrt(d) ||E||_op, ||E||_F) / gap; None when gap <= 0.
    pub yws_bound: Option<f64>,
    /// Whether both kernels have the same p (to 1e-12), so sqrt(p) is a common eigenvector.
    pub shared_trivial: bool,
}

/// Gaps at or below this are treated as zero: eigenvalues of an n x n kernel carry an
/// absolute error of about n * 1e-16, so a computed gap of 1e-16 is a tie, not a separation
/// (dividing by it would print a meaningless "bound").
pub const GAP_TOL: f64 = 1e-10;

/// A bound num / gap: None when the gap is not above [`GAP_TOL`], 0 when it is infinite.
fn bound(num: f64, gap: f64) -> Option<f64> {
    if gap > GAP_TOL {
        Some(if gap.is_infinite() { 0.0 } else { num / gap })
    } else {
        None
    }
}

/// Compares the top-d eigenspaces of K_1 and K_2 (see the module docs for the conventions).
///
/// # Shapes
/// kernels `[n, n]` with spectra of the same n
pub fn compare(
    k1: &Kernel,
    s1: &Spectrum,
    k2: &Kernel,
    s2: &Spectrum,
    d: usize,
    skip_trivial: bool,
) -> Result<SubspaceComparison> {
    let e_op = op_norm(k1.difference(k2)?.as_ref())?;
    compare_given_op_norm(k1, s1, k2, s2, d, skip_trivial, e_op)
}

/// [`compare`] with ||K_2 - K_1||_op supplied by the caller, for kernels whose difference
/// has a norm in closed form: the eigenvalues of an n x n difference are the only O(n^3)
/// part of [`compare`] once the spectra are known. Kronecker-factored kernels (every view
/// kind, [`crate::theory::view_spectrum`]) have ||K_W ⊗ (K_B2 - K_B1)||_op = ||K_W||_op
/// ||K_B2 - K_B1||_op. `e_op` must be that norm: it enters the Yu–Wang–Samworth bound and
/// the reported `e_op` as given.
///
/// # Shapes
/// kernels `[n, n]` with spectra of the same n
pub fn compare_given_op_norm(
    k1: &Kernel,
    s1: &Spectrum,
    k2: &Kernel,
    s2: &Spectrum,
    d: usize,
    skip_trivial: bool,
    e_op: f64,
) -> Result<SubspaceComparison> {
    if !(e_op >= 0.0 && e_op.is_finite()) {
        return Err(Error::invalid(format!(
            "||K2 - K1||_op must be a finite number >= 0, got {e_op}"
        )));
    }
    if k1.n() != k2.n() {
        return Err(Error::invalid(format!(
            "kernels of different sizes cannot be compared: {} vs {} states",
            k1.n(),
            k2.n()
        )));
    }
    // E = K_2 - K_1 column by column through slices (what Kernel::difference computes):
    // per-entry indexing made this O(n^2) pass a visible part of the browser's recompute.
    let mut e = Matrix::zeros(k1.n(), k1.n());
    for j in 0..k1.n() {
        let (a, b) = (k1.k.col_as_slice(j), k2.k.col_as_slice(j));
        for ((x, a), b) in e.col_as_slice_mut(j).iter_mut().zip(a).zip(b) {
            *x = b - a;
        }
    }
    let (w1, w2) = (s1.window(d, skip_trivial)?, s2.window(d, skip_trivial)?);
    if w1 != w2 {
        return Err(Error::invalid(
            "the two spectra place the trivial pair differently; compare without --skip-trivial",
        ));
    }
    let (u1, u2) = (s1.top(d, skip_trivial)?, s2.top(d, skip_trivial)?);
    // (I - U2 U2^T) U1, computed directly (accurate for small angles, unlike sqrt(1 - cos^2)).
    let resid = &u1 - &u2 * (u2.transpose() * &u1);
    let eu = &e * &u1;
    let (v1, v2) = (&s1.values, &s2.values);
    let after2 = v2.get(w1.end).copied().unwrap_or(f64::NEG_INFINITY);
    let after1 = v1.get(w1.end).copied().unwrap_or(f64::NEG_INFINITY);
    let (top1, bottom1) = (v1[w1.start], v1[w1.end - 1]);
    let max_dp =
        k1.p.iter()
            .zip(&k2.p)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
    let shared_trivial = max_dp <= 1e-12;
    let mut dk_gap = bottom1 - after2;
    let mut yws_gap = bottom1 - after1;
    if w1.start > 0 {
        // The window is not at the top: the columns above it (the trivial pair) must be
        // separated too, unless deflation by the common eigenvector sqrt(p) removes them.
        if !shared_trivial {
            dk_gap = dk_gap.min(v2[w1.start - 1] - top1);
        }
        yws_gap = yws_gap.min(v1[w1.start - 1] - top1);
    }
    let e_fro = fro_norm(e.as_ref());
    let (eu_op, eu_fro) = (op_norm(eu.as_ref())?, fro_norm(eu.as_ref()));
    Ok(SubspaceComparison {
        d,
        skip_trivial,
        sin_theta_op: op_norm(resid.as_ref())?,
        sin_theta_fro: fro_norm(resid.as_ref()),
        e_op,
        e_fro,
        davis_kahan_gap: dk_gap,
        davis_kahan_bound: bound(eu_op, dk_gap),
        davis_kahan_bound_fro: bound(eu_fro, dk_gap),
        yws_gap,
        yws_bound: bound(2.0 * ((d as f64).sqrt() * e_op).min(e_fro), yws_gap),
        shared_trivial,
    })
}

/// Kernel and spectrum of a Pi in one call.
///
/// # Shapes
/// `pi [n, n]`
pub fn analyse(pi: &Matrix) -> Result<(Kernel, Spectrum)> {
    analyse_with(pi, Solver::Full)
}

/// [`analyse`] with a choice of eigensolver ([`Spectrum::compute`]).
///
/// # Shapes
/// `pi [n, n]`
pub fn analyse_with(pi: &Matrix, solver: Solver) -> Result<(Kernel, Spectrum)> {
    let k = Kernel::new(pi.as_ref())?;
    let s = Spectrum::compute(&k, solver)?;
    Ok((k, s))
}

/// Good vs bad (or any two view kinds) of one modality of one world: both spectra and the
/// subspace comparison, ready to print or serialise.
#[derive(Debug, Clone, Serialize)]
pub struct ViewComparison {
    /// World name.
    pub world: String,
    /// Modality name.
    pub modality: String,
    /// Labels of the two view kinds, e.g. ["good", "bad"].
    pub views: [String; 2],
    /// Spectrum and gaps of the first kernel (the reference K_1).
    pub first: SpectrumSummary,
    /// Spectrum and gaps of the second kernel K_2.
    pub second: SpectrumSummary,
    /// sin Theta and the bounds.
    pub subspace: SubspaceComparison,
}

/// Builds Pi for views `a` and `b` over modality `m`'s observations, and compares them
/// with [`compare`] (K_1 from `a`).
///
/// # Shapes
/// world with n states, modality with k nuisances: kernels `[n k, n k]`
pub fn compare_views(
    world: &World,
    m: usize,
    a: Pairing,
    b: Pairing,
    d: usize,
    skip_trivial: bool,
) -> Result<ViewComparison> {
    let (k1, s1) = analyse(&pair_matrix(world, m, a)?)?;
    let (k2, s2) = analyse(&pair_matrix(world, m, b)?)?;
    Ok(ViewComparison {
        world: world.name.clone(),
        modality: world.modality(m)?.name.clone(),
        views: [a.label(), b.label()],
        first: s1.summary(d),
        second: s2.summary(d),
        subspace: compare(&k1, &s1, &k2, &s2, d, skip_trivial)?,
    })
}

/// Good views vs bad views of the world's first modality (see [`compare_views`]).
/// This is the call behind the demo's "predicted" column: spectra, gaps, sin-theta and bounds.
///
/// # Shapes
/// world with n states, first modality with k nuisances: kernels `[n k, n k]`
pub fn compare_good_bad(world: &World, d: usize, skip_trivial: bool) -> Result<ViewComparison> {
    compare_views(world, 0, Pairing::Good, Pairing::Bad, d, skip_trivial)
}

/// The rotation theorem across two modalities, measured.
#[derive(Debug, Clone, Serialize)]
pub struct RotationCheck {
    /// Modality names (a, b).
    pub modalities: [String; 2],
    /// View labels (a, b).
    pub views: [String; 2],
    /// Window size.
    pub d: usize,
    /// sqrt(E ||F_a Q - F_b||^2) over pairs (z, u_a, u_b) ~ p(z) q_a(u_a) q_b(u_b).
    pub residual: f64,
    /// residual / sqrt(E ||F_b||^2) = residual / sqrt(d) (F_b is whitened).
    pub relative_residual: f64,
    /// Spectral gap after the window, for a and b (None if the window reaches the end).
    pub gaps: [Option<f64>; 2],
}

/// Rows of two modalities' optimal representations paired by state, and the fitted Q.
#[derive(Debug, Clone)]
pub struct CrossModal {
    /// The numbers.
    pub check: RotationCheck,
    /// Q `[d, d]` with F_a Q ~ F_b.
    pub q: Matrix,
    /// F_a rows, one per pair (z, u_a, u_b): `[n k_a k_b, d]`.
    pub fa: Matrix,
    /// F_b rows, paired with `fa`: `[n k_a k_b, d]`.
    pub fb: Matrix,
    /// Pair weights p(z) q_a(u_a) q_b(u_b) `[n k_a k_b]`.
    pub weights: Vec<f64>,
    /// The state of each pair `[n k_a k_b]`.
    pub states: Vec<usize>,
}

/// Fits Q = argmin_{Q^T Q = I} sum_pairs w ||F_a(z, u_a) Q - F_b(z, u_b)||^2 between modality
/// `a.0` under views `a.1` and modality `b.0` under views `b.1` (Procrustes on rows scaled by
/// sqrt(w)). For good views on both sides F depends on z only and the residual is round-off;
/// with bad views F also encodes the nuisance, which the other modality cannot match.
///
/// # Shapes
/// world with n states, modalities with k_a, k_b nuisances -> q `[d, d]`, fa/fb `[n k_a k_b, d]`
pub fn cross_modal(
    world: &World,
    a: (usize, Pairing),
    b: (usize, Pairing),
    d: usize,
    skip_trivial: bool,
) -> Result<CrossModal> {
    let (_, sa) = analyse(&pair_matrix(world, a.0, a.1)?)?;
    let (_, sb) = analyse(&pair_matrix(world, b.0, b.1)?)?;
    cross_modal_from(world, (a.0, a.1, &sa), (b.0, b.1, &sb), d, skip_trivial)
}

/// [`cross_modal`] on spectra already computed (the playground keeps them between slider
/// moves): `a.2`, `b.2` are the spectra of K for modality `a.0` under views `a.1` and
/// modality `b.0` under views `b.1`.
///
/// # Shapes
/// world with n states, modalities with k_a, k_b nuisances -> q `[d, d]`, fa/fb `[n k_a k_b, d]`
pub fn cross_modal_from(
    world: &World,
    a: (usize, Pairing, &Spectrum),
    b: (usize, Pairing, &Spectrum),
    d: usize,
    skip_trivial: bool,
) -> Result<CrossModal> {
    let (qa, qb) = (&world.modality(a.0)?.q, &world.modality(b.0)?.q);
    let (ea, eb) = (
        a.2.embedding(d, skip_trivial)?,
        b.2.embedding(d, skip_trivial)?,
    );
    let (ka, kb) = (qa.len(), qb.len());
    let rows = world.n() * ka * kb;
    let (mut weights, mut states, mut ia, mut ib) = (
        Vec::with_capacity(rows),
        Vec::with_capacity(rows),
        Vec::with_capacity(rows),
        Vec::with_capacity(rows),
    );
    for z in 0..world.n() {
        for (ua, qua) in qa.iter().enumerate() {
            for (ub, qub) in qb.iter().enumerate() {
                weights.push(world.p[z] * qua * qub);
                states.push(z);
                ia.push(z * ka + ua);
                ib.push(z * kb + ub);
            }
        }
    }
    let fa = Matrix::from_fn(rows, d, |r, j| ea[(ia[r], j)]);
    let fb = Matrix::from_fn(rows, d, |r, j| eb[(ib[r], j)]);
    let sw: Vec<f64> = weights.iter().map(|w| w.sqrt()).collect();
    let wa = Matrix::from_fn(rows, d, |r, j| fa[(r, j)] * sw[r]);
    let wb = Matrix::from_fn(rows, d, |r, j| fb[(r, j)] * sw[r]);
    let fit = procrustes::fit(wa.as_ref(), wb.as_ref())?;
    let check = RotationCheck {
        modalities: [
            world.modality(a.0)?.name.clone(),
            world.modality(b.0)?.name.clone(),
        ],
        views: [a.1.label(), b.1.label()],
        d,
        residual: fit.residual,
        relative_residual: fit.relative_residual,
        gaps: [a.2.gap(d, skip_trivial)?, b.2.gap(d, skip_trivial)?],
    };
    Ok(CrossModal {
        check,
        q: fit.q,
        fa,
        fb,
        weights,
        states,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theory::pair_graph::{from_adjacency, random_pi};
    use crate::theory::world::{Preset, PresetSpec};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn sorted_desc(mut v: Vec<f64>) -> Vec<f64> {
        v.sort_by(|a, b| b.total_cmp(a));
        v
    }

    fn assert_close(a: &[f64], b: &[f64], tol: f64) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() < tol, "{x} vs {y}\n{a:?}\n{b:?}");
        }
    }

    /// Reference values from numpy (LAPACK eigh), /tmp script:
    /// ```python
    /// import numpy as np
    /// A1 = np.array([[4,2,0,1,0],[2,3,1,0,0],[0,1,5,2,1],[1,0,2,2,3],[0,0,1,3,6]], float)
    /// A2 = np.array([[5,1,0,1,1],[1,3,2,0,0],[0,2,4,2,0],[1,0,2,3,2],[1,0,0,2,5]], float)
    /// def kern(A):
    ///     P = A / A.sum(); p = P.sum(1); return P / np.sqrt(np.outer(p, p)), p
    /// K1, p1 = kern(A1); K2, p2 = kern(A2)
    /// l1, V1 = np.linalg.eigh(K1); l1, V1 = l1[::-1], V1[:, ::-1]
    /// l2, V2 = np.linalg.eigh(K2); l2, V2 = l2[::-1], V2[:, ::-1]
    /// E = K2 - K1
    /// for s, d in [(0, 2), (1, 2)]:
    ///     U1, U2 = V1[:, s:s+d], V2[:, s:s+d]
    ///     sin = np.sqrt(np.clip(1 - np.linalg.svd(U2.T @ U1, compute_uv=False)**2, 0, None))
    ///     dk = l1[s+d-1] - l2[s+d]
    ///     if s > 0: dk = min(dk, l2[s-1] - l1[s])
    ///     yg = l1[s+d-1] - l1[s+d]
    ///     if s > 0: yg = min(yg, l1[s-1] - l1[s])
    ///     EU = E @ U1
    ///     print(sin.max(), np.linalg.norm(sin), np.linalg.norm(EU, 2)/dk, np.linalg.norm(EU)/dk,
    ///           2*min(np.sqrt(d)*np.linalg.norm(E, 2), np.linalg.norm(E))/yg)
    /// ```
    #[test]
    fn reference_values_match_numpy() {
        let a1 = [
            [4., 2., 0., 1., 0.],
            [2., 3., 1., 0., 0.],
            [0., 1., 5., 2., 1.],
            [1., 0., 2., 2., 3.],
            [0., 0., 1., 3., 6.],
        ];
        let a2 = [
            [5., 1., 0., 1., 1.],
            [1., 3., 2., 0., 0.],
            [0., 2., 4., 2., 0.],
            [1., 0., 2., 3., 2.],
            [1., 0., 0., 2., 5.],
        ];
        let pi = |a: [[f64; 5]; 5]| {
            from_adjacency(Matrix::from_fn(5, 5, |i, j| a[i][j]).as_ref()).unwrap()
        };
        let (k1, s1) = analyse(&pi(a1)).unwrap();
        let (k2, s2) = analyse(&pi(a2)).unwrap();
        assert_close(
            &s1.values,
            &[
                1.0,
                0.7955582435719276,
                0.48827382856403206,
                0.23667478793345345,
                -0.04352273308528654,
            ],
            1e-9,
        );
        assert_close(
            &s2.values,
            &[
                1.0,
                0.7251736962053357,
                0.5645846219516902,
                0.3123311648421375,
                0.02291051700083658,
            ],
            1e-9,
        );
        let expect = [
            (
                false,
                [
                    0.8968098633916284,
                    0.8974522855265602,
                    1.066216235886201,
                    1.0710868251378782,
                    2.7959785596041624,
                ],
            ),
            (
                true,
                [
                    0.3992664856059985,
                    0.40486465696676033,
                    1.607982876574639,
                    1.981381199514196,
                    4.2024714083536905,
                ],
            ),
        ];
        for (skip, e) in expect {
            let c = compare(&k1, &s1, &k2, &s2, 2, skip).unwrap();
            assert!(!c.shared_trivial);
            let got = [
                c.sin_theta_op,
                c.sin_theta_fro,
                c.davis_kahan_bound.unwrap(),
                c.davis_kahan_bound_fro.unwrap(),
                c.yws_bound.unwrap(),
            ];
            assert_close(&got, &e, 1e-9);
        }
    }

    #[test]
    fn rotation_theorem_holds_to_round_off_for_a_shared_pi() {
        // Modality 2 renders the same states in another order (g_2 = g_1 composed with a
        // permutation): same Pi up to relabelling, so F_1 = F_2 Q after re-pairing rows.
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for trial in 0..5 {
            let n = 20 + 5 * trial;
            let pi1 = random_pi(n, 0.3, 100 + trial as u64);
            let mut perm: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                perm.swap(i, rng.random_range(0..=i));
            }
            let pi2 = Matrix::from_fn(n, n, |i, j| pi1[(perm[i], perm[j])]);
            let (_, s1) = analyse(&pi1).unwrap();
            let (_, s2) = analyse(&pi2).unwrap();
            let d = 3 + trial;
            assert!(
                s1.gap(d, true).unwrap().unwrap() > 1e-6,
                "needs a gap for uniqueness"
            );
            let f1 = s1.embedding(d, true).unwrap();
            let f2 = s2.embedding(d, true).unwrap();
            // Row i of f2 is state perm[i]: bring it back to state order.
            let mut f2_by_state = Matrix::zeros(n, d);
            for i in 0..n {
                for j in 0..d {
                    f2_by_state[(perm[i], j)] = f2[(i, j)];
                }
            }
            let fit = procrustes::fit(f1.as_ref(), f2_by_state.as_ref()).unwrap();
            assert!(
                fit.relative_residual < 1e-9,
                "residual {}",
                fit.relative_residual
            );
        }
    }

    #[test]
    fn two_modalities_align_under_good_views_and_not_under_bad_views() {
        let world = World::preset(&PresetSpec {
            preset: Preset::Scenes,
            n: 12,
            seed: 3,
            ..PresetSpec::default()
        })
        .unwrap();
        let good = cross_modal(&world, (0, Pairing::Good), (1, Pairing::Good), 4, true).unwrap();
        assert!(good.check.relative_residual < 1e-9, "{:?}", good.check);
        let qtq = good.q.transpose() * &good.q;
        assert!((qtq - Matrix::identity(4, 4)).norm_l2() < 1e-9);
        let bad = cross_modal(&world, (0, Pairing::Bad), (1, Pairing::Bad), 4, true).unwrap();
        assert!(bad.check.relative_residual > 0.1, "{:?}", bad.check);
    }

    /// Grid world K_W has eigenvalues 1 - rho + rho m / 3 with multiplicity
    /// sum over attribute sets A with |A| = m of prod_{a not in A} (n_a - 1).
    fn grid_kw_eigenvalues(shape: [usize; 3], rho: f64) -> Vec<f64> {
        let mut out = Vec::new();
        for mask in 0..8u32 {
            let m = mask.count_ones() as f64;
            let mult: usize = (0..3)
                .filter(|a| mask & (1 << a) == 0)
                .map(|a| shape[a] - 1)
                .product();
            out.extend(std::iter::repeat_n(1.0 - rho + rho * m / 3.0, mult));
        }
        sorted_desc(out)
    }

    #[test]
    fn view_spectra_have_their_closed_forms() {
        let spec = PresetSpec {
            preset: Preset::Grid,
            n: 18,
            nuisances: 3,
            relatedness: 0.6,
            ..PresetSpec::default()
        };
        let world = World::preset(&spec).unwrap();
        let kw = grid_kw_eigenvalues(crate::theory::world::grid_shape(18), 0.6);
        let u = 3;
        let eig = |v: Pairing| {
            analyse(&pair_matrix(&world, 0, v).unwrap())
                .unwrap()
                .1
                .values
        };
        let good: Vec<f64> = kw
            .iter()
            .copied()
            .chain(std::iter::repeat_n(0.0, kw.len() * (u - 1)))
            .collect();
        assert_close(&eig(Pairing::Good), &sorted_desc(good), 1e-12);
        let bad: Vec<f64> = kw.iter().flat_map(|&l| std::iter::repeat_n(l, u)).collect();
        assert_close(&eig(Pairing::Bad), &sorted_desc(bad), 1e-12);
        let alpha = 0.3;
        let mix: Vec<f64> = kw
            .iter()
            .flat_map(|&l| std::iter::once(l).chain(std::iter::repeat_n(alpha * l, u - 1)))
            .collect();
        assert_close(&eig(Pairing::Mix { alpha }), &sorted_desc(mix), 1e-12);
        let tau = 0.4;
        // (1 - tau) K_W + tau sqrt(p) sqrt(p)^T keeps 1 and scales the rest; ⊗ I_U repeats.
        let nt: Vec<f64> = kw
            .iter()
            .enumerate()
            .flat_map(|(i, &l)| std::iter::repeat_n(if i == 0 { 1.0 } else { (1.0 - tau) * l }, u))
            .collect();
        assert_close(
            &eig(Pairing::NextToken { drift: tau }),
            &sorted_desc(nt),
            1e-12,
        );
    }

    #[test]
    fn bounds_are_never_below_the_measured_distance() {
        let mut rng = ChaCha8Rng::seed_from_u64(2024);
        let (mut applicable, mut cases) = (0, 0);
        let mut check = |c: &SubspaceComparison, what: &str| {
            cases += 1;
            let slack = 1e-10;
            for (b, m, name) in [
                (c.davis_kahan_bound, c.sin_theta_op, "DK op"),
                (c.davis_kahan_bound_fro, c.sin_theta_fro, "DK fro"),
                (c.yws_bound, c.sin_theta_fro, "YWS fro"),
                (c.yws_bound, c.sin_theta_op, "YWS op"),
            ] {
                if let Some(b) = b {
                    applicable += 1;
                    assert!(
                        b + slack >= m,
                        "{name} bound {b} < measured {m} ({what}): {c:?}"
                    );
                }
            }
        };
        // Unrelated marginals: Pi_2 = (1 - eps) Pi_1 + eps Pi_random.
        for trial in 0..1000u64 {
            let n = rng.random_range(3..30);
            let eps = [1e-3, 1e-2, 0.1, 0.5, 1.0][rng.random_range(0..5)];
            let pi1 = random_pi(n, rng.random_range(0.1..0.9), trial);
            let pi2 = &pi1 * (1.0 - eps) + random_pi(n, 0.5, 10_000 + trial) * eps;
            let (k1, s1) = analyse(&pi1).unwrap();
            let (k2, s2) = analyse(&pi2).unwrap();
            let skip = rng.random_bool(0.5);
            let d = rng.random_range(1..n - usize::from(skip));
            check(
                &compare(&k1, &s1, &k2, &s2, d, skip).unwrap(),
                &format!("random n={n} eps={eps} d={d}"),
            );
        }
        // Shared marginals (deflated Davis–Kahan when skipping): good vs mixtures of presets.
        for trial in 0..200u64 {
            let preset = Preset::ALL[rng.random_range(0..4)];
            let spec = PresetSpec {
                preset,
                n: rng.random_range(4..14),
                seed: trial,
                nuisances: rng.random_range(1..4),
                ..PresetSpec::default()
            };
            let world = World::preset(&spec).unwrap();
            let alpha = rng.random_range(0.0..1.0);
            let nobs = world.n() * world.modalities[0].q.len();
            let skip = rng.random_bool(0.5);
            let d = rng.random_range(1..nobs.max(2) - usize::from(skip)).max(1);
            let v =
                compare_views(&world, 0, Pairing::Good, Pairing::Mix { alpha }, d, skip).unwrap();
            assert!(v.subspace.shared_trivial);
            check(&v.subspace, &format!("{spec:?} alpha={alpha} d={d}"));
        }
        assert!(
            applicable > cases,
            "too few cases with a positive gap: {applicable} of {cases}"
        );
    }
}
