//! Integration tests of the CLI as a whole: every subcommand's `--help` is accurate and
//! runs without error.

use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_prh-native"))
}

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
