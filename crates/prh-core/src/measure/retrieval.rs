//! Retrieval through one fitted rotation (paper §5: "fit an orthogonal map on paired
//! validation data, then rank captions for each test image"; §6: Flickr R@1). The map is
//! the Procrustes solution of the theorem's f*_1 = Q f*_2 (§2), fitted on pairs and
//! applied to held-out rows.

use crate::linalg::Matrix;
use crate::linalg::procrustes::{self, Procrustes};
use crate::measure::degeneracy::{Degeneracy, tie_warning};
use crate::measure::knn::{BLOCK_BYTES, TIE_TOL, gram_block_into, rows_per_block};
use crate::measure::preprocess::l2_normalize_rows;
use crate::{Error, Result};
use faer::MatRef;
use serde::Serialize;

/// Where a query's true match lands among the candidates: `above` candidates score
/// higher than it, `tied` other candidates the same (within [`TIE_TOL`], so that rounding
/// of similarities equal in exact arithmetic does not rank them). Ties are ranked as
/// a uniformly random tie-break would rank them, in expectation: the true match is
/// equally likely to take any of the places above + 1 ..= above + tied + 1. (Resolving a
/// tie in the true match's favour would give an all-zero embedding, whose similarities
/// all tie, R@1 = 1.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rank {
    /// Candidates with a similarity above the true match's by more than [`TIE_TOL`].
    pub above: usize,
    /// Other candidates within [`TIE_TOL`] of the true match's similarity.
    pub tied: usize,
}

impl Rank {
    /// Expected 1-based rank under a random tie-break: 1 + above + tied / 2.
    pub fn expected(&self) -> f64 {
        1.0 + self.above as f64 + self.tied as f64 / 2.0
    }

    /// P(rank <= k) under a random tie-break: clamp((k - above) / (tied + 1), 0, 1).
    pub fn p_within(&self, k: usize) -> f64 {
        let free = k.saturating_sub(self.above) as f64;
        (free / (self.tied + 1) as f64).min(1.0)
    }
}

/// Recall at 1, 5, 10 and the mean rank of the true match, in one direction; with ties,
/// the expected values under a uniformly random tie-break (see [`Rank`]).
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
    /// Fraction of queries whose true match ties with at least one other candidate.
    pub tied_queries: f64,
}

/// How the scores treat ties, as stated in the CLI's JSON.
pub const TIE_RULE: &str = "similarities within 1e-9 of each other tie; ties ranked as a uniformly random tie-break would rank them, in expectation: mean of the tied places; R@k = P(rank <= k)";

impl RetrievalScores {
    /// Summaries of ranks: R@k = mean_i P(rank_i <= k), mean rank = mean_i E[rank_i].
    pub fn from_ranks(ranks: &[Rank]) -> Result<Self> {
        if ranks.is_empty() {
            return Err(Error::invalid("retrieval needs at least one query"));
        }
        let n = ranks.len() as f64;
        let at = |k: usize| ranks.iter().map(|r| r.p_within(k)).sum::<f64>() / n;
        Ok(RetrievalScores {
            r1: at(1),
            r5: at(5),
            r10: at(10),
            mean_rank: ranks.iter().map(Rank::expected).sum::<f64>() / n,
            tied_queries: ranks.iter().filter(|r| r.tied > 0).count() as f64 / n,
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
            tied_queries: 0.0,
        }
    }
}

/// Rank of the true match for each query: query i's true match is gallery row i; with
/// cosine similarity s_ij, above_i = #{j : s_ij > s_ii + tol}, tied_i = #{j != i :
/// |s_ij - s_ii| <= tol}, tol = [`TIE_TOL`]
/// (a zero row has cosine 0 to everything).
///
/// # Shapes
/// `queries [n, e]`, `gallery [n, e]` -> `[n]`
pub fn ranks(queries: MatRef<'_, f64>, gallery: MatRef<'_, f64>) -> Result<Vec<Rank>> {
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
            faer::Par::Seq,
        );
        for r in 0..rows {
            let s = block.col_as_slice(r);
            let own = s[i0 + r];
            let above = s.iter().filter(|&&v| v > own + TIE_TOL).count();
            // The true match itself is one of the values within the tolerance of `own`.
            let tied = s
                .iter()
                .filter(|&&v| (v - own).abs() <= TIE_TOL)
                .count()
                .saturating_sub(1);
            out.push(Rank { above, tied });
        }
    }
    Ok(out)
}

/// Two observations of each group embedded by *one* encoder (e.g. caption 1 and caption
/// 2 of each image): how far the encoder already puts the pairs together, with no second
/// model and no fitted map. The first metric of every text ablation row.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct PairScores {
    /// Mutual k-NN between the two sides' neighbourhoods (PRH definition and
    /// preprocessing, [`crate::measure::metrics::measure`]).
    pub mutual_knn: f64,
    /// Linear CKA of the two sides.
    pub cka: f64,
    /// R@1 and R@5 of finding row i of the second side from row i of the first by cosine
    /// among all n rows (chance 1/n and 5/n); ties as [`Rank`] says.
    pub r1: f64,
    pub r5: f64,
}

impl PairScores {
    /// Scores `a [n, 1, d]` (each group's first observation) against `b [n, 1, d]` (its
    /// second), with `opts.k` neighbours and `opts.preprocess` (no null is drawn).
    pub fn of(
        a: &crate::formats::features::Features,
        b: &crate::formats::features::Features,
        opts: &crate::measure::metrics::MetricOptions,
    ) -> Result<Self> {
        let opts = crate::measure::metrics::MetricOptions {
            null_shuffles: 0,
            ..*opts
        };
        let r = crate::measure::metrics::measure(a, b, &opts)?;
        // Layer 0 as given: `ranks` normalises the rows itself.
        let raw = crate::measure::preprocess::Preprocess {
            outlier_q: None,
            normalize: false,
        };
        let ranked = RetrievalScores::from_ranks(&ranks(
            raw.layer_matrix(a, 0)?.as_ref(),
            raw.layer_matrix(b, 0)?.as_ref(),
        )?)?;
        Ok(PairScores {
            mutual_knn: r.scores.mutual_knn,
            cka: r.scores.cka,
            r1: ranked.r1,
            r5: ranked.r5,
        })
    }
}

/// A fitted rotation and its retrieval scores on held-out pairs.
#[derive(Debug, Clone)]
pub struct AlignReport {
    /// The Procrustes fit on the training pairs (`q [d_a, d_b]`, the part they determine:
    /// [`procrustes::fit_determined`]).
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
    /// What is degenerate about the held-out A and B as ranked.
    pub degeneracy_a: Degeneracy,
    pub degeneracy_b: Degeneracy,
    /// Degenerate inputs (fit or held-out) and many tied queries, in words; empty when
    /// nothing is wrong.
    pub warnings: Vec<String>,
}

/// Fits Q = argmin_{Q^T Q = I} ||A_fit Q - B_fit||_F (semi-orthogonal when widths differ)
/// and ranks held-out pairs in both directions: A_test Q against B_test, and B_test Q^T
/// against A_test. Q is the part of the map the fit pairs determine
/// ([`procrustes::fit_determined`]): where A_fit^T B_fit has rank below min(d, e) (fewer
/// pairs than either width: raw inputs, TF-IDF), the held-out rows' parts in the
/// undetermined directions are mapped to zero rather than by an arbitrary completion, so
/// R@k does not depend on the SVD routine's choice of basis; a warning says so.
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
    let fit = procrustes::fit_determined(fit_a, fit_b)?;
    let a_mapped: Matrix = procrustes::apply(test_a, fit.q.as_ref())?;
    let b_mapped: Matrix = procrustes::apply(test_b, fit.q.transpose())?;
    let a_to_b = RetrievalScores::from_ranks(&ranks(a_mapped.as_ref(), test_b)?)?;
    let b_to_a = RetrievalScores::from_ranks(&ranks(b_mapped.as_ref(), test_a)?)?;
    let degeneracy_a = Degeneracy::of(test_a)?;
    let degeneracy_b = Degeneracy::of(test_b)?;
    let mut warnings = Vec::new();
    for (name, x) in [("A (fit)", fit_a), ("B (fit)", fit_b)] {
        warnings.extend(Degeneracy::of(x)?.warnings(name));
    }
    let full_rank = fit_a.ncols().min(fit_b.ncols());
    if fit.rank < full_rank {
        warnings.push(format!(
            "the {} fit pairs determine the map on {} of min(d, e) = {full_rank} directions \
             (A^T B has rank {}); held-out parts outside them are mapped to zero",
            fit_a.nrows(),
            fit.rank,
            fit.rank
        ));
    }
    warnings.extend(degeneracy_a.warnings("A (held-out)"));
    warnings.extend(degeneracy_b.warnings("B (held-out)"));
    for (name, s) in [("A -> B", &a_to_b), ("B -> A", &b_to_a)] {
        let what = "queries' true matches";
        warnings.extend(tie_warning(name, s.tied_queries, what).map(|w| {
            format!("{w}; their ranks and R@k are expected values under a random tie-break")
        }));
    }
    Ok(AlignReport {
        degeneracy_a,
        degeneracy_b,
        warnings,
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

    /// Similarities 1.1e-12 apart (rounding-sized, below `TIE_TOL`) tie in either direction;
    /// 1.5e-6 apart they do not.
    #[test]
    fn rounding_sized_differences_tie() {
        let q = Mat::from_fn(2, 2, |i, j| [[1.0, 0.0], [0.0, 1.0]][i][j]);
        let g = Mat::from_fn(2, 2, |i, j| [[1.0, 1.5e-6], [1.0, 0.0]][i][j]);
        let r = ranks(q.as_ref(), g.as_ref()).unwrap();
        // q0: its match g0 is 1.1e-12 below g1, a tie. q1: g0 is 1.5e-6 above its match.
        assert_eq!(r[0], Rank { above: 0, tied: 1 });
        assert_eq!(r[1], Rank { above: 1, tied: 0 });
    }

    #[test]
    fn ranks_closed_form() {
        // Query 0 is closest to gallery 0; query 1 points at gallery 0 as well: rank 2.
        let q = Mat::from_fn(2, 2, |i, j| [[1.0, 0.0], [1.0, 0.1]][i][j]);
        let g = Mat::from_fn(2, 2, |i, j| [[1.0, 0.0], [0.0, 1.0]][i][j]);
        let r = ranks(q.as_ref(), g.as_ref()).unwrap();
        assert_eq!(
            r.iter().map(Rank::expected).collect::<Vec<_>>(),
            vec![1.0, 2.0]
        );
        let untied = |rank: usize| Rank {
            above: rank - 1,
            tied: 0,
        };
        let s = RetrievalScores::from_ranks(&[1, 2, 7, 12].map(untied)).unwrap();
        assert_eq!((s.r1, s.r5, s.r10, s.mean_rank), (0.25, 0.5, 0.75, 5.5));
        let c = RetrievalScores::chance(100);
        assert_eq!((c.r1, c.r10, c.mean_rank), (0.01, 0.1, 50.5));
    }

    #[test]
    fn ties_are_ranked_at_their_expectation() {
        // One above, three others tied with the true match: places 2..=5 equally likely.
        let r = Rank { above: 1, tied: 3 };
        assert_eq!(r.expected(), 3.5);
        assert_eq!(
            (r.p_within(1), r.p_within(2), r.p_within(3)),
            (0.0, 0.25, 0.5)
        );
        assert_eq!((r.p_within(5), r.p_within(10)), (1.0, 1.0));
        // All-zero queries: every cosine is 0, all n candidates tie: exactly chance.
        let n = 40;
        let zero = Mat::<f64>::zeros(n, 3);
        let g = Mat::from_fn(n, 3, |i, j| ((i * 3 + j) as f64).sin());
        let s = RetrievalScores::from_ranks(&ranks(zero.as_ref(), g.as_ref()).unwrap()).unwrap();
        let c = RetrievalScores::chance(n);
        assert!((s.r1 - c.r1).abs() < 1e-15 && (s.r10 - c.r10).abs() < 1e-15);
        assert!((s.mean_rank - c.mean_rank).abs() < 1e-12);
        assert_eq!(s.tied_queries, 1.0);
        // A constant gallery: every query's similarities tie as well.
        let constant = Mat::from_fn(n, 3, |_, j| 1.0 + j as f64);
        let s =
            RetrievalScores::from_ranks(&ranks(g.as_ref(), constant.as_ref()).unwrap()).unwrap();
        assert!((s.r1 - c.r1).abs() < 1e-15 && (s.mean_rank - c.mean_rank).abs() < 1e-12);
    }

    #[test]
    fn collapsed_inputs_are_flagged_and_score_chance() {
        let n = 60;
        // Smooth functions of i such as sin(a i + b_j) span only two directions (and are
        // flagged as such), so the healthy inputs are seeded noise.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut noise = |n, d| Mat::from_fn(n, d, |_, _| rng.random::<f64>() - 0.5);
        let b = noise(n, 4);
        let zero = Mat::<f64>::zeros(n, 4);
        let r = align_and_rank(
            zero.subrows(0, 30),
            b.subrows(0, 30),
            zero.subrows(30, 30),
            b.subrows(30, 30),
        )
        .unwrap();
        for s in [r.a_to_b, r.b_to_a] {
            assert!((s.r1 - r.chance.r1).abs() < 1e-12, "{s:?}");
            assert!((s.mean_rank - r.chance.mean_rank).abs() < 1e-9, "{s:?}");
        }
        assert!(r.degeneracy_a.collapsed && !r.degeneracy_b.collapsed);
        assert!(
            r.warnings
                .iter()
                .any(|w| w.contains("all 30 rows are zero")),
            "{:?}",
            r.warnings
        );
        assert!(
            r.warnings.iter().any(|w| w.contains("random tie-break")),
            "{:?}",
            r.warnings
        );
        // Healthy inputs: no warning.
        let a = noise(n, 4);
        let r = align_and_rank(
            a.subrows(0, 30),
            b.subrows(0, 30),
            a.subrows(30, 30),
            b.subrows(30, 30),
        )
        .unwrap();
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    }

    /// Fewer fit pairs than either width: A^T B has rank 12 of 40, so the orthogonal
    /// Procrustes map is not unique. R@k must not depend on which completion an SVD
    /// routine picks: turning A's columns by any orthogonal W (a change of basis the map
    /// should follow, Q -> W^T Q) leaves every held-out score as it was, to rounding. With
    /// [`procrustes::fit`]'s completion this fails (the undetermined singular vectors of
    /// W^T A^T B are not W^T those of A^T B).
    #[test]
    fn wide_fits_score_independently_of_the_basis() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let (n_fit, n_test, d, e) = (12, 40, 40, 48);
        let shared = Mat::from_fn(n_fit + n_test, 6, |_, _| rng.random::<f64>() - 0.5);
        let mix = |rng: &mut rand_chacha::ChaCha8Rng, w: usize| {
            let m = Mat::from_fn(6, w, |_, _| rng.random::<f64>() - 0.5);
            let noise = Mat::from_fn(n_fit + n_test, w, |_, _| 0.3 * (rng.random::<f64>() - 0.5));
            &shared * &m + noise
        };
        let (a, b) = (mix(&mut rng, d), mix(&mut rng, e));
        // W: two Householder reflections, orthogonal.
        let mut w = Mat::<f64>::identity(d, d);
        for _ in 0..2 {
            let v = Mat::from_fn(d, 1, |_, _| rng.random::<f64>() - 0.5);
            let h = Mat::<f64>::identity(d, d) - (&v * v.transpose()) * (2.0 / v.squared_norm_l2());
            w = &w * &h;
        }
        let aw = &a * &w;
        let score = |a: &Mat<f64>| {
            align_and_rank(
                a.subrows(0, n_fit),
                b.subrows(0, n_fit),
                a.subrows(n_fit, n_test),
                b.subrows(n_fit, n_test),
            )
            .unwrap()
        };
        let (r, rw) = (score(&a), score(&aw));
        assert_eq!(r.fit.rank, n_fit);
        assert!(
            r.warnings
                .iter()
                .any(|w| w.contains("determine the map on 12 of")),
            "{:?}",
            r.warnings
        );
        for (s, t) in [(&r.a_to_b, &rw.a_to_b), (&r.b_to_a, &rw.b_to_a)] {
            assert!((s.mean_rank - t.mean_rank).abs() < 1e-9, "{s:?} vs {t:?}");
            assert_eq!((s.r1, s.r5, s.r10), (t.r1, t.r5, t.r10));
        }
        // The held-out scores are not trivial: the shared factors are found above chance.
        assert!(r.a_to_b.r5 > 2.0 * r.chance.r5, "{:?}", r.a_to_b);
    }
}
