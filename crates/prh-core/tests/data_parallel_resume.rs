//! Data-parallel training (W = 2 replicas on the NdArray device) end to end: it trains
//! like the single-device run, checkpoints, and resumes exactly.
//!
//! A process of its own with a single test, like `resume_exact.rs`: burn's ndarray
//! backend draws parameter initialisations from one process-wide RNG, and any other test
//! initialising a model concurrently could draw between `train`'s seeding and its init.

mod common;

use common::series;
use prh_core::backend::CpuTrain;
use prh_core::tasks::text::TextTask;
use prh_core::text::shards::ShardStream;
use prh_core::train::{MemorySink, train};

fn run(t: &mut TextTask) -> MemorySink {
    let cfg = t.cfg.clone();
    let mut sink = MemorySink::default();
    train::<CpuTrain, _>(
        t,
        &cfg.run,
        &cfg.optim,
        "",
        None,
        &mut sink,
        &Default::default(),
    )
    .unwrap();
    sink
}

#[test]
fn two_replicas_train_like_one_device_and_resume_exactly() {
    let tok = common::tokenizer();
    // 1. W = 2 follows the single-device trajectory (same seed, same batches) to float
    // tolerance over 8 steps: the per-step losses agree to relative 1e-4.
    let one = run(&mut common::task(common::config("good", 8, &[]), &tok));
    let two = run(&mut common::task(
        common::config("good", 8, &["run.data_parallel=2"]),
        &tok,
    ));
    let (a, b) = (series(&one, "loss"), series(&two, "loss"));
    let worst = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs() / x.abs())
        .fold(0.0, f64::max);
    eprintln!("W=1 losses {a:?}\nW=2 losses {b:?}\nmax relative difference {worst:.2e}");
    assert!(
        worst < 1e-4,
        "W=2 left the single-device trajectory by {worst}"
    );
    assert_eq!(series(&one, "items"), series(&two, "items"));
    // 2. It trains: over 30 steps the loss falls, as on one device.
    let long = run(&mut common::task(
        common::config("good", 30, &["run.data_parallel=2"]),
        &tok,
    ));
    let l = series(&long, "loss");
    let (first, last) = (
        l[..5].iter().sum::<f64>() / 5.0,
        l[25..].iter().sum::<f64>() / 5.0,
    );
    eprintln!("W=2 loss {first:.4} -> {last:.4} over 30 steps (means of the first and last 5)");
    assert!(last < 0.8 * first, "loss {first} -> {last}");
    // 3. Exact resume, from memory and from streamed shards (6 steps x 16 groups).
    // The joined losses and gradient norms equal the uninterrupted W = 2 run's bit for bit.
    let dp = ["run.data_parallel=2"];
    let check_resume = |make: &dyn Fn() -> TextTask| {
        assert_eq!(make().cfg.run.data_parallel, 2);
        common::check_resume(make, &["loss", "grad_norm"]);
    };
    check_resume(&|| common::task(common::config("good", 6, &dp), &tok));
    check_resume(&|| {
        let cfg = common::config("good", 6, &dp);
        let stream = ShardStream::from_memory(common::toy_shards(), 8, cfg.run.seed).unwrap();
        TextTask::streaming(cfg, tok.clone(), stream).unwrap()
    });
}
