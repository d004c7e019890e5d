//! Exported encoder bundles (`bundle::read_bundle`, the file the web app loads): the
//! safetensors header, the metadata (format, version, spec, tokenizer) and the tensors.
#![no_main]
use libfuzzer_sys::fuzz_target;
use prh_core::backend::Cpu;

fuzz_target!(|data: &[u8]| {
    let device = Default::default();
    let _ = prh_core::tasks::bundle::read_bundle::<Cpu>("fuzz.safetensors", data, &device);
});
