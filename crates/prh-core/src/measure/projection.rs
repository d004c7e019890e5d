//! Per-point views of an embedding set (paper §5, what the browser's alignment lab draws):
//! the 2-D principal-component projection of each space, each sample's share of shared
//! neighbours (the terms of mutual k-NN's mean) and the neighbourhood of a selection.
//!
//! The projection needs only the top two principal axes: a full SVD of a [1000, 1280]
//! matrix takes ~5 s in wasm (no SIMD, one thread), so the top-2 subspace is found by
//! block power (subspace) iteration on C = X_c^T X_c, which needs only products with X_c
//! (~1 ms each), then a Rayleigh–Ritz step orders the two axes by variance. Hand-written
//! because faer offers no partial SVD.

use crate::Result;
use crate::formats::features::Features;
use crate::linalg::{self, Matrix};
use crate::measure::knn::Knn;
use crate::measure::metrics::{LayerView, MetricOptions};

/// Iterations of the block power method; the subspace error shrinks like
/// (lambda_3 / lambda_2)^t, so 300 steps suffice unless the second and third variances are
/// nearly equal, in which case any plane in their span is an equally faithful picture.
const PCA_MAX_ITERS: usize = 300;

/// Stop when the new basis moves less than this (Frobenius norm of its change).
const PCA_TOL: f64 = 1e-9;

/// Orthonormalises the columns of `v` in place (modified Gram–Schmidt); a column that
/// vanishes (rank-deficient data) is left at zero.
///
/// # Shapes
/// `v [d, k]` -> `[d, k]`
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

/// Scores on the first two principal axes: with X_c = X - 1 mean(X) and V_2 the top two
/// eigenvectors of X_c^T X_c, the coordinates X_c V_2 (= U_2 S_2 of the SVD of X_c, up to
/// the sign of each axis), first axis of largest variance. The second coordinate is 0
/// when d = 1; an empty matrix gives n points at the origin. Deterministic: the power
/// iteration starts from a fixed basis, so a picture does not change between reloads.
///
/// # Shapes
/// `x [n, d]` -> `[n]` points
pub fn pca_2d(x: &Matrix) -> Result<Vec<(f64, f64)>> {
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
    for _ in 0..PCA_MAX_ITERS {
        let mut w = xc.transpose() * (&xc * &v); // [d, k]
        orthonormalise(&mut w);
        // Distance between the subspaces: ||W - V V^T W||_F.
        let moved = (&w - &v * (v.transpose() * &w)).norm_l2();
        v = w;
        if moved < PCA_TOL {
            break;
        }
    }
    // Rayleigh–Ritz: rotate the basis to the eigenvectors of V^T C V (variance order).
    let xv = &xc * &v; // [n, k]
    let h = xv.transpose() * &xv; // [k, k]
    let eig = linalg::sym_eigen(h.as_ref())?;
    let scores = &xv * &eig.vectors; // [n, k], columns by decreasing variance
    Ok((0..n)
        .map(|i| (scores[(i, 0)], if k > 1 { scores[(i, 1)] } else { 0.0 }))
        .collect())
}

/// One layer of a set as [`crate::measure::metrics::measure`] sees it, and its k-NN lists:
/// outliers clamped over the whole set and rows normalised (`opts.preprocess`), then the
/// top-k neighbours of each row with the diagonal excluded ([`LayerView`]). Re-derives the
/// lists behind a report's scores, for per-point views of its best layer pair.
///
/// # Shapes
/// `f [n, layers, d]` -> (`[n, d]` preprocessed layer, knn `[n, k]`)
pub fn layer_neighbours(f: &Features, layer: usize, opts: &MetricOptions) -> Result<(Matrix, Knn)> {
    let mut f = f.clone();
    opts.preprocess.clamp(&mut f)?;
    let x = opts.preprocess.layer_matrix(&f, layer)?;
    let view = LayerView::new(&x, opts)?;
    Ok((x, view.knn))
}

/// Per-sample mutual k-NN, the terms of PRH's mean: s_i = |N_A(i) ∩ N_B(i)| / k, for the
/// first min(n_A, n_B) samples.
///
/// # Shapes
/// `a [n, k]`, `b [n, k]` -> `[n]`
pub fn per_point_mutual_knn(a: &Knn, b: &Knn) -> Vec<f64> {
    (0..a.n.min(b.n))
        .map(|i| a.row(i).iter().filter(|j| b.row(i).contains(j)).count() as f64 / a.k as f64)
        .collect()
}

/// The samples `points` and each one's k neighbours, S ∪ (∪_{i in S} N(i)), ascending and
/// without repeats; indices at or beyond n are left out.
///
/// # Shapes
/// `knn [n, k]`, `points` m indices -> at most m (k + 1) indices
pub fn neighbourhood(knn: &Knn, points: &[usize]) -> Vec<usize> {
    let mut seen = vec![false; knn.n];
    for &i in points.iter().filter(|&&i| i < knn.n) {
        seen[i] = true;
        for &j in knn.row(i) {
            seen[j] = true;
        }
    }
    (0..knn.n).filter(|&i| seen[i]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows ±3 e1, ±2 e2, ±1 e3, shifted by c: the centred data's principal axes are e1
    /// (variance 18 / 6) and e2 (8 / 6), so the scores are (±3, 0), (0, ±2) and (0, 0) for
    /// the e3 rows, up to each axis's sign.
    #[test]
    fn pca_2d_recovers_the_axes_of_a_known_cloud() {
        let c = [5.0, -1.0, 0.5];
        let rows: [[f64; 3]; 6] = [
            [3.0, 0.0, 0.0],
            [-3.0, 0.0, 0.0],
            [0.0, 2.0, 0.0],
            [0.0, -2.0, 0.0],
            [0.0, 0.0, 1.0],
            [0.0, 0.0, -1.0],
        ];
        let x = Matrix::from_fn(6, 3, |i, j| rows[i][j] + c[j]);
        let p = pca_2d(&x).unwrap();
        // The power iteration stops once its basis moves < 1e-9: scores agree to ~1e-10.
        let want = [
            (3.0, 0.0),
            (3.0, 0.0),
            (0.0, 2.0),
            (0.0, 2.0),
            (0.0, 0.0),
            (0.0, 0.0),
        ];
        for (got, want) in p.iter().zip(want) {
            assert!((got.0.abs() - want.0).abs() < 1e-7, "{got:?} vs {want:?}");
            assert!((got.1.abs() - want.1).abs() < 1e-7, "{got:?} vs {want:?}");
        }
        // Opposite rows land at opposite points (one sign per axis).
        assert!((p[0].0 + p[1].0).abs() < 1e-7 && (p[2].1 + p[3].1).abs() < 1e-7);
    }

    #[test]
    fn pca_2d_of_one_column_and_of_nothing() {
        let x = Matrix::from_fn(3, 1, |i, _| i as f64);
        let p = pca_2d(&x).unwrap();
        let xs: Vec<f64> = p.iter().map(|q| q.0.abs()).collect();
        assert!((xs[0] - 1.0).abs() < 1e-12 && xs[1].abs() < 1e-12 && (xs[2] - 1.0).abs() < 1e-12);
        assert!(p.iter().all(|q| q.1 == 0.0));
        assert_eq!(pca_2d(&Matrix::zeros(2, 0)).unwrap(), vec![(0.0, 0.0); 2]);
    }

    #[test]
    fn per_point_scores_and_neighbourhoods() {
        // n = 3, k = 2.
        let a = Knn {
            n: 3,
            k: 2,
            idx: vec![1, 2, 0, 2, 0, 1],
        };
        let b = Knn {
            n: 3,
            k: 2,
            idx: vec![2, 1, 2, 0, 1, 0],
        };
        // Row 0: {1, 2} vs {2, 1} -> 1; row 1: {0, 2} vs {2, 0} -> 1; row 2: {0, 1} vs {1, 0}.
        assert_eq!(per_point_mutual_knn(&a, &b), vec![1.0, 1.0, 1.0]);
        let c = Knn {
            n: 3,
            k: 2,
            idx: vec![1, 0, 0, 1, 0, 1],
        };
        // Row 0: {1, 2} ∩ {1, 0} = {1}; row 1: {0, 2} ∩ {0, 1} = {0}; row 2: {0, 1} both.
        assert_eq!(per_point_mutual_knn(&a, &c), vec![0.5, 0.5, 1.0]);
        let d = Knn {
            n: 4,
            k: 1,
            idx: vec![1, 0, 3, 2],
        };
        assert_eq!(neighbourhood(&d, &[0]), vec![0, 1]);
        assert_eq!(neighbourhood(&d, &[3, 0, 9]), vec![0, 1, 2, 3]);
        assert!(neighbourhood(&d, &[]).is_empty());
    }
}
