//! The spectrum of K for each kind of views, from its two Kronecker factors (paper §2-3).
//!
//! Every view kind is Pi = A ⊗ B (A over states, B over nuisances; table in
//! [`crate::theory::pair_graph`]) with marginal p_A ⊗ p_B, so K = K_A ⊗ K_B, and the eigenpairs of
//! a Kronecker product of symmetric matrices are the products of the factors' eigenpairs:
//! (K_A ⊗ K_B)(u ⊗ v) = (K_A u) ⊗ (K_B v) = (lambda mu) u ⊗ v, and the n k products of two
//! orthonormal bases are an orthonormal basis (Horn & Johnson, *Topics in Matrix Analysis*,
//! Thm 4.2.12). For n states and k nuisances that is two decompositions of order n and k
//! instead of one of order n k (~9 (n k)^3 flops); good, bad and mixed views all have
//! A = W, so K_W's decomposition is computed once per world and an alpha change costs
//! O((n k)^2) (writing the n k product vectors). The playground's spectral lab relies on
//! this to redo a 400-observation world within an interaction's 100 ms.
//!
//! Same numbers as [`Spectrum::new`] on the assembled K: eigenvalues to round-off (tests:
//! 1e-12), and the same eigenspaces. Inside a repeated eigenvalue the basis is not unique
//! and the two routes pick different ones: the full solver an arbitrary one, this route the
//! products of K_W's basis. Only a window that splits such a space (gap 0: the bounds of
//! [`crate::theory::theorem::compare`] are then "n/a") sees the difference, in sin Theta.
//! ||K_2 - K_1||_op also factorises when both kernels share K_A: K_A ⊗ (K_B2 - K_B1) has
//! singular values the products of the factors' (Horn & Johnson Thm 4.2.15).

use crate::linalg::{Matrix, op_norm};
use crate::theory::kernel::Kernel;
use crate::theory::pair_graph::Pairing;
use crate::theory::spectrum::{Spectrum, TRIVIAL_TOL, sign_columns};
use crate::theory::theorem::{SubspaceComparison, compare_given_op_norm};
use crate::theory::world::World;
use crate::{Error, Result};

/// The Kronecker factors (A, B) of [`crate::theory::pair_graph::pair_matrix`]: Pi = A ⊗ B exactly
/// (the same floating-point products, so `kron(A, B)` equals `pair_matrix` bit for bit).
///
/// # Shapes
/// world with n states, modality `m` with k nuisances -> A `[n, n]`, B `[k, k]`
pub fn view_factors(world: &World, m: usize, views: Pairing) -> Result<(Matrix, Matrix)> {
    if let Pairing::Mix { alpha: x } | Pairing::NextToken { drift: x } = views
        && !(0.0..=1.0).contains(&x)
    {
        return Err(Error::invalid(format!(
            "{}: the weight must be in [0, 1]",
            views.label()
        )));
    }
    let q = &world.modality(m)?.q;
    let k = q.len();
    let outer = Matrix::from_fn(k, k, |a, b| q[a] * q[b]);
    let diag = Matrix::from_fn(k, k, |a, b| if a == b { q[a] } else { 0.0 });
    let w = world.affinity.clone();
    Ok(match views {
        Pairing::Good => (w, outer),
        Pairing::Bad => (w, diag),
        Pairing::Mix { alpha } => (w, &outer * (1.0 - alpha) + &diag * alpha),
        Pairing::NextToken { drift } => {
            let p = &world.p;
            let a = Matrix::from_fn(p.len(), p.len(), |i, j| {
                (1.0 - drift) * w[(i, j)] + drift * p[i] * p[j]
            });
            (a, diag)
        }
    })
}

/// Spectrum of K_A ⊗ K_B from the spectra of K_A and K_B (module docs): eigenvalues
/// lambda_i mu_j in decreasing order (ties in the order (i, j)), eigenvectors u_i ⊗ v_j,
/// signed like [`Spectrum::new`]'s, with sqrt(p_A ⊗ p_B) first. Both spectra must have the
/// trivial pair first (as [`Spectrum::new`] builds them).
///
/// # Shapes
/// `a` of n_a states, `b` of n_b -> values `[n_a n_b]`, vectors `[n_a n_b, n_a n_b]`
pub fn kron_spectrum(a: &Spectrum, b: &Spectrum) -> Result<Spectrum> {
    if a.trivial_index != 0 || b.trivial_index != 0 {
        return Err(Error::invalid(format!(
            "Kronecker spectrum: both factors need the trivial pair first, got indices {} and {}",
            a.trivial_index, b.trivial_index
        )));
    }
    let (na, nb) = (a.n(), b.n());
    if na == 0 || nb == 0 || a.vectors.shape() != (na, na) || b.vectors.shape() != (nb, nb) {
        return Err(Error::invalid(format!(
            "Kronecker spectrum: factors need n eigenvalues and n x n vectors, got {na} with [{}, {}] and {nb} with [{}, {}]",
            a.vectors.nrows(),
            a.vectors.ncols(),
            b.vectors.nrows(),
            b.vectors.ncols()
        )));
    }
    let n = na * nb;
    let value = |(i, j): (usize, usize)| a.values[i] * b.values[j];
    let mut order: Vec<(usize, usize)> =
        (0..na).flat_map(|i| (0..nb).map(move |j| (i, j))).collect();
    order.sort_by(|x, y| value(*y).total_cmp(&value(*x)));
    let values: Vec<f64> = order.iter().map(|&o| value(o)).collect();
    // The trivial pair (0, 0) goes first in the top eigenspace, as in Spectrum::new; a
    // product that ties with it (another component, or -1 x -1) may have sorted ahead.
    // (0, 0) is in `order` (both factors are non-empty), so the fallback is never taken.
    let pos = order.iter().position(|&o| o == (0, 0)).unwrap_or(0);
    if values[pos] < values[0] - TRIVIAL_TOL {
        return Err(Error::Numerical(format!(
            "Kronecker spectrum: the trivial eigenvalue {} is not the largest ({}); are both factors kernels?",
            values[pos], values[0]
        )));
    }
    order[..=pos].rotate_right(1);
    let p: Vec<f64> = (0..n).map(|r| a.p[r / nb] * b.p[r % nb]).collect();
    let s_norm = p.iter().sum::<f64>().sqrt();
    // Column by column through slices (no per-entry index arithmetic or bounds checks:
    // this loop writes (n k)^2 entries and is the bulk of an alpha change in the browser).
    let mut u = Matrix::zeros(n, n);
    for (c, &(i, j)) in order.iter().enumerate() {
        let col = u.col_as_slice_mut(c);
        if c == 0 {
            col.iter_mut()
                .zip(&p)
                .for_each(|(x, pr)| *x = pr.sqrt() / s_norm);
        } else {
            kron_vec(a.vectors.col_as_slice(i), b.vectors.col_as_slice(j), col);
        }
    }
    sign_columns(&mut u, 1);
    Ok(Spectrum {
        values,
        vectors: u,
        p,
        trivial_index: 0,
    })
}

/// out = x ⊗ y (out[i |y| + k] = x[i] y[k]).
///
/// # Shapes
/// `x [n]`, `y [k]`, `out [n k]`
fn kron_vec(x: &[f64], y: &[f64], out: &mut [f64]) {
    for (xi, chunk) in x.iter().zip(out.chunks_exact_mut(y.len())) {
        chunk.iter_mut().zip(y).for_each(|(o, yk)| *o = xi * yk);
    }
}

/// A ⊗ B for square A and B, equal to [`crate::theory::pair_graph::kron`] bit for bit (the same
/// products), written column by column: column j |B| + l is (column j of A) ⊗ (column l of B).
///
/// # Shapes
/// `a [n, n]`, `b [k, k]` -> `[n k, n k]`
fn kron_square(a: &Matrix, b: &Matrix) -> Matrix {
    let (na, nb) = (a.ncols(), b.ncols());
    let mut out = Matrix::zeros(na * nb, na * nb);
    for j in 0..na {
        for l in 0..nb {
            kron_vec(
                a.col_as_slice(j),
                b.col_as_slice(l),
                out.col_as_slice_mut(j * nb + l),
            );
        }
    }
    out
}

/// The spectrum of K_W, the state factor of good, bad and mixed views: compute it once per
/// world and pass it to [`analyse_views`].
///
/// # Shapes
/// world with n states -> `[n]` values, `[n, n]` vectors
pub fn state_spectrum(world: &World) -> Result<Spectrum> {
    Spectrum::new(&Kernel::new(world.affinity.as_ref())?)
}

/// One view kind of one modality, analysed through its factors.
#[derive(Debug, Clone)]
pub struct ViewAnalysis {
    /// Modality index.
    pub modality: usize,
    /// The views.
    pub views: Pairing,
    /// Pi = A ⊗ B over the observations `[n k, n k]` (equal to `pair_matrix`).
    pub pi: Matrix,
    /// K of `pi` `[n k, n k]`, as K_A ⊗ K_B (equal to `Kernel::new(pi)` to round-off).
    pub kernel: Kernel,
    /// Spectrum of K, from the factors.
    pub spectrum: Spectrum,
    /// K_B, the nuisance factor `[k, k]`.
    pub nuisance: Kernel,
}

/// Pi, K and the spectrum of K for `views` over modality `m`, the spectrum by
/// [`kron_spectrum`]. `states` is [`state_spectrum`] of this world (checked by its p); it is
/// the state factor of every view kind but next-token, whose factor (1 - tau) W + tau p p^T
/// is decomposed here.
///
/// # Shapes
/// world with n states, modality with k nuisances -> pi, kernel, spectrum of order n k
pub fn analyse_views(
    world: &World,
    m: usize,
    views: Pairing,
    states: &Spectrum,
) -> Result<ViewAnalysis> {
    let max_dp = states
        .p
        .iter()
        .zip(&world.p)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    if states.n() != world.n() || max_dp > 1e-12 {
        return Err(Error::invalid(format!(
            "state spectrum does not belong to world `{}` ({} states, max |p difference| {max_dp})",
            world.name,
            states.n()
        )));
    }
    let (a, b) = view_factors(world, m, views)?;
    let nuisance = Kernel::new(b.as_ref())?;
    let states_kernel = Kernel::new(a.as_ref())?;
    let spectrum = match views {
        Pairing::NextToken { .. } => {
            kron_spectrum(&Spectrum::new(&states_kernel)?, &Spectrum::new(&nuisance)?)?
        }
        _ => kron_spectrum(states, &Spectrum::new(&nuisance)?)?,
    };
    let pi = kron_square(&a, &b);
    // K of A ⊗ B is K_A ⊗ K_B with p = p_A ⊗ p_B: the same numbers as Kernel::new(pi) up to
    // round-off, exactly symmetric (a product of exactly symmetric factors), at a quarter
    // of the passes over (n k)^2 entries.
    let kernel = Kernel {
        k: kron_square(&states_kernel.k, &nuisance.k),
        p: (0..pi.nrows())
            .map(|r| states_kernel.p[r / b.nrows()] * nuisance.p[r % b.nrows()])
            .collect(),
    };
    Ok(ViewAnalysis {
        modality: m,
        views,
        pi,
        kernel,
        spectrum,
        nuisance,
    })
}

/// ||K_2 - K_1||_op of two analyses. Same modality, neither next-token: both are
/// K_W ⊗ K_B, so the norm is ||K_W||_op ||K_B2 - K_B1||_op = max_i |lambda_i(K_W)| times
/// a k x k norm. Otherwise the eigenvalues of the full difference.
///
/// # Shapes
/// analyses of order n k -> scalar
pub fn op_norm_difference(states: &Spectrum, a: &ViewAnalysis, b: &ViewAnalysis) -> Result<f64> {
    let factored = |v: &ViewAnalysis| !matches!(v.views, Pairing::NextToken { .. });
    if a.modality == b.modality && factored(a) && factored(b) {
        let kw = states.values.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        return Ok(kw * op_norm(a.nuisance.difference(&b.nuisance)?.as_ref())?);
    }
    op_norm(a.kernel.difference(&b.kernel)?.as_ref())
}

/// [`crate::theory::theorem::compare`] of two analyses (K_1 from `a`), with ||K_2 - K_1||_op from
/// [`op_norm_difference`].
///
/// # Shapes
/// analyses of order n k
pub fn compare_views_factored(
    states: &Spectrum,
    a: &ViewAnalysis,
    b: &ViewAnalysis,
    d: usize,
    skip_trivial: bool,
) -> Result<SubspaceComparison> {
    let e_op = op_norm_difference(states, a, b)?;
    compare_given_op_norm(
        &a.kernel,
        &a.spectrum,
        &b.kernel,
        &b.spectrum,
        d,
        skip_trivial,
        e_op,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theory::pair_graph::pair_matrix;
    use crate::theory::theorem::{analyse, compare};
    use crate::theory::world::{Preset, PresetSpec};

    fn world(preset: Preset, n: usize, seed: u64) -> World {
        World::preset(&PresetSpec {
            preset,
            n,
            seed,
            ..PresetSpec::default()
        })
        .unwrap()
    }

    const VIEWS: [Pairing; 6] = [
        Pairing::Good,
        Pairing::Bad,
        Pairing::Mix { alpha: 0.3 },
        Pairing::Mix { alpha: 0.85 },
        Pairing::Mix { alpha: 1.0 },
        Pairing::NextToken { drift: 0.4 },
    ];

    /// Largest distance between the eigenspaces of the two spectra, over the groups of
    /// `full`'s eigenvalues separated by more than 1e-8: ||U_g - V_g (V_g^T U_g)||_F, zero
    /// exactly when the column spans agree (basis-free, as eigenvectors inside a repeated
    /// eigenvalue are not unique).
    fn eigenspace_distance(full: &Spectrum, fact: &Spectrum) -> f64 {
        let n = full.n();
        let mut worst = 0.0_f64;
        let mut start = 0;
        for end in 1..=n {
            if end == n || full.values[end - 1] - full.values[end] > 1e-8 {
                let u = full.vectors.subcols(start, end - start);
                let v = fact.vectors.subcols(start, end - start);
                let r = u - v * (v.transpose() * u);
                worst = worst.max(r.norm_l2());
                start = end;
            }
        }
        worst
    }

    /// The factored route against Spectrum::new on the assembled K, for every preset (the
    /// clusters world is disconnected: eigenvalue 1 once per cluster, and per cluster and
    /// nuisance under bad views) and view kind. Tolerances: eigenvalues 1e-12 (the full
    /// solver's backward error is ~n 1e-16), eigenspaces 1e-9 (round-off over the smallest
    /// gap between groups, >= 1e-3 in these worlds), K U = U diag(values) to 1e-12.
    #[test]
    fn matches_the_full_decomposition_on_every_preset_and_view() {
        let (mut worst_val, mut worst_space, mut worst_res) = (0.0_f64, 0.0_f64, 0.0_f64);
        for (preset, n) in [
            (Preset::Clusters, 30),
            (Preset::Ring, 25),
            (Preset::Grid, 24),
            (Preset::Scenes, 18),
        ] {
            let w = world(preset, n, 7);
            let states = state_spectrum(&w).unwrap();
            for m in 0..w.modalities.len() {
                for views in VIEWS {
                    let f = analyse_views(&w, m, views, &states).unwrap();
                    let pi = pair_matrix(&w, m, views).unwrap();
                    assert!(
                        f.pi == pi,
                        "{preset:?} {views:?}: Pi differs from pair_matrix"
                    );
                    let (k, full) = analyse(&pi).unwrap();
                    let dk = (&f.kernel.k - &k.k).norm_max();
                    assert!(dk < 1e-15, "{preset:?} {views:?}: K differs by {dk}");
                    assert!(f.kernel.k == f.kernel.k.transpose().to_owned());
                    for (a, b) in f.kernel.p.iter().zip(&k.p) {
                        assert!((a - b).abs() < 1e-15);
                    }
                    let s = &f.spectrum;
                    assert_eq!(s.trivial_index, 0);
                    for (a, b) in s.values.iter().zip(&full.values) {
                        worst_val = worst_val.max((a - b).abs());
                    }
                    for i in 0..s.n() {
                        worst_val = worst_val.max((s.vectors[(i, 0)] - full.vectors[(i, 0)]).abs());
                    }
                    worst_space = worst_space.max(eigenspace_distance(&full, s));
                    let lam = Matrix::from_fn(
                        s.n(),
                        s.n(),
                        |i, j| {
                            if i == j { s.values[i] } else { 0.0 }
                        },
                    );
                    let res = &k.k * &s.vectors - &s.vectors * &lam;
                    let gram = s.vectors.transpose() * &s.vectors - Matrix::identity(s.n(), s.n());
                    worst_res = worst_res.max(res.norm_max()).max(gram.norm_max());
                    for (a, b) in s.p.iter().zip(&full.p) {
                        assert!((a - b).abs() < 1e-15);
                    }
                }
            }
        }
        eprintln!(
            "worst: eigenvalues {worst_val:.1e}, eigenspaces {worst_space:.1e}, residual {worst_res:.1e}"
        );
        assert!(
            worst_val < 1e-12,
            "eigenvalues / trivial column differ by {worst_val}"
        );
        assert!(worst_space < 1e-9, "eigenspaces differ by {worst_space}");
        assert!(
            worst_res < 1e-12,
            "not an orthonormal eigenbasis: {worst_res}"
        );
    }

    /// The playground's alpha change at 400 observations (clusters, 200 states, 2
    /// nuisances) and a connected world with positive gaps (ring): bounds, norms and, where
    /// the window does not split a repeated eigenvalue, sin Theta equal the full route's to
    /// 1e-10 relative (bounds divide by gaps as small as 1e-3 here, so they carry the
    /// eigenvalues' round-off times 1e3).
    #[test]
    fn comparison_matches_the_full_route() {
        let (mut compared, mut splits) = (0, 0);
        for (preset, n, d) in [(Preset::Ring, 60, 3), (Preset::Clusters, 200, 3)] {
            let w = world(preset, n, 0);
            let states = state_spectrum(&w).unwrap();
            let good = analyse_views(&w, 0, Pairing::Good, &states).unwrap();
            let (k1, s1) = analyse(&good.pi).unwrap();
            for alpha in [0.3, 0.55, 1.0] {
                let mix = analyse_views(&w, 0, Pairing::Mix { alpha }, &states).unwrap();
                let (k2, s2) = analyse(&mix.pi).unwrap();
                for skip in [false, true] {
                    let fast = compare_views_factored(&states, &good, &mix, d, skip).unwrap();
                    let slow = compare(&k1, &s1, &k2, &s2, d, skip).unwrap();
                    let what = format!("{preset:?} alpha={alpha} skip={skip}");
                    let close = |a: f64, b: f64, name: &str| {
                        let tol = 1e-10 * a.abs().max(1.0);
                        assert!((a - b).abs() < tol, "{what}: {name} {a} vs {b}")
                    };
                    close(fast.e_op, slow.e_op, "e_op");
                    close(fast.e_fro, slow.e_fro, "e_fro");
                    close(fast.davis_kahan_gap, slow.davis_kahan_gap, "DK gap");
                    close(fast.yws_gap, slow.yws_gap, "YWS gap");
                    // A window that splits a repeated eigenvalue of K_1 or K_2 has no unique
                    // U_d: sin Theta then depends on the solver's basis (any choice obeys
                    // the bounds that apply), so only the basis-free numbers must agree.
                    let split = |s: &Spectrum| s.gap(d, skip).unwrap().is_none_or(|g| g <= 1e-8);
                    if split(&s1) || split(&s2) {
                        splits += 1;
                        for c in [&fast, &slow] {
                            for (b, m) in [
                                (c.davis_kahan_bound, c.sin_theta_op),
                                (c.yws_bound, c.sin_theta_fro),
                            ] {
                                assert!(b.is_none_or(|b| m <= b + 1e-10), "{what}: {c:?}");
                            }
                        }
                        continue;
                    }
                    compared += 1;
                    close(fast.sin_theta_op, slow.sin_theta_op, "sin op");
                    close(fast.sin_theta_fro, slow.sin_theta_fro, "sin fro");
                    for (a, b, name) in [
                        (fast.davis_kahan_bound, slow.davis_kahan_bound, "DK"),
                        (
                            fast.davis_kahan_bound_fro,
                            slow.davis_kahan_bound_fro,
                            "DK fro",
                        ),
                        (fast.yws_bound, slow.yws_bound, "YWS"),
                    ] {
                        assert_eq!(a.is_some(), b.is_some(), "{what}: {name}");
                        if let (Some(a), Some(b)) = (a, b) {
                            close(a, b, name);
                        }
                    }
                }
            }
        }
        eprintln!("compared {compared}, windows split {splits}");
        assert!(
            compared >= 4 && splits >= 1,
            "compared {compared}, split {splits}"
        );
    }

    #[test]
    fn op_norm_difference_has_its_closed_form() {
        // ||K_mix(alpha) - K_good||_op = alpha ||K_W||_op ||I - s s^T||_op = alpha when
        // K_W's largest |eigenvalue| is 1 (its trivial one) and there are >= 2 nuisances.
        let w = world(Preset::Grid, 24, 1);
        let states = state_spectrum(&w).unwrap();
        let good = analyse_views(&w, 0, Pairing::Good, &states).unwrap();
        for alpha in [0.0, 0.2, 0.7, 1.0] {
            let mix = analyse_views(&w, 0, Pairing::Mix { alpha }, &states).unwrap();
            let e = op_norm_difference(&states, &good, &mix).unwrap();
            assert!((e - alpha).abs() < 1e-12, "alpha {alpha}: {e}");
            let full = op_norm(good.kernel.difference(&mix.kernel).unwrap().as_ref()).unwrap();
            assert!((e - full).abs() < 1e-12);
        }
        // Next-token views have another state factor: the full norm is used.
        let nt = analyse_views(&w, 0, Pairing::NextToken { drift: 0.4 }, &states).unwrap();
        let e = op_norm_difference(&states, &good, &nt).unwrap();
        let full = op_norm(good.kernel.difference(&nt.kernel).unwrap().as_ref()).unwrap();
        assert_eq!(e, full);
    }

    #[test]
    fn bad_input_is_a_clear_error() {
        let w = world(Preset::Ring, 10, 0);
        let other = state_spectrum(&world(Preset::Ring, 12, 0)).unwrap();
        let msg = analyse_views(&w, 0, Pairing::Good, &other)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("does not belong to world"), "{msg}");
        let states = state_spectrum(&w).unwrap();
        assert!(analyse_views(&w, 0, Pairing::Mix { alpha: 1.5 }, &states).is_err());
        assert!(analyse_views(&w, 3, Pairing::Good, &states).is_err());
        let mut moved = states.clone();
        moved.trivial_index = 1;
        assert!(kron_spectrum(&moved, &states).is_err());
        let mut cut = states.clone();
        cut.vectors = cut.vectors.subcols(0, 3).to_owned();
        let msg = kron_spectrum(&states, &cut).unwrap_err().to_string();
        assert!(msg.contains("n x n vectors"), "{msg}");
    }
}
