//! Integration tests for `prh-native train`, `embed`, `export` and `sigreg`: they drive
//! the real binary on a toy JSONL corpus written into a temporary folder (CPU, seconds).

use prh_tests::{bin, configs, write_toy_corpus};
use std::path::Path;
use std::process::Command;

/// `train` on the toy corpus with the tiny config; extra `--set`s appended.
fn train(corpus: &Path, out: &Path, sets: &[&str]) -> std::process::Output {
    train_command(corpus, out, sets).output().unwrap()
}

/// The command [`train`] runs, for callers that add flags or environment first.
fn train_command(corpus: &Path, out: &Path, sets: &[&str]) -> Command {
    let mut cmd = bin();
    cmd.arg("train")
        .arg("--config")
        .arg(configs().join("tiny.toml"))
        .arg("--out")
        .arg(out);
    let base = [
        "data.source=jsonl".to_string(),
        format!("data.path={}", corpus.display()),
        "data.max_groups=0".into(),
        "run.steps=8".into(),
        "run.log_every=1".into(),
        "run.checkpoint_every=4".into(),
        "views.batch_size=8".into(),
        "tokenizer.vocab_size=100".into(),
        "tokenizer.min_frequency=1".into(),
        "model.max_len=16".into(),
        "loss.slices=16".into(),
        "optim.warmup_steps=2".into(),
    ];
    for s in base.iter().map(String::as_str).chain(sets.iter().copied()) {
        cmd.arg("--set").arg(s);
    }
    cmd
}

fn check(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `prh-native train --resume RUN` (the run folder names its own config and checkpoint).
fn resume(run: &Path) -> std::process::Output {
    bin()
        .arg("train")
        .arg("--resume")
        .arg(run)
        .output()
        .unwrap()
}

/// The deterministic fields of metrics.jsonl (throughput differs between runs).
fn metrics(run: &Path) -> Vec<(u64, String, String, String, String)> {
    let text = std::fs::read_to_string(run.join("metrics.jsonl")).unwrap();
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let f = |k: &str| v[k].to_string();
            (
                v["step"].as_u64().unwrap(),
                f("loss"),
                f("invariance"),
                f("sigreg"),
                f("grad_norm"),
            )
        })
        .collect()
}

fn read_npy(p: &Path) -> (Vec<u64>, Vec<f32>) {
    let bytes = std::fs::read(p).unwrap();
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    let shape = npy.shape().to_vec();
    (shape, npy.into_vec::<f32>().unwrap())
}

#[test]
fn resume_continues_exactly_like_an_uninterrupted_run() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = write_toy_corpus(tmp.path());
    let (full, cut) = (tmp.path().join("full"), tmp.path().join("cut"));
    check(&train(&corpus, &full, &[]));
    // HF's WordPiece trainer breaks merge ties by hash-map order, so two processes may
    // train different vocabularies; the interrupted run reuses the first run's tokenizer.
    let tok = format!("tokenizer.path={}", full.join("tokenizer.json").display());
    check(&train(&corpus, &cut, &["run.stop_at=4", &tok]));
    assert_eq!(metrics(&cut).len(), 4);
    check(&resume(&cut));
    let (a, b) = (metrics(&full), metrics(&cut));
    assert_eq!(a.len(), 8);
    assert_eq!(a, b, "resumed metrics differ from the uninterrupted run");
    // Same final weights: the exported embeddings agree bit for bit.
    assert_eq!(
        read_npy(&full.join("embeddings.npy")),
        read_npy(&cut.join("embeddings.npy"))
    );
}

#[test]
fn run_folder_embed_and_export_agree() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = write_toy_corpus(tmp.path());
    let run = tmp.path().join("run");
    check(&train(&corpus, &run, &["run.objective=\"next-token\""]));
    for f in [
        "config.toml",
        "tokenizer.json",
        "spec.json",
        "metrics.jsonl",
        "checkpoints/latest.ckpt",
        "embeddings.npy",
    ] {
        assert!(run.join(f).exists(), "run folder lacks {f}");
    }
    // The run embedded the first text of each group (no eval split: training groups).
    let embed = |out: &Path| {
        check(
            &bin()
                .args(["embed", "--run"])
                .arg(&run)
                .arg("--texts")
                .arg(&corpus)
                .arg("--out")
                .arg(out)
                .output()
                .unwrap(),
        )
    };
    let emb = tmp.path().join("emb.npy");
    embed(&emb);
    let (shape, z) = read_npy(&emb);
    let (shape_run, z_run) = read_npy(&run.join("embeddings.npy"));
    assert_eq!(shape, vec![40, 64]);
    assert_eq!(shape, shape_run);
    let diff = z
        .iter()
        .zip(&z_run)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max);
    assert!(diff < 1e-5, "embed differs from the run's export by {diff}");
    // The Embedding Projector's pair: vectors.tsv (the shortest decimals that read back as
    // the same f32) and metadata.tsv with the texts in order.
    let vectors = tmp.path().join("vectors.tsv");
    embed(&vectors);
    let f = prh_core::formats::features::load(&vectors, None).unwrap();
    assert_eq!((f.n, f.d), (40, 64));
    assert!(f.data.iter().zip(&z).all(|(a, &b)| *a as f32 == b));
    let meta = std::fs::read_to_string(tmp.path().join("metadata.tsv")).unwrap();
    let first: Vec<String> = prh_core::text::corpus::read_jsonl(&corpus)
        .unwrap()
        .groups
        .iter()
        .map(|g| g.texts[0].clone())
        .collect();
    assert_eq!(meta.lines().collect::<Vec<_>>(), first);
    // The web bundle loads from bytes and embeds identically.
    let out = bin().args(["export", "--run"]).arg(&run).output().unwrap();
    check(&out);
    let bytes = std::fs::read(run.join("export/model.prh.safetensors")).unwrap();
    let device = Default::default();
    let b =
        prh_core::tasks::bundle::read_bundle::<prh_core::backend::Cpu>("bundle", &bytes, &device)
            .unwrap();
    assert!(b.spec.causal);
    let texts: Vec<String> = prh_core::text::corpus::read_jsonl(&corpus)
        .unwrap()
        .groups
        .iter()
        .map(|g| g.texts[0].clone())
        .collect();
    let zb =
        prh_core::tasks::text::embed_texts(&b.model, &b.spec, &b.tokenizer, &texts, 16, &device)
            .unwrap();
    let diff = zb
        .iter()
        .zip(&z)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max);
    assert!(diff < 1e-5, "bundle embeddings differ by {diff}");
}

#[test]
fn errors_are_clear() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = write_toy_corpus(tmp.path());
    let out = bin()
        .args(["train", "--device", "cuda", "--config"])
        .arg(configs().join("tiny.toml"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if !cfg!(feature = "cuda") {
        assert!(!out.status.success());
        assert!(
            err.contains("--device cuda") && err.contains("--features cuda"),
            "{err}"
        );
    }
    let out = train(&corpus, &tmp.path().join("r"), &["optim.lr=\"fast\""]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("tiny.toml") && err.contains("lr"),
        "{err}"
    );
    let bad = tmp.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"id\": 1, \"texts\": [\"ok\"]}\n{\"id\": 2}\n").unwrap();
    let out = train(&bad, &tmp.path().join("r2"), &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("bad.jsonl") && err.contains("line 2"),
        "{err}"
    );
}

/// Writes a float64 [rows, cols] .npy.
fn write_npy(p: &Path, rows: usize, cols: usize, v: &[f64]) {
    let bytes = prh_core::formats::features::npy_bytes(&[rows, cols], v).unwrap();
    std::fs::write(p, bytes).unwrap();
}

#[test]
fn sigreg_cli_matches_numpy_reference() {
    // Same data as the unit test; numpy (np.trapezoid over the symmetric grid
    // linspace(-3, 3, 33) of |ECF - phi|^2 phi, times N) gives slices
    // [0.39681996634159866, 3.179223100061163, 0.8477777151720576], mean below.
    let tmp = tempfile::tempdir().unwrap();
    let z: Vec<f64> = (0..18)
        .map(|k| ((k as f64) * 0.7).sin() * 1.3 + ((k * k) as f64 * 0.01).cos() * 0.4)
        .collect();
    let (emb, dirs) = (tmp.path().join("z.npy"), tmp.path().join("a.npy"));
    write_npy(&emb, 6, 3, &z);
    // Unnormalised on purpose: the CLI normalises direction rows.
    write_npy(&dirs, 3, 3, &[2.0, 0.0, 0.0, 0.6, 0.8, 0.0, 0.0, 1.2, -1.6]);
    let out = bin()
        .arg("sigreg")
        .arg(&emb)
        .arg("--directions")
        .arg(&dirs)
        .arg("--json")
        .output()
        .unwrap();
    check(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let expect = (0.39681996634159866 + 3.179223100061163 + 0.8477777151720576) / 3.0;
    assert!((v["sigreg"].as_f64().unwrap() - expect).abs() < 1e-6, "{v}");
    // Collapsed embeddings: closed form N * sum_j w_j (1 - exp(-t_j^2/2))^2 (N = 6).
    let c = tmp.path().join("c.npy");
    write_npy(&c, 6, 3, &[0.0; 18]);
    let out = bin()
        .arg("sigreg")
        .arg(&c)
        .args(["--slices", "8", "--json"])
        .output()
        .unwrap();
    check(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let q = prh_core::train::sigreg::Quadrature::new(3.0, 17).unwrap();
    let closed: f64 = 6.0
        * q.t
            .iter()
            .zip(&q.w)
            .map(|(t, w)| w * (1.0 - (-0.5 * t * t).exp()).powi(2))
            .sum::<f64>();
    assert!(
        (v["sigreg"].as_f64().unwrap() - closed).abs() < 1e-9,
        "{v} vs {closed}"
    );
}

#[test]
fn periodic_evaluation_against_a_frozen_target_keeps_the_best_checkpoint() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = write_toy_corpus(tmp.path());
    // Frozen target: the one-hot state (colour, animal, action) of each group, in order.
    let mut target = Vec::new();
    for c in 0..5 {
        for a in 0..4 {
            for v in 0..2 {
                let mut row = vec![0.0; 11];
                (row[c], row[5 + a], row[9 + v]) = (1.0, 1.0, 1.0);
                target.extend(row);
            }
        }
    }
    let tpath = tmp.path().join("target.npy");
    write_npy(&tpath, 40, 11, &target);
    let run = tmp.path().join("run");
    let t = format!("eval.target={}", tpath.display());
    check(&train(
        &corpus,
        &run,
        &[&t, "eval.max_groups=40", "eval.k=5", "run.eval_every=4"],
    ));
    let text = std::fs::read_to_string(run.join("metrics.jsonl")).unwrap();
    let evals: Vec<(u64, f64)> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v.get("eval").is_some())
        .map(|v| {
            (
                v["step"].as_u64().unwrap(),
                v["eval"]["mutual_knn"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(evals.iter().map(|e| e.0).collect::<Vec<_>>(), vec![4, 8]);
    assert!(
        evals.iter().all(|e| (0.0..=1.0).contains(&e.1)),
        "{evals:?}"
    );
    let best =
        prh_core::train::checkpoint::Checkpoint::read(&run.join("checkpoints/best.ckpt")).unwrap();
    let max = evals.iter().map(|e| e.1).fold(f64::MIN, f64::max);
    assert_eq!(best.meta.best, Some(max));
}

/// Without a target, a held-out set whose groups have two texts is scored caption vs
/// caption (no second model): `pair_*` metrics at each evaluation, and the best checkpoint
/// follows `pair_mutual_knn`; `eval.pairs = false` turns it off.
#[test]
fn heldout_pairs_are_scored_without_a_second_model() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = write_toy_corpus(tmp.path());
    let run = tmp.path().join("run");
    check(&train(
        &corpus,
        &run,
        &["eval.max_groups=40", "eval.k=5", "run.eval_every=4"],
    ));
    let text = std::fs::read_to_string(run.join("metrics.jsonl")).unwrap();
    let evals: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter_map(|v| v.get("eval").cloned())
        .collect();
    assert_eq!(evals.len(), 2, "steps 4 and 8");
    for e in &evals {
        for key in ["pair_mutual_knn", "pair_cka", "pair_r1", "pair_r5"] {
            let x = e[key].as_f64().unwrap();
            assert!((0.0..=1.0 + 1e-9).contains(&x), "{key} = {x}");
        }
        assert!(
            e.get("mutual_knn").is_none(),
            "no target, no cross-model score"
        );
        // R@5 counts R@1's hits and more.
        assert!(e["pair_r5"].as_f64() >= e["pair_r1"].as_f64());
    }
    let best =
        prh_core::train::checkpoint::Checkpoint::read(&run.join("checkpoints/best.ckpt")).unwrap();
    let max = evals
        .iter()
        .map(|e| e["pair_mutual_knn"].as_f64().unwrap())
        .fold(f64::MIN, f64::max);
    assert_eq!(best.meta.best, Some(max));

    let off = tmp.path().join("off");
    check(&train(
        &corpus,
        &off,
        &["eval.pairs=false", "run.eval_every=4"],
    ));
    let text = std::fs::read_to_string(off.join("metrics.jsonl")).unwrap();
    assert!(
        !text.contains("\"eval\""),
        "eval.pairs = false and no target: no evaluation"
    );
}

/// `data.source = "shards"` through the binary: a plain and a gzip shard stream through
/// training, and a run stopped at step 4 and resumed equals the uninterrupted one.
#[test]
fn sharded_corpus_streams_and_resumes_exactly() {
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let corpus = write_toy_corpus(tmp.path());
    let text = std::fs::read_to_string(&corpus).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (a, b) = lines.split_at(lines.len() / 2);
    std::fs::write(tmp.path().join("part-0.jsonl"), a.join("\n") + "\n").unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all((b.join("\n") + "\n").as_bytes()).unwrap();
    std::fs::write(tmp.path().join("part-1.jsonl.gz"), gz.finish().unwrap()).unwrap();
    let pattern = format!("data.path={}/part-*", tmp.path().display());
    let sets = [
        "data.source=shards",
        pattern.as_str(),
        "data.shuffle_buffer=7",
    ];
    let (full, cut) = (tmp.path().join("full"), tmp.path().join("cut"));
    check(&train(&corpus, &full, &sets));
    let tok = format!("tokenizer.path={}", full.join("tokenizer.json").display());
    let mut cut_sets = sets.to_vec();
    cut_sets.extend(["run.stop_at=4", tok.as_str()]);
    check(&train(&corpus, &cut, &cut_sets));
    check(&resume(&cut));
    let (m_full, m_cut) = (metrics(&full), metrics(&cut));
    assert_eq!(m_full.len(), 8);
    assert!(
        m_full
            .iter()
            .all(|m| m.1.parse::<f64>().unwrap().is_finite())
    );
    assert_eq!(
        m_full, m_cut,
        "resumed sharded run differs from the uninterrupted one"
    );
}

/// `--set run.data_parallel=2`: two replicas (one CPU device) split each batch of 8; the
/// run follows the single-device run's losses to float tolerance (relative 1e-4, the
/// shards pad and sum in another order), writes its run folder, and resumes exactly.
/// Replica counts that are 0 or do not divide the batch are refused naming the field.
#[test]
fn data_parallel_trains_and_resumes_exactly_through_the_cli() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = write_toy_corpus(tmp.path());
    let (one, full, cut) = (
        tmp.path().join("one"),
        tmp.path().join("dp"),
        tmp.path().join("dp-cut"),
    );
    check(&train(&corpus, &one, &[]));
    let tok = format!("tokenizer.path={}", one.join("tokenizer.json").display());
    let out = train(&corpus, &full, &["run.data_parallel=2", &tok]);
    check(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("data-parallel: 2 replicas"), "{err}");
    let config = std::fs::read_to_string(full.join("config.toml")).unwrap();
    assert!(config.contains("data_parallel = 2"), "{config}");
    assert!(full.join("embeddings.npy").exists());
    let (a, b) = (metrics(&one), metrics(&full));
    assert_eq!(a.len(), 8);
    for (x, y) in a.iter().zip(&b) {
        let (lx, ly): (f64, f64) = (x.1.parse().unwrap(), y.1.parse().unwrap());
        assert!(
            (lx - ly).abs() < 1e-4 * lx.abs(),
            "step {}: loss {lx} vs {ly}",
            x.0
        );
    }
    check(&train(
        &corpus,
        &cut,
        &["run.data_parallel=2", "run.stop_at=4", &tok],
    ));
    check(&resume(&cut));
    assert_eq!(metrics(&cut), b, "resumed data-parallel run differs");
    for (set, want) in [
        ("run.data_parallel=3", "do not divide views.batch_size = 8"),
        ("run.data_parallel=0", "expected at least 1"),
    ] {
        let out = train(&corpus, &tmp.path().join("bad-dp"), &[set]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success()
                && err.contains("tiny.toml")
                && err.contains("run.data_parallel")
                && err.contains(want),
            "{err}"
        );
    }
}

/// Issue 22.2: off a terminal (as here: stderr is a pipe) training prints one status line
/// per `PRH_PROGRESS_SECS` (0: every step) naming the run, step, loss, rates and ETA, on
/// stderr only; `--quiet` prints none of them.
#[test]
fn progress_lines_off_a_terminal_and_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = write_toy_corpus(dir.path());
    let run = |name: &str, quiet: bool| {
        let mut cmd = train_command(&corpus, &dir.path().join(name), &["run.steps=4"]);
        cmd.env("PRH_PROGRESS_SECS", "0");
        if quiet {
            cmd.arg("--quiet");
        }
        let out = cmd.output().unwrap();
        check(&out);
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (stdout, stderr) = run("loud", false);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("[loud] step "))
        .collect();
    assert_eq!(lines.len(), 4, "{stderr}");
    for l in &lines {
        assert!(
            l.contains(" loss ")
                && l.contains("steps/s")
                && l.contains("samples/s")
                && l.contains("eta "),
            "{l}"
        );
    }
    assert!(lines[3].contains("step 4/4"), "{}", lines[3]);
    assert!(
        !stdout.contains("step "),
        "progress leaked to stdout: {stdout}"
    );
    let (_, stderr) = run("hush", true);
    assert!(
        !stderr.contains("] step "),
        "--quiet printed progress: {stderr}"
    );
}
