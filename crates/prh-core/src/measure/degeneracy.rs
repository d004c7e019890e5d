//! Degenerate embeddings, flagged before anyone reads a score: zero rows, a collapsed
//! (zero-variance) set, a rank below the dimension in use, exact duplicates, and exact
//! ties in the similarities a metric ranks by. A collapsed encoder is what a researcher
//! hunting for collapse must see, and every rank-based metric is undefined on ties: a tie
//! resolved in the true match's favour gives an all-zero embedding a perfect R@1, and a
//! tie resolved by row index gives it a mutual k-NN above the null.

use crate::Result;
use crate::linalg::{Matrix, sym_eigenvalues};
use faer::MatRef;
use serde::Serialize;
use std::cmp::Ordering;

/// Share of queries (or neighbour lists) with exact ties above which a warning is given.
pub const TIE_WARN_SHARE: f64 = 0.01;

/// A singular value counts towards the rank when it exceeds this times the largest one:
/// float32 embeddings carry rounding noise near 1e-7 of the largest singular value, and
/// eigenvalues of the Gram matrix (squares) resolve relative singular values down to
/// ~1e-8 in f64.
pub const RANK_RTOL: f64 = 1e-5;

/// What is degenerate about one `[n, d]` embedding matrix, as a metric uses it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Degeneracy {
    /// Rows N.
    pub n: usize,
    /// Width D.
    pub d: usize,
    /// Rows that are exactly zero (cosine similarity 0 to everything).
    pub zero_rows: usize,
    /// Rows equal to an earlier row in every coordinate.
    pub duplicate_rows: usize,
    /// Total variance tr Cov(X) = (1/N) sum_i ||x_i - xbar||^2.
    pub total_variance: f64,
    /// Numerical rank: #{sigma_i > RANK_RTOL * sigma_max} of X (uncentred).
    pub rank: usize,
    /// Every row is the same vector (N > 1): all rows duplicate one, or the total
    /// variance is below 1e-20 of the mean squared row norm (the rounding of the mean of
    /// identical rows does not count as variance).
    pub collapsed: bool,
}

impl Degeneracy {
    /// Measures `x`: O(n d log n) for duplicates, O(min(n, d)^2 max(n, d)) for the rank
    /// (eigenvalues of the smaller Gram matrix, X^T X or X X^T, whose eigenvalues are the
    /// squared singular values of X).
    ///
    /// # Shapes
    /// `x [n, d]` -> `Degeneracy`
    pub fn of(x: MatRef<'_, f64>) -> Result<Self> {
        let (n, d) = (x.nrows(), x.ncols());
        let zero_rows = (0..n).filter(|&i| (0..d).all(|j| x[(i, j)] == 0.0)).count();
        let mut order: Vec<usize> = (0..n).collect();
        let cmp = |&a: &usize, &b: &usize| {
            (0..d)
                .map(|j| x[(a, j)].total_cmp(&x[(b, j)]))
                .find(|o| *o != Ordering::Equal)
                .unwrap_or(Ordering::Equal)
        };
        order.sort_by(cmp);
        let duplicate_rows = order
            .windows(2)
            .filter(|w| (0..d).all(|j| x[(w[0], j)] == x[(w[1], j)]))
            .count();
        let mean: Vec<f64> = (0..d)
            .map(|j| (0..n).map(|i| x[(i, j)]).sum::<f64>() / n.max(1) as f64)
            .collect();
        let total_variance = (0..n)
            .map(|i| (0..d).map(|j| (x[(i, j)] - mean[j]).powi(2)).sum::<f64>())
            .sum::<f64>()
            / n.max(1) as f64;
        let gram: Matrix = if n >= d {
            x.transpose() * x
        } else {
            x * x.transpose()
        };
        let eig = if gram.nrows() == 0 {
            Vec::new()
        } else {
            sym_eigenvalues(gram.as_ref())?
        };
        let top = eig.iter().cloned().fold(0.0_f64, f64::max);
        let rank = if top > 0.0 {
            eig.iter()
                .filter(|&&l| l > RANK_RTOL * RANK_RTOL * top)
                .count()
        } else {
            0
        };
        let mean_sq = (0..n)
            .map(|i| (0..d).map(|j| x[(i, j)].powi(2)).sum::<f64>())
            .sum::<f64>()
            / n.max(1) as f64;
        let collapsed = n > 1 && (duplicate_rows + 1 == n || total_variance <= 1e-20 * mean_sq);
        Ok(Degeneracy {
            n,
            d,
            zero_rows,
            duplicate_rows,
            total_variance,
            rank,
            collapsed,
        })
    }

    /// Plain-language warnings about the matrix called `name` ("A", "B", "A layer 3").
    pub fn warnings(&self, name: &str) -> Vec<String> {
        let mut out = Vec::new();
        let full = self.n.min(self.d);
        if self.n > 0 && self.zero_rows == self.n {
            out.push(format!(
                "{name}: all {} rows are zero (a collapsed embedding): every similarity is 0, \
                 so every ranking is a tie and no score measures alignment",
                self.n
            ));
            return out;
        }
        if self.collapsed {
            out.push(format!(
                "{name}: every row is the same vector (zero variance, a collapsed embedding): \
                 every ranking is a tie and no score measures alignment"
            ));
            return out;
        }
        if self.zero_rows > 0 {
            out.push(format!(
                "{name}: {} of {} rows are zero (cosine 0 to everything; they tie with each other)",
                self.zero_rows, self.n
            ));
        }
        if self.duplicate_rows > 0 {
            out.push(format!(
                "{name}: {} of {} rows repeat another row exactly (their similarities tie)",
                self.duplicate_rows, self.n
            ));
        }
        if self.rank < full {
            out.push(format!(
                "{name}: rank {} below the dimension in use min(N, D) = {full}: the rows span \
                 only {} directions",
                self.rank, self.rank
            ));
        }
        out
    }
}

/// The warning for a share of tied rankings, if it reaches [`TIE_WARN_SHARE`].
pub fn tie_warning(name: &str, share: f64, what: &str) -> Option<String> {
    (share >= TIE_WARN_SHARE)
        .then(|| format!("{name}: {:.1}% of {what} have exact ties", 100.0 * share))
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;

    #[test]
    fn closed_forms() {
        // Three rows in 4-d: rank 2 (row 2 = row 0 + row 1), one duplicate of none.
        let x = Mat::from_fn(3, 4, |i, j| {
            [
                [1.0, 0.0, 0.0, 2.0],
                [0.0, 1.0, 0.0, 0.0],
                [1.0, 1.0, 0.0, 2.0],
            ][i][j]
        });
        let h = Degeneracy::of(x.as_ref()).unwrap();
        assert_eq!((h.zero_rows, h.duplicate_rows, h.rank), (0, 0, 2));
        // Mean (2/3, 2/3, 0, 4/3); squared deviations per row: 1/9+4/9+4/9=1, 4/9+1/9+16/9=21/9, 1/9+1/9+4/9=6/9.
        assert!((h.total_variance - (9.0 + 21.0 + 6.0) / 9.0 / 3.0).abs() < 1e-12);
        assert!(!h.collapsed);
        let w = h.warnings("A");
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("rank 2 below") && w[0].contains("min(N, D) = 3"));

        let zero = Mat::<f64>::zeros(5, 3);
        let h = Degeneracy::of(zero.as_ref()).unwrap();
        assert_eq!((h.zero_rows, h.duplicate_rows, h.rank), (5, 4, 0));
        assert!(h.collapsed);
        assert!(h.warnings("A")[0].contains("all 5 rows are zero"));

        let constant = Mat::from_fn(6, 3, |_, j| 0.1 * (j + 1) as f64);
        let h = Degeneracy::of(constant.as_ref()).unwrap();
        assert_eq!((h.duplicate_rows, h.rank), (5, 1));
        assert!(h.collapsed);
        assert!(h.warnings("B")[0].contains("same vector"));

        // Full rank, distinct rows: no warning.
        let x = Mat::from_fn(8, 3, |i, j| {
            ((i * 7 + j * 3) % 5) as f64 + 0.1 * (i * j) as f64
        });
        let h = Degeneracy::of(x.as_ref()).unwrap();
        assert_eq!(h.rank, 3);
        assert!(h.warnings("A").is_empty(), "{:?}", h.warnings("A"));
        assert_eq!(tie_warning("A", 0.005, "queries"), None);
        assert!(tie_warning("A", 0.5, "queries").unwrap().contains("50.0%"));
    }
}
