//! Run and experiment configs (`TrainConfig::from_toml`, `ExperimentConfig::from_toml`):
//! the TOML text, then `--set key=value` overrides (the lines after a NUL byte). An
//! accepted config must survive its own round trip through `to_toml`.
#![no_main]
use libfuzzer_sys::fuzz_target;
use prh_core::tasks::text::TrainConfig;
use prh_core::experiments::multilingual::ExperimentConfig;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (toml, sets) = text.split_once('\0').unwrap_or((text, ""));
    let sets: Vec<String> = sets.lines().map(str::to_string).collect();
    if let Ok(cfg) = TrainConfig::from_toml("fuzz.toml", toml, &sets) {
        let again = cfg.to_toml().expect("a parsed config serialises");
        let back = TrainConfig::from_toml("round-trip.toml", &again, &[])
            .expect("a serialised config parses");
        assert_eq!(back.to_toml().ok(), Some(again));
    }
    let _ = ExperimentConfig::from_toml("fuzz.toml", toml, &sets);
});
