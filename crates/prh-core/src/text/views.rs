//! Views of a multi-view text corpus (paper sections 3-4).
//!
//! Each training sample is one group (world state). It yields `n_global` global and
//! `n_local` local views, each a *contiguous* token span of one text with a fraction of
//! its tokens replaced by `[MASK]`:
//! - **good** views take their spans from *different* texts of the group (view `v` reads
//!   text `perm[v mod T]` for a random permutation `perm` of the group's `T` texts), so
//!   the only thing the views share is the state;
//! - **bad** views take every span from *one* text, so they also share its wording.
//!
//! Span lengths are `max(1, round(frac * len))` of the (optionally trimmed) text, capped
//! at the model's length budget; the start is uniform. All randomness comes from the
//! caller's generator, seeded per step ([`crate::rng`]).

use crate::theory::view_kind::ViewKind;
use rand::Rng;
use rand::seq::SliceRandom;

use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// View sampling (paper section 4: 2 global + 6 local contiguous, partly masked spans).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ViewsConfig {
    /// Global views per sample.
    pub n_global: usize,
    /// Local views per sample.
    pub n_local: usize,
    /// Global span length as a fraction of the text's token count.
    pub global_frac: f64,
    /// Local span length as a fraction of the text's token count.
    pub local_frac: f64,
    /// Fraction of a view's tokens replaced by `[MASK]`.
    pub mask_ratio: f64,
    /// Trim each text to at most this many tokens before taking spans (0: no trim).
    pub trim: usize,
    /// Samples (groups) per batch.
    pub batch_size: usize,
}

impl Default for ViewsConfig {
    fn default() -> Self {
        Self {
            n_global: 2,
            n_local: 6,
            global_frac: 0.8,
            local_frac: 0.4,
            mask_ratio: 0.15,
            trim: 0,
            batch_size: 64,
        }
    }
}

/// A tokenized corpus: group -> text -> token ids (trimmed, without special tokens).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TokenizedCorpus {
    /// Token ids per text per group.
    pub groups: Vec<Vec<Vec<u32>>>,
}

impl TokenizedCorpus {
    /// Drops empty texts and groups left without texts; trims texts to `trim` tokens
    /// (`0`: no trim).
    pub fn new(groups: Vec<Vec<Vec<u32>>>, trim: usize) -> Self {
        let groups = groups
            .into_iter()
            .map(|g| {
                g.into_iter()
                    .filter(|t| !t.is_empty())
                    .map(|mut t| {
                        if trim > 0 {
                            t.truncate(trim);
                        }
                        t
                    })
                    .collect::<Vec<_>>()
            })
            .filter(|g| !g.is_empty())
            .collect();
        Self { groups }
    }

    /// Total tokens.
    pub fn tokens(&self) -> usize {
        self.groups.iter().flatten().map(Vec::len).sum()
    }
}

/// One view: where it came from and its (masked) tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// Group index in the corpus.
    pub group: usize,
    /// Text index inside the group.
    pub text: usize,
    /// Span start in the text.
    pub start: usize,
    /// Span tokens after masking.
    pub tokens: Vec<u32>,
}

/// A contiguous span of `text` of `frac` of its length (at most `cap` tokens), with
/// `floor(mask_ratio * len)` positions set to `mask_id`.
fn span(
    text: &[u32],
    frac: f64,
    cap: usize,
    mask_ratio: f64,
    mask_id: u32,
    rng: &mut impl Rng,
) -> (usize, Vec<u32>) {
    let n = text.len();
    let len = ((frac * n as f64).round() as usize).clamp(1, n.min(cap.max(1)));
    let start = rng.random_range(0..=n - len);
    let mut tokens = text[start..start + len].to_vec();
    let n_mask = (mask_ratio * len as f64).floor() as usize;
    // Never mask a whole view: an all-[MASK] view carries no information.
    let n_mask = n_mask.min(len.saturating_sub(1));
    let mut pos: Vec<usize> = (0..len).collect();
    pos.shuffle(rng);
    for &p in &pos[..n_mask] {
        tokens[p] = mask_id;
    }
    (start, tokens)
}

/// The views of one sample (group `g`): globals first, then locals.
///
/// `cap` bounds each span's length (the model's `max_len` minus special tokens).
pub fn sample_views(
    corpus: &TokenizedCorpus,
    g: usize,
    kind: ViewKind,
    cfg: &ViewsConfig,
    cap: usize,
    mask_id: u32,
    rng: &mut impl Rng,
) -> Result<Vec<Span>> {
    let texts = corpus.groups.get(g).ok_or_else(|| {
        Error::invalid(format!(
            "views: group {g} out of range ({})",
            corpus.groups.len()
        ))
    })?;
    let mut order: Vec<usize> = (0..texts.len()).collect();
    order.shuffle(rng);
    let n_views = cfg.n_global + cfg.n_local;
    let mut out = Vec::with_capacity(n_views);
    for v in 0..n_views {
        let text = match kind {
            ViewKind::Good => order[v % order.len()],
            // Next-token's prefix and continuation are one text too (not drawn as JEPA
            // views by the text task, which trains it with cross-entropy).
            ViewKind::Bad | ViewKind::NextToken => order[0],
        };
        let frac = if v < cfg.n_global {
            cfg.global_frac
        } else {
            cfg.local_frac
        };
        let (start, tokens) = span(&texts[text], frac, cap, cfg.mask_ratio, mask_id, rng);
        out.push(Span {
            group: g,
            text,
            start,
            tokens,
        });
    }
    Ok(out)
}

/// A padded id matrix for one view position across the batch.
#[derive(Debug, Clone, PartialEq)]
pub struct Padded {
    /// Row-major `[n, len]` ids.
    pub ids: Vec<i64>,
    /// Row-major `[n, len]`, `true` where the position is padding.
    pub pad: Vec<bool>,
    /// Rows.
    pub n: usize,
    /// Columns (longest row).
    pub len: usize,
}

/// Pads token rows to the longest one, optionally prefixing `cls`.
///
/// # Shapes
/// `rows`: `n` sequences -> `[n, max_i (len_i + cls)]`.
pub fn pad_rows(rows: &[&[u32]], cls: Option<u32>, pad_id: u32) -> Padded {
    let extra = usize::from(cls.is_some());
    let len = rows
        .iter()
        .map(|r| r.len() + extra)
        .max()
        .unwrap_or(extra)
        .max(1);
    let mut ids = Vec::with_capacity(rows.len() * len);
    let mut pad = Vec::with_capacity(rows.len() * len);
    for r in rows {
        let seq: Vec<u32> = cls.into_iter().chain(r.iter().copied()).collect();
        for i in 0..len {
            ids.push(i64::from(*seq.get(i).unwrap_or(&pad_id)));
            pad.push(i >= seq.len());
        }
    }
    Padded {
        ids,
        pad,
        n: rows.len(),
        len,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Stream, generator};

    /// Token ids encode (group, text, position) so tests can check provenance by value.
    fn corpus() -> TokenizedCorpus {
        let groups = (0..20)
            .map(|g| {
                (0..5)
                    .map(|t| {
                        (0..(6 + (g + t) % 9))
                            .map(|p| (10_000 * g + 100 * t + p + 5) as u32)
                            .collect()
                    })
                    .collect()
            })
            .collect();
        TokenizedCorpus::new(groups, 0)
    }

    fn origin(tok: u32) -> (usize, usize) {
        let v = tok as usize - 5;
        (v / 10_000, (v % 10_000) / 100)
    }

    #[test]
    fn good_views_never_mix_groups_and_use_distinct_texts() {
        let c = corpus();
        let cfg = ViewsConfig {
            mask_ratio: 0.3,
            ..ViewsConfig::default()
        };
        for step in 0..50 {
            let mut rng = generator(1, Stream::Views, step);
            let g = step as usize % 20;
            let views = sample_views(&c, g, ViewKind::Good, &cfg, 64, 4, &mut rng).unwrap();
            assert_eq!(views.len(), 8);
            for v in &views {
                assert_eq!(v.group, g);
                for &t in v.tokens.iter().filter(|&&t| t != 4) {
                    assert_eq!(origin(t), (g, v.text), "token from another group or text");
                }
            }
            // The first five views read five different texts (the group has five).
            let mut texts: Vec<usize> = views[..5].iter().map(|v| v.text).collect();
            texts.sort();
            texts.dedup();
            assert_eq!(texts.len(), 5);
        }
    }

    #[test]
    fn bad_views_never_mix_texts() {
        let c = corpus();
        let cfg = ViewsConfig::default();
        for step in 0..50 {
            let mut rng = generator(2, Stream::Views, step);
            let views = sample_views(&c, 3, ViewKind::Bad, &cfg, 64, 4, &mut rng).unwrap();
            let t0 = views[0].text;
            for v in &views {
                assert_eq!(v.text, t0);
                for &t in v.tokens.iter().filter(|&&t| t != 4) {
                    assert_eq!(origin(t), (3, t0));
                }
            }
        }
    }

    #[test]
    fn spans_are_contiguous_with_exact_mask_count() {
        let c = corpus();
        let cfg = ViewsConfig {
            mask_ratio: 0.25,
            global_frac: 1.0,
            local_frac: 0.5,
            ..ViewsConfig::default()
        };
        let mut rng = generator(3, Stream::Views, 0);
        for v in sample_views(&c, 7, ViewKind::Good, &cfg, 64, 4, &mut rng).unwrap() {
            let text = &c.groups[7][v.text];
            let len = v.tokens.len();
            let masked = v.tokens.iter().filter(|&&t| t == 4).count();
            assert_eq!(masked, (0.25 * len as f64).floor() as usize);
            for (i, &t) in v.tokens.iter().enumerate() {
                assert!(t == 4 || t == text[v.start + i], "span is not contiguous");
            }
        }
    }

    #[test]
    fn sampling_is_deterministic_given_the_generator() {
        let c = corpus();
        let cfg = ViewsConfig::default();
        let a = sample_views(
            &c,
            1,
            ViewKind::Good,
            &cfg,
            8,
            4,
            &mut generator(5, Stream::Views, 9),
        )
        .unwrap();
        let b = sample_views(
            &c,
            1,
            ViewKind::Good,
            &cfg,
            8,
            4,
            &mut generator(5, Stream::Views, 9),
        )
        .unwrap();
        assert_eq!(a, b);
        assert!(a.iter().all(|v| v.tokens.len() <= 8));
    }

    #[test]
    fn padding_marks_tail_and_prefixes_cls() {
        let p = pad_rows(&[&[7, 8], &[9]], Some(2), 0);
        assert_eq!((p.n, p.len), (2, 3));
        assert_eq!(p.ids, vec![2, 7, 8, 2, 9, 0]);
        assert_eq!(p.pad, vec![false, false, false, false, false, true]);
        let t = TokenizedCorpus::new(vec![vec![vec![1, 2, 3], vec![]], vec![vec![]]], 2);
        assert_eq!(t.groups, vec![vec![vec![1, 2]]]);
    }
}
