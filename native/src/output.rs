//! What the subcommands write, formatted once: the common top of the experiments'
//! `results.json`, pretty JSON files and report files named in their errors.

use anyhow::{Context, Result};
use serde::Serialize;
use std::path::Path;

/// The top part of an experiment's `results.json`: what ran, how it was called, on what.
#[derive(Serialize, Debug, Clone)]
pub struct ResultsHeader {
    /// The experiment's name (its config's `experiment.name`).
    pub experiment: String,
    /// The command line, arguments joined by spaces.
    pub command: String,
    /// Where the config came from (a file, or the built-in config's path).
    pub config_source: String,
    /// The `--set` overrides, where the experiment records them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sets: Option<Vec<String>>,
    /// The `--device` flag.
    pub device: String,
    /// Wall time of the whole experiment, seconds.
    pub wall_s: f64,
}

/// The command line as a user would retype it: the binary as `prh-native` (not the path
/// it ran from) and absolute paths made relative to the working directory (also those
/// outside it, `/work/shared/data` -> `../shared/data`, and after `=` in `key=/path`), so a
/// results file names no path of the machine it ran on.
fn portable_command(args: impl Iterator<Item = String>) -> String {
    let cwd = std::env::current_dir().ok();
    portable_args(args, cwd.as_deref())
}

/// [`portable_command`] against a given working directory.
fn portable_args(args: impl Iterator<Item = String>, cwd: Option<&Path>) -> String {
    let relative = |a: &str| -> Option<String> {
        let p = Path::new(a);
        if !p.is_absolute() {
            return None;
        }
        let r = pathdiff::diff_paths(p, cwd?)?;
        Some(if r.as_os_str().is_empty() {
            ".".to_string()
        } else {
            r.display().to_string()
        })
    };
    args.enumerate()
        .map(|(i, a)| {
            if i == 0 {
                return "prh-native".to_string();
            }
            if let Some(r) = relative(&a) {
                return r;
            }
            match a.split_once('=') {
                Some((key, value)) => relative(value).map_or(a.clone(), |r| format!("{key}={r}")),
                None => a,
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl ResultsHeader {
    /// The header of experiment `name` (config from `source`, `--device device`), run for
    /// `wall_s` seconds by this process's command line.
    pub fn new(name: &str, source: &str, device: &str, wall_s: f64) -> Self {
        ResultsHeader {
            experiment: name.to_string(),
            command: portable_command(std::env::args()),
            config_source: source.to_string(),
            sets: None,
            device: device.to_string(),
            wall_s,
        }
    }

    /// The same header recording the `--set` overrides too.
    pub fn with_sets(mut self, sets: &[String]) -> Self {
        self.sets = Some(sets.to_vec());
        self
    }
}

/// `results.json`: the header's fields and the body's, one object (keys sorted, as every
/// JSON object prh writes), pretty-printed.
pub fn write_results<T: Serialize>(out: &Path, header: &ResultsHeader, body: &T) -> Result<()> {
    #[derive(Serialize)]
    struct Results<'a, T> {
        #[serde(flatten)]
        header: &'a ResultsHeader,
        #[serde(flatten)]
        body: &'a T,
    }
    // Through a `Value`, whose objects keep their keys sorted: the order `json!` gives.
    let value = serde_json::to_value(Results { header, body })?;
    write_json(&out.join("results.json"), &value)
}

/// Writes `value` pretty-printed to `path`.
pub fn write_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<()> {
    write_file(path, serde_json::to_string_pretty(value)?)
}

/// Writes a report file (text, SVG, bytes), naming it in the error.
pub fn write_file(path: &Path, contents: impl AsRef<[u8]>) -> Result<()> {
    std::fs::write(path, contents).with_context(|| format!("writing {}", path.display()))
}

/// Writes `[N, D]` embeddings to `out`: the TensorFlow Embedding Projector's pair when the
/// name ends in `.tsv` (the vectors there, one label per row in the metadata file beside
/// it, see `tsv::metadata_path`), else a float32 `.npy`.
///
/// # Shapes
/// `values [N * d]` row-major, `labels [N]`.
pub fn write_embeddings(out: &Path, d: usize, values: &[f32], labels: &[String]) -> Result<()> {
    use prh_core::formats::{features, tsv};
    if out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("tsv"))
    {
        let meta = tsv::metadata_path(out);
        write_file(out, tsv::vectors_text(d, values))?;
        write_file(&meta, tsv::metadata_text(labels))?;
        println!("labels -> {}", meta.display());
        Ok(())
    } else {
        features::write_npy(out, &[values.len() / d.max(1), d], values)
            .with_context(|| format!("writing {}", out.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No path of the machine survives: the binary becomes `prh-native`, absolute paths
    /// inside and outside the working directory (and after `key=`) become relative ones,
    /// everything else stays as typed.
    #[test]
    fn commands_name_no_machine_path() {
        let args = [
            "/opt/cache/target/release/prh-native",
            "experiment",
            "--out",
            "/work/main/docs/results/x",
            "--data",
            "/work/shared/data",
            "--set",
            "train.run.steps=3",
            "--config=/work/main/configs/a.toml",
            "/work/main",
            "runs/y",
        ]
        .map(String::from);
        let cmd = portable_args(args.into_iter(), Some(Path::new("/work/main")));
        assert_eq!(
            cmd,
            "prh-native experiment --out docs/results/x --data ../shared/data --set \
             train.run.steps=3 --config=configs/a.toml . runs/y"
        );
    }

    /// The struct writes the bytes the hand-built `json!` header wrote (same keys, order
    /// and values), with and without `sets`.
    #[test]
    fn header_serialises_like_the_hand_built_object() {
        let dir = tempfile::tempdir().unwrap();
        let sets = vec!["train.run.steps=3".to_string()];
        let mut header = ResultsHeader::new("scaling (quick)", "configs/x.toml", "cpu", 1.25);
        header.command = "prh-native experiment scaling --quick".into();
        let body = serde_json::json!({"law": "a - b n^-c", "k": 10, "runs": [1.5, 2.0]});
        for sets in [None, Some(&sets)] {
            let mut h = header.clone();
            let mut by_hand = serde_json::json!({
                "experiment": "scaling (quick)",
                "command": "prh-native experiment scaling --quick",
                "config_source": "configs/x.toml",
                "device": "cpu",
                "wall_s": 1.25,
                "law": "a - b n^-c",
                "k": 10,
                "runs": [1.5, 2.0],
            });
            if let Some(s) = sets {
                h = h.with_sets(s);
                by_hand["sets"] = serde_json::json!(s);
            }
            write_results(dir.path(), &h, &body).unwrap();
            let written = std::fs::read_to_string(dir.path().join("results.json")).unwrap();
            assert_eq!(written, serde_json::to_string_pretty(&by_hand).unwrap());
        }
    }
}
