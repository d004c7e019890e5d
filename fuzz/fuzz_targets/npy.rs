//! `.npy` reader (`prh_core::formats::npy::read_npy`): any bytes give a shape and values that
//! agree, or a clean error; never a panic, an overflow or a huge allocation.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok((shape, values)) = prh_core::formats::npy::read_npy("fuzz.npy", "array", data) {
        assert_eq!(shape.iter().product::<usize>(), values.len());
    }
});
