//! The core numerics compiled to wasm32 give the native numbers on fixed inputs.
//!
//! Reference values come from the native x86_64 `prh-native` (commands above each array).
//! faer may use FMA/SIMD natively and scalar code in wasm, so values agree to round-off
//! (1e-10), not bit for bit; discrete results (neighbour overlaps) must agree exactly.
//!
//! ```text
//! CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
//!   cargo test -p prh-web --target wasm32-unknown-unknown --test core_numerics
//! ```
#![cfg(target_arch = "wasm32")]

use prh_core::features::Features;
use prh_core::metrics::{MetricOptions, measure};
use prh_core::pair_graph::{Views, pair_matrix};
use prh_core::theorem::analyse;
use prh_core::world::{Preset, PresetSpec, World};
use wasm_bindgen_test::wasm_bindgen_test;

const TOL: f64 = 1e-10;

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "lengths differ");
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

#[wasm_bindgen_test]
fn ring_spectrum_equals_native() {
    // prh-native spectral --world ring --n 9 --seed 2 --views mix --alpha 0.4 --dim 2 --json
    // (field `eigenvalues`; presets use the CLI's defaults: 2 nuisances, skew 0.5, rho 0.5)
    const NATIVE: [f64; 18] = [
        0.9999999999999984,
        0.9316493078067405,
        0.8872378921438806,
        0.6709212451173124,
        0.6254822923991752,
        0.4227957793903561,
        0.39999999999999997,
        0.3726597231226966,
        0.3548951568575519,
        0.31889836108782577,
        0.26836849804692475,
        0.2501929169596699,
        0.21190290926829713,
        0.1691183117561422,
        0.15477097770225637,
        0.12755934443513015,
        0.08476116370731882,
        0.061908391080902736,
    ];
    let spec = PresetSpec {
        preset: Preset::Ring,
        n: 9,
        seed: 2,
        ..PresetSpec::default()
    };
    let world = World::preset(&spec).unwrap();
    let pi = pair_matrix(&world, 0, Views::Mix { alpha: 0.4 }).unwrap();
    let (_, spectrum) = analyse(&pi).unwrap();
    let d = max_diff(&spectrum.values, &NATIVE);
    assert!(d < TOL, "max |wasm - native| = {d:e}");
}

#[wasm_bindgen_test]
fn demo_metrics_equal_native() {
    // prh-native metrics web/assets/demo_a.npy web/assets/demo_b.npy --json
    let a =
        Features::from_bytes("demo_a.npy", include_bytes!("../assets/demo_a.npy"), None).unwrap();
    let b =
        Features::from_bytes("demo_b.npy", include_bytes!("../assets/demo_b.npy"), None).unwrap();
    let r = measure(&a, &b, &MetricOptions::default()).unwrap();
    assert_eq!((r.n, r.k), (300, 10));
    // Neighbour overlaps are counts: exact.
    assert_eq!(r.scores.mutual_knn, 0.592);
    assert_eq!(r.scores.cycle_knn, 0.9633333333333334);
    assert_eq!(r.scores.lcs_knn, 3.5733333333333333);
    let got = [
        r.scores.cka,
        r.scores.cka_rbf,
        r.scores.unbiased_cka,
        r.scores.cknna,
        r.null_mutual_knn_mean.unwrap(),
        r.null_mutual_knn_std.unwrap(),
    ];
    let native = [
        0.9147082948027568,
        0.9232687069336265,
        0.9135886417492215,
        0.5430952912799477,
        0.03340333333333335,
        0.004212757080846488,
    ];
    let d = max_diff(&got, &native);
    assert!(d < TOL, "max |wasm - native| = {d:e}");
}
