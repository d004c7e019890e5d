//! Kernel alignment (paper §5: "linear CKA for the large comparisons"): CKA from the
//! biased HSIC (Gretton et al. 2005, Kornblith et al. 2019), unbiased CKA from Song et
//! al.'s unbiased HSIC (JMLR 2012, eq. 5) and CKNNA (Huh et al. 2024), with exactly the
//! normalisation of the PRH benchmark's `metrics.py`:
//! score = HSIC(K, L) / (sqrt(HSIC(K, K) HSIC(L, L)) + 1e-6).
//!
//! Everything takes kernel (Gram) matrices, so one Gram per side serves every metric.
//! HSICs are computed in O(n^2) from row/column sums instead of forming K H L H.

use crate::knn::{Knn, knn_from_gram};
use crate::linalg::Matrix;
use crate::{Error, Result};
use faer::MatRef;

/// The PRH benchmark's stabiliser in the CKA denominator.
pub const CKA_EPS: f64 = 1e-6;

fn check_square(k: MatRef<'_, f64>, l: MatRef<'_, f64>) -> Result<usize> {
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
fn hsic_biased_fn(
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
fn hsic_unbiased_fn(
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

fn ratio(kl: f64, kk: f64, ll: f64) -> f64 {
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

/// CKNNA (Huh et al. 2024): CKA restricted to mutual nearest neighbours.
/// With N_K(i) the top-k of row i of K (diagonal excluded when `unbiased`), the mask
/// M_ij = [j ∈ N_K(i)] [j ∈ N_L(i)] and sim(K, L) = HSIC(M∘K, M∘L) (unbiased or biased),
/// CKNNA = sim(K, L) / (sqrt(sim(K, K) sim(L, L)) + 1e-6). `unbiased = true` is PRH's default.
///
/// # Shapes
/// `k [n, n]`, `l [n, n]` -> scalar
pub fn cknna(k: MatRef<'_, f64>, l: MatRef<'_, f64>, topk: usize, unbiased: bool) -> Result<f64> {
    check_square(k, l)?;
    if topk < 2 {
        return Err(Error::invalid(format!("CKNNA requires k >= 2, got {topk}")));
    }
    let nk = knn_from_gram(k, topk, unbiased)?;
    let nl = knn_from_gram(l, topk, unbiased)?;
    cknna_with(k, l, &nk, &nl, unbiased)
}

/// [`cknna`] with the neighbour lists already computed (they must have been computed
/// from `k` and `l` with the diagonal excluded iff `unbiased`).
///
/// # Shapes
/// `k [n, n]`, `l [n, n]`, `nk [n, topk]`, `nl [n, topk]` -> scalar
pub fn cknna_with(
    k: MatRef<'_, f64>,
    l: MatRef<'_, f64>,
    nk: &Knn,
    nl: &Knn,
    unbiased: bool,
) -> Result<f64> {
    let n = check_square(k, l)?;
    if nk.n != n || nl.n != n {
        return Err(Error::invalid(format!(
            "neighbour lists cover {} and {} rows, kernels {n}",
            nk.n, nl.n
        )));
    }
    let to_mask = |nn: &Knn| {
        let mut m = vec![false; n * n];
        for i in 0..n {
            for &j in nn.row(i) {
                m[i * n + j] = true;
            }
        }
        m
    };
    let (mk, ml) = (to_mask(nk), to_mask(nl));
    let both: Vec<bool> = mk.iter().zip(&ml).map(|(a, b)| *a && *b).collect();
    let sim = |mask: &[bool], a: MatRef<'_, f64>, b: MatRef<'_, f64>| {
        let fa = |i: usize, j: usize| if mask[i * n + j] { a[(i, j)] } else { 0.0 };
        let fb = |i: usize, j: usize| if mask[i * n + j] { b[(i, j)] } else { 0.0 };
        if unbiased {
            hsic_unbiased_fn(n, fa, fb)
        } else {
            hsic_biased_fn(n, fa, fb)
        }
    };
    // sim(K, K) uses mask_K ∘ mask_K = mask_K.
    Ok(ratio(sim(&both, k, l)?, sim(&mk, k, k)?, sim(&ml, l, l)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knn::gram;
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
