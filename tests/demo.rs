//! Integration tests of `prh-native demo`: the quick demo runs end to end on the real
//! binary and writes a well-formed report (JSON keys present, every number finite,
//! embeddings with the documented shapes, SVGs, checkpoints), without touching files it
//! did not create.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_prh-native"))
}

/// Every number anywhere in `v` is finite (serde_json writes NaN/inf as null, so a null
/// where a number belongs is reported too, with its path).
fn assert_finite(v: &Value, path: &str) {
    match v {
        Value::Number(n) => assert!(
            n.as_f64().is_some_and(f64::is_finite),
            "{path} = {n} is not finite"
        ),
        Value::Null => panic!("{path} is null (a NaN or infinity?)"),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| assert_finite(x, &format!("{path}[{i}]"))),
        Value::Object(o) => o
            .iter()
            .for_each(|(k, x)| assert_finite(x, &format!("{path}.{k}"))),
        _ => {}
    }
}

fn npy_shape(path: &Path) -> Vec<u64> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    let shape = npy.shape().to_vec();
    let data: Vec<f64> = npy.into_vec().unwrap();
    assert!(
        data.iter().all(|x| x.is_finite()),
        "{} has non-finite values",
        path.display()
    );
    shape
}

#[test]
fn quick_demo_writes_a_well_formed_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("demo");
    std::fs::create_dir_all(&out).unwrap();
    // A file of "another run" in the folder must survive.
    std::fs::write(out.join("keep.txt"), "mine").unwrap();
    let run = bin()
        .args(["demo", "--quick", "--seed", "3", "--out"])
        .arg(&out)
        .output()
        .expect("run prh-native demo");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "demo failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    for needle in [
        "good views",
        "bad views",
        "Davis-Kahan",
        "learned",
        "predicted",
        "R@1",
    ] {
        assert!(
            stdout.contains(needle),
            "stdout lacks `{needle}`:\n{stdout}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(out.join("keep.txt")).unwrap(),
        "mine"
    );

    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let (d, n) = (
        report["d"].as_u64().unwrap(),
        report["n_states"].as_u64().unwrap(),
    );
    assert_eq!(
        (d, n),
        (8, 72),
        "quick world: 3 x 3 x 2 x 4 states, d = 2 + 2 + 1 + 3"
    );
    let theory = report["theory"].as_array().unwrap();
    let results = report["results"].as_array().unwrap();
    assert_eq!((theory.len(), results.len()), (2, 2));
    for (t, kind) in theory.iter().zip(["Good", "Bad"]) {
        assert_eq!(t["kind"], kind);
        for m in ["image", "text"] {
            let ev = t[m]["eigenvalues"].as_array().unwrap();
            assert_eq!(ev.len() as u64, d + 6);
            assert!(
                (ev[0].as_f64().unwrap() - 1.0).abs() < 1e-9,
                "trivial eigenvalue first"
            );
            assert!(t[m]["gap"].as_f64().unwrap() > 0.0);
        }
        for key in [
            "sin_theta_op",
            "sin_theta_fro",
            "principal_angles_deg",
            "e_op",
            "e_fro",
            "davis_kahan_bound",
            "yws_bound",
        ] {
            assert!(t["cross"].get(key).is_some(), "theory.cross lacks {key}");
        }
    }
    // Good views: one predicted subspace for both modalities; bad views: 3 of 8 differ.
    assert_eq!(theory[0]["cross"]["sin_theta_fro"].as_f64().unwrap(), 0.0);
    assert!((theory[1]["cross"]["sin_theta_fro"].as_f64().unwrap() - 3f64.sqrt()).abs() < 1e-12);
    for r in results {
        for key in ["image_vs_theory", "text_vs_theory", "learned", "predicted"] {
            assert!(r.get(key).is_some(), "results lack {key}");
        }
        for key in [
            "mutual_knn",
            "mutual_knn_null",
            "cka",
            "r1_image_to_text",
            "r1_text_to_image",
            "r1_chance",
        ] {
            let v = &r["learned"][key];
            assert!(!v.is_null(), "learned.{key} missing");
        }
        for key in [
            "cka",
            "sin_theta_op",
            "sin_theta_fro",
            "principal_angles_deg",
        ] {
            assert!(
                !r["image_vs_theory"][key].is_null(),
                "image_vs_theory.{key} missing"
            );
        }
        let r1 = r["learned"]["r1_image_to_text"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&r1));
    }
    // Predicted alignment: perfect for good views (rotation theorem), not for bad ones.
    assert_eq!(
        results[0]["predicted"]["r1_image_to_text"]
            .as_f64()
            .unwrap(),
        1.0
    );
    assert!(
        results[1]["predicted"]["r1_image_to_text"]
            .as_f64()
            .unwrap()
            < 1.0
    );
    // The bad views' Davis-Kahan bound may be inapplicable (null = no gap); everything
    // else must be a finite number.
    let mut numeric = report.clone();
    for t in numeric["theory"].as_array_mut().unwrap() {
        for key in ["davis_kahan_bound", "yws_bound"] {
            if t["cross"][key].is_null() {
                t["cross"][key] = Value::from(0.0);
            }
        }
    }
    assert_finite(&numeric, "results");

    for kind in ["good", "bad"] {
        for m in ["image", "text"] {
            assert_eq!(
                npy_shape(&out.join(format!("embeddings/{kind}_{m}.npy"))),
                vec![n, d]
            );
            let ckpt = out.join(format!("{kind}_{m}/latest.ckpt"));
            assert!(
                std::fs::metadata(&ckpt)
                    .map(|m| m.len() > 1000)
                    .unwrap_or(false),
                "{} missing",
                ckpt.display()
            );
            let metrics =
                std::fs::read_to_string(out.join(format!("{kind}_{m}/metrics.jsonl"))).unwrap();
            let last: Value = serde_json::from_str(metrics.lines().last().unwrap()).unwrap();
            assert_eq!(last["step"], 40);
            assert!(last["loss"].as_f64().unwrap().is_finite());
        }
    }
    let states: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("embeddings/states.json")).unwrap())
            .unwrap();
    assert_eq!(states.as_array().unwrap().len() as u64, n);
    for svg in ["spectrum.svg", "alignment.svg", "views.svg"] {
        let text = std::fs::read_to_string(out.join(svg)).unwrap();
        assert!(
            text.starts_with("<svg") && text.trim_end().ends_with("</svg>"),
            "{svg} is not an SVG document"
        );
    }
    let tok = std::fs::read_to_string(out.join("tokenizer.json")).unwrap();
    assert!(tok.contains("circle") && tok.contains("[MASK]"));
}

#[test]
fn demo_rejects_an_unusable_out_folder() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-folder");
    std::fs::write(&file, "x").unwrap();
    let run = bin()
        .args(["demo", "--quick", "--out"])
        .arg(&file)
        .output()
        .expect("run prh-native demo");
    assert!(!run.status.success());
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(
        err.contains("not-a-folder"),
        "error does not name the path: {err}"
    );
}
