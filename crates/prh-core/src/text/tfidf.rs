//! The training-free baseline every text report shows beside the trained encoders: a
//! TF-IDF bag of words with scikit-learn's `TfidfVectorizer` defaults, so a reader can
//! check a number with two lines of Python.
//!
//! For a fitted vocabulary `V` (terms of the fit texts; with `max_features = m`, the `m`
//! with the largest total count), text `t` becomes
//! `x_t[w] = tf(w, t) * idf(w)`, `idf(w) = ln((1 + n) / (1 + df(w))) + 1`, then
//! `x_t / ||x_t||_2` (a text with no known term stays zero), where `n` is the number of
//! fit texts, `df(w)` how many of them contain `w`, and `tf` the raw count. Terms are
//! runs of two or more word characters (letters, digits, `_`), lowercased: sklearn's
//! `(?u)\b\w\w+\b` with `lowercase = True`.

use std::collections::{BTreeMap, HashMap};

/// A fitted TF-IDF vocabulary: term -> column, and each column's idf.
#[derive(Debug, Clone, PartialEq)]
pub struct Tfidf {
    columns: HashMap<String, usize>,
    idf: Vec<f64>,
}

/// The terms of `text` in order: lowercased runs of >= 2 word characters.
pub fn terms(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.chars().count() >= 2)
        .map(str::to_lowercase)
}

impl Tfidf {
    /// Fits the vocabulary and idf on `texts`; `max_features = 0` keeps every term, else
    /// the `max_features` terms of largest total count (ties: alphabetical order).
    pub fn fit<S: AsRef<str>>(texts: &[S], max_features: usize) -> Self {
        let mut df: BTreeMap<String, (usize, usize)> = BTreeMap::new();
        for t in texts {
            let mut seen: Vec<String> = terms(t.as_ref()).collect();
            for w in &seen {
                df.entry(w.clone()).or_default().1 += 1;
            }
            seen.sort_unstable();
            seen.dedup();
            for w in seen {
                df.entry(w).or_default().0 += 1;
            }
        }
        let mut kept: Vec<(String, (usize, usize))> = df.into_iter().collect();
        if max_features > 0 && kept.len() > max_features {
            // Stable sort: equal counts keep the alphabetical order of the BTreeMap.
            kept.sort_by_key(|k| std::cmp::Reverse(k.1.1));
            kept.truncate(max_features);
            kept.sort_by(|a, b| a.0.cmp(&b.0));
        }
        let n = texts.len() as f64;
        let idf = kept
            .iter()
            .map(|(_, (d, _))| ((1.0 + n) / (1.0 + *d as f64)).ln() + 1.0)
            .collect();
        let columns = kept
            .into_iter()
            .enumerate()
            .map(|(i, (w, _))| (w, i))
            .collect();
        Tfidf { columns, idf }
    }

    /// Number of columns (terms kept).
    pub fn width(&self) -> usize {
        self.idf.len()
    }

    /// The idf of `term`, if it is in the vocabulary.
    pub fn idf(&self, term: &str) -> Option<f64> {
        self.columns.get(term).map(|&c| self.idf[c])
    }

    /// The L2-normalised TF-IDF row of a text given as its `terms` ([`terms`] of the
    /// text, or a span of them), sparse: `(column, value)` in increasing column order,
    /// empty when no term is in the vocabulary.
    pub fn sparse_row<S: AsRef<str>>(&self, terms: &[S]) -> Vec<(usize, f64)> {
        let mut row: BTreeMap<usize, f64> = BTreeMap::new();
        for t in terms {
            if let Some(&c) = self.columns.get(t.as_ref()) {
                *row.entry(c).or_default() += self.idf[c];
            }
        }
        let norm = row.values().map(|v| v * v).sum::<f64>().sqrt();
        row.into_iter().map(|(c, v)| (c, v / norm)).collect()
    }

    /// The L2-normalised TF-IDF rows of `texts`, dense and row-major.
    ///
    /// # Shapes
    /// `texts` `n` strings -> `[n, width]`
    pub fn transform<S: AsRef<str>>(&self, texts: &[S]) -> Vec<f64> {
        let w = self.width();
        let mut out = vec![0.0; texts.len() * w];
        for (i, t) in texts.iter().enumerate() {
            let row = &mut out[i * w..(i + 1) * w];
            for term in terms(t.as_ref()) {
                if let Some(&c) = self.columns.get(&term) {
                    row[c] += self.idf[c];
                }
            }
            let norm = row.iter().map(|v| v * v).sum::<f64>().sqrt();
            if norm > 0.0 {
                row.iter_mut().for_each(|v| *v /= norm);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-computed: 3 texts, n = 3. "dog" is in 2 (idf ln(4/3) + 1), "the" in 3
    /// (idf 1), "cat" and "runs" in 1 (idf ln 2 + 1); "a" is one character (no term).
    #[test]
    fn matches_the_closed_form_and_sklearn() {
        let texts = ["The dog runs", "the DOG, the cat!", "a the"];
        let t = Tfidf::fit(&texts, 0);
        assert_eq!(t.width(), 4);
        let (i2, i1, i3) = ((4.0f64 / 3.0).ln() + 1.0, 1.0, 2.0f64.ln() + 1.0);
        assert!((t.idf("dog").unwrap() - i2).abs() < 1e-12);
        assert!((t.idf("the").unwrap() - i1).abs() < 1e-12);
        assert!((t.idf("cat").unwrap() - i3).abs() < 1e-12);
        assert!(t.idf("a").is_none());
        let x = t.transform(&["the dog the cat"]);
        let terms: Vec<String> = terms("the dog the cat").collect();
        let sparse = t.sparse_row(&terms);
        assert_eq!(sparse.iter().map(|p| p.0).collect::<Vec<_>>(), [0, 1, 3]);
        for (c, v) in sparse {
            assert!((x[c] - v).abs() < 1e-15);
        }
        // Columns are alphabetical: cat, dog, runs, the.
        let raw = [i3, i2, 0.0, 2.0 * i1];
        let norm = raw.iter().map(|v| v * v).sum::<f64>().sqrt();
        for (got, want) in x.iter().zip(raw) {
            assert!((got - want / norm).abs() < 1e-12, "{x:?}");
        }
        // sklearn 1.9.1: TfidfVectorizer().fit(texts).transform(["the dog the cat"])
        // = [[0.57989687, 0.44102652, 0., 0.68499287]].
        let sk = [0.57989687, 0.44102652, 0.0, 0.68499287];
        for (got, want) in x.iter().zip(sk) {
            assert!((got - want).abs() < 1e-8, "{x:?}");
        }
    }

    #[test]
    fn max_features_keeps_the_most_frequent_and_unknown_texts_stay_zero() {
        let texts = ["b b b c", "c d", "d e"];
        let t = Tfidf::fit(&texts, 0);
        assert_eq!(t.width(), 0, "single letters are not terms");
        let texts = ["bb bb bb cc", "cc dd", "dd ee"];
        let t = Tfidf::fit(&texts, 2);
        assert_eq!(t.width(), 2);
        assert!(t.idf("bb").is_some(), "count 3");
        // cc and dd tie at 2: alphabetical order keeps cc.
        assert!(t.idf("cc").is_some() && t.idf("dd").is_none());
        assert_eq!(t.transform(&["zz"]), vec![0.0, 0.0]);
        let x = t.transform(&["über bb"]);
        assert!((x.iter().map(|v| v * v).sum::<f64>() - 1.0).abs() < 1e-12);
    }
}
