//! The captioner (issue 23) through the real binary: image and caption JEPAs trained apart
//! on the quick scene world, a decoder trained on captions only, and `prh-native caption`
//! joining them with maps fitted on N pairs; then what must be refused.
//!
//! The encoders observe symbols (`views.observation = "symbolic"`), on which the spectral
//! loss reaches the predicted F in a few hundred steps (docs/results.md, issue 19), so
//! the test can ask for what the theorem promises: through one rotation fitted on 16
//! pairs, held-out pictures are captioned almost as well as the captions themselves.

use prh_tests::{bin, configs, data_dir};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

/// The shared runs: symbol image and caption encoders (good views, spectral loss), one
/// with a different width, and decoders of the caption encoder.
struct Runs {
    dir: PathBuf,
}

impl Runs {
    fn p(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("running prh-native")
}

/// Runs `prh-native args`, which must succeed; returns stdout.
fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(
        o.status.success(),
        "{args:?} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Trains a symbol encoder of `modality` (`image` or `caption`) into `dir/name`.
fn encoder(dir: &Path, name: &str, modality: &str, extra: &[&str]) {
    let config = configs().join(format!("{modality}-good-spectral.toml"));
    let out = dir.join(name);
    let mut args = vec![
        "--quiet".to_string(),
        "train".into(),
        "--config".into(),
        config.display().to_string(),
        "--out".into(),
        out.display().to_string(),
    ];
    for s in [
        "world.cardinality=[3, 3, 2, 4]",
        "views.observation=symbolic",
        "run.steps=300",
        "run.plateau_window=0",
        "run.data_parallel=1",
        "optim.lr=2e-3",
    ]
    .iter()
    .chain(extra)
    {
        args.push("--set".into());
        args.push(s.to_string());
    }
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&a);
}

fn runs() -> &'static Runs {
    static RUNS: OnceLock<Runs> = OnceLock::new();
    RUNS.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("prh-caption-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        encoder(&dir, "image", "image", &[]);
        encoder(&dir, "text", "caption", &[]);
        encoder(&dir, "text2", "caption", &["run.seed=1"]);
        encoder(&dir, "image5", "image", &["symbolic.out_dim=5"]);
        let r = Runs { dir };
        let decoder = configs().join("caption-decoder.toml");
        ok(&[
            "--quiet",
            "train",
            "--config",
            &decoder.display().to_string(),
            "--out",
            &r.p("decoder"),
            "--set",
            &format!("decoder.encoder_run={}", r.p("text")),
            "--set",
            "run.steps=400",
        ]);
        r
    })
}

/// What the theorem promises on symbols: a rotation fitted on 16 pairs captions held-out
/// pictures nearly as well as the test states' own caption embeddings do, and far above
/// the shuffled-pair null; the pair-free map matches the pool without any pair; the
/// outputs are written and the command line is recorded.
#[test]
fn one_rotation_captions_held_out_pictures() {
    let r = runs();
    let out = r.dir.join("caption16");
    let stdout = ok(&[
        "caption",
        "--image-run",
        &r.p("image"),
        "--text-run",
        &r.p("text"),
        "--decoder-run",
        &r.p("decoder"),
        "--fit",
        "16",
        "--out",
        &out.display().to_string(),
    ]);
    assert!(
        stdout.contains("rotation") && stdout.contains("CIDEr-D"),
        "{stdout}"
    );
    let v: Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let row = |m: &str| -> &Value {
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["method"] == m)
            .unwrap_or_else(|| panic!("no {m} row in {v}"))
    };
    let all = |m: &str| row(m)["scores"]["all_right"].as_f64().unwrap();
    let cider = |m: &str| row(m)["scores"]["cider_d"].as_f64().unwrap();
    assert!(
        all("ceiling") >= 0.9,
        "the decoder reads its own encoder: {v}"
    );
    assert!(all("rotation") >= all("ceiling") - 0.1, "rotation {v}");
    assert!(
        all("null") <= 0.2 && cider("null") < cider("rotation") - 0.5,
        "{v}"
    );
    assert!(
        row("pair-free")["match_accuracy"].as_f64().unwrap() >= 0.9,
        "{v}"
    );
    assert_eq!(row("rotation")["pairs"], 16);
    assert!(
        v["command"]
            .as_str()
            .unwrap()
            .starts_with("prh-native caption")
    );
    let lines = std::fs::read_to_string(out.join("captions.jsonl")).unwrap();
    // The quick world: 72 states, a third held out.
    assert_eq!(lines.lines().count(), 24);
    let first: Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    assert!(first["captions"]["rotation"].as_str().is_some(), "{first}");
}

/// The curve: every N from 1 to the pool (48 states) for rotation, linear and null; with
/// one pair the rotation cannot be determined (d = 8), with the pool it can.
#[test]
fn the_curve_covers_every_n() {
    let r = runs();
    let out = r.dir.join("curve");
    ok(&[
        "caption",
        "--image-run",
        &r.p("image"),
        "--text-run",
        &r.p("text"),
        "--decoder-run",
        &r.p("decoder"),
        "--curve",
        "--map",
        "rotation",
        "--beam",
        "1",
        "--out",
        &out.display().to_string(),
    ]);
    let v: Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let curve = v["curve"].as_array().unwrap();
    let at = |m: &str, n: u64| {
        curve
            .iter()
            .find(|r| r["method"] == m && r["pairs"] == n)
            .unwrap_or_else(|| panic!("no {m} at {n}"))["scores"]["all_right"]
            .as_f64()
            .unwrap()
    };
    for n in [1, 2, 4, 8, 16, 32, 48] {
        at("rotation", n);
        at("linear", n);
        at("null", n);
    }
    assert!(at("rotation", 48) > at("rotation", 1) + 0.5, "{v}");
    assert!(
        std::fs::read_to_string(out.join("curve.svg"))
            .unwrap()
            .contains("<svg")
    );
}

/// Runs `prh-native args`, which must fail without a panic, with every needle on stderr.
fn refused(args: &[&str], needles: &[&str]) {
    let o = run(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{args:?} succeeded");
    assert!(!err.contains("panicked"), "{err}");
    for n in needles {
        assert!(err.contains(n), "stderr lacks {n:?}: {err}");
    }
}

/// Bad input: a caption request before any fit, too many pairs, runs of different widths,
/// a decoder trained on another encoder, an image run as the decoder's encoder, the
/// runs swapped.
#[test]
fn mismatched_runs_are_refused() {
    let r = runs();
    let caption = |image: &str, text: &str, decoder: &str, extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = [
            "caption",
            "--image-run",
            &r.p(image),
            "--text-run",
            &r.p(text),
            "--decoder-run",
            &r.p(decoder),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let check = |a: Vec<String>, needles: &[&str]| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        refused(&a, needles);
    };
    check(
        caption("image", "text", "decoder", &[]),
        &["--fit N", "pair-free"],
    );
    check(
        caption("image", "text", "decoder", &["--fit", "49"]),
        &["--fit 49", "48 states"],
    );
    check(
        caption("image5", "text", "decoder", &["--fit", "8"]),
        &["d = 5", "d = 8", "equal widths"],
    );
    check(
        caption("image", "text2", "decoder", &["--fit", "8"]),
        &["was trained on the caption encoder", "text2"],
    );
    check(
        caption("text", "image", "decoder", &["--fit", "8"]),
        &[
            "--image-run",
            "a scene-caption run, expected a scene-image run",
        ],
    );
    check(
        caption("image", "text", "missing", &["--fit", "8"]),
        &["--decoder-run", "config.toml not found"],
    );
    let decoder = configs().join("caption-decoder.toml");
    refused(
        &[
            "train",
            "--config",
            &decoder.display().to_string(),
            "--out",
            &r.p("bad-decoder"),
            "--set",
            &format!("decoder.encoder_run={}", r.p("image")),
        ],
        &["decoder.encoder_run", "an image run"],
    );
    refused(
        &[
            "train",
            "--config",
            &decoder.display().to_string(),
            "--out",
            &r.p("bad-decoder2"),
        ],
        &["caption-decoder.toml", "decoder.encoder_run"],
    );
}

/// The captioner on real text, end to end at a smoke-test size: English and German
/// JEPAs (the recipe, 20 steps on 500 images each), a decoder of the English one (30
/// steps), and `translate` of 20 German test captions through a rotation fitted on val.
/// Every row is scored and written; a decoder given another encoder is refused.
#[test]
fn translate_german_captions_through_one_rotation() {
    let Some(data) = data_dir() else { return };
    let dir = std::env::temp_dir().join(format!("prh-translate-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let p = |n: &str| dir.join(n).display().to_string();
    let data = data.display().to_string();
    let recipe = configs().join("multi30k-recipe.toml").display().to_string();
    for lang in ["en", "de"] {
        ok(&[
            "--quiet",
            "train",
            "--config",
            &recipe,
            "--out",
            &p(lang),
            "--data",
            &data,
            "--set",
            &format!("data.lang={lang}"),
            "--set",
            "run.steps=20",
            "--set",
            "data.max_groups=500",
            "--set",
            "run.eval_every=0",
        ]);
    }
    let decoder = configs()
        .join("multi30k-decoder.toml")
        .display()
        .to_string();
    ok(&[
        "--quiet",
        "train",
        "--config",
        &decoder,
        "--out",
        &p("decoder"),
        "--data",
        &data,
        "--set",
        &format!("decoder.encoder_run={}", p("en")),
        "--set",
        "run.steps=30",
        "--set",
        "run.eval_every=0",
        "--set",
        "decoder.d_model=32",
        "--set",
        "decoder.d_ff=64",
    ]);
    let out = dir.join("translate");
    let stdout = ok(&[
        "translate",
        "--source-run",
        &p("de"),
        "--text-run",
        &p("en"),
        "--decoder-run",
        &p("decoder"),
        "--data",
        &data,
        "--groups",
        "20",
        "--beam",
        "1",
        "--out",
        &out.display().to_string(),
    ]);
    assert!(
        stdout.contains("rotation") && stdout.contains("TF-IDF"),
        "{stdout}"
    );
    let v: Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6, "{v}");
    for r in rows {
        let b = r["scores"]["bleu4"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&b), "{r}");
    }
    assert_eq!(v["fit_pairs"], 1014);
    let lines = std::fs::read_to_string(out.join("translations.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 20);
    refused(
        &[
            "translate",
            "--source-run",
            &p("en"),
            "--text-run",
            &p("de"),
            "--decoder-run",
            &p("decoder"),
            "--data",
            &data,
        ],
        &["--decoder-run", "was trained on the encoder", "--text-run"],
    );
    let _ = std::fs::remove_dir_all(&dir);
}
