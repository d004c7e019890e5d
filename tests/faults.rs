//! Fault injection for `prh-native train` (issue 9.2): `kill -9` at seeded-random
//! moments then `--resume`, corrupted and torn checkpoints, an unwritable or full run
//! folder, and the NaN / collapse guards. Every scenario drives the real binary on a toy
//! JSONL corpus written here (CPU, seconds each).
//!
//! The central claim: however a run is killed, `--resume` (repeated until it finishes)
//! leaves `metrics.jsonl` identical, step by step, to an uninterrupted run's, because
//! checkpoints are written atomically and every random draw is a function of
//! `(seed, stream, step)`.

use prh_core::train::checkpoint::{Checkpoint, estimated_size, space_needed};
use prh_tests::{bin, write_toy_corpus};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const STEPS: usize = 24;

/// `train --config configs/tiny.toml --out OUT` on the toy corpus: a 2-layer, 64-wide
/// encoder, `STEPS` steps, a checkpoint every 3 steps; `extra` `--set`s appended.
fn train_cmd(corpus: &Path, out: &Path, extra: &[String]) -> Command {
    let mut cmd = bin();
    cmd.arg("train")
        .arg("--config")
        .arg(prh_tests::configs().join("tiny.toml"))
        .arg("--out")
        .arg(out);
    let base = [
        "data.source=jsonl".to_string(),
        format!("data.path={}", corpus.display()),
        "data.max_groups=0".into(),
        format!("run.steps={STEPS}"),
        "run.log_every=1".into(),
        "run.checkpoint_every=3".into(),
        "views.batch_size=8".into(),
        "tokenizer.vocab_size=100".into(),
        "tokenizer.min_frequency=1".into(),
        "model.max_len=16".into(),
        "loss.slices=16".into(),
        "optim.warmup_steps=2".into(),
    ];
    for s in base.iter().chain(extra) {
        cmd.arg("--set").arg(s);
    }
    cmd
}

fn resume_cmd(run: &Path, extra: &[&str]) -> Command {
    let mut cmd = bin();
    cmd.arg("train").arg("--resume").arg(run);
    for s in extra {
        cmd.arg("--set").arg(s);
    }
    cmd
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn check(o: &Output) {
    assert!(o.status.success(), "failed:\n{}", stderr(o));
}

fn fails_with(o: &Output, needles: &[&str]) {
    let err = stderr(o);
    assert!(
        !o.status.success(),
        "expected a failure, got success:\n{err}"
    );
    assert!(
        !err.contains("panicked"),
        "panic instead of an error:\n{err}"
    );
    for n in needles {
        assert!(err.contains(n), "stderr lacks `{n}`:\n{err}");
    }
}

/// The deterministic fields of metrics.jsonl, one tuple per logged step (throughput
/// fields differ between runs and are left out).
type Row = (u64, String, String, String, String, String);
fn metrics(run: &Path) -> Vec<Row> {
    let text = std::fs::read_to_string(run.join("metrics.jsonl")).unwrap();
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let f = |k: &str| v[k].to_string();
            let step = v["step"].as_u64().unwrap();
            (
                step,
                f("loss"),
                f("invariance"),
                f("sigreg"),
                f("grad_norm"),
                f("lr"),
            )
        })
        .collect()
}

/// splitmix64: a seeded source for the kill moments, so a failure can be replayed.
struct Moments(u64);
impl Moments {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn lines(run: &Path) -> usize {
    std::fs::read_to_string(run.join("metrics.jsonl"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

/// When to kill: once `lines` metrics lines exist (or, with `None`, once the run has
/// saved its config), plus `delay_ms`, so the signal lands anywhere in a step: in the
/// forward/backward pass, the metrics write or a checkpoint write.
struct Kill {
    lines: Option<usize>,
    delay_ms: u64,
}

/// What a kill left behind.
struct Killed {
    /// The process was still running when SIGKILL was sent.
    interrupted: bool,
    /// Step of `checkpoints/latest.ckpt` after the kill (None: no checkpoint yet).
    checkpoint: Option<usize>,
}

fn run_and_kill(mut cmd: Command, run: &Path, kill: &Kill) -> Killed {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    loop {
        let ready = match kill.lines {
            Some(n) => lines(run) >= n,
            None => run.join("config.toml").exists(),
        };
        if ready || child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(kill.delay_ms));
    let interrupted = child.try_wait().unwrap().is_none();
    // std's Child::kill sends SIGKILL on Unix: no handler, no flush, no cleanup.
    child.kill().unwrap();
    child.wait().unwrap();
    let ck = run.join("checkpoints/latest.ckpt");
    let checkpoint = ck.exists().then(|| {
        // The checkpoint left by the kill must always verify (atomic write + CRC-32).
        Checkpoint::read(&ck)
            .unwrap_or_else(|e| panic!("kill left a corrupted checkpoint: {e}"))
            .meta
            .step
    });
    Killed {
        interrupted,
        checkpoint,
    }
}

#[test]
fn kill_9_at_random_moments_then_resume_matches_an_uninterrupted_run() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = write_toy_corpus(tmp.path());
    let full = tmp.path().join("full");
    check(&train_cmd(&corpus, &full, &[]).output().unwrap());
    let reference = metrics(&full);
    assert_eq!(reference.len(), STEPS);
    // WordPiece training breaks merge ties by hash-map order, so two processes may learn
    // different vocabularies; the killed runs share the reference run's tokenizer.
    let tok = vec![format!(
        "tokenizer.path={}",
        full.join("tokenizer.json").display()
    )];

    let mut rng = Moments(0x5EED_0009);
    // Scenario 0 kills before the first checkpoint (as soon as the config is saved); the
    // others at a random metrics line plus a random delay, and one kills its resume too.
    let mut plans: Vec<Vec<Kill>> = vec![vec![Kill {
        lines: None,
        delay_ms: 0,
    }]];
    for i in 0..4 {
        let mut kills = vec![Kill {
            lines: Some(1 + rng.below(STEPS as u64 - 6) as usize),
            delay_ms: rng.below(120),
        }];
        if i == 3 {
            let first = kills[0].lines.unwrap_or(0);
            kills.push(Kill {
                lines: Some(first + 3 + rng.below(4) as usize),
                delay_ms: rng.below(120),
            });
        }
        plans.push(kills);
    }

    let mut interrupted = 0;
    for (i, kills) in plans.iter().enumerate() {
        let run = tmp.path().join(format!("cut{i}"));
        for (j, kill) in kills.iter().enumerate() {
            let cmd = if j == 0 {
                train_cmd(&corpus, &run, &tok)
            } else {
                resume_cmd(&run, &[])
            };
            let k = run_and_kill(cmd, &run, kill);
            interrupted += usize::from(k.interrupted);
            println!(
                "scenario {i} kill {j}: after {:?} metrics lines + {} ms -> {}; latest.ckpt at step {:?}; {} metrics lines on disk",
                kill.lines,
                kill.delay_ms,
                if k.interrupted {
                    "killed"
                } else {
                    "had already finished"
                },
                k.checkpoint,
                lines(&run)
            );
            if i == 0 {
                assert!(
                    k.interrupted && k.checkpoint.is_none(),
                    "scenario 0 must die before its first checkpoint"
                );
            }
        }
        let out = resume_cmd(&run, &[]).output().unwrap();
        check(&out);
        if i == 0 {
            let err = stderr(&out);
            assert!(
                err.contains("no checkpoint yet") && err.contains("restarting from step 0"),
                "resume without a checkpoint must say what it does:\n{err}"
            );
        }
        let got = metrics(&run);
        assert_eq!(
            got.len(),
            STEPS,
            "scenario {i}: {} metrics lines",
            got.len()
        );
        for (a, b) in reference.iter().zip(&got) {
            assert_eq!(a, b, "scenario {i}: resumed run differs at step {}", a.0);
        }
        // The exported embeddings (final model) agree bit for bit as well.
        assert_eq!(
            std::fs::read(full.join("embeddings.npy")).unwrap(),
            std::fs::read(run.join("embeddings.npy")).unwrap(),
            "scenario {i}: final embeddings differ"
        );
    }
    println!(
        "{} kill scenarios, {interrupted} processes killed mid-run",
        plans.len()
    );
    // Each kill moment is within the run (at most STEPS - 5 metrics lines + 120 ms of a
    // ~3 s run), so all but a pathological scheduler hit a running process.
    assert!(
        interrupted >= plans.len(),
        "only {interrupted} kills hit a running process"
    );
}

/// The parameter count `train` reports ("..., 74256 params) on cpu into ...").
fn reported_params(err: &str) -> usize {
    err.split(" params)")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no parameter count in: {err}"))
}

/// A short finished run (6 steps, checkpoints at 3 and 6) for the corruption tests, and
/// its model's parameter count.
fn short_run(tmp: &Path, name: &str) -> (PathBuf, usize) {
    let corpus = write_toy_corpus(tmp);
    let run = tmp.join(name);
    let out = train_cmd(&corpus, &run, &["run.steps=6".into()])
        .output()
        .unwrap();
    check(&out);
    (run, reported_params(&stderr(&out)))
}

#[test]
fn corrupted_or_torn_checkpoints_are_refused_by_name_and_a_stale_temp_file_is_ignored() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, params) = short_run(tmp.path(), "run");
    let ck = run.join("checkpoints/latest.ckpt");
    let good = std::fs::read(&ck).unwrap();
    // The on-disk size is what the free-space preflight estimates: 12 bytes a parameter
    // (weights + 2 AdamW moments, f32) plus at most the 64 KiB header allowance.
    let (size, est) = (good.len() as u64, estimated_size(params));
    println!("{params} params: checkpoint {size} bytes, estimate {est}");
    assert!(size >= 12 * params as u64 && size <= est, "{size} vs {est}");

    let cases: Vec<(&str, Vec<u8>, Vec<&str>)> = vec![
        (
            "a flipped byte in the weights",
            {
                let mut b = good.clone();
                let mid = b.len() / 2;
                b[mid] ^= 0x10;
                b
            },
            vec!["latest.ckpt", "crc32", "corrupted"],
        ),
        (
            "a flipped byte in the last record byte",
            {
                let mut b = good.clone();
                let last = b.len() - 1;
                b[last] ^= 0x01;
                b
            },
            vec!["latest.ckpt", "crc32"],
        ),
        (
            "truncated to 90%",
            good[..good.len() * 9 / 10].to_vec(),
            vec!["latest.ckpt", "truncated"],
        ),
        (
            "truncated inside the header",
            good[..40].to_vec(),
            vec!["latest.ckpt", "header"],
        ),
        (
            "an empty file",
            Vec::new(),
            vec!["latest.ckpt", "not a prh checkpoint"],
        ),
        (
            "a wrong magic",
            {
                let mut b = good.clone();
                b[0] = b'X';
                b
            },
            vec!["latest.ckpt", "PRHCKPT1"],
        ),
    ];
    for (name, bytes, needles) in &cases {
        std::fs::write(&ck, bytes).unwrap();
        let out = resume_cmd(&run, &["run.steps=9"]).output().unwrap();
        println!("{name}: {}", stderr(&out).trim());
        fails_with(&out, needles);
    }
    // A kill during a checkpoint write leaves `latest.ckpt.tmp` half written next to the
    // intact previous checkpoint: resume uses the latter and overwrites the former.
    std::fs::write(&ck, &good).unwrap();
    std::fs::write(
        run.join("checkpoints/latest.ckpt.tmp"),
        &good[..good.len() / 3],
    )
    .unwrap();
    let out = resume_cmd(&run, &["run.steps=9"]).output().unwrap();
    check(&out);
    assert_eq!(metrics(&run).len(), 9);
    assert!(!run.join("checkpoints/latest.ckpt.tmp").exists());
    assert_eq!(Checkpoint::read(&ck).unwrap().meta.step, 9);
}

#[test]
fn nan_loss_and_collapse_stop_the_run_and_keep_the_last_good_checkpoint() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = write_toy_corpus(tmp.path());
    // A learning rate of 1e3 blows the weights up: on CPU the gradient norm turns NaN a
    // few steps in (0-based step 5 with burn-flex and prh's GELU), after the step-3
    // checkpoint.
    let run = tmp.path().join("nan");
    let out = train_cmd(&corpus, &run, &["optim.lr=1e3".into()])
        .output()
        .unwrap();
    fails_with(
        &out,
        &["is NaN", "training stopped", "last good checkpoint is kept"],
    );
    let err = stderr(&out);
    // "step S: ..." names the 0-based step that failed; S steps were completed.
    let failed: usize = err
        .split("numerical failure: step ")
        .nth(1)
        .and_then(|s| s.split(':').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no failing step in: {err}"));
    let ck = run.join("checkpoints/latest.ckpt");
    let kept = Checkpoint::read(&ck).unwrap();
    let logged = metrics(&run);
    println!(
        "NaN at step {failed}; kept checkpoint of step {}",
        kept.meta.step
    );
    // The kept checkpoint is the last periodic one before the failure (every 3 steps),
    // and no metrics line was written for the failed step.
    assert_eq!(kept.meta.step, failed / 3 * 3);
    assert!(
        kept.meta.step >= 3,
        "the guard fired before the first checkpoint"
    );
    assert_eq!(logged.len(), failed);
    for r in &logged {
        assert!(
            r.1.parse::<f64>().is_ok_and(f64::is_finite),
            "non-finite loss logged: {r:?}"
        );
    }
    // Resuming from it replays the same steps bit for bit on CPU, so the guard fires
    // again at the same step, and the kept checkpoint is left untouched.
    let before = std::fs::read(&ck).unwrap();
    let out = resume_cmd(&run, &[]).output().unwrap();
    fails_with(&out, &[&format!("step {failed}: "), "is NaN"]);
    assert_eq!(
        std::fs::read(&ck).unwrap(),
        before,
        "the kept checkpoint changed"
    );

    // Collapse: resume a healthy run with a collapse threshold no embedding can meet.
    let (run, _) = short_run(tmp.path(), "collapse");
    let ck = run.join("checkpoints/latest.ckpt");
    let before = std::fs::read(&ck).unwrap();
    let out = resume_cmd(&run, &["run.steps=9", "run.collapse_std=1e9"])
        .output()
        .unwrap();
    fails_with(
        &out,
        &[
            "step 6",
            "collapsed",
            "run.collapse_std",
            "last good checkpoint is kept",
        ],
    );
    assert_eq!(
        std::fs::read(&ck).unwrap(),
        before,
        "the last good checkpoint changed"
    );
}

#[test]
fn empty_config_file_is_an_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("empty.toml", ""),
        ("blank.toml", " \n\t\n# comment only\n"),
    ] {
        let cfg = tmp.path().join(name);
        std::fs::write(&cfg, text).unwrap();
        let out = bin()
            .args(["train", "--config"])
            .arg(&cfg)
            .arg("--out")
            .arg(tmp.path().join("r"))
            .output()
            .unwrap();
        fails_with(&out, &[name, "config file is empty"]);
        assert!(
            !tmp.path().join("r").exists(),
            "{name}: a run folder was created"
        );
    }
}

#[test]
fn run_folder_under_a_regular_file_fails_before_training() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = write_toy_corpus(tmp.path());
    let file = tmp.path().join("plain.txt");
    std::fs::write(&file, "not a folder").unwrap();
    let out = train_cmd(&corpus, &file.join("run"), &[]).output().unwrap();
    fails_with(&out, &["plain.txt/run", "run folder", "cannot be created"]);
    assert!(!stderr(&out).contains("step 1/"), "training started");
}

/// Mounts a tmpfs of `size` at `dir` (with `ro` if asked); `None` (with the reason
/// printed) where this process may not mount, e.g. an unprivileged container.
fn mount_tmpfs(dir: &Path, opts: &str) -> Option<Unmount> {
    std::fs::create_dir_all(dir).unwrap();
    let out = Command::new("mount")
        .args(["-t", "tmpfs", "-o", opts, "tmpfs"])
        .arg(dir)
        .output();
    match out {
        Ok(o) if o.status.success() => Some(Unmount(dir.to_path_buf())),
        Ok(o) => {
            println!(
                "SKIP: cannot mount a tmpfs ({opts}) here: {}",
                stderr(&o).trim()
            );
            None
        }
        Err(e) => {
            println!("SKIP: cannot run `mount`: {e}");
            None
        }
    }
}

/// Unmounts on drop, so a failing assertion does not leave a mount behind.
struct Unmount(PathBuf);
impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn full_or_read_only_file_system_fails_before_training_with_the_numbers() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = write_toy_corpus(tmp.path());

    // A 64 KiB file system: room for the folder and the probe file, not for checkpoints.
    let small = tmp.path().join("small");
    if let Some(_mount) = mount_tmpfs(&small, "size=64k") {
        let out = train_cmd(&corpus, &small.join("run"), &[])
            .output()
            .unwrap();
        let err = stderr(&out);
        println!("full disk: {}", err.trim());
        fails_with(
            &out,
            &["small/run", "free space", "bytes needed", "bytes available"],
        );
        assert!(!err.contains("step 1/"), "training started");
        // The numbers are the real ones: 3 checkpoints of the model, and at most 64 KiB.
        let number = |after: &str| -> u64 {
            err.split(after)
                .nth(1)
                .and_then(|s| s.split(' ').next())
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("no number after `{after}` in: {err}"))
        };
        let params = number("for ") as usize;
        assert_eq!(number("free space: "), space_needed(params));
        assert!(number("), ") <= 64 * 1024);
        // The probe file is removed again.
        assert!(!small.join("run/checkpoints/.prh-write-probe").exists());
    }

    // A read-only file system: root's permission bypass does not apply to `ro` mounts.
    let ro = tmp.path().join("ro");
    if let Some(_mount) = mount_tmpfs(&ro, "ro,size=64k") {
        let out = train_cmd(&corpus, &ro.join("run"), &[]).output().unwrap();
        println!("read-only: {}", stderr(&out).trim());
        fails_with(&out, &["ro/run", "run folder", "Read-only file system"]);
    }
}
