//! Multi-view text corpora (paper section 3): a corpus is a list of *groups*, each group
//! the texts that observe one world state (the 5 captions of one Flickr30k image).
//!
//! Good views pair texts of one group; bad views stay inside one text. Readers:
//! - JSONL, one group a line: `{"id": "img-1", "texts": ["a dog runs", "a brown dog"]}`;
//! - Multi30k task 2: `multi30k/task2/raw/{split}.{1..5}.{en,de}.gz`, line `i` of the five
//!   files of a split describing image `i` (ids from `task2/image_splits/{split}_images.txt`
//!   when present). Splits are the source's own (`train`, `val`, `test_2016`).
//!
//! The parsers take readers, so the browser can feed uploaded bytes; path wrappers are
//! native-only.

use std::io::{BufRead, Read};

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// Where a text run's corpus comes from (`data.source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DataSource {
    /// Multi30k task 2 under the data directory (`data.lang`, `data.train_split`).
    #[serde(rename = "multi30k")]
    Multi30k,
    /// One JSONL file of `{"id", "texts"}` groups (`data.path`), read into memory.
    Jsonl,
    /// JSONL shards, plain or gzip, streamed (`data.path`: files or glob patterns).
    Shards,
}

/// Corpus selection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DataConfig {
    /// `multi30k` (task-2 layout under the data dir), `jsonl` (`{"id", "texts"}` lines) or
    /// `shards` (JSONL shards, plain or gzip, streamed: `crate::text::shards`).
    pub source: DataSource,
    /// JSONL: the training file. Shards: comma-separated files or glob patterns.
    /// Multi30k: ignored (read from the data dir).
    pub path: String,
    /// JSONL: optional held-out file for evaluation.
    pub eval_path: String,
    /// Multi30k language: `en` or `de`.
    pub lang: String,
    /// Multi30k training split.
    pub train_split: String,
    /// Multi30k held-out split used for evaluation and the embeddings export.
    pub eval_split: String,
    /// Keep only the first this many training groups (0: all).
    pub max_groups: usize,
    /// Shards: groups held in the shuffle buffer (bounds memory; larger mixes better).
    pub shuffle_buffer: usize,
    /// Shards: the corpus is read as this many independent streams ("parts"), each step
    /// taking `views.batch_size / stream_parts` groups from every part. Part `p`'s files
    /// are those `path` names with `{part}` replaced by `p`, or else (no `{part}`) every
    /// `stream_parts`-th file of the sorted list from the `p`-th on
    /// ([`crate::text::shards::part_files`]). With `--nodes N` (a divisor of
    /// `stream_parts`) node `r` reads only parts `r P / N .. (r + 1) P / N`, so no node
    /// reads (or needs a copy of) the others' files; the training is the same for every
    /// divisor `N`. 1: one stream, which every node reads whole.
    pub stream_parts: usize,
}

impl Default for DataConfig {
    fn default() -> Self {
        Self {
            source: DataSource::Multi30k,
            path: String::new(),
            eval_path: String::new(),
            lang: "en".into(),
            train_split: "train".into(),
            eval_split: "val".into(),
            max_groups: 0,
            shuffle_buffer: 10_000,
            stream_parts: 1,
        }
    }
}

/// The texts observing one world state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// Identifier of the world state (e.g. the image file name).
    pub id: String,
    /// Its texts (at least one).
    pub texts: Vec<String>,
}

/// A list of groups.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Corpus {
    /// Groups in source order.
    pub groups: Vec<Group>,
}

impl Corpus {
    /// Parses JSONL: one `{"id": string|number, "texts": [string, ...]}` object per
    /// non-empty line. `source` names the input in errors (with the line number).
    pub fn from_jsonl(source: &str, reader: impl BufRead) -> Result<Self> {
        let mut groups = Vec::new();
        for (i, line) in reader.lines().enumerate() {
            let line = line.map_err(|e| Error::io(source, e))?;
            groups.extend(parse_group_line(source, i + 1, &line)?);
        }
        if groups.is_empty() {
            return Err(Error::format(source, "groups", "no groups found"));
        }
        Ok(Self { groups })
    }

    /// Builds groups from parallel caption streams: line `i` of every stream describes
    /// state `i`. `ids`, if given, names the states (one line each).
    pub fn from_parallel(
        sources: &[(String, Vec<String>)],
        ids: Option<Vec<String>>,
    ) -> Result<Self> {
        let first = sources
            .first()
            .ok_or_else(|| Error::invalid("no caption files"))?;
        let n = first.1.len();
        for (name, lines) in sources {
            if lines.len() != n {
                return Err(Error::format(
                    name,
                    "lines",
                    format!("expected {n} lines (as {}), found {}", first.0, lines.len()),
                ));
            }
        }
        if let Some(ids) = &ids
            && ids.len() != n
        {
            return Err(Error::invalid(format!(
                "image list has {} names for {n} caption lines",
                ids.len()
            )));
        }
        let groups = (0..n)
            .map(|i| Group {
                id: ids.as_ref().map_or_else(|| i.to_string(), |v| v[i].clone()),
                texts: sources.iter().map(|(_, l)| l[i].clone()).collect(),
            })
            .collect();
        Ok(Self { groups })
    }

    /// Keeps the first `n` groups (`n = 0` keeps all).
    pub fn truncate(&mut self, n: usize) {
        if n > 0 {
            self.groups.truncate(n);
        }
    }

    /// Every text of every group, in order.
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        self.groups
            .iter()
            .flat_map(|g| g.texts.iter().map(String::as_str))
    }

    /// JSONL text of the corpus (the inverse of [`Corpus::from_jsonl`]).
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for g in &self.groups {
            let line = serde_json::json!({ "id": g.id, "texts": g.texts });
            out.push_str(&line.to_string());
            out.push('\n');
        }
        out
    }
}

/// Parses one JSONL line `{"id": string|number, "texts": [string, ...]}` (line number
/// `line_no`, 1-based, for errors); `None` for a blank line. Numeric ids become strings.
pub fn parse_group_line(source: &str, line_no: usize, line: &str) -> Result<Option<Group>> {
    #[derive(Deserialize)]
    struct Line {
        id: serde_json::Value,
        texts: Vec<String>,
    }
    if line.trim().is_empty() {
        return Ok(None);
    }
    let field = format!("line {line_no}");
    let parsed: Line = serde_json::from_str(line).map_err(|e| {
        Error::format(
            source,
            &field,
            format!("expected {{\"id\": ..., \"texts\": [..]}}: {e}"),
        )
    })?;
    if parsed.texts.is_empty() {
        return Err(Error::format(
            source,
            format!("{field}: texts"),
            "expected at least one text",
        ));
    }
    let id = match parsed.id {
        serde_json::Value::String(s) => s,
        other => other.to_string(),
    };
    Ok(Some(Group {
        id,
        texts: parsed.texts,
    }))
}

/// Reads the lines of gzip-compressed text (one caption a line).
pub fn gunzip_lines(source: &str, reader: impl Read) -> Result<Vec<String>> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(reader)
        .read_to_string(&mut text)
        .map_err(|e| {
            Error::format(
                source,
                "gzip",
                format!("expected gzip-compressed UTF-8 text: {e}"),
            )
        })?;
    Ok(text.lines().map(|l| l.trim().to_string()).collect())
}

/// Reads a JSONL corpus file.
#[cfg(not(target_arch = "wasm32"))]
pub fn read_jsonl(path: &std::path::Path) -> Result<Corpus> {
    let f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    Corpus::from_jsonl(&path.display().to_string(), std::io::BufReader::new(f))
}

/// Reads Multi30k task 2 under `data_dir` (`multi30k/task2/...`) for `split` and `lang`.
#[cfg(not(target_arch = "wasm32"))]
pub fn read_multi30k(data_dir: &std::path::Path, split: &str, lang: &str) -> Result<Corpus> {
    if !matches!(lang, "en" | "de") {
        return Err(Error::invalid(format!(
            "data.lang: expected `en` or `de`, got `{lang}`"
        )));
    }
    let root = data_dir.join("multi30k").join("task2");
    let mut sources = Vec::new();
    for k in 1..=5 {
        let path = root.join("raw").join(format!("{split}.{k}.{lang}.gz"));
        let f = std::fs::File::open(&path).map_err(|e| Error::io(&path, e))?;
        let name = path.display().to_string();
        let lines = gunzip_lines(&name, std::io::BufReader::new(f))?;
        sources.push((name, lines));
    }
    let ids_path = root
        .join("image_splits")
        .join(format!("{split}_images.txt"));
    let ids = std::fs::read_to_string(&ids_path).ok().map(|t| {
        t.lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    });
    Corpus::from_parallel(&sources, ids)
}

/// The data directory: `flag`, else `$PRH_DATA`, else `../shared/data` if it exists.
#[cfg(not(target_arch = "wasm32"))]
pub fn data_dir(flag: Option<&std::path::Path>) -> Option<std::path::PathBuf> {
    if let Some(p) = flag {
        return Some(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("PRH_DATA") {
        return Some(p.into());
    }
    let default = std::path::PathBuf::from("../shared/data");
    default.exists().then_some(default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonl_round_trip_and_errors() {
        let text =
            "{\"id\": \"a\", \"texts\": [\"x y\", \"z\"]}\n\n{\"id\": 7, \"texts\": [\"w\"]}\n";
        let c = Corpus::from_jsonl("c.jsonl", text.as_bytes()).unwrap();
        assert_eq!(c.groups.len(), 2);
        assert_eq!(c.groups[1].id, "7");
        assert_eq!(c.texts().collect::<Vec<_>>(), ["x y", "z", "w"]);
        assert_eq!(Corpus::from_jsonl("c", c.to_jsonl().as_bytes()).unwrap(), c);
        let e = Corpus::from_jsonl("c.jsonl", "{\"id\": 1}\n".as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.contains("c.jsonl") && e.contains("line 1"), "{e}");
        let e = Corpus::from_jsonl("c.jsonl", "{\"id\": 1, \"texts\": []}\n".as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.contains("texts"), "{e}");
    }

    #[test]
    fn parallel_streams_group_by_line() {
        let s = vec![
            ("f1".to_string(), vec!["a".into(), "b".into()]),
            ("f2".to_string(), vec!["c".into(), "d".into()]),
        ];
        let c = Corpus::from_parallel(&s, None).unwrap();
        assert_eq!(c.groups[1].texts, ["b", "d"]);
        let bad = vec![s[0].clone(), ("f3".to_string(), vec!["e".into()])];
        let e = Corpus::from_parallel(&bad, None).unwrap_err().to_string();
        assert!(e.contains("f3") && e.contains("expected 2 lines"), "{e}");
    }

    #[test]
    fn gzip_lines_are_read() {
        use std::io::Write;
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(b"one dog\ntwo cats\n").unwrap();
        let bytes = enc.finish().unwrap();
        assert_eq!(
            gunzip_lines("g", &bytes[..]).unwrap(),
            ["one dog", "two cats"]
        );
        assert!(
            gunzip_lines("g.gz", &b"plain"[..])
                .unwrap_err()
                .to_string()
                .contains("g.gz")
        );
    }

    #[test]
    fn multi30k_val_has_five_captions_per_image() {
        let Some(dir) = data_dir(None).filter(|d| d.join("multi30k").exists()) else {
            eprintln!("skipped: no data dir with multi30k (set PRH_DATA)");
            return;
        };
        let c = read_multi30k(&dir, "val", "de").unwrap();
        assert_eq!(c.groups.len(), 1014);
        assert!(c.groups.iter().all(|g| g.texts.len() == 5));
        assert!(c.groups[0].id.ends_with(".jpg"), "{}", c.groups[0].id);
    }
}
