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

use prh_core::backend::Cpu;
use prh_core::formats::features::Features;
use prh_core::measure::metrics::{MetricOptions, measure};
use prh_core::tasks::bundle::read_bundle;
use prh_core::tasks::text::embed_texts;
use prh_core::theory::pair_graph::{Pairing, pair_matrix};
use prh_core::theory::theorem::analyse;
use prh_core::theory::world::{Preset, PresetSpec, World};
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
    let pi = pair_matrix(&world, 0, Pairing::Mix { alpha: 0.4 }).unwrap();
    let (_, spectrum) = analyse(&pi).unwrap();
    let d = max_diff(&spectrum.values, &NATIVE);
    assert!(d < TOL, "max |wasm - native| = {d:e}");
}

#[wasm_bindgen_test]
fn demo_metrics_equal_native() {
    // prh-native metrics web/assets/demo_a.npy web/assets/demo_b.npy --json
    // (the demo sets of web/make_demo.sh: real Multi30k captions, the views-multilingual
    // recipe's bag-of-embeddings encoder)
    let a =
        Features::from_bytes("demo_a.npy", include_bytes!("../assets/demo_a.npy"), None).unwrap();
    let b =
        Features::from_bytes("demo_b.npy", include_bytes!("../assets/demo_b.npy"), None).unwrap();
    let r = measure(&a, &b, &MetricOptions::default()).unwrap();
    assert_eq!((r.n, r.k), (300, 10));
    // Neighbour overlaps are counts: exact.
    assert_eq!(r.scores.mutual_knn, 0.31333333333333335);
    assert_eq!(r.scores.cycle_knn, 0.8666666666666667);
    assert_eq!(r.scores.lcs_knn, 2.08);
    let got = [
        r.scores.cka,
        r.scores.cka_rbf,
        r.scores.unbiased_cka,
        r.scores.cknna,
        r.null_mutual_knn_mean.unwrap(),
        r.null_mutual_knn_std.unwrap(),
    ];
    let native = [
        0.5789990948881352,
        0.6946490914555581,
        0.4429848271488061,
        0.3945122441470816,
        0.03318666666666667,
        0.004275594825414484,
    ];
    let d = max_diff(&got, &native);
    assert!(d < TOL, "max |wasm - native| = {d:e}");
}

#[wasm_bindgen_test]
fn demo_encoder_embeddings_equal_native() {
    // The run exported as web/assets/demo_model.prh.safetensors (web/make_demo.sh), then
    // prh-native embed --run RUN --texts texts3.txt --out emb3.npy   (native, burn ndarray)
    // numpy: emb3[:, :4] and np.linalg.norm(emb3, axis=1).
    const FIRST4: [[f64; 4]; 3] = [
        [
            -0.1739676296710968,
            0.11465876549482346,
            0.5528225898742676,
            0.6988837718963623,
        ],
        [
            -0.0732862651348114,
            0.5747173428535461,
            0.73553466796875,
            0.19704221189022064,
        ],
        [
            -0.1669563502073288,
            -1.2201515436172485,
            -2.4911282062530518,
            -0.41239795088768005,
        ],
    ];
    const NORMS: [f64; 3] = [7.432079130748089, 8.922500632643153, 10.774073286033037];
    let bytes = include_bytes!("../assets/demo_model.prh.safetensors");
    let device = Default::default();
    let b = read_bundle::<Cpu>("demo_model.prh.safetensors", bytes, &device).unwrap();
    let texts: Vec<String> = [
        "a man rides a bicycle down the street",
        "a cyclist pedals along a city road",
        "two dogs play in the snow",
    ]
    .map(String::from)
    .to_vec();
    let rows = embed_texts(&b.model, &b.spec, &b.tokenizer, &texts, 16, &device).unwrap();
    let d = b.spec.d_model;
    assert_eq!(rows.len(), 3 * d);
    // f32 arithmetic, possibly summed in another order: agree to 1e-5 (norms relative).
    for i in 0..3 {
        let row = &rows[i * d..(i + 1) * d];
        let got: Vec<f64> = row[..4].iter().map(|&x| f64::from(x)).collect();
        let e = max_diff(&got, &FIRST4[i]);
        assert!(e < 1e-5, "text {i}: first values differ by {e:e}");
        let norm = row
            .iter()
            .map(|&x| f64::from(x).powi(2))
            .sum::<f64>()
            .sqrt();
        assert!(
            (norm - NORMS[i]).abs() < 1e-5 * NORMS[i].max(1.0),
            "text {i}: norm {norm} vs native {}",
            NORMS[i]
        );
    }
}
