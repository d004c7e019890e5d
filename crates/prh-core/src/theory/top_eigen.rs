//! The top d eigenpairs of a symmetric matrix without the full decomposition (paper §2:
//! the optimal d-dimensional representation F = D^-1/2 U_d needs only U_d).
//!
//! Block Lanczos with full reorthogonalisation and Rayleigh–Ritz (Golub & Van Loan, 4th
//! ed., §10.3.6 and §10.1.5): the Krylov space span{X, A X, A^2 X, ...} of a random block X
//! of b >= d columns is grown one block at a time, kept orthonormal explicitly (two passes
//! of Gram–Schmidt against all earlier blocks, so no ghost eigenvalues), and the top d
//! eigenpairs of T = V^T A V give the Ritz pairs (theta_j, V y_j). It stops when every
//! residual ||A u_j - theta_j u_j|| is at most `tol` * max |theta|. Then (Parlett, "The
//! Symmetric Eigenvalue Problem", Thm 11.7.1 and 11.7.2) each theta_j is within the
//! residual r_j of an eigenvalue of A, within r_j^2 / gap_j, and the angle between u_j and
//! that eigenvector is at most r_j / gap_j (gap_j: distance from theta_j to the rest of
//! A's spectrum).
//!
//! Thick restart (Wu & Simon, SIAM J. Matrix Anal. Appl. 22, 2000): when the basis holds
//! `max_basis` vectors it is cut back to its best Ritz vectors and grows again from the
//! next Krylov block, so memory and the orthogonalisation stay O(n max_basis) however many
//! products convergence needs.
//!
//! Cost: about 2 n^2 p flops for p products A x (matrix times block, the part that runs at
//! matmul speed) plus O(n max_basis b) per block for the orthogonalisation, against ~9 n^3
//! for the full decomposition; p stays far below n when the top of the spectrum is
//! separated from the rest, and grows as the gap after d closes.
//!
//! Limitation, stated rather than hidden: a Krylov method started from b vectors finds at
//! most b copies of a repeated eigenvalue. If an eigenvalue in the top d has multiplicity
//! above the block size (e.g. eigenvalue 1 of a kernel with more than b connected
//! components), copies are missed and the next eigenvalue takes their place. Choose
//! `block` above the largest multiplicity expected, or use [`crate::linalg::sym_eigen`].

use crate::linalg::{Matrix, sym_eigen};
use crate::{Error, Result};
use faer::MatRef;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Settings of [`sym_eigen_top`].
#[derive(Debug, Clone, Copy)]
pub struct TopEigenParams {
    /// Stop when every residual ||A u - theta u|| <= tol * max |theta| (1e-10 by default:
    /// eigenvalues then agree with a full decomposition to ~1e-10 or better).
    pub tol: f64,
    /// Block size b (raised to d if smaller): vectors added per step; also the largest
    /// multiplicity of an eigenvalue that is found in full. Default 4 with `max_basis` 48:
    /// the fastest of b in {1, 4, 8} x basis in {24, 32, 48, 64} on `bench eigen`'s kernels
    /// (n = 1,000 / 2,000, top 3: 332 / 404 products, against 736 / 992 at b = 8).
    pub block: usize,
    /// Seed of the random start block (results are deterministic given the seed).
    pub seed: u64,
    /// Basis size at which the basis is cut back to its best Ritz vectors (thick
    /// restart); raised to at least max(2 b + d, 3 b).
    pub max_basis: usize,
    /// Give up (an error naming the residual reached) once this many products A x were
    /// computed without convergence; 0: no limit. Krylov methods slow down where the top
    /// eigenvalues crowd together (a ring's kernel at n = 2,000: 20 s against 1.9 s for
    /// the full decomposition), so a caller that can fall back sets a budget.
    pub max_products: usize,
}

impl Default for TopEigenParams {
    fn default() -> Self {
        TopEigenParams {
            tol: 1e-10,
            block: 4,
            seed: 0,
            max_basis: 48,
            max_products: 0,
        }
    }
}

/// The top d eigenpairs found, with what the stopping test saw.
#[derive(Debug, Clone)]
pub struct TopEigen {
    /// Eigenvalues, decreasing: `values[0] >= ... >= values[d - 1]`.
    pub values: Vec<f64>,
    /// Orthonormal eigenvectors as columns `[n, d]`, column j for `values[j]`.
    pub vectors: Matrix,
    /// max_j ||A u_j - values[j] u_j||_2 (0 up to round-off when the space reached n).
    pub residual: f64,
    /// Dimension m of the basis at the end (n: it filled the space, the result is exact).
    pub krylov_dim: usize,
    /// Products A x computed (matrix-vector products, counting each block column).
    pub products: usize,
}

/// Top d eigenpairs of a symmetric `a` by block Lanczos (module docs for the method, the
/// bounds and the multiplicity limitation). Only the product A X is used, so `a` must be
/// symmetric (both triangles).
///
/// # Shapes
/// `a [n, n]`, d <= n -> values `[d]`, vectors `[n, d]`
pub fn sym_eigen_top(a: MatRef<'_, f64>, d: usize, params: TopEigenParams) -> Result<TopEigen> {
    let n = a.nrows();
    if a.ncols() != n || d == 0 || d > n {
        return Err(Error::invalid(format!(
            "top-d eigenpairs need a square matrix and 1 <= d <= n, got [{n}, {}] and d = {d}",
            a.ncols()
        )));
    }
    if !(params.tol > 0.0 && params.tol.is_finite()) {
        return Err(Error::invalid(format!(
            "top-d eigen tolerance must be a positive number, got {}",
            params.tol
        )));
    }
    let b = params.block.max(d);
    // Thick restart (Wu & Simon 2000; ARPACK's implicit restart does the same in exact
    // arithmetic): once the basis holds `m_max` vectors it is cut back to its top `keep`
    // Ritz vectors, which keep everything the space had learned about the top of the
    // spectrum, and grows again from the next Krylov block. Without it, kernels whose bulk
    // reaches close to the top (no gap after d) grew the space to m = 480-600 vectors at
    // n = 1,000-2,000, and the O(n m^2) orthogonalisation dominated (docs/benchmarks.md).
    let m_max = params.max_basis.max(2 * b + d).max(3 * b);
    let keep = (m_max / 2).max(d + b).min(m_max - b);
    let mut rng = ChaCha8Rng::seed_from_u64(params.seed);
    // V: orthonormal basis, av = A V, t = V^T A V (grown block by block).
    let mut v = Matrix::zeros(n, 0);
    let mut av = Matrix::zeros(n, 0);
    let mut t = Matrix::zeros(0, 0);
    let mut next = Matrix::from_fn(n, b.min(n), |_, _| rng.random::<f64>() - 0.5);
    let mut products = 0;
    loop {
        let m0 = v.ncols();
        let w = orthonormal_block(v.as_ref(), next, &mut rng)?;
        let aw = a * &w;
        let bw = w.ncols();
        products += bw;
        v.resize_with(n, m0 + bw, |i, j| w[(i, j - m0)]);
        av.resize_with(n, m0 + bw, |i, j| aw[(i, j - m0)]);
        let m = m0 + bw;
        // New columns of T = V^T A V (and, by symmetry, its new rows).
        let tc = v.transpose() * &aw;
        t.resize_with(m, m, |_, _| 0.0);
        for j in 0..bw {
            for i in 0..m {
                t[(i, m0 + j)] = tc[(i, j)];
                t[(m0 + j, i)] = tc[(i, j)];
            }
        }
        // Rayleigh–Ritz on the (small) basis after every block.
        // Symmetrised: round-off makes V^T A V asymmetric at the 1e-16 level.
        let ts = Matrix::from_fn(m, m, |i, j| 0.5 * (t[(i, j)] + t[(j, i)]));
        let ritz = sym_eigen(ts.as_ref())?;
        let y = ritz.vectors.subcols(0, d);
        let u = &v * y;
        let au = &av * y;
        let residual = (0..d)
            .map(|j| {
                (0..n)
                    .map(|i| (au[(i, j)] - ritz.values[j] * u[(i, j)]).powi(2))
                    .sum::<f64>()
                    .sqrt()
            })
            .fold(0.0, f64::max);
        let scale = ritz.values.iter().fold(0.0_f64, |s, x| s.max(x.abs()));
        if residual <= params.tol * scale || m == n {
            return Ok(TopEigen {
                values: ritz.values[..d].to_vec(),
                vectors: u,
                residual,
                krylov_dim: m,
                products,
            });
        }
        if params.max_products > 0 && products >= params.max_products {
            return Err(Error::Numerical(format!(
                "block Lanczos did not converge within {products} products (residual {residual:.2e} \
                 against {:.2e}): the top eigenvalues crowd together",
                params.tol * scale
            )));
        }
        let take = bw.min(n - m);
        if m + take > m_max && m < n {
            // The next Krylov block, orthogonal to the whole basis before it is cut: the
            // Ritz vectors' residuals lie in its span.
            next = orthonormal_block(v.as_ref(), aw.subcols(0, take).to_owned(), &mut rng)?;
            let yk = ritz.vectors.subcols(0, keep);
            v = &v * yk;
            av = &av * yk;
            // V'^T A V' = Y^T T Y = diag(theta) up to round-off; formed, not assumed.
            t = v.transpose() * &av;
        } else {
            // Next block: A times the newest block (the block Lanczos recurrence's
            // direction).
            next = aw.subcols(0, take).to_owned();
        }
    }
}

/// Orthonormalises the columns of `w` against the columns of `v` (orthonormal) and each
/// other: classical Gram–Schmidt against `v` twice ("twice is enough", Giraud et al. 2005),
/// then modified Gram–Schmidt inside the block, twice. A column that loses almost all of
/// its norm (it lay in span(v): an invariant subspace was reached) is replaced by a random
/// one, so the basis keeps growing until it spans everything.
///
/// # Shapes
/// `v [n, m]`, `w [n, b]` with m + b <= n -> `[n, b]`
fn orthonormal_block(v: MatRef<'_, f64>, mut w: Matrix, rng: &mut ChaCha8Rng) -> Result<Matrix> {
    let (n, b) = (w.nrows(), w.ncols());
    let norms: Vec<f64> = (0..b).map(|j| col_norm(&w, j)).collect();
    // Against the basis, the whole block at once (matrix products, not b matrix-vectors).
    for _ in 0..2 {
        let coef = v.transpose() * &w;
        w -= v * &coef;
    }
    for j in 0..b {
        let mut before = norms[j];
        for attempt in 0..8 {
            if attempt > 0 {
                // A fresh random column, made orthogonal to the basis like the block was.
                for i in 0..n {
                    w[(i, j)] = rng.random::<f64>() - 0.5;
                }
                before = col_norm(&w, j);
                for _ in 0..2 {
                    let coef = v.transpose() * w.col(j);
                    let proj = v * &coef;
                    for i in 0..n {
                        w[(i, j)] -= proj[i];
                    }
                }
            }
            for _ in 0..2 {
                for k in 0..j {
                    let c: f64 = (0..n).map(|i| w[(i, k)] * w[(i, j)]).sum();
                    for i in 0..n {
                        w[(i, j)] -= c * w[(i, k)];
                    }
                }
            }
            let after = col_norm(&w, j);
            if after > 1e-8 * before && after > 0.0 {
                for i in 0..n {
                    w[(i, j)] /= after;
                }
                break;
            }
            if attempt == 7 {
                return Err(Error::Numerical(
                    "block Lanczos could not extend its basis (no direction left outside it)"
                        .into(),
                ));
            }
        }
    }
    Ok(w)
}

fn col_norm(w: &Matrix, j: usize) -> f64 {
    (0..w.nrows())
        .map(|i| w[(i, j)].powi(2))
        .sum::<f64>()
        .sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::Matrix;

    /// A = Q diag(lambda) Q^T with a known spectrum (Q from a Householder reflector, exact
    /// orthogonality), so the top d are closed-form.
    fn known(n: usize, lambda: &[f64]) -> Matrix {
        let h: Vec<f64> = (0..n).map(|i| ((i * 37 + 11) % 23) as f64 - 11.0).collect();
        let hh: f64 = h.iter().map(|x| x * x).sum();
        let q = Matrix::from_fn(n, n, |i, j| f64::from(i == j) - 2.0 * h[i] * h[j] / hh);
        let l = Matrix::from_fn(n, n, |i, j| if i == j { lambda[i] } else { 0.0 });
        let a = &q * &l * q.transpose();
        Matrix::from_fn(n, n, |i, j| 0.5 * (a[(i, j)] + a[(j, i)]))
    }

    #[test]
    fn finds_the_closed_form_top_d() {
        let n = 600;
        // Top 3: 1, 0.9, 0.8; the rest spread over [-0.5, 0.7].
        let lambda: Vec<f64> = (0..n)
            .map(|i| match i {
                0 => 0.9,
                1 => 1.0,
                2 => 0.8,
                _ => -0.5 + 1.2 * ((i * 7919) % n) as f64 / n as f64,
            })
            .collect();
        let a = known(n, &lambda);
        let top = sym_eigen_top(a.as_ref(), 3, TopEigenParams::default()).unwrap();
        for (got, want) in top.values.iter().zip([1.0, 0.9, 0.8]) {
            assert!((got - want).abs() < 1e-9, "{:?}", top.values);
        }
        assert!(
            top.krylov_dim < n,
            "should stop early, used {}",
            top.krylov_dim
        );
        // Orthonormal columns, and each is an eigenvector: ||A u - lambda u|| small.
        let gram = top.vectors.transpose() * &top.vectors;
        for i in 0..3 {
            for j in 0..3 {
                assert!((gram[(i, j)] - f64::from(i == j)).abs() < 1e-12);
            }
        }
        let r = &a * &top.vectors
            - &top.vectors * Matrix::from_fn(3, 3, |i, j| if i == j { top.values[i] } else { 0.0 });
        assert!(r.norm_l2() < 1e-9, "{}", r.norm_l2());
    }

    #[test]
    fn repeated_eigenvalue_within_the_block_is_found_in_full() {
        // lambda = 1 three times (three components), then 0.5, rest <= 0.3.
        let n = 120;
        let lambda: Vec<f64> = (0..n)
            .map(|i| {
                if i < 3 {
                    1.0
                } else if i == 3 {
                    0.5
                } else {
                    0.3 * (i as f64 / n as f64)
                }
            })
            .collect();
        let a = known(n, &lambda);
        let top = sym_eigen_top(a.as_ref(), 4, TopEigenParams::default()).unwrap();
        let want = [1.0, 1.0, 1.0, 0.5];
        for (got, w) in top.values.iter().zip(want) {
            assert!((got - w).abs() < 1e-9, "{:?}", top.values);
        }
    }

    #[test]
    fn matches_the_full_decomposition_on_a_kernel() {
        let pi = crate::theory::pair_graph::random_pi(200, 0.05, 3);
        let k = crate::theory::kernel::Kernel::new(pi.as_ref()).unwrap().k;
        let full = sym_eigen(k.as_ref()).unwrap();
        let top = sym_eigen_top(k.as_ref(), 5, TopEigenParams::default()).unwrap();
        for j in 0..5 {
            assert!((top.values[j] - full.values[j]).abs() < 1e-9);
            // Same eigenvector up to sign.
            let dot: f64 = (0..200)
                .map(|i| top.vectors[(i, j)] * full.vectors[(i, j)])
                .sum();
            assert!(
                (dot.abs() - 1.0).abs() < 1e-6,
                "column {j}: |<u, u_full>| = {}",
                dot.abs()
            );
        }
    }

    /// A random pair graph's kernel has no gap after the top few eigenvalues, so the
    /// search needs many more products than the basis may hold: it restarts, the basis
    /// never exceeds `max_basis`, and the top 3 still equal the full decomposition's.
    #[test]
    fn thick_restart_keeps_the_basis_small_and_the_answer_exact() {
        let n = 400;
        let pi = crate::theory::pair_graph::random_pi(n, 0.05, 7);
        let k = crate::theory::kernel::Kernel::new(pi.as_ref()).unwrap().k;
        let full = sym_eigen(k.as_ref()).unwrap();
        let params = TopEigenParams {
            max_basis: 32,
            ..TopEigenParams::default()
        };
        let top = sym_eigen_top(k.as_ref(), 3, params).unwrap();
        assert!(
            top.products > 32,
            "no restart happened: {} products",
            top.products
        );
        assert!(top.krylov_dim <= 32, "basis grew to {}", top.krylov_dim);
        for j in 0..3 {
            assert!(
                (top.values[j] - full.values[j]).abs() < 1e-9,
                "{:?} vs {:?}",
                top.values,
                &full.values[..3]
            );
        }
    }

    #[test]
    fn small_or_bad_input() {
        let a = known(5, &[3.0, 2.0, 1.0, 0.0, -1.0]);
        // d = n: the space fills up and the answer is exact.
        let top = sym_eigen_top(a.as_ref(), 5, TopEigenParams::default()).unwrap();
        assert_eq!(top.krylov_dim, 5);
        for (got, want) in top.values.iter().zip([3.0, 2.0, 1.0, 0.0, -1.0]) {
            assert!((got - want).abs() < 1e-12);
        }
        assert!(sym_eigen_top(a.as_ref(), 0, TopEigenParams::default()).is_err());
        assert!(sym_eigen_top(a.as_ref(), 6, TopEigenParams::default()).is_err());
        let bad = TopEigenParams {
            tol: -1.0,
            ..TopEigenParams::default()
        };
        assert!(sym_eigen_top(a.as_ref(), 2, bad).is_err());
    }

    /// A product budget stops a slow run with an error that says why, and a budget that
    /// suffices changes nothing (the same products, the same values).
    #[test]
    fn product_budget_stops_a_slow_run() {
        let pi = crate::theory::pair_graph::random_pi(400, 0.05, 3);
        let k = crate::theory::kernel::Kernel::new(pi.as_ref()).unwrap().k;
        let free = sym_eigen_top(k.as_ref(), 3, TopEigenParams::default()).unwrap();
        let tight = TopEigenParams {
            max_products: 8,
            ..TopEigenParams::default()
        };
        let e = sym_eigen_top(k.as_ref(), 3, tight).unwrap_err().to_string();
        assert!(e.contains("did not converge within 8 products"), "{e}");
        let enough = TopEigenParams {
            max_products: free.products + 1,
            ..TopEigenParams::default()
        };
        let same = sym_eigen_top(k.as_ref(), 3, enough).unwrap();
        assert_eq!((same.values, same.products), (free.values, free.products));
    }
}
