//! The house rules of `crates/prh-core/src` (docs/architecture.md), checked over the
//! source text so a change that breaks them fails `cargo test`:
//! 1. every module lives in a wing folder (only `lib.rs`, `error.rs`, `rng.rs`,
//!    `config.rs` and `progress.rs` stay loose at the top);
//! 2. imports point down the wing order ([`WINGS`]): a file may name (`crate::wing`)
//!    its own wing, a wing below it, or a loose file — never a wing above it, so no cycle
//!    between wings can exist; loose files use at most the floor, `linalg`;
//! 3. the tensor-free wings (`linalg`, `formats`, `theory`, `measure`, `text`, `scene`)
//!    never name burn, so a burn-free crate could be split off mechanically.
//!
//! Comments are skipped (doc links may point anywhere); test modules count like any code.

use std::path::{Path, PathBuf};

/// The wings, lowest first: a wing may use the wings before it.
const WINGS: [&str; 11] = [
    "linalg",
    "formats",
    "theory",
    "measure",
    "text",
    "scene",
    "backend",
    "models",
    "train",
    "tasks",
    "experiments",
];
/// Loose files at the top of `src/`, usable from every wing; they use no wing.
const LOOSE: [&str; 5] = ["lib", "error", "rng", "config", "progress"];
/// Wings that must compile without burn.
const TENSOR_FREE: [&str; 6] = ["linalg", "formats", "theory", "measure", "text", "scene"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The source without `//` comments (line and doc comments), string contents kept.
fn code_only(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            // A `//` inside a string literal ("http://") is rare here; only strip when the
            // part before it has an even number of quotes.
            Some(i) if line[..i].matches('"').count() % 2 == 0 => &line[..i],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::NAME` (and `crate::{NAME, ...}` group item) named in `code`.
fn crate_refs(code: &str) -> Vec<String> {
    let mut refs = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    refs.push(name);
                }
            }
        } else {
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            refs.push(name);
        }
        rest = after;
    }
    refs
}

fn wing_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("file under src");
    let first = rel.components().next().expect("non-empty path");
    let first = first.as_os_str().to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

#[test]
fn wings_import_downwards_only_and_tensor_free_wings_avoid_burn() {
    let src = src();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    assert!(
        files.len() > 40,
        "found only {} files under {src:?}",
        files.len()
    );
    let rank = |w: &str| WINGS.iter().position(|x| *x == w);
    let mut broken = Vec::new();
    for file in &files {
        let wing = wing_of(&src, file);
        let rel = file.strip_prefix(&src).unwrap().display().to_string();
        let own = match rank(&wing) {
            Some(r) => Some(r),
            None if LOOSE.contains(&wing.as_str()) => None,
            None => {
                broken.push(format!("{rel}: not in a wing folder (wings: {WINGS:?})"));
                continue;
            }
        };
        let code = code_only(&std::fs::read_to_string(file).expect("read source"));
        for name in crate_refs(&code) {
            let Some(target) = rank(&name) else {
                if !LOOSE.contains(&name.as_str()) && !["Error", "Result"].contains(&name.as_str())
                {
                    broken.push(format!(
                        "{rel}: names crate::{name}, which is neither a wing nor a loose file"
                    ));
                }
                continue;
            };
            match own {
                None if wing != "lib" && target > 0 => broken.push(format!(
                    "{rel}: a loose file names the wing `{name}` (loose files may use only `linalg`)"
                )),
                Some(own) if target > own => broken.push(format!(
                    "{rel}: wing `{wing}` names `{name}`, a wing above it (order: {WINGS:?})"
                )),
                _ => {}
            }
        }
        if TENSOR_FREE.contains(&wing.as_str())
            && (code.contains("burn::") || code.contains("burn_") || code.contains("use burn"))
        {
            broken.push(format!("{rel}: the tensor-free wing `{wing}` names burn"));
        }
    }
    assert!(
        broken.is_empty(),
        "house rules broken:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_reference_parser_sees_groups_and_paths() {
    let refs = crate_refs("use crate::{linalg::svd, Error};\nlet x = crate::theory::kernel::k();");
    assert_eq!(refs, ["linalg", "Error", "theory"]);
    assert_eq!(
        code_only("let a = 1; // crate::train\n//! crate::tasks"),
        "let a = 1; \n"
    );
}
