//! The two principal axes of an embedding set, for the alignment lab's scatter plots.
//!
//! A full SVD of a [1000, 1280] matrix takes ~5 s in wasm (no SIMD, one thread), so the
//! top-2 subspace is found by block power (subspace) iteration on C = X_c^T X_c, which
//! needs only products with X_c (~1 ms each), then a Rayleigh–Ritz step orders the two
//! axes by variance. Hand-written because faer offers no partial SVD.

use prh_core::linalg::{self, Matrix};

/// Iterations of the block power method; the subspace error shrinks like
/// (lambda_3 / lambda_2)^t, so 300 steps suffice unless the second and third variances are
/// nearly equal, in which case any plane in their span is an equally faithful picture.
const MAX_ITERS: usize = 300;

/// Stop when the new basis moves less than this (Frobenius norm of its change).
const TOL: f64 = 1e-9;

/// Orthonormalises the columns of `v` in place (modified Gram–Schmidt); a column that
/// vanishes (rank-deficient data) is left at zero.
fn orthonormalise(v: &mut Matrix) {
    for c in 0..v.ncols() {
        for p in 0..c {
            let dot: f64 = (0..v.nrows()).map(|i| v[(i, c)] * v[(i, p)]).sum();
            for i in 0..v.nrows() {
                v[(i, c)] -= dot * v[(i, p)];
            }
        }
        let norm = (0..v.nrows())
            .map(|i| v[(i, c)].powi(2))
            .sum::<f64>()
            .sqrt();
        let scale = if norm > 1e-300 { 1.0 / norm } else { 0.0 };
        for i in 0..v.nrows() {
            v[(i, c)] *= scale;
        }
    }
}

/// Scores on the first two principal axes: with X_c = X - mean(X) and V_2 the top two
/// eigenvectors of X_c^T X_c, the coordinates X_c V_2 (= U_2 S_2 of the SVD of X_c, up to
/// the sign of each axis). The second coordinate is 0 when d = 1.
///
/// # Shapes
/// `x [n, d]` -> `[n]` points
pub fn pca_2d(x: &Matrix) -> Result<Vec<(f64, f64)>, String> {
    let (n, d) = (x.nrows(), x.ncols());
    if n == 0 || d == 0 {
        return Ok(vec![(0.0, 0.0); n]);
    }
    let mean: Vec<f64> = (0..d)
        .map(|j| (0..n).map(|i| x[(i, j)]).sum::<f64>() / n as f64)
        .collect();
    let xc = Matrix::from_fn(n, d, |i, j| x[(i, j)] - mean[j]);
    let k = d.min(2);
    // A fixed, generic start (no RNG: the picture must not change between reloads).
    let mut v = Matrix::from_fn(d, k, |j, c| {
        ((j + 1) as f64 * (c as f64 + 1.618)).sin() + 0.1
    });
    orthonormalise(&mut v);
    for _ in 0..MAX_ITERS {
        let mut w = xc.transpose() * (&xc * &v); // [d, k]
        orthonormalise(&mut w);
        // Distance between the subspaces: ||W - V V^T W||_F.
        let moved = (&w - &v * (v.transpose() * &w)).norm_l2();
        v = w;
        if moved < TOL {
            break;
        }
    }
    // Rayleigh–Ritz: rotate the basis to the eigenvectors of V^T C V (variance order).
    let xv = &xc * &v; // [n, k]
    let h = xv.transpose() * &xv; // [k, k]
    let eig = linalg::sym_eigen(h.as_ref()).map_err(|e| e.to_string())?;
    let scores = &xv * &eig.vectors; // [n, k], columns by decreasing variance
    Ok((0..n)
        .map(|i| (scores[(i, 0)], if k > 1 { scores[(i, 1)] } else { 0.0 }))
        .collect())
}
