//! The gallery curve: mutual k-NN against the number of samples it is measured on
//! ("Back into Plato's Cave": alignment scores fall as the gallery grows, because a
//! fixed k is a shrinking share of a growing neighbourhood). Nested random subsets of the
//! paired rows, each measured as `prh-native metrics` would measure that subset alone.

use crate::formats::features::{Features, check_same_n};
use crate::measure::calibration::{NullStats, shuffled_scores};
use crate::measure::knn::{Knn, knn_from_features, mutual_knn};
use crate::measure::metrics::MetricOptions;
use crate::progress::{OnTick, tick};
use crate::{Error, Result};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

/// Mutual k-NN on one subset of the gallery.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GalleryPoint {
    /// Samples in the subset.
    pub n: usize,
    /// Best mutual k-NN over layer pairs on the subset.
    pub mutual_knn: f64,
    /// Chance k / (n - 1).
    pub chance: f64,
    /// Its permutation null (of the max over layer pairs), when shuffles were asked for.
    pub null: Option<NullStats>,
}

/// Mutual k-NN on nested random subsets: one seeded permutation of the N rows (ChaCha8,
/// `opts.seed`), subset m = its first m rows, so each subset contains the smaller ones.
/// Each subset is preprocessed on its own (clamp threshold, row norms) and scored as
/// max_{i,j} mutual_knn(A_i, B_j) over layer pairs, with `opts.null_shuffles` shuffles
/// of the null of that max. Memory O(m L D + m k) per subset; time O(m^2 D) each.
/// Ticks phase `"subsets"` after each subset (smallest first).
///
/// # Shapes
/// `a [n, la, da]`, `b [n, lb, db]`, `sizes [s]` (each in k + 2 ..= n) -> `[s]` points
pub fn gallery_curve(
    a: &Features,
    b: &Features,
    sizes: &[usize],
    opts: &MetricOptions,
    on_tick: OnTick<'_>,
) -> Result<Vec<GalleryPoint>> {
    check_same_n(a, b)?;
    let n = a.n;
    if sizes.is_empty() {
        return Err(Error::invalid("the gallery curve needs at least one size"));
    }
    if let Some(&bad) = sizes.iter().find(|&&m| m < opts.k + 2 || m > n) {
        return Err(Error::invalid(format!(
            "gallery size {bad}: each size must lie in {}..={n} (more than k + 1 = {} \
             samples, at most the N = {n} paired rows)",
            opts.k + 2,
            opts.k + 1
        )));
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(opts.seed));
    let mut sorted = sizes.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut points = Vec::with_capacity(sorted.len());
    for &m in &sorted {
        points.push(point(a, b, &order[..m], opts)?);
        tick(on_tick, "subsets", points.len(), sorted.len());
    }
    Ok(points)
}

fn subset(f: &Features, rows: &[usize]) -> Result<Features> {
    let width = f.layers * f.d;
    let data = rows
        .iter()
        .flat_map(|&i| f.data[i * width..(i + 1) * width].iter().copied())
        .collect();
    Features::new(&f.source, rows.len(), f.layers, f.d, data)
}

fn lists(f: &Features, opts: &MetricOptions) -> Result<Vec<Knn>> {
    let t = opts.preprocess.threshold(f)?;
    (0..f.layers)
        .map(|l| {
            let x = opts.preprocess.layer_matrix_clamped(f, l, t)?;
            Ok(knn_from_features(x.as_ref(), opts.k, true)?.0)
        })
        .collect()
}

/// max over layer pairs (i, j) of mutual_knn(A_i, B_j).
fn best(ka: &[Knn], kb: &[Knn]) -> Result<f64> {
    let mut top = f64::NEG_INFINITY;
    for x in ka {
        for y in kb {
            top = top.max(mutual_knn(x, y)?);
        }
    }
    Ok(top)
}

fn point(a: &Features, b: &Features, rows: &[usize], opts: &MetricOptions) -> Result<GalleryPoint> {
    let m = rows.len();
    let (ka, kb) = (
        lists(&subset(a, rows)?, opts)?,
        lists(&subset(b, rows)?, opts)?,
    );
    let raw = best(&ka, &kb)?;
    let null = if opts.null_shuffles > 0 {
        let samples = shuffled_scores(m, opts.null_shuffles, opts.seed, |perm| {
            let shuffled: Vec<Knn> = kb.iter().map(|k| k.permuted(perm)).collect();
            best(&ka, &shuffled)
        })?;
        Some(NullStats::new(raw, &samples, 1.0)?)
    } else {
        None
    };
    Ok(GalleryPoint {
        n: m,
        mutual_knn: raw,
        chance: opts.k as f64 / (m - 1) as f64,
        null,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::metrics::measure;
    use rand::Rng;

    fn noisy_pair(n: usize, d: usize) -> (Features, Features) {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let a: Vec<f64> = (0..n * d).map(|_| rng.random::<f64>() - 0.5).collect();
        let b: Vec<f64> = a
            .iter()
            .map(|v| v + 0.3 * (rng.random::<f64>() - 0.5))
            .collect();
        (
            Features::new("a", n, 1, d, a).unwrap(),
            Features::new("b", n, 1, d, b).unwrap(),
        )
    }

    #[test]
    fn full_size_equals_measure_and_subsets_are_nested() {
        let (a, b) = noisy_pair(120, 6);
        let opts = MetricOptions {
            k: 5,
            null_shuffles: 20,
            ..MetricOptions::default()
        };
        let curve = gallery_curve(&a, &b, &[120, 30, 60, 30], &opts, &mut |_| {}).unwrap();
        assert_eq!(
            curve.iter().map(|p| p.n).collect::<Vec<_>>(),
            vec![30, 60, 120]
        );
        // All N rows in a shuffled order: mutual k-NN does not depend on the order.
        let full = measure(&a, &b, &opts).unwrap();
        assert!((curve[2].mutual_knn - full.scores.mutual_knn).abs() < 1e-12);
        // Each point is far above its null, which sits near chance k / (m - 1).
        for p in &curve {
            let nul = p.null.unwrap();
            assert!(p.mutual_knn > nul.mean + 5.0 * nul.std, "{p:?}");
            assert!((nul.mean - p.chance).abs() < 0.05, "{p:?}");
        }
        // Nested: the 30-row subset is the first 30 rows of the 60-row one's order.
        let mut order: Vec<usize> = (0..120).collect();
        order.shuffle(&mut ChaCha8Rng::seed_from_u64(opts.seed));
        let direct = point(&a, &b, &order[..30], &opts).unwrap();
        assert_eq!(direct, curve[0]);
        for bad in [[6usize], [121]] {
            let e = gallery_curve(&a, &b, &bad, &opts, &mut |_| {})
                .unwrap_err()
                .to_string();
            assert!(e.contains("gallery size") && e.contains("7..=120"), "{e}");
        }
    }
}
