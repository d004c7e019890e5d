//! Checkpoint files (`Checkpoint::from_bytes`, then the stored config as `train
//! --resume` reads it): a file is accepted only with matching lengths and CRC-32, and an
//! accepted one re-serialises to a file that parses to the same header.
#![no_main]
use libfuzzer_sys::fuzz_target;
use prh_core::train::checkpoint::Checkpoint;
use prh_core::tasks::text::TrainConfig;

fuzz_target!(|data: &[u8]| {
    if let Ok(ck) = Checkpoint::from_bytes("fuzz.ckpt", data) {
        let _ = TrainConfig::from_toml("fuzz.ckpt (stored config)", &ck.meta.config, &[]);
        let bytes = ck.to_bytes().expect("a parsed checkpoint serialises");
        let back = Checkpoint::from_bytes("round-trip.ckpt", &bytes).expect("and parses");
        assert_eq!(back.meta, ck.meta);
    }
});
