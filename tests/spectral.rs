//! Integration tests for `prh-native spectral`: the real binary on real files, checked
//! against closed forms, a numpy reference and its own invariants; bad inputs must fail with
//! a message naming the file and what was wrong.

use npyz::WriterBuilder;
use prh_tests::bin;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Runs `spectral --json ARGS` and parses stdout; panics with stderr on failure.
fn spectral_json(args: &[&str]) -> Value {
    let out = bin()
        .arg("spectral")
        .args(args)
        .arg("--json")
        .output()
        .expect("run prh-native");
    assert!(
        out.status.success(),
        "spectral {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("spectral --json prints JSON")
}

/// Runs `spectral ARGS`, expects failure, returns stderr.
fn spectral_error(args: &[&str]) -> String {
    let out = bin()
        .arg("spectral")
        .args(args)
        .output()
        .expect("run prh-native");
    assert!(!out.status.success(), "spectral {args:?} should fail");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

/// Writes a row-major f64 (or f32) matrix as .npy.
fn write_npy(path: &Path, shape: &[u64], data: &[f64], as_f32: bool) {
    let file = std::fs::File::create(path).unwrap();
    if as_f32 {
        let mut w = npyz::WriteOptions::new()
            .default_dtype()
            .shape(shape)
            .writer(file)
            .begin_nd()
            .unwrap();
        w.extend(data.iter().map(|&x| x as f32)).unwrap();
        w.finish().unwrap();
    } else {
        let mut w = npyz::WriteOptions::new()
            .default_dtype()
            .shape(shape)
            .writer(file)
            .begin_nd()
            .unwrap();
        w.extend(data.iter().copied()).unwrap();
        w.finish().unwrap();
    }
}

/// Pi = A / sum(A) as a row-major buffer.
fn normalised(a: &[Vec<f64>]) -> Vec<f64> {
    let total: f64 = a.iter().flatten().sum();
    a.iter().flatten().map(|x| x / total).collect()
}

fn tmp_file(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

#[test]
fn cycle_graph_from_npy_has_cosine_eigenvalues() {
    let dir = tempfile::tempdir().unwrap();
    let n = 8;
    let a: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    if (i + 1) % n == j || (j + 1) % n == i {
                        1.0
                    } else {
                        0.0
                    }
                })
                .collect()
        })
        .collect();
    let path = tmp_file(&dir, "cycle.npy");
    write_npy(&path, &[n as u64, n as u64], &normalised(&a), false);
    let v = spectral_json(&["--pi", path.to_str().unwrap(), "--dim", "3"]);
    let mut expect: Vec<f64> = (0..n)
        .map(|j| (2.0 * std::f64::consts::PI * j as f64 / n as f64).cos())
        .collect();
    expect.sort_by(|x, y| y.total_cmp(x));
    for (got, want) in floats(&v["eigenvalues"]).iter().zip(&expect) {
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    }
    assert!(
        floats(&v["p"])
            .iter()
            .all(|p| (p - 1.0 / n as f64).abs() < 1e-15)
    );
    assert_eq!(v["trivial_index"], 0);
    // Top 3 = {1, cos(pi/4), cos(pi/4)}, next cos(pi/2) = 0: gap cos(pi/4).
    assert!((v["gap"].as_f64().unwrap() - (std::f64::consts::PI / 4.0).cos()).abs() < 1e-12);
}

#[test]
fn clusters_preset_gives_eigenvalue_one_once_per_cluster() {
    let v = spectral_json(&[
        "--world",
        "clusters",
        "--n",
        "10",
        "--clusters",
        "3",
        "--nuisances",
        "1",
        "--dim",
        "3",
    ]);
    let eig = floats(&v["eigenvalues"]);
    // K_W = (1 - rho) I + rho (block projectors): 1 three times, 1 - rho = 0.5 seven times.
    assert!(eig[..3].iter().all(|x| (x - 1.0).abs() < 1e-12), "{eig:?}");
    assert!(eig[3..].iter().all(|x| (x - 0.5).abs() < 1e-12), "{eig:?}");
    assert!((v["gap"].as_f64().unwrap() - 0.5).abs() < 1e-12);
    let p = floats(&v["p"]);
    assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
}

/// Same matrices and numpy script as `theorem::tests::reference_values_match_numpy`.
#[test]
fn two_kernels_match_the_numpy_reference_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let a1 = vec![
        vec![4., 2., 0., 1., 0.],
        vec![2., 3., 1., 0., 0.],
        vec![0., 1., 5., 2., 1.],
        vec![1., 0., 2., 2., 3.],
        vec![0., 0., 1., 3., 6.],
    ];
    let a2 = vec![
        vec![5., 1., 0., 1., 1.],
        vec![1., 3., 2., 0., 0.],
        vec![0., 2., 4., 2., 0.],
        vec![1., 0., 2., 3., 2.],
        vec![1., 0., 0., 2., 5.],
    ];
    let (p1, p2) = (tmp_file(&dir, "a1.npy"), tmp_file(&dir, "a2.npy"));
    write_npy(&p1, &[5, 5], &normalised(&a1), false);
    write_npy(&p2, &[5, 5], &normalised(&a2), false);
    let v = spectral_json(&[
        "--pi",
        p1.to_str().unwrap(),
        "--pi2",
        p2.to_str().unwrap(),
        "--dim",
        "2",
    ]);
    let want = [
        ("sin_theta_op", 0.8968098633916284),
        ("sin_theta_fro", 0.8974522855265602),
        ("davis_kahan_bound", 1.066216235886201),
        ("yws_bound", 2.7959785596041624),
    ];
    for (key, x) in want {
        let got = v[key]
            .as_f64()
            .unwrap_or_else(|| panic!("missing {key}: {v}"));
        assert!((got - x).abs() < 1e-9, "{key}: {got} vs numpy {x}");
    }
    let eig2 = floats(&v["eigenvalues2"]);
    assert!((eig2[1] - 0.7251736962053357).abs() < 1e-9);
    // The same Pi stored as float32 passes the (looser) f32 checks and agrees to ~1e-6.
    let p32 = tmp_file(&dir, "a1_f32.npy");
    write_npy(&p32, &[5, 5], &normalised(&a1), true);
    let v32 = spectral_json(&["--pi", p32.to_str().unwrap(), "--dim", "2"]);
    assert!((floats(&v32["eigenvalues"])[1] - 0.7955582435719276).abs() < 1e-5);
}

#[test]
fn saved_embedding_is_whitened_under_p() {
    let dir = tempfile::tempdir().unwrap();
    let out = tmp_file(&dir, "f.npy");
    let v = spectral_json(&[
        "--world",
        "ring",
        "--n",
        "10",
        "--dim",
        "3",
        "--skip-trivial",
        "--save-embedding",
        out.to_str().unwrap(),
    ]);
    let bytes = std::fs::read(&out).unwrap();
    let npy = npyz::NpyFile::new(bytes.as_slice()).unwrap();
    assert_eq!(npy.shape(), &[20, 3]);
    let f: Vec<f64> = npy.into_vec().unwrap();
    let p = floats(&v["p"]);
    // sum_x p(x) F_x F_x^T = I_d, and sum_x p(x) F_x = 0 (orthogonal to the trivial pair).
    for a in 0..3 {
        assert!((0..20).map(|x| p[x] * f[x * 3 + a]).sum::<f64>().abs() < 1e-10);
        for b in 0..3 {
            let c: f64 = (0..20).map(|x| p[x] * f[x * 3 + a] * f[x * 3 + b]).sum();
            assert!(
                (c - if a == b { 1.0 } else { 0.0 }).abs() < 1e-10,
                "cov[{a},{b}] = {c}"
            );
        }
    }
}

#[test]
fn scene_modalities_align_for_good_views_and_not_for_bad_views() {
    let good = spectral_json(&[
        "--world",
        "scenes",
        "--n",
        "12",
        "--dim",
        "4",
        "--skip-trivial",
    ]);
    let r = good["rotation"]["relative_residual"].as_f64().unwrap();
    assert!(r < 1e-9, "good views: residual {r}");
    let bad = spectral_json(&[
        "--world",
        "scenes",
        "--n",
        "12",
        "--dim",
        "4",
        "--skip-trivial",
        "--views",
        "bad",
    ]);
    let r = bad["rotation"]["relative_residual"].as_f64().unwrap();
    assert!(r > 0.1, "bad views: residual {r}");
    // Good vs bad kernels of the image modality: the bounds never undercut the measurement.
    let cmp = spectral_json(&[
        "--world",
        "scenes",
        "--n",
        "12",
        "--dim",
        "4",
        "--skip-trivial",
        "--views2",
        "mix",
        "--alpha",
        "0.3",
    ]);
    let measured = cmp["sin_theta_fro"].as_f64().unwrap();
    for key in ["davis_kahan_bound_fro", "yws_bound"] {
        if let Some(b) = cmp[key].as_f64() {
            assert!(b + 1e-10 >= measured, "{key} {b} < {measured}");
        }
    }
    assert_eq!(cmp["shared_trivial"], true);
}

#[test]
fn json_world_file_is_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let path = tmp_file(&dir, "tiny.json");
    std::fs::write(
        &path,
        r#"{"states":["a","b","c"],"edges":[["a","b",1],["b","c",1]]}"#,
    )
    .unwrap();
    // Path graph a-b-c: K = normalised adjacency, eigenvalues 1, 0, -1.
    let v = spectral_json(&["--world", path.to_str().unwrap(), "--dim", "1"]);
    let eig = floats(&v["eigenvalues"]);
    for (g, w) in eig.iter().zip([1.0, 0.0, -1.0]) {
        assert!((g - w).abs() < 1e-12, "{eig:?}");
    }
    std::fs::write(&path, r#"{"states":["a","b"],"edges":[["a","q",1]]}"#).unwrap();
    let err = spectral_error(&["--world", path.to_str().unwrap()]);
    assert!(
        err.contains("tiny.json") && err.contains("edges[0]") && err.contains("`q`"),
        "{err}"
    );
}

#[test]
fn bad_npy_inputs_fail_naming_the_file_and_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, Vec<u64>, Vec<f64>, &str)> = vec![
        ("rect.npy", vec![2, 3], vec![1.0 / 6.0; 6], "square"),
        ("asym.npy", vec![2, 2], vec![0.2, 0.3, 0.1, 0.4], "symmetr"),
        ("neg.npy", vec![2, 2], vec![0.6, -0.1, -0.1, 0.6], ">= 0"),
        ("sum.npy", vec![2, 2], vec![0.5, 0.5, 0.5, 0.5], "sum"),
        (
            "empty_row.npy",
            vec![2, 2],
            vec![1.0, 0.0, 0.0, 0.0],
            "p = 0",
        ),
    ];
    for (name, shape, data, reason) in cases {
        let path = tmp_file(&dir, name);
        write_npy(&path, &shape, &data, false);
        let err = spectral_error(&["--pi", path.to_str().unwrap()]);
        assert!(
            err.contains(name) && err.contains(reason),
            "{name}: expected `{reason}` in: {err}"
        );
    }
    let garbage = tmp_file(&dir, "garbage.npy");
    std::fs::write(&garbage, b"not a numpy file").unwrap();
    let err = spectral_error(&["--pi", garbage.to_str().unwrap()]);
    assert!(err.contains("garbage.npy") && err.contains(".npy"), "{err}");
    let ints = tmp_file(&dir, "ints.npy");
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .shape(&[1, 1])
        .writer(std::fs::File::create(&ints).unwrap())
        .begin_nd()
        .unwrap();
    w.push(&1i64).unwrap();
    w.finish().unwrap();
    let err = spectral_error(&["--pi", ints.to_str().unwrap()]);
    assert!(err.contains("ints.npy") && err.contains("float"), "{err}");
    let missing = tmp_file(&dir, "missing.npy");
    let err = spectral_error(&["--pi", missing.to_str().unwrap()]);
    assert!(err.contains("missing.npy"), "{err}");
    // A good first Pi with a bad second one still names the second file.
    let good = tmp_file(&dir, "good.npy");
    write_npy(&good, &[2, 2], &[0.25; 4], false);
    let err = spectral_error(&[
        "--pi",
        good.to_str().unwrap(),
        "--dim",
        "1",
        "--pi2",
        tmp_file(&dir, "asym.npy").to_str().unwrap(),
    ]);
    assert!(err.contains("asym.npy"), "{err}");
}

#[test]
fn argument_errors_are_explained() {
    assert!(spectral_error(&["--world", "donut"]).contains("clusters, ring, grid, scenes"));
    assert!(spectral_error(&["--world", "ring", "--dim", "0"]).contains("d = 0"));
    assert!(
        spectral_error(&["--world", "ring", "--views", "mix", "--alpha", "2"]).contains("[0, 1]")
    );
    assert!(spectral_error(&[]).contains("--world"));
    let table = bin()
        .args([
            "spectral", "--world", "grid", "--n", "12", "--views2", "bad",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.status.success()
            && text.contains("Davis–Kahan")
            && text.contains("measured sin-theta"),
        "{text}"
    );
}

#[test]
fn next_token_views_share_the_nuisance_and_weaken_the_state() {
    // Two clusters (sizes from the seed; rho = 0.5): eig K_W = {1, 1, 0.5 x4}. Next-token pairs, drift tau:
    // [(1 - tau) K_W + tau sqrt(p) sqrt(p)^T] ⊗ I_2 = {1 x2 (trivial and the nuisance),
    // (1 - tau) x2 (the second cluster), 0.5 (1 - tau) x8}.
    let v = spectral_json(&[
        "--world",
        "clusters",
        "--n",
        "6",
        "--clusters",
        "2",
        "--nuisances",
        "2",
        "--views",
        "next-token",
        "--drift",
        "0.4",
        "--dim",
        "2",
    ]);
    let want = [1.0, 1.0, 0.6, 0.6, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3];
    let eig = floats(&v["eigenvalues"]);
    assert_eq!(eig.len(), want.len());
    for (g, w) in eig.iter().zip(want) {
        assert!((g - w).abs() < 1e-12, "{eig:?}");
    }
}

/// `--solver top` (block Lanczos, the top d + 2 pairs) against `--solver full` on one
/// world: the eigenvalues it finds, both gaps, the comparison with a second kernel (sin-theta
/// and both bounds) and the rotation check agree to 1e-8 (Lanczos stops at residual 1e-10;
/// vectors are accurate to that over the gap), and the report says which solver ran.
#[test]
fn top_solver_agrees_with_the_full_decomposition() {
    let args = [
        "--world",
        "scenes",
        "--n",
        "60",
        // K's top after the trivial pair is 5/6 nine times, then 2/3: a window of 9 has a
        // gap of 1/6 (a window inside the repeated value has none, and no unique subspace).
        "--dim",
        "9",
        "--skip-trivial",
        "--views2",
        "mix",
        "--alpha",
        "0.3",
    ];
    let run = |solver: &str| {
        let mut a = args.to_vec();
        a.extend(["--solver", solver]);
        spectral_json(&a)
    };
    let (full, top) = (run("full"), run("top"));
    assert_eq!(full["solver"], "full");
    assert_eq!(top["solver"], "top");
    let n = full["n"].as_u64().unwrap();
    assert_eq!(top["n"].as_u64().unwrap(), n);
    assert_eq!(full["eigenvalues_computed"].as_u64().unwrap(), n);
    assert_eq!(top["eigenvalues_computed"].as_u64().unwrap(), 11);
    let (ef, et) = (floats(&full["eigenvalues"]), floats(&top["eigenvalues"]));
    assert_eq!(et.len(), 11);
    assert!((full["gap"].as_f64().unwrap() - 1.0 / 6.0).abs() < 1e-9);
    for (a, b) in et.iter().zip(&ef) {
        assert!((a - b).abs() < 1e-8, "{et:?} vs {ef:?}");
    }
    let close = |key: &str, x: &Value, y: &Value| {
        let (a, b) = (x.as_f64().unwrap(), y.as_f64().unwrap());
        assert!((a - b).abs() < 1e-8, "{key}: top {a} vs full {b}");
    };
    for key in [
        "gap",
        "gap_with_trivial",
        "gap_without_trivial",
        "sin_theta_op",
        "sin_theta_fro",
        "e_op",
        "davis_kahan_bound_fro",
    ] {
        close(key, &top[key], &full[key]);
    }
    close(
        "rotation residual",
        &top["rotation"]["relative_residual"],
        &full["rotation"]["relative_residual"],
    );
    // The table says what it did not compute.
    let out = bin()
        .args([
            "spectral", "--world", "ring", "--n", "40", "--solver", "top",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("block Lanczos") && text.contains("more not computed"),
        "{text}"
    );
}

/// A top eigenvalue repeated more often than `--solver top` computes (10 clusters with no
/// mixing: eigenvalue 1 ten times, top d + 2 = 3 asked) fails with the cause named;
/// `--solver auto` on a large world of that kind falls back to the full decomposition.
#[test]
fn top_solver_refuses_a_top_eigenspace_it_cannot_hold() {
    let e = spectral_error(&[
        "--world",
        "clusters",
        "--n",
        "40",
        "--clusters",
        "10",
        "--nuisances",
        "1",
        "--dim",
        "1",
        "--solver",
        "top",
    ]);
    assert!(e.contains("eigenspace may be larger"), "{e}");
    assert!(spectral_error(&["--world", "ring", "--solver", "lanczos"]).contains("full"));
}

/// `--solver auto` picks block Lanczos from 1,000 observations on for a small window, and
/// the full decomposition below that, for a window over 62 (d + 2 > 64 pairs), or when
/// Lanczos runs out of its budget of n products (a ring's crowded top: 1, 0.99995, ...).
#[test]
fn auto_solver_picks_by_size_window_and_budget() {
    let solver = |world: &str, n: &str, dim: &str| {
        let v = spectral_json(&["--world", world, "--n", n, "--dim", dim]);
        v["solver"].as_str().unwrap().to_string()
    };
    assert_eq!(solver("grid", "600", "3"), "top"); // 1,152 observations
    assert_eq!(solver("ring", "400", "3"), "full"); // 800
    assert_eq!(solver("grid", "600", "63"), "full"); // 65 pairs
    assert_eq!(solver("ring", "600", "3"), "full"); // 1,200, over budget
}
