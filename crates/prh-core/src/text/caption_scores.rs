//! Caption scores as the COCO caption evaluation computes them (`pycocoevalcap`, the
//! scores the paper's captioning number, CIDEr .838, is reported in): corpus BLEU-4
//! (Papineni et al. 2002) and CIDEr-D (Vedantam et al. 2015), implemented from the
//! published definitions and checked against `pycocoevalcap` 1.2's own output
//! (tests below, to 1e-9).
//!
//! Captions are compared as lists of words: lower-cased, split on white space, with
//! punctuation dropped (what COCO's PTB tokenizer does to these captions; the scene
//! world's only punctuation is the ":" of a hidden template).

use std::collections::HashMap;

/// An n-gram (1 to 4 words).
type Gram = Vec<String>;

/// The words of a caption: lower-cased, punctuation removed, split on white space.
pub fn words(caption: &str) -> Vec<String> {
    caption
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' {
                c
            } else {
                ' '
            }
        })
        .collect::<String>()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Counts of every n-gram of orders 1..=4 (`precook` in pycocoevalcap).
fn grams(w: &[String]) -> HashMap<Gram, usize> {
    let mut out = HashMap::new();
    for k in 1..=4 {
        for g in w.windows(k) {
            *out.entry(g.to_vec()).or_insert(0) += 1;
        }
    }
    out
}

/// Corpus BLEU-1..4 of `candidates` against their `references` (one list per candidate),
/// as pycocoevalcap's `Bleu(4)` with its default "closest" reference length:
///
/// ```text
/// p_k  = sum_i sum_{g in k-grams(c_i)} min(#g in c_i, max_r #g in r_i) / sum_i max(0, |c_i| - k + 1)
/// BP   = min(1, exp(1 - R / C)),  C = sum_i |c_i|,  R = sum_i |r*_i|
///        (r*_i the reference closest in length to c_i, the shorter on a tie)
/// BLEU-n = BP (prod_{k<=n} p_k)^(1/n)
/// ```
///
/// with pycocoevalcap's smoothing `(num + 1e-15) / (den + 1e-9)` in every p_k and in
/// C / R. Returns `[BLEU-1, BLEU-2, BLEU-3, BLEU-4]`; empty input scores 0.
///
/// # Shapes
/// `candidates [n]`, `references [n][m_i]` -> `[4]`
pub fn bleu(candidates: &[Vec<String>], references: &[Vec<Vec<String>>]) -> [f64; 4] {
    const TINY: f64 = 1e-15;
    const SMALL: f64 = 1e-9;
    let (mut test_len, mut ref_len) = (0usize, 0usize);
    let (mut guess, mut correct) = ([0usize; 4], [0usize; 4]);
    for (c, refs) in candidates.iter().zip(references) {
        let mut max_ref: HashMap<Gram, usize> = HashMap::new();
        for r in refs {
            for (g, n) in grams(r) {
                let e = max_ref.entry(g).or_insert(0);
                *e = (*e).max(n);
            }
        }
        let len = c.len();
        test_len += len;
        ref_len += refs
            .iter()
            .map(Vec::len)
            .min_by_key(|&rl| (rl.abs_diff(len), rl))
            .unwrap_or(0);
        for (k, g) in guess.iter_mut().enumerate() {
            *g += len.saturating_sub(k);
        }
        for (g, n) in grams(c) {
            correct[g.len() - 1] += n.min(max_ref.get(&g).copied().unwrap_or(0));
        }
    }
    if candidates.is_empty() {
        return [0.0; 4];
    }
    let mut out = [0.0; 4];
    let mut product = 1.0;
    for k in 0..4 {
        product *= (correct[k] as f64 + TINY) / (guess[k] as f64 + SMALL);
        out[k] = product.powf(1.0 / (k as f64 + 1.0));
    }
    let ratio = (test_len as f64 + TINY) / (ref_len as f64 + SMALL);
    if ratio < 1.0 {
        let bp = (1.0 - 1.0 / ratio).exp();
        out.iter_mut().for_each(|b| *b *= bp);
    }
    out
}

/// CIDEr-D of each candidate and their mean, as pycocoevalcap's `Cider` (which is
/// CIDEr-D: clipped counts and a length penalty, sigma = 6):
///
/// ```text
/// g_k(s)   = tf_k(s) * (log |I| - log max(1, df(k-gram)))      TF-IDF of k-grams, per order k
///            df = number of images whose references contain the k-gram, |I| = images
/// sim_k    = sum_g min(g_k(c), g_k(r)) g_k(r) / (||g_k(c)|| ||g_k(r)||)
///            * exp(-(l(c) - l(r))^2 / (2 sigma^2))
/// CIDEr-D  = 10 / m * sum_r (1/4) sum_{k=1..4} sim_k(c, r)      m references
/// ```
///
/// One quirk kept for parity: pycocoevalcap's length l(.) counts *bigrams* (its
/// `if n == 1` tests the 0-based order), so l(s) = max(0, |s| - 1). The document
/// frequencies come from the references of the scored set itself, as in COCO.
///
/// # Shapes
/// `candidates [n]`, `references [n][m_i]` -> (`[n]` per-caption scores, mean)
pub fn cider_d(candidates: &[Vec<String>], references: &[Vec<Vec<String>>]) -> (Vec<f64>, f64) {
    const SIGMA: f64 = 6.0;
    let refs: Vec<Vec<HashMap<Gram, usize>>> = references
        .iter()
        .map(|rs| rs.iter().map(|r| grams(r)).collect())
        .collect();
    let mut df: HashMap<&Gram, f64> = HashMap::new();
    for rs in &refs {
        let mut seen: Vec<&Gram> = rs.iter().flat_map(|r| r.keys()).collect();
        seen.sort();
        seen.dedup();
        for g in seen {
            *df.entry(g).or_insert(0.0) += 1.0;
        }
    }
    let log_images = (refs.len() as f64).ln();
    let scores: Vec<f64> = candidates
        .iter()
        .zip(&refs)
        .map(|(c, rs)| {
            let cc = grams(c);
            let (vc, nc, lc) = tf_idf(&cc, &df, log_images);
            let mut total = 0.0;
            for r in rs {
                let (vr, nr, lr) = tf_idf(r, &df, log_images);
                let delta = lc as f64 - lr as f64;
                let penalty = (-(delta * delta) / (2.0 * SIGMA * SIGMA)).exp();
                for k in 0..4 {
                    let mut val: f64 = vc[k]
                        .iter()
                        .map(|(g, &x)| {
                            let y = vr[k].get(*g).copied().unwrap_or(0.0);
                            x.min(y) * y
                        })
                        .sum();
                    if nc[k] != 0.0 && nr[k] != 0.0 {
                        val /= nc[k] * nr[k];
                    }
                    total += val * penalty / 4.0;
                }
            }
            if rs.is_empty() {
                0.0
            } else {
                10.0 * total / rs.len() as f64
            }
        })
        .collect();
    let mean = if scores.is_empty() {
        0.0
    } else {
        scores.iter().sum::<f64>() / scores.len() as f64
    };
    (scores, mean)
}

/// One caption's per-order TF-IDF vectors, their norms and its bigram count
/// (`counts2vec` in pycocoevalcap; see [`cider_d`]).
#[allow(clippy::type_complexity)]
fn tf_idf<'a>(
    counts: &'a HashMap<Gram, usize>,
    df: &HashMap<&Gram, f64>,
    log_images: f64,
) -> ([HashMap<&'a Gram, f64>; 4], [f64; 4], usize) {
    let mut vec: [HashMap<&Gram, f64>; 4] = Default::default();
    let mut norm = [0.0f64; 4];
    let mut length = 0usize;
    for (g, &tf) in counts {
        let k = g.len() - 1;
        let idf = log_images - df.get(g).copied().unwrap_or(0.0).max(1.0).ln();
        let v = tf as f64 * idf;
        norm[k] += v * v;
        vec[k].insert(g, v);
        if k == 1 {
            length += tf;
        }
    }
    (vec, norm.map(f64::sqrt), length)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        words(s)
    }

    /// By hand: candidate "the cat sat on the mat" (6 words) against "the cat is on the
    /// mat" and "a cat sat on a mat". Clipped matches: unigrams the(2, max ref count 2),
    /// cat, sat, on, mat = 6/6; bigrams "the cat", "cat sat", "sat on", "on the", "the
    /// mat" all occur in some reference = 5/5; trigrams "the cat sat" no, "cat sat on" yes,
    /// "sat on the" no, "on the mat" yes = 2/4; 4-grams "the cat sat on" no, "cat sat on
    /// the" no, "sat on the mat" no = 0/3. Closest reference length 6, BP = 1.
    /// BLEU-1 = 1, BLEU-2 = 1, BLEU-3 = (1 * 1 * 0.5)^(1/3), BLEU-4 ~ 0 (smoothed).
    #[test]
    fn bleu_by_hand() {
        let c = vec![w("the cat sat on the mat")];
        let r = vec![vec![w("the cat is on the mat"), w("a cat sat on a mat")]];
        let b = bleu(&c, &r);
        assert!(
            (b[0] - 1.0).abs() < 1e-9 && (b[1] - 1.0).abs() < 1e-9,
            "{b:?}"
        );
        assert!((b[2] - 0.5f64.powf(1.0 / 3.0)).abs() < 1e-9, "{b:?}");
        assert!(b[3] < 1e-3, "{b:?}");
        // A candidate equal to a reference scores 1 on every order.
        let same = bleu(
            &[w("a red circle in the northwest")],
            &[vec![w("a red circle in the northwest")]],
        );
        assert!(same.iter().all(|x| (x - 1.0).abs() < 1e-9), "{same:?}");
        // Brevity: "a red circle" (3 words) against one 6-word reference: every precision
        // is 1, BP = exp(1 - 6/3) = e^-1.
        let short = bleu(
            &[w("a red circle")],
            &[vec![w("a red circle in the northwest")]],
        );
        assert!((short[0] - (-1.0f64).exp()).abs() < 1e-9, "{short:?}");
    }

    /// By hand on two images, one reference each. With |I| = 2, a k-gram in both images'
    /// references has idf log 2 - log 2 = 0 and one in a single image's references idf
    /// log 2. Image 1: candidate = reference = "a red circle", image 2: reference "a blue
    /// square", candidate "a blue circle". Every shared gram ("a") has weight 0.
    /// Image 1: each order's vectors are identical -> sim_k = 1 for k = 1, 2, 3 (and the
    /// 4-gram vectors are empty: 0); CIDEr-D = 10 * (1 + 1 + 1 + 0) / 4 = 7.5.
    /// Image 2: unigrams: c = {blue: log2, circle: log 2 (df 1, from image 1)}, r = {blue:
    /// log 2, square: log 2}: sim_1 = log2^2 / (sqrt2 log2 * sqrt2 log2) = 1/2; bigrams c =
    /// {"a blue": 0 (in... image 2 only: log 2), "blue circle": log 2 (df 0 -> max(1, 0))},
    /// r = {"a blue": log 2, "blue square": log 2}: sim_2 = 1/2; trigrams: none shared: 0.
    /// CIDEr-D = 10 * (0.5 + 0.5) / 4 = 2.5; the mean is 5.
    #[test]
    fn cider_d_by_hand() {
        let c = vec![w("a red circle"), w("a blue circle")];
        let r = vec![vec![w("a red circle")], vec![w("a blue square")]];
        let (per, mean) = cider_d(&c, &r);
        assert!((per[0] - 7.5).abs() < 1e-9, "{per:?}");
        assert!((per[1] - 2.5).abs() < 1e-9, "{per:?}");
        assert!((mean - 5.0).abs() < 1e-9);
        // A length difference of 6 bigrams costs exp(-36 / 72).
        let long = "a red circle and a red circle and a red circle";
        let (p, _) = cider_d(&[w(long), w("a blue square")], &r);
        assert!(p[0] < per[0] && p[0] > 0.0, "{p:?}");
    }

    #[test]
    fn words_are_lower_case_without_punctuation() {
        assert_eq!(w("Shape : SMALL red."), vec!["shape", "small", "red"]);
    }

    /// pycocoevalcap 1.2's `Bleu(4)` and `Cider()` on five scene captions with 2-3
    /// references each (values printed by its `compute_score`; the script's inputs are
    /// these literals): equal to 1e-9.
    #[test]
    fn equals_pycocoevalcap() {
        let cands = [
            "a small red circle in the northwest",
            "there is a big blue square at the southeast corner",
            "a red circle",
            "the triangle in the northeast is small and green",
            "in the southwest one can see a large yellow cross cross",
        ];
        let refs: [&[&str]; 5] = [
            &[
                "a small red circle in the northwest",
                "there is a tiny crimson disc at the northwest corner",
                "the circle in the northwest is small and red",
            ],
            &[
                "a large blue square in the southeast",
                "in the southeast corner one can see a big azure box",
            ],
            &[
                "a medium red circle in the northeast",
                "the disc at the northeast is midsize and crimson",
                "there is a medium red circle in the northeast",
            ],
            &[
                "the triangle in the northeast is small and green",
                "a tiny emerald wedge in the northeast corner",
            ],
            &[
                "in the southwest one can see a large yellow cross",
                "a big golden plus at the southwest",
            ],
        ];
        let c: Vec<Vec<String>> = cands.iter().map(|s| w(s)).collect();
        let r: Vec<Vec<Vec<String>>> = refs
            .iter()
            .map(|rs| rs.iter().map(|s| w(s)).collect())
            .collect();
        let want_bleu = [
            0.8143536761916461,
            0.7677800089577047,
            0.7200799700032078,
            0.6923176665519367,
        ];
        let got = bleu(&c, &r);
        for k in 0..4 {
            assert!(
                (got[k] - want_bleu[k]).abs() < 1e-9,
                "BLEU-{}: {got:?}",
                k + 1
            );
        }
        let want = [
            5.226304265904599,
            2.3932279460222587,
            0.8292300249809265,
            5.309830080120919,
            4.761322736192425,
        ];
        let (per, mean) = cider_d(&c, &r);
        for (g, x) in per.iter().zip(want) {
            assert!((g - x).abs() < 1e-9, "CIDEr-D {per:?}");
        }
        assert!((mean - 3.703983010644226).abs() < 1e-9);
    }
}
