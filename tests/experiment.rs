//! `prh-native experiment {views-multilingual, views-vision, scaling} --quick` end to end on
//! the real Multi30k / ImageNet / WordNet files: the report folder is complete and every number in it is finite and in range.
//! The scientific outcome (which objective aligns more) is never asserted here.

use prh_tests::{bin, data_dir};
use std::path::PathBuf;

fn finite_in(v: &serde_json::Value, lo: f64, hi: f64, what: &str) {
    let x = v
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: not a number: {v}"));
    assert!(x.is_finite() && (lo..=hi).contains(&x), "{what} = {x}");
}

#[test]
fn quick_views_multilingual_writes_a_well_formed_report() {
    let Some(data) = data_dir() else { return };
    let out = tempfile::tempdir().unwrap();
    let (results, _) = run_quick("views-multilingual", &data, out.path(), &[]);
    let (n_fit, n_test) = (
        results["n_fit"].as_u64().unwrap(),
        results["n_test"].as_u64().unwrap(),
    );
    assert_eq!((n_fit, n_test), (150, 150));
    let runs = results["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3, "3 objectives x 1 seed");
    for r in runs {
        let curve = r["curve"].as_array().unwrap();
        // Step 0 (initialisation), step 6 and the last step 12.
        let steps: Vec<u64> = curve.iter().map(|p| p["step"].as_u64().unwrap()).collect();
        assert_eq!(steps, [0, 6, 12], "{}", r["objective"]);
        for p in curve {
            finite_in(&p["mutual_knn"], 0.0, 1.0, "mutual_knn");
            finite_in(&p["cka"], 0.0, 1.0 + 1e-9, "cka");
            finite_in(&p["r1_a_to_b"], 0.0, 1.0, "r1");
            finite_in(&p["r1_b_to_a"], 0.0, 1.0, "r1");
        }
        let last = curve.last().unwrap();
        finite_in(&last["null_mean"], 0.0, 1.0, "null_mean");
        // The random initialisation (step 0) is a baseline row: it gets the null too.
        finite_in(&curve[0]["null_mean"], 0.0, 1.0, "null_mean at step 0");
        assert!(curve[1]["null_mean"].is_null(), "no null in between");
        // Within each language, caption 1 vs caption 2 of the test images.
        for p in curve {
            let pairs = p["pairs"].as_array().expect("pairs at every point");
            assert_eq!(pairs.len(), 2);
            for side in pairs {
                for key in ["mutual_knn", "cka", "r1", "r5"] {
                    finite_in(&side[key], 0.0, 1.0 + 1e-9, key);
                }
            }
        }
        for l in r["final_loss"].as_array().unwrap() {
            assert!(l.as_f64().unwrap().is_finite());
        }
    }
    let summary = results["summary"].as_array().unwrap();
    let labels: Vec<&str> = summary
        .iter()
        .map(|s| s["objective"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "good",
            "bad",
            "next-token",
            "random init",
            "TF-IDF",
            "closed form, good",
            "closed form, bad"
        ]
    );
    // The closed-form encoders (the spectral loss's exact minimiser over linear maps of
    // TF-IDF): one good-view fit (deterministic), one bad-view fit per seed, each with
    // reached values in [0, 1] decreasing from the first to the d-th.
    let closed = results["closed_form"].as_array().unwrap();
    assert_eq!(closed.len(), 2, "good once + bad for one seed");
    for c in closed {
        finite_in(
            &c["point"]["mutual_knn"],
            0.0,
            1.0,
            "closed-form mutual k-NN",
        );
        for side in c["reached_values"].as_array().unwrap() {
            let (top, last) = (side[0].as_f64().unwrap(), side[1].as_f64().unwrap());
            assert!((0.0..=1.0 + 1e-9).contains(&top) && last <= top, "{side}");
        }
    }
    // The random-init row is the good-view runs' step 0.
    assert_eq!(
        summary[3]["mutual_knn"]["mean"].as_f64(),
        runs[0]["curve"][0]["mutual_knn"].as_f64()
    );
    // TF-IDF shares surface words across the two languages' *own* vocabularies only
    // through structure: it must be measured, not zeroed by the clamp (a zeroed input
    // scores mutual k-NN 1 from ties).
    let tfidf = &results["tfidf"];
    finite_in(&tfidf["mutual_knn"], 0.0, 0.9, "TF-IDF mutual k-NN");
    finite_in(&tfidf["pairs"][0]["r1"], 0.05, 1.0, "TF-IDF en caption R@1");
    for s in summary {
        for key in ["mutual_knn", "cka", "r1_a_to_b", "null_mean"] {
            finite_in(&s[key]["mean"], 0.0, 1.0 + 1e-9, key);
            // One seed: no spread.
            assert_eq!(s[key]["std"].as_f64(), Some(0.0));
        }
    }
    // Web demo data: seed 0's test-set embeddings per objective and language, in
    // test_ids.txt order; scoring the exported files with `prh-native metrics` gives the
    // final point of results.json (same rows, same metric options).
    let export = out.path().join("export");
    let ids = std::fs::read_to_string(export.join("test_ids.txt")).unwrap();
    assert_eq!(ids.lines().count(), 150);
    for (r, obj) in runs.iter().zip(["good", "bad", "next-token"]) {
        assert_eq!(r["objective"], obj);
        let files = ["en", "de"].map(|l| export.join(format!("{obj}.{l}.test.npy")));
        let m = bin()
            .arg("metrics")
            .args(&files)
            .args(["--json", "--null", "0"])
            .output()
            .unwrap();
        assert!(m.status.success(), "{}", String::from_utf8_lossy(&m.stderr));
        let m: serde_json::Value = serde_json::from_slice(&m.stdout).unwrap();
        assert_eq!(m["n"].as_u64(), Some(150));
        let last = r["curve"].as_array().unwrap().last().unwrap();
        assert_eq!(
            m["mutual_knn"].as_f64(),
            last["mutual_knn"].as_f64(),
            "{obj}"
        );
        let (cka, want) = (m["cka"].as_f64().unwrap(), last["cka"].as_f64().unwrap());
        assert!((cka - want).abs() < 1e-12, "{obj}: cka {cka} vs {want}");
    }
    for lang in ["en", "de"] {
        let model = std::fs::read(export.join(format!("good.{lang}.prh.safetensors"))).unwrap();
        let (_, meta) = safetensors::SafeTensors::read_metadata(&model).unwrap();
        assert_eq!(
            meta.metadata().as_ref().unwrap()["format"],
            "prh-text-encoder"
        );
    }
    assert!(!export.join("bad.en.prh.safetensors").exists());

    let md = std::fs::read_to_string(out.path().join("report.md")).unwrap();
    assert!(md.contains("| objective | mutual k-NN"));
    for obj in [
        "| good |",
        "| bad |",
        "| next-token |",
        "| random init |",
        "| TF-IDF |",
    ] {
        assert!(md.contains(obj), "{obj} missing from report.md");
    }
    assert!(md.contains("en cap 1 vs 2: mutual k-NN"));
    let command = results["command"].as_str().unwrap();
    assert!(
        command.starts_with("prh-native experiment views-multilingual"),
        "{command}"
    );
    for key in ["mutual_knn", "cka", "r1"] {
        let svg = std::fs::read_to_string(out.path().join(format!("alignment_{key}.svg"))).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(
            svg.matches("<polyline").count(),
            3,
            "{key}: one line per objective"
        );
        assert!(!svg.contains("NaN"), "{key}: NaN coordinate");
    }
}

#[test]
fn unknown_experiment_and_bad_override_are_named() {
    let out = tempfile::tempdir().unwrap();
    let o = bin()
        .args(["experiment", "nope", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("views-multilingual")
            && err.contains("views-vision")
            && err.contains("scaling"),
        "{err}"
    );
    let o = bin()
        .args([
            "experiment",
            "views-multilingual",
            "--quick",
            "--set",
            "steps=3",
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("steps=3") && err.contains("experiment."),
        "{err}"
    );
}

/// The data dir when it also holds the ImageNet class files, and WordNet is installed.
fn vision_data() -> Option<PathBuf> {
    let dir = data_dir()?;
    if !dir
        .join("imagenet/efficientnet_lite0_fc_weight.npy")
        .exists()
    {
        eprintln!("skipped: no imagenet/ under the data dir");
        return None;
    }
    if !std::path::Path::new("/usr/share/wordnet/data.noun").exists() {
        eprintln!("skipped: no /usr/share/wordnet/data.noun (Debian wordnet-base)");
        return None;
    }
    Some(dir)
}

/// `prh-native experiment NAME --quick --out OUT --data DATA [--set k=v ...]`; asserts it
/// succeeded and returns results.json and the command's stderr.
fn run_quick(
    name: &str,
    data: &std::path::Path,
    out: &std::path::Path,
    sets: &[&str],
) -> (serde_json::Value, String) {
    let o = bin()
        .args(["experiment", name, "--quick", "--out"])
        .arg(out)
        .arg("--data")
        .arg(data)
        .args(sets.iter().flat_map(|kv| ["--set", kv]))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{name} --quick failed: {err}");
    let results =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    (results, err)
}

fn svg_ok(path: &std::path::Path, lines: usize, tag: &str) {
    let svg = std::fs::read_to_string(path).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches(tag).count(), lines, "{}", path.display());
    assert!(!svg.contains("NaN"), "{}: NaN coordinate", path.display());
}

#[test]
fn quick_views_vision_writes_report_and_web_exports() {
    let Some(data) = vision_data() else { return };
    let out = tempfile::tempdir().unwrap();
    let (r, _) = run_quick("views-vision", &data, out.path(), &[]);
    assert_eq!(r["imagenet_synsets_left_out"].as_u64(), Some(1000));
    let summary = r["summary"].as_array().unwrap();
    let rows: Vec<&str> = summary.iter().map(|s| s["row"].as_str().unwrap()).collect();
    assert_eq!(
        rows,
        [
            "good",
            "bad",
            "next-token",
            "random init",
            "TF-IDF",
            "closed form, good",
            "closed form, bad"
        ]
    );
    for s in &summary[5..] {
        finite_in(
            &s["stats"]["mutual_knn"]["mean"],
            0.0,
            1.0,
            "closed-form mutual k-NN",
        );
    }
    // TF-IDF of the class texts ("lemmas: definition") is measured, not zeroed by the
    // clamp: the published full-size value is 0.228, far above chance (0.010).
    finite_in(
        &summary[4]["stats"]["mutual_knn"]["mean"],
        0.05,
        0.9,
        "TF-IDF mutual k-NN",
    );
    for s in summary {
        for key in [
            "mutual_knn",
            "null_mean",
            "cka",
            "r1_t2i",
            "r5_t2i",
            "r1_i2t",
            "r5_i2t",
            "match_top1",
            "match_top5",
        ] {
            finite_in(&s["stats"][key]["mean"], 0.0, 1.0 + 1e-9, key);
        }
        assert_eq!(s["stats"]["match_chance"]["mean"].as_f64(), Some(0.01));
        // GW(truth) / GW(found): a positive finite ratio of two objectives.
        finite_in(
            &s["stats"]["match_truth_ratio"]["mean"],
            1e-6,
            1e6,
            "match_truth_ratio",
        );
    }
    for run in r["runs"].as_array().unwrap() {
        let steps: Vec<u64> = run["curve"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p[0].as_u64().unwrap())
            .collect();
        assert_eq!(steps, [0, 6, 12]);
        let last = &run["curve"][2][1];
        assert_eq!(
            (last["n_fit"].as_u64(), last["n_test"].as_u64()),
            (Some(900), Some(100))
        );
    }
    let md = std::fs::read_to_string(out.path().join("report.md")).unwrap();
    for row in [
        "| good |",
        "| bad |",
        "| next-token |",
        "| random init |",
        "| TF-IDF |",
    ] {
        assert!(md.contains(row), "{row} missing from report.md");
    }
    for key in ["mutual_knn", "cka", "r5"] {
        svg_ok(
            &out.path().join(format!("alignment_{key}.svg")),
            3,
            "<polyline",
        );
    }
    // Web exports: the model bundle and the class map of each objective.
    for obj in ["good", "bad", "next-token"] {
        let dir = out.path().join("export");
        let model = std::fs::read(dir.join(format!("{obj}.prh.safetensors"))).unwrap();
        let (_, meta) = safetensors::SafeTensors::read_metadata(&model).unwrap();
        assert_eq!(
            meta.metadata().as_ref().unwrap()["format"],
            "prh-text-encoder"
        );
        let bytes = std::fs::read(dir.join(format!("{obj}.imagenet.safetensors"))).unwrap();
        let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
        let cv = st.tensor("class_vectors").unwrap();
        assert_eq!(cv.shape(), [1000, 64]);
        assert_eq!(st.tensor("text_mean").unwrap().shape(), [64]);
        let vals: Vec<f32> = cv
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        // Rows are unit vectors.
        for row in vals.chunks_exact(64) {
            let n: f32 = row.iter().map(|x| x * x).sum::<f32>().sqrt();
            assert!((n - 1.0).abs() < 1e-4, "class vector norm {n}");
        }
        let (_, meta) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
        let meta = meta.metadata().clone().unwrap();
        let classes: Vec<String> = serde_json::from_str(&meta["classes"]).unwrap();
        assert_eq!((classes.len(), classes[0].as_str()), (1000, "tench"));
        let fit: serde_json::Value = serde_json::from_str(&meta["fit"]).unwrap();
        assert_eq!(fit["n_fit"].as_u64(), Some(900));
        // The class-text embeddings, row i beside EfficientNet-Lite0's row i: `metrics` on
        // the two files reproduces the report's own final mutual 10-NN and CKA (same
        // clamp, normalisation and k), so a reader can take the pair to any other tool.
        let emb = dir.join(format!("{obj}.class_texts.npy"));
        let o = bin()
            .args(["metrics", "--json", "--null", "0", "--quiet"])
            .arg(&emb)
            .arg(data.join("imagenet/efficientnet_lite0_fc_weight.npy"))
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "metrics on {}: {}",
            emb.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        let m: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(m["n"].as_u64(), Some(1000));
        let run = r["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|run| run["objective"] == obj && run["seed"] == 0)
            .unwrap();
        let last = &run["curve"][2][1];
        for key in ["mutual_knn", "cka"] {
            let (a, b) = (m[key].as_f64().unwrap(), last[key].as_f64().unwrap());
            assert!(
                (a - b).abs() < 1e-6,
                "{obj} {key}: metrics {a} vs report {b}"
            );
        }
    }
}

#[test]
fn quick_scaling_fits_a_law_and_plots_it() {
    let Some(data) = vision_data() else { return };
    let out = tempfile::tempdir().unwrap();
    let (r, _) = run_quick("scaling", &data, out.path(), &[]);
    let curves = r["curves"].as_array().unwrap();
    assert_eq!(curves.len(), 2, "good and next-token");
    for c in curves {
        let samples: Vec<f64> = c["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(samples, [8.0, 16.0, 24.0, 32.0, 48.0], "budgets x batch 8");
        for y in c["mutual_knn"].as_array().unwrap() {
            finite_in(y, 0.0, 1.0, "mutual_knn");
        }
        finite_in(&c["init_mutual_knn"], 0.0, 1.0, "init");
        // Five points always admit a least-squares law; its parameters are finite.
        for key in ["a", "b", "c", "rmse"] {
            assert!(c["law"][key].as_f64().unwrap().is_finite(), "law.{key}");
        }
        assert!(c["held_out_predicted"].as_f64().unwrap().is_finite());
        assert_eq!(c["held_out_samples"].as_f64(), Some(48.0));
        // One seed: each budget's seed list has one run equal to the mean, std 0, and the
        // held-out seed range is that run.
        let per_seed = c["seed_mutual_knn"].as_array().unwrap();
        assert_eq!(per_seed.len(), 5);
        for (v, m) in per_seed.iter().zip(c["mutual_knn"].as_array().unwrap()) {
            assert_eq!(v.as_array().unwrap(), &vec![m.clone()]);
        }
        assert!(
            c["mutual_knn_std"]
                .as_array()
                .unwrap()
                .iter()
                .all(|s| s == 0.0)
        );
        assert_eq!(c["held_out_seed_range"][0], c["held_out_observed"]);
        assert!(c["held_out_within_seed_range"].is_boolean());
        assert!(c["rises"].is_boolean());
    }
    // One seed: every bootstrap draw is that seed, so the interval is one point (or no
    // draw crosses at all).
    let eff = &r["efficiency"];
    assert_eq!(eff["bootstrap_draws"], 2000);
    match eff["sample_ratio_bootstrap_95"].as_array() {
        Some(v) => {
            assert_eq!(v[0], v[1]);
            assert_eq!(v[0], eff["sample_ratio_observed"]);
        }
        None => assert_eq!(eff["bootstrap_no_crossing"], 2000),
    }
    assert!(
        r["efficiency"]["next_token_best"]
            .as_f64()
            .unwrap()
            .is_finite()
    );
    assert_eq!(r["points"].as_array().unwrap().len(), 10);
    let md = std::fs::read_to_string(out.path().join("report.md")).unwrap();
    assert!(md.contains("Sample efficiency") && md.contains("| good | 8 |"));
    svg_ok(&out.path().join("alignment_vs_samples.svg"), 2, "<polyline");
}

/// The multilingual measure: en and de encoders trained apart per budget; every point
/// carries the views-multilingual scores (mutual k-NN with its null, CKA, R@1).
#[test]
fn quick_scaling_multilingual_trains_both_languages_per_budget() {
    let Some(data) = data_dir() else { return };
    let out = tempfile::tempdir().unwrap();
    let sets = [
        "experiment.scaling.measure=\"multilingual\"",
        "train.data.max_groups=200",
        "experiment.fit_groups=60",
        "experiment.test_groups=60",
        // Next-token gets budgets of its own.
        "experiment.scaling.objective_budgets={next-token=[2,3,5,7,9]}",
        // The law from the 2nd budget on.
        "experiment.scaling.fit_from=1",
    ];
    let (r, err) = run_quick("scaling", &data, out.path(), &sets);
    // Both languages train at every budget.
    assert_eq!(err.matches("good seed 0 de:").count(), 5, "{err}");
    let samples = |i: usize| r["curves"][i]["samples"].clone();
    assert_eq!(samples(0), serde_json::json!([8.0, 16.0, 24.0, 32.0, 48.0]));
    assert_eq!(
        samples(1),
        serde_json::json!([16.0, 24.0, 40.0, 56.0, 72.0])
    );
    assert_eq!(r["measure"], "multilingual");
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 10, "2 objectives x 5 budgets x 1 seed");
    for p in points {
        let s = &p["scores"];
        finite_in(&s["mutual_knn"], 0.0, 1.0, "mutual_knn");
        finite_in(&s["null_mean"], 0.0, 1.0, "null_mean");
        finite_in(&s["cka"], 0.0, 1.0 + 1e-9, "cka");
        finite_in(&s["r1_a_to_b"], 0.0, 1.0, "r1");
        assert_eq!(s["step"], p["steps"], "the score is the run's last step");
    }
    for c in r["curves"].as_array().unwrap() {
        finite_in(&c["init_mutual_knn"], 0.0, 1.0, "init");
        assert!(c["law"]["a"].as_f64().unwrap().is_finite());
    }
    let md = std::fs::read_to_string(out.path().join("report.md")).unwrap();
    assert!(md.contains("English and a German encoder"), "{md}");
    // --from-results rebuilds the same analysis from the recorded runs, training nothing,
    // and names the command that trained them.
    let from_results = |extra: &[&str]| {
        let o = bin()
            .args([
                "experiment",
                "scaling",
                "--quick",
                "--from-results",
                "--out",
            ])
            .arg(out.path())
            .arg("--data")
            .arg(&data)
            .args(sets.iter().chain(extra).flat_map(|kv| ["--set", kv]))
            .output()
            .unwrap();
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (ok, err2) = from_results(&[]);
    assert!(ok, "{err2}");
    assert!(!err2.contains("seed 0 de:"), "trained again: {err2}");
    let r2: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.path().join("results.json")).unwrap()).unwrap();
    assert_eq!(r2["curves"], r["curves"]);
    assert_eq!(r2["efficiency"], r["efficiency"]);
    assert_eq!(r2["points"], r["points"]);
    assert_eq!(r2["trained_by"], r["command"]);
    // Budgets that were not trained are named.
    let (ok, err3) = from_results(&["experiment.scaling.budgets=[1,2,3,4,5]"]);
    assert!(!ok && err3.contains("5 steps"), "{err3}");
    svg_ok(&out.path().join("alignment_vs_samples.svg"), 2, "<polyline");
}

#[test]
fn unknown_scaling_measure_is_named() {
    let o = bin()
        .args([
            "experiment",
            "scaling",
            "--quick",
            "--set",
            "experiment.scaling.measure=\"audio\"",
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("experiment.scaling.measure") && err.contains("audio"),
        "{err}"
    );
    // Too few budgets for one objective, or budgets not ascending, are refused.
    for (set, needle) in [
        (
            "experiment.scaling.objective_budgets={next-token=[1,2]}",
            "objective_budgets.next-token",
        ),
        ("experiment.scaling.budgets=[1,2,2,4,5]", "ascending"),
        // Fitting from the 4th of 5 budgets leaves one (the 5th is held out).
        ("experiment.scaling.fit_from=3", "fit_from = 3 leave 1"),
    ] {
        let o = bin()
            .args(["experiment", "scaling", "--quick", "--set", set])
            .output()
            .unwrap();
        assert!(!o.status.success(), "{set}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{set}: {err}");
    }
}

/// Writes side `side` of a generated pair of multi-view corpora: `n` groups per split
/// (ids shared by both sides), each with 3 texts describing one of 6 scenes (an animal and
/// a place) in that side's own words, so the two sides share meaning but no token.
fn write_paired_corpus(dir: &std::path::Path, side: usize, n: usize) {
    let animals = [["dog", "hound"], ["chien", "toutou"]];
    let more = [["cat", "horse", "bird"], ["chat", "cheval", "oiseau"]];
    let places = [["beach", "park"], ["plage", "parc"]];
    let verbs = [
        ["runs on the", "plays in the", "sits by the"],
        ["court sur la", "joue dans le", "reste pres de la"],
    ];
    for (split, offset) in [("train", 0), ("val", 10_000), ("test", 20_000)] {
        let mut lines = String::new();
        for g in 0..n {
            let scene = (g * 7 + offset) % 12;
            let (a, p) = (scene % 4, scene / 4 % 2);
            let animal = if a < 1 {
                animals[side][g % 2]
            } else {
                more[side][a - 1]
            };
            let texts: Vec<String> = (0..3)
                .map(|t| {
                    format!(
                        "a {animal} {} {}",
                        verbs[side][(g + t) % 3],
                        places[side][p]
                    )
                })
                .collect();
            lines.push_str(
                &serde_json::json!({"id": format!("{split}-{g}"), "texts": texts}).to_string(),
            );
            lines.push('\n');
        }
        std::fs::write(dir.join(format!("side{side}.{split}.jsonl")), lines).unwrap();
    }
}

/// Both sides of a generated pair of corpora (60 groups per split) in `dir`, and the
/// `--set` that names them.
fn paired_corpora(dir: &std::path::Path) -> String {
    for side in 0..2 {
        write_paired_corpus(dir, side, 60);
    }
    format!(
        "experiment.corpora=[\"{}\", \"{}\"]",
        dir.join("side0.{split}.jsonl").display(),
        dir.join("side1.{split}.jsonl").display()
    )
}

#[test]
fn views_multilingual_reads_any_two_jsonl_corpora_that_share_group_ids() {
    let dir = tempfile::tempdir().unwrap();
    let corpora = paired_corpora(dir.path());
    let out = dir.path().join("out");
    let o = bin()
        .args(["experiment", "views-multilingual", "--quick", "--out"])
        .arg(&out)
        .args(["--set", &corpora])
        .args([
            "--set",
            "experiment.test_split=test",
            "--set",
            "experiment.langs=[\"a\", \"b\"]",
        ])
        .args([
            "--set",
            "experiment.fit_groups=40",
            "--set",
            "experiment.test_groups=40",
        ])
        .args([
            "--set",
            "experiment.objectives=[\"good\"]",
            "--set",
            "train.tokenizer.vocab_size=100",
        ])
        .env_remove("PRH_DATA")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(r["n_fit"].as_u64(), Some(40));
    assert_eq!(r["n_test"].as_u64(), Some(40));
    let last = r["runs"][0]["curve"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    finite_in(&last["mutual_knn"], 0.0, 1.0, "mutual_knn");
    finite_in(&last["pairs"][1]["r1"], 0.0, 1.0, "side b pair R@1");
    // TF-IDF: the sides share no word, so each side's TF-IDF rows are exact functions of the
    // scene, and scenes repeat: their neighbourhoods agree far above chance (10/39).
    finite_in(&r["tfidf"]["mutual_knn"], 0.4, 1.0, "TF-IDF mutual k-NN");

    // A side whose test groups have one text cannot give the caption-vs-caption score.
    std::fs::write(
        dir.path().join("side1.test.jsonl"),
        "{\"id\": \"test-0\", \"texts\": [\"un chien\"]}\n",
    )
    .unwrap();
    let o = bin()
        .args(["experiment", "views-multilingual", "--quick", "--out"])
        .arg(&out)
        .args(["--set", &corpora, "--set", "experiment.test_split=test"])
        .env_remove("PRH_DATA")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("side1.test.jsonl") && err.contains("test-0") && err.contains("texts"),
        "{err}"
    );
}

#[test]
fn quick_text_ablation_scores_each_row_against_the_baselines() {
    let Some(data) = data_dir() else { return };
    let out = tempfile::tempdir().unwrap();
    let (r, _) = run_quick("text-ablation", &data, out.path(), &[]);
    let rows = r["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "2 rows x 1 seed");
    for row in rows {
        for key in ["mutual_knn", "r1"] {
            finite_in(&row["pair"][key], 0.0, 1.0, key);
            finite_in(&row["pair_init"][key], 0.0, 1.0, key);
        }
        assert_eq!(row["steps"].as_u64(), Some(12));
    }
    assert!(rows[0]["cross"].is_null());
    finite_in(
        &rows[1]["cross"]["mutual_knn"],
        0.0,
        1.0,
        "cross mutual_knn",
    );
    assert_eq!(r["heldout_split"], "val");
    finite_in(&r["tfidf"]["pairs"][0]["r1"], 0.05, 1.0, "TF-IDF pair R@1");
    let md = std::fs::read_to_string(out.path().join("report.md")).unwrap();
    assert!(
        md.contains("| TF-IDF (no training) |") && md.contains("| bag of embeddings, spectral |")
    );
}

/// The JSON leaves of `v` by path, leaving out what differs between two runs of one
/// experiment by design: timings (`*_s`, `seconds`) and the command line (`--out`).
fn numbers_but_times(v: &serde_json::Value, path: &str, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                if k.ends_with("_s") || k == "seconds" || k == "command" {
                    continue;
                }
                numbers_but_times(x, &format!("{path}.{k}"), out);
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                numbers_but_times(x, &format!("{path}[{i}]"), out);
            }
        }
        leaf => out.push((path.to_string(), leaf.to_string())),
    }
}

/// The rule "never lost work" for experiments: an experiment killed with SIGKILL in the
/// middle of a run continues, when the same command is run again, from that run's last
/// checkpoint in OUT/partial (not from its start), and its results equal an
/// uninterrupted run's in every number, to the last bit; OUT/partial is gone once the
/// report is written.
#[test]
fn killed_experiment_continues_from_its_checkpoints_to_the_same_numbers() {
    use std::time::{Duration, Instant};
    const STEPS: u64 = 300;
    let dir = tempfile::tempdir().unwrap();
    let corpora = paired_corpora(dir.path());
    let cmd = |out: &std::path::Path| {
        let mut c = bin();
        c.args(["experiment", "views-multilingual", "--quick", "--out"])
            .arg(out)
            .args(["--set", &corpora, "--set", "experiment.test_split=test"])
            .args(["--set", "experiment.langs=[\"a\", \"b\"]"])
            .args(["--set", "experiment.fit_groups=40"])
            .args(["--set", "experiment.test_groups=40"])
            .args(["--set", "experiment.objectives=[\"good\"]"])
            .args(["--set", "experiment.eval_every=100"])
            .args(["--set", "train.tokenizer.vocab_size=100"])
            .args(["--set", &format!("train.run.steps={STEPS}")])
            .args(["--set", "train.run.checkpoint_every=10"])
            .env_remove("PRH_DATA")
            .current_dir(dir.path());
        c
    };
    let results = |out: &std::path::Path| {
        let r: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
        let mut leaves = Vec::new();
        numbers_but_times(&r, "", &mut leaves);
        leaves
    };

    let whole = dir.path().join("whole");
    let o = cmd(&whole).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!whole.join("partial").exists(), "OUT/partial left behind");

    // Killed once some run's checkpoint is mid-way (its progress.json between the first
    // checkpoint and the last steps), then run again to the end.
    let killed = dir.path().join("killed");
    let mut child = cmd(&killed)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mid_way = |partial: &std::path::Path| -> Option<u64> {
        std::fs::read_dir(partial).ok()?.find_map(|e| {
            let p = e.ok()?.path().join("progress.json");
            let v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).ok()?).ok()?;
            v["step"].as_u64().filter(|s| (10..STEPS - 30).contains(s))
        })
    };
    let t0 = Instant::now();
    let step = loop {
        if let Some(s) = mid_way(&killed.join("partial")) {
            break s;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before a mid-way checkpoint was seen: nothing was killed"
        );
        assert!(
            t0.elapsed() < Duration::from_secs(600),
            "no checkpoint in 10 minutes"
        );
        std::thread::sleep(Duration::from_millis(2));
    };
    child.kill().unwrap(); // SIGKILL: no handler, no flush
    child.wait().unwrap();
    assert!(!killed.join("results.json").exists());

    let o = cmd(&killed).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("continuing from step"),
        "the second run did not continue a checkpoint (killed at step {step}): {err}"
    );
    assert!(!killed.join("partial").exists(), "OUT/partial left behind");
    let (a, b) = (results(&whole), results(&killed));
    assert_eq!(a.len(), b.len());
    for ((pa, va), (pb, vb)) in a.iter().zip(&b) {
        assert_eq!(
            (pa, va),
            (pb, vb),
            "killed at step {step} and continued: {pa} differs from the uninterrupted run's"
        );
    }
}

/// `experiment sigreg-population --quick`: SIGReg's expected loss minimised over free
/// encoders of the quick world's views. The report is complete, the prediction beside each
/// pair is the theorem's (1 for good views), and started at F the good-view tables stay in
/// F's basin (what the full run measures at sin-theta 0.06; here within 0.3 after 150
/// steps). A bad setting is refused naming it.
#[test]
fn quick_sigreg_population_scores_its_tables_against_the_theorem() {
    let out = tempfile::tempdir().unwrap();
    let o = bin()
        .args(["experiment", "sigreg-population", "--quick", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.path().join("results.json")).unwrap()).unwrap();
    let report = std::fs::read_to_string(out.path().join("report.md")).unwrap();
    assert!(
        report.contains("| 0.05 | bad | the theorem's F |"),
        "{report}"
    );
    let pairs = results["pairs"].as_array().unwrap();
    let tables = results["tables"].as_array().unwrap();
    assert_eq!((pairs.len(), tables.len()), (4, 8), "2 kinds x 2 starts");
    for p in pairs {
        finite_in(&p["mutual_knn"], 0.0, 1.0, "mutual_knn");
        finite_in(&p["null"], 0.0, 1.0, "null");
        let predicted = p["predicted"].as_f64().unwrap();
        if p["kind"] == "good" {
            assert!(
                (predicted - 1.0).abs() < 1e-9,
                "good views predict 1, got {predicted}"
            );
        } else {
            assert!(predicted > 0.2 && predicted < 0.9, "bad views: {predicted}");
        }
    }
    for t in tables {
        finite_in(&t["cka"], 0.0, 1.0 + 1e-9, "cka");
        finite_in(&t["sin_theta"], 0.0, 1.0 + 1e-9, "sin_theta");
        let shares: f64 = t["variance"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s[1].as_f64().unwrap())
            .sum();
        assert!(
            (shares - 1.0).abs() < 1e-9,
            "variance shares sum to {shares}"
        );
        if t["kind"] == "good" && t["start"] == "theorem" {
            assert!(t["sin_theta"].as_f64().unwrap() <= 0.3, "{t}");
        }
    }
    let o = bin()
        .args([
            "experiment",
            "sigreg-population",
            "--quick",
            "--set",
            "lambdas=[-1]",
            "--out",
        ])
        .arg(out.path())
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("lambdas") && err.contains("-1"), "{err}");
}
