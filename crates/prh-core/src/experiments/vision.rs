//! Text-vs-vision alignment on the 1,000 ImageNet classes (paper sections 5-6): a text
//! encoder embeds each class's text, a frozen vision model gives each class a vector
//! (EfficientNet-Lite0's classifier rows), and the two sets of 1,000 points are compared:
//!
//! - mutual k-NN (k = 10) with its permutation null, and linear CKA, over all classes
//!   (PRH preprocessing: outlier clamp, L2 rows; no fitted map);
//! - R@1 / R@5 on the ImageNet-100 classes after a rotation fit on the other 900:
//!   both sides centred on the fit classes' mean and L2-normalised,
//!   `Q = argmin_{Q Q^T = I} ||T_fit Q - V_fit||_F` (`Q [d_text, d_vision]`, semi-orthogonal
//!   since d_text < d_vision), and each test text ranks the 100 test classes by
//!   cos(t, v Q^T) (the vision vectors mapped into the text space);
//! - pair-free matching on ImageNet-100 ([`crate::measure::matching::match_points`]): no pairs at
//!   all, the correspondence found from the two similarity matrices; accuracy is top-1,
//!   and "top-5" ranks the 100 classes for each text after a rotation fit on the *matched*
//!   (not the true) pairs.
//!
//! The fitted map is also exported for the web app ([`imagenet_export`]).

use std::collections::HashMap;
use std::io::BufRead;

use safetensors::{Dtype, tensor::TensorView};
use serde::{Deserialize, Serialize};

use crate::formats::features::Features;
use crate::linalg::procrustes;
use crate::linalg::{Matrix, from_row_major, select_rows};
use crate::measure::matching::{
    MatchOptions, accuracy, match_points, pairing_objective, seeded_permutation,
};
use crate::measure::metrics::{MetricOptions, measure};
use crate::measure::preprocess::l2_normalize_rows;
use crate::measure::retrieval::{RetrievalScores, ranks};
use crate::{Error, Result};

/// The `[experiment.vision]` table: the training corpus and the evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VisionSpec {
    /// WordNet 3.0 dict directory holding `data.noun` (Debian `wordnet-base`).
    pub wordnet: String,
    /// Keep at most this many WordNet synsets (file order; 0: all).
    pub wordnet_groups: usize,
    /// Also train on the English Multi30k captions (5 per image).
    pub multi30k: bool,
    /// Keep at most this many Multi30k training images (0: all).
    pub multi30k_groups: usize,
    /// Leave the 1,000 ImageNet class synsets out of training (the evaluation texts
    /// are then unseen; their WordNet neighbours are not).
    pub exclude_eval_synsets: bool,
    /// Random restarts of the pair-free matcher.
    pub match_restarts: usize,
    /// Run the matcher's tabu search stage (robust tabu search over pair swaps,
    /// [`crate::measure::matching::tabu_search`]; +17 s per ImageNet-100 match, 49 -> 66 s
    /// measured with training sharing the 2 cores).
    pub match_tabu: bool,
    /// Write the model and class-map exports of each objective's first seed.
    pub export: bool,
}

impl Default for VisionSpec {
    fn default() -> Self {
        Self {
            wordnet: crate::text::wordnet::DEFAULT_DIR.into(),
            wordnet_groups: 0,
            multi30k: true,
            multi30k_groups: 0,
            exclude_eval_synsets: true,
            match_restarts: 8,
            match_tabu: true,
            export: true,
        }
    }
}

/// One ImageNet-1k class (a row of `imagenet1k_classes.tsv`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImagenetClass {
    /// Class index in the vision model's output order.
    pub index: usize,
    /// WordNet id, `n` + the noun synset offset.
    pub wnid: String,
    /// Comma-separated lemmas (`tench, Tinca tinca`).
    pub lemmas: String,
    /// WordNet definition.
    pub definition: String,
}

impl ImagenetClass {
    /// The text embedded for this class: `"lemmas: definition"` (names and gloss, as
    /// WordNet's two main views of the concept joined into one text).
    pub fn text(&self) -> String {
        format!("{}: {}", self.lemmas, self.definition)
    }

    /// The class name shown to people: the first lemma.
    pub fn name(&self) -> &str {
        self.lemmas.split(", ").next().unwrap_or(&self.lemmas)
    }
}

/// Parses `index \t wnid \t lemmas \t definition` lines after a header; rows must be in
/// index order 0, 1, 2, ... (the vision model's class order).
pub fn parse_classes(source: &str, reader: impl BufRead) -> Result<Vec<ImagenetClass>> {
    let mut out = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| Error::io(source, e))?;
        if i == 0 || line.trim().is_empty() {
            continue; // header
        }
        let f: Vec<&str> = line.split('\t').collect();
        let field = format!("line {}", i + 1);
        if f.len() != 4 {
            return Err(Error::format(
                source,
                field,
                format!("expected 4 tab-separated fields, found {}", f.len()),
            ));
        }
        let index: usize = f[0]
            .parse()
            .map_err(|_| Error::format(source, format!("{field}: index"), "expected an integer"))?;
        if index != out.len() {
            return Err(Error::format(
                source,
                format!("{field}: index"),
                format!(
                    "expected {} (rows in class order), found {index}",
                    out.len()
                ),
            ));
        }
        out.push(ImagenetClass {
            index,
            wnid: f[1].to_string(),
            lemmas: f[2].to_string(),
            definition: f[3].to_string(),
        });
    }
    if out.is_empty() {
        return Err(Error::format(source, "rows", "no classes found"));
    }
    Ok(out)
}

/// Settings of the measurement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VisionOptions {
    /// Neighbours for mutual k-NN.
    pub k: usize,
    /// Shuffles of the mutual k-NN null (0: none).
    pub null_shuffles: usize,
    /// Random FAQ restarts of the pair-free matcher.
    pub match_restarts: usize,
    /// Whether the matcher runs its tabu search stage (off: `tabu_iters` = 0).
    pub match_tabu: bool,
    /// Seed of the null, the hidden permutation and the matcher.
    pub seed: u64,
    /// The PRH outlier clamp before the metrics (off for sparse text features such as
    /// TF-IDF, which it would zero).
    pub clamp: bool,
}

/// Every score of one text encoder against the vision vectors.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct VisionScores {
    /// Mutual k-NN over all classes, its null mean and std.
    pub mutual_knn: f64,
    pub null_mean: Option<f64>,
    pub null_std: Option<f64>,
    /// Linear CKA over all classes.
    pub cka: f64,
    /// Test texts ranking the test classes (text -> image) after the fitted rotation.
    pub r1_t2i: f64,
    pub r5_t2i: f64,
    /// Test classes ranking the test texts (image -> text).
    pub r1_i2t: f64,
    pub r5_i2t: f64,
    /// R@1 and R@5 of a random ranking of the test classes.
    pub r1_chance: f64,
    pub r5_chance: f64,
    /// Pair-free matching on the test classes: top-1 accuracy, top-5 after a rotation fit
    /// on the matched pairs, chance 1/n and 5/n.
    pub match_top1: f64,
    pub match_top5: f64,
    pub match_chance: f64,
    /// GW(truth) / GW(found): the matching objective (see
    /// [`crate::measure::matching::qap_objective`]) of the true pairing over that of the
    /// pairing found. Above 1 the true pairing is *not* the optimum of the objective, so no
    /// solver could recover it: the two geometries share too little (not a solver failure).
    /// Below 1 the solver stopped at a worse local optimum than the truth.
    pub match_truth_ratio: f64,
    /// Classes used to fit the rotation and classes tested.
    pub n_fit: usize,
    pub n_test: usize,
}

/// The fitted text <- vision map, in the form the web app reads.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassMap {
    /// Text embedding width.
    pub d_text: usize,
    /// Row-major `[classes, d_text]`: normalise(centre(v)) Q^T, rows L2-normalised.
    pub class_vectors: Vec<f32>,
    /// `[d_text]`: the mean subtracted from text embeddings before the cosine.
    pub text_mean: Vec<f32>,
}

/// Subtracts `mean` from every row, then L2-normalises the rows.
fn centre_normalise(x: &Matrix, mean: &[f64]) -> Matrix {
    let mut m = Matrix::from_fn(x.nrows(), x.ncols(), |i, j| x[(i, j)] - mean[j]);
    l2_normalize_rows(&mut m);
    m
}

/// Column means of the rows `rows` of `x`.
fn mean_of(x: &Matrix, rows: &[usize]) -> Vec<f64> {
    let n = rows.len().max(1) as f64;
    (0..x.ncols())
        .map(|j| rows.iter().map(|&i| x[(i, j)]).sum::<f64>() / n)
        .collect()
}

/// Measures text embeddings `text` against vision vectors `vision` (row i of both = class
/// i); `is_test[i]` marks the held-out classes (ImageNet-100), the rest fit the rotation.
/// See the module doc for each score. Returns the scores and the fitted [`ClassMap`].
///
/// # Shapes
/// `text [n, d_t]` (row-major), `vision [n, d_v]`, `is_test [n]` -> scores, map `[n, d_t]`
pub fn vision_alignment(
    text: &[f32],
    d_t: usize,
    vision: &[f64],
    d_v: usize,
    is_test: &[bool],
    opts: &VisionOptions,
) -> Result<(VisionScores, ClassMap)> {
    let n = is_test.len();
    if text.len() != n * d_t || vision.len() != n * d_v {
        return Err(Error::invalid(format!(
            "vision alignment: expected text [{n}, {d_t}] and vision [{n}, {d_v}], got {} and {} values",
            text.len(),
            vision.len()
        )));
    }
    let text: Vec<f64> = text.iter().map(|&v| f64::from(v)).collect();
    let fit_rows: Vec<usize> = (0..n).filter(|&i| !is_test[i]).collect();
    let test_rows: Vec<usize> = (0..n).filter(|&i| is_test[i]).collect();
    if fit_rows.len() < 2 || test_rows.len() < 5 {
        return Err(Error::invalid(format!(
            "vision alignment needs >= 2 fit and >= 5 test classes, got {} and {}",
            fit_rows.len(),
            test_rows.len()
        )));
    }
    // 1. Mutual k-NN, its null and CKA over every class (no fitted map).
    let fa = Features::new("text classes", n, 1, d_t, text.clone())?;
    let fb = Features::new("vision classes", n, 1, d_v, vision.to_vec())?;
    let r = measure(&fa, &fb, &{
        let mut m = MetricOptions {
            k: opts.k,
            null_shuffles: opts.null_shuffles,
            seed: opts.seed,
            ..MetricOptions::default()
        };
        if !opts.clamp {
            m.preprocess.outlier_q = None;
        }
        m
    })?;
    // 2. Rotation fit on the fit classes, retrieval among the test classes.
    let t = from_row_major(n, d_t, &text)?;
    let v = from_row_major(n, d_v, vision)?;
    let (t_mean, v_mean) = (mean_of(&t, &fit_rows), mean_of(&v, &fit_rows));
    let (tp, vp) = (centre_normalise(&t, &t_mean), centre_normalise(&v, &v_mean));
    // Only the part of the map the fit classes determine: TF-IDF rows (2,048 terms) against
    // 1,280-d vision rows leave it rank-deficient with 900 fit classes, and R@k must not
    // depend on the SVD routine's completion (full-rank fits are unchanged to the bit).
    let fit = procrustes::fit_determined(
        select_rows(tp.as_ref(), &fit_rows).as_ref(),
        select_rows(vp.as_ref(), &fit_rows).as_ref(),
    )?;
    let mut mapped = &vp * fit.q.transpose(); // [n, d_t]: vision in text space
    l2_normalize_rows(&mut mapped);
    let (tt, mt) = (
        select_rows(tp.as_ref(), &test_rows),
        select_rows(mapped.as_ref(), &test_rows),
    );
    let t2i = RetrievalScores::from_ranks(&ranks(tt.as_ref(), mt.as_ref())?)?;
    let i2t = RetrievalScores::from_ranks(&ranks(mt.as_ref(), tt.as_ref())?)?;
    let chance = RetrievalScores::chance(test_rows.len());
    // 3. Pair-free matching among the test classes, each side centred on its own mean
    // (unpaired statistics only); the vision rows are shuffled to hide the pairing.
    let m = test_rows.len();
    let (ta, vb) = (
        select_rows(t.as_ref(), &test_rows),
        select_rows(v.as_ref(), &test_rows),
    );
    let a = centre_normalise(&ta, &mean_of(&ta, &(0..m).collect::<Vec<_>>()));
    let b = centre_normalise(&vb, &mean_of(&vb, &(0..m).collect::<Vec<_>>()));
    let pi = seeded_permutation(m, opts.seed);
    let bs = select_rows(b.as_ref(), &pi);
    let mut truth = vec![0; m];
    for (i, &p) in pi.iter().enumerate() {
        truth[p] = i;
    }
    let mo = MatchOptions {
        restarts: opts.match_restarts,
        seed: opts.seed,
        tabu_iters: if opts.match_tabu {
            MatchOptions::default().tabu_iters
        } else {
            0
        },
        ..MatchOptions::default()
    };
    let found = match_points(a.as_ref(), bs.as_ref(), &mo, &mut |_| {})?;
    let top1 = accuracy(&found.perm, &truth);
    let gw_truth = pairing_objective(a.as_ref(), bs.as_ref(), &truth);
    // Equal objectives (the truth found, or both exactly 0) give 1, never 0/0.
    let truth_ratio = if gw_truth == found.objective {
        1.0
    } else {
        gw_truth / found.objective.max(f64::MIN_POSITIVE)
    };
    // Zero-shot top-5: a rotation from the matched pairs, then rank every class per text.
    let matched = select_rows(bs.as_ref(), &found.perm);
    let q = procrustes::fit(a.as_ref(), matched.as_ref())?.q;
    let classes = &b * q.transpose(); // true order, so query i's answer is row i
    let top5 = RetrievalScores::from_ranks(&ranks(a.as_ref(), classes.as_ref())?)?.r5;

    let scores = VisionScores {
        mutual_knn: r.scores.mutual_knn,
        null_mean: r.null_mutual_knn_mean,
        null_std: r.null_mutual_knn_std,
        cka: r.scores.cka,
        r1_t2i: t2i.r1,
        r5_t2i: t2i.r5,
        r1_i2t: i2t.r1,
        r5_i2t: i2t.r5,
        r1_chance: chance.r1,
        r5_chance: chance.r5,
        match_top1: top1,
        match_top5: top5,
        match_chance: 1.0 / m as f64,
        match_truth_ratio: truth_ratio,
        n_fit: fit_rows.len(),
        n_test: m,
    };
    let map = ClassMap {
        d_text: d_t,
        class_vectors: (0..n)
            .flat_map(|i| (0..d_t).map(move |j| (i, j)))
            .map(|(i, j)| mapped[(i, j)] as f32)
            .collect(),
        text_mean: t_mean.iter().map(|&x| x as f32).collect(),
    };
    Ok((scores, map))
}

/// Safetensors bytes for the web app: f32 `class_vectors [classes, d_text]` and
/// `text_mean [d_text]`, metadata `classes` (JSON array of names) and `fit` (JSON). A text
/// embedding `z` is classified as `argmax_c cos(z - text_mean, class_vectors[c])`.
///
/// # Shapes
/// `map.class_vectors [n, d]`, `names [n]` -> bytes
pub fn imagenet_export(
    map: &ClassMap,
    names: &[String],
    fit: &serde_json::Value,
) -> Result<Vec<u8>> {
    let d = map.d_text;
    if map.class_vectors.len() != names.len() * d || map.text_mean.len() != d {
        return Err(Error::invalid(format!(
            "imagenet export: {} class values, {} names, {} mean values for width {d}",
            map.class_vectors.len(),
            names.len(),
            map.text_mean.len()
        )));
    }
    let cv: Vec<u8> = map
        .class_vectors
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let tm: Vec<u8> = map.text_mean.iter().flat_map(|x| x.to_le_bytes()).collect();
    let err = |e: safetensors::SafeTensorError| Error::invalid(format!("imagenet export: {e}"));
    let views = vec![
        (
            "class_vectors".to_string(),
            TensorView::new(Dtype::F32, vec![names.len(), d], &cv).map_err(err)?,
        ),
        (
            "text_mean".to_string(),
            TensorView::new(Dtype::F32, vec![d], &tm).map_err(err)?,
        ),
    ];
    let classes =
        serde_json::to_string(names).map_err(|e| Error::invalid(format!("class names: {e}")))?;
    let meta = HashMap::from([
        ("classes".to_string(), classes),
        ("fit".to_string(), fit.to_string()),
    ]);
    safetensors::serialize(views, Some(meta)).map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn classes_parse_and_name_errors() {
        let tsv = "index\twnid\tlemmas\tdefinition\n0\tn01440764\ttench, Tinca tinca\tfreshwater fish\n1\tn01443537\tgoldfish\tsmall fish\n";
        let c = parse_classes("c.tsv", tsv.as_bytes()).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].text(), "tench, Tinca tinca: freshwater fish");
        assert_eq!((c[0].name(), c[1].name()), ("tench", "goldfish"));
        let e = parse_classes("c.tsv", "h\n1\tn0\tx\ty\n".as_bytes()).unwrap_err();
        assert!(
            e.to_string().contains("line 2") && e.to_string().contains("expected 0"),
            "{e}"
        );
        let e = parse_classes("c.tsv", "h\n0\tn0\tx\n".as_bytes()).unwrap_err();
        assert!(e.to_string().contains("4 tab-separated"), "{e}");
    }

    /// Vision = text padded with zeros to a wider space and rotated: every score is
    /// perfect, and the exported class vectors classify each text as its own class.
    #[test]
    fn a_rotated_copy_is_found_with_and_without_pairs() {
        let (n, d_t, d_v) = (60, 6, 10);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let text: Vec<f32> = (0..n * d_t).map(|_| rng.random_range(-1.0..1.0)).collect();
        // Random orthogonal [d_v, d_v] from the QR-free route: Procrustes of a random matrix
        // onto the identity gives its polar factor.
        let g = Matrix::from_fn(d_v, d_v, |_, _| rng.random_range(-1.0..1.0));
        let rot = procrustes::fit(g.as_ref(), Matrix::identity(d_v, d_v).as_ref())
            .unwrap()
            .q;
        let padded = Matrix::from_fn(n, d_v, |i, j| {
            if j < d_t {
                f64::from(text[i * d_t + j])
            } else {
                0.0
            }
        });
        let v = &padded * &rot;
        let vision: Vec<f64> = (0..n)
            .flat_map(|i| (0..d_v).map(move |j| (i, j)))
            .map(|(i, j)| v[(i, j)])
            .collect();
        let is_test: Vec<bool> = (0..n).map(|i| i % 3 == 0).collect();
        let opts = VisionOptions {
            k: 5,
            null_shuffles: 10,
            match_restarts: 2,
            match_tabu: true,
            seed: 0,
            clamp: true,
        };
        let (s, map) = vision_alignment(&text, d_t, &vision, d_v, &is_test, &opts).unwrap();
        // Not exactly 1: PRH's per-coordinate outlier clamp is not rotation invariant.
        assert!(s.mutual_knn > 0.8 && s.cka > 0.9, "{s:?}");
        assert_eq!((s.r1_t2i, s.r1_i2t, s.r5_t2i), (1.0, 1.0, 1.0), "{s:?}");
        assert_eq!((s.n_fit, s.n_test), (40, 20));
        assert!((s.r1_chance - 0.05).abs() < 1e-15);
        assert_eq!(s.match_top1, 1.0, "{s:?}");
        assert_eq!(s.match_top5, 1.0, "{s:?}");
        // The truth was found, so its objective is the found one.
        assert_eq!(s.match_truth_ratio, 1.0, "{s:?}");
        // Exported map: argmax cos(t - mean, class_vectors) is the true class.
        for i in 0..n {
            let z: Vec<f32> = (0..d_t)
                .map(|j| text[i * d_t + j] - map.text_mean[j])
                .collect();
            let best = (0..n)
                .max_by(|&a, &b| {
                    let dot = |c: usize| {
                        (0..d_t)
                            .map(|j| z[j] * map.class_vectors[c * d_t + j])
                            .sum::<f32>()
                    };
                    dot(a).total_cmp(&dot(b))
                })
                .unwrap();
            assert_eq!(best, i);
        }
        let names: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
        let bytes = imagenet_export(&map, &names, &serde_json::json!({"n_fit": 40})).unwrap();
        let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
        assert_eq!(st.tensor("class_vectors").unwrap().shape(), [n, d_t]);
        assert_eq!(st.tensor("text_mean").unwrap().shape(), [d_t]);
        let (_, meta) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
        let meta = meta.metadata().clone().unwrap();
        assert!(meta["classes"].starts_with("[\"c0\",\"c1\""));
        assert!(imagenet_export(&map, &names[1..], &serde_json::json!({})).is_err());
        assert!(vision_alignment(&text[1..], d_t, &vision, d_v, &is_test, &opts).is_err());
    }
}
