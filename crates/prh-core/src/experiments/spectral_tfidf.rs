//! A text encoder trained without gradient descent: the spectral loss (the objective the
//! theorem is proven for, `crate::train::spectral_loss`) minimised *exactly* over linear
//! maps of a fixed bag of words.
//!
//! Why it exists: the trained bag-of-embeddings JEPA of views-multilingual is, up to its
//! LayerNorm and position embeddings, a linear map of a bag of tokens, and SGD on it stops
//! far from that class's optimum (measured on Multi30k val: English vs German mutual 10-NN
//! 0.086 trained, 0.20 for this closed form). So this row is the prediction *for the
//! encoder class*: what the objective gives a linear bag-of-words encoder when the
//! optimiser is not in the way, and the gap to it is the optimiser's.
//!
//! For texts with TF-IDF rows `x` ([`crate::text::tfidf::Tfidf`], fit on the training
//! texts), the encoder is `g(x) = Lambda_d^1/2 U_d^T C^-1/2 (x - mu)`, with `U_d, Lambda_d`
//! the top `d` eigenpairs of `C^-1/2 C+ C^-1/2` over the positive pairs of the chosen view
//! kind ([`crate::measure::view_spectrum::PairMoments`]; C shrunk by `ridge`):
//! - good views: every pair of two different texts of one group (two captions of one
//!   image), each group weighing the same; deterministic;
//! - bad views: `draws` pairs per text of two contiguous spans of `span_frac` of its terms
//!   (two spans of one caption), each group weighing the same; drawn from `seed`.
//!
//! Next-token prediction has no closed form here (it is not a pair objective) and is
//! refused.

use crate::measure::view_spectrum::{PairMoments, SpectralHead};
use crate::rng::{Stream, generator};
use crate::text::tfidf::{Tfidf, terms};
use crate::theory::view_kind::ViewKind;
use crate::{Error, Result};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// Settings of [`SpectralTfidf::fit`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SpectralTfidfConfig {
    /// TF-IDF terms kept (the most frequent in the training texts).
    pub features: usize,
    /// Output width d (at most: fewer when the training texts' TF-IDF has fewer columns
    /// with variance, as a small corpus with a short vocabulary does).
    pub dim: usize,
    /// Shrinkage of C toward `(tr C / e) I` before whitening (chosen on val).
    pub ridge: f64,
    /// Bad views: span length as a fraction of the text's terms.
    pub span_frac: f64,
    /// Bad views: span pairs drawn per text.
    pub draws: usize,
}

impl Default for SpectralTfidfConfig {
    fn default() -> Self {
        Self {
            features: 4000,
            dim: 128,
            ridge: 0.1,
            span_frac: 0.8,
            draws: 2,
        }
    }
}

impl SpectralTfidfConfig {
    /// Checks the ranges; `what` names the config section in errors.
    pub fn validate(&self, what: &str) -> Result<()> {
        if self.features == 0 || self.dim == 0 || self.dim > self.features {
            return Err(Error::invalid(format!(
                "{what}: need 1 <= dim <= features, got dim {} and features {}",
                self.dim, self.features
            )));
        }
        if !(self.ridge.is_finite() && self.ridge >= 0.0) {
            return Err(Error::invalid(format!(
                "{what}.ridge: expected a finite number >= 0, got {}",
                self.ridge
            )));
        }
        if !(self.span_frac > 0.0 && self.span_frac <= 1.0) || self.draws == 0 {
            return Err(Error::invalid(format!(
                "{what}: need 0 < span_frac <= 1 and draws >= 1, got {} and {}",
                self.span_frac, self.draws
            )));
        }
        Ok(())
    }

    /// What the "closed form" rows of a report are, in one paragraph (markdown).
    pub fn describe(&self) -> String {
        format!(
            "The \"closed form\" rows had no gradient descent: the spectral loss (the objective \
             the theorem is proven for) minimised exactly over linear maps of TF-IDF ({} terms \
             of the training texts) to d = {}, from the good pairs (two texts of one group; \
             deterministic, one fit) or the bad pairs (two spans of {} of one text's terms, {} \
             per text; one fit per seed), whitening with ridge {}. They are the objective's \
             optimum over that encoder class: the gap from \"good\" to \"closed form, good\" is \
             the optimiser's, not the objective's.\n",
            self.features, self.dim, self.span_frac, self.draws, self.ridge
        )
    }
}

/// The seeds a closed form of `kind` is fit for, out of an experiment's `seeds`: good
/// views draw nothing (every pair of texts of a group), so one fit stands for all seeds;
/// bad views draw their spans, one fit per seed.
pub fn fit_seeds(kind: ViewKind, seeds: &[u64]) -> &[u64] {
    match kind {
        ViewKind::Good => &seeds[..seeds.len().min(1)],
        _ => seeds,
    }
}

/// The fitted encoder: TF-IDF features, then the closed-form head.
#[derive(Debug, Clone)]
pub struct SpectralTfidf {
    tfidf: Tfidf,
    head: SpectralHead,
}

/// `frac` of `n` items, at least 1 (as the text views' spans).
fn span_len(n: usize, frac: f64) -> usize {
    ((frac * n as f64).round() as usize).clamp(1, n.max(1))
}

impl SpectralTfidf {
    /// Fits the TF-IDF vocabulary on every text of `groups` and the head on the positive
    /// pairs of `kind` (see the module doc).
    ///
    /// # Shapes
    /// `groups`: texts per group (any slice of texts: a `Vec<String>`, a corpus group's
    /// `texts.as_slice()`) -> an encoder of width `cfg.dim`
    pub fn fit<G: AsRef<[S]>, S: AsRef<str>>(
        groups: &[G],
        kind: ViewKind,
        cfg: &SpectralTfidfConfig,
        seed: u64,
    ) -> Result<Self> {
        cfg.validate("closed form")?;
        let texts: Vec<&str> = groups
            .iter()
            .flat_map(|g| g.as_ref().iter().map(AsRef::as_ref))
            .collect();
        let tfidf = Tfidf::fit(&texts, cfg.features);
        let mut moments = PairMoments::new(tfidf.width());
        let mut rng = generator(seed, Stream::Views, 0);
        for group in groups {
            let bags: Vec<Vec<String>> = group
                .as_ref()
                .iter()
                .map(|t| terms(t.as_ref()).collect())
                .collect();
            match kind {
                ViewKind::Good => {
                    let rows: Vec<_> = bags.iter().map(|b| tfidf.sparse_row(b)).collect();
                    let n = rows.len();
                    if n < 2 {
                        continue;
                    }
                    let w = 1.0 / (n * (n - 1) / 2) as f64;
                    for i in 0..n {
                        for j in i + 1..n {
                            moments.add_sparse(&rows[i], &rows[j], w)?;
                        }
                    }
                }
                ViewKind::Bad => {
                    let w = 1.0 / (bags.len() * cfg.draws) as f64;
                    for bag in bags.iter().filter(|b| !b.is_empty()) {
                        let len = span_len(bag.len(), cfg.span_frac);
                        for _ in 0..cfg.draws {
                            let mut span = || {
                                let s = rng.random_range(0..=bag.len() - len);
                                tfidf.sparse_row(&bag[s..s + len])
                            };
                            let (a, b) = (span(), span());
                            moments.add_sparse(&a, &b, w)?;
                        }
                    }
                }
                ViewKind::NextToken => {
                    return Err(Error::invalid(
                        "closed form: next-token prediction is not a pair objective; only \
                         good and bad views have a closed-form encoder",
                    ));
                }
            }
        }
        if moments.total() <= 0.0 {
            return Err(Error::invalid(format!(
                "closed form: no positive pairs of {} in {} groups (good views need groups \
                 with at least two texts)",
                kind.label(),
                groups.len()
            )));
        }
        let head = moments.spectral_head_at_most(cfg.dim, cfg.ridge)?;
        Ok(Self { tfidf, head })
    }

    /// Output width d.
    pub fn dim(&self) -> usize {
        self.head.bias.len()
    }

    /// The top `d` eigenvalues of the whitened pair operator the head holds (decreasing):
    /// how predictable each output is across a positive pair.
    pub fn values(&self) -> &[f64] {
        &self.head.values
    }

    /// Embeds `texts`: `g(x)` of each text's TF-IDF row.
    ///
    /// # Shapes
    /// `n` texts -> `[n, d]` row-major
    pub fn embed<S: AsRef<str>>(&self, texts: &[S]) -> Vec<f32> {
        let d = self.dim();
        let mut out = Vec::with_capacity(texts.len() * d);
        for t in texts {
            let bag: Vec<String> = terms(t.as_ref()).collect();
            let row = self.tfidf.sparse_row(&bag);
            out.extend((0..d).map(|j| {
                let v = self.head.bias[j]
                    + row
                        .iter()
                        .map(|&(c, x)| x * self.head.weight[(c, j)])
                        .sum::<f64>();
                v as f32
            }));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four "images", each with captions that name its animal among unrelated filler
    /// words. Good views (two captions of one image) find the animal words and embed the
    /// captions of one image together; bad views (two spans of one caption) are
    /// predictable from the filler too, and leave the images less separated.
    #[test]
    fn good_views_find_what_captions_of_one_image_share() {
        let animals = ["dog", "cat", "horse", "bird"];
        let fillers = [
            "red", "small", "old", "near", "park", "street", "sunny", "river",
        ];
        let mut groups = Vec::new();
        for (g, a) in animals.iter().enumerate() {
            let caps: Vec<String> = (0..5)
                .map(|c| {
                    let f1 = fillers[(g * 3 + c * 5) % fillers.len()];
                    let f2 = fillers[(g * 7 + c * 3 + 1) % fillers.len()];
                    format!("{f1} {a} {f2} {f1}")
                })
                .collect();
            for _ in 0..20 {
                groups.push(caps.clone());
            }
        }
        let cfg = SpectralTfidfConfig {
            dim: 3,
            ridge: 0.0,
            ..SpectralTfidfConfig::default()
        };
        let good = SpectralTfidf::fit(&groups, ViewKind::Good, &cfg, 0).unwrap();
        assert_eq!(good.dim(), 3);
        // Three centred directions separate four animals perfectly: reached values ~1.
        assert!(good.values()[2] > 0.95, "{:?}", good.values());
        let probes = ["dog river", "sunny dog", "cat river", "sunny cat"];
        let e = good.embed(&probes);
        let dist = |i: usize, j: usize| -> f32 {
            (0..3).map(|c| (e[i * 3 + c] - e[j * 3 + c]).powi(2)).sum()
        };
        // Same animal, different filler: close; same filler, different animal: far.
        assert!(dist(0, 1) < 0.1 * dist(0, 2), "{e:?}");
        assert!(dist(2, 3) < 0.1 * dist(1, 3), "{e:?}");
        let bad = SpectralTfidf::fit(&groups, ViewKind::Bad, &cfg, 0).unwrap();
        let eb = bad.embed(&probes);
        let distb = |i: usize, j: usize| -> f32 {
            (0..3)
                .map(|c| (eb[i * 3 + c] - eb[j * 3 + c]).powi(2))
                .sum()
        };
        assert!(
            distb(0, 1) / distb(0, 2) > 2.0 * dist(0, 1) / dist(0, 2),
            "bad views should separate animals from filler less: {eb:?}"
        );
        // Bad views are drawn from the seed: same seed, same encoder.
        let again = SpectralTfidf::fit(&groups, ViewKind::Bad, &cfg, 0).unwrap();
        assert_eq!(again.embed(&probes), eb);
    }

    #[test]
    fn refusals_name_what_is_wrong() {
        let groups = vec![vec!["a dog runs".to_string()]];
        let cfg = SpectralTfidfConfig::default();
        let err = SpectralTfidf::fit(&groups, ViewKind::Good, &cfg, 0).unwrap_err();
        assert!(err.to_string().contains("at least two texts"), "{err}");
        let err = SpectralTfidf::fit(&groups, ViewKind::NextToken, &cfg, 0).unwrap_err();
        assert!(err.to_string().contains("not a pair objective"), "{err}");
        let bad = SpectralTfidfConfig {
            ridge: -1.0,
            ..cfg.clone()
        };
        assert!(
            bad.validate("x")
                .unwrap_err()
                .to_string()
                .contains("x.ridge")
        );
        let bad = SpectralTfidfConfig { dim: 0, ..cfg };
        assert!(bad.validate("x").is_err());
    }
}
