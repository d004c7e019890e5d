//! Exact resume of the text JEPA, in a process of its own.
//!
//! burn's ndarray backend draws parameter initialisations from one process-wide RNG
//! (`B::seed`). In the library's unit-test binary other tests initialise models on other
//! threads at the same time and can draw from that RNG between `train`'s seeding and its
//! model init, so two "identical" runs there may start from different weights. This file
//! is its own test binary with a single test, so nothing else draws in between.

mod common;

use prh_core::Error;
use prh_core::backend::CpuTrain;
use prh_core::checkpoint::Checkpoint;
use prh_core::shards::ShardStream;
use prh_core::text_task::TextTask;
use prh_core::train::{MemorySink, RunSink, train};

/// Stops the run with an error right after its first checkpoint (a simulated crash).
struct Stop<'a>(&'a mut MemorySink);
impl RunSink for Stop<'_> {
    fn now(&self) -> f64 {
        0.0
    }
    fn log(&mut self, r: &serde_json::Value) -> prh_core::Result<()> {
        self.0.log(r)
    }
    fn save(&mut self, n: &str, c: &Checkpoint) -> prh_core::Result<()> {
        self.0.save(n, c)?;
        Err(Error::invalid("interrupted"))
    }
}

fn losses(s: &MemorySink) -> Vec<f64> {
    s.records
        .iter()
        .map(|r| r["loss"].as_f64().unwrap())
        .collect()
}

/// Full run vs (run interrupted after the step-3 checkpoint + resumed run), for tasks made
/// by `make`; the joined losses must equal the uninterrupted run's bit for bit.
fn check_resume(make: &dyn Fn() -> TextTask) {
    let device = Default::default();
    let mut t = make();
    let cfg = t.cfg.clone();
    let mut full = MemorySink::default();
    train::<CpuTrain, _>(&mut t, &cfg.run, &cfg.optim, "", None, &mut full, &device).unwrap();
    let mut first = MemorySink::default();
    let e = train::<CpuTrain, _>(
        &mut make(),
        &cfg.run,
        &cfg.optim,
        "",
        None,
        &mut Stop(&mut first),
        &device,
    );
    assert!(e.is_err());
    let ck = first.checkpoints[0].1.clone();
    assert_eq!(ck.meta.step, 3);
    // Through bytes, as a new process would read it.
    let ck = Checkpoint::from_bytes("mem", &ck.to_bytes().unwrap()).unwrap();
    let mut second = MemorySink::default();
    train::<CpuTrain, _>(
        &mut make(),
        &cfg.run,
        &cfg.optim,
        "",
        Some(&ck),
        &mut second,
        &device,
    )
    .unwrap();
    let mut joined = losses(&first);
    joined.extend(losses(&second));
    assert_eq!(joined.len(), 6);
    assert!(joined.iter().all(|l| l.is_finite()));
    assert_eq!(
        joined,
        losses(&full),
        "resumed losses differ from the full run"
    );
}

#[test]
fn text_jepa_resumes_exactly_in_memory_and_streamed() {
    // One tokenizer for every run: WordPiece training may break ties differently.
    let tok = common::tokenizer();
    check_resume(&|| common::task(common::config("good", 6, &[]), &tok));
    // 6 steps x 16 groups = 96 draws over 41 streamed groups: more than two epochs, and
    // the one-text group is skipped each epoch.
    check_resume(&|| {
        let cfg = common::config("good", 6, &[]);
        let stream = ShardStream::from_memory(common::toy_shards(), 8, cfg.run.seed).unwrap();
        TextTask::streaming(cfg, tok.clone(), stream).unwrap()
    });
}
