//! The text renderer g_text of the scene world (paper §2: x = g_m(z), injective): a
//! caption from a small grammar.
//!
//! The sentence template (word order) is the modelled nuisance u; the synonym of each
//! word is unmodelled nuisance drawn from the view's `style_seed` (so two masked spans of
//! one caption share it). A hidden factor is a masked span: its words are dropped (a
//! hidden shape says "shape"); a hidden template falls back to a telegraphic
//! `shape : size colour place` form no template produces. Every word names exactly one
//! factor value, so the caption determines the visible part of the view (tested).

use crate::scene::{SceneView, SceneWorld};
use crate::text::tokenizer::TextTokenizer;
use crate::text::tokenizer::TokenizerConfig;
use crate::{Error, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Shape nouns, two synonyms each; the last entry is the hidden-shape noun.
const SHAPES: [[&str; 2]; 5] = [
    ["circle", "disc"],
    ["square", "box"],
    ["triangle", "wedge"],
    ["cross", "plus"],
    ["shape", "object"],
];
/// Colour adjectives.
const COLOURS: [[&str; 2]; 6] = [
    ["red", "crimson"],
    ["green", "emerald"],
    ["blue", "azure"],
    ["yellow", "golden"],
    ["magenta", "pink"],
    ["cyan", "teal"],
];
/// Size adjectives.
const SIZES: [[&str; 2]; 3] = [["small", "tiny"], ["medium", "midsize"], ["large", "big"]];
/// Places, one word each (optionally followed by "corner"), so that every word names
/// exactly one factor value: with two-word places ("top left") the position's third
/// direction, top/bottom times left/right, was an interaction of two words, which no
/// trained caption encoder learned (docs/results.md, issue 19).
const PLACES: [[&str; 2]; 4] = [
    ["northwest", "northwest corner"],
    ["northeast", "northeast corner"],
    ["southwest", "southwest corner"],
    ["southeast", "southeast corner"],
];
/// Prepositions before a place.
const PREPOSITIONS: [&str; 2] = ["in the", "at the"];
/// Number of sentence templates (the text nuisance's largest cardinality).
pub const TEMPLATES: usize = 4;

/// Joins the non-empty parts with single spaces.
fn join(parts: &[&str]) -> String {
    parts
        .iter()
        .filter(|p| !p.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Renders a view as a lower-case caption, words separated by single spaces.
///
/// Templates: 0 `a SIZE COLOUR SHAPE in the PLACE`; 1 `there is a SIZE COLOUR SHAPE in
/// the PLACE`; 2 `in the PLACE one can see a SIZE COLOUR SHAPE`; 3 `the SHAPE in the PLACE
/// is SIZE and COLOUR`; hidden: `SHAPE : SIZE COLOUR PLACE`.
pub fn caption(view: &SceneView) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(view.style_seed ^ 0x7e57);
    caption_with(view, rng.random())
}

/// [`caption`] with the synonym choices given explicitly: bit k of `synonyms` picks the
/// synonym of the k-th word slot (shape, colour, size, place, preposition).
pub fn caption_with(view: &SceneView, synonyms: u32) -> String {
    let pick = |words: &[&'static str; 2], slot: u32| words[((synonyms >> slot) & 1) as usize];
    let [shape, colour, size, position] = view.state;
    let noun = pick(&SHAPES[if view.visible[0] { shape % 4 } else { 4 }], 0);
    let colour = if view.visible[1] {
        pick(&COLOURS[colour % COLOURS.len()], 1)
    } else {
        ""
    };
    let size = if view.visible[2] {
        pick(&SIZES[size % SIZES.len()], 2)
    } else {
        ""
    };
    let place = if view.visible[3] {
        pick(&PLACES[position % PLACES.len()], 3)
    } else {
        ""
    };
    let prep = pick(&PREPOSITIONS, 4);
    let at = if place.is_empty() {
        String::new()
    } else {
        format!("{prep} {place}")
    };
    if !view.nuisance_visible {
        return join(&[noun, ":", size, colour, place]);
    }
    match view.nuisance % TEMPLATES {
        0 => join(&["a", size, colour, noun, &at]),
        1 => join(&["there is a", size, colour, noun, &at]),
        2 => join(&[&at, "one can see a", size, colour, noun]),
        _ => {
            let attrs = match (size.is_empty(), colour.is_empty()) {
                (false, false) => format!("is {size} and {colour}"),
                (true, true) => String::new(),
                _ => format!("is {size}{colour}"),
            };
            join(&["the", noun, &at, &attrs])
        }
    }
}

/// Every word the grammar can produce, sorted (the text encoder's vocabulary).
pub fn vocabulary() -> Vec<String> {
    let mut words: Vec<String> = SHAPES
        .iter()
        .chain(COLOURS.iter())
        .chain(SIZES.iter())
        .chain(PLACES.iter())
        .flat_map(|ws| ws.iter().flat_map(|w| w.split(' ')))
        .chain(PREPOSITIONS.iter().flat_map(|w| w.split(' ')))
        .chain(["a", "there", "is", "one", "can", "see", "the", "and", ":"])
        .map(str::to_string)
        .collect();
    words.sort();
    words.dedup();
    words
}

/// Texts to train the caption tokenizer on: for every state, every template and the
/// hidden-template form, two complementary synonym choices (so every word occurs).
pub fn tokenizer_corpus(world: &SceneWorld) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..world.n_states() {
        for t in 0..=TEMPLATES {
            let v = SceneView {
                nuisance_visible: t < TEMPLATES,
                ..SceneView::full(world.state(i), t % TEMPLATES, 0)
            };
            let bits = (i % 32) as u32;
            out.push(caption_with(&v, bits));
            out.push(caption_with(&v, 31 - bits));
        }
    }
    // The hidden-factor markers ("shape" / "object" for a hidden shape) appear only in
    // corrupted views: without these lines they were split into characters, so a hidden
    // shape was five tokens and a visible one one, and the mean-pooled caption of a
    // corrupted view was dominated by its marker.
    let hidden = SceneView {
        visible: [false; 4],
        nuisance_visible: false,
        ..SceneView::full(world.state(0), 0, 0)
    };
    out.push(caption_with(&hidden, 0));
    out.push(caption_with(&hidden, 31));
    out
}

/// The caption tokenizer: a WordPiece vocabulary of the special tokens, then every
/// character (alone and as a `##` continuation) and every whole word the grammar can emit
/// ([`tokenizer_corpus`]), in byte order; BERT's normaliser and pre-tokeniser.
///
/// Built, not trained: the HF trainer breaks ties between equally frequent merges in
/// hash-map order, so two processes got different vocabularies (`##ght` in one, `##gh`
/// in the other), and a caption run must be reproducible from its config alone. The
/// trainer is still run once for the file's normaliser / pre-tokeniser / decoder layout.
pub fn caption_tokenizer(world: &SceneWorld) -> Result<TextTokenizer> {
    let texts = tokenizer_corpus(world);
    let cfg = TokenizerConfig {
        vocab_size: 64,
        min_frequency: 1,
        ..TokenizerConfig::default()
    };
    let trained = TextTokenizer::train(texts.iter().map(String::as_str), &cfg)?;
    let mut tokens = std::collections::BTreeSet::new();
    for text in &texts {
        for word in bert_words(text) {
            for c in word.chars() {
                tokens.insert(c.to_string());
                tokens.insert(format!("##{c}"));
            }
            tokens.insert(word);
        }
    }
    let mut json: serde_json::Value = serde_json::from_str(&trained.to_json()?)
        .map_err(|e| Error::invalid(format!("caption tokenizer: {e}")))?;
    let vocab: serde_json::Map<String, serde_json::Value> = crate::text::tokenizer::SPECIALS
        .iter()
        .map(|s| s.to_string())
        .chain(tokens)
        .enumerate()
        .map(|(i, t)| (t, serde_json::json!(i)))
        .collect();
    let slot = json
        .pointer_mut("/model/vocab")
        .ok_or_else(|| Error::invalid("caption tokenizer: no model.vocab"))?;
    *slot = serde_json::Value::Object(vocab);
    TextTokenizer::from_bytes("caption tokenizer", json.to_string().as_bytes())
}

/// Every caption the renderer writes for the uncorrupted views of state `z` (each template
/// with each of the 32 synonym choices, duplicates removed): the reference captions the
/// captioner is scored against (128 per state).
pub fn reference_captions(z: crate::scene::State) -> Vec<String> {
    let mut out: Vec<String> = (0..TEMPLATES)
        .flat_map(|t| (0..32u32).map(move |s| caption_with(&SceneView::full(z, t, 0), s)))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// What a caption says about each factor: the value its words name (either synonym), or
/// `None` when it names none (or two different values, which no rendering does).
///
/// The inverse of [`caption_with`] on its visible factors: every word the grammar uses
/// names exactly one factor value, so a rendered caption parses back to the state's
/// visible values (tested); a generated caption may say anything, and a factor it gets
/// wrong or omits does not count as right.
pub fn parse_caption(text: &str) -> [Option<usize>; 4] {
    let mut found: [Vec<usize>; 4] = Default::default();
    let named = |words: &[[&str; 2]], w: &str| words.iter().position(|ws| ws.contains(&w));
    for w in text.split_whitespace() {
        let w = w.to_lowercase();
        // The hidden-shape markers ("shape", "object") name no shape.
        if let Some(v) = named(&SHAPES[..4], &w) {
            found[0].push(v);
        }
        if let Some(v) = named(&COLOURS, &w) {
            found[1].push(v);
        }
        if let Some(v) = named(&SIZES, &w) {
            found[2].push(v);
        }
        // A place is its first word ("northwest" of "northwest corner").
        if let Some(v) = PLACES.iter().position(|ps| ps[0] == w) {
            found[3].push(v);
        }
    }
    found.map(|vs| match vs.as_slice() {
        [first, rest @ ..] if rest.iter().all(|v| v == first) => Some(*first),
        _ => None,
    })
}

/// BERT's pre-tokenisation of ASCII text after lower-casing: words are runs of
/// alphanumerics; every other non-space character is a word of its own.
fn bert_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    for c in text.to_lowercase().chars() {
        if c.is_alphanumeric() {
            cur.push(c);
            continue;
        }
        if !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        if !c.is_whitespace() {
            words.push(c.to_string());
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::SceneConfig;
    use std::collections::HashMap;

    /// Injective: over every state, template, visibility mask and synonym choice of the
    /// demo world, no caption is produced by two different visible descriptions.
    #[test]
    fn captions_are_injective_on_states_and_views() {
        let w = SceneWorld::new(SceneConfig::demo(0)).unwrap();
        let mut seen: HashMap<String, String> = HashMap::new();
        for i in 0..w.n_states() {
            for u in 0..w.config.nuisance[1] {
                for mask in 0..32u32 {
                    let visible = [0, 1, 2, 3].map(|b| mask & (1 << b) != 0);
                    for synonyms in 0..32u32 {
                        let v = SceneView {
                            state: w.state(i),
                            visible,
                            nuisance: u,
                            nuisance_visible: mask & 16 != 0,
                            style_seed: 0,
                        };
                        let key = format!(
                            "{:?}{:?}",
                            (0..4)
                                .map(|f| visible[f].then_some(v.state[f]))
                                .collect::<Vec<_>>(),
                            v.nuisance_visible.then_some(u)
                        );
                        let text = caption_with(&v, synonyms);
                        if let Some(prev) = seen.insert(text.clone(), key.clone()) {
                            assert_eq!(prev, key, "`{text}` has two meanings");
                        }
                    }
                }
            }
        }
        // Full views: 192 states x 4 templates x 2^5 synonym choices, all distinct.
        let full = seen.values().filter(|k| !k.contains("None")).count();
        assert_eq!(full, 192 * 4 * 32);
    }

    #[test]
    fn caption_is_deterministic_and_uses_the_vocabulary() {
        let vocab = vocabulary();
        let v = SceneView::full([2, 3, 1, 0], 3, 9);
        let a = caption(&v);
        assert_eq!(a, caption(&v));
        assert!(a.starts_with("the "), "{a}");
        for word in a.split(' ') {
            assert!(
                vocab.binary_search(&word.to_string()).is_ok(),
                "`{word}` not in the vocabulary"
            );
        }
        let hidden = SceneView {
            visible: [true, false, false, false],
            nuisance_visible: false,
            ..v
        };
        let h = caption(&hidden);
        assert!(h == "triangle :" || h == "wedge :", "{h}");
    }

    /// Every grammar word is one token (no `[UNK]`, no split), and two builds agree.
    #[test]
    fn caption_tokenizer_keeps_every_word_whole() {
        let w = SceneWorld::new(SceneConfig::quick(0)).unwrap();
        let tok = caption_tokenizer(&w).unwrap();
        assert_eq!(
            tok.to_json().unwrap(),
            caption_tokenizer(&w).unwrap().to_json().unwrap()
        );
        for text in tokenizer_corpus(&w) {
            let ids = tok.encode(&text).unwrap();
            assert_eq!(ids.len(), bert_words(&text).len(), "{text}");
            assert!(!ids.contains(&tok.unk), "{text}");
        }
        // Corrupted views too: every factor hidden, and the hidden-shape synonyms.
        for text in [
            "shape :",
            "object :",
            "a small shape in the northwest corner",
        ] {
            assert_eq!(
                tok.encode(text).unwrap().len(),
                bert_words(text).len(),
                "{text}"
            );
        }
        assert_eq!(
            bert_words("A red-ish Circle, top"),
            ["a", "red", "-", "ish", "circle", ",", "top"]
        );
    }

    /// Every rendered caption of every state, template and visibility parses back to the
    /// state's visible factor values (and nothing for hidden ones); references are the 128
    /// distinct full captions of a state.
    #[test]
    fn captions_parse_back_to_their_visible_factors() {
        let w = SceneWorld::new(SceneConfig::demo(0)).unwrap();
        for i in 0..w.n_states() {
            let z = w.state(i);
            for mask in 0..32u32 {
                let visible = [0, 1, 2, 3].map(|b| mask & (1 << b) != 0);
                for t in 0..TEMPLATES {
                    for synonyms in [0u32, 7, 31] {
                        let v = SceneView {
                            visible,
                            nuisance_visible: mask & 16 != 0,
                            ..SceneView::full(z, t, 0)
                        };
                        let text = caption_with(&v, synonyms);
                        let want = [0, 1, 2, 3].map(|f| visible[f].then_some(z[f]));
                        assert_eq!(parse_caption(&text), want, "{text}");
                    }
                }
            }
            let refs = reference_captions(z);
            assert_eq!(refs.len(), 128);
            assert!(refs.iter().all(|r| parse_caption(r) == z.map(Some)));
        }
        assert_eq!(
            parse_caption("a red blue circle"),
            [Some(0), None, None, None]
        );
    }
}
