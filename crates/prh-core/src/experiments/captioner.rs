//! One rotation makes a captioner (paper §6: a text decoder trained on text only, joined
//! to a separately trained image encoder by one fitted map, captions images): on the
//! scene world, with its exact reference captions and parsable attributes.
//!
//! ```text
//! picture x  ->  image encoder f_img(x) [d]  ->  map M [d, d]  ->  decoder(condition(f M))
//! M fitted on N pairs (f_img(x_i), f_text(c_i)) of the fit pool's states
//! ```
//!
//! The states are split once (seeded): a third are **test** states, whose pictures are
//! never used in a fit, and the rest the **fit pool**, in a seeded order so that "N
//! pairs" means its first N states. The test pictures are renderings of their own
//! (another background and jitter than any fit rendering). Three maps
//! ([`MapKind`]): the rotation the theorem predicts (orthogonal Procrustes), a general
//! linear map (least squares, minimum norm when N < d) and a pair-free map (the pool's
//! two sets matched from their geometry alone, then the rotation of the matched pairs).
//! Baselines: the decoder on the test states' own caption embeddings (the ceiling: no
//! map), a rotation fitted on shuffled pairs (the null), and no map at all (the identity).

use crate::linalg::{Matrix, from_row_major, from_rows, select_rows, svd, to_rows};
use crate::measure::matching::{MatchOptions, match_points, pairing_objective, seeded_permutation};
use crate::measure::preprocess::l2_normalize_rows;
use crate::models::caption_decoder::{CaptionDecoder, condition};
use crate::scene::render_text::reference_captions;
use crate::scene::theory::{paired_seed, paired_views};
use crate::scene::{SceneView, SceneWorld};
use crate::tasks::decoder::{attribute_accuracy, write_captions};
use crate::tasks::scene::SceneModel;
use crate::text::caption_scores::{bleu, cider_d, words};
use crate::text::tokenizer::TextTokenizer;
use crate::{Error, Result};
use burn::prelude::Backend;
use serde::{Deserialize, Serialize};

/// How image embeddings are carried into the caption encoder's space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MapKind {
    /// Orthogonal Procrustes on the N pairs (the theorem's rotation).
    Rotation,
    /// Least squares `argmin_W ||A W - B||_F`, minimum-norm when N < d.
    Linear,
    /// No pairs: the fit pool's pictures and captions matched from their geometry
    /// ([`match_points`]), then the rotation of the matched pairs.
    PairFree,
}

impl MapKind {
    /// Every map, in report order.
    pub const ALL: [MapKind; 3] = [MapKind::Rotation, MapKind::Linear, MapKind::PairFree];

    /// The command-line spelling.
    pub fn name(self) -> &'static str {
        match self {
            MapKind::Rotation => "rotation",
            MapKind::Linear => "linear",
            MapKind::PairFree => "pair-free",
        }
    }

    /// Parses the command-line spelling.
    pub fn parse(s: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "--map {s}: expected rotation, linear, pair-free or all"
                ))
            })
    }
}

/// A fitted map and what its fit says.
#[derive(Debug, Clone)]
pub struct FittedMap {
    /// Which map.
    pub kind: MapKind,
    /// `M [d, e]`: image rows times M are caption-space rows.
    pub m: Matrix,
    /// Pairs used (0 for pair-free).
    pub pairs: usize,
    /// ||A M - B||_F / ||B||_F on the pairs fitted (for pair-free: on the true pairs).
    pub relative_residual: f64,
    /// Pair-free only: the share of pool pictures matched to their own caption.
    pub match_accuracy: Option<f64>,
    /// Pair-free only: GW(truth) / GW(found) ([`crate::measure::matching::qap_objective`]
    /// of the true pairing over that of the one the solver returned). Above 1 the true
    /// pairing is not the objective's optimum and no solver recovers it (the geometry's
    /// failure); below 1 the solver stopped above the truth (the search's).
    pub match_truth_over_found: Option<f64>,
}

/// The minimum-norm least-squares map `W = A^+ B` (singular values below 1e-10 of the
/// largest are dropped).
///
/// # Shapes
/// `a [n, d]`, `b [n, e]` -> `[d, e]`
pub fn least_squares(a: &Matrix, b: &Matrix) -> Result<Matrix> {
    let dec = svd(a.as_ref())?;
    let cut = dec.s.first().copied().unwrap_or(0.0) * 1e-10;
    let r = dec.s.len();
    // A^+ = V diag(1/s) U^T over the kept singular values.
    let inv = Matrix::from_fn(r, r, |i, j| {
        if i == j && dec.s[i] > cut {
            1.0 / dec.s[i]
        } else {
            0.0
        }
    });
    Ok(&dec.v * &inv * dec.u.transpose() * b)
}

/// The rotation of the theorem fitted on pairs: orthogonal Procrustes, `Q = argmin_{Q^T Q
/// = I} ||A Q - B||_F`, and among equally good fits the one nearest a fixed random rotation
/// R0 (seeded by `seed`).
///
/// With N < d pairs, M = A^T B has rank N and the fit leaves a rotation of the other
/// d - N directions free: an SVD picks one arbitrarily (native and wasm builds picked
/// different ones, so their captions differed). The polar factor of `M + eps R0`, eps =
/// 1e-8 ||M||_F, is unique and continuous (generically invertible), equals the Procrustes
/// solution to O(eps / sigma_min) when M has full rank, and otherwise settles the free
/// directions on the fit nearest R0 (argmax tr(R0^T Q)). R0 is random, not the identity:
/// two encoders that happen to share a basis (the demo's symbol encoders share their
/// initialisation seed) would otherwise be joined correctly by the tie-break itself, not
/// by the pairs (the `identity` row of `prh-native caption` shows how far that goes).
///
/// # Shapes
/// `a [n, d]`, `b [n, d]` -> `[d, d]`
pub fn rotation(a: &Matrix, b: &Matrix, seed: u64) -> Result<Matrix> {
    use rand::SeedableRng;
    let d = a.ncols();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x2070_7a11);
    let g = Matrix::from_fn(d, d, |_, _| crate::rng::standard_normal(&mut rng));
    let gd = svd(g.as_ref())?;
    let r0 = &gd.u * gd.v.transpose();
    let m = a.transpose() * b;
    let eps = 1e-8 * m.norm_l2().max(f64::MIN_POSITIVE);
    let dec = svd((&m + &r0 * faer::Scale(eps)).as_ref())?;
    Ok(&dec.u * dec.v.transpose())
}

/// Fits `kind` from image rows `a` to caption rows `b` (paired row by row; pair-free
/// ignores the pairing, and uses every row).
///
/// # Shapes
/// `a [n, d]`, `b [n, e]` -> `m [d, e]`
pub fn fit_map(kind: MapKind, a: &Matrix, b: &Matrix, seed: u64) -> Result<FittedMap> {
    let (n, d, e) = (a.nrows(), a.ncols(), b.ncols());
    if n == 0 || b.nrows() != n {
        return Err(Error::invalid(format!(
            "no pairs to fit the map: {n} picture rows and {} caption rows (ask for --fit N \
             with N >= 1)",
            b.nrows()
        )));
    }
    if d != e {
        return Err(Error::invalid(format!(
            "the image encoder's embeddings are {d} wide and the caption encoder's {e}: a \
             rotation maps equal widths (train both with the same world, or the same out_dim)"
        )));
    }
    let residual = |m: &Matrix| {
        let r = (a * m - b).norm_l2();
        let bn = b.norm_l2();
        if bn > 0.0 { r / bn } else { r }
    };
    let (m, accuracy) = match kind {
        MapKind::Rotation => (rotation(a, b, seed)?, None),
        MapKind::Linear => (least_squares(a, b)?, None),
        MapKind::PairFree => {
            // The caption side in a seeded order, so the solver cannot read the pairing.
            let hide = seeded_permutation(n, seed ^ 0x0bad_5eed);
            let b_hidden = select_rows(b.as_ref(), &hide);
            let opts = MatchOptions {
                seed,
                ..MatchOptions::default()
            };
            let (mut ua, mut ub) = (a.clone(), b_hidden.clone());
            l2_normalize_rows(&mut ua);
            l2_normalize_rows(&mut ub);
            let found = match_points(ua.as_ref(), ub.as_ref(), &opts, &mut |_| {})?;
            let matched = select_rows(b_hidden.as_ref(), &found.perm);
            let right = (0..n).filter(|&i| hide[found.perm[i]] == i).count();
            // Picture i's caption sits at the hidden row j with hide[j] = i.
            let mut truth = vec![0; n];
            hide.iter().enumerate().for_each(|(j, &i)| truth[i] = j);
            let gw_truth = pairing_objective(ua.as_ref(), ub.as_ref(), &truth);
            (
                rotation(a, &matched, seed)?,
                Some((
                    right as f64 / n as f64,
                    // Equal objectives (the truth found, both ~0) read as 1.
                    if gw_truth == found.objective {
                        1.0
                    } else {
                        gw_truth / found.objective.max(f64::MIN_POSITIVE)
                    },
                )),
            )
        }
    };
    Ok(FittedMap {
        kind,
        relative_residual: residual(&m),
        pairs: if kind == MapKind::PairFree { 0 } else { n },
        m,
        match_accuracy: accuracy.map(|a| a.0),
        match_truth_over_found: accuracy.map(|a| a.1),
    })
}

/// The scores of a set of captions: CIDEr-D and BLEU (pycocoevalcap's definitions, the
/// references every caption the renderer writes for the state) and the share whose parsed
/// attributes are right.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CaptionScores {
    /// Mean CIDEr-D.
    pub cider_d: f64,
    /// Corpus BLEU-4.
    pub bleu4: f64,
    /// Share naming the true shape, colour, size, position.
    pub attributes: [f64; 4],
    /// Share naming all four right.
    pub all_right: f64,
}

/// Scores `captions[i]` of the state of `views[i]`.
pub fn score(views: &[SceneView], captions: &[String]) -> CaptionScores {
    let cands: Vec<Vec<String>> = captions.iter().map(|c| words(c)).collect();
    let refs: Vec<Vec<Vec<String>>> = views
        .iter()
        .map(|v| {
            reference_captions(v.state)
                .iter()
                .map(|r| words(r))
                .collect()
        })
        .collect();
    let acc = attribute_accuracy(views, captions);
    CaptionScores {
        cider_d: cider_d(&cands, &refs).1,
        bleu4: bleu(&cands, &refs)[3],
        attributes: [acc[0], acc[1], acc[2], acc[3]],
        all_right: acc[4],
    }
}

/// The split of the world's states into the fit pool (in its seeded order) and the test
/// states: every third state of a seeded permutation is a test state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Split {
    /// Fit-pool state indices, in the order pairs are taken.
    pub pool: Vec<usize>,
    /// Test state indices.
    pub test: Vec<usize>,
}

impl Split {
    /// The split of `n` states under `seed`.
    pub fn new(n: usize, seed: u64) -> Split {
        let order = seeded_permutation(n, seed ^ 0x5911);
        let (test, pool) = order
            .iter()
            .enumerate()
            .partition::<Vec<_>, _>(|(k, _)| k % 3 == 2);
        Split {
            pool: pool.into_iter().map(|(_, &s)| s).collect(),
            test: test.into_iter().map(|(_, &s)| s).collect(),
        }
    }

    /// The curve's pair counts: 1, 2, 4, ... below the pool size, then the whole pool.
    pub fn curve(&self) -> Vec<usize> {
        let mut out: Vec<usize> = std::iter::successors(Some(1usize), |n| Some(n * 2))
            .take_while(|&n| n < self.pool.len())
            .collect();
        out.push(self.pool.len());
        out
    }
}

/// The embeddings a caption run needs: the fit pool's pictures and captions (paired,
/// in pool order) and the test states' pictures and captions (their own renderings).
#[derive(Debug, Clone)]
pub struct Embedded {
    /// Pool pictures `[pool, d]`.
    pub pool_image: Matrix,
    /// Pool captions `[pool, e]`.
    pub pool_text: Matrix,
    /// Test pictures `[test, d]`.
    pub test_image: Matrix,
    /// Test captions `[test, e]` (the ceiling baseline's input).
    pub test_text: Matrix,
    /// The test pictures' views (states, backgrounds).
    pub test_views: Vec<SceneView>,
}

/// Embeds the split's pictures with `image` and captions with `text`: the pool from the
/// paired evaluation set of `seed` (the renderings every run exports), the test states
/// from a second paired set drawn for them.
pub fn embed<B: Backend>(
    world: &SceneWorld,
    split: &Split,
    image: &SceneModel<B>,
    text: &SceneModel<B>,
    seed: u64,
    device: &B::Device,
) -> Result<Embedded> {
    let (pi, pt) = paired_views(world, paired_seed(seed));
    let (ti, tt) = paired_views(world, paired_seed(seed) ^ 0x7e57_0000);
    let pick = |views: &[SceneView], idx: &[usize]| -> Vec<SceneView> {
        idx.iter().map(|&i| views[i]).collect()
    };
    let test_views = pick(&ti, &split.test);
    Ok(Embedded {
        pool_image: from_rows(&image.embed(&pick(&pi, &split.pool), device)?)?,
        pool_text: from_rows(&text.embed(&pick(&pt, &split.pool), device)?)?,
        test_image: from_rows(&image.embed(&test_views, device)?)?,
        test_text: from_rows(&text.embed(&pick(&tt, &split.test), device)?)?,
        test_views,
    })
}

/// The first `n` rows.
fn head(x: &Matrix, n: usize) -> Matrix {
    Matrix::from_fn(n.min(x.nrows()), x.ncols(), |i, j| x[(i, j)])
}

/// One scored way of captioning the test pictures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaptionRow {
    /// `rotation`, `linear`, `pair-free`, or a baseline (`ceiling`, `null`).
    pub method: String,
    /// Pairs fitted.
    pub pairs: usize,
    /// The scores.
    pub scores: CaptionScores,
    /// The map's relative residual on its pairs (none for the ceiling).
    pub relative_residual: Option<f64>,
    /// Pair-free: the share of pool pictures matched to their own caption.
    pub match_accuracy: Option<f64>,
    /// Pair-free: GW(truth) / GW(found) ([`FittedMap::match_truth_over_found`]).
    #[serde(default)]
    pub match_truth_over_found: Option<f64>,
    /// The captions of the test pictures, in test order.
    pub captions: Vec<String>,
}

/// The decoder and how it writes.
pub struct Writer<'a, B: Backend> {
    /// The trained decoder.
    pub decoder: &'a CaptionDecoder<B>,
    /// Its tokenizer.
    pub tokenizer: &'a TextTokenizer,
    /// Beam width (1 = greedy).
    pub beam: usize,
    /// Inference device.
    pub device: &'a B::Device,
}

impl<B: Backend> Writer<'_, B> {
    /// Captions of caption-space rows, scored against the test views.
    fn caption(&self, x: &Matrix, views: &[SceneView]) -> Result<(Vec<String>, CaptionScores)> {
        let caps = write_captions(
            self.decoder,
            self.tokenizer,
            &condition(&to_rows(x.as_ref())),
            self.beam,
            self.device,
        )?;
        let s = score(views, &caps);
        Ok((caps, s))
    }

    /// Fits `kind` on the first `n` pool pairs (pair-free: on the whole pool, unpaired)
    /// and captions the test pictures through it.
    pub fn with_map(&self, e: &Embedded, kind: MapKind, n: usize, seed: u64) -> Result<CaptionRow> {
        let fitted = if kind == MapKind::PairFree {
            fit_map(kind, &e.pool_image, &e.pool_text, seed)?
        } else {
            fit_map(kind, &head(&e.pool_image, n), &head(&e.pool_text, n), seed)?
        };
        let (captions, scores) = self.caption(&(&e.test_image * &fitted.m), &e.test_views)?;
        Ok(CaptionRow {
            method: kind.name().into(),
            pairs: fitted.pairs,
            scores,
            relative_residual: Some(fitted.relative_residual),
            match_accuracy: fitted.match_accuracy,
            match_truth_over_found: fitted.match_truth_over_found,
            captions,
        })
    }

    /// The ceiling: the test states' own caption embeddings, no map.
    pub fn ceiling(&self, e: &Embedded) -> Result<CaptionRow> {
        let (captions, scores) = self.caption(&e.test_text, &e.test_views)?;
        Ok(CaptionRow {
            method: "ceiling".into(),
            pairs: 0,
            scores,
            relative_residual: None,
            match_accuracy: None,
            match_truth_over_found: None,
            captions,
        })
    }

    /// No map at all (the identity): what two encoders that share a basis by accident
    /// (a shared initialisation) give without any pair.
    pub fn identity(&self, e: &Embedded) -> Result<CaptionRow> {
        let (captions, scores) = self.caption(&e.test_image, &e.test_views)?;
        Ok(CaptionRow {
            method: "identity".into(),
            pairs: 0,
            scores,
            relative_residual: None,
            match_accuracy: None,
            match_truth_over_found: None,
            captions,
        })
    }

    /// The null: a rotation fitted on `n` pool pairs whose captions were shuffled among
    /// the pool (so no pair is a true one, unless by chance).
    pub fn null(&self, e: &Embedded, n: usize, seed: u64) -> Result<CaptionRow> {
        let pool = e.pool_text.nrows();
        let shuffle = seeded_permutation(pool, seed ^ 0x0dd5);
        let shuffled = Matrix::from_fn(pool, e.pool_text.ncols(), |i, j| {
            e.pool_text[(shuffle[i], j)]
        });
        let fitted = fit_map(
            MapKind::Rotation,
            &head(&e.pool_image, n),
            &head(&shuffled, n),
            seed,
        )?;
        let (captions, scores) = self.caption(&(&e.test_image * &fitted.m), &e.test_views)?;
        Ok(CaptionRow {
            method: "null".into(),
            pairs: fitted.pairs,
            scores,
            relative_residual: Some(fitted.relative_residual),
            match_accuracy: None,
            match_truth_over_found: None,
            captions,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// B = A Q for a random rotation Q: the rotation and the linear map recover Q from
    /// d pairs (to 1e-9); with fewer pairs than d the linear map is the minimum-norm one
    /// and still fits its pairs exactly; pair-free recovers Q and the pairing of 40
    /// points without any pair.
    #[test]
    fn maps_recover_a_rotation() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let (n, d) = (40, 5);
        let a = Matrix::from_fn(n, d, |_, _| rng.random::<f64>() - 0.5);
        let g = Matrix::from_fn(d, d, |_, _| rng.random::<f64>() - 0.5);
        let dec = svd(g.as_ref()).unwrap();
        let q = &dec.u * dec.v.transpose();
        let b = &a * &q;
        for kind in MapKind::ALL {
            let f = fit_map(kind, &a, &b, 0).unwrap();
            let err = (&f.m - &q).norm_l2();
            assert!(err < 1e-6, "{kind:?}: ||M - Q|| = {err}");
            assert!(f.relative_residual < 1e-6, "{kind:?}");
        }
        let few = fit_map(MapKind::Linear, &head(&a, 3), &head(&b, 3), 0).unwrap();
        assert!(few.relative_residual < 1e-9);
        let pf = fit_map(MapKind::PairFree, &a, &b, 0).unwrap();
        assert_eq!(pf.match_accuracy, Some(1.0));
        // The truth found: GW(truth) / GW(found) is 1 (the same pairing).
        assert!((pf.match_truth_over_found.unwrap() - 1.0).abs() < 1e-12);
        let wide = Matrix::zeros(n, d + 1);
        let e = fit_map(MapKind::Rotation, &a, &wide, 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("5 wide") && e.contains("6"), "{e}");
        let e = fit_map(MapKind::Rotation, &head(&a, 0), &head(&b, 0), 0).unwrap_err();
        assert!(e.to_string().contains("--fit N"), "{e}");
    }

    /// With fewer pairs than d the rotation still fits its pairs exactly and is
    /// orthogonal; it is unique (a permuted order of the same pairs gives the same map)
    /// and does not favour the identity: with identical sides and one pair the free
    /// directions take the seeded rotation, not the identity.
    #[test]
    fn few_pairs_give_a_unique_rotation_that_favours_no_basis() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let (n, d) = (3, 6);
        let a = Matrix::from_fn(n, d, |_, _| rng.random::<f64>() - 0.5);
        let g = Matrix::from_fn(d, d, |_, _| rng.random::<f64>() - 0.5);
        let dec = svd(g.as_ref()).unwrap();
        let q = &dec.u * dec.v.transpose();
        let b = &a * &q;
        let r = rotation(&a, &b, 0).unwrap();
        assert!((&a * &r - &b).norm_l2() < 1e-6, "fits its pairs");
        assert!(
            (r.transpose() * &r - Matrix::identity(d, d)).norm_l2() < 1e-9,
            "orthogonal"
        );
        let perm = [2, 0, 1];
        let ap = select_rows(a.as_ref(), &perm);
        let bp = select_rows(b.as_ref(), &perm);
        assert!((rotation(&ap, &bp, 0).unwrap() - &r).norm_l2() < 1e-6);
        let one = head(&a, 1);
        let i = rotation(&one, &one, 0).unwrap();
        assert!((&one * &i - &one).norm_l2() < 1e-6, "fits the one pair");
        assert!(
            (i - Matrix::identity(d, d)).norm_l2() > 0.5,
            "the identity is not preferred"
        );
    }

    #[test]
    fn split_is_a_seeded_partition_and_the_curve_doubles() {
        let s = Split::new(192, 0);
        assert_eq!((s.pool.len(), s.test.len()), (128, 64));
        let mut all: Vec<usize> = s.pool.iter().chain(&s.test).copied().collect();
        all.sort();
        assert_eq!(all, (0..192).collect::<Vec<_>>());
        assert_eq!(s, Split::new(192, 0));
        assert_eq!(s.curve(), [1, 2, 4, 8, 16, 32, 64, 128]);
    }

    /// The references' own captions score at the top: every attribute right, BLEU-4 1,
    /// and the null of a wrong state scores lower on every measure.
    #[test]
    fn scores_reward_the_right_state() {
        let views: Vec<SceneView> = (0..4)
            .map(|i| SceneView::full([i % 4, (i + 1) % 4, i % 3, (i + 2) % 4], 0, 0))
            .collect();
        let right: Vec<String> = views
            .iter()
            .map(crate::scene::render_text::caption)
            .collect();
        let good = score(&views, &right);
        assert_eq!(good.all_right, 1.0);
        assert!((good.bleu4 - 1.0).abs() < 1e-9, "{good:?}");
        let wrong: Vec<String> = right.iter().cycle().skip(1).take(4).cloned().collect();
        let bad = score(&views, &wrong);
        assert!(bad.cider_d < good.cider_d && bad.bleu4 < good.bleu4 && bad.all_right == 0.0);
    }
}

/// The browser's captioner (the web app's caption lab): everything `prh-native caption
/// --export FILE` writes into one `.safetensors` file, bytes in and bytes out.
///
/// - tensors: `image_record` and `decoder_record` (burn's full-precision records, u8),
///   `pool_image` and `pool_text` (f32 `[pool, d]`, the fit pool's paired embeddings in
///   pool order, so the page fits the map for any N itself);
/// - metadata: `format = "prh-captioner"`, `version = "1"`, `image_config` (the image run's
///   TOML), `decoder_config` (the decoder run's TOML), `tokenizer` (its `tokenizer.json`),
///   `dim`, `beam`, `test_views` (JSON: state, background and style seed of each held-out
///   picture) and `expected` (JSON: the CLI's captions of every test picture for each
///   `(map, N)` it was asked for; the end-to-end test compares the page with them).
#[derive(Debug, Clone)]
pub struct CaptionerBundle {
    /// The image run's resolved config (TOML).
    pub image_config: String,
    /// The image encoder's record.
    pub image_record: Vec<u8>,
    /// The decoder run's config (TOML).
    pub decoder_config: String,
    /// The decoder's record.
    pub decoder_record: Vec<u8>,
    /// The decoder's tokenizer (JSON).
    pub tokenizer: String,
    /// Embedding width d.
    pub dim: usize,
    /// Beam width of the captions.
    pub beam: usize,
    /// Pool pictures' embeddings `[pool, d]`.
    pub pool_image: Matrix,
    /// Pool captions' embeddings `[pool, d]`.
    pub pool_text: Matrix,
    /// The held-out pictures: (state, background, style seed).
    pub test_views: Vec<([usize; 4], usize, u64)>,
    /// The CLI's captions: (map, N, one caption per test view).
    pub expected: Vec<(MapKind, usize, Vec<String>)>,
}

/// Bundle format name stored in the metadata.
pub const CAPTIONER_FORMAT: &str = "prh-captioner";

impl CaptionerBundle {
    /// The `.safetensors` bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        use safetensors::{Dtype, tensor::TensorView};
        let f32s = |m: &Matrix| -> Vec<u8> {
            crate::linalg::to_row_major(m.as_ref())
                .iter()
                .flat_map(|&x| (x as f32).to_le_bytes())
                .collect()
        };
        let (pi, pt) = (f32s(&self.pool_image), f32s(&self.pool_text));
        let shape = |m: &Matrix| vec![m.nrows(), m.ncols()];
        let err =
            |e: safetensors::SafeTensorError| Error::invalid(format!("captioner bundle: {e}"));
        let tensors = vec![
            (
                "image_record",
                TensorView::new(Dtype::U8, vec![self.image_record.len()], &self.image_record)
                    .map_err(err)?,
            ),
            (
                "decoder_record",
                TensorView::new(
                    Dtype::U8,
                    vec![self.decoder_record.len()],
                    &self.decoder_record,
                )
                .map_err(err)?,
            ),
            (
                "pool_image",
                TensorView::new(Dtype::F32, shape(&self.pool_image), &pi).map_err(err)?,
            ),
            (
                "pool_text",
                TensorView::new(Dtype::F32, shape(&self.pool_text), &pt).map_err(err)?,
            ),
        ];
        let expected: Vec<serde_json::Value> = self
            .expected
            .iter()
            .map(|(m, n, c)| serde_json::json!({ "map": m, "n": n, "captions": c }))
            .collect();
        let meta: std::collections::HashMap<String, String> = [
            ("format", CAPTIONER_FORMAT.to_string()),
            ("version", "1".to_string()),
            ("image_config", self.image_config.clone()),
            ("decoder_config", self.decoder_config.clone()),
            ("tokenizer", self.tokenizer.clone()),
            ("dim", self.dim.to_string()),
            ("beam", self.beam.to_string()),
            (
                "test_views",
                serde_json::to_string(&self.test_views).unwrap_or_default(),
            ),
            ("expected", serde_json::Value::from(expected).to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        safetensors::serialize(tensors, Some(meta)).map_err(err)
    }

    /// Parses the bytes of a bundle file (`source` names it in errors).
    pub fn from_bytes(source: &str, bytes: &[u8]) -> Result<Self> {
        let bad = |field: &str, msg: String| Error::format(source, field, msg);
        let st = safetensors::SafeTensors::deserialize(bytes)
            .map_err(|e| bad("header", format!("not a safetensors file: {e}")))?;
        let (_, header) = safetensors::SafeTensors::read_metadata(bytes)
            .map_err(|e| bad("header", format!("{e}")))?;
        let meta = header.metadata().clone().unwrap_or_default();
        let get = |k: &str| {
            meta.get(k).cloned().ok_or_else(|| {
                bad(
                    k,
                    "missing from the metadata (a prh-native caption --export file?)".into(),
                )
            })
        };
        if get("format")? != CAPTIONER_FORMAT {
            return Err(bad("format", format!("expected \"{CAPTIONER_FORMAT}\"")));
        }
        let bytes_of = |name: &str| -> Result<Vec<u8>> {
            Ok(st
                .tensor(name)
                .map_err(|e| bad(name, format!("{e}")))?
                .data()
                .to_vec())
        };
        let matrix_of = |name: &str| -> Result<Matrix> {
            let t = st.tensor(name).map_err(|e| bad(name, format!("{e}")))?;
            if t.dtype() != safetensors::Dtype::F32 || t.shape().len() != 2 {
                return Err(bad(name, "expected an f32 matrix".into()));
            }
            let v: Vec<f64> = t
                .data()
                .chunks_exact(4)
                .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                .collect();
            from_row_major(t.shape()[0], t.shape()[1], &v)
        };
        let num = |k: &str| -> Result<usize> {
            get(k)?
                .parse()
                .map_err(|_| bad(k, "expected a number".into()))
        };
        let test_views = serde_json::from_str(&get("test_views")?)
            .map_err(|e| bad("test_views", format!("{e}")))?;
        let expected_json: Vec<serde_json::Value> =
            serde_json::from_str(&get("expected")?).map_err(|e| bad("expected", format!("{e}")))?;
        let expected = expected_json
            .into_iter()
            .map(|v| -> Result<(MapKind, usize, Vec<String>)> {
                let m: MapKind = serde_json::from_value(v["map"].clone())
                    .map_err(|e| bad("expected", format!("{e}")))?;
                let n = v["n"].as_u64().ok_or_else(|| bad("expected", "n".into()))? as usize;
                let c: Vec<String> = serde_json::from_value(v["captions"].clone())
                    .map_err(|e| bad("expected", format!("{e}")))?;
                Ok((m, n, c))
            })
            .collect::<Result<_>>()?;
        Ok(Self {
            image_config: get("image_config")?,
            image_record: bytes_of("image_record")?,
            decoder_config: get("decoder_config")?,
            decoder_record: bytes_of("decoder_record")?,
            tokenizer: get("tokenizer")?,
            dim: num("dim")?,
            beam: num("beam")?,
            pool_image: matrix_of("pool_image")?,
            pool_text: matrix_of("pool_text")?,
            test_views,
            expected,
        })
    }

    /// Caption-space row of one image embedding through `kind` fitted on the first `n`
    /// pool pairs (pair-free: the whole pool, unpaired).
    ///
    /// # Shapes
    /// `z [d]` -> `[d]`
    pub fn map_row(&self, z: &[f64], kind: MapKind, n: usize, seed: u64) -> Result<Vec<f64>> {
        let fitted = if kind == MapKind::PairFree {
            fit_map(kind, &self.pool_image, &self.pool_text, seed)?
        } else {
            fit_map(
                kind,
                &head(&self.pool_image, n),
                &head(&self.pool_text, n),
                seed,
            )?
        };
        let x = from_row_major(1, z.len(), z)?;
        Ok(to_rows((&x * &fitted.m).as_ref()).remove(0))
    }
}
