//! The full alignment report between two embedding sets (paper §5-6: mutual 10-NN on
//! WIT-1024, linear CKA), following the PRH benchmark's `measure_alignment.py`: clamp
//! outliers, L2-normalise each layer, compute every metric for every pair of layers and
//! keep the best score and its layer pair, plus a permutation null for mutual k-NN.

use crate::cka::{cka, cknna_with, rbf_from_gram, unbiased_cka};
use crate::features::{Features, check_same_n};
use crate::knn::{Knn, cycle_knn, gram, knn_from_gram, lcs_knn, mutual_knn, mutual_knn_null};
use crate::linalg::Matrix;
use crate::preprocess::Preprocess;
use crate::{Error, Result};
use serde::Serialize;

/// Settings of an alignment measurement; the defaults are the PRH benchmark's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetricOptions {
    /// Neighbours per sample for the k-NN metrics and CKNNA (PRH: 10).
    pub k: usize,
    /// Bandwidth of the RBF kernel for `cka_rbf` (PRH: fixed 1.0 on unit-norm rows).
    pub rbf_sigma: f64,
    /// Shuffles for the mutual k-NN permutation null (0 skips it).
    pub null_shuffles: usize,
    /// Seed of the shuffles.
    pub seed: u64,
    /// CKNNA with unbiased HSIC and the diagonal excluded from the top-k (PRH default).
    pub cknna_unbiased: bool,
    /// Outlier clamp and row normalisation.
    pub preprocess: Preprocess,
}

impl Default for MetricOptions {
    fn default() -> Self {
        MetricOptions {
            k: 10,
            rbf_sigma: 1.0,
            null_shuffles: 100,
            seed: 0,
            cknna_unbiased: true,
            preprocess: Preprocess::default(),
        }
    }
}

/// Every metric for one pair of layers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PairScores {
    /// Mean |N_A(i) ∩ N_B(i)| / k.
    pub mutual_knn: f64,
    /// Fraction of i with some B-neighbour whose A-neighbours contain i.
    pub cycle_knn: f64,
    /// Mean LCS length of the ordered neighbour lists (0..k).
    pub lcs_knn: f64,
    /// Linear CKA (biased HSIC).
    pub cka: f64,
    /// RBF CKA (biased HSIC, sigma = `rbf_sigma`).
    pub cka_rbf: f64,
    /// Linear CKA with Song et al.'s unbiased HSIC.
    pub unbiased_cka: f64,
    /// CKA on mutual k-NN masks.
    pub cknna: f64,
}

impl PairScores {
    fn fields(&self) -> [f64; 7] {
        [
            self.mutual_knn,
            self.cycle_knn,
            self.lcs_knn,
            self.cka,
            self.cka_rbf,
            self.unbiased_cka,
            self.cknna,
        ]
    }
}

/// Which layer pair (layer of A, layer of B) gave each best score.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BestLayers {
    pub mutual_knn: (usize, usize),
    pub cycle_knn: (usize, usize),
    pub lcs_knn: (usize, usize),
    pub cka: (usize, usize),
    pub cka_rbf: (usize, usize),
    pub unbiased_cka: (usize, usize),
    pub cknna: (usize, usize),
}

/// The alignment report; serialises with the CLI's JSON keys.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AlignmentReport {
    /// Samples N.
    pub n: usize,
    /// Neighbours k.
    pub k: usize,
    /// Layers of A and of B.
    pub layers_a: usize,
    pub layers_b: usize,
    /// Best score of each metric over all layer pairs (the only pair for [N, D] inputs).
    #[serde(flatten)]
    pub scores: PairScores,
    /// The layer pair behind each best score.
    pub best_layers: BestLayers,
    /// Mean and std of mutual k-NN over shuffled pairings (at the best mutual k-NN layer pair).
    pub null_mutual_knn_mean: Option<f64>,
    pub null_mutual_knn_std: Option<f64>,
    /// Outlier thresholds applied to A and B, if any.
    pub clamp_a: Option<f64>,
    pub clamp_b: Option<f64>,
}

/// One preprocessed layer: its Gram matrix and neighbour lists.
pub struct LayerView {
    /// G = X X^T of the preprocessed rows `[n, n]`.
    pub gram: Matrix,
    /// Top-k neighbours with the diagonal excluded.
    pub knn: Knn,
    /// Top-k neighbours with the diagonal allowed (only for biased CKNNA).
    pub knn_with_self: Option<Knn>,
}

impl LayerView {
    /// Gram and neighbours of one preprocessed `[n, d]` layer.
    ///
    /// # Shapes
    /// `x [n, d]` -> gram `[n, n]`, knn `[n, k]`
    pub fn new(x: &Matrix, opts: &MetricOptions) -> Result<Self> {
        let gram = gram(x.as_ref());
        let knn = knn_from_gram(gram.as_ref(), opts.k, true)?;
        let knn_with_self = if opts.cknna_unbiased {
            None
        } else {
            Some(knn_from_gram(gram.as_ref(), opts.k, false)?)
        };
        Ok(LayerView {
            gram,
            knn,
            knn_with_self,
        })
    }
}

/// Every metric between two preprocessed layers.
///
/// # Shapes
/// `a`, `b` over the same n samples -> `PairScores`
pub fn pair_scores(a: &LayerView, b: &LayerView, opts: &MetricOptions) -> Result<PairScores> {
    let (ka, kb) = (a.gram.as_ref(), b.gram.as_ref());
    let (ra, rb) = (
        rbf_from_gram(ka, opts.rbf_sigma)?,
        rbf_from_gram(kb, opts.rbf_sigma)?,
    );
    let (na, nb) = match (&a.knn_with_self, &b.knn_with_self) {
        (Some(x), Some(y)) => (x, y),
        _ => (&a.knn, &b.knn),
    };
    Ok(PairScores {
        mutual_knn: mutual_knn(&a.knn, &b.knn)?,
        cycle_knn: cycle_knn(&a.knn, &b.knn)?,
        lcs_knn: lcs_knn(&a.knn, &b.knn)?,
        cka: cka(ka, kb)?,
        cka_rbf: cka(ra.as_ref(), rb.as_ref())?,
        unbiased_cka: unbiased_cka(ka, kb)?,
        cknna: cknna_with(ka, kb, na, nb, opts.cknna_unbiased)?,
    })
}

type BestSoFar = ([f64; 7], [(usize, usize); 7]);

/// Measures every metric between `a` and `b` (rows paired by index), the PRH way:
/// clamp each array at its outlier quantile, normalise each layer's rows, score every
/// layer pair (i, j) and report max_{i,j} score_ij per metric with its argmax.
///
/// # Shapes
/// `a [n, la, da]`, `b [n, lb, db]` -> report
pub fn measure(a: &Features, b: &Features, opts: &MetricOptions) -> Result<AlignmentReport> {
    check_same_n(a, b)?;
    if opts.k + 1 > a.n {
        return Err(Error::invalid(format!(
            "k = {} neighbours needs N > k samples, got N = {}",
            opts.k, a.n
        )));
    }
    let (mut a, mut b) = (a.clone(), b.clone());
    let clamp_a = opts.preprocess.clamp(&mut a)?;
    let clamp_b = opts.preprocess.clamp(&mut b)?;
    let views = |f: &Features| -> Result<Vec<LayerView>> {
        (0..f.layers)
            .map(|l| LayerView::new(&opts.preprocess.layer_matrix(f, l)?, opts))
            .collect()
    };
    let (va, vb) = (views(&a)?, views(&b)?);
    // Per metric: the best score so far and its layer pair.
    let mut best: Option<BestSoFar> = None;
    for (i, la) in va.iter().enumerate() {
        for (j, lb) in vb.iter().enumerate() {
            let s = pair_scores(la, lb, opts)?.fields();
            let (vals, at) = best.get_or_insert((s, [(i, j); 7]));
            for m in 0..7 {
                // NaN (e.g. a degenerate CKNNA denominator) never wins over a number.
                if s[m] > vals[m] || vals[m].is_nan() {
                    vals[m] = s[m];
                    at[m] = (i, j);
                }
            }
        }
    }
    // Invariant: both sides have >= 1 layer (Features::new rejects 0), so the loop ran.
    let (v, at) = best.ok_or_else(|| Error::invalid("no layers to compare"))?;
    let (null_mean, null_std) = if opts.null_shuffles > 0 {
        let (i, j) = at[0];
        let (m, s) = mutual_knn_null(&va[i].knn, &vb[j].knn, opts.null_shuffles, opts.seed)?;
        (Some(m), Some(s))
    } else {
        (None, None)
    };
    Ok(AlignmentReport {
        n: a.n,
        k: opts.k,
        layers_a: a.layers,
        layers_b: b.layers,
        scores: PairScores {
            mutual_knn: v[0],
            cycle_knn: v[1],
            lcs_knn: v[2],
            cka: v[3],
            cka_rbf: v[4],
            unbiased_cka: v[5],
            cknna: v[6],
        },
        best_layers: BestLayers {
            mutual_knn: at[0],
            cycle_knn: at[1],
            lcs_knn: at[2],
            cka: at[3],
            cka_rbf: at[4],
            unbiased_cka: at[5],
            cknna: at[6],
        },
        null_mutual_knn_mean: null_mean,
        null_mutual_knn_std: null_std,
        clamp_a,
        clamp_b,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random(n: usize, layers: usize, d: usize, seed: u64) -> Features {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let data = (0..n * layers * d)
            .map(|_| rng.random::<f64>() - 0.5)
            .collect();
        Features::new("r", n, layers, d, data).unwrap()
    }

    #[test]
    fn identical_inputs_and_best_layer() {
        let a = random(50, 1, 6, 1);
        let r = measure(&a, &a, &MetricOptions::default()).unwrap();
        assert_eq!(r.scores.mutual_knn, 1.0);
        assert!((r.scores.cka - 1.0).abs() < 1e-6);
        // B has three layers, the middle one a copy of A: every metric picks (0, 1).
        let noise = random(50, 1, 6, 2);
        let mut data = Vec::new();
        for i in 0..50 {
            data.extend_from_slice(&noise.data[i * 6..(i + 1) * 6]);
            data.extend_from_slice(&a.data[i * 6..(i + 1) * 6]);
            data.extend(
                noise.data[i * 6..(i + 1) * 6]
                    .iter()
                    .map(|x| -x * 0.5 + 0.1),
            );
        }
        let b = Features::new("b", 50, 3, 6, data).unwrap();
        // No clamp: a threshold taken over all of B's layers would differ from A's.
        let opts = MetricOptions {
            preprocess: Preprocess::normalize_only(),
            ..MetricOptions::default()
        };
        let r = measure(&a, &b, &opts).unwrap();
        assert_eq!(r.best_layers.mutual_knn, (0, 1));
        assert_eq!(r.best_layers.cka, (0, 1));
        assert_eq!(r.scores.mutual_knn, 1.0);
        assert!(r.null_mutual_knn_mean.unwrap() < 0.5);
    }
}
