//! `.safetensors` feature files (`Features::from_bytes`): the header, dtype and shape.
//! Inputs that the format sniffing would not send to the safetensors path are skipped.
#![no_main]
use libfuzzer_sys::fuzz_target;
use prh_core::formats::features::Features;

fuzz_target!(|data: &[u8]| {
    if data.len() < 9 || data[8] != b'{' {
        return;
    }
    for array in [None, Some("a")] {
        if let Ok(f) = Features::from_bytes("fuzz.safetensors", data, array) {
            assert_eq!(f.n * f.layers * f.d, f.data.len());
        }
    }
});
