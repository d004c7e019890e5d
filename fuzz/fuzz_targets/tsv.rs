//! The Embedding Projector's `vectors.tsv` (`Features::from_bytes` on a `*.tsv` source):
//! UTF-8, lines, tab-separated numbers, equal widths.
#![no_main]
use libfuzzer_sys::fuzz_target;
use prh_core::formats::features::Features;

fuzz_target!(|data: &[u8]| {
    if let Ok(f) = Features::from_bytes("fuzz.tsv", data, None) {
        assert_eq!(f.n * f.layers * f.d, f.data.len());
        assert!(f.data.iter().all(|v| v.is_finite()));
    }
});
