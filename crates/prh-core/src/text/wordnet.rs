//! WordNet 3.0 noun synsets as multi-view text (paper section 3's "good views" applied to
//! concepts): one synset is one world state, observed by several texts — its lemmas, its
//! definition, and each of its quoted usage examples.
//!
//! ```text
//! 01440764 05 n 02 tench 0 Tinca_tinca 0 002 @ 01439121 n 0000 ... | freshwater dace-like game fish ...
//! -> Synset { wnid: "n01440764", lemmas: ["tench", "Tinca tinca"], definition: "freshwater ...", examples: [] }
//! -> texts ["tench, Tinca tinca", "freshwater dace-like game fish ..."]
//! ```
//!
//! Good views take spans of two *different* texts of one synset; bad views stay in one
//! text. ImageNet class ids (`n01440764`) are `n` + the synset's byte offset in
//! `data.noun`, so the ImageNet classes can be kept out of training by id.
//!
//! The parser takes a reader (the browser can feed bytes); [`read_nouns`] is the
//! native path wrapper (Debian package `wordnet-base`: `/usr/share/wordnet/data.noun`).

use std::io::BufRead;

use crate::text::corpus::Group;
use crate::{Error, Result};

/// Default WordNet dictionary directory (Debian `wordnet-base`).
pub const DEFAULT_DIR: &str = "/usr/share/wordnet";

/// One noun synset.
#[derive(Debug, Clone, PartialEq)]
pub struct Synset {
    /// `n` + the 8-digit offset (the ImageNet wnid form).
    pub wnid: String,
    /// Lemmas in file order, underscores replaced by spaces.
    pub lemmas: Vec<String>,
    /// The gloss before its first quoted example, trailing `;` removed.
    pub definition: String,
    /// Each double-quoted example of the gloss.
    pub examples: Vec<String>,
}

impl Synset {
    /// The synset's texts (views of one concept): `"lemma1, lemma2"`, the definition
    /// (if any), then each example.
    pub fn texts(&self) -> Vec<String> {
        let mut t = vec![self.lemmas.join(", ")];
        if !self.definition.is_empty() {
            t.push(self.definition.clone());
        }
        t.extend(self.examples.iter().cloned());
        t
    }

    /// The synset as a corpus group (id = wnid).
    pub fn to_group(&self) -> Group {
        Group {
            id: self.wnid.clone(),
            texts: self.texts(),
        }
    }
}

/// Splits a gloss into its definition and quoted examples:
/// `def; "ex 1"; "ex 2"` -> (`def`, [`ex 1`, `ex 2`]). An unmatched quote ends the
/// examples (the rest is dropped rather than guessed at).
pub fn split_gloss(gloss: &str) -> (String, Vec<String>) {
    let (def, rest) = match gloss.find('"') {
        Some(i) => (&gloss[..i], &gloss[i..]),
        None => (gloss, ""),
    };
    let definition = def.trim().trim_end_matches(';').trim().to_string();
    let mut examples = Vec::new();
    let mut s = rest;
    while let Some(open) = s.find('"') {
        let after = &s[open + 1..];
        let Some(close) = after.find('"') else { break };
        let ex = after[..close].trim();
        if !ex.is_empty() {
            examples.push(ex.to_string());
        }
        s = &after[close + 1..];
    }
    (definition, examples)
}

/// Parses one `data.noun` line (`source` and `line_no` name it in errors); `None` for
/// the licence header (lines starting with two spaces).
///
/// Format (wndb(5)): `offset lex_filenum ss_type w_cnt(hex) [word lex_id]... p_cnt ... | gloss`.
pub fn parse_line(source: &str, line_no: usize, line: &str) -> Result<Option<Synset>> {
    if line.starts_with("  ") || line.trim().is_empty() {
        return Ok(None);
    }
    let field = |what: &str| format!("line {line_no}: {what}");
    let (head, gloss) = line.split_once(" | ").unwrap_or((line, ""));
    let mut tok = head.split_ascii_whitespace();
    let offset = tok
        .next()
        .filter(|o| o.len() == 8 && o.bytes().all(|b| b.is_ascii_digit()))
        .ok_or_else(|| Error::format(source, field("offset"), "expected 8 digits"))?;
    let _lex_filenum = tok.next();
    let _ss_type = tok.next();
    let w_cnt = tok
        .next()
        .and_then(|w| usize::from_str_radix(w, 16).ok())
        .ok_or_else(|| Error::format(source, field("w_cnt"), "expected a hex word count"))?;
    let mut lemmas = Vec::with_capacity(w_cnt);
    for _ in 0..w_cnt {
        let word = tok.next().ok_or_else(|| {
            Error::format(source, field("words"), format!("expected {w_cnt} words"))
        })?;
        let _lex_id = tok.next();
        // Adjective markers such as `(a)` only occur in data.adj; strip them anyway.
        let word = word.split('(').next().unwrap_or(word);
        lemmas.push(word.replace('_', " "));
    }
    if lemmas.is_empty() {
        return Err(Error::format(
            source,
            field("words"),
            "expected at least one word",
        ));
    }
    let (definition, examples) = split_gloss(gloss.trim());
    Ok(Some(Synset {
        wnid: format!("n{offset}"),
        lemmas,
        definition,
        examples,
    }))
}

/// Parses a whole `data.noun` (`source` names it in errors).
pub fn parse_data(source: &str, reader: impl BufRead) -> Result<Vec<Synset>> {
    let mut out = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| Error::io(source, e))?;
        if let Some(s) = parse_line(source, i + 1, &line)? {
            out.push(s);
        }
    }
    if out.is_empty() {
        return Err(Error::format(source, "synsets", "no synsets found"));
    }
    Ok(out)
}

/// Reads `DIR/data.noun`, with an error that says how to get it when absent.
#[cfg(not(target_arch = "wasm32"))]
pub fn read_nouns(dir: &std::path::Path) -> Result<Vec<Synset>> {
    let path = dir.join("data.noun");
    let source = path.display().to_string();
    let f = std::fs::File::open(&path).map_err(|e| {
        Error::format(
            &source,
            "file",
            format!(
                "cannot open WordNet noun data ({e}); install Debian's `wordnet-base` \
                 (apt-get install wordnet-base) or point the experiment's \
                 `vision.wordnet` at a WordNet 3.0 dict directory"
            ),
        )
    })?;
    parse_data(&source, std::io::BufReader::new(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINES: &str = "  1 This software and database is being provided\n\
01440764 05 n 02 tench 0 Tinca_tinca 0 002 @ 01439121 n 0000 #m 01440655 n 0000 | freshwater dace-like game fish of Europe and western Asia  \n\
00001740 03 n 01 entity 0 003 ~ 00001930 n 0000 ~ 00002137 n 0000 ~ 04431553 n 0000 | that which is perceived or known or inferred to have its own distinct existence (living or nonliving)  \n\
02084071 05 n 02 dog 0 domestic_dog 0 001 @ 02083346 n 0000 | a member of the genus Canis; \"the dog barked all night\"; \"a dog's life\"  \n";

    #[test]
    fn parses_lemmas_definition_and_examples() {
        let s = parse_data("data.noun", LINES.as_bytes()).unwrap();
        assert_eq!(s.len(), 3, "the licence header is skipped");
        assert_eq!(s[0].wnid, "n01440764");
        assert_eq!(s[0].lemmas, ["tench", "Tinca tinca"]);
        assert_eq!(
            s[0].definition,
            "freshwater dace-like game fish of Europe and western Asia"
        );
        assert!(s[0].examples.is_empty());
        assert_eq!(
            s[2].texts(),
            [
                "dog, domestic dog",
                "a member of the genus Canis",
                "the dog barked all night",
                "a dog's life"
            ]
        );
        assert_eq!(s[1].to_group().texts.len(), 2);
        assert_eq!(s[1].to_group().id, "n00001740");
    }

    #[test]
    fn gloss_split_edge_cases() {
        assert_eq!(
            split_gloss("only a definition"),
            ("only a definition".into(), vec![])
        );
        assert_eq!(
            split_gloss("d; \"a\"; \"unclosed"),
            ("d".into(), vec!["a".to_string()])
        );
        assert_eq!(split_gloss("\"x\""), (String::new(), vec!["x".to_string()]));
    }

    #[test]
    fn malformed_lines_are_named() {
        let e = parse_line("data.noun", 7, "0144 05 n 02 tench 0 | x").unwrap_err();
        assert!(
            e.to_string().contains("line 7") && e.to_string().contains("offset"),
            "{e}"
        );
        let e = parse_line("data.noun", 8, "01440764 05 n 03 tench 0 | x").unwrap_err();
        assert!(e.to_string().contains("words"), "{e}");
        let e = parse_data("empty", "  header only\n".as_bytes()).unwrap_err();
        assert!(e.to_string().contains("no synsets"), "{e}");
    }

    #[test]
    fn real_file_when_installed() {
        let dir = std::path::Path::new(DEFAULT_DIR);
        if !dir.join("data.noun").exists() {
            eprintln!("skipped: no {DEFAULT_DIR}/data.noun (Debian wordnet-base)");
            return;
        }
        let s = read_nouns(dir).unwrap();
        // WordNet 3.0 has 82,115 noun synsets.
        assert_eq!(s.len(), 82_115);
        let tench = s.iter().find(|x| x.wnid == "n01440764").unwrap();
        assert_eq!(tench.lemmas[0], "tench");
        assert!(read_nouns(std::path::Path::new("/nonexistent")).is_err());
    }
}
