//! Fixtures shared by the data-parallel and exact-resume test binaries: a toy caption
//! corpus (in memory and as shards), its tokenizer and a tiny text-JEPA config.

#![allow(dead_code)]

use prh_core::Error;
use prh_core::backend::CpuTrain;
use prh_core::tasks::text::TextTask;
use prh_core::tasks::text::TrainConfig;
use prh_core::text::corpus::Group;
use prh_core::text::tokenizer::TextTokenizer;
use prh_core::text::tokenizer::TokenizerConfig;
use prh_core::train::checkpoint::Checkpoint;
use prh_core::train::{MemorySink, RunSink, train};

/// 40 groups of 3 captions ("a red dog runs in the park", ...).
pub fn toy_groups() -> Vec<Group> {
    let mut out = Vec::new();
    for c in ["red", "blue", "green", "black", "white"] {
        for a in ["dog", "cat", "horse", "bird"] {
            for v in ["runs", "sleeps"] {
                out.push(Group {
                    id: format!("{c}-{a}-{v}"),
                    texts: vec![
                        format!("a {c} {a} {v} in the park"),
                        format!("the {a} that is {c} {v} today"),
                        format!("look , one {c} {a} {v} there"),
                    ],
                });
            }
        }
    }
    out
}

/// A tiny run: `objective`, `steps` steps, batch 16, 32 SIGReg slices, then `sets`.
pub fn config(objective: &str, steps: usize, sets: &[&str]) -> TrainConfig {
    let text = format!(
        "[run]\nobjective = \"{objective}\"\nsteps = {steps}\nlog_every = 1\n\
         checkpoint_every = 3\n[model]\nmax_len = 16\n[views]\nbatch_size = 16\n\
         [loss]\nslices = 32\n[optim]\nwarmup_steps = 2\nlr = 2e-3\n"
    );
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    TrainConfig::from_toml("toy.toml", &text, &sets).unwrap()
}

/// A WordPiece tokenizer trained on the toy captions (train it once per test and share
/// it: ties may break differently from one training to the next).
pub fn tokenizer() -> TextTokenizer {
    let cfg = TokenizerConfig {
        vocab_size: 100,
        min_frequency: 1,
        ..TokenizerConfig::default()
    };
    let groups = toy_groups();
    TextTokenizer::train(
        groups
            .iter()
            .flat_map(|g| g.texts.iter().map(String::as_str)),
        &cfg,
    )
    .unwrap()
}

/// The toy corpus as a text task.
pub fn task(cfg: TrainConfig, tok: &TextTokenizer) -> TextTask {
    TextTask::new(cfg, tok.clone(), &toy_groups()).unwrap()
}

/// The toy groups as two gzip JSONL shards and a plain one, plus a one-text group (good
/// views skip it).
pub fn toy_shards() -> Vec<(String, Vec<u8>)> {
    use std::io::Write;
    let lines: Vec<String> = toy_groups()
        .iter()
        .map(|g| serde_json::json!({"id": g.id, "texts": g.texts}).to_string() + "\n")
        .collect();
    let gz = |part: &[String]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(part.concat().as_bytes()).unwrap();
        e.finish().unwrap()
    };
    let mut plain = lines[30..].concat();
    plain.push_str("{\"id\": \"lonely\", \"texts\": [\"a lonely text\"]}\n");
    vec![
        ("s0.jsonl.gz".into(), gz(&lines[..15])),
        ("s1.jsonl.gz".into(), gz(&lines[15..30])),
        ("s2.jsonl".into(), plain.into_bytes()),
    ]
}

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

/// One logged series (`"loss"`, `"grad_norm"`, ...) of a run.
pub fn series(s: &MemorySink, key: &str) -> Vec<f64> {
    s.records.iter().map(|r| r[key].as_f64().unwrap()).collect()
}

/// Full run vs (run interrupted after the step-3 checkpoint + resumed run), for tasks made
/// by `make`: the joined `keys` series must equal the uninterrupted run's bit for bit.
pub fn check_resume(make: &dyn Fn() -> TextTask, keys: &[&str]) {
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
    for key in keys {
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
