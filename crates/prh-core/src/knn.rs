//! Nearest-neighbour alignment (paper §5: mutual k-NN, k = 10, on WIT-1024), with the
//! conventions of the PRH benchmark (Huh et al. 2024, `metrics.py`): neighbours come from
//! the Gram matrix X X^T of the (normalised) features with the diagonal excluded, ordered
//! by decreasing similarity.

use crate::linalg::Matrix;
use crate::{Error, Result};
use faer::MatRef;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use std::cmp::Ordering;

/// Gram matrix G = X X^T (inner products of rows).
///
/// # Shapes
/// `x [n, d]` -> `[n, n]`
pub fn gram(x: MatRef<'_, f64>) -> Matrix {
    x * x.transpose()
}

/// The k nearest neighbours of every row, closest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Knn {
    /// Number of rows N.
    pub n: usize,
    /// Neighbours per row k.
    pub k: usize,
    /// Flat `[n, k]`: `idx[i * k + r]` is the (r+1)-th neighbour of row i.
    pub idx: Vec<usize>,
}

impl Knn {
    /// Neighbour list of row `i` (closest first).
    pub fn row(&self, i: usize) -> &[usize] {
        &self.idx[i * self.k..(i + 1) * self.k]
    }

    /// The neighbour lists of B' = B[perm] (row i of B' is row perm[i] of B) without
    /// recomputing anything: N_{B'}(i) = perm^{-1}(N_B(perm[i])).
    pub fn permuted(&self, perm: &[usize]) -> Knn {
        let mut inv = vec![0; perm.len()];
        for (i, &p) in perm.iter().enumerate() {
            inv[p] = i;
        }
        let mut idx = Vec::with_capacity(self.idx.len());
        for &p in perm {
            idx.extend(self.row(p).iter().map(|&j| inv[j]));
        }
        Knn {
            n: self.n,
            k: self.k,
            idx,
        }
    }
}

/// Top-k of each row of a similarity matrix: N(i) = argtop-k_{j} G_ij, optionally with
/// j = i excluded (PRH fills the diagonal with -1e8). Ties go to the lower index, which
/// makes the result deterministic (torch's argsort leaves them unspecified).
///
/// Uses `select_nth_unstable_by` (O(n) per row) then sorts only the k chosen.
///
/// # Shapes
/// `g [n, n]` -> `Knn [n, k]`
pub fn knn_from_gram(g: MatRef<'_, f64>, k: usize, exclude_self: bool) -> Result<Knn> {
    let n = g.nrows();
    if g.ncols() != n {
        return Err(Error::invalid(format!(
            "k-NN needs a square Gram matrix, got [{n}, {}]",
            g.ncols()
        )));
    }
    let avail = if exclude_self { n.saturating_sub(1) } else { n };
    if k == 0 || k > avail {
        return Err(Error::invalid(format!(
            "k = {k} neighbours needs 1 <= k <= {avail} (N = {n})"
        )));
    }
    let mut idx = Vec::with_capacity(n * k);
    let mut cand: Vec<usize> = Vec::with_capacity(n);
    for i in 0..n {
        cand.clear();
        cand.extend((0..n).filter(|&j| !(exclude_self && j == i)));
        let cmp =
            |a: &usize, b: &usize| -> Ordering { g[(i, *b)].total_cmp(&g[(i, *a)]).then(a.cmp(b)) };
        if k < cand.len() {
            cand.select_nth_unstable_by(k - 1, cmp);
        }
        let top = &mut cand[..k];
        top.sort_unstable_by(cmp);
        idx.extend_from_slice(top);
    }
    Ok(Knn { n, k, idx })
}

fn check_pair(a: &Knn, b: &Knn) -> Result<()> {
    if a.n != b.n || a.k != b.k {
        return Err(Error::invalid(format!(
            "k-NN lists differ in shape: [{}, {}] vs [{}, {}]",
            a.n, a.k, b.n, b.k
        )));
    }
    Ok(())
}

/// Mutual k-NN alignment: (1/N) sum_i |N_A(i) ∩ N_B(i)| / k, in [0, 1]; about k/(N-1)
/// for unrelated representations (PRH `mutual_knn`).
///
/// # Shapes
/// `a [n, k]`, `b [n, k]` -> scalar
pub fn mutual_knn(a: &Knn, b: &Knn) -> Result<f64> {
    check_pair(a, b)?;
    // stamp[j] == i + 1 marks j as a neighbour of i in A: O(N k) overall.
    let mut stamp = vec![0usize; a.n];
    let mut hits = 0usize;
    for i in 0..a.n {
        for &j in a.row(i) {
            stamp[j] = i + 1;
        }
        hits += b.row(i).iter().filter(|&&j| stamp[j] == i + 1).count();
    }
    Ok(hits as f64 / (a.n * a.k) as f64)
}

/// Cycle k-NN: the fraction of i such that some B-neighbour j of i has i among its
/// A-neighbours, (1/N) sum_i 1[∃ j ∈ N_B(i): i ∈ N_A(j)] (PRH `cycle_knn`, computed there
/// as `knn_A[knn_B]`).
///
/// # Shapes
/// `a [n, k]`, `b [n, k]` -> scalar
pub fn cycle_knn(a: &Knn, b: &Knn) -> Result<f64> {
    check_pair(a, b)?;
    let hits = (0..a.n)
        .filter(|&i| b.row(i).iter().any(|&j| a.row(j).contains(&i)))
        .count();
    Ok(hits as f64 / a.n as f64)
}

/// Length of the longest common subsequence of two sequences (classic O(|x| |y|) DP).
pub fn lcs_length(x: &[usize], y: &[usize]) -> usize {
    let mut prev = vec![0usize; y.len() + 1];
    let mut cur = vec![0usize; y.len() + 1];
    for &xi in x {
        for (j, &yj) in y.iter().enumerate() {
            cur[j + 1] = if xi == yj {
                prev[j] + 1
            } else {
                prev[j + 1].max(cur[j])
            };
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[y.len()]
}

/// LCS k-NN: mean over i of LCS(N_A(i), N_B(i)) of the *ordered* neighbour lists, in
/// [0, k] (PRH `lcs_knn`, not divided by k).
///
/// # Shapes
/// `a [n, k]`, `b [n, k]` -> scalar
pub fn lcs_knn(a: &Knn, b: &Knn) -> Result<f64> {
    check_pair(a, b)?;
    let total: usize = (0..a.n).map(|i| lcs_length(a.row(i), b.row(i))).sum();
    Ok(total as f64 / a.n as f64)
}

/// Permutation null of mutual k-NN: the score of A against B with B's rows shuffled
/// (the pairing destroyed, each geometry intact), over `shuffles` seeded permutations.
/// Returns (mean, population std); the mean is about k/(N-1).
///
/// # Shapes
/// `a [n, k]`, `b [n, k]` -> (scalar, scalar)
pub fn mutual_knn_null(a: &Knn, b: &Knn, shuffles: usize, seed: u64) -> Result<(f64, f64)> {
    check_pair(a, b)?;
    if shuffles == 0 {
        return Err(Error::invalid(
            "the permutation null needs at least one shuffle",
        ));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut perm: Vec<usize> = (0..b.n).collect();
    let mut scores = Vec::with_capacity(shuffles);
    for _ in 0..shuffles {
        perm.shuffle(&mut rng);
        scores.push(mutual_knn(a, &b.permuted(&perm))?);
    }
    let mean = scores.iter().sum::<f64>() / shuffles as f64;
    let var = scores.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / shuffles as f64;
    Ok((mean, var.sqrt()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;

    fn points(n: usize, d: usize, seed: u64) -> Matrix {
        use rand::Rng;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        Mat::from_fn(n, d, |_, _| rng.random::<f64>() - 0.5)
    }

    #[test]
    fn identical_inputs_score_one() {
        let x = points(40, 5, 1);
        let a = knn_from_gram(gram(x.as_ref()).as_ref(), 10, true).unwrap();
        assert_eq!(mutual_knn(&a, &a).unwrap(), 1.0);
        assert_eq!(cycle_knn(&a, &a).unwrap(), 1.0);
        assert_eq!(lcs_knn(&a, &a).unwrap(), 10.0);
        assert!((0..40).all(|i| !a.row(i).contains(&i)));
    }

    #[test]
    fn knn_order_and_ties() {
        // Row 0 sees 9 (itself), 7, 7, 1: without self the order is 1, 2 (tie broken by index).
        let g = Mat::from_fn(4, 4, |i, j| {
            if i == 0 {
                [9.0, 7.0, 7.0, 1.0][j]
            } else {
                -((i as f64) - j as f64).abs()
            }
        });
        let a = knn_from_gram(g.as_ref(), 2, true).unwrap();
        assert_eq!(a.row(0), &[1, 2]);
        let b = knn_from_gram(g.as_ref(), 2, false).unwrap();
        assert_eq!(b.row(0), &[0, 1]);
        assert!(knn_from_gram(g.as_ref(), 4, true).is_err());
    }

    #[test]
    fn lcs_closed_forms() {
        assert_eq!(lcs_length(&[1, 2, 3, 4], &[2, 4, 3]), 2);
        assert_eq!(lcs_length(&[1, 2, 3], &[1, 2, 3]), 3);
        assert_eq!(lcs_length(&[1, 2], &[3, 4]), 0);
    }

    #[test]
    fn permuted_matches_recomputed() {
        let x = points(30, 4, 2);
        let a = knn_from_gram(gram(x.as_ref()).as_ref(), 5, true).unwrap();
        let perm: Vec<usize> = (0..30).map(|i| (i * 7 + 3) % 30).collect();
        let xp = Mat::from_fn(30, 4, |i, j| x[(perm[i], j)]);
        let ap = knn_from_gram(gram(xp.as_ref()).as_ref(), 5, true).unwrap();
        assert_eq!(a.permuted(&perm), ap);
    }

    #[test]
    fn null_is_near_chance() {
        let x = points(200, 8, 3);
        let a = knn_from_gram(gram(x.as_ref()).as_ref(), 10, true).unwrap();
        let (mean, std) = mutual_knn_null(&a, &a, 50, 7).unwrap();
        // Chance k/(N-1) = 0.0503; the mean of 50 shuffles sits within a few of its std errors.
        assert!((mean - 10.0 / 199.0).abs() < 0.01, "{mean}");
        assert!(std > 0.0 && std < 0.02, "{std}");
    }
}
