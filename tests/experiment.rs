//! `prh-native experiment views-multilingual --quick` end to end on the real Multi30k
//! files: the report folder is complete and every number in it is finite and in range.
//! The scientific outcome (which objective aligns more) is never asserted here.

use std::path::PathBuf;
use std::process::Command;

/// The data dir: $PRH_DATA, else ../shared/data beside the workspace root.
fn data_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("PRH_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"));
    dir.join("multi30k/task2/raw/test_2016.1.en.gz")
        .exists()
        .then_some(dir)
}

fn finite_in(v: &serde_json::Value, lo: f64, hi: f64, what: &str) {
    let x = v
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: not a number: {v}"));
    assert!(x.is_finite() && (lo..=hi).contains(&x), "{what} = {x}");
}

#[test]
fn quick_views_multilingual_writes_a_well_formed_report() {
    let Some(data) = data_dir() else {
        eprintln!("skipped: no Multi30k under $PRH_DATA or ../shared/data");
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_prh-native"))
        .args(["experiment", "views-multilingual", "--quick", "--out"])
        .arg(out.path())
        .arg("--data")
        .arg(&data)
        .status()
        .unwrap();
    assert!(status.success());
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.path().join("results.json")).unwrap()).unwrap();
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
        assert!(
            curve[0]["null_mean"].is_null(),
            "the null is only computed at the end"
        );
        for l in r["final_loss"].as_array().unwrap() {
            assert!(l.as_f64().unwrap().is_finite());
        }
    }
    let summary = results["summary"].as_array().unwrap();
    assert_eq!(summary.len(), 3);
    for s in summary {
        for key in ["mutual_knn", "cka", "r1_a_to_b", "null_mean"] {
            finite_in(&s[key]["mean"], 0.0, 1.0 + 1e-9, key);
            // One seed: no spread.
            assert_eq!(s[key]["std"].as_f64(), Some(0.0));
        }
    }
    let md = std::fs::read_to_string(out.path().join("report.md")).unwrap();
    assert!(md.contains("| objective | mutual k-NN"));
    for obj in ["| good |", "| bad |", "| next-token |"] {
        assert!(md.contains(obj), "{obj} missing from report.md");
    }
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
    let o = Command::new(env!("CARGO_BIN_EXE_prh-native"))
        .args(["experiment", "nope", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("views-multilingual"));
    let o = Command::new(env!("CARGO_BIN_EXE_prh-native"))
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
