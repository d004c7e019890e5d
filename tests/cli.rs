//! Integration tests of the CLI as a whole: every subcommand's `--help` is accurate and
//! runs without error.

use prh_tests::bin;

#[test]
fn top_level_help_lists_every_subcommand() {
    let out = bin().arg("--help").output().expect("run prh-native --help");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for cmd in ["spectral", "demo"] {
        assert!(
            text.contains(cmd),
            "--help does not mention `{cmd}`:\n{text}"
        );
    }
}

#[test]
fn unknown_subcommand_fails_with_non_zero_exit() {
    let out = bin()
        .arg("no-such-command")
        .output()
        .expect("run prh-native");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-command"));
}

/// The comparison commands share one declaration of their inputs (native/src/cmd/inputs.rs):
/// each still shows both positional files and every input flag with its help line.
#[test]
fn comparison_commands_show_the_shared_input_flags() {
    for (cmd, layers) in [("metrics", false), ("align", true), ("match", true)] {
        let out = bin().args([cmd, "--help"]).output().expect("run --help");
        assert!(out.status.success(), "{cmd} --help failed");
        let text = String::from_utf8_lossy(&out.stdout);
        let mut needles = vec![
            "<A>",
            "<B>",
            "--array-a <ARRAY_A>",
            "--array-b <ARRAY_B>",
            "Embeddings of modality A",
            "Array to read from A-side files",
        ];
        if layers {
            needles.extend(["--layer-a <LAYER_A>", "--layer-b <LAYER_B>", "Layer of A"]);
        }
        for n in needles {
            assert!(text.contains(n), "`{cmd} --help` lacks `{n}`:\n{text}");
        }
        assert_eq!(
            text.contains("--layer-a"),
            layers,
            "`{cmd}` layer flags:\n{text}"
        );
    }
}

/// An unknown `task.kind` is refused, naming the file and the valid kinds.
#[test]
fn train_refuses_an_unknown_task_kind() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.toml");
    std::fs::write(&cfg, "[task]\nkind = \"scene-video\"\n").unwrap();
    let out = bin()
        .args(["train", "--config"])
        .arg(&cfg)
        .output()
        .expect("run train");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("c.toml") && err.contains("scene-image") && err.contains("kind"),
        "{err}"
    );
}

/// `bench train` refuses settings it cannot run before starting either side: a batch the
/// replicas cannot split, zero threads.
#[test]
fn bench_train_refuses_unsplittable_batches() {
    for (args, needle) in [
        (
            vec!["--batch", "3", "--threads", "2"],
            "--batch 3 is not a multiple of prh's 2 replicas",
        ),
        (
            vec!["--batch", "8", "--threads", "1", "--replicas", "3"],
            "--batch 8 is not a multiple of prh's 3 replicas",
        ),
        (vec!["--threads", "0"], "--threads >= 1"),
    ] {
        let out = bin()
            .args(["bench", "train", "--peak-n", "0"])
            .args(&args)
            .output()
            .expect("run prh-native bench train");
        assert!(!out.status.success(), "{args:?} succeeded");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
