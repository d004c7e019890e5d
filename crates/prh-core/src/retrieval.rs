//! Retrieval through one fitted rotation (paper §5: "fit an orthogonal map on paired
//! validation data, then rank captions for each test image"; §6: Flickr R@1). The map is
//! the Procrustes solution of the theorem's f*_1 = Q f*_2 (§2), fitted on pairs and
//! applied to held-out rows.

use crate::knn::{BLOCK_BYTES, gram_block_into, rows_per_block};
use crate::linalg::Matrix;
use crate::preprocess::l2_normalize_rows;
use crate::procrustes::{self, Procrustes};
use crate::{Error, Result};
use faer::MatRef;
use serde::Serialize;

/// Recall at 1, 5, 10 and the mean rank of the true match, in one direction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RetrievalScores {
    /// Fraction of queries whose true match ranks first.
    #[serde(rename = "R@1")]
    pub r1: f64,
    /// Fraction ranked in the top 5.
    #[serde(rename = "R@5")]
    pub r5: f64,
    /// Fraction ranked in the top 10.
    #[serde(rename = "R@10")]
    pub r10: f64,
    /// Mean 1-based rank of the true match.
    pub mean_rank: f64,
}

impl RetrievalScores {
    /// Summaries of 1-based ranks: R@k = #{rank <= k} / n, mean rank.
    pub fn from_ranks(ranks: &[usize]) -> Result<Self> {
        if ranks.is_empty() {
            return Err(Error::invalid("retrieval needs at least one query"));
        }
        let n = ranks.len() as f64;
        let at = |k: usize| ranks.iter().filter(|&&r| r <= k).count() as f64 / n;
        Ok(RetrievalScores {
            r1: at(1),
            r5: at(5),
            r10: at(10),
            mean_rank: ranks.iter().sum::<usize>() as f64 / n,
        })
    }

    /// What a random ranking of n candidates scores: R@k = min(k, n)/n, mean rank (n+1)/2.
    pub fn chance(n: usize) -> Self {
        let nf = n.max(1) as f64;
        let at = |k: usize| k.min(n) as f64 / nf;
        RetrievalScores {
            r1: at(1),
            r5: at(5),
            r10: at(10),
            mean_rank: (nf + 1.0) / 2.0,
        }
    }
}

/// Rank of the true match for each query: query i's true match is gallery row i; with
/// cosine similarity s_ij, rank_i = 1 + #{j : s_ij > s_ii} (ties resolved in the query's
/// favour, the usual convention).
///
/// # Shapes
/// `queries [n, e]`, `gallery [n, e]` -> `[n]`
pub fn ranks(queries: MatRef<'_, f64>, gallery: MatRef<'_, f64>) -> Result<Vec<usize>> {
    if queries.nrows() != gallery.nrows() || queries.ncols() != gallery.ncols() {
        return Err(Error::invalid(format!(
            "retrieval needs paired rows of one width: queries [{}, {}], gallery [{}, {}]",
            queries.nrows(),
            queries.ncols(),
            gallery.nrows(),
            gallery.ncols()
        )));
    }
    let mut q = queries.to_owned();
    let mut g = gallery.to_owned();
    l2_normalize_rows(&mut q);
    l2_normalize_rows(&mut g);
    // Cosine similarities a block of queries at a time (never the [n, n] matrix): column r
    // of `block` holds s_{i0 + r, j} over the gallery j.
    let n = q.nrows();
    let b = rows_per_block(n, BLOCK_BYTES).min(n.max(1));
    let mut block = Matrix::zeros(n, b);
    let mut out = Vec::with_capacity(n);
    for i0 in (0..n).step_by(b) {
        let rows = b.min(n - i0);
        gram_block_into(
            block.as_mut().subcols_mut(0, rows),
            g.as_ref(),
            q.subrows(i0, rows),
        );
        for r in 0..rows {
            let s = block.col_as_slice(r);
            let own = s[i0 + r];
            out.push(1 + s.iter().filter(|&&v| v > own).count());
        }
    }
    Ok(out)
}

/// A fitted rotation and its retrieval scores on held-out pairs.
#[derive(Debug, Clone)]
pub struct AlignReport {
    /// The Procrustes fit on the training pairs (`q [d_a, d_b]`).
    pub fit: Procrustes,
    /// Number of training pairs.
    pub n_fit: usize,
    /// Number of held-out pairs ranked.
    pub n_test: usize,
    /// Queries A_i Q ranked against the rows of B.
    pub a_to_b: RetrievalScores,
    /// Queries B_i Q^T ranked against the rows of A.
    pub b_to_a: RetrievalScores,
    /// Scores of a random ranking of `n_test` candidates.
    pub chance: RetrievalScores,
}

/// Fits Q = argmin_{Q^T Q = I} ||A_fit Q - B_fit||_F (semi-orthogonal when widths differ)
/// and ranks held-out pairs in both directions: A_test Q against B_test, and B_test Q^T
/// against A_test.
///
/// # Shapes
/// `fit_a [m, d]`, `fit_b [m, e]`, `test_a [n, d]`, `test_b [n, e]` -> Q `[d, e]`, scores
pub fn align_and_rank(
    fit_a: MatRef<'_, f64>,
    fit_b: MatRef<'_, f64>,
    test_a: MatRef<'_, f64>,
    test_b: MatRef<'_, f64>,
) -> Result<AlignReport> {
    if test_a.nrows() != test_b.nrows() {
        return Err(Error::invalid(format!(
            "held-out sets differ in size: {} rows of A, {} of B",
            test_a.nrows(),
            test_b.nrows()
        )));
    }
    if test_a.ncols() != fit_a.ncols() || test_b.ncols() != fit_b.ncols() {
        return Err(Error::invalid(format!(
            "fit and test widths differ: A {} vs {}, B {} vs {}",
            fit_a.ncols(),
            test_a.ncols(),
            fit_b.ncols(),
            test_b.ncols()
        )));
    }
    let fit = procrustes::fit(fit_a, fit_b)?;
    let a_mapped: Matrix = procrustes::apply(test_a, fit.q.as_ref())?;
    let b_mapped: Matrix = procrustes::apply(test_b, fit.q.transpose())?;
    let a_to_b = RetrievalScores::from_ranks(&ranks(a_mapped.as_ref(), test_b)?)?;
    let b_to_a = RetrievalScores::from_ranks(&ranks(b_mapped.as_ref(), test_a)?)?;
    Ok(AlignReport {
        n_fit: fit_a.nrows(),
        n_test: test_a.nrows(),
        chance: RetrievalScores::chance(test_a.nrows()),
        fit,
        a_to_b,
        b_to_a,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;

    #[test]
    fn ranks_closed_form() {
        // Query 0 is closest to gallery 0; query 1 points at gallery 0 as well: rank 2.
        let q = Mat::from_fn(2, 2, |i, j| [[1.0, 0.0], [1.0, 0.1]][i][j]);
        let g = Mat::from_fn(2, 2, |i, j| [[1.0, 0.0], [0.0, 1.0]][i][j]);
        assert_eq!(ranks(q.as_ref(), g.as_ref()).unwrap(), vec![1, 2]);
        let s = RetrievalScores::from_ranks(&[1, 2, 7, 12]).unwrap();
        assert_eq!((s.r1, s.r5, s.r10, s.mean_rank), (0.25, 0.5, 0.75, 5.5));
        let c = RetrievalScores::chance(100);
        assert_eq!((c.r1, c.r10, c.mean_rank), (0.01, 0.1, 50.5));
    }
}
