//! The alignment lab's numbers: the CLI's metrics report, per-point mutual k-NN and PCA
//! of two embedding sets ([`analyse_parts`], run in the worker, [`super::worker`]), and
//! the Procrustes rotation with its retrieval scores ([`fit_rotation`]). No view here.

use crate::widgets::drop_zone::parse;
use crate::widgets::files::fetch_asset;
use prh_core::formats::features::Features;
use prh_core::linalg::Matrix;
use prh_core::measure::knn::Knn;
use prh_core::measure::metrics::{MetricOptions, measure};
use prh_core::measure::preprocess::Preprocess;
use prh_core::measure::projection::{layer_neighbours, pca_2d, per_point_mutual_knn};
use prh_core::measure::retrieval::{AlignReport, align_and_rank};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Everything the lab shows for one pair of embedding sets.
pub struct Analysis {
    /// The CLI's `metrics --json` report (same function, same defaults), as that JSON.
    pub report: serde_json::Value,
    /// |N_A(i) ∩ N_B(i)| / k per sample, at the best mutual k-NN layer pair.
    pub per_point: Vec<f64>,
    /// Neighbour lists in A and in B (that layer pair).
    pub knn_a: Knn,
    pub knn_b: Knn,
    /// First two principal components of each side.
    pub pca_a: Vec<(f64, f64)>,
    pub pca_b: Vec<(f64, f64)>,
    /// The two sets and the layer pair used, for fitting the rotation later.
    pub inputs: (Arc<Features>, Arc<Features>, usize, usize),
    /// Procrustes fit on the first half of the pairs, retrieval on the second half, and
    /// the milliseconds it took; `None` while deferred (wide embeddings, see
    /// [`EAGER_ROTATION_WIDTH`]).
    pub align: Option<(Result<AlignReport, String>, f64)>,
    /// Milliseconds the metrics and the PCA took in this browser.
    pub ms: [f64; 2],
}

/// Which inputs a result was computed from: the load number of each set (the lab counts
/// loads per slot) and k. A result is shown only while all three are still current.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputKey {
    pub a: u64,
    pub b: u64,
    pub k: usize,
}

/// An analysis with the inputs it belongs to, and what changed since the one before.
pub struct Computed {
    pub key: InputKey,
    /// "A = file (N × D) vs B = file, k".
    pub inputs: String,
    /// Set when only one side was replaced: the other is the earlier file, said so.
    pub kept: Option<String>,
    pub result: Result<Arc<Analysis>, String>,
}

/// Widest embedding for which the rotation is fitted right away: the fit is an SVD of a
/// [d_a, d_b] matrix, ~10 s in wasm at 1280 x 1280, so wider sets get a button instead.
pub const EAGER_ROTATION_WIDTH: usize = 256;

/// Procrustes fit on the first half of the pairs (rotation-equivariant preprocessing: rows
/// normalised, no clamp) and retrieval through it on the second half, with its duration.
pub fn fit_rotation(
    a: &Features,
    b: &Features,
    la: usize,
    lb: usize,
) -> (Result<AlignReport, String>, f64) {
    let t0 = crate::widgets::clock::now_ms();
    let pre = Preprocess::normalize_only();
    let half = a.n / 2;
    let fit = (|| {
        let (fa, ta) = a.split_rows(half).map_err(|e| e.to_string())?;
        let (fb, tb) = b.split_rows(half).map_err(|e| e.to_string())?;
        let m = |f: &Features, l: usize| pre.layer_matrix(f, l).map_err(|e| e.to_string());
        align_and_rank(
            m(&fa, la)?.as_ref(),
            m(&fb, lb)?.as_ref(),
            m(&ta, la)?.as_ref(),
            m(&tb, lb)?.as_ref(),
        )
        .map_err(|e| e.to_string())
    })();
    (fit, crate::widgets::clock::now_ms() - t0)
}

/// The part of an analysis computed in the worker ([`super::worker`]): plain
/// numbers, sent to the page as JSON.
#[derive(Serialize, Deserialize)]
pub struct Parts {
    /// The CLI's `metrics --json` report (same function, same defaults), as that JSON.
    report: serde_json::Value,
    /// The best mutual k-NN layer pair (layer of A, layer of B).
    layers: (usize, usize),
    /// |N_A(i) ∩ N_B(i)| / k per sample at that layer pair.
    per_point: Vec<f64>,
    /// Samples N and neighbours k of the lists below.
    n: usize,
    k: usize,
    /// Flat `[n, k]` neighbour lists in A and in B (`prh_core::measure::knn::Knn::idx`).
    knn_a: Vec<usize>,
    knn_b: Vec<usize>,
    /// First two principal components of each side.
    pca_a: Vec<(f64, f64)>,
    pca_b: Vec<(f64, f64)>,
    /// Milliseconds the metrics and the PCA took.
    ms: [f64; 2],
}

/// The metrics (k neighbours), per-point mutual k-NN and PCA of two sets; `say(stage)` is
/// called before each stage (the worker posts it to the page).
pub fn analyse_parts(
    a: &Features,
    b: &Features,
    k: usize,
    say: &dyn Fn(&str),
) -> Result<Parts, String> {
    let t0 = crate::widgets::clock::now_ms();
    let opts = MetricOptions {
        k,
        ..MetricOptions::default()
    };
    say("metrics: k-NN lists, CKA, CKNNA and the permutation null");
    let report = measure(a, b, &opts).map_err(|e| e.to_string())?;
    // Re-derive the best mutual k-NN layer pair's neighbours exactly as `measure` does.
    let (la, lb) = report.best_layers.mutual_knn;
    say("per-point mutual k-NN");
    let (xa, knn_a) = layer_neighbours(a, la, &opts).map_err(|e| e.to_string())?;
    let (xb, knn_b) = layer_neighbours(b, lb, &opts).map_err(|e| e.to_string())?;
    let per_point = per_point_mutual_knn(&knn_a, &knn_b);
    let t1 = crate::widgets::clock::now_ms();
    say("PCA of each side");
    let pca = |x: &Matrix| pca_2d(x).map_err(|e| e.to_string());
    let (pca_a, pca_b) = (pca(&xa)?, pca(&xb)?);
    let t2 = crate::widgets::clock::now_ms();
    Ok(Parts {
        report: serde_json::to_value(&report).map_err(|e| e.to_string())?,
        layers: (la, lb),
        per_point,
        n: knn_a.n,
        k: knn_a.k,
        knn_a: knn_a.idx,
        knn_b: knn_b.idx,
        pca_a,
        pca_b,
        ms: [t1 - t0, t2 - t1],
    })
}

/// The analysis of two sets from the worker's [`Parts`]; the rotation is fitted here right
/// away for narrow embeddings (see [`EAGER_ROTATION_WIDTH`]).
pub fn analysis_from(parts: Parts, a: Arc<Features>, b: Arc<Features>) -> Analysis {
    let (la, lb) = parts.layers;
    let align = (a.d.max(b.d) <= EAGER_ROTATION_WIDTH).then(|| fit_rotation(&a, &b, la, lb));
    let knn = |idx: Vec<usize>| Knn {
        n: parts.n,
        k: parts.k,
        idx,
    };
    Analysis {
        report: parts.report,
        per_point: parts.per_point,
        knn_a: knn(parts.knn_a),
        knn_b: knn(parts.knn_b),
        pca_a: parts.pca_a,
        pca_b: parts.pca_b,
        inputs: (a, b, la, lb),
        align,
        ms: parts.ms,
    }
}

/// A number of the report JSON by key (NaN when absent: shown as such, never as a score).
pub fn num(report: &serde_json::Value, key: &str) -> f64 {
    report
        .get(key)
        .and_then(serde_json::Value::as_f64)
        .unwrap_or(f64::NAN)
}

/// Fetches a demo file shipped in `assets/` and parses it.
pub async fn fetch_demo(name: &str) -> Result<Features, String> {
    let bytes = fetch_asset(&format!("assets/{name}")).await?;
    parse(name, &bytes)
}

/// The demo pairs shipped in `assets/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Demo {
    /// `demo_a.npy` vs `demo_b.npy` (web/make_demo.sh).
    Captions,
    /// The views-multilingual experiment's good-view encoders (en and de trained apart),
    /// embedding the 1,000 test_2016 images' first caption in each language.
    Multilingual,
}

impl Demo {
    /// The URL value (`data=`).
    pub fn key(self) -> &'static str {
        match self {
            Demo::Captions => "demo",
            Demo::Multilingual => "multilingual",
        }
    }

    pub fn parse(s: &str) -> Option<Demo> {
        [Demo::Captions, Demo::Multilingual]
            .into_iter()
            .find(|d| d.key() == s)
    }

    /// File names of sets A and B.
    pub fn files(self) -> (&'static str, &'static str) {
        match self {
            Demo::Captions => ("demo_a.npy", "demo_b.npy"),
            Demo::Multilingual => ("demo_multi_en.npy", "demo_multi_de.npy"),
        }
    }
}
