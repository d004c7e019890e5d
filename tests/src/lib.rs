//! What prh's workspace-level integration tests (the files beside this folder, one test
//! target per entry point) share: the `prh-native` binary they drive and the paths of the
//! repository's files.
//!
//! `env!("CARGO_BIN_EXE_prh-native")` exists only in the tests of the package that defines
//! the binary, and this is another package, so [`bin_path`] asks cargo for it instead: the
//! first call in a test process runs `cargo build --bin prh-native` at the workspace root
//! (through `escargot`) with the profile, target triple, target folder and features these
//! tests were built with, and returns the executable cargo reports. The build is cargo's own, so it is
//! incremental (a no-op when nothing changed) and the binary is never stale: every test
//! process runs the binary of the current sources.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The workspace root (this package is its `tests/` folder). Read from the
/// `CARGO_MANIFEST_DIR` cargo sets when it runs the tests, not the one baked in at compile
/// time: checkouts that share one target folder (CI's cache) share compiled test crates,
/// and a baked-in path may name another checkout, since deleted.
pub fn repo_root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
            .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
        manifest
            .parent()
            .expect("tests/ has a parent folder")
            .to_path_buf()
    })
}

/// The shipped training configs (`configs/`).
pub fn configs() -> PathBuf {
    repo_root().join("configs")
}

/// The data dir: $PRH_DATA, else ../shared/data beside the workspace root; None (and the
/// skip reason printed) when it has no Multi30k.
pub fn data_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("PRH_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("../shared/data"));
    let found = dir.join("multi30k/task2/raw/test_2016.1.en.gz").exists();
    if !found {
        eprintln!("skipped: no Multi30k under $PRH_DATA or ../shared/data");
    }
    found.then_some(dir)
}

/// A `Command` running the current `prh-native` binary.
pub fn bin() -> Command {
    Command::new(bin_path())
}

/// The current `prh-native` executable, built on the first call in this process; or
/// `$PRH_NATIVE_BIN` when set: a prebuilt binary, for a machine with no cargo (the release
/// build shipped to a lent GPU machine, benches/gpu/check.sh).
pub fn bin_path() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        std::env::var_os("PRH_NATIVE_BIN").map_or_else(build_prh_native, PathBuf::from)
    })
}

/// `["--device", D]` when `$PRH_TEST_DEVICE` names a backend (`cuda`, `wgpu`), else
/// nothing (the binary's default, the CPU). The tests that train or run models pass it,
/// so the same test checks the same numbers on a GPU.
pub fn device_args() -> Vec<String> {
    match std::env::var("PRH_TEST_DEVICE") {
        Ok(d) if !d.is_empty() => vec!["--device".into(), d],
        _ => Vec::new(),
    }
}

/// prh-native's features (native/Cargo.toml) and whether this package was built with the
/// feature of the same name, which asks for it.
const FEATURES: [(&str, bool); 6] = [
    ("cpu", cfg!(feature = "cpu")),
    ("flex", cfg!(feature = "flex")),
    ("wgpu", cfg!(feature = "wgpu")),
    ("cuda", cfg!(feature = "cuda")),
    ("cpu-fast", cfg!(feature = "cpu-fast")),
    ("blas", cfg!(feature = "blas")),
];

/// prh-native's default features (native/Cargo.toml), in `FEATURES` order.
const DEFAULT_FEATURES: [&str; 2] = ["cpu", "flex"];

fn build_prh_native() -> PathBuf {
    let features: Vec<&str> = FEATURES
        .iter()
        .filter(|(_, on)| *on)
        .map(|(name, _)| *name)
        .collect();
    // `cargo build --bin prh-native` at the workspace root, without `-p`: the packages it
    // selects are the default members, as `cargo test` at the root selects them, so
    // features resolve as they did for these tests and the dependencies they built
    // (prh-core, burn, ...) are reused rather than built a second time with another
    // feature set. (`cargo test -p prh-tests` alone resolves some shared crates' features
    // otherwise: its first run builds them once more for the binary.)
    let mut build = escargot::CargoBuild::new()
        .manifest_path(repo_root().join("Cargo.toml"))
        .bin("prh-native")
        // No status lines, and compiler errors rendered on stderr (which the error below
        // shows) rather than only in the JSON messages escargot reads.
        .arg("--quiet")
        .arg("--message-format=json-render-diagnostics");
    if features != DEFAULT_FEATURES {
        let named: Vec<String> = features.iter().map(|f| format!("prh-native/{f}")).collect();
        build = build.no_default_features();
        if !named.is_empty() {
            build = build.features(named.join(","));
        }
    }
    let layout = Layout::of_this_test();
    build = match &layout {
        Some(l) => build.profile(&l.profile),
        None if cfg!(debug_assertions) => build.profile("dev"),
        None => build.profile("release"),
    };
    if let Some(l) = &layout {
        build = build.target_dir(&l.target_dir);
        if l.cross {
            build = build.target(escargot::CURRENT_TARGET);
        }
    }
    match build.run() {
        Ok(run) => run.path().to_path_buf(),
        Err(e) => panic!(
            "could not build prh-native (features {features:?}, {layout:?}) for the tests: {e}"
        ),
    }
}

/// Where cargo put the running test executable, `TARGET_DIR[/TRIPLE]/PROFILE_DIR/deps/NAME`,
/// read back as the build settings to reuse; `None` when the path is not cargo's layout
/// (then cargo's defaults and the profile of `cfg!(debug_assertions)` are used).
#[derive(Debug)]
struct Layout {
    /// `dev` for the `debug` folder, else the folder's own name (`release`, custom ones).
    profile: String,
    target_dir: PathBuf,
    /// Built with `--target` (the profile folder sits in a folder named after the triple).
    cross: bool,
}

impl Layout {
    fn of_this_test() -> Option<Self> {
        let exe = std::env::current_exe().ok()?;
        let deps = exe.parent()?;
        if deps.file_name()? != "deps" {
            return None;
        }
        let profile_dir = deps.parent()?;
        let profile = match profile_dir.file_name()?.to_str()? {
            "debug" => "dev".to_string(),
            other => other.to_string(),
        };
        let above = profile_dir.parent()?;
        let cross = above.file_name()? == escargot::CURRENT_TARGET;
        let target_dir = if cross { above.parent()? } else { above };
        Some(Self {
            profile,
            target_dir: target_dir.to_path_buf(),
            cross,
        })
    }
}

/// Writes `dir/toy.jsonl`, the toy corpus of the train and fault tests: 40 groups of 3
/// paraphrases; the state is (colour, animal, action).
pub fn write_toy_corpus(dir: &Path) -> PathBuf {
    let mut out = String::new();
    for c in ["red", "blue", "green", "black", "white"] {
        for a in ["dog", "cat", "horse", "bird"] {
            for v in ["runs", "sleeps"] {
                let texts = [
                    format!("a {c} {a} {v} in the park"),
                    format!("the {a} that is {c} {v} today"),
                    format!("look , one {c} {a} {v} there"),
                ];
                out.push_str(
                    &serde_json::json!({ "id": format!("{c}-{a}-{v}"), "texts": texts })
                        .to_string(),
                );
                out.push('\n');
            }
        }
    }
    let p = dir.join("toy.jsonl");
    std::fs::write(&p, out).unwrap();
    p
}
