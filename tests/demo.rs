//! Integration tests of `prh-native demo` and of the scene JEPAs under `prh-native train`:
//! the quick demo runs end to end on the real binary and writes a well-formed report (JSON
//! keys present, every number finite, embeddings with the documented shapes, SVGs, run
//! folders), without touching files it did not create; a scene run interrupted and
//! resumed logs exactly what an uninterrupted one logs; the shipped scene configs are the
//! demo's settings.

use prh_tests::{bin, configs};
use serde_json::Value;
use std::path::Path;

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
    // Symbols, then renderings; the theorem's objective, then the paper's; good then bad
    // views each.
    let runs: Vec<(&str, &str, &str)> = ["symbolic", "rendered"]
        .into_iter()
        .flat_map(|o| {
            [
                ("spectral", "good"),
                ("spectral", "bad"),
                ("sigreg", "good"),
                ("sigreg", "bad"),
            ]
            .map(|(l, k)| (o, l, k))
        })
        .collect();
    assert_eq!((theory.len(), results.len()), (2, runs.len()));
    // The baselines: per observation and view kind, untrained encoders, then the raw
    // observations (pixels / TF-IDF, one-hot codes).
    let baselines = report["baselines"].as_array().unwrap();
    assert_eq!(baselines.len(), 8);
    for (i, b) in baselines.iter().enumerate() {
        let knn = b["learned"]["mutual_knn"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&knn), "{b}");
        assert!(b["image_vs_theory"]["sin_theta_op"].as_f64().is_some());
        let (encoder, spectrum) = if i < 4 {
            ("random-init", true)
        } else {
            ("raw-input", false)
        };
        assert_eq!(b["encoder"], encoder, "{b}");
        assert_eq!(b.get("image_spectrum").is_some(), spectrum, "{b}");
    }
    // Raw inputs do not depend on the view kind; only their F does.
    for o in ["symbolic", "rendered"] {
        let raw: Vec<f64> = baselines
            .iter()
            .filter(|b| b["encoder"] == "raw-input" && b["observation"] == o)
            .map(|b| b["learned"]["mutual_knn"].as_f64().unwrap())
            .collect();
        assert_eq!(raw.len(), 2);
        assert_eq!(raw[0], raw[1], "{o}");
    }
    for (r, &(observation, loss, kind)) in results.iter().zip(&runs) {
        assert_eq!(
            (
                r["observation"].as_str(),
                r["loss"].as_str(),
                r["kind"].as_str()
            ),
            (Some(observation), Some(loss), Some(kind))
        );
        assert_eq!(r["theorem_applies"], true);
        for m in ["image_training", "text_training"] {
            let steps = r[m]["steps"].as_u64().unwrap();
            let curve = r[m]["curve"].as_array().unwrap();
            assert!(steps > 0 && !curve.is_empty(), "{m}: {}", r[m]);
            assert_eq!(curve.last().unwrap()["step"].as_u64(), Some(steps), "{m}");
        }
        // The last point of the curve is the final model: the report's own comparison.
        let last = r["image_training"]["curve"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        let final_cka = r["image_vs_theory"]["cka"].as_f64().unwrap();
        assert!((last["cka_to_theory"].as_f64().unwrap() - final_cka).abs() < 1e-9);
    }
    for (t, kind) in theory.iter().zip(["good", "bad"]) {
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
    // Both objectives are compared with the same prediction.
    assert_eq!(results[0]["predicted"], results[2]["predicted"]);
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

    for &(observation, loss, kind) in &runs {
        let (loss, kind) = (loss.to_lowercase(), kind.to_lowercase());
        let prefix = if observation == "symbolic" {
            "symbolic_"
        } else {
            ""
        };
        for m in ["image", "text"] {
            let run = format!("{prefix}{loss}_{kind}_{m}");
            assert_eq!(
                npy_shape(&out.join(format!("embeddings/{run}.npy"))),
                vec![n, d]
            );
            let ckpt = out.join(format!("{run}/checkpoints/latest.ckpt"));
            assert!(
                std::fs::metadata(&ckpt)
                    .map(|m| m.len() > 1000)
                    .unwrap_or(false),
                "{} missing",
                ckpt.display()
            );
            // Each encoder's folder is a `prh-native train` run folder.
            let cfg = std::fs::read_to_string(out.join(format!("{run}/config.toml"))).unwrap();
            assert!(cfg.contains(&format!("objective = \"{kind}\"")), "{cfg}");
            assert!(cfg.contains(&format!("kind = \"{loss}\"")), "{cfg}");
            assert_eq!(
                npy_shape(&out.join(format!("{run}/embeddings.npy"))),
                vec![n, d]
            );
            let metrics =
                std::fs::read_to_string(out.join(format!("{run}/metrics.jsonl"))).unwrap();
            let last: Value = serde_json::from_str(metrics.lines().last().unwrap()).unwrap();
            let steps = last["step"].as_u64().unwrap();
            let budget: u64 = cfg
                .lines()
                .find_map(|l| l.strip_prefix("steps = "))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or_else(|| panic!("no run.steps in {cfg}"));
            assert!(steps <= budget, "{run}: {steps} steps, budget {budget}");
            let symbolic = cfg.contains("observation = \"symbolic\"");
            // The rendered spectral bad-view caption runs train their whole budget (3x the
            // other caption runs', no plateau rule: experiments::demo::BadViewRuns).
            if run == "spectral_bad_text" {
                assert_eq!((steps, budget), (120, 120), "{run}");
                assert!(cfg.contains("plateau_window = 0"), "{cfg}");
            } else {
                assert!(budget <= 60, "budget of the quick demo: {budget}");
            }
            assert_eq!(symbolic, !prefix.is_empty(), "{cfg}");
            assert!(last["loss"].as_f64().unwrap().is_finite());
        }
    }
    let states: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("embeddings/states.json")).unwrap())
            .unwrap();
    assert_eq!(states.as_array().unwrap().len() as u64, n);
    for svg in [
        "spectrum.svg",
        "alignment.svg",
        "convergence.svg",
        "views.svg",
    ] {
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

/// The metrics lines of a run folder without the wall-clock throughput (the only field
/// that may differ between two runs of the same config).
fn metrics_without_time(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap();
    text.lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("items_per_s");
            v
        })
        .collect()
}

fn train_ok(args: &[&str], dir: &Path) {
    let run = bin()
        .arg("train")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "train {args:?} failed:\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

/// Issue 5's resume contract for the scene JEPAs (issue 7): on CPU, a run stopped after
/// its step-3 checkpoint and continued with `--resume` logs exactly the metrics of an
/// uninterrupted run and ends with the same embeddings export, for the image and the
/// caption task, and for the picture encoder with a closed-form head (solved when the run
/// completes: resuming the complete run solves it again to the same embeddings).
#[test]
fn scene_runs_resume_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let configs = configs();
    for name in ["image-good", "caption-bad", "image-good-spectral"] {
        let cfg = configs.join(format!("{name}.toml"));
        let cfg = cfg.to_str().unwrap();
        // A small world and short run so the test takes seconds in debug.
        let small = [
            "--set",
            "world.cardinality=[3, 3, 2, 4]",
            "--set",
            "views.batch_size=12",
            "--set",
            "loss.slices=32",
            "--set",
            "run.steps=6",
            "--set",
            "run.log_every=1",
            "--set",
            "run.checkpoint_every=3",
        ];
        let mut small = small.to_vec();
        if name.ends_with("spectral") {
            small.extend(["--set", "image.head_pairs=256"]);
        }
        let full = format!("{name}-full");
        let part = format!("{name}-part");
        let mut args = vec!["--config", cfg, "--out", &full];
        args.extend(&small);
        train_ok(&args, dir.path());
        let mut args = vec!["--config", cfg, "--out", &part, "--set", "run.stop_at=3"];
        args.extend(&small);
        train_ok(&args, dir.path());
        assert_eq!(metrics_without_time(&dir.path().join(&part)).len(), 3);
        train_ok(&["--resume", &part], dir.path());
        let (a, b) = (dir.path().join(&full), dir.path().join(&part));
        let full_metrics = metrics_without_time(&a);
        assert_eq!(full_metrics.len(), 6);
        assert_eq!(full_metrics, metrics_without_time(&b), "{name}");
        let emb = |d: &Path| std::fs::read(d.join("embeddings.npy")).unwrap();
        assert_eq!(emb(&a), emb(&b), "{name}: embeddings differ");
        assert_eq!(npy_shape(&a.join("embeddings.npy")), vec![72, 8]);
        let ids = std::fs::read_to_string(a.join("embeddings_ids.txt")).unwrap();
        assert_eq!(ids.lines().count(), 72);
        assert!(a.join("checkpoints/latest.ckpt").exists());
        let resolved = std::fs::read_to_string(a.join("config.toml")).unwrap();
        assert!(resolved.contains("out_dim = 8"), "d resolved: {resolved}");
        if name.ends_with("spectral") {
            let before = emb(&a);
            train_ok(&["--resume", &full], dir.path());
            assert_eq!(emb(&a), before, "re-finishing a complete run changed it");
        }
    }
}

/// The shipped configs are the demo's four runs: one way to configure the scene JEPAs.
#[test]
fn scene_configs_are_the_demo_settings() {
    use prh_core::experiments::demo::DemoConfig;
    use prh_core::scene::Modality;
    use prh_core::tasks::scene::Observation;
    use prh_core::tasks::scene::SceneTrainConfig;
    use prh_core::theory::view_kind::ViewKind;
    use prh_core::train::config::LossKind;
    let demo = DemoConfig::full(0);
    let configs = configs();
    for (file, m, kind) in [
        ("image-good", Modality::Image, ViewKind::Good),
        ("image-bad", Modality::Image, ViewKind::Bad),
        ("caption-good", Modality::Text, ViewKind::Good),
        ("caption-bad", Modality::Text, ViewKind::Bad),
    ] {
        for (suffix, loss) in [("", LossKind::Sigreg), ("-spectral", LossKind::Spectral)] {
            let file = format!("{file}{suffix}");
            let path = configs.join(format!("{file}.toml"));
            let text = std::fs::read_to_string(&path).unwrap();
            let cfg = SceneTrainConfig::from_toml(&file, &text, &[]).unwrap();
            assert_eq!(
                cfg,
                demo.run_config(m, kind, loss, Observation::Rendered),
                "{file}"
            );
        }
    }
}

/// Scene configs get the text config's error messages: an unknown key names the file and
/// the nearest valid key; a text-only objective is refused by field.
#[test]
fn scene_config_errors_name_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = configs().join("image-good.toml");
    for (set, needles) in [
        (
            "image.patchh=2",
            vec!["image-good.toml", "did you mean `patch`?"],
        ),
        ("run.objective=next-token", vec!["run.objective", "good"]),
        ("image.patch=5", vec!["image", "divide"]),
        // image-good.toml trains with SIGReg: the closed-form head is the spectral loss's.
        (
            "image.features=33",
            vec!["image-good.toml", "image.features", "spectral loss"],
        ),
        (
            "image.features=5",
            vec!["image.features = 5", "at least image.out_dim"],
        ),
    ] {
        let run = bin()
            .args(["train", "--config"])
            .arg(&cfg)
            .args(["--set", set, "--out"])
            .arg(dir.path().join("x"))
            .output()
            .unwrap();
        assert!(!run.status.success(), "{set} accepted");
        let err = String::from_utf8_lossy(&run.stderr);
        for n in needles {
            assert!(err.contains(n), "{set}: `{n}` not in {err}");
        }
    }
}
