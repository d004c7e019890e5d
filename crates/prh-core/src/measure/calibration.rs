//! Calibrated alignment scores: a raw score means little without what unrelated
//! representations of the same geometry score. Width, depth and above all the max over
//! layer pairs inflate raw PRH scores (the "Aristotelian" calibration of PRH scores, ICML
//! 2026); the permutation null here shuffles the pairing (B's rows), keeps each side's
//! geometry, and, for a layer search, takes the max over all layer pairs under each
//! shuffle, so that the reported max is compared with the max of unrelated pairs.

use crate::{Error, Result};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

/// The shufflings of every permutation null in prh, one sequence so that nulls computed
/// in different places agree: ChaCha8 seeded with `seed`, shuffle t (1-based) is t
/// successive Fisher-Yates shuffles of the identity on 0..n. Calls `score(perm)` once per
/// shuffle, with row i of the shuffled side being row perm[i] of the original, and
/// returns the scores in order.
///
/// # Shapes
/// `n` rows, `shuffles` draws -> `[shuffles]` scores
pub fn shuffled_scores<T>(
    n: usize,
    shuffles: usize,
    seed: u64,
    mut score: impl FnMut(&[usize]) -> Result<T>,
) -> Result<Vec<T>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut perm: Vec<usize> = (0..n).collect();
    (0..shuffles)
        .map(|_| {
            perm.shuffle(&mut rng);
            score(&perm)
        })
        .collect()
}

/// A permutation null of one metric and the raw score set against it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NullStats {
    /// Mean of the null scores.
    pub mean: f64,
    /// Their population standard deviation.
    pub std: f64,
    /// Empirical p-value of the raw score, p = (1 + #{null >= raw}) / (1 + shuffles)
    /// (Phipson & Smyth 2010: the shuffles are a sample, so p is never 0).
    pub p_value: f64,
    /// z = (raw - mean) / std; absent when every null score is equal.
    pub z: Option<f64>,
    /// Null-calibrated score (raw - mean) / (perfect - mean): 0 at the null's mean, 1 for
    /// a perfect score, negative below the null; absent when the null reaches `perfect`.
    pub calibrated: Option<f64>,
}

impl NullStats {
    /// Summarises `samples` (one score per shuffle) against `raw`; `perfect` is the
    /// metric's best value (k for LCS k-NN, 1 for the others). Undefined scores (NaN, e.g.
    /// a degenerate CKNNA denominator) are read conservatively: a NaN null sample counts
    /// as reaching the raw score (and is left out of mean and std), and a NaN raw score
    /// gets p = 1 and no z or calibrated score — never a small p-value.
    pub fn new(raw: f64, samples: &[f64], perfect: f64) -> Result<Self> {
        if samples.is_empty() {
            return Err(Error::invalid(
                "a permutation null needs at least one shuffle",
            ));
        }
        let b = samples.len() as f64;
        let finite: Vec<f64> = samples.iter().copied().filter(|s| s.is_finite()).collect();
        let m = finite.len().max(1) as f64;
        let mean = finite.iter().sum::<f64>() / m;
        let std = (finite.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / m).sqrt();
        // Not below the raw score; a NaN sample (no ordering) counts as reaching it.
        let at_least = samples
            .iter()
            .filter(|&&s| s.partial_cmp(&raw) != Some(std::cmp::Ordering::Less))
            .count();
        let ok = raw.is_finite() && !finite.is_empty();
        Ok(NullStats {
            mean,
            std,
            p_value: if raw.is_nan() {
                1.0
            } else {
                (1 + at_least) as f64 / (1.0 + b)
            },
            z: (ok && std > 0.0).then(|| (raw - mean) / std),
            calibrated: (ok && perfect > mean).then(|| (raw - mean) / (perfect - mean)),
        })
    }
}

/// The permutation nulls of every metric of an alignment report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricNulls {
    /// Shuffles drawn.
    pub shuffles: usize,
    /// Seed of the shuffles (the sequence of [`shuffled_scores`]).
    pub seed: u64,
    /// True when each null score is the max over all L_A x L_B layer pairs under one
    /// shuffle: the null of the reported max, not of one pair.
    pub max_over_layer_pairs: bool,
    pub mutual_knn: NullStats,
    pub cycle_knn: NullStats,
    pub lcs_knn: NullStats,
    /// Absent when the dense kernels the null needs are over budget (see `kernel_note`).
    pub cka: Option<NullStats>,
    pub cka_rbf: Option<NullStats>,
    pub unbiased_cka: Option<NullStats>,
    pub cknna: NullStats,
    pub svcca: NullStats,
    pub edit_distance_knn: NullStats,
    /// Why the kernel metrics (CKA, RBF CKA, unbiased CKA) have no null, when they don't.
    pub kernel_note: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_forms() {
        // Null scores 0.1, 0.2, 0.3, 0.4: mean 0.25, std sqrt(0.0125).
        let s = NullStats::new(0.35, &[0.1, 0.2, 0.3, 0.4], 1.0).unwrap();
        assert!((s.mean - 0.25).abs() < 1e-15);
        assert!((s.std - 0.0125f64.sqrt()).abs() < 1e-15);
        // One of four null scores reaches 0.35: p = (1 + 1) / 5.
        assert!((s.p_value - 0.4).abs() < 1e-15);
        assert!((s.z.unwrap() - 0.1 / 0.0125f64.sqrt()).abs() < 1e-12);
        assert!((s.calibrated.unwrap() - 0.1 / 0.75).abs() < 1e-15);
        // Beyond every shuffle: the smallest p the shuffles can give.
        assert!((NullStats::new(0.9, &[0.1; 9], 1.0).unwrap().p_value - 0.1).abs() < 1e-15);
        let flat = NullStats::new(0.5, &[0.5; 3], 1.0).unwrap();
        assert_eq!((flat.z, flat.p_value), (None, 1.0));
        assert_eq!(NullStats::new(1.0, &[1.0], 1.0).unwrap().calibrated, None);
        assert!(NullStats::new(1.0, &[], 1.0).is_err());
        // Undefined scores never make a result look significant.
        let nan = NullStats::new(f64::NAN, &[0.1, 0.2], 1.0).unwrap();
        assert_eq!((nan.p_value, nan.z, nan.calibrated), (1.0, None, None));
        let s = NullStats::new(0.5, &[0.1, f64::NAN, 0.3], 1.0).unwrap();
        assert!((s.mean - 0.2).abs() < 1e-15);
        assert!((s.p_value - 2.0 / 4.0).abs() < 1e-15);
    }
}
