//! The full alignment report between two embedding sets (paper §5-6: mutual 10-NN on
//! WIT-1024, linear CKA), following the PRH benchmark's `measure_alignment.py`: clamp
//! outliers, L2-normalise each layer, compute every metric for every pair of layers and
//! keep the best score and its layer pair, plus a permutation null for mutual k-NN.

use crate::formats::features::{Features, check_same_n};
use crate::linalg::Matrix;
use crate::measure::calibration::{MetricNulls, NullStats, shuffled_scores};
use crate::measure::cka::ratio;
use crate::measure::cknna::cknna_from_lists;
use crate::measure::degeneracy::{Degeneracy, tie_warning};
use crate::measure::gram_blocks::{
    KernelPass, KernelSums, LayerSums, PairSums, PassOptions, hsic_biased_sums, hsic_unbiased_sums,
    kernel_pass, permuted_cross,
};
use crate::measure::knn::{
    BLOCK_BYTES, Knn, cycle_knn, edit_distance_knn, knn_from_features, lcs_knn, mutual_knn,
    mutual_knn_null,
};
use crate::measure::preprocess::Preprocess;
use crate::measure::svcca::{self, CCA_DIM};
use crate::progress::{OnTick, tick};
use crate::{Error, Result};
use faer::MatRef;
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
    /// Bytes of kernel tiles held at once by the blockwise pass (memory stays
    /// O(N D + N k) plus this; see [`crate::measure::gram_blocks`]).
    pub block_bytes: usize,
    /// SVD directions per side for SVCCA (PRH: 10).
    pub cca_dim: usize,
    /// Bytes the permutation null of the kernel metrics may hold as dense kernels
    /// (2 (L_A + L_B) N^2 f64); above it those three metrics get no null.
    pub dense_null_bytes: usize,
}

/// Default of [`MetricOptions::dense_null_bytes`]: 512 MiB, N up to ~4,000 for one layer
/// per side.
pub const DENSE_NULL_BYTES: usize = 512 << 20;

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
            cca_dim: CCA_DIM,
            dense_null_bytes: DENSE_NULL_BYTES,
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
    /// Mean canonical correlation of the top `cca_dim` SVD directions (PRH `svcca`).
    pub svcca: f64,
    /// 1 - mean edit distance of the ordered neighbour lists / k (PRH `edit_distance_knn`).
    pub edit_distance_knn: f64,
}

/// Number of metrics in [`PairScores`].
const METRICS: usize = 9;

impl PairScores {
    fn fields(&self) -> [f64; METRICS] {
        [
            self.mutual_knn,
            self.cycle_knn,
            self.lcs_knn,
            self.cka,
            self.cka_rbf,
            self.unbiased_cka,
            self.cknna,
            self.svcca,
            self.edit_distance_knn,
        ]
    }

    fn from_fields(v: [f64; METRICS]) -> Self {
        PairScores {
            mutual_knn: v[0],
            cycle_knn: v[1],
            lcs_knn: v[2],
            cka: v[3],
            cka_rbf: v[4],
            unbiased_cka: v[5],
            cknna: v[6],
            svcca: v[7],
            edit_distance_knn: v[8],
        }
    }

    /// Each metric's best possible value, in `fields` order (LCS k-NN counts up to k).
    fn perfect(k: usize) -> [f64; METRICS] {
        let mut p = [1.0; METRICS];
        p[2] = k as f64;
        p
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
    pub svcca: (usize, usize),
    pub edit_distance_knn: (usize, usize),
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
    /// Mean and std of mutual k-NN over shuffled pairings at the best mutual k-NN layer
    /// pair (of that one pair; `null` holds the null of the max over layer pairs).
    pub null_mutual_knn_mean: Option<f64>,
    pub null_mutual_knn_std: Option<f64>,
    /// The permutation null of every metric, with p-values and calibrated scores.
    pub null: Option<MetricNulls>,
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
    /// Neighbours of one preprocessed `[n, d]` layer, from tiles of its Gram matrix
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
/// similarities, SVCCA from each side's SVD basis. A NaN cross sum (no dense kernels for
/// a shuffled pairing) gives NaN kernel metrics.
///
/// # Shapes
/// `a`, `b` over the same n samples, `ua [n, c_a]`, `ub [n, c_b]` -> `PairScores`
pub fn pair_scores(
    a: &LayerSums,
    b: &LayerSums,
    cross: &PairSums,
    ua: MatRef<'_, f64>,
    ub: MatRef<'_, f64>,
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
        svcca: svcca::from_bases(ua, ub)?,
        edit_distance_knn: edit_distance_knn(&a.knn, &b.knn)?,
    })
}

/// Per metric: the best score over layer pairs and its pair.
type BestSoFar = ([f64; METRICS], [(usize, usize); METRICS]);

/// Folds the scores of every layer pair into the best per metric; `score(i, j)` scores
/// layer i of A against layer j of B. NaN (e.g. a degenerate CKNNA denominator) never
/// wins over a number.
fn best_over_pairs(
    la: usize,
    lb: usize,
    mut score: impl FnMut(usize, usize) -> Result<[f64; METRICS]>,
) -> Result<BestSoFar> {
    let mut best: Option<BestSoFar> = None;
    for i in 0..la {
        for j in 0..lb {
            let s = score(i, j)?;
            let (vals, at) = best.get_or_insert((s, [(i, j); METRICS]));
            for m in 0..METRICS {
                if s[m] > vals[m] || vals[m].is_nan() {
                    vals[m] = s[m];
                    at[m] = (i, j);
                }
            }
        }
    }
    // Invariant: both sides have >= 1 layer (Features::new rejects 0), so the loop ran.
    best.ok_or_else(|| Error::invalid("no layers to compare"))
}

/// Measures every metric between `a` and `b` (rows paired by index), the PRH way:
/// clamp each array at its outlier quantile, normalise each layer's rows, score every
/// layer pair (i, j) and report max_{i,j} score_ij per metric with its argmax; then, with
/// `null_shuffles > 0`, the permutation null of every metric's max (see [`MetricNulls`]).
///
/// # Shapes
/// `a [n, la, da]`, `b [n, lb, db]` -> report
pub fn measure(a: &Features, b: &Features, opts: &MetricOptions) -> Result<AlignmentReport> {
    measure_reporting(a, b, opts, &mut |_| {})
}

/// [`measure`], telling `on_tick` how far it is: phase `"svd"` (layers of both sides
/// whose SVCCA basis is done), `"kernels"` (tiles of the kernel pass), `"null"` (shuffles).
///
/// # Shapes
/// `a [n, la, da]`, `b [n, lb, db]` -> report
pub fn measure_reporting(
    a: &Features,
    b: &Features,
    opts: &MetricOptions,
    on_tick: OnTick<'_>,
) -> Result<AlignmentReport> {
    measure_with_pass(a, b, opts, &kernel_pass, on_tick)
}

/// Who runs the kernel pass: [`kernel_pass`] on the host's cores, or a burn backend
/// (`prh_core::tasks::gram_device::device_pass`, `prh-native metrics --device`).
pub type PassFn<'p> =
    &'p dyn Fn(&[Matrix], &[Matrix], &PassOptions, OnTick<'_>) -> Result<KernelPass>;

/// [`measure_reporting`] with the kernel pass run by `pass` (everything else — clamp,
/// normalisation, SVCCA bases, nulls, the report — on the host, as always).
///
/// # Shapes
/// `a [n, la, da]`, `b [n, lb, db]` -> report
pub fn measure_with_pass(
    a: &Features,
    b: &Features,
    opts: &MetricOptions,
    pass: PassFn<'_>,
    on_tick: OnTick<'_>,
) -> Result<AlignmentReport> {
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
    // The thin SVD of every layer can take seconds at large N x D: one tick per layer.
    let n_layers = xa.len() + xb.len();
    let mut bases_done = 0;
    let mut bases = |xs: &[Matrix]| -> Result<Vec<Matrix>> {
        xs.iter()
            .map(|x| {
                let u = svcca::basis(x.as_ref(), opts.cca_dim)?;
                bases_done += 1;
                tick(on_tick, "svd", bases_done, n_layers);
                Ok(u)
            })
            .collect()
    };
    let (ua, ub) = (bases(&xa)?, bases(&xb)?);
    let n = a.n;
    let dense_bytes = 2 * (a.layers + b.layers) * n * n * 8;
    let keep_dense = opts.null_shuffles > 0 && dense_bytes <= opts.dense_null_bytes;
    let pass = pass(
        &xa,
        &xb,
        &PassOptions {
            k: opts.k,
            with_self: !opts.cknna_unbiased,
            rbf_sigma: opts.rbf_sigma,
            block_bytes: opts.block_bytes,
            keep_dense,
        },
        on_tick,
    )?;
    drop((xa, xb));
    let lb = pass.b.len();
    let (v, at) = best_over_pairs(pass.a.len(), lb, |i, j| {
        let cross = &pass.cross[i * lb + j];
        let s = pair_scores(
            &pass.a[i],
            &pass.b[j],
            cross,
            ua[i].as_ref(),
            ub[j].as_ref(),
            opts,
        )?;
        Ok(s.fields())
    })?;
    let (null_mean, null_std, null) = if opts.null_shuffles > 0 {
        let (i, j) = at[0];
        // The permutation null reuses the lists: shuffling B's rows only relabels them.
        let (m, s) = mutual_knn_null(
            &pass.a[i].knn,
            &pass.b[j].knn,
            opts.null_shuffles,
            opts.seed,
        )?;
        let note = (!keep_dense).then(|| {
            format!(
                "no null for cka, cka_rbf, unbiased_cka: it needs every layer's dense kernels, \
                 2 (L_A + L_B) N^2 f64 = {} MiB, over the {} MiB budget",
                dense_bytes >> 20,
                opts.dense_null_bytes >> 20
            )
        });
        let nulls = permutation_nulls(&pass, &ua, &ub, &v, opts, note, on_tick)?;
        (Some(m), Some(s), Some(nulls))
    } else {
        (None, None, None)
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
        scores: PairScores::from_fields(v),
        best_layers: BestLayers {
            mutual_knn: at[0],
            cycle_knn: at[1],
            lcs_knn: at[2],
            cka: at[3],
            cka_rbf: at[4],
            unbiased_cka: at[5],
            cknna: at[6],
            svcca: at[7],
            edit_distance_knn: at[8],
        },
        null_mutual_knn_mean: null_mean,
        null_mutual_knn_std: null_std,
        null,
        clamp_a,
        clamp_b,
    })
}

/// The permutation null of every metric's best score: under each of `null_shuffles`
/// seeded shufflings of B's rows, every layer pair is scored again (lists relabelled,
/// similarities, kernel sums and SVD bases permuted, cross sums from the dense kernels
/// when the pass kept them) and the max over layer pairs is one null sample. With one
/// layer per side this is the plain null of the one pair.
///
/// # Shapes
/// `ua`: L_A x `[n, c]`, `ub`: L_B x `[n, c]`, `raw [9]` (best scores) -> nulls
fn permutation_nulls(
    pass: &KernelPass,
    ua: &[Matrix],
    ub: &[Matrix],
    raw: &[f64; METRICS],
    opts: &MetricOptions,
    kernel_note: Option<String>,
    on_tick: OnTick<'_>,
) -> Result<MetricNulls> {
    let n = ua.first().map_or(0, |u| u.nrows());
    let (la, lb) = (pass.a.len(), pass.b.len());
    let mut done = 0;
    let samples = shuffled_scores(n, opts.null_shuffles, opts.seed, |perm| {
        let shuffled: Vec<LayerSums> = pass.b.iter().map(|l| l.permuted(perm)).collect();
        let bases: Vec<Matrix> = ub
            .iter()
            .map(|u| Matrix::from_fn(n, u.ncols(), |i, t| u[(perm[i], t)]))
            .collect();
        let (best, _) = best_over_pairs(la, lb, |i, j| {
            let cross = match (&pass.a[i].dense, &pass.b[j].dense) {
                (Some(x), Some(y)) => PairSums {
                    linear: permuted_cross(&x.linear, &y.linear, perm),
                    rbf: permuted_cross(&x.rbf, &y.rbf, perm),
                },
                _ => PairSums {
                    linear: f64::NAN,
                    rbf: f64::NAN,
                },
            };
            let s = pair_scores(
                &pass.a[i],
                &shuffled[j],
                &cross,
                ua[i].as_ref(),
                bases[j].as_ref(),
                opts,
            )?;
            Ok(s.fields())
        })?;
        done += 1;
        tick(on_tick, "null", done, opts.null_shuffles);
        Ok(best)
    })?;
    let perfect = PairScores::perfect(opts.k);
    let stats = |m: usize| -> Result<NullStats> {
        let col: Vec<f64> = samples.iter().map(|s| s[m]).collect();
        NullStats::new(raw[m], &col, perfect[m])
    };
    let kernel = |m: usize| -> Result<Option<NullStats>> {
        if kernel_note.is_some() {
            Ok(None)
        } else {
            stats(m).map(Some)
        }
    };
    Ok(MetricNulls {
        shuffles: opts.null_shuffles,
        seed: opts.seed,
        max_over_layer_pairs: la * lb > 1,
        mutual_knn: stats(0)?,
        cycle_knn: stats(1)?,
        lcs_knn: stats(2)?,
        cka: kernel(3)?,
        cka_rbf: kernel(4)?,
        unbiased_cka: kernel(5)?,
        cknna: stats(6)?,
        svcca: stats(7)?,
        edit_distance_knn: stats(8)?,
        kernel_note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;
    use rand::SeedableRng;
    use rand::seq::SliceRandom;
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
    fn dense_scores(x: &Matrix, y: &Matrix, opts: &MetricOptions) -> [f64; METRICS] {
        use crate::measure::cka::{cka, cknna_with, rbf_from_gram, unbiased_cka};
        use crate::measure::knn::{gram, knn_from_gram};
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
            svcca::svcca(x.as_ref(), y.as_ref(), opts.cca_dim).unwrap(),
            edit_distance_knn(&na, &nb).unwrap(),
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
            let mut best = [f64::NEG_INFINITY; METRICS];
            for l in 0..2 {
                let x = opts.preprocess.layer_matrix_clamped(&a, l, ta).unwrap();
                let s = dense_scores(&x, &y, &opts);
                for m in 0..METRICS {
                    best[m] = best[m].max(s[m]);
                }
            }
            let got = r.scores.fields();
            for m in 0..METRICS {
                assert!(
                    (got[m] - best[m]).abs() < 1e-10,
                    "metric {m} (unbiased CKNNA {unbiased}): blockwise {} vs dense {}",
                    got[m],
                    best[m]
                );
            }
        }
    }

    /// With one shuffle the null's mean is that shuffle's score: it must equal measuring
    /// A against B with its rows permuted from scratch, for every metric, and for a layer
    /// search it must be the max over layer pairs (what `measure` reports as raw).
    #[test]
    fn permutation_null_equals_rescoring_the_shuffled_pairing() {
        let (a, b) = (random(40, 2, 6, 21), random(40, 1, 5, 22));
        for (seed, unbiased) in [(3, true), (8, false)] {
            let opts = MetricOptions {
                k: 5,
                null_shuffles: 1,
                seed,
                cknna_unbiased: unbiased,
                cca_dim: 4,
                ..MetricOptions::default()
            };
            let r = measure(&a, &b, &opts).unwrap();
            let nulls = r.null.as_ref().unwrap();
            assert!(nulls.max_over_layer_pairs && nulls.kernel_note.is_none());
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut perm: Vec<usize> = (0..40).collect();
            perm.shuffle(&mut rng);
            let data = perm
                .iter()
                .flat_map(|&p| b.data[p * 5..(p + 1) * 5].iter().copied())
                .collect();
            let shuffled = Features::new("b'", 40, 1, 5, data).unwrap();
            let plain = MetricOptions {
                null_shuffles: 0,
                ..opts
            };
            let direct = measure(&a, &shuffled, &plain).unwrap().scores.fields();
            let n = nulls;
            let means = [
                n.mutual_knn.mean,
                n.cycle_knn.mean,
                n.lcs_knn.mean,
                n.cka.unwrap().mean,
                n.cka_rbf.unwrap().mean,
                n.unbiased_cka.unwrap().mean,
                n.cknna.mean,
                n.svcca.mean,
                n.edit_distance_knn.mean,
            ];
            for m in 0..METRICS {
                assert!(
                    (means[m] - direct[m]).abs() < 1e-10,
                    "metric {m}: null {} vs rescored {}",
                    means[m],
                    direct[m]
                );
            }
            assert_eq!(n.mutual_knn.std, 0.0);
        }
        // Over budget: the kernel metrics get no null and the report says why.
        let opts = MetricOptions {
            k: 5,
            null_shuffles: 3,
            dense_null_bytes: 0,
            cca_dim: 4,
            ..MetricOptions::default()
        };
        let r = measure(&a, &b, &opts).unwrap();
        let n = r.null.unwrap();
        assert!(n.cka.is_none() && n.cka_rbf.is_none() && n.unbiased_cka.is_none());
        assert!(n.kernel_note.unwrap().contains("budget"));
        // The max over the 2 x 1 layer pairs lies at or above the best pair's own null.
        assert!(n.mutual_knn.mean >= r.null_mutual_knn_mean.unwrap());
        // One layer per side: the null of the max is the one pair's null.
        let one = random(40, 1, 6, 23);
        let r = measure(&one, &b, &opts).unwrap();
        let n = r.null.unwrap();
        assert!(!n.max_over_layer_pairs);
        assert_eq!(r.null_mutual_knn_mean, Some(n.mutual_knn.mean));
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

    /// The ticks of a report: every SVD basis, the kernel pass tile by tile,
    /// every shuffle, in that order, each phase counting up to its total; and reporting
    /// changes nothing in the report.
    #[test]
    fn measure_reporting_ticks_each_phase_to_its_end() {
        let (a, b) = (random(300, 2, 5, 4), random(300, 3, 5, 5));
        let opts = MetricOptions {
            null_shuffles: 7,
            // Small blocks: the kernel pass takes several.
            block_bytes: 20 * 2 * 5 * 300 * 8,
            ..MetricOptions::default()
        };
        let mut ticks = Vec::new();
        let r = measure_reporting(&a, &b, &opts, &mut |t| ticks.push(t)).unwrap();
        assert_eq!(r, measure(&a, &b, &opts).unwrap());
        let phases: Vec<&str> = ticks.iter().map(|t| t.phase).collect();
        let first = |p: &str| phases.iter().position(|x| *x == p).unwrap();
        let last = |p: &str| phases.iter().rposition(|x| *x == p).unwrap();
        assert!(last("svd") < first("kernels") && last("kernels") < first("null"));
        // Tiles of side 63 (three buffers x 5 layers x 8 bytes x 63^2 <= 480,000 bytes):
        // 5 a side, 15 in the upper triangle.
        for (phase, total) in [("svd", 5), ("kernels", 15), ("null", 7)] {
            let mine: Vec<_> = ticks.iter().filter(|t| t.phase == phase).collect();
            assert!(mine.iter().all(|t| t.total == total), "{phase}: {mine:?}");
            assert!(mine.windows(2).all(|w| w[0].done < w[1].done), "{phase}");
            assert_eq!(mine.last().unwrap().done, total, "{phase}");
        }
        assert!(ticks.iter().filter(|t| t.phase == "kernels").count() > 3);
    }
}
