//! Bad input at every entry point of the real binary (issue 9, part 1): a table of
//! malformed, truncated, mismatched and missing files, configs, corpora and checkpoints.
//! Each case must exit non-zero, must not panic, and stderr must name the file (or key)
//! and say what was expected.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One bad-input case: arguments of `prh-native` and the phrases stderr must contain.
struct Case {
    name: &'static str,
    args: Vec<String>,
    needles: Vec<String>,
}

fn case(name: &'static str, args: &[&str], needles: &[&str]) -> Case {
    Case {
        name,
        args: args.iter().map(|s| s.to_string()).collect(),
        needles: needles.iter().map(|s| s.to_string()).collect(),
    }
}

fn configs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs")
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
    Command::new(env!("CARGO_BIN_EXE_prh-native"))
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
fn bad_input_fails_clearly_at_every_entry_point() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let p = |name: &str| dir.join(name).display().to_string();
    let write = |name: &str, bytes: &[u8]| std::fs::write(dir.join(name), bytes).unwrap();

    // --- feature files -------------------------------------------------------------------
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

    let good = p("good.npy");
    let mut cases = vec![
        case(
            "metrics: truncated npy",
            &["metrics", &good, &p("trunc.npy")],
            &["trunc.npy", "truncated"],
        ),
        case(
            "metrics: npy header only",
            &["metrics", &good, &p("header_only.npy")],
            &["header_only.npy"],
        ),
        case(
            "metrics: malformed npy header",
            &["metrics", &p("bad_header.npy"), &good],
            &["bad_header.npy", "malformed"],
        ),
        case(
            "metrics: int64 npy",
            &["metrics", &good, &p("int.npy")],
            &["int.npy", "expected float"],
        ),
        case(
            "metrics: complex npy",
            &["metrics", &good, &p("complex.npy")],
            &["complex.npy", "expected float"],
        ),
        case(
            "metrics: rank-1 npy",
            &["metrics", &good, &p("rank1.npy")],
            &["rank1.npy", "expected [N, D]"],
        ),
        case(
            "metrics: rank-4 npy",
            &["metrics", &good, &p("rank4.npy")],
            &["rank4.npy", "expected [N, D]"],
        ),
        case(
            "metrics: N mismatch",
            &["metrics", &good, &p("short.npy")],
            &["short.npy", "N = 29", "N = 30"],
        ),
        case(
            "metrics: NaN",
            &["metrics", &good, &p("nan.npy")],
            &["nan.npy", "row 7", "NaN"],
        ),
        case(
            "metrics: Inf",
            &["metrics", &p("inf.npy"), &good],
            &["inf.npy", "row 11"],
        ),
        case(
            "metrics: empty file",
            &["metrics", &good, &p("empty.npy")],
            &["empty.npy", "empty"],
        ),
        case(
            "metrics: zero rows",
            &["metrics", &good, &p("zero_rows.npy")],
            &["zero_rows.npy"],
        ),
        case(
            "metrics: unknown format",
            &["metrics", &p("junk.bin"), &good],
            &["junk.bin", "expected .npy"],
        ),
        case(
            "metrics: missing file",
            &["metrics", &p("missing.npy"), &good],
            &["missing.npy"],
        ),
        case(
            "metrics: npz needs --array",
            &["metrics", &good, &p("two.npz")],
            &["two.npz", "2 arrays"],
        ),
        case(
            "metrics: npz unknown array",
            &["metrics", &good, &p("two.npz"), "--array-b", "z"],
            &["two.npz", "z"],
        ),
        case(
            "metrics: truncated npz",
            &["metrics", &good, &p("trunc.npz")],
            &["trunc.npz"],
        ),
        case(
            "metrics: npz member not npy",
            &["metrics", &good, &p("bad_member.npz"), "--array-b", "x"],
            &["bad_member.npz"],
        ),
        case(
            "metrics: truncated safetensors",
            &["metrics", &good, &p("trunc.safetensors")],
            &["trunc.safetensors"],
        ),
        case(
            "metrics: safetensors header length past the end",
            &["metrics", &good, &p("huge_header.safetensors")],
            &["huge_header.safetensors"],
        ),
        case(
            "metrics: safetensors header not JSON",
            &["metrics", &good, &p("notjson.safetensors")],
            &["notjson.safetensors"],
        ),
        case(
            "metrics: int safetensors",
            &["metrics", &good, &p("int.safetensors")],
            &["int.safetensors", "I32"],
        ),
        case(
            "metrics: rank-1 safetensors",
            &["metrics", &good, &p("rank1.safetensors")],
            &["rank1.safetensors", "expected [N, D]"],
        ),
        case(
            "metrics: k >= N",
            &["metrics", &good, &p("good2.npy"), "--k", "30"],
            &["k"],
        ),
        case(
            "align: N mismatch",
            &["align", &good, &p("short.npy"), "--fit", "10"],
            &["short.npy", "N = 29"],
        ),
        case(
            "align: fit files N mismatch",
            &[
                "align",
                &good,
                &p("good2.npy"),
                "--fit-a",
                &good,
                "--fit-b",
                &p("short.npy"),
            ],
            &["short.npy", "--fit-a and --fit-b"],
        ),
        case(
            "align: --fit too large",
            &["align", &good, &p("good2.npy"), "--fit", "30"],
            &["--fit 30", "N < 30"],
        ),
        case(
            "align: layer out of range",
            &[
                "align",
                &good,
                &p("good2.npy"),
                "--fit",
                "10",
                "--layer-a",
                "3",
            ],
            &["good.npy", "layer 3"],
        ),
        case(
            "align: NaN",
            &["align", &p("nan.npy"), &good, "--fit", "10"],
            &["nan.npy", "NaN"],
        ),
        case(
            "match: empty file",
            &["match", &good, &p("empty.npy")],
            &["empty.npy", "empty"],
        ),
        case(
            "match: truncated safetensors",
            &["match", &p("trunc.safetensors"), &good],
            &["trunc.safetensors"],
        ),
        case(
            "match: Inf",
            &["match", &good, &p("inf.npy")],
            &["inf.npy", "row 11"],
        ),
        case(
            "spectral: non-square Pi",
            &["spectral", "--pi", &p("pi_rect.npy")],
            &["pi_rect.npy", "square"],
        ),
        case(
            "spectral: negative Pi",
            &["spectral", "--pi", &p("pi_neg.npy")],
            &["pi_neg.npy", "Pi[0, 1]", ">= 0"],
        ),
        case(
            "spectral: NaN Pi",
            &["spectral", "--pi", &p("pi_nan.npy")],
            &["pi_nan.npy"],
        ),
        case(
            "spectral: truncated Pi",
            &["spectral", "--pi", &p("pi_trunc.npy")],
            &["pi_trunc.npy"],
        ),
        case(
            "spectral: missing Pi",
            &["spectral", "--pi", &p("nope.npy")],
            &["nope.npy"],
        ),
        case(
            "spectral: int64 Pi",
            &["spectral", "--pi", &p("pi_int.npy")],
            &["pi_int.npy", "expected float"],
        ),
        case(
            "align: rotation output under a file",
            &[
                "align",
                &good,
                &p("good2.npy"),
                "--fit",
                "10",
                "--save-rotation",
                &format!("{good}/q.npy"),
            ],
            &["good.npy/q.npy"],
        ),
        case(
            "sigreg: truncated",
            &["sigreg", &p("trunc.npy")],
            &["trunc.npy", "truncated"],
        ),
        case(
            "sigreg: NaN",
            &["sigreg", &p("nan.npy")],
            &["nan.npy", "NaN"],
        ),
        case(
            "sigreg: directions of the wrong width",
            &["sigreg", &good, "--directions", &p("pi_neg.npy")],
            &["pi_neg.npy", "[M, 4]"],
        ),
        case(
            "sigreg: layer out of range",
            &["sigreg", &good, "--layer", "2"],
            &["--layer 2", "good.npy"],
        ),
    ];

    // --- training configs and corpora ----------------------------------------------------
    let tiny = std::fs::read_to_string(configs().join("tiny.toml")).unwrap();
    write("corpus.jsonl", corpus_text().as_bytes());
    let corpus = dir.join("corpus.jsonl");
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
    let cfg = |name: &str| dir.join(name);
    let out = |name: &str| dir.join("runs").join(name);
    let t =
        |c: &str, corpus: &Path, o: &str, sets: &[&str]| train_args(&cfg(c), corpus, &out(o), sets);
    let tiny_path = configs().join("tiny.toml");
    let tiny_args =
        |corpus: &Path, o: &str, sets: &[&str]| train_args(&tiny_path, corpus, &out(o), sets);
    let mut train_cases = vec![
        (
            "train: unknown config key",
            t("unknown_key.toml", &corpus, "k", &[]),
            vec!["unknown_key.toml", "lrr", "did you mean `lr`?"],
        ),
        (
            "train: unknown config table",
            t("unknown_table.toml", &corpus, "k2", &[]),
            vec!["unknown_table.toml", "optimiser", "did you mean `optim`?"],
        ),
        (
            "train: wrong type",
            t("wrong_type.toml", &corpus, "w", &[]),
            vec!["wrong_type.toml", "grad_clip", "string"],
        ),
        (
            "train: not TOML",
            t("not_toml.toml", &corpus, "n", &[]),
            vec!["not_toml.toml", "toml"],
        ),
        (
            "train: unknown --set key",
            tiny_args(&corpus, "s", &["optim.learning_rate=1e-3"]),
            vec!["tiny.toml", "learning_rate", "`lr`"],
        ),
        (
            "train: out-of-range --set",
            tiny_args(&corpus, "s2", &["views.mask_ratio=1.5"]),
            vec!["tiny.toml", "views.mask_ratio", "[0, 1)"],
        ),
        (
            "train: malformed JSONL",
            tiny_args(&dir.join("broken.jsonl"), "b", &[]),
            vec!["broken.jsonl", "line 2"],
        ),
        (
            "train: JSONL group without texts",
            tiny_args(&dir.join("no_texts.jsonl"), "b2", &[]),
            vec!["no_texts.jsonl", "line 2"],
        ),
        (
            "train: empty corpus",
            tiny_args(&dir.join("empty.jsonl"), "e", &[]),
            vec!["empty.jsonl", "no groups"],
        ),
        (
            "train: blank corpus",
            tiny_args(&dir.join("blank.jsonl"), "e2", &[]),
            vec!["blank.jsonl", "no groups"],
        ),
        (
            "train: missing corpus",
            tiny_args(&dir.join("gone.jsonl"), "m", &[]),
            vec!["gone.jsonl"],
        ),
        (
            "train: good views, every group has one text",
            tiny_args(&dir.join("singles.jsonl"), "one", &[]),
            vec!["singles.jsonl", "two texts"],
        ),
        (
            "train: empty config file",
            t("empty.toml", &corpus, "e", &[]),
            vec!["empty.toml", "config file is empty"],
        ),
        (
            "train: whitespace-and-comments config file",
            t("blank.toml", &corpus, "e2", &[]),
            vec!["blank.toml", "config file is empty"],
        ),
        (
            "train: missing config",
            t("absent.toml", &corpus, "a", &[]),
            vec!["absent.toml"],
        ),
        (
            "train: eval target N too small",
            tiny_args(
                &corpus,
                "ev",
                &[&format!("eval.target={}", p("zero_rows.npy"))],
            ),
            vec!["zero_rows.npy"],
        ),
        (
            "train: eval target NaN",
            tiny_args(&corpus, "ev2", &[&format!("eval.target={}", p("nan.npy"))]),
            vec!["nan.npy", "NaN"],
        ),
    ];
    for (name, args, needles) in train_cases.drain(..) {
        cases.push(Case {
            name,
            args,
            needles: needles.into_iter().map(String::from).collect(),
        });
    }

    // --- checkpoints: one real tiny run, then corrupted copies -----------------------------
    let run = out("real");
    let o = run_bin(&tiny_args(&corpus, "real", &[]));
    assert!(
        o.status.success(),
        "the tiny run for the checkpoint cases failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let texts = dir.join("texts.txt");
    std::fs::write(&texts, "a red dog runs\nthe cat is blue\n").unwrap();
    let ck = std::fs::read(run.join("checkpoints/latest.ckpt")).unwrap();
    let variant = |name: &str, edit: &dyn Fn(&Path)| -> String {
        let d = out(name);
        copy_run(&run, &d);
        edit(&d);
        d.display().to_string()
    };
    let no_best = |d: &Path| {
        let _ = std::fs::remove_file(d.join("checkpoints/best.ckpt"));
    };
    let truncated = variant("trunc", &|d| {
        no_best(d);
        std::fs::write(d.join("checkpoints/latest.ckpt"), &ck[..ck.len() * 2 / 3]).unwrap();
    });
    let header_cut = variant("header_cut", &|d| {
        no_best(d);
        std::fs::write(d.join("checkpoints/latest.ckpt"), &ck[..20]).unwrap();
    });
    let flipped = variant("flipped", &|d| {
        no_best(d);
        let mut c = ck.clone();
        let n = c.len();
        c[n - 100] ^= 0xff;
        std::fs::write(d.join("checkpoints/latest.ckpt"), c).unwrap();
    });
    let not_ckpt = variant("not_ckpt", &|d| {
        no_best(d);
        std::fs::write(d.join("checkpoints/latest.ckpt"), b"PK\x03\x04 some zip").unwrap();
    });
    let empty_ck = variant("empty_ck", &|d| {
        no_best(d);
        std::fs::write(d.join("checkpoints/latest.ckpt"), b"").unwrap();
    });
    // A checkpoint of another model config: the spec says 3 layers and width 96.
    let other_model = variant("other_model", &|d| {
        let s = std::fs::read_to_string(d.join("spec.json")).unwrap();
        let mut v: serde_json::Value = serde_json::from_str(&s).unwrap();
        v["layers"] = serde_json::json!(3);
        std::fs::write(d.join("spec.json"), v.to_string()).unwrap();
    });
    let other_width = variant("other_width", &|d| {
        let s = std::fs::read_to_string(d.join("spec.json")).unwrap();
        let mut v: serde_json::Value = serde_json::from_str(&s).unwrap();
        v["d_model"] = serde_json::json!(96);
        v["heads"] = serde_json::json!(4);
        std::fs::write(d.join("spec.json"), v.to_string()).unwrap();
    });
    // The run folder's config asks for another model than the checkpoint holds.
    let other_cfg = variant("other_cfg", &|d| {
        let c = std::fs::read_to_string(d.join("config.toml")).unwrap();
        assert!(c.contains("max_len = 8"), "{c}");
        std::fs::write(
            d.join("config.toml"),
            c.replace("max_len = 8", "max_len = 12"),
        )
        .unwrap();
    });
    let bad_spec = variant("bad_spec", &|d| {
        std::fs::write(d.join("spec.json"), b"{\"vocab\": 10").unwrap();
    });
    let bad_tok = variant("bad_tok", &|d| {
        std::fs::write(d.join("tokenizer.json"), b"{\"model\": 3}").unwrap();
    });
    // A checkpoint from a future format version (header JSON `"version":1` -> 7).
    let future = variant("future", &|d| {
        no_best(d);
        let mut c = ck.clone();
        let at = c
            .windows(10)
            .position(|w| w == b"\"version\":")
            .expect("the header holds the version");
        c[at + 10] = b'7';
        std::fs::write(d.join("checkpoints/latest.ckpt"), c).unwrap();
    });
    let texts_s = texts.display().to_string();
    let emb_out = p("emb.npy");
    let embed = |run: &str| -> Vec<String> {
        [
            "embed", "--run", run, "--texts", &texts_s, "--out", &emb_out,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let export = |run: &str| -> Vec<String> {
        ["export", "--run", run]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    let resume = |run: &str| -> Vec<String> {
        ["train", "--resume", run]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    let ck_cases: Vec<(&'static str, Vec<String>, Vec<&str>)> = vec![
        (
            "embed: truncated checkpoint",
            embed(&truncated),
            vec!["trunc/checkpoints/latest.ckpt", "truncated"],
        ),
        (
            "embed: checkpoint cut inside the header",
            embed(&header_cut),
            vec!["header_cut/checkpoints/latest.ckpt"],
        ),
        (
            "embed: corrupted byte (checksum)",
            embed(&flipped),
            vec!["flipped/checkpoints/latest.ckpt", "checksum"],
        ),
        (
            "embed: not a checkpoint",
            embed(&not_ckpt),
            vec!["not_ckpt/checkpoints/latest.ckpt", "PRHCKPT1"],
        ),
        (
            "embed: empty checkpoint",
            embed(&empty_ck),
            vec!["empty_ck/checkpoints/latest.ckpt"],
        ),
        (
            "embed: checkpoint of another depth",
            embed(&other_model),
            vec![
                "other_model/checkpoints/latest.ckpt",
                "another model config",
                "spec.json",
            ],
        ),
        (
            "embed: checkpoint of another width",
            embed(&other_width),
            vec![
                "other_width/checkpoints/latest.ckpt",
                "another model config",
                "spec.json",
            ],
        ),
        (
            "embed: future checkpoint version",
            embed(&future),
            vec!["future/checkpoints/latest.ckpt", "version"],
        ),
        (
            "embed: malformed spec.json",
            embed(&bad_spec),
            vec!["bad_spec/spec.json"],
        ),
        (
            "embed: malformed tokenizer.json",
            embed(&bad_tok),
            vec!["bad_tok/tokenizer.json"],
        ),
        (
            "embed: not a run folder",
            embed(&p("nowhere")),
            vec!["nowhere/spec.json", "run folder"],
        ),
        (
            "embed: empty texts file",
            {
                let mut a = embed(&run.display().to_string());
                a[4] = p("empty.npy");
                a
            },
            vec!["empty.npy", "one text per line"],
        ),
        (
            "export: truncated checkpoint",
            export(&truncated),
            vec!["trunc/checkpoints/latest.ckpt", "truncated"],
        ),
        (
            "export: checkpoint of another width",
            export(&other_width),
            vec![
                "other_width/checkpoints/latest.ckpt",
                "another model config",
            ],
        ),
        (
            "export: corrupted byte (checksum)",
            export(&flipped),
            vec!["flipped/checkpoints/latest.ckpt", "checksum"],
        ),
        (
            "train --resume: truncated checkpoint",
            resume(&truncated),
            vec!["trunc/checkpoints/latest.ckpt", "truncated"],
        ),
        (
            "train --resume: checkpoint of another depth",
            resume(&other_cfg),
            vec![
                "other_cfg/checkpoints/latest.ckpt",
                "another model config",
                "config.toml",
            ],
        ),
        (
            "embed: malformed JSONL texts",
            {
                let mut a = embed(&run.display().to_string());
                a[4] = p("broken.jsonl");
                a
            },
            vec!["broken.jsonl", "line 2"],
        ),
        (
            "embed: output under a file",
            {
                let mut a = embed(&run.display().to_string());
                a[6] = format!("{}/emb.npy", p("good.npy"));
                a
            },
            vec!["good.npy/emb.npy"],
        ),
        (
            "export: unknown --checkpoint",
            {
                let mut a = export(&run.display().to_string());
                a.extend(["--checkpoint".to_string(), "newest".to_string()]);
                a
            },
            vec!["--checkpoint", "best or latest", "newest"],
        ),
        (
            "train: run folder under a file",
            train_args(&tiny_path, &corpus, &dir.join("good.npy").join("run"), &[]),
            vec!["good.npy/run"],
        ),
        (
            "train --resume: not a run folder",
            resume(&p("nowhere")),
            vec!["nowhere/config.toml"],
        ),
    ];
    for (name, args, needles) in ck_cases {
        cases.push(Case {
            name,
            args,
            needles: needles.into_iter().map(String::from).collect(),
        });
    }

    // --- run the table ---------------------------------------------------------------------
    let mut failures = Vec::new();
    for c in &cases {
        let o = run_bin(&c.args);
        let err = String::from_utf8_lossy(&o.stderr);
        let mut why = Vec::new();
        if o.status.success() {
            why.push("exited 0".to_string());
        }
        if err.contains("panicked") {
            why.push("panicked".to_string());
        }
        for n in &c.needles {
            if !err.contains(n.as_str()) {
                why.push(format!("stderr lacks {n:?}"));
            }
        }
        if !why.is_empty() {
            failures.push(format!(
                "{}: {}\n  stderr: {}",
                c.name,
                why.join(", "),
                err.trim()
            ));
        }
    }
    println!("{} bad-input cases ran", cases.len());
    assert!(
        failures.is_empty(),
        "{} of {} bad-input cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
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
