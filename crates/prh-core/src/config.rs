//! TOML configs with `--set` overrides, shared by every config type of prh: each section
//! lives beside the code that reads it (`train::config` for `[run]`, `[loss]`, `[optim]`;
//! `text::corpus` for `[data]`, `text::tokenizer`, `text::views`, `models::text_encoder`
//! for `[model]`; `tasks` for `[task]` and the whole text-run config), and every type is
//! parsed through [`parse_toml`] so errors name the file and field alike.
//!
//! Every field has a one-line doc and a default, so a config file only names what it
//! changes. `--set key=value` overrides any dotted path (`optim.lr=1e-4`) before the
//! typed parse, and the resolved config is saved with each run (`config.toml`).

use crate::linalg::levenshtein;
use crate::{Error, Result};

/// A config as TOML, the form saved in run folders and checkpoints (the inverse of
/// [`parse_toml`] for every config type).
pub fn to_toml<T: serde::Serialize>(cfg: &T) -> Result<String> {
    toml::to_string_pretty(cfg).map_err(|e| Error::invalid(format!("config to TOML: {e}")))
}

/// Parses TOML text into a config type (`source` names it in errors) after applying
/// `overrides` (`key.path=value`, the value parsed as TOML, else taken as a string); an
/// unknown key's error names the nearest valid one.
pub fn parse_toml<T: serde::de::DeserializeOwned>(
    source: &str,
    text: &str,
    overrides: &[String],
) -> Result<T> {
    let mut value: toml::Table =
        toml::from_str(text).map_err(|e| Error::format(source, "toml", e.to_string()))?;
    for o in overrides {
        set_path(&mut value, o)?;
    }
    toml::Value::Table(value)
        .try_into()
        .map_err(|e: toml::de::Error| Error::format(source, "config", suggest(&e.to_string())))
}

/// Appends "did you mean `x`?" to serde's "unknown field `k`, expected one of ..." message:
/// the valid field nearest to `k` in edit distance (within half of `k`'s length), so a
/// typo points at its fix. Other messages pass through unchanged.
fn suggest(message: &str) -> String {
    let Some((_, rest)) = message.split_once("unknown field `") else {
        return message.to_string();
    };
    let Some((key, tail)) = rest.split_once('`') else {
        return message.to_string();
    };
    // The candidates are the back-quoted names on the same line ("\nin `table`" follows).
    let line = tail.lines().next().unwrap_or("");
    let nearest = line
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|c| (edit_distance(key, c), c))
        .min();
    match nearest {
        Some((d, c)) if d <= key.chars().count().div_ceil(2) => {
            format!("{message} (did you mean `{c}`?)")
        }
        _ => message.to_string(),
    }
}

/// Levenshtein distance between `a` and `b` in characters ([`levenshtein`]).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    levenshtein(&a, &b)
}

/// Sets `a.b.c=value` in a TOML table, creating intermediate tables.
fn set_path(table: &mut toml::Table, assignment: &str) -> Result<()> {
    let (key, raw) = assignment
        .split_once('=')
        .ok_or_else(|| Error::invalid(format!("--set expects key=value, got `{assignment}`")))?;
    let value = toml::from_str::<toml::Table>(&format!("v = {raw}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_string()));
    let parts: Vec<&str> = key.trim().split('.').collect();
    let mut cur = table;
    for part in &parts[..parts.len() - 1] {
        let entry = cur
            .entry(part.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        cur = entry
            .as_table_mut()
            .ok_or_else(|| Error::invalid(format!("--set {key}: `{part}` is not a table")))?;
    }
    cur.insert(parts[parts.len() - 1].to_string(), value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_is_levenshtein() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "ab"), 2);
    }
}
