//! `prh-native embed --hf` and `prh-native features` on Hugging Face checkpoint folders as
//! published, through the binary: small random checkpoints written by
//! `tests/hf/make_reference.py` (its numpy forward is the reference; see
//! crates/prh-core/tests/hf_models.rs for the per-layer, per-token comparison), and PNG
//! files preprocessed by the real transformers image processors
//! (`tests/hf/image_reference.py`) for the image path end to end.
//!
//! Needs python3 with numpy, scipy, transformers, safetensors and Pillow (no torch):
//! skipped with the reason printed when absent, a failure under `CI=true`.

use prh_tests::{bin, repo_root};
use std::path::{Path, PathBuf};
use std::process::Output;

const TOL: f32 = 1e-4;

fn python(args: &[&std::ffi::OsStr]) -> Option<()> {
    let out = std::process::Command::new("python3").args(args).output();
    let why = match out {
        Ok(o) if o.status.success() => return Some(()),
        Ok(o) => String::from_utf8_lossy(&o.stderr)
            .lines()
            .last()
            .unwrap_or("")
            .to_string(),
        Err(e) => e.to_string(),
    };
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("CI=true: the HF reference scripts must run here: {why}");
    }
    eprintln!(
        "SKIPPED: tests/hf/*.py need python3 with numpy, scipy, transformers, safetensors and \
         pillow: {why}"
    );
    None
}

/// The reference checkpoints in a fresh temporary folder.
fn reference(tmp: &Path) -> Option<PathBuf> {
    let dir = tmp.join("ref");
    let script = repo_root().join("tests/hf/make_reference.py");
    python(&[script.as_os_str(), dir.as_os_str()])?;
    Some(dir)
}

fn npy(path: &Path) -> (Vec<usize>, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let arr = npyz::NpyFile::new(&bytes[..]).unwrap();
    let shape = arr.shape().iter().map(|&d| d as usize).collect();
    (shape, arr.into_vec::<f32>().unwrap())
}

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "prh-native failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

fn fails(out: Output) -> String {
    assert!(!out.status.success(), "expected a failure");
    String::from_utf8_lossy(&out.stderr).to_string()
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// Layer `l` of an `[N, L, H]` array.
fn layer(data: &[f32], shape: &[usize], l: usize) -> Vec<f32> {
    let (n, layers, h) = (shape[0], shape[1], shape[2]);
    (0..n)
        .flat_map(|i| data[(i * layers + l) * h..(i * layers + l + 1) * h].to_vec())
        .collect()
}

#[test]
fn embed_and_features_of_text_checkpoints_equal_the_reference() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(r) = reference(tmp.path()) else {
        return;
    };
    let texts = r.join("texts.txt");
    // embed: the mean-pooled last hidden state, [N, H].
    let out = tmp.path().join("bert.npy");
    let said = ok(bin()
        .args(["--quiet", "embed", "--hf"])
        .arg(r.join("bert"))
        .arg("--texts")
        .arg(&texts)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap());
    assert!(
        said.contains("bert (2 layers, width 32), pooling mean") && said.contains("[6, 32]"),
        "{said}"
    );
    let (shape, got) = npy(&out);
    assert_eq!(shape, vec![6, 32]);
    let (ms, mean) = npy(&r.join("bert/reference/mean.npy"));
    let d = max_diff(&got, &layer(&mean, &ms, 2));
    assert!(d <= TOL, "embed vs reference: {d}");
    // features: every hidden state, CLS-pooled, [N, L + 1, H], from the MLM layout.
    let out = tmp.path().join("feats.npy");
    ok(bin()
        .args(["--quiet", "features", "--pool", "cls", "--hf"])
        .arg(r.join("bert-mlm"))
        .arg("--texts")
        .arg(&texts)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap());
    let (shape, got) = npy(&out);
    assert_eq!(shape, vec![6, 3, 32]);
    let d = max_diff(&got, &npy(&r.join("bert/reference/cls.npy")).1);
    assert!(d <= TOL, "features vs reference: {d}");
    // The Projector's pair from a sentence-transformers folder: normalised mean pooling.
    let tsv = tmp.path().join("vectors.tsv");
    ok(bin()
        .args(["--quiet", "embed", "--hf"])
        .arg(r.join("minilm-st"))
        .arg("--texts")
        .arg(&texts)
        .arg("--out")
        .arg(&tsv)
        .output()
        .unwrap());
    let rows: Vec<f32> = std::fs::read_to_string(&tsv)
        .unwrap()
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    let d = max_diff(
        &rows,
        &npy(&r.join("minilm-st/reference/sentence_embedding.npy")).1,
    );
    assert!(d <= 1e-4, "tsv vs sentence embedding: {d}");
    let labels = std::fs::read_to_string(tmp.path().join("metadata.tsv")).unwrap();
    assert_eq!(labels.lines().count(), 6);
    assert!(labels.starts_with("Hello world!"), "{labels}");
}

#[test]
fn pretrained_inputs_are_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(r) = reference(tmp.path()) else {
        return;
    };
    let texts = r.join("texts.txt");
    let out = tmp.path().join("x.npy");
    let run = |args: &[&std::ffi::OsStr]| bin().args(args).output().unwrap();
    let e = fails(run(&[
        "embed".as_ref(),
        "--hf".as_ref(),
        r.join("bert").as_os_str(),
        "--texts".as_ref(),
        texts.as_os_str(),
        "--pool".as_ref(),
        "max".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
    ]));
    assert!(
        e.contains("pooling `max`: expected mean, cls or last"),
        "{e}"
    );
    let e = fails(run(&[
        "embed".as_ref(),
        "--hf".as_ref(),
        tmp.path().join("nowhere").as_os_str(),
        "--texts".as_ref(),
        texts.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ]));
    assert!(e.contains("nowhere") && e.contains("not a folder"), "{e}");
    let e = fails(run(&[
        "embed".as_ref(),
        "--hf".as_ref(),
        r.join("vit").as_os_str(),
        "--texts".as_ref(),
        texts.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ]));
    assert!(e.contains("an image encoder: give --images"), "{e}");
    let e = fails(run(&[
        "features".as_ref(),
        "--hf".as_ref(),
        r.join("bert").as_os_str(),
        "--texts".as_ref(),
        texts.as_os_str(),
        "--out".as_ref(),
        tmp.path().join("f.tsv").as_os_str(),
    ]));
    assert!(e.contains("features are [N, L, D]: write .npy"), "{e}");
    // A tokenizer of another model (a vocabulary larger than the checkpoint's embedding).
    let bad = tmp.path().join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    for f in ["config.json", "model.safetensors"] {
        std::fs::copy(r.join("minilm-st").join(f), bad.join(f)).unwrap();
    }
    let tok = std::fs::read_to_string(r.join("bert/tokenizer.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&tok).unwrap();
    let vocab = v
        .pointer_mut("/model/vocab")
        .unwrap()
        .as_object_mut()
        .unwrap();
    for i in 0..500 {
        vocab.insert(format!("extra{i}"), serde_json::json!(1000 + i));
    }
    std::fs::write(bad.join("tokenizer.json"), v.to_string()).unwrap();
    let e = fails(run(&[
        "embed".as_ref(),
        "--hf".as_ref(),
        bad.as_os_str(),
        "--texts".as_ref(),
        texts.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ]));
    assert!(
        e.contains("tokenizer.json") && e.contains("belongs to another model"),
        "{e}"
    );
}

/// PNG files through `embed --hf` (the folder's own image processor, then the model) equal
/// the numpy forward of the pixel values transformers' real image processor gives them.
#[test]
fn embed_images_end_to_end_equals_transformers_processor_then_reference() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(r) = reference(tmp.path()) else {
        return;
    };
    let q = tmp.path().join("img");
    let script = repo_root().join("tests/hf/image_reference.py");
    if python(&[script.as_os_str(), q.as_os_str()]).is_none() {
        return;
    }
    // RGB PNGs, in the order a folder is read (sorted by name).
    let names = ["rgb_17x23", "rgb_301x203", "rgb_64x48"];
    let imgs = tmp.path().join("pngs");
    std::fs::create_dir_all(&imgs).unwrap();
    for n in names {
        std::fs::copy(
            q.join(format!("images/{n}.png")),
            imgs.join(format!("{n}.png")),
        )
        .unwrap();
    }
    for (model, config, side) in [("vit", "vit32", 32usize), ("dinov2", "dino48", 40)] {
        let out = tmp.path().join(format!("{model}.npy"));
        let said = ok(bin()
            .args(["--quiet", "embed", "--batch", "2", "--hf"])
            .arg(r.join(model))
            .arg("--images")
            .arg(&imgs)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap());
        assert!(
            said.contains(&format!("{model} (2 layers, width 32), pooling cls")),
            "{said}"
        );
        let (shape, got) = npy(&out);
        assert_eq!(shape, vec![3, 32]);
        // transformers' pixel values of the same files, stacked, through the numpy forward.
        let px: Vec<f32> = names
            .iter()
            .flat_map(|n| npy(&q.join(format!("pixel_values/{config}__{n}.png.npy"))).1)
            .collect();
        assert_eq!(px.len(), 3 * 3 * side * side);
        let px_file = tmp.path().join(format!("{model}_px.npy"));
        prh_core::formats::npy::write_npy(&px_file, &[3, 3, side, side], &px).unwrap();
        let want_file = tmp.path().join(format!("{model}_want.npy"));
        let fwd = repo_root().join("tests/hf/make_reference.py");
        python(&[
            fwd.as_os_str(),
            "--forward".as_ref(),
            r.join(model).as_os_str(),
            px_file.as_os_str(),
            want_file.as_os_str(),
        ])
        .expect("the forward of a folder make_reference.py wrote");
        let d = max_diff(&got, &npy(&want_file).1);
        assert!(
            d <= TOL,
            "{model}: PNG -> embed vs transformers processor -> reference: {d}"
        );
        println!("{model}: PNG files end to end within {d:.2e}");
    }
    // A text given to an image encoder, and a file that is not an image.
    let bad = tmp.path().join("bad.png");
    std::fs::write(&bad, b"not a png at all").unwrap();
    let e = fails(
        bin()
            .args(["embed", "--hf"])
            .arg(r.join("vit"))
            .arg("--images")
            .arg(&bad)
            .arg("--out")
            .arg(tmp.path().join("x.npy"))
            .output()
            .unwrap(),
    );
    assert!(e.contains("bad.png"), "{e}");
}
