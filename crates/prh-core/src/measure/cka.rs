//! Kernel alignment (paper §5: "linear CKA for the large comparisons"): CKA from the
//! biased HSIC (Gretton et al. 2005, Kornblith et al. 2019), unbiased CKA from Song et
//! al.'s unbiased HSIC (JMLR 2012, eq. 5) and CKNNA (Huh et al. 2024), with exactly the
//! normalisation of the PRH benchmark's `metrics.py`:
//! score = HSIC(K, L) / (sqrt(HSIC(K, K) HSIC(L, L)) + 1e-6).
//!
//! Everything takes kernel (Gram) matrices, so one Gram per side serves every metric.
//! HSICs are computed in O(n^2) from row/column sums instead of forming K H L H.

use crate::linalg::Matrix;
pub use crate::measure::cknna::{cknna, cknna_with};
use crate::{Error, Result};
use faer::MatRef;

/// The PRH benchmark's stabiliser in the CKA denominator.
pub const CKA_EPS: f64 = 1e-6;

pub(crate) fn check_square(k: MatRef<'_, f64>, l: MatRef<'_, f64>) -> Result<usize> {
    let n = k.nrows();
    if k.ncols() != n || l.nrows() != n || l.ncols() != n {
        return Err(Error::invalid(format!(
            "kernels must be square and of one size, got [{}, {}] and [{}, {}]",
            k.nrows(),
            k.ncols(),
            l.nrows(),
            l.ncols()
        )));
    }
    Ok(n)
}

/// Biased HSIC without the 1/(n-1)^2 factor, as PRH computes it:
/// HSIC_b(K, L) = tr(K H L H), H = I - 11^T/n.
///
/// Uses (H K H)_ij = K_ij - r_i - c_j + t (row means r, column means c, grand mean t) and
/// tr(K H L H) = sum_ij (H K H)_ij L_ji, valid for non-symmetric K, L too.
///
/// # Shapes
/// `k [n, n]`, `l [n, n]` -> scalar
pub fn hsic_biased(k: MatRef<'_, f64>, l: MatRef<'_, f64>) -> Result<f64> {
    let n = check_square(k, l)?;
    hsic_biased_fn(n, |i, j| k[(i, j)], |i, j| l[(i, j)])
}

// Index loops: the kernels are closures (i, j) -> value, so there is no slice to iterate.
#[allow(clippy::needless_range_loop)]
pub(crate) fn hsic_biased_fn(
    n: usize,
    k: impl Fn(usize, usize) -> f64,
    l: impl Fn(usize, usize) -> f64,
) -> Result<f64> {
    if n == 0 {
        return Err(Error::invalid("HSIC needs at least one sample"));
    }
    let nf = n as f64;
    let (mut r, mut c, mut t) = (vec![0.0; n], vec![0.0; n], 0.0);
    for i in 0..n {
        for j in 0..n {
            let v = k(i, j);
            r[i] += v;
            c[j] += v;
            t += v;
        }
    }
    let mut s = 0.0;
    for i in 0..n {
        for j in 0..n {
            s += (k(i, j) - r[i] / nf - c[j] / nf + t / (nf * nf)) * l(j, i);
        }
    }
    Ok(s)
}

/// Unbiased HSIC (Song et al. 2012, eq. 5) on K~, L~ = K, L with zeroed diagonals:
/// [ sum_ij K~_ij L~_ji + 1^T K~ 1 1^T L~ 1 / ((m-1)(m-2)) - 2 1^T K~ L~ 1 / (m-2) ] / (m (m-3)).
///
/// # Shapes
/// `k [m, m]`, `l [m, m]` -> scalar, m >= 4
pub fn hsic_unbiased(k: MatRef<'_, f64>, l: MatRef<'_, f64>) -> Result<f64> {
    let n = check_square(k, l)?;
    hsic_unbiased_fn(n, |i, j| k[(i, j)], |i, j| l[(i, j)])
}

#[allow(clippy::needless_range_loop)]
pub(crate) fn hsic_unbiased_fn(
    m: usize,
    k: impl Fn(usize, usize) -> f64,
    l: impl Fn(usize, usize) -> f64,
) -> Result<f64> {
    if m < 4 {
        return Err(Error::invalid(format!(
            "unbiased HSIC needs m >= 4 samples, got {m}"
        )));
    }
    // 1^T K~ L~ 1 = sum_a colsum(K~)_a rowsum(L~)_a.
    let (mut ksum, mut lsum, mut trace_kl) = (0.0, 0.0, 0.0);
    let (mut kcol, mut lrow) = (vec![0.0; m], vec![0.0; m]);
    for i in 0..m {
        for j in 0..m {
            if i == j {
                continue;
            }
            let (kv, lv) = (k(i, j), l(i, j));
            ksum += kv;
            lsum += lv;
            kcol[j] += kv;
            lrow[i] += lv;
            trace_kl += kv * l(j, i);
        }
    }
    let kl1: f64 = kcol.iter().zip(&lrow).map(|(a, b)| a * b).sum();
    let mf = m as f64;
    let value = trace_kl + ksum * lsum / ((mf - 1.0) * (mf - 2.0)) - 2.0 * kl1 / (mf - 2.0);
    Ok(value / (mf * (mf - 3.0)))
}

/// The PRH normalisation HSIC(K, L) / (sqrt(HSIC(K, K) HSIC(L, L)) + 1e-6).
pub fn ratio(kl: f64, kk: f64, ll: f64) -> f64 {
    kl / ((kk * ll).sqrt() + CKA_EPS)
}

/// CKA(K, L) = HSIC_b(K, L) / (sqrt(HSIC_b(K, K) HSIC_b(L, L)) + 1e-6) (PRH `cka`).
/// With K = X X^T, L = Y Y^T this is linear CKA; with RBF kernels, RBF CKA.
///
/// # Shapes
/// `k [n, n]`, `l [n, n]` -> scalar in [-1, 1] (1 for K = L up to the 1e-6)
pub fn cka(k: MatRef<'_, f64>, l: MatRef<'_, f64>) -> Result<f64> {
    Ok(ratio(
        hsic_biased(k, l)?,
        hsic_biased(k, k)?,
        hsic_biased(l, l)?,
    ))
}

/// Linear CKA in feature form, never forming an `[n, n]` matrix: with K = X X^T,
/// L = Y Y^T and column-centred Xc = H X, Yc = H Y,
/// HSIC_b(K, L) = tr(K H L H) = ||Yc^T Xc||_F^2, so
/// CKA = ||Yc^T Xc||_F^2 / (||Xc^T Xc||_F ||Yc^T Yc||_F + 1e-6), equal to
/// `cka(gram(x), gram(y))`. The centred products come from the raw ones,
/// Yc^T Xc = Y^T X - n ybar xbar^T, so no centred copy of the features is made:
/// O(n (d + e)^2) time, O((d + e)^2) extra memory.
///
/// # Shapes
/// `x [n, d]`, `y [n, e]` -> scalar
pub fn linear_cka_features(x: MatRef<'_, f64>, y: MatRef<'_, f64>) -> Result<f64> {
    let n = x.nrows();
    if y.nrows() != n || n == 0 {
        return Err(Error::invalid(format!(
            "linear CKA needs two non-empty sets of the same N rows, got {n} and {}",
            y.nrows()
        )));
    }
    let mean = |m: MatRef<'_, f64>| -> Matrix {
        Matrix::from_fn(m.ncols(), 1, |j, _| m.col(j).sum() / n as f64)
    };
    let (xbar, ybar) = (mean(x), mean(y));
    let nf = n as f64;
    // ||Bc^T Ac||_F^2 with Bc^T Ac = B^T A - n bbar abar^T.
    let centred_sq = |a: MatRef<'_, f64>, abar: &Matrix, b: MatRef<'_, f64>, bbar: &Matrix| {
        let c = b.transpose() * a - nf * (bbar * abar.transpose());
        c.squared_norm_l2()
    };
    let kl = centred_sq(x, &xbar, y, &ybar);
    let kk = centred_sq(x, &xbar, x, &xbar);
    let ll = centred_sq(y, &ybar, y, &ybar);
    Ok(ratio(kl, kk, ll))
}

/// Unbiased CKA: CKA with Song et al.'s unbiased HSIC (PRH `unbiased_cka`).
///
/// # Shapes
/// `k [n, n]`, `l [n, n]` -> scalar, n >= 4
pub fn unbiased_cka(k: MatRef<'_, f64>, l: MatRef<'_, f64>) -> Result<f64> {
    Ok(ratio(
        hsic_unbiased(k, l)?,
        hsic_unbiased(k, k)?,
        hsic_unbiased(l, l)?,
    ))
}

/// RBF kernel from a Gram matrix: K_ij = exp(-||x_i - x_j||^2 / (2 sigma^2)), with
/// ||x_i - x_j||^2 = G_ii + G_jj - 2 G_ij (clamped at 0). PRH uses a fixed sigma
/// (`rbf_sigma = 1.0` by default), meaningful for unit-norm rows where distances lie in [0, 2].
///
/// # Shapes
/// `g [n, n]` -> `[n, n]`
pub fn rbf_from_gram(g: MatRef<'_, f64>, sigma: f64) -> Result<Matrix> {
    if !(sigma > 0.0 && sigma.is_finite()) {
        return Err(Error::invalid(format!(
            "RBF sigma must be positive and finite, got {sigma}"
        )));
    }
    let n = g.nrows();
    if g.ncols() != n {
        return Err(Error::invalid(format!(
            "RBF needs a square Gram matrix, got [{n}, {}]",
            g.ncols()
        )));
    }
    let s2 = 2.0 * sigma * sigma;
    Ok(Matrix::from_fn(n, n, |i, j| {
        let d2 = (g[(i, i)] + g[(j, j)] - 2.0 * g[(i, j)]).max(0.0);
        (-d2 / s2).exp()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::knn::gram;
    use faer::Mat;

    fn kernel(n: usize, seed: f64) -> Matrix {
        let x = Mat::from_fn(n, 3, |i, j| ((i as f64 + 1.0) * (j as f64 + seed)).sin());
        gram(x.as_ref())
    }

    #[test]
    fn biased_hsic_matches_trace_definition() {
        let (k, l) = (kernel(7, 1.3), kernel(7, 2.1));
        let h = Mat::from_fn(7, 7, |i, j| if i == j { 1.0 } else { 0.0 } - 1.0 / 7.0);
        let want = (&k * &h * &l * &h).diagonal().column_vector().sum();
        assert!((hsic_biased(k.as_ref(), l.as_ref()).unwrap() - want).abs() < 1e-10);
    }

    #[test]
    fn unbiased_hsic_matches_matrix_formula() {
        // A non-symmetric L exercises the transpose in the first term.
        let k = kernel(8, 0.7);
        let l = Mat::from_fn(8, 8, |i, j| (i as f64 * 0.3 - j as f64 * 0.2).cos());
        let zd = |m: &Matrix| Mat::from_fn(8, 8, |i, j| if i == j { 0.0 } else { m[(i, j)] });
        let (kt, lt) = (zd(&k), zd(&l));
        let ones = Mat::<f64>::from_fn(8, 1, |_, _| 1.0);
        let s = |m: &Matrix| (ones.transpose() * m * &ones)[(0, 0)];
        let t1: f64 = (0..8)
            .flat_map(|i| (0..8).map(move |j| (i, j)))
            .map(|(i, j)| kt[(i, j)] * lt[(j, i)])
            .sum();
        let want = (t1 + s(&kt) * s(&lt) / (7.0 * 6.0) - 2.0 * s(&(&kt * &lt)) / 6.0) / (8.0 * 5.0);
        assert!((hsic_unbiased(k.as_ref(), l.as_ref()).unwrap() - want).abs() < 1e-12);
        assert!(
            hsic_unbiased(
                Mat::<f64>::zeros(3, 3).as_ref(),
                Mat::<f64>::zeros(3, 3).as_ref()
            )
            .is_err()
        );
    }

    #[test]
    fn feature_form_linear_cka_equals_the_gram_form() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        // A shared offset makes the raw products large next to the centred ones.
        let x = Mat::from_fn(53, 7, |_, _| rng.random::<f64>() + 2.0);
        let y = Mat::from_fn(53, 4, |i, j| x[(i, j)] * 0.5 + rng.random::<f64>());
        let dense = cka(gram(x.as_ref()).as_ref(), gram(y.as_ref()).as_ref()).unwrap();
        let feat = linear_cka_features(x.as_ref(), y.as_ref()).unwrap();
        assert!((dense - feat).abs() < 1e-10, "{dense} vs {feat}");
    }

    #[test]
    fn identical_kernels_give_one_up_to_the_stabiliser() {
        // Closed form for K = L: h / (h + 1e-6) with h = HSIC(K, K).
        let k = kernel(12, 1.0);
        let h = hsic_biased(k.as_ref(), k.as_ref()).unwrap();
        assert!((cka(k.as_ref(), k.as_ref()).unwrap() - h / (h + CKA_EPS)).abs() < 1e-12);
        assert!((cka(k.as_ref(), k.as_ref()).unwrap() - 1.0).abs() < 1e-6);
        let hu = hsic_unbiased(k.as_ref(), k.as_ref()).unwrap();
        assert!(
            (unbiased_cka(k.as_ref(), k.as_ref()).unwrap() - hu / (hu + CKA_EPS)).abs() < 1e-12
        );
        let c = cknna(k.as_ref(), k.as_ref(), 4, true).unwrap();
        assert!(c > 0.99 && c <= 1.0, "{c}");
        let r = rbf_from_gram(k.as_ref(), 1.0).unwrap();
        assert!((r[(3, 3)] - 1.0).abs() < 1e-15);
        let hr = hsic_biased(r.as_ref(), r.as_ref()).unwrap();
        assert!((cka(r.as_ref(), r.as_ref()).unwrap() - hr / (hr + CKA_EPS)).abs() < 1e-12);
    }
}
