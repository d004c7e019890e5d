//! CKNNA (Huh et al. 2024; paper §5's alignment metrics): CKA restricted to pairs that
//! are nearest neighbours in both representations, as the PRH benchmark's `metrics.py`
//! computes it. Two forms: the dense one on `[n, n]` kernels ([`cknna`], [`cknna_with`]),
//! the reference; and [`cknna_from_lists`], which needs only each row's k neighbours and
//! their similarities — the masked kernels have at most n k non-zeros, so every HSIC sum
//! runs over those: O(n k log k) time and memory instead of O(n^2).

use crate::measure::cka::{check_square, hsic_biased_fn, hsic_unbiased_fn, ratio};
use crate::measure::knn::{Knn, knn_from_gram};
use crate::{Error, Result};
use faer::MatRef;

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

/// A kernel pair restricted to a sparse support, rows sorted by column: row i holds
/// (j, A_ij, B_ij) for the (i, j) in the support.
struct Sparse {
    start: Vec<usize>,
    col: Vec<usize>,
    a: Vec<f64>,
    b: Vec<f64>,
}

impl Sparse {
    /// Builds the support row by row from `entries(i)` = that row's (j, A_ij, B_ij).
    fn build(n: usize, mut entries: impl FnMut(usize, &mut Vec<(usize, f64, f64)>)) -> Self {
        let mut s = Sparse {
            start: Vec::with_capacity(n + 1),
            col: Vec::new(),
            a: Vec::new(),
            b: Vec::new(),
        };
        let mut row = Vec::new();
        s.start.push(0);
        for i in 0..n {
            row.clear();
            entries(i, &mut row);
            row.sort_by_key(|e| e.0);
            for &(j, a, b) in &row {
                s.col.push(j);
                s.a.push(a);
                s.b.push(b);
            }
            s.start.push(s.col.len());
        }
        s
    }

    fn n(&self) -> usize {
        self.start.len() - 1
    }

    /// B_ij, 0 off the support.
    fn b_at(&self, i: usize, j: usize) -> f64 {
        let r = self.start[i]..self.start[i + 1];
        match self.col[r.clone()].binary_search(&j) {
            Ok(p) => self.b[r.start + p],
            Err(_) => 0.0,
        }
    }

    /// (i, j, A_ij, B_ij) over the support.
    fn iter(&self) -> impl Iterator<Item = (usize, usize, f64, f64)> + '_ {
        (0..self.n()).flat_map(move |i| {
            (self.start[i]..self.start[i + 1]).map(move |p| (i, self.col[p], self.a[p], self.b[p]))
        })
    }

    /// Biased HSIC tr(A H B H) = sum_ij (A_ij - r_i/n - c_j/n + t/n^2) B_ji with row/column
    /// sums r, c and total t of A; expanded so only the support is visited:
    /// sum_ij A_ij B_ji - (r . colsum B)/n - (c . rowsum B)/n + t tB / n^2.
    fn hsic_biased(&self) -> Result<f64> {
        let n = self.n();
        if n == 0 {
            return Err(Error::invalid("HSIC needs at least one sample"));
        }
        let (mut ar, mut ac, mut br, mut bc) =
            (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        let mut trace = 0.0;
        for (i, j, a, b) in self.iter() {
            ar[i] += a;
            ac[j] += a;
            br[i] += b;
            bc[j] += b;
            trace += a * self.b_at(j, i);
        }
        let dot = |x: &[f64], y: &[f64]| x.iter().zip(y).map(|(p, q)| p * q).sum::<f64>();
        let (ta, tb) = (ar.iter().sum::<f64>(), br.iter().sum::<f64>());
        let nf = n as f64;
        Ok(trace - dot(&ar, &bc) / nf - dot(&ac, &br) / nf + ta * tb / (nf * nf))
    }

    /// Unbiased HSIC (Song et al. 2012, eq. 5) on the support off the diagonal:
    /// [sum_ij A~_ij B~_ji + 1^T A~ 1 1^T B~ 1 / ((m-1)(m-2)) - 2 1^T A~ B~ 1 / (m-2)] / (m (m-3)).
    fn hsic_unbiased(&self) -> Result<f64> {
        let m = self.n();
        if m < 4 {
            return Err(Error::invalid(format!(
                "unbiased HSIC needs m >= 4 samples, got {m}"
            )));
        }
        let (mut acol, mut brow) = (vec![0.0; m], vec![0.0; m]);
        let (mut asum, mut bsum, mut trace) = (0.0, 0.0, 0.0);
        for (i, j, a, b) in self.iter().filter(|e| e.0 != e.1) {
            asum += a;
            bsum += b;
            acol[j] += a;
            brow[i] += b;
            trace += a * self.b_at(j, i);
        }
        let kl1: f64 = acol.iter().zip(&brow).map(|(p, q)| p * q).sum();
        let mf = m as f64;
        let value = trace + asum * bsum / ((mf - 1.0) * (mf - 2.0)) - 2.0 * kl1 / (mf - 2.0);
        Ok(value / (mf * (mf - 3.0)))
    }
}

/// [`cknna_with`] from the neighbour lists and their similarities alone: `sk[i * k + r]`
/// is K_{i, nk(i)_r} and `sl` likewise for L (as [`crate::measure::knn::knn_from_features`] and
/// the kernel pass return them). The masked kernels M∘K, M∘L vanish off the lists, so
/// sim(K, L) = HSIC(M∘K, M∘L) is summed over the at most n k entries
/// M_ij = [j ∈ N_K(i)] [j ∈ N_L(i)]; the value equals the dense form's.
///
/// # Shapes
/// `nk [n, k]`, `sk [n * k]`, `nl [n, k]`, `sl [n * k]` -> scalar
pub fn cknna_from_lists(nk: &Knn, sk: &[f64], nl: &Knn, sl: &[f64], unbiased: bool) -> Result<f64> {
    if nk.n != nl.n || nk.k != nl.k || sk.len() != nk.idx.len() || sl.len() != nl.idx.len() {
        return Err(Error::invalid(format!(
            "neighbour lists differ in shape: [{}, {}] ({} similarities) vs [{}, {}] ({})",
            nk.n,
            nk.k,
            sk.len(),
            nl.n,
            nl.k,
            sl.len()
        )));
    }
    let (n, k) = (nk.n, nk.k);
    let own = |nn: &Knn, s: &[f64]| {
        Sparse::build(n, |i, row| {
            row.extend(
                nn.row(i)
                    .iter()
                    .zip(&s[i * k..(i + 1) * k])
                    .map(|(&j, &v)| (j, v, v)),
            )
        })
    };
    let both = Sparse::build(n, |i, row| {
        for (r, &j) in nk.row(i).iter().enumerate() {
            if let Some(q) = nl.row(i).iter().position(|&x| x == j) {
                row.push((j, sk[i * k + r], sl[i * k + q]));
            }
        }
    });
    let sim = |s: &Sparse| {
        if unbiased {
            s.hsic_unbiased()
        } else {
            s.hsic_biased()
        }
    };
    Ok(ratio(sim(&both)?, sim(&own(nk, sk))?, sim(&own(nl, sl))?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::knn::{gram, knn_from_features};
    use faer::Mat;
    use rand::{Rng, SeedableRng};

    #[test]
    fn list_form_equals_dense_form() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let x = Mat::from_fn(41, 5, |_, _| rng.random::<f64>() - 0.3);
        let y = Mat::from_fn(41, 6, |i, j| {
            x[(i, j % 5)] + 0.7 * (rng.random::<f64>() - 0.5)
        });
        let (gx, gy) = (gram(x.as_ref()), gram(y.as_ref()));
        for unbiased in [true, false] {
            let dense = cknna(gx.as_ref(), gy.as_ref(), 6, unbiased).unwrap();
            let (nk, sk) = knn_from_features(x.as_ref(), 6, unbiased).unwrap();
            let (nl, sl) = knn_from_features(y.as_ref(), 6, unbiased).unwrap();
            let lists = cknna_from_lists(&nk, &sk, &nl, &sl, unbiased).unwrap();
            assert!(
                (dense - lists).abs() < 1e-10,
                "unbiased {unbiased}: {dense} vs {lists}"
            );
        }
    }
}
