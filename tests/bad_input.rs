//! Bad input at every entry point of the real binary (issue 9, part 1): a table of
//! malformed, truncated, mismatched and missing files, configs, corpora and checkpoints.
//! Each case must exit non-zero, must not panic, and stderr must name the file (or key)
//! and say what was expected.
//!
//! Every case is its own test (written by `cases!`), named after what it feeds which
//! command, e.g. `metrics_truncated_npy` or `embed_truncated_checkpoint`: a failure names
//! the case it broke, and `cargo test -p prh-tests --test bad_input embed_` runs a subset.
//! The files they read are written once per test process ([`Files`]); the checkpoint cases
//! share one real tiny run ([`real_run`]) and corrupt copies of it of their own
//! ([`variant`]).

use prh_tests::{bin, configs};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One `#[test]` per case: `name(f) { ARGS } => [NEEDLES];` runs `prh-native ARGS` (a block
/// giving a `Vec<String>`; `f` is the shared [`Files`]) and checks with [`check`] that it exits
/// non-zero without a panic and that stderr contains every needle.
macro_rules! cases {
    ($($(#[$doc:meta])* $name:ident($f:ident) $args:block => [$($needle:expr),+ $(,)?];)+) => {
        $(
            $(#[$doc])*
            #[test]
            fn $name() {
                let $f = Files::get();
                let _done = Done;
                check($args, &[$($needle),+]);
            }
        )+
        /// How many cases `cases!` wrote (the last one to finish removes the files).
        const CASES: usize = [$(stringify!($name)),+].len();
    };
}

/// Runs one case: `prh-native args` must exit non-zero, must not panic, and stderr must
/// contain every needle; the assertion lists everything that went wrong, and stderr.
fn check(args: Vec<String>, needles: &[&str]) {
    let o = run_bin(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    let mut why = Vec::new();
    if o.status.success() {
        why.push("exited 0".to_string());
    }
    if err.contains("panicked") {
        why.push("panicked".to_string());
    }
    for n in needles {
        if !err.contains(n) {
            why.push(format!("stderr lacks {n:?}"));
        }
    }
    assert!(
        why.is_empty(),
        "{}\n  args: {args:?}\n  stderr: {}",
        why.join(", "),
        err.trim()
    );
}

/// Counts finished cases; the last one removes the shared files (a run of only some
/// cases leaves them under cargo's target/tmp, which is what that folder is for).
struct Done;

impl Drop for Done {
    fn drop(&mut self) {
        static FINISHED: AtomicUsize = AtomicUsize::new(0);
        if FINISHED.fetch_add(1, Ordering::SeqCst) + 1 == CASES {
            let _ = std::fs::remove_dir_all(&Files::get().dir);
        }
    }
}

/// The bad (and good) files the cases read, written once per test process into one
/// folder, which no case writes into (runs go to `runs/NAME`, one folder per case).
struct Files {
    dir: PathBuf,
    /// `good.npy`: [30, 4] float64.
    good: String,
    /// `corpus.jsonl`: 12 groups of 2 paraphrases.
    corpus: PathBuf,
    /// configs/tiny.toml.
    tiny: PathBuf,
}

impl Files {
    fn get() -> &'static Self {
        static FILES: OnceLock<Files> = OnceLock::new();
        FILES.get_or_init(Self::write)
    }

    /// `dir/name` as an argument.
    fn p(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// A run folder of its own for a case (`runs/name`).
    fn out(&self, name: &str) -> PathBuf {
        self.dir.join("runs").join(name)
    }

    /// `train` with the config `dir/config`.
    fn train(&self, config: &str, corpus: &Path, out: &str, sets: &[&str]) -> Vec<String> {
        train_args(&self.path(config), corpus, &self.out(out), sets)
    }

    /// `train` with configs/tiny.toml.
    fn tiny(&self, corpus: &Path, out: &str, sets: &[&str]) -> Vec<String> {
        train_args(&self.tiny, corpus, &self.out(out), sets)
    }

    /// `embed --run RUN --texts texts.txt --out emb.npy` (texts at [4], output at [6]).
    fn embed(&self, run: &str) -> Vec<String> {
        let texts = self.p("texts.txt");
        let out = self.p("emb.npy");
        args(&["embed", "--run", run, "--texts", &texts, "--out", &out])
    }

    fn export(&self, run: &str) -> Vec<String> {
        args(&["export", "--run", run])
    }

    fn resume(&self, run: &str) -> Vec<String> {
        args(&["train", "--resume", run])
    }

    fn write() -> Self {
        let tmp = tempfile::Builder::new()
            .prefix("bad_input-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        let dir = tmp.keep();
        let write = |name: &str, bytes: &[u8]| std::fs::write(dir.join(name), bytes).unwrap();

        // --- feature files ---------------------------------------------------------------
        let good_bytes = f64_npy(&[30, 4], &values(30, 4, 0.0));
        write("good.npy", &good_bytes);
        write("good2.npy", &f64_npy(&[30, 4], &values(30, 4, 1.0)));
        write("trunc.npy", &good_bytes[..good_bytes.len() - 17]);
        write("header_only.npy", &good_bytes[..40]);
        write(
            "bad_header.npy",
            b"\x93NUMPY\x01\x00\x20\x00{'descr': <f8, shape: ((, }         \n",
        );
        write("int.npy", &npy_raw("<i8", &[30, 4], &[0u8; 30 * 4 * 8]));
        write(
            "complex.npy",
            &npy_raw("<c16", &[30, 4], &[0u8; 30 * 4 * 16]),
        );
        write("rank1.npy", &f64_npy(&[120], &values(120, 1, 0.0)));
        write("rank4.npy", &f64_npy(&[30, 1, 2, 2], &values(30, 4, 0.0)));
        write("short.npy", &f64_npy(&[29, 4], &values(29, 4, 0.0)));
        let mut nan = values(30, 4, 2.0);
        nan[7 * 4 + 2] = f64::NAN;
        write("nan.npy", &f64_npy(&[30, 4], &nan));
        let mut inf = values(30, 4, 3.0);
        inf[11 * 4] = f64::INFINITY;
        write("inf.npy", &f64_npy(&[30, 4], &inf));
        write("empty.npy", b"");
        write("junk.bin", b"hello world, not an array");
        write("zero_rows.npy", &f64_npy(&[0, 4], &[]));
        // npz: two arrays (one must be named), truncated zip, a zip whose member is not .npy.
        write_npz(&dir.join("two.npz"), &[("x", 30, 4), ("y", 30, 4)]);
        let npz = std::fs::read(dir.join("two.npz")).unwrap();
        write("trunc.npz", &npz[..npz.len() / 2]);
        // A zip whose member data is corrupted: flip bytes in the middle of the archive
        // (inside the first member's deflate stream, or its stored data).
        let mut bad_member = npz.clone();
        let mid = npz.len() / 4;
        for b in &mut bad_member[mid..mid + 16] {
            *b ^= 0x5a;
        }
        write("bad_member.npz", &bad_member);
        // safetensors: good one, truncated data, header length past the file, header not
        // JSON, integer dtype, rank 1.
        let st_data = f32_bytes(&values(30, 4, 0.0));
        let st_header = format!(
            r#"{{"emb":{{"dtype":"F32","shape":[30,4],"data_offsets":[0,{}]}}}}"#,
            st_data.len()
        );
        let st = safetensors_raw(&st_header, &st_data);
        write("good.safetensors", &st);
        write("trunc.safetensors", &st[..st.len() - 10]);
        let mut huge = st.clone();
        huge[..8].copy_from_slice(&(u64::MAX / 2).to_le_bytes());
        write("huge_header.safetensors", &huge);
        write(
            "notjson.safetensors",
            &safetensors_raw("{\"emb\": [1, 2,         ", &st_data),
        );
        write(
            "int.safetensors",
            &safetensors_raw(
                &format!(
                    r#"{{"emb":{{"dtype":"I32","shape":[30,4],"data_offsets":[0,{}]}}}}"#,
                    st_data.len()
                ),
                &st_data,
            ),
        );
        write(
            "rank1.safetensors",
            &safetensors_raw(
                &format!(
                    r#"{{"emb":{{"dtype":"F32","shape":[120],"data_offsets":[0,{}]}}}}"#,
                    st_data.len()
                ),
                &st_data,
            ),
        );
        // Pi for spectral: non-square, negative, NaN, truncated.
        write("pi_rect.npy", &f64_npy(&[3, 4], &[0.1; 12]));
        write("pi_neg.npy", &f64_npy(&[2, 2], &[0.5, -0.1, -0.1, 0.7]));
        write(
            "pi_nan.npy",
            &f64_npy(&[2, 2], &[0.25, f64::NAN, 0.25, 0.25]),
        );
        write("pi_int.npy", &npy_raw("<i8", &[2, 2], &[0u8; 32]));
        let pi = f64_npy(&[2, 2], &[0.25; 4]);
        write("pi_trunc.npy", &pi[..pi.len() - 5]);

        // --- training configs and corpora ------------------------------------------------
        let tiny = std::fs::read_to_string(configs().join("tiny.toml")).unwrap();
        write("corpus.jsonl", corpus_text().as_bytes());
        write(
            "unknown_key.toml",
            tiny.replace("lr = 5e-4", "lrr = 5e-4").as_bytes(),
        );
        write(
            "unknown_table.toml",
            format!("{tiny}\n[optimiser]\nlr = 1.0\n").as_bytes(),
        );
        write(
            "wrong_type.toml",
            tiny.replace("grad_clip = 1.0", "grad_clip = \"one\"")
                .as_bytes(),
        );
        write("not_toml.toml", b"[run\nsteps = ");
        write("empty.toml", b"");
        write("blank.toml", b"  \n\t\n# only a comment\n");
        write(
            "broken.jsonl",
            b"{\"id\": \"a\", \"texts\": [\"x y\", \"y x\"]}\n{\"id\": \"b\", \"texts\": [\n",
        );
        write(
            "no_texts.jsonl",
            b"{\"id\": \"a\", \"texts\": [\"x y\", \"y x\"]}\n{\"id\": 2}\n",
        );
        write("empty.jsonl", b"");
        write("blank.jsonl", b"\n\n   \n");
        let singles: String = corpus_text()
            .lines()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["texts"].as_array_mut().unwrap().truncate(1);
                format!("{v}\n")
            })
            .collect();
        write("singles.jsonl", singles.as_bytes());
        // --- texts for `embed` -------------------------------------------------------------
        write("texts.txt", b"a red dog runs\nthe cat is blue\n");

        Self {
            good: dir.join("good.npy").display().to_string(),
            corpus: dir.join("corpus.jsonl"),
            tiny: configs().join("tiny.toml"),
            dir,
        }
    }
}

/// `&str` arguments as the owned ones `check` takes.
fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

/// The checkpoint cases' real run: `train` with tiny.toml on the corpus (2 steps), once
/// per process; its latest checkpoint's bytes.
struct RealRun {
    dir: PathBuf,
    ckpt: Vec<u8>,
}

fn real_run() -> &'static RealRun {
    static RUN: OnceLock<Result<RealRun, String>> = OnceLock::new();
    let run = RUN.get_or_init(|| {
        let f = Files::get();
        // No evaluation (so no best.ckpt): the cases corrupt latest.ckpt, which the
        // commands then read.
        let o = run_bin(&f.tiny(&f.corpus, "real", &["eval.pairs=false"]));
        if !o.status.success() {
            return Err(format!(
                "the tiny run for the checkpoint cases failed:\n{}",
                String::from_utf8_lossy(&o.stderr)
            ));
        }
        let dir = f.out("real");
        let ckpt = std::fs::read(dir.join("checkpoints/latest.ckpt")).unwrap();
        Ok(RealRun { dir, ckpt })
    });
    run.as_ref().unwrap_or_else(|e| panic!("{e}"))
}

/// The real run's folder as an argument.
fn real() -> String {
    real_run().dir.display().to_string()
}

/// A copy of the real run, `variants/N/name` (a folder of this case's own), edited by
/// `edit(folder, latest checkpoint bytes)`.
fn variant(name: &str, edit: fn(&Path, &[u8])) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let run = real_run();
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    let d = Files::get()
        .dir
        .join("variants")
        .join(n.to_string())
        .join(name);
    copy_run(&run.dir, &d);
    edit(&d, &run.ckpt);
    d.display().to_string()
}

// --- the run-folder corruptions the checkpoint cases use ------------------------------------

fn no_best(d: &Path) {
    let _ = std::fs::remove_file(d.join("checkpoints/best.ckpt"));
}

fn truncated(d: &Path, ck: &[u8]) {
    no_best(d);
    std::fs::write(d.join("checkpoints/latest.ckpt"), &ck[..ck.len() * 2 / 3]).unwrap();
}

fn header_cut(d: &Path, ck: &[u8]) {
    no_best(d);
    std::fs::write(d.join("checkpoints/latest.ckpt"), &ck[..20]).unwrap();
}

fn flipped(d: &Path, ck: &[u8]) {
    no_best(d);
    let mut c = ck.to_vec();
    let n = c.len();
    c[n - 100] ^= 0xff;
    std::fs::write(d.join("checkpoints/latest.ckpt"), c).unwrap();
}

fn not_ckpt(d: &Path, _: &[u8]) {
    no_best(d);
    std::fs::write(d.join("checkpoints/latest.ckpt"), b"PK\x03\x04 some zip").unwrap();
}

fn empty_ck(d: &Path, _: &[u8]) {
    no_best(d);
    std::fs::write(d.join("checkpoints/latest.ckpt"), b"").unwrap();
}

/// A checkpoint of another model config: the spec says 3 layers.
fn other_model(d: &Path, _: &[u8]) {
    let s = std::fs::read_to_string(d.join("spec.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&s).unwrap();
    v["layers"] = serde_json::json!(3);
    std::fs::write(d.join("spec.json"), v.to_string()).unwrap();
}

/// A checkpoint of another model config: the spec says width 96.
fn other_width(d: &Path, _: &[u8]) {
    let s = std::fs::read_to_string(d.join("spec.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&s).unwrap();
    v["d_model"] = serde_json::json!(96);
    v["heads"] = serde_json::json!(4);
    std::fs::write(d.join("spec.json"), v.to_string()).unwrap();
}

/// The run folder's config asks for another model than the checkpoint holds.
fn other_cfg(d: &Path, _: &[u8]) {
    let c = std::fs::read_to_string(d.join("config.toml")).unwrap();
    assert!(c.contains("max_len = 8"), "{c}");
    std::fs::write(
        d.join("config.toml"),
        c.replace("max_len = 8", "max_len = 12"),
    )
    .unwrap();
}

fn bad_spec(d: &Path, _: &[u8]) {
    std::fs::write(d.join("spec.json"), b"{\"vocab\": 10").unwrap();
}

fn bad_tok(d: &Path, _: &[u8]) {
    std::fs::write(d.join("tokenizer.json"), b"{\"model\": 3}").unwrap();
}

/// A checkpoint from a future format version (header JSON `"version":1` -> 7).
fn future(d: &Path, ck: &[u8]) {
    no_best(d);
    let mut c = ck.to_vec();
    let at = c
        .windows(10)
        .position(|w| w == b"\"version\":")
        .expect("the header holds the version");
    c[at + 10] = b'7';
    std::fs::write(d.join("checkpoints/latest.ckpt"), c).unwrap();
}

cases! {
    // --- feature files -------------------------------------------------------------------

    /// metrics: truncated npy
    metrics_truncated_npy(f) { args(&["metrics", &f.good, &f.p("trunc.npy")]) }
        => ["trunc.npy", "truncated"];
    /// metrics: npy header only
    metrics_npy_header_only(f) { args(&["metrics", &f.good, &f.p("header_only.npy")]) }
        => ["header_only.npy"];
    /// metrics: malformed npy header
    metrics_malformed_npy_header(f) { args(&["metrics", &f.p("bad_header.npy"), &f.good]) }
        => ["bad_header.npy", "malformed"];
    /// metrics: int64 npy
    metrics_int64_npy(f) { args(&["metrics", &f.good, &f.p("int.npy")]) }
        => ["int.npy", "expected float"];
    /// metrics: complex npy
    metrics_complex_npy(f) { args(&["metrics", &f.good, &f.p("complex.npy")]) }
        => ["complex.npy", "expected float"];
    /// metrics: rank-1 npy
    metrics_rank1_npy(f) { args(&["metrics", &f.good, &f.p("rank1.npy")]) }
        => ["rank1.npy", "expected [N, D]"];
    /// metrics: rank-4 npy
    metrics_rank4_npy(f) { args(&["metrics", &f.good, &f.p("rank4.npy")]) }
        => ["rank4.npy", "expected [N, D]"];
    /// metrics: N mismatch
    metrics_n_mismatch(f) { args(&["metrics", &f.good, &f.p("short.npy")]) }
        => ["short.npy", "N = 29", "N = 30"];
    /// metrics: NaN
    metrics_nan(f) { args(&["metrics", &f.good, &f.p("nan.npy")]) }
        => ["nan.npy", "row 7", "NaN"];
    /// metrics: Inf
    metrics_inf(f) { args(&["metrics", &f.p("inf.npy"), &f.good]) }
        => ["inf.npy", "row 11"];
    /// metrics: empty file
    metrics_empty_file(f) { args(&["metrics", &f.good, &f.p("empty.npy")]) }
        => ["empty.npy", "empty"];
    /// metrics: zero rows
    metrics_zero_rows(f) { args(&["metrics", &f.good, &f.p("zero_rows.npy")]) }
        => ["zero_rows.npy"];
    /// metrics: unknown format
    metrics_unknown_format(f) { args(&["metrics", &f.p("junk.bin"), &f.good]) }
        => ["junk.bin", "expected .npy"];
    /// metrics: missing file
    metrics_missing_file(f) { args(&["metrics", &f.p("missing.npy"), &f.good]) }
        => ["missing.npy"];
    /// metrics: npz needs --array
    metrics_npz_needs_array(f) { args(&["metrics", &f.good, &f.p("two.npz")]) }
        => ["two.npz", "2 arrays"];
    /// metrics: npz unknown array
    metrics_npz_unknown_array(f) {
        args(&["metrics", &f.good, &f.p("two.npz"), "--array-b", "z"])
    } => ["two.npz", "z"];
    /// metrics: truncated npz
    metrics_truncated_npz(f) { args(&["metrics", &f.good, &f.p("trunc.npz")]) }
        => ["trunc.npz"];
    /// metrics: npz member not npy
    metrics_npz_member_not_npy(f) {
        args(&["metrics", &f.good, &f.p("bad_member.npz"), "--array-b", "x"])
    } => ["bad_member.npz"];
    /// metrics: truncated safetensors
    metrics_truncated_safetensors(f) {
        args(&["metrics", &f.good, &f.p("trunc.safetensors")])
    } => ["trunc.safetensors"];
    /// metrics: safetensors header length past the end
    metrics_safetensors_header_length_past_the_end(f) {
        args(&["metrics", &f.good, &f.p("huge_header.safetensors")])
    } => ["huge_header.safetensors"];
    /// metrics: safetensors header not JSON
    metrics_safetensors_header_not_json(f) {
        args(&["metrics", &f.good, &f.p("notjson.safetensors")])
    } => ["notjson.safetensors"];
    /// metrics: int safetensors
    metrics_int_safetensors(f) { args(&["metrics", &f.good, &f.p("int.safetensors")]) }
        => ["int.safetensors", "I32"];
    /// metrics: rank-1 safetensors
    metrics_rank1_safetensors(f) { args(&["metrics", &f.good, &f.p("rank1.safetensors")]) }
        => ["rank1.safetensors", "expected [N, D]"];
    /// metrics: k >= N
    metrics_k_at_least_n(f) { args(&["metrics", &f.good, &f.p("good2.npy"), "--k", "30"]) }
        => ["k"];
    /// align: N mismatch
    align_n_mismatch(f) { args(&["align", &f.good, &f.p("short.npy"), "--fit", "10"]) }
        => ["short.npy", "N = 29"];
    /// align: fit files N mismatch
    align_fit_files_n_mismatch(f) {
        args(&[
            "align",
            &f.good,
            &f.p("good2.npy"),
            "--fit-a",
            &f.good,
            "--fit-b",
            &f.p("short.npy"),
        ])
    } => ["short.npy", "--fit-a and --fit-b"];
    /// align: --fit too large
    align_fit_too_large(f) { args(&["align", &f.good, &f.p("good2.npy"), "--fit", "30"]) }
        => ["--fit 30", "N < 30"];
    /// align: layer out of range
    align_layer_out_of_range(f) {
        args(&["align", &f.good, &f.p("good2.npy"), "--fit", "10", "--layer-a", "3"])
    } => ["good.npy", "layer 3"];
    /// align: NaN
    align_nan(f) { args(&["align", &f.p("nan.npy"), &f.good, "--fit", "10"]) }
        => ["nan.npy", "NaN"];
    /// match: empty file
    match_empty_file(f) { args(&["match", &f.good, &f.p("empty.npy")]) }
        => ["empty.npy", "empty"];
    /// match: truncated safetensors
    match_truncated_safetensors(f) { args(&["match", &f.p("trunc.safetensors"), &f.good]) }
        => ["trunc.safetensors"];
    /// match: Inf
    match_inf(f) { args(&["match", &f.good, &f.p("inf.npy")]) }
        => ["inf.npy", "row 11"];
    /// spectral: non-square Pi
    spectral_non_square_pi(f) { args(&["spectral", "--pi", &f.p("pi_rect.npy")]) }
        => ["pi_rect.npy", "square"];
    /// spectral: negative Pi
    spectral_negative_pi(f) { args(&["spectral", "--pi", &f.p("pi_neg.npy")]) }
        => ["pi_neg.npy", "Pi[0, 1]", ">= 0"];
    /// spectral: NaN Pi
    spectral_nan_pi(f) { args(&["spectral", "--pi", &f.p("pi_nan.npy")]) }
        => ["pi_nan.npy"];
    /// spectral: truncated Pi
    spectral_truncated_pi(f) { args(&["spectral", "--pi", &f.p("pi_trunc.npy")]) }
        => ["pi_trunc.npy"];
    /// spectral: missing Pi
    spectral_missing_pi(f) { args(&["spectral", "--pi", &f.p("nope.npy")]) }
        => ["nope.npy"];
    /// spectral: int64 Pi
    spectral_int64_pi(f) { args(&["spectral", "--pi", &f.p("pi_int.npy")]) }
        => ["pi_int.npy", "expected float"];
    /// align: rotation output under a file
    align_rotation_output_under_a_file(f) {
        args(&[
            "align",
            &f.good,
            &f.p("good2.npy"),
            "--fit",
            "10",
            "--save-rotation",
            &format!("{}/q.npy", f.good),
        ])
    } => ["good.npy/q.npy"];
    /// sigreg: truncated
    sigreg_truncated(f) { args(&["sigreg", &f.p("trunc.npy")]) }
        => ["trunc.npy", "truncated"];
    /// sigreg: NaN
    sigreg_nan(f) { args(&["sigreg", &f.p("nan.npy")]) }
        => ["nan.npy", "NaN"];
    /// sigreg: directions of the wrong width
    sigreg_directions_of_the_wrong_width(f) {
        args(&["sigreg", &f.good, "--directions", &f.p("pi_neg.npy")])
    } => ["pi_neg.npy", "[M, 4]"];
    /// sigreg: layer out of range
    sigreg_layer_out_of_range(f) { args(&["sigreg", &f.good, "--layer", "2"]) }
        => ["--layer 2", "good.npy"];

    // --- training configs and corpora ----------------------------------------------------

    /// train: unknown config key
    train_unknown_config_key(f) { f.train("unknown_key.toml", &f.corpus, "k", &[]) }
        => ["unknown_key.toml", "lrr", "did you mean `lr`?"];
    /// train: unknown config table
    train_unknown_config_table(f) { f.train("unknown_table.toml", &f.corpus, "k2", &[]) }
        => ["unknown_table.toml", "optimiser", "did you mean `optim`?"];
    /// train: wrong type
    train_wrong_type(f) { f.train("wrong_type.toml", &f.corpus, "w", &[]) }
        => ["wrong_type.toml", "grad_clip", "string"];
    /// train: not TOML
    train_not_toml(f) { f.train("not_toml.toml", &f.corpus, "n", &[]) }
        => ["not_toml.toml", "toml"];
    /// train: unknown --set key
    train_unknown_set_key(f) { f.tiny(&f.corpus, "s", &["optim.learning_rate=1e-3"]) }
        => ["tiny.toml", "learning_rate", "`lr`"];
    /// train: out-of-range --set
    train_out_of_range_set(f) { f.tiny(&f.corpus, "s2", &["views.mask_ratio=1.5"]) }
        => ["tiny.toml", "views.mask_ratio", "[0, 1)"];
    /// train: malformed JSONL
    train_malformed_jsonl(f) { f.tiny(&f.path("broken.jsonl"), "b", &[]) }
        => ["broken.jsonl", "line 2"];
    /// train: JSONL group without texts
    train_jsonl_group_without_texts(f) { f.tiny(&f.path("no_texts.jsonl"), "b2", &[]) }
        => ["no_texts.jsonl", "line 2"];
    /// train: empty corpus
    train_empty_corpus(f) { f.tiny(&f.path("empty.jsonl"), "e", &[]) }
        => ["empty.jsonl", "no groups"];
    /// train: blank corpus
    train_blank_corpus(f) { f.tiny(&f.path("blank.jsonl"), "e2", &[]) }
        => ["blank.jsonl", "no groups"];
    /// train: missing corpus
    train_missing_corpus(f) { f.tiny(&f.path("gone.jsonl"), "m", &[]) }
        => ["gone.jsonl"];
    /// train: good views, every group has one text
    train_good_views_every_group_has_one_text(f) {
        f.tiny(&f.path("singles.jsonl"), "one", &[])
    } => ["singles.jsonl", "two texts"];
    /// train: empty config file
    train_empty_config_file(f) { f.train("empty.toml", &f.corpus, "e_cfg", &[]) }
        => ["empty.toml", "config file is empty"];
    /// train: whitespace-and-comments config file
    train_whitespace_and_comments_config_file(f) {
        f.train("blank.toml", &f.corpus, "e2_cfg", &[])
    } => ["blank.toml", "config file is empty"];
    /// train: missing config
    train_missing_config(f) { f.train("absent.toml", &f.corpus, "a", &[]) }
        => ["absent.toml"];
    /// train: eval target N too small
    train_eval_target_n_too_small(f) {
        f.tiny(&f.corpus, "ev", &[&format!("eval.target={}", f.p("zero_rows.npy"))])
    } => ["zero_rows.npy"];
    /// train: eval target NaN
    train_eval_target_nan(f) {
        f.tiny(&f.corpus, "ev2", &[&format!("eval.target={}", f.p("nan.npy"))])
    } => ["nan.npy", "NaN"];

    // --- checkpoints: one real tiny run, then corrupted copies -----------------------------

    /// embed: truncated checkpoint
    embed_truncated_checkpoint(f) { f.embed(&variant("trunc", truncated)) }
        => ["trunc/checkpoints/latest.ckpt", "truncated"];
    /// embed: checkpoint cut inside the header
    embed_checkpoint_cut_inside_the_header(f) { f.embed(&variant("header_cut", header_cut)) }
        => ["header_cut/checkpoints/latest.ckpt"];
    /// embed: corrupted byte (checksum)
    embed_corrupted_byte_checksum(f) { f.embed(&variant("flipped", flipped)) }
        => ["flipped/checkpoints/latest.ckpt", "checksum"];
    /// embed: not a checkpoint
    embed_not_a_checkpoint(f) { f.embed(&variant("not_ckpt", not_ckpt)) }
        => ["not_ckpt/checkpoints/latest.ckpt", "PRHCKPT1"];
    /// embed: empty checkpoint
    embed_empty_checkpoint(f) { f.embed(&variant("empty_ck", empty_ck)) }
        => ["empty_ck/checkpoints/latest.ckpt"];
    /// embed: checkpoint of another depth
    embed_checkpoint_of_another_depth(f) { f.embed(&variant("other_model", other_model)) }
        => ["other_model/checkpoints/latest.ckpt", "another model config", "spec.json"];
    /// embed: checkpoint of another width
    embed_checkpoint_of_another_width(f) { f.embed(&variant("other_width", other_width)) }
        => ["other_width/checkpoints/latest.ckpt", "another model config", "spec.json"];
    /// embed: future checkpoint version
    embed_future_checkpoint_version(f) { f.embed(&variant("future", future)) }
        => ["future/checkpoints/latest.ckpt", "version"];
    /// embed: malformed spec.json
    embed_malformed_spec_json(f) { f.embed(&variant("bad_spec", bad_spec)) }
        => ["bad_spec/spec.json"];
    /// embed: malformed tokenizer.json
    embed_malformed_tokenizer_json(f) { f.embed(&variant("bad_tok", bad_tok)) }
        => ["bad_tok/tokenizer.json"];
    /// embed: not a run folder
    embed_not_a_run_folder(f) { f.embed(&f.p("nowhere")) }
        => ["nowhere/spec.json", "run folder"];
    /// embed: empty texts file
    embed_empty_texts_file(f) {
        let mut a = f.embed(&real());
        a[4] = f.p("empty.npy");
        a
    } => ["empty.npy", "one text per line"];
    /// export: truncated checkpoint
    export_truncated_checkpoint(f) { f.export(&variant("trunc", truncated)) }
        => ["trunc/checkpoints/latest.ckpt", "truncated"];
    /// export: checkpoint of another width
    export_checkpoint_of_another_width(f) { f.export(&variant("other_width", other_width)) }
        => ["other_width/checkpoints/latest.ckpt", "another model config"];
    /// export: corrupted byte (checksum)
    export_corrupted_byte_checksum(f) { f.export(&variant("flipped", flipped)) }
        => ["flipped/checkpoints/latest.ckpt", "checksum"];
    /// train --resume: truncated checkpoint
    resume_truncated_checkpoint(f) { f.resume(&variant("trunc", truncated)) }
        => ["trunc/checkpoints/latest.ckpt", "truncated"];
    /// train --resume: checkpoint of another depth
    resume_checkpoint_of_another_depth(f) { f.resume(&variant("other_cfg", other_cfg)) }
        => ["other_cfg/checkpoints/latest.ckpt", "another model config", "config.toml"];
    /// embed: malformed JSONL texts
    embed_malformed_jsonl_texts(f) {
        let mut a = f.embed(&real());
        a[4] = f.p("broken.jsonl");
        a
    } => ["broken.jsonl", "line 2"];
    /// embed: output under a file
    embed_output_under_a_file(f) {
        let mut a = f.embed(&real());
        a[6] = format!("{}/emb.npy", f.p("good.npy"));
        a
    } => ["good.npy/emb.npy"];
    /// export: unknown --checkpoint
    export_unknown_checkpoint(f) {
        let mut a = f.export(&real());
        a.extend(["--checkpoint".to_string(), "newest".to_string()]);
        a
    } => ["--checkpoint", "best or latest", "newest"];
    /// train: run folder under a file
    train_run_folder_under_a_file(f) {
        train_args(&f.tiny, &f.corpus, &f.path("good.npy").join("run"), &[])
    } => ["good.npy/run"];
    /// train --resume: not a run folder
    resume_not_a_run_folder(f) { f.resume(&f.p("nowhere")) }
        => ["nowhere/config.toml"];
}

/// Hand-written .npy bytes: `descr` is numpy's dtype string, `data` the raw payload.
fn npy_raw(descr: &str, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|s| s.to_string()).collect();
    let tuple = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {tuple}, }}");
    // Magic (6) + version (2) + length (2) + header, padded to 64 bytes, ending in '\n'.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

fn f64_npy(shape: &[usize], v: &[f64]) -> Vec<u8> {
    prh_core::formats::features::npy_bytes(shape, v).unwrap()
}

/// A deterministic [n, d] matrix, row major.
fn values(n: usize, d: usize, s: f64) -> Vec<f64> {
    (0..n * d)
        .map(|t| ((t as f64) * 0.37 + s).sin() + 0.1 * ((t * t) as f64 * 0.01).cos())
        .collect()
}

/// safetensors bytes by hand: u64 header length, JSON header, data.
fn safetensors_raw(header: &str, data: &[u8]) -> Vec<u8> {
    let mut st = (header.len() as u64).to_le_bytes().to_vec();
    st.extend_from_slice(header.as_bytes());
    st.extend_from_slice(data);
    st
}

fn f32_bytes(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| (*x as f32).to_le_bytes()).collect()
}

/// An .npz holding `arrays` (float64 [rows, cols] each).
fn write_npz(path: &Path, arrays: &[(&str, usize, usize)]) {
    use npyz::WriterBuilder;
    let mut npz = npyz::npz::NpzWriter::create(path).unwrap();
    for (name, r, c) in arrays {
        let mut w = npz
            .array(name, Default::default())
            .unwrap()
            .default_dtype()
            .shape(&[*r as u64, *c as u64])
            .begin_nd()
            .unwrap();
        w.extend(values(*r, *c, 0.5)).unwrap();
        w.finish().unwrap();
    }
}

/// 12 groups of 2 paraphrases.
fn corpus_text() -> String {
    let mut out = String::new();
    for c in ["red", "blue", "green"] {
        for a in ["dog", "cat", "horse", "bird"] {
            let texts = [format!("a {c} {a} runs"), format!("the {a} is {c}")];
            let line = serde_json::json!({ "id": format!("{c}-{a}"), "texts": texts });
            out.push_str(&line.to_string());
            out.push('\n');
        }
    }
    out
}

/// `train --config tiny.toml` arguments on a JSONL corpus, with small sizes.
fn train_args(config: &Path, corpus: &Path, out: &Path, sets: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = vec![
        "train".into(),
        "--config".into(),
        config.display().to_string(),
        "--out".into(),
        out.display().to_string(),
    ];
    let base = [
        "data.source=jsonl".to_string(),
        format!("data.path={}", corpus.display()),
        "data.max_groups=0".into(),
        "run.steps=2".into(),
        "run.log_every=1".into(),
        "run.checkpoint_every=2".into(),
        "views.batch_size=4".into(),
        "tokenizer.vocab_size=60".into(),
        "tokenizer.min_frequency=1".into(),
        "model.max_len=8".into(),
        "loss.slices=4".into(),
        "optim.warmup_steps=1".into(),
    ];
    for s in base.iter().map(String::as_str).chain(sets.iter().copied()) {
        a.push("--set".into());
        a.push(s.into());
    }
    a
}

fn run_bin(args: &[String]) -> std::process::Output {
    bin()
        .args(args)
        .output()
        .expect("the prh-native binary runs")
}

/// Copies a run folder (files and checkpoints/) so each case can corrupt its own copy.
fn copy_run(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.join("checkpoints")).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
    for e in std::fs::read_dir(from.join("checkpoints")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join("checkpoints").join(e.file_name())).unwrap();
    }
}

#[test]
fn single_text_groups_are_skipped_with_a_count_under_good_views() {
    let tmp = tempfile::tempdir().unwrap();
    // Every other group keeps one text: 6 of 12 groups cannot give good views.
    let mixed: String = corpus_text()
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            if i % 2 == 0 {
                v["texts"].as_array_mut().unwrap().truncate(1);
            }
            format!("{v}\n")
        })
        .collect();
    let corpus = tmp.path().join("mixed.jsonl");
    std::fs::write(&corpus, mixed).unwrap();
    let out = tmp.path().join("run");
    let o = run_bin(&train_args(
        &configs().join("tiny.toml"),
        &corpus,
        &out,
        &[],
    ));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("mixed.jsonl") && err.contains("skipped 6 of 12 groups"),
        "{err}"
    );
    assert!(
        err.contains("(6 groups,"),
        "training should see 6 groups: {err}"
    );
    // Bad views need one text per group: nothing is skipped.
    let o = run_bin(&train_args(
        &configs().join("tiny.toml"),
        &corpus,
        &tmp.path().join("bad"),
        &["run.objective=\"bad\""],
    ));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success() && !err.contains("skipped"), "{err}");
}
