//! The full alignment report between two embedding sets (paper §5-6: mutual 10-NN on
//! WIT-1024, linear CKA), following the PRH benchmark's `measure_alignment.py`: clamp
//! outliers, L2-normalise each layer, compute every metric for every pair of layers and
//! keep the best score and its layer pair, plus a permutation null for mutual k-NN.

use crate::cka::ratio;
use crate::cknna::cknna_from_lists;
use crate::degeneracy::{Degeneracy, tie_warning};
use crate::features::{Features, check_same_n};
use crate::kernel_blocks::{
    KernelSums, LayerSums, PairSums, PassOptions, hsic_biased_sums, hsic_unbiased_sums, kernel_pass,
};
use crate::knn::{
    BLOCK_BYTES, Knn, cycle_knn, knn_from_features, lcs_knn, mutual_knn, mutual_knn_null,
};
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
    /// Bytes of kernel rows held at once by the blockwise pass (memory stays
    /// O(N D + N k) plus this; see [`crate::kernel_blocks`]).
    pub block_bytes: usize,
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
            block_bytes: BLOCK_BYTES,
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
    /// Share of A's and B's neighbour lists (at the best mutual k-NN layer pair) whose k-th
    /// neighbour ties with a sample outside the list. Ties are broken by index, as
    /// platonic-rep's `torch.topk` order does in practice, which keeps scores equal to
    /// theirs; a large share means the k-NN scores depend on the row order.
    pub tied_lists_a: f64,
    pub tied_lists_b: f64,
    /// What is degenerate about each preprocessed layer of A and B.
    pub degeneracy_a: Vec<Degeneracy>,
    pub degeneracy_b: Vec<Degeneracy>,
    /// Degenerate inputs and many tied lists, in words; empty when nothing is wrong.
    pub warnings: Vec<String>,
}

/// One preprocessed layer's neighbour lists (what the browser's per-point views need).
pub struct LayerView {
    /// Top-k neighbours with the diagonal excluded.
    pub knn: Knn,
    /// Top-k neighbours with the diagonal allowed (only for biased CKNNA).
    pub knn_with_self: Option<Knn>,
}

impl LayerView {
    /// Neighbours of one preprocessed `[n, d]` layer, from row blocks of its Gram matrix
    /// (O(n d + n k) memory).
    ///
    /// # Shapes
    /// `x [n, d]` -> knn `[n, k]`
    pub fn new(x: &Matrix, opts: &MetricOptions) -> Result<Self> {
        let (knn, _) = knn_from_features(x.as_ref(), opts.k, true)?;
        let knn_with_self = if opts.cknna_unbiased {
            None
        } else {
            Some(knn_from_features(x.as_ref(), opts.k, false)?.0)
        };
        Ok(LayerView { knn, knn_with_self })
    }
}

/// Every metric between two layers from what the kernel pass kept of them: the k-NN
/// scores from the lists, CKA / RBF CKA / unbiased CKA from the kernel sums
/// (`HSIC(K, L) / (sqrt(HSIC(K, K) HSIC(L, L)) + 1e-6)`), CKNNA from the lists and their
/// similarities.
///
/// # Shapes
/// `a`, `b` over the same n samples -> `PairScores`
pub fn pair_scores(
    a: &LayerSums,
    b: &LayerSums,
    cross: &PairSums,
    opts: &MetricOptions,
) -> Result<PairScores> {
    let biased = |x: &KernelSums, y: &KernelSums, c: f64| {
        ratio(
            hsic_biased_sums(x, y, c),
            hsic_biased_sums(x, x, x.sq),
            hsic_biased_sums(y, y, y.sq),
        )
    };
    let (ka, kb) = (&a.linear, &b.linear);
    let unbiased = ratio(
        hsic_unbiased_sums(ka, kb, cross.linear)?,
        hsic_unbiased_sums(ka, ka, ka.sq)?,
        hsic_unbiased_sums(kb, kb, kb.sq)?,
    );
    let ((na, sa), (nb, sb)) = match (&a.with_self, &b.with_self) {
        (Some(x), Some(y)) if !opts.cknna_unbiased => ((&x.0, &x.1), (&y.0, &y.1)),
        _ => ((&a.knn, &a.sims), (&b.knn, &b.sims)),
    };
    Ok(PairScores {
        mutual_knn: mutual_knn(&a.knn, &b.knn)?,
        cycle_knn: cycle_knn(&a.knn, &b.knn)?,
        lcs_knn: lcs_knn(&a.knn, &b.knn)?,
        cka: biased(ka, kb, cross.linear),
        cka_rbf: biased(&a.rbf, &b.rbf, cross.rbf),
        unbiased_cka: unbiased,
        cknna: cknna_from_lists(na, sa, nb, sb, opts.cknna_unbiased)?,
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
    // The clamp is applied while each layer matrix is built: no clamped copy of the inputs.
    let clamp_a = opts.preprocess.threshold(a)?;
    let clamp_b = opts.preprocess.threshold(b)?;
    let layers = |f: &Features, t: Option<f64>| -> Result<Vec<Matrix>> {
        (0..f.layers)
            .map(|l| opts.preprocess.layer_matrix_clamped(f, l, t))
            .collect()
    };
    let (xa, xb) = (layers(a, clamp_a)?, layers(b, clamp_b)?);
    let health = |xs: &[Matrix]| -> Result<Vec<Degeneracy>> {
        xs.iter().map(|x| Degeneracy::of(x.as_ref())).collect()
    };
    let (degeneracy_a, degeneracy_b) = (health(&xa)?, health(&xb)?);
    let pass = kernel_pass(
        &xa,
        &xb,
        &PassOptions {
            k: opts.k,
            with_self: !opts.cknna_unbiased,
            rbf_sigma: opts.rbf_sigma,
            block_bytes: opts.block_bytes,
        },
    )?;
    drop((xa, xb));
    // Per metric: the best score so far and its layer pair.
    let mut best: Option<BestSoFar> = None;
    for (i, la) in pass.a.iter().enumerate() {
        for (j, lb) in pass.b.iter().enumerate() {
            let cross = &pass.cross[i * pass.b.len() + j];
            let s = pair_scores(la, lb, cross, opts)?.fields();
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
        // The permutation null reuses the lists: shuffling B's rows only relabels them.
        let (m, s) = mutual_knn_null(
            &pass.a[i].knn,
            &pass.b[j].knn,
            opts.null_shuffles,
            opts.seed,
        )?;
        (Some(m), Some(s))
    } else {
        (None, None)
    };
    let (i, j) = at[0];
    let share = |t: usize| t as f64 / a.n as f64;
    let (tied_lists_a, tied_lists_b) = (share(pass.a[i].tied_lists), share(pass.b[j].tied_lists));
    let mut warnings = Vec::new();
    for (side, ds) in [("A", &degeneracy_a), ("B", &degeneracy_b)] {
        for (l, d) in ds.iter().enumerate() {
            let name = if ds.len() > 1 {
                format!("{side} layer {l}")
            } else {
                side.to_string()
            };
            warnings.extend(d.warnings(&name));
        }
    }
    for (side, t) in [("A", tied_lists_a), ("B", tied_lists_b)] {
        let what = format!("{}-NN lists", opts.k);
        warnings.extend(tie_warning(side, t, &what).map(|w| {
            format!(
                "{w} at the k-th neighbour, broken by row index (platonic-rep's order): \
                 the k-NN scores depend on the row order"
            )
        }));
    }
    Ok(AlignmentReport {
        tied_lists_a,
        tied_lists_b,
        degeneracy_a,
        degeneracy_b,
        warnings,
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

    /// Every metric the old dense way: `[n, n]` Gram and RBF kernels of the preprocessed
    /// layers, the reference the blockwise pass must reproduce.
    fn dense_scores(x: &Matrix, y: &Matrix, opts: &MetricOptions) -> [f64; 7] {
        use crate::cka::{cka, cknna_with, rbf_from_gram, unbiased_cka};
        use crate::knn::{gram, knn_from_gram};
        let (gx, gy) = (gram(x.as_ref()), gram(y.as_ref()));
        let (na, nb) = (
            knn_from_gram(gx.as_ref(), opts.k, true).unwrap(),
            knn_from_gram(gy.as_ref(), opts.k, true).unwrap(),
        );
        let self_ok = !opts.cknna_unbiased;
        let (ca, cb) = (
            knn_from_gram(gx.as_ref(), opts.k, !self_ok).unwrap(),
            knn_from_gram(gy.as_ref(), opts.k, !self_ok).unwrap(),
        );
        let (rx, ry) = (
            rbf_from_gram(gx.as_ref(), opts.rbf_sigma).unwrap(),
            rbf_from_gram(gy.as_ref(), opts.rbf_sigma).unwrap(),
        );
        [
            mutual_knn(&na, &nb).unwrap(),
            cycle_knn(&na, &nb).unwrap(),
            lcs_knn(&na, &nb).unwrap(),
            cka(gx.as_ref(), gy.as_ref()).unwrap(),
            cka(rx.as_ref(), ry.as_ref()).unwrap(),
            unbiased_cka(gx.as_ref(), gy.as_ref()).unwrap(),
            cknna_with(gx.as_ref(), gy.as_ref(), &ca, &cb, opts.cknna_unbiased).unwrap(),
        ]
    }

    #[test]
    fn blockwise_scores_equal_the_dense_ones() {
        // N = 47 in blocks of 5 rows (47 = 9 * 5 + 2); two layers of A against one of B;
        // a common offset makes the rows anisotropic, as real embeddings are.
        let shift = |f: Features| {
            let data = f.data.iter().map(|v| v + 0.3).collect();
            Features::new("s", f.n, f.layers, f.d, data).unwrap()
        };
        let (a, b) = (shift(random(47, 2, 6, 11)), shift(random(47, 1, 5, 12)));
        for unbiased in [true, false] {
            let opts = MetricOptions {
                cknna_unbiased: unbiased,
                block_bytes: 5 * (2 * 3 * 47) * 8,
                k: 6,
                ..MetricOptions::default()
            };
            let r = measure(&a, &b, &opts).unwrap();
            let (ta, tb) = (
                opts.preprocess.threshold(&a).unwrap(),
                opts.preprocess.threshold(&b).unwrap(),
            );
            let y = opts.preprocess.layer_matrix_clamped(&b, 0, tb).unwrap();
            let mut best = [f64::NEG_INFINITY; 7];
            for l in 0..2 {
                let x = opts.preprocess.layer_matrix_clamped(&a, l, ta).unwrap();
                let s = dense_scores(&x, &y, &opts);
                for m in 0..7 {
                    best[m] = best[m].max(s[m]);
                }
            }
            let got = r.scores.fields();
            for m in 0..7 {
                assert!(
                    (got[m] - best[m]).abs() < 1e-10,
                    "metric {m} (unbiased CKNNA {unbiased}): blockwise {} vs dense {}",
                    got[m],
                    best[m]
                );
            }
        }
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
