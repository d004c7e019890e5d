//! Tokenizer (paper section 4: a BERT-style text encoder needs BERT-style tokens).
//!
//! A WordPiece vocabulary trained with HF `tokenizers` on the training texts (BERT
//! normaliser and pre-tokeniser), saved as the standard `tokenizer.json`, so the very same
//! file loads natively and in the browser ([`TextTokenizer::from_bytes`]).
//!
//! Special tokens, in this order (so their ids are 0..5 in every trained vocabulary):
//! `[PAD]`, `[UNK]`, `[CLS]`, `[SEP]`, `[MASK]`.

use tokenizers::models::TrainerWrapper;
use tokenizers::models::wordpiece::{WordPiece, WordPieceTrainer};
use tokenizers::normalizers::bert::BertNormalizer;
use tokenizers::pre_tokenizers::bert::BertPreTokenizer;
use tokenizers::{AddedToken, Tokenizer};

use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// Tokenizer: trained on the training texts unless `path` names a `tokenizer.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TokenizerConfig {
    /// Existing `tokenizer.json` to load ("" = train a WordPiece on the training texts).
    pub path: String,
    /// WordPiece vocabulary size when training.
    pub vocab_size: usize,
    /// Minimum count for a merge when training.
    pub min_frequency: u64,
    /// Lower-case before tokenizing (BERT uncased).
    pub lowercase: bool,
}

impl Default for TokenizerConfig {
    fn default() -> Self {
        Self {
            path: String::new(),
            vocab_size: 8000,
            min_frequency: 2,
            lowercase: true,
        }
    }
}

/// The special tokens every prh vocabulary has.
pub const SPECIALS: [&str; 5] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];

/// A WordPiece tokenizer plus the ids of its special tokens.
#[derive(Clone)]
pub struct TextTokenizer {
    inner: Tokenizer,
    /// Padding id.
    pub pad: u32,
    /// Unknown-token id.
    pub unk: u32,
    /// Classification (first) token id, used by CLS pooling.
    pub cls: u32,
    /// Separator id.
    pub sep: u32,
    /// Mask id, used by the views' masking.
    pub mask: u32,
    /// Ids of texts already encoded (shared by clones, which encode alike): training
    /// draws the same captions again and again, and HF's normaliser and pre-tokeniser
    /// were a fifth of a scene caption step. At most [`MEMO_CAP`] texts are kept.
    memo: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<Box<str>, Vec<u32>>>>,
}

/// Most texts [`TextTokenizer::encode`] remembers (a streamed corpus never repeats).
pub const MEMO_CAP: usize = 1 << 18;

impl std::fmt::Debug for TextTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TextTokenizer(vocab {})", self.vocab_size())
    }
}

fn tok_err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::invalid(format!("tokenizer: {what}: {e}"))
}

/// Renumbers a trained vocabulary: special tokens first (in [`SPECIALS`] order), then
/// every other token in byte order.
///
/// Why: the HF trainer orders its alphabet by frequency with an unstable sort over a
/// randomly seeded hash map, so equal-count characters get different ids in different
/// processes. This makes ids a function of the token set alone. The set itself can still
/// differ between processes when merge counts tie (the trainer breaks ties by those
/// ids), so a run saves its `tokenizer.json`, `--resume` reuses it, and a bit-exact rerun
/// from scratch passes it back as `tokenizer.path`.
fn canonical_ids(tok: &Tokenizer) -> Result<Tokenizer> {
    let json = tok.to_string(false).map_err(|e| tok_err("serialise", e))?;
    let mut v: serde_json::Value =
        serde_json::from_str(&json).map_err(|e| tok_err("reparse", e))?;
    let vocab = v
        .pointer_mut("/model/vocab")
        .and_then(|x| x.as_object_mut())
        .ok_or_else(|| tok_err("canonical ids", "no model.vocab in the trained tokenizer"))?;
    let mut others: Vec<String> = vocab
        .keys()
        .filter(|k| !SPECIALS.contains(&k.as_str()))
        .cloned()
        .collect();
    others.sort();
    let order = SPECIALS.iter().map(|s| s.to_string()).chain(others);
    *vocab = order
        .enumerate()
        .map(|(i, k)| (k, serde_json::json!(i)))
        .collect();
    Tokenizer::from_bytes(v.to_string().as_bytes()).map_err(|e| tok_err("reload", e))
}

impl TextTokenizer {
    /// Trains a WordPiece vocabulary of at most `cfg.vocab_size` tokens on `texts`.
    pub fn train<'a>(
        texts: impl Iterator<Item = &'a str> + Send,
        cfg: &TokenizerConfig,
    ) -> Result<Self> {
        let mut tok = Tokenizer::new(WordPiece::default());
        tok.with_normalizer(Some(BertNormalizer::new(true, true, None, cfg.lowercase)))
            .map_err(|e| tok_err("normalizer", e))?;
        tok.with_pre_tokenizer(Some(BertPreTokenizer));
        tok.with_decoder(Some(tokenizers::decoders::wordpiece::WordPiece::default()));
        let trainer = WordPieceTrainer::builder()
            .vocab_size(cfg.vocab_size)
            .min_frequency(cfg.min_frequency)
            .show_progress(false)
            .special_tokens(
                SPECIALS
                    .iter()
                    .map(|s| AddedToken::from(*s, true))
                    .collect(),
            )
            .build();
        let mut trainer = TrainerWrapper::WordPieceTrainer(trainer);
        tok.train(&mut trainer, texts)
            .map_err(|e| tok_err("training", e))?;
        Self::wrap("trained tokenizer", canonical_ids(&tok)?)
    }

    /// Loads a `tokenizer.json` from its bytes (`source` names it in errors).
    pub fn from_bytes(source: &str, bytes: &[u8]) -> Result<Self> {
        // tokenizers 0.23.2 panics (`expect("Helper")`) on some JSON syntax errors inside
        // the decoder section; a syntax check first turns those into an error (fuzz finding).
        serde_json::from_slice::<serde::de::IgnoredAny>(bytes)
            .map_err(|e| Error::format(source, "tokenizer.json", format!("not valid JSON: {e}")))?;
        let tok = Tokenizer::from_bytes(bytes)
            .map_err(|e| Error::format(source, "tokenizer.json", e.to_string()))?;
        Self::wrap(source, tok)
    }

    fn wrap(source: &str, inner: Tokenizer) -> Result<Self> {
        let id = |s: &str| {
            inner
                .token_to_id(s)
                .ok_or_else(|| Error::format(source, "vocab", format!("missing special token {s}")))
        };
        Ok(Self {
            pad: id("[PAD]")?,
            unk: id("[UNK]")?,
            cls: id("[CLS]")?,
            sep: id("[SEP]")?,
            mask: id("[MASK]")?,
            inner,
            memo: Default::default(),
        })
    }

    /// The `tokenizer.json` text.
    pub fn to_json(&self) -> Result<String> {
        self.inner
            .to_string(true)
            .map_err(|e| tok_err("serialise", e))
    }

    /// Token ids of `text` without special tokens.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        let memo = || {
            self.memo
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if let Some(ids) = memo().get(text) {
            return Ok(ids.clone());
        }
        let enc = self
            .inner
            .encode(text, false)
            .map_err(|e| tok_err("encode", e))?;
        let ids = enc.get_ids().to_vec();
        let mut memo = memo();
        if memo.len() < MEMO_CAP {
            memo.insert(text.into(), ids.clone());
        }
        Ok(ids)
    }

    /// The tokenizer as a published checkpoint uses it: no padding of its own (batches
    /// are padded by the caller), and inputs longer than `max_len` tokens truncated by
    /// the tokenizer's own truncation, which keeps room for the special tokens its
    /// post-processor adds (`[CLS] ... [SEP]` for BERT).
    pub fn for_pretrained(mut self, max_len: usize) -> Result<Self> {
        self.inner.with_padding(None);
        self.inner
            .with_truncation(Some(tokenizers::TruncationParams {
                max_length: max_len,
                ..Default::default()
            }))
            .map_err(|e| tok_err("truncation", e))?;
        Ok(self)
    }

    /// Token ids of `text` with the special tokens of the tokenizer's post-processor
    /// (`[CLS] text [SEP]` for BERT), as HF's `tokenizer(text)["input_ids"]`.
    pub fn encode_with_specials(&self, text: &str) -> Result<Vec<u32>> {
        let enc = self
            .inner
            .encode(text, true)
            .map_err(|e| tok_err("encode", e))?;
        Ok(enc.get_ids().to_vec())
    }

    /// Text of `ids` (special tokens skipped).
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        self.inner
            .decode(ids, true)
            .map_err(|e| tok_err("decode", e))
    }

    /// Vocabulary size including special tokens.
    pub fn vocab_size(&self) -> usize {
        self.inner.get_vocab_size(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXTS: [&str; 6] = [
        "A dog runs on the grass.",
        "Two dogs play with a ball in the park.",
        "A man rides a bicycle down the street.",
        "A woman is reading a book on a bench.",
        "Children play soccer on the grass field.",
        "The dog catches the ball.",
    ];

    /// The same corpus and config train the same tokenizer every time. The published
    /// `tokenizers` 0.23.2 did not: it numbered the "##x" tokens in hash-map order and broke
    /// ties between merges of equal count by those numbers (vendor/README.md); on this
    /// corpus of many equally frequent pseudo-words its vocabularies differed between
    /// trainings (checked with Python `tokenizers` 0.23.3, the same library).
    #[test]
    fn training_is_deterministic() {
        let (mut x, mut words) = (12345u64, Vec::new());
        for i in 0..400 {
            let w: String = (0..3 + i % 5)
                .map(|_| {
                    x = (x * 1103515245 + 12345) % (1 << 31);
                    (b'a' + ((x >> 16) % 10) as u8) as char
                })
                .collect();
            words.push(w);
        }
        let texts: Vec<String> = (0..400)
            .step_by(4)
            .map(|i| words[i..(i + 8).min(400)].join(" "))
            .collect();
        let cfg = TokenizerConfig {
            vocab_size: 200,
            min_frequency: 1,
            ..TokenizerConfig::default()
        };
        let train = || {
            TextTokenizer::train(texts.iter().map(String::as_str), &cfg)
                .unwrap()
                .to_json()
                .unwrap()
        };
        let first = train();
        for _ in 0..5 {
            assert_eq!(train(), first);
        }
    }

    #[test]
    fn trained_tokenizer_round_trips_through_json() {
        let cfg = TokenizerConfig {
            vocab_size: 200,
            min_frequency: 1,
            ..TokenizerConfig::default()
        };
        let tok = TextTokenizer::train(TEXTS.iter().copied(), &cfg).unwrap();
        assert_eq!(
            (tok.pad, tok.unk, tok.cls, tok.sep, tok.mask),
            (0, 1, 2, 3, 4)
        );
        let json = tok.to_json().unwrap();
        let back = TextTokenizer::from_bytes("tokenizer.json", json.as_bytes()).unwrap();
        for t in TEXTS {
            let ids = tok.encode(t).unwrap();
            assert_eq!(ids, back.encode(t).unwrap());
            // Uncased WordPiece decodes to the lower-cased, space-joined words.
            let words = back.decode(&ids).unwrap();
            assert_eq!(words.replace(' ', ""), t.to_lowercase().replace(' ', ""));
        }
        assert!(tok.vocab_size() <= 200);
        let e = TextTokenizer::from_bytes("t.json", b"{}")
            .unwrap_err()
            .to_string();
        assert!(e.contains("t.json"), "{e}");
    }
}
