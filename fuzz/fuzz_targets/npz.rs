//! `.npz` feature files (`Features::from_bytes` on zip bytes): the archive, the array
//! choice and the inner `.npy`. Inputs not starting with the zip magic are skipped so
//! the time goes to the zip path.
#![no_main]
use libfuzzer_sys::fuzz_target;
use prh_core::formats::features::Features;

fuzz_target!(|data: &[u8]| {
    if !data.starts_with(b"PK") {
        return;
    }
    for array in [None, Some("a")] {
        if let Ok(f) = Features::from_bytes("fuzz.npz", data, array) {
            assert_eq!(f.n * f.layers * f.d, f.data.len());
        }
    }
});
