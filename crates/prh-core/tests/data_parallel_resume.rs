//! Data-parallel training (W = 2 replicas on the NdArray device) end to end: it trains
//! like the single-device run, checkpoints, and resumes exactly.
//!
//! A process of its own with a single test, like `resume_exact.rs`: burn's ndarray
//! backend draws parameter initialisations from one process-wide RNG, and any other test
//! initialising a model concurrently could draw between `train`'s seeding and its init.

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

fn series(s: &MemorySink, key: &str) -> Vec<f64> {
    s.records.iter().map(|r| r[key].as_f64().unwrap()).collect()
}

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

/// Full W = 2 run vs (interrupted after the step-3 checkpoint + resumed): the joined
/// losses and gradient norms equal the uninterrupted run's bit for bit.
fn check_resume(make: &dyn Fn() -> TextTask) {
    let device = Default::default();
    let full = run(&mut make());
    let cfg = make().cfg;
    assert_eq!(cfg.run.data_parallel, 2);
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
    for key in ["loss", "grad_norm"] {
        let mut joined = series(&first, key);
        joined.extend(series(&second, key));
        assert_eq!(joined.len(), cfg.run.steps);
        assert!(joined.iter().all(|l| l.is_finite()));
        assert_eq!(
            joined,
            series(&full, key),
            "resumed {key} differs from the full run"
        );
    }
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
    let dp = ["run.data_parallel=2"];
    check_resume(&|| common::task(common::config("good", 6, &dp), &tok));
    check_resume(&|| {
        let cfg = common::config("good", 6, &dp);
        let stream = ShardStream::from_memory(common::toy_shards(), 8, cfg.run.seed).unwrap();
        TextTask::streaming(cfg, tok.clone(), stream).unwrap()
    });
}
