//! Corpus JSONL reader (`Corpus::from_jsonl`): every accepted group has an id and at
//! least one text.
#![no_main]
use libfuzzer_sys::fuzz_target;
use prh_core::text::corpus::Corpus;

fuzz_target!(|data: &[u8]| {
    if let Ok(c) = Corpus::from_jsonl("fuzz.jsonl", data) {
        assert!(!c.groups.is_empty());
        assert!(c.groups.iter().all(|g| !g.texts.is_empty()));
    }
});
