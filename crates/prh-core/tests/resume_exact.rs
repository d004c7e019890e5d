//! Exact resume of the text JEPA, in a process of its own.
//!
//! burn's ndarray backend draws parameter initialisations from one process-wide RNG
//! (`B::seed`). In the library's unit-test binary other tests initialise models on other
//! threads at the same time and can draw from that RNG between `train`'s seeding and its
//! model init, so two "identical" runs there may start from different weights. This file
//! is its own test binary with a single test, so nothing else draws in between.

mod common;

use prh_core::tasks::text::TextTask;
use prh_core::text::shards::ShardStream;

#[test]
fn text_jepa_resumes_exactly_in_memory_and_streamed() {
    // One tokenizer for every run: WordPiece training may break ties differently.
    let tok = common::tokenizer();
    common::check_resume(
        &|| common::task(common::config("good", 6, &[]), &tok),
        &["loss"],
    );
    // 6 steps x 16 groups = 96 draws over 41 streamed groups: more than two epochs, and
    // the one-text group is skipped each epoch.
    common::check_resume(
        &|| {
            let cfg = common::config("good", 6, &[]);
            let stream = ShardStream::from_memory(common::toy_shards(), 8, cfg.run.seed).unwrap();
            TextTask::streaming(cfg, tok.clone(), stream).unwrap()
        },
        &["loss"],
    );
}
