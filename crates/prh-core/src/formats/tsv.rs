//! The TensorFlow Embedding Projector's files (projector.tensorflow.org, "Load"):
//! `vectors.tsv`, one embedding per line as tab-separated numbers, no header; and
//! `metadata.tsv`, one label per line in the same order (a single column needs no header).
//! prh reads the vectors as an `[N, D]` feature file and writes both, so an embedding can
//! be opened in either tool.

use crate::{Error, Result};

/// Parses `vectors.tsv` text: line i holds row i, D tab-separated decimal numbers (the
/// Projector also accepts spaces around them, so surrounding whitespace is trimmed).
/// Blank lines at the end are ignored; a blank line inside is an error (it would shift
/// every later row against its metadata).
///
/// # Shapes
/// N lines of D numbers -> (N, D, `data [N * D]` row-major)
pub fn parse_vectors(source: &str, bytes: &[u8]) -> Result<(usize, usize, Vec<f64>)> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        Error::format(
            source,
            format!("byte {}", e.valid_up_to()),
            "not UTF-8 text: expected tab-separated numbers (vectors.tsv)",
        )
    })?;
    let lines: Vec<&str> = text.trim_end().lines().collect();
    if text.trim().is_empty() {
        return Err(Error::format(
            source,
            "line 1",
            "no vectors: expected one line of tab-separated numbers per embedding",
        ));
    }
    let mut data = Vec::new();
    let mut d = 0;
    for (i, line) in lines.iter().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            return Err(Error::format(
                source,
                format!("line {}", i + 1),
                "blank line inside the vectors: expected one embedding per line",
            ));
        }
        let before = data.len();
        for (j, cell) in line.split('\t').enumerate() {
            let v: f64 = cell.trim().parse().map_err(|_| {
                Error::format(
                    source,
                    format!("line {}, column {}", i + 1, j + 1),
                    format!("{:?} is not a number", truncate(cell)),
                )
            })?;
            data.push(v);
        }
        let width = data.len() - before;
        if i == 0 {
            d = width;
        } else if width != d {
            return Err(Error::format(
                source,
                format!("line {}", i + 1),
                format!("{width} values, line 1 has {d}: expected the same width on every line"),
            ));
        }
    }
    Ok((lines.len(), d, data))
}

fn truncate(s: &str) -> String {
    s.chars().take(40).collect()
}

/// `vectors.tsv` text of a row-major `[n, d]` matrix: the shortest decimals that read
/// back as the same f32 values.
///
/// # Shapes
/// `data [n * d]` -> n lines of d numbers
pub fn vectors_text(d: usize, data: &[f32]) -> String {
    let mut out = String::with_capacity(data.len() * 10);
    for row in data.chunks(d.max(1)) {
        let cells: Vec<String> = row.iter().map(|v| v.to_string()).collect();
        out.push_str(&cells.join("\t"));
        out.push('\n');
    }
    out
}

/// `metadata.tsv` text: one label per line; tabs and line breaks inside a label become
/// spaces (they would split it into columns or rows).
pub fn metadata_text(labels: &[String]) -> String {
    let mut out = String::new();
    for l in labels {
        out.extend(l.chars().map(|c| {
            if matches!(c, '\t' | '\n' | '\r') {
                ' '
            } else {
                c
            }
        }));
        out.push('\n');
    }
    out
}

/// Where the labels of a vectors file go: `metadata.tsv` beside `vectors.tsv` (the
/// Projector's names), else `<stem>.metadata.tsv`.
pub fn metadata_path(vectors: &std::path::Path) -> std::path::PathBuf {
    let name = match vectors.file_stem().and_then(|s| s.to_str()) {
        Some("vectors") | None => "metadata.tsv".to_string(),
        Some(stem) => format!("{stem}.metadata.tsv"),
    };
    vectors.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::features::Features;

    #[test]
    fn round_trip_and_errors() {
        let v = [0.5f32, -1.25, 3.0, 1e-7, 2.0, -0.0];
        let text = vectors_text(3, &v);
        assert_eq!(text.lines().count(), 2);
        let f = Features::from_bytes("e/vectors.tsv", text.as_bytes(), None).unwrap();
        assert_eq!((f.n, f.layers, f.d), (2, 1, 3));
        // Shortest decimals that round-trip through f32: equal once read back as f32.
        assert!(f.data.iter().zip(&v).all(|(a, &b)| *a as f32 == b));
        // CRLF line ends and trailing blank lines are fine.
        let f = Features::from_bytes("w.tsv", b"1\t2\r\n3\t4\r\n\n\n", None).unwrap();
        assert_eq!((f.n, f.d, f.data.clone()), (2, 2, vec![1.0, 2.0, 3.0, 4.0]));
        for (bytes, needles) in [
            (&b"1\t2\n3\n"[..], ["line 2", "1 values, line 1 has 2"]),
            (
                &b"1\tx\n"[..],
                ["line 1, column 2", "\"x\" is not a number"],
            ),
            (&b"1\t2\n\n3\t4\n"[..], ["line 2", "blank line"]),
            (&b"  \n"[..], ["line 1", "no vectors"]),
            (&b"1\tnan\n"[..], ["non-finite", "r.tsv"]),
        ] {
            let e = Features::from_bytes("r.tsv", bytes, None)
                .unwrap_err()
                .to_string();
            assert!(e.contains("r.tsv"), "{e}");
            for n in needles {
                assert!(e.contains(n), "{e} lacks {n}");
            }
        }
        assert_eq!(metadata_text(&["a\tb".into(), "c\nd".into()]), "a b\nc d\n");
        assert_eq!(
            metadata_path(std::path::Path::new("x/vectors.tsv")),
            std::path::Path::new("x/metadata.tsv")
        );
        assert_eq!(
            metadata_path(std::path::Path::new("x/emb.tsv")),
            std::path::Path::new("x/emb.metadata.tsv")
        );
    }
}
