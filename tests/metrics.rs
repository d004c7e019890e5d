//! Integration tests for `prh-native metrics`, `align` and `match` (issue 4): reference
//! values from an independent numpy implementation of the PRH formulas, closed forms,
//! invariances, and bad files driving the real binary.

use prh_core::formats::features::{Features, load, write_npy};
use prh_core::linalg::{Matrix, svd};
use prh_core::measure::knn::{gram, knn_from_gram, mutual_knn};
use prh_core::measure::metrics::{MetricOptions, measure};
use prh_core::measure::preprocess::Preprocess;
use prh_tests::bin;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Runs the binary; returns (success, stdout, stderr).
fn run(args: &[&str]) -> (bool, String, String) {
    let out = bin()
        .args(args)
        .output()
        .expect("the prh-native binary runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn run_json(args: &[&str]) -> Value {
    let (ok, out, err) = run(args);
    assert!(ok, "prh-native {args:?} failed: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

fn save(dir: &Path, name: &str, m: &Matrix) -> String {
    let p = dir.join(name);
    let data: Vec<f64> = (0..m.nrows())
        .flat_map(|i| (0..m.ncols()).map(move |j| (i, j)))
        .map(|(i, j)| m[(i, j)])
        .collect();
    write_npy(&p, &[m.nrows(), m.ncols()], &data).unwrap();
    p.display().to_string()
}

/// The deterministic inputs of the reference script below.
fn feats(n: usize, d: usize, s: f64) -> Matrix {
    Matrix::from_fn(n, d, |i, j| {
        let (i, j) = (i as f64, j as f64);
        (0.37 * i * (s + 1.0) + 1.1 * j).sin() + 0.3 * (0.05 * i * j + s).cos()
    })
}

/// A pseudo-random matrix from a simple LCG (uniform in [-0.5, 0.5)).
fn noise(n: usize, d: usize, seed: u64) -> Matrix {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    Matrix::from_fn(n, d, |_, _| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    })
}

fn rotation(d: usize, seed: u64) -> Matrix {
    let r = svd(noise(d, d, seed).as_ref()).unwrap();
    &r.u * r.v.transpose()
}

fn to_features(m: &Matrix) -> Features {
    let data = (0..m.nrows())
        .flat_map(|i| (0..m.ncols()).map(move |j| (i, j)))
        .map(|(i, j)| m[(i, j)])
        .collect();
    Features::new("m", m.nrows(), 1, m.ncols(), data).unwrap()
}

/// Reference values, computed by this independent numpy/scipy implementation of the PRH
/// formulas (numpy 2.4.6, scipy 1.17.1; rbf distances from scipy's cdist, not the Gram):
///
/// ```python
/// import numpy as np
/// from scipy.spatial.distance import cdist
/// def feats(n, d, s):
///     i = np.arange(n, dtype=np.float64)[:, None]; j = np.arange(d, dtype=np.float64)[None, :]
///     return np.sin(0.37 * i * (s + 1) + 1.1 * j) + 0.3 * np.cos(0.05 * i * j + s)
/// n, d, k = 64, 12, 10
/// A = feats(n, d, 0.0)
/// B = np.tanh(A[:, ::-1] * 1.5) + 1.2 * feats(n, d, 1.0)
/// def prep(x, q=0.95):
///     t = np.sort(np.abs(x).ravel())[int(q * x.size)]
///     x = np.clip(x, -t, t)
///     return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
/// a, b = prep(A), prep(B)
/// def knn(x):
///     g = x @ x.T; np.fill_diagonal(g, -1e8)
///     return np.argsort(-g, axis=1, kind="stable")[:, :k]
/// na, nb = knn(a), knn(b)
/// mutual = np.mean([len(set(na[i]) & set(nb[i])) / k for i in range(n)])
/// cycle = np.mean([(na[nb[i]] == i).any() for i in range(n)])
/// def lcs(x, y):
///     dp = np.zeros((len(x) + 1, len(y) + 1), int)
///     for i in range(1, len(x) + 1):
///         for j in range(1, len(y) + 1):
///             dp[i, j] = dp[i-1, j-1] + 1 if x[i-1] == y[j-1] else max(dp[i-1, j], dp[i, j-1])
///     return dp[-1, -1]
/// lcsv = np.mean([lcs(na[i], nb[i]) for i in range(n)])
/// def hb(K, L):
///     H = np.eye(len(K)) - 1.0 / len(K)
///     return np.trace(K @ H @ L @ H)
/// def hu(K, L):
///     m = len(K); Kt = K.copy(); Lt = L.copy(); np.fill_diagonal(Kt, 0); np.fill_diagonal(Lt, 0)
///     v = np.sum(Kt * Lt.T) + Kt.sum() * Lt.sum() / ((m - 1) * (m - 2)) - 2 * np.sum(Kt @ Lt) / (m - 2)
///     return v / (m * (m - 3))
/// def ratio(f, K, L): return f(K, L) / (np.sqrt(f(K, K) * f(L, L)) + 1e-6)
/// K, L = a @ a.T, b @ b.T
/// Kr, Lr = np.exp(-cdist(a, a) ** 2 / 2.0), np.exp(-cdist(b, b) ** 2 / 2.0)
/// def cknna(K, L):
///     def top(M):
///         Mh = M.copy(); np.fill_diagonal(Mh, -np.inf)
///         idx = np.argsort(-Mh, axis=1, kind="stable")[:, :k]
///         mask = np.zeros_like(M); np.put_along_axis(mask, idx, 1.0, axis=1); return mask
///     mK, mL = top(K), top(L)
///     sim = lambda m, X, Y: hu(m * X, m * Y)
///     return sim(mK * mL, K, L) / (np.sqrt(sim(mK, K, K) * sim(mL, L, L)) + 1e-6)
/// def lev(x, y):
///     dp = np.zeros((len(x) + 1, len(y) + 1), int)
///     dp[:, 0] = np.arange(len(x) + 1); dp[0, :] = np.arange(len(y) + 1)
///     for i in range(1, len(x) + 1):
///         for j in range(1, len(y) + 1):
///             dp[i, j] = min(dp[i-1, j] + 1, dp[i, j-1] + 1, dp[i-1, j-1] + (x[i-1] != y[j-1]))
///     return dp[-1, -1]
/// edit = 1 - np.mean([lev(na[i], nb[i]) for i in range(n)]) / k
/// # SVCCA: platonic-rep's standardisation, an exact SVD (not svd_lowrank), and textbook
/// # CCA (singular values of Saa^-1/2 Sab Sbb^-1/2). scikit-learn 1.9.1's iterative CCA on
/// # the same U1, U2 (platonic-rep's route) gives 0.633778623, 1e-7 from this.
/// def std(x):
///     x = x - x.mean(0); return x / (x.std(0, ddof=1) + 1e-8)
/// U1 = np.linalg.svd(std(a), full_matrices=False)[0][:, :10]
/// U2 = np.linalg.svd(std(b), full_matrices=False)[0][:, :10]
/// def inv_sqrt(S):
///     w, V = np.linalg.eigh(S); return V @ np.diag(w ** -0.5) @ V.T
/// X, Y = U1 - U1.mean(0), U2 - U2.mean(0)
/// svcca = np.linalg.svd(inv_sqrt(X.T @ X) @ (X.T @ Y) @ inv_sqrt(Y.T @ Y), compute_uv=False).mean()
/// for name, v in [("mutual_knn", mutual), ("cycle_knn", cycle), ("lcs_knn", lcsv),
///                 ("cka", ratio(hb, K, L)), ("cka_rbf", ratio(hb, Kr, Lr)),
///                 ("unbiased_cka", ratio(hu, K, L)), ("cknna", cknna(K, L)),
///                 ("svcca", svcca), ("edit_distance_knn", edit)]:
///     print(f"(\"{name}\", {float(v)!r}),")
/// ```
const REFERENCE: [(&str, f64); 9] = [
    ("mutual_knn", 0.7078125000000001),
    ("cycle_knn", 0.96875),
    ("lcs_knn", 4.171875),
    ("cka", 0.2835931952739969),
    ("cka_rbf", 0.5526955291376217),
    ("unbiased_cka", 0.2544404961869045),
    ("cknna", 0.77209946890051),
    ("svcca", 0.6337787197553861),
    ("edit_distance_knn", 0.19218749999999996),
];

fn reference_inputs() -> (Matrix, Matrix) {
    let a = feats(64, 12, 0.0);
    let extra = feats(64, 12, 1.0);
    let b = Matrix::from_fn(64, 12, |i, j| {
        (a[(i, 11 - j)] * 1.5).tanh() + 1.2 * extra[(i, j)]
    });
    (a, b)
}

#[test]
fn metrics_match_the_numpy_reference_to_1e6() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = reference_inputs();
    let (pa, pb) = (save(dir.path(), "a.npy", &a), save(dir.path(), "b.npy", &b));
    let v = run_json(&["metrics", &pa, &pb, "--k", "10", "--json"]);
    for (name, want) in REFERENCE {
        let got = v[name]
            .as_f64()
            .unwrap_or_else(|| panic!("key {name} missing in {v}"));
        println!(
            "{name:<14} rust {got:.12} numpy {want:.12} |diff| {:.2e}",
            (got - want).abs()
        );
        assert!((got - want).abs() < 1e-6, "{name}: {got} vs numpy {want}");
    }
    assert_eq!(v["n"], 64);
    assert_eq!(v["k"], 10);
    // The null sits near chance k/(N-1) = 0.159 and far below the real score.
    let (m, s) = (
        v["null_mutual_knn_mean"].as_f64().unwrap(),
        v["null_mutual_knn_std"].as_f64().unwrap(),
    );
    assert!(
        (m - 10.0 / 63.0).abs() < 0.02 && s > 0.0 && m + 10.0 * s < 0.7,
        "null {m} ± {s}"
    );
    // The human table names every metric.
    let (ok, table, _) = run(&["metrics", &pa, &pb]);
    assert!(
        ok && REFERENCE.iter().all(|(name, _)| table.contains(name)),
        "{table}"
    );
}

/// `--device cpu` runs the kernel pass on burn's CPU backend in f32
/// (`prh_core::tasks::gram_device`): the same numpy reference, to 1e-5 (f32 sums; the
/// neighbour lists are the same on these inputs); an unknown device is refused by name.
#[test]
fn metrics_on_a_burn_backend_match_the_numpy_reference_to_1e5() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = reference_inputs();
    let (pa, pb) = (save(dir.path(), "a.npy", &a), save(dir.path(), "b.npy", &b));
    let v = run_json(&["metrics", &pa, &pb, "--json", "--device", "cpu"]);
    for (name, want) in REFERENCE {
        let got = v[name].as_f64().unwrap();
        assert!((got - want).abs() < 1e-5, "{name}: {got} vs numpy {want}");
    }
    let (ok, _, err) = run(&["metrics", &pa, &pb, "--device", "tpu"]);
    assert!(
        !ok && err.contains("--device") && err.contains("tpu"),
        "{err}"
    );
}

#[test]
fn identical_inputs_score_one_and_shuffled_rows_score_chance() {
    let dir = tempfile::tempdir().unwrap();
    let a = noise(200, 16, 3);
    let pa = save(dir.path(), "a.npy", &a);
    let v = run_json(&["metrics", &pa, &pa, "--json"]);
    assert_eq!(v["mutual_knn"], 1.0);
    assert_eq!(v["cycle_knn"], 1.0);
    assert_eq!(v["lcs_knn"], 10.0);
    assert!((v["cka"].as_f64().unwrap() - 1.0).abs() < 1e-6);
    // Rows of B shuffled: the pairing is gone, so mutual k-NN falls to the null.
    let perm: Vec<usize> = (0..200).map(|i| (i * 77 + 5) % 200).collect();
    let shuffled = Matrix::from_fn(200, 16, |i, j| a[(perm[i], j)]);
    let pb = save(dir.path(), "b.npy", &shuffled);
    let v = run_json(&["metrics", &pa, &pb, "--json"]);
    let (score, m, s) = (
        v["mutual_knn"].as_f64().unwrap(),
        v["null_mutual_knn_mean"].as_f64().unwrap(),
        v["null_mutual_knn_std"].as_f64().unwrap(),
    );
    assert!(
        (score - m).abs() < 5.0 * s + 1e-3,
        "shuffled {score} vs null {m} ± {s}"
    );
    assert!((m - 10.0 / 199.0).abs() < 0.01, "null mean {m}");
}

#[test]
fn cka_and_mutual_knn_are_rotation_and_scale_invariant() {
    let a = noise(120, 10, 5);
    let b = &(&a * rotation(10, 6)) * 3.7;
    let c = noise(120, 10, 7);
    for normalize in [true, false] {
        let opts = MetricOptions {
            preprocess: Preprocess {
                outlier_q: None,
                normalize,
            },
            ..MetricOptions::default()
        };
        let base = measure(&to_features(&a), &to_features(&c), &opts)
            .unwrap()
            .scores;
        let moved = measure(&to_features(&b), &to_features(&c), &opts)
            .unwrap()
            .scores;
        assert_eq!(base.mutual_knn, moved.mutual_knn, "normalize = {normalize}");
        assert!(
            (base.cka - moved.cka).abs() < 1e-6,
            "{} vs {}",
            base.cka,
            moved.cka
        );
        assert!((base.unbiased_cka - moved.unbiased_cka).abs() < 1e-6);
        let same = measure(&to_features(&a), &to_features(&b), &opts)
            .unwrap()
            .scores;
        assert_eq!(same.mutual_knn, 1.0);
        assert!((same.cka - 1.0).abs() < 1e-6);
    }
    // Direct k-NN check: neighbours of a rotated, scaled copy are the same lists.
    let ka = knn_from_gram(gram(a.as_ref()).as_ref(), 10, true).unwrap();
    let kb = knn_from_gram(gram(b.as_ref()).as_ref(), 10, true).unwrap();
    assert_eq!(mutual_knn(&ka, &kb).unwrap(), 1.0);
}

#[test]
fn layered_input_reports_the_best_layer_pair() {
    let dir = tempfile::tempdir().unwrap();
    let a = noise(80, 6, 11);
    let rot = &a * rotation(6, 12);
    let (n1, n2) = (noise(80, 6, 13), noise(80, 6, 14));
    // B is [80, 3, 6] with layer 2 a rotated copy of A.
    let mut data = Vec::new();
    for i in 0..80 {
        for layer in [&n1, &n2, &rot] {
            data.extend((0..6).map(|j| layer[(i, j)]));
        }
    }
    let pb = dir.path().join("b.npy");
    write_npy(&pb, &[80, 3, 6], &data).unwrap();
    let pa = save(dir.path(), "a.npy", &a);
    let v = run_json(&["metrics", &pa, pb.to_str().unwrap(), "--no-clamp", "--json"]);
    assert_eq!(v["layers_b"], 3);
    assert_eq!(v["mutual_knn"], 1.0);
    assert_eq!(v["best_layers"]["mutual_knn"], serde_json::json!([0, 2]));
    assert_eq!(v["best_layers"]["cka"], serde_json::json!([0, 2]));
}

#[test]
fn align_recovers_a_planted_rotation() {
    let dir = tempfile::tempdir().unwrap();
    let a = noise(300, 12, 21);
    let r = rotation(12, 22);
    let b = &a * &r;
    let (pa, pb) = (save(dir.path(), "a.npy", &a), save(dir.path(), "b.npy", &b));
    let q_path = dir.path().join("q.npy");
    let v = run_json(&[
        "align",
        &pa,
        &pb,
        "--fit",
        "200",
        "--save-rotation",
        q_path.to_str().unwrap(),
        "--json",
    ]);
    for dir_key in ["a_to_b", "b_to_a"] {
        assert_eq!(v[dir_key]["R@1"], 1.0, "{v}");
        assert_eq!(v[dir_key]["R@5"], 1.0);
        assert_eq!(v[dir_key]["R@10"], 1.0);
        assert_eq!(v[dir_key]["mean_rank"], 1.0);
    }
    assert_eq!(v["chance"]["R@1"], 0.01);
    assert_eq!(v["n_test"], 100);
    // Row normalisation does not change the rotation: A Q = B row by row.
    let q = load(&q_path, None).unwrap();
    assert_eq!((q.n, q.d), (12, 12));
    let err = (0..144)
        .map(|t| (q.data[t] - r[(t / 12, t % 12)]).abs())
        .fold(0.0, f64::max);
    assert!(err < 1e-10, "max |Q - R| = {err}");
    // Separate fit files give the same answer.
    let (fa, fb) = (save(dir.path(), "fa.npy", &noise(50, 12, 23)), "fb.npy");
    let fbm = &noise(50, 12, 23) * &r;
    let fb = save(dir.path(), fb, &fbm);
    let v = run_json(&["align", &pa, &pb, "--fit-a", &fa, "--fit-b", &fb, "--json"]);
    assert_eq!(v["a_to_b"]["R@1"], 1.0);
    assert_eq!(v["n_test"], 300);
}

#[test]
fn align_of_unrelated_sets_is_near_chance() {
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (
        save(dir.path(), "a.npy", &noise(600, 8, 31)),
        save(dir.path(), "b.npy", &noise(600, 8, 32)),
    );
    let v = run_json(&["align", &pa, &pb, "--fit", "300", "--json"]);
    let r10 = v["a_to_b"]["R@10"].as_f64().unwrap();
    let mr = v["a_to_b"]["mean_rank"].as_f64().unwrap();
    // Chance: R@10 = 10/300 = 0.033, mean rank 150.5.
    assert!(r10 < 0.12, "R@10 {r10}");
    assert!((mr - 150.5).abs() < 40.0, "mean rank {mr}");
}

#[test]
fn match_recovers_a_planted_permutation_of_a_noisy_rotation() {
    let dir = tempfile::tempdir().unwrap();
    let a = noise(100, 16, 41);
    let b = &(&a * rotation(16, 42)) + &(&noise(100, 16, 43) * 0.02);
    let (pa, pb) = (save(dir.path(), "a.npy", &a), save(dir.path(), "b.npy", &b));
    let v = run_json(&["match", &pa, &pb, "--json"]);
    assert_eq!(v["accuracy"], 1.0, "{v}");
    let (obj, bound, truth) = (
        v["objective"].as_f64().unwrap(),
        v["bound"].as_f64().unwrap(),
        v["objective_truth"].as_f64().unwrap(),
    );
    assert!(bound <= obj + 1e-12 && (obj - truth).abs() < 1e-12, "{v}");
}

fn expect_failure(args: &[&str], needles: &[&str]) {
    let (ok, _, err) = run(args);
    assert!(!ok, "prh-native {args:?} should fail");
    for n in needles {
        assert!(err.contains(n), "stderr of {args:?} lacks {n:?}: {err}");
    }
}

#[test]
fn bad_files_fail_with_a_message_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let good = save(dir.path(), "good.npy", &noise(30, 4, 51));
    let bytes = std::fs::read(&good).unwrap();
    let path = |name: &str| -> PathBuf { dir.path().join(name) };
    std::fs::write(path("trunc.npy"), &bytes[..bytes.len() - 17]).unwrap();
    expect_failure(
        &["metrics", &good, path("trunc.npy").to_str().unwrap()],
        &["trunc.npy", "truncated"],
    );
    write_npy(&path("rank1.npy"), &[120], &vec![0.5f32; 120]).unwrap();
    expect_failure(
        &["metrics", &good, path("rank1.npy").to_str().unwrap()],
        &["rank1.npy", "expected [N, D]"],
    );
    let mut nan = noise(30, 4, 52);
    nan[(7, 2)] = f64::NAN;
    let pn = save(dir.path(), "nan.npy", &nan);
    expect_failure(&["metrics", &good, &pn], &["nan.npy", "row 7", "NaN"]);
    let short = save(dir.path(), "short.npy", &noise(29, 4, 53));
    expect_failure(
        &["metrics", &good, &short],
        &["short.npy", "N = 29", "N = 30"],
    );
    expect_failure(&["align", &good, &short, "--fit", "10"], &["short.npy"]);
    std::fs::write(path("empty.npy"), b"").unwrap();
    expect_failure(
        &["match", &good, path("empty.npy").to_str().unwrap()],
        &["empty.npy", "empty"],
    );
    std::fs::write(path("junk.bin"), b"hello world, not an array").unwrap();
    expect_failure(
        &["metrics", path("junk.bin").to_str().unwrap(), &good],
        &["junk.bin", "expected .npy"],
    );
    expect_failure(
        &["metrics", path("missing.npy").to_str().unwrap(), &good],
        &["missing.npy"],
    );
}

#[test]
fn reads_npz_and_safetensors() {
    let dir = tempfile::tempdir().unwrap();
    let a = noise(40, 5, 61);
    let pa = save(dir.path(), "a.npy", &a);
    // safetensors by hand: u64 header length, JSON header, little-endian f32 data.
    let data: Vec<u8> = (0..40)
        .flat_map(|i| (0..5).map(move |j| (i, j)))
        .flat_map(|(i, j)| (a[(i, j)] as f32).to_le_bytes())
        .collect();
    let header = format!(
        r#"{{"emb":{{"dtype":"F32","shape":[40,5],"data_offsets":[0,{}]}}}}"#,
        data.len()
    );
    let mut st = (header.len() as u64).to_le_bytes().to_vec();
    st.extend_from_slice(header.as_bytes());
    st.extend_from_slice(&data);
    let ps = dir.path().join("a.safetensors");
    std::fs::write(&ps, st).unwrap();
    let v = run_json(&["metrics", &pa, ps.to_str().unwrap(), "--json"]);
    assert_eq!(v["mutual_knn"], 1.0);
    // npz with two arrays: the right one must be named.
    let pz = dir.path().join("two.npz");
    {
        use npyz::WriterBuilder;
        let mut npz = npyz::npz::NpzWriter::create(&pz).unwrap();
        for (name, m) in [("text", &a), ("other", &noise(40, 5, 62))] {
            let flat: Vec<f64> = (0..40)
                .flat_map(|i| (0..5).map(move |j| m[(i, j)]))
                .collect();
            let mut w = npz
                .array(name, Default::default())
                .unwrap()
                .default_dtype()
                .shape(&[40, 5])
                .begin_nd()
                .unwrap();
            w.extend(flat).unwrap();
            w.finish().unwrap();
        }
    }
    let pzs = pz.to_str().unwrap();
    expect_failure(&["metrics", &pa, pzs], &["two.npz", "2 arrays"]);
    let v = run_json(&["metrics", &pa, pzs, "--array-b", "text", "--json"]);
    assert_eq!(v["mutual_knn"], 1.0);
}

/// Issue 25.1: a collapsed embedding never scores well. With an all-zero or constant A
/// every similarity ties; retrieval ranks ties at their expectation (chance), k-NN keeps
/// platonic-rep's index order but reports the tied lists, and both commands warn.
#[test]
fn collapsed_embeddings_score_chance_and_are_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let (n, d) = (200, 16);
    let b = save(dir.path(), "b.npy", &noise(n, d, 7));
    let zero = save(dir.path(), "zero.npy", &Matrix::zeros(n, d));
    let constant = save(
        dir.path(),
        "constant.npy",
        &Matrix::from_fn(n, d, |_, j| 0.1 + j as f64),
    );
    let n_test = (n - 100) as f64;
    for (a, what) in [(&zero, "all 100 rows are zero"), (&constant, "same vector")] {
        let r = run_json(&["align", a, &b, "--fit", "100", "--json"]);
        for dir_ in ["a_to_b", "b_to_a"] {
            let s = &r[dir_];
            let r1 = s["R@1"].as_f64().unwrap();
            let rank = s["mean_rank"].as_f64().unwrap();
            // Exactly chance, 1/n and (n+1)/2: either every candidate ties with the true
            // match, or (constant queries A -> B) all queries share one ordering of B, in
            // which each gallery item holds each place once.
            assert!((r1 - 1.0 / n_test).abs() < 1e-12, "{a} {dir_}: R@1 {r1}");
            assert!(
                (rank - (n_test + 1.0) / 2.0).abs() < 1e-9,
                "{a} {dir_}: rank {rank}"
            );
            let all_tied = !(a == &constant && dir_ == "a_to_b");
            let tied = if all_tied { 1.0 } else { 0.0 };
            assert_eq!(s["tied_queries"].as_f64(), Some(tied), "{a} {dir_}");
        }
        let warnings = r["warnings"].as_array().unwrap();
        let text: Vec<&str> = warnings.iter().filter_map(|w| w.as_str()).collect();
        assert!(text.iter().any(|w| w.contains(what)), "{a}: {text:?}");
        assert!(
            text.iter().any(|w| w.contains("random tie-break")),
            "{a}: {text:?}"
        );
        assert!(r["ties"].as_str().unwrap().contains("random tie-break"));
        let (ok, table, _) = run(&["align", a, &b, "--fit", "100"]);
        assert!(
            ok && table.contains("warning:") && table.contains(what),
            "{table}"
        );

        let m = run_json(&["metrics", a, &b, "--json", "--null", "20"]);
        assert_eq!(m["tied_lists_a"].as_f64(), Some(1.0), "{a}: {m}");
        assert_eq!(m["tied_lists_b"].as_f64(), Some(0.0), "{a}: {m}");
        let warnings: Vec<&str> = m["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|w| w.as_str())
            .collect();
        assert!(
            warnings.iter().any(|w| w.contains("collapsed")),
            "{a}: {warnings:?}"
        );
        assert!(
            warnings.iter().any(|w| w.contains("100.0% of 10-NN lists")),
            "{a}: {warnings:?}"
        );
        let (ok, table, _) = run(&["metrics", a, &b]);
        assert!(ok && table.contains("warning:"), "{table}");
    }
    // Healthy inputs: no tie, no warning.
    let a = save(dir.path(), "a.npy", &noise(n, d, 8));
    let r = run_json(&["align", &a, &b, "--fit", "100", "--json"]);
    assert_eq!(r["warnings"].as_array().map(Vec::len), Some(0), "{r}");
    assert_eq!(r["a_to_b"]["tied_queries"].as_f64(), Some(0.0));
    let m = run_json(&["metrics", &a, &b, "--json", "--null", "5"]);
    assert_eq!(m["warnings"].as_array().map(Vec::len), Some(0), "{m}");
}

/// Issue 24.5: `--gallery-curve` measures nested subsets: the full size reproduces the
/// plain report's mutual k-NN, each point has its null, and the SVG has one dot per point
/// and series; a size above N is refused naming the flag.
#[test]
fn gallery_curve_table_json_and_svg() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = reference_inputs();
    let (pa, pb) = (save(dir.path(), "a.npy", &a), save(dir.path(), "b.npy", &b));
    let svg = dir.path().join("curve.svg");
    let args = [
        "metrics",
        &pa,
        &pb,
        "--gallery-curve",
        "64,16,32",
        "--null",
        "10",
    ];
    let mut with_json = args.to_vec();
    with_json.extend(["--json", "--curve-svg", svg.to_str().unwrap()]);
    let v = run_json(&with_json);
    let points = v["gallery_curve"].as_array().unwrap();
    let sizes: Vec<u64> = points.iter().map(|p| p["n"].as_u64().unwrap()).collect();
    assert_eq!(sizes, vec![16, 32, 64]);
    let full = run_json(&["metrics", &pa, &pb, "--json", "--null", "0"]);
    assert!(
        (points[2]["mutual_knn"].as_f64().unwrap() - full["mutual_knn"].as_f64().unwrap()).abs()
            < 1e-12
    );
    for p in points {
        assert!(p["null"]["p_value"].as_f64().is_some(), "{p}");
        let chance = 10.0 / (p["n"].as_f64().unwrap() - 1.0);
        assert!((p["chance"].as_f64().unwrap() - chance).abs() < 1e-15);
    }
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.starts_with("<svg") && text.contains("gallery"),
        "{text}"
    );
    // 3 points x (score, null mean, chance) + 3 legend dots.
    assert_eq!(text.matches("<circle").count(), 12, "{text}");
    let (ok, table, _) = run(&args);
    assert!(
        ok && table.contains("samples") && table.lines().count() == 4,
        "{table}"
    );
    let (ok, _, err) = run(&["metrics", &pa, &pb, "--gallery-curve", "65"]);
    assert!(
        !ok && err.contains("--gallery-curve") && err.contains("65"),
        "{err}"
    );
}

/// Issue 22.4: the Embedding Projector's vectors.tsv is read by metrics and align like the
/// .npy of the same numbers; a malformed line is refused naming the file, line and column.
#[test]
fn embedding_projector_tsv_reads_like_npy() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = reference_inputs();
    let (pa, pb) = (save(dir.path(), "a.npy", &a), save(dir.path(), "b.npy", &b));
    let tsv = dir.path().join("vectors.tsv");
    let text: String = (0..a.nrows())
        .map(|i| {
            let row: Vec<String> = (0..a.ncols()).map(|j| format!("{:?}", a[(i, j)])).collect();
            row.join("\t") + "\n"
        })
        .collect();
    std::fs::write(&tsv, text).unwrap();
    let t = tsv.display().to_string();
    let from_npy = run_json(&["metrics", &pa, &pb, "--json", "--null", "5"]);
    let from_tsv = run_json(&["metrics", &t, &pb, "--json", "--null", "5"]);
    assert_eq!(from_npy["mutual_knn"], from_tsv["mutual_knn"]);
    assert_eq!(from_npy["cka"], from_tsv["cka"]);
    let r = run_json(&["align", &t, &pb, "--fit", "32", "--json"]);
    assert!(r["a_to_b"]["R@1"].as_f64().is_some());
    std::fs::write(&tsv, "1\t2\n3\tfour\n").unwrap();
    let (ok, _, err) = run(&["metrics", &t, &pb]);
    assert!(
        !ok && err.contains("vectors.tsv") && err.contains("line 2, column 2"),
        "{err}"
    );
}

/// `pair-spectrum` on planted pairs: a shared latent with per-direction noise of variance
/// 0, 1 and 3 times the signal's has pair correlations 1, 1/2 and 1/4 (closed form, to
/// sampling error at N = 20,000), unchanged when one rotation maps both views; mismatched
/// files are refused naming both.
#[test]
fn pair_spectrum_recovers_planted_pair_correlations() {
    let dir = tempfile::tempdir().unwrap();
    let n = 20_000;
    let z = noise(n, 3, 1);
    let (ea, eb) = (noise(n, 3, 2), noise(n, 3, 3));
    let scale = [0.0, 1.0, 3f64.sqrt()];
    let a = Matrix::from_fn(n, 3, |i, j| z[(i, j)] + scale[j] * ea[(i, j)]);
    let b = Matrix::from_fn(n, 3, |i, j| z[(i, j)] + scale[j] * eb[(i, j)]);
    let q = rotation(3, 4);
    let (pa, pb) = (save(dir.path(), "a.npy", &a), save(dir.path(), "b.npy", &b));
    let (ra, rb) = (
        save(dir.path(), "ra.npy", &(&a * &q)),
        save(dir.path(), "rb.npy", &(&b * &q)),
    );
    let expect = [1.0, 0.5, 0.25];
    let mut seen = Vec::new();
    for (x, y) in [(&pa, &pb), (&ra, &rb)] {
        let v = run_json(&["pair-spectrum", x, y, "--json"]);
        assert_eq!(v["pairs"], 20_000);
        let rho: Vec<f64> = v["spectrum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        for (r, e) in rho.iter().zip(expect) {
            assert!((r - e).abs() < 0.02, "{rho:?} vs {expect:?}");
        }
        seen.push(rho);
    }
    for (x, y) in seen[0].iter().zip(&seen[1]) {
        assert!((x - y).abs() < 1e-9, "not rotation invariant: {seen:?}");
    }
    let short = save(dir.path(), "short.npy", &noise(10, 3, 5));
    let (ok, _, err) = run(&["pair-spectrum", &pa, &short]);
    assert!(!ok && err.contains("short.npy"), "{err}");
}

/// Issue 22.2: a long `metrics` or `match` run reports each phase on stderr (here, off a
/// terminal, as status lines; `PRH_PROGRESS_DELAY=0` shows even this small run, which by
/// default stays silent), `--json` on stdout stays one clean object, and `--quiet`
/// prints no progress.
#[test]
fn metrics_and_match_report_progress_on_stderr_only() {
    let dir = tempfile::tempdir().unwrap();
    let a = noise(120, 8, 51);
    let b = &(&a * rotation(8, 52)) + &(&noise(120, 8, 53) * 0.1);
    let (pa, pb) = (save(dir.path(), "a.npy", &a), save(dir.path(), "b.npy", &b));
    let go = |args: &[&str], env: &[(&str, &str)]| {
        let out = bin().args(args).envs(env.iter().copied()).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        serde_json::from_str::<Value>(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let shown = [("PRH_PROGRESS_DELAY", "0"), ("PRH_PROGRESS_SECS", "0")];
    let err = go(&["metrics", &pa, &pb, "--json", "--null", "5"], &shown);
    for want in [
        "[metrics svd] done 2/2",
        // The kernel pass counts tiles of its triangle: 120 rows fit in one.
        "[metrics kernels] done 1/1",
        "[metrics null] done 5/5",
    ] {
        assert!(err.contains(want), "missing {want:?} in {err}");
    }
    assert!(
        err.lines()
            .all(|l| !l.starts_with('[') || l.contains("/s, eta ")),
        "{err}"
    );
    let err = go(&["match", &pa, &pb, "--json", "--restarts", "2"], &shown);
    // GW, barycentre, signatures and the 2 random restarts.
    assert!(err.contains("[match starts] done 5/5"), "{err}");
    // Default delay: a run this short shows nothing; --quiet never does.
    let err = go(&["metrics", &pa, &pb, "--json", "--null", "5"], &[]);
    assert!(!err.contains("] done "), "{err}");
    let err = go(
        &["--quiet", "metrics", &pa, &pb, "--json", "--null", "5"],
        &shown,
    );
    assert!(!err.contains("] done "), "{err}");
}
