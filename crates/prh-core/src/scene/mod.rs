//! **Wing `scene`** (paper §2-3): the two-modality scene world, its image and caption
//! renderers and its closed-form theory (the exact Pi, K and predicted representation).
//! May use: `linalg`, `theory`, `measure`, `text`. No burn.
//!
//! The two-modality scene world (paper §2–3): a finite set of scenes, each one object
//! described by four factors (shape, colour, size, position), seen either as a 32x32
//! picture ([`crate::scene::render_image`]) or as a caption ([`crate::scene::render_text`]).
//!
//! # The model behind the exact Pi (documented choice)
//! With injective renderers, two renderings of one state are the pair (z, z) over states,
//! and so are two corruptions of one rendering: over bare states both view types give the
//! diagonal Pi = diag(p), K = I, and no spectral gap. What tells good views from bad ones
//! is (a) that a view is a *corruption* that hides part of the state and (b) whether the
//! two views share the rendering's nuisance. We therefore model both explicitly:
//! - **Augmented state** s = (z, u): z = (shape, colour, size, position) with p(z) = prod_i
//!   p_i(z_i), and u a discretised nuisance of the modality with prior q(u) (the picture's
//!   background; the caption's sentence template).
//! - **A view** hides each factor i independently with probability 1 - v_i (v_i = its
//!   visibility under the modality's crops / masked spans), and the nuisance with
//!   probability 1 - v_u. A hidden factor is rendered with a marker that no real value
//!   uses (grey colour, "shape" as a noun, ...), so views stay injective.
//! - **Good views**: two renderings of one z, each with its own nuisance and its own
//!   corruption. **Bad views**: two corruptions of one rendering (same z, same u).
//! - **Exact Pi over augmented states**: the pair (s1, s2) with s1 the first view's state
//!   and s2 a draw from the posterior of the state given the second view (visible factors
//!   kept, hidden ones redrawn from their prior). This is the state-side dual of the
//!   view-pair graph: with A[s, v] = sqrt(p(s)) P(v|s) / sqrt(P(v)), the view kernel
//!   A^T A and the state kernel A A^T share their non-zero spectrum, so K over states
//!   predicts what an encoder of views learns. It factorises:
//!   `Pi = Pi_1 (x) ... (x) Pi_4 (x) Pi_u`, `Pi_i[a, b] = p_a (v_i d_ab + (1 - v_i) p_b)`,
//!   and `Pi_u = q q^T` for good views (nuisance never shared) or
//!   `Pi_u[a, b] = q_a (v_u d_ab + (1 - v_u) q_b)` for bad views.
//!   Hence K's eigenvalues are products of v_i over subsets of factors (closed form, tested):
//!   good views put the single-factor directions (eigenvalue v_i) on top; bad views add the
//!   nuisance directions (eigenvalue v_u) and, when v_u > v_i, push a factor out of the
//!   top-d subspace. The jitter, lighting, pixel noise and synonyms are not in the model:
//!   they carry no state information and are drawn afresh for *every view*, of either
//!   kind. Shared by the two views of a bad pair they would be nuisance outside the model
//!   (lighting, always visible, at eigenvalue ~1 above the background's 0.88; the caption's
//!   synonyms likewise), the sampled pairs would not follow Pi, and an encoder could beat
//!   the predicted optimum: measured before this rule, the caption encoder's bad-view
//!   spectral loss reached -8.76 against the predicted minimum -sum lambda_j^2 = -7.54,
//!   and its CKA with F stalled at 0.55 (0.82 after, same 1,000-step budget).

pub mod render_image;
pub mod render_text;
pub mod theory;

use crate::linalg::Matrix;
use crate::theory::view_kind::ViewKind;
use crate::{Error, Result};
use faer::Mat;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Names of the four state factors, in index order.
pub const FACTORS: [&str; 4] = ["shape", "colour", "size", "position"];
/// Names of each factor's values, in index order (the renderers know this many values).
pub const VALUE_NAMES: [&[&str]; 4] = [
    &["circle", "square", "triangle", "cross"],
    &["red", "green", "blue", "yellow", "magenta", "cyan"],
    &["small", "medium", "large"],
    &["top-left", "top-right", "bottom-left", "bottom-right"],
];
/// Largest cardinality each factor supports (the renderers know this many values).
pub const MAX_CARDINALITY: [usize; 4] = [4, 6, 3, 4];
/// Largest nuisance cardinality of each modality (backgrounds, templates).
pub const MAX_NUISANCE: usize = 4;

/// The two modalities of the world.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Modality {
    /// 32x32 RGB pictures; nuisance = background tint.
    Image,
    /// Captions; nuisance = sentence template (word order).
    Text,
}

/// How visible each factor is under one modality's corruptions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Visibility {
    /// v_i = P(factor i visible in a view), in FACTORS order.
    pub factors: [f64; 4],
    /// v_u = P(nuisance visible in a view).
    pub nuisance: f64,
}

/// Sizes of the world and the corruption model (the `[world]` section of a scene run's
/// config; a missing field takes [`SceneConfig::demo`]'s value with seed 0).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SceneConfig {
    /// Values per factor, in FACTORS order (each at most MAX_CARDINALITY).
    pub cardinality: [usize; 4],
    /// Nuisance values of the image (backgrounds) and text (templates) modalities.
    pub nuisance: [usize; 2],
    /// Image crops: position is hidden most (a crop centred on the object), background least.
    pub image: Visibility,
    /// Text masked spans: the location phrase is dropped most, the template rarely.
    pub text: Visibility,
    /// Seed of p(z), q(u) and everything drawn from the world.
    pub seed: u64,
}

impl Default for SceneConfig {
    fn default() -> Self {
        Self::demo(0)
    }
}

impl SceneConfig {
    /// The demo's world: 4 shapes x 4 colours x 3 sizes x 4 positions = 192 states.
    ///
    /// Visibilities are chosen so the spectrum has clean gaps: every single-factor
    /// eigenvalue (>= 0.72) exceeds every product of two (<= 0.82 * 0.8 = 0.656), and the
    /// nuisance (0.88) outranks every factor, so bad views trade the 3 position directions
    /// for 3 nuisance directions at d = 11. The nuisance's products with a factor stay
    /// clear of the last factor kept (size, 0.76): under bad views K's gap after d is
    /// 0.76 - 0.88 x 0.82 = 0.038 for captions (template x colour next) and 0.76 - 0.72 =
    /// 0.04 for pictures (position next; background x shape is 0.704). At 0.92 it was
    /// 0.0056 for captions (template x colour, 0.754) and 0.024 for pictures (background x
    /// shape, 0.736): long caption runs then settled on a template x colour direction in
    /// place of a size direction, an optimum the sampled loss cannot tell from F's
    /// (docs/results.md, issue 19).
    pub fn demo(seed: u64) -> Self {
        SceneConfig {
            cardinality: [4, 4, 3, 4],
            nuisance: [4, 4],
            image: Visibility {
                factors: [0.8, 0.8, 0.76, 0.72],
                nuisance: 0.88,
            },
            text: Visibility {
                factors: [0.78, 0.82, 0.76, 0.72],
                nuisance: 0.88,
            },
            seed,
        }
    }

    /// A smaller world for quick runs and tests: 3 x 3 x 2 x 4 = 72 states.
    pub fn quick(seed: u64) -> Self {
        SceneConfig {
            cardinality: [3, 3, 2, 4],
            ..Self::demo(seed)
        }
    }
}

/// A world state z: one value index per factor.
pub type State = [usize; 4];

/// One view of a state: which factors (and whether the nuisance) survive the corruption,
/// plus the per-rendering randomness the model leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SceneView {
    /// The true state z.
    pub state: State,
    /// Whether each factor is visible.
    pub visible: [bool; 4],
    /// The rendering's nuisance u.
    pub nuisance: usize,
    /// Whether the nuisance is visible.
    pub nuisance_visible: bool,
    /// Seed of the unmodelled per-rendering randomness (jitter, lighting, noise, synonyms).
    pub style_seed: u64,
}

impl SceneView {
    /// The uncorrupted rendering of (z, u) (everything visible).
    pub fn full(state: State, nuisance: usize, style_seed: u64) -> SceneView {
        SceneView {
            state,
            visible: [true; 4],
            nuisance,
            nuisance_visible: true,
            style_seed,
        }
    }
}

/// The scene world: the config plus the seeded priors p_i and q_m.
#[derive(Debug, Clone)]
pub struct SceneWorld {
    /// The configuration it was built from.
    pub config: SceneConfig,
    /// p_i over each factor's values.
    pub factor_probs: [Vec<f64>; 4],
    /// q over the image (index 0) and text (index 1) nuisances.
    pub nuisance_probs: [Vec<f64>; 2],
}

/// A seeded, mildly non-uniform distribution over k values: w_j = 0.6 + U(0, 0.8), normalised.
fn seeded_probs(k: usize, rng: &mut ChaCha8Rng) -> Vec<f64> {
    let w: Vec<f64> = (0..k).map(|_| 0.6 + 0.8 * rng.random::<f64>()).collect();
    let s: f64 = w.iter().sum();
    w.into_iter().map(|x| x / s).collect()
}

/// Draws an index from a discrete distribution by inversion.
fn draw(probs: &[f64], rng: &mut impl Rng) -> usize {
    let u: f64 = rng.random();
    let mut acc = 0.0;
    for (j, &p) in probs.iter().enumerate() {
        acc += p;
        if u < acc {
            return j;
        }
    }
    probs.len() - 1
}

/// Pi of one factor: `Pi[a, b] = p_a (v d_ab + (1 - v) p_b)` (hidden w.p. 1 - v, then
/// redrawn from the prior). `v = 0` gives `p p^T` (never shared).
fn factor_pi(p: &[f64], v: f64) -> Matrix {
    Mat::from_fn(p.len(), p.len(), |a, b| {
        p[a] * (if a == b { v } else { 0.0 } + (1.0 - v) * p[b])
    })
}

impl SceneWorld {
    /// Builds the world and draws its priors from `config.seed`.
    pub fn new(config: SceneConfig) -> Result<Self> {
        for (i, (&c, &m)) in config
            .cardinality
            .iter()
            .zip(MAX_CARDINALITY.iter())
            .enumerate()
        {
            if !(2..=m).contains(&c) {
                return Err(Error::invalid(format!(
                    "scene factor {} needs 2..={m} values, got {c}",
                    FACTORS[i]
                )));
            }
        }
        for &u in &config.nuisance {
            if !(2..=MAX_NUISANCE).contains(&u) {
                return Err(Error::invalid(format!(
                    "scene nuisance needs 2..={MAX_NUISANCE} values, got {u}"
                )));
            }
        }
        for vis in [&config.image, &config.text] {
            if vis
                .factors
                .iter()
                .chain([&vis.nuisance])
                .any(|v| !(0.0..=1.0).contains(v))
            {
                return Err(Error::invalid(format!(
                    "visibilities must lie in [0, 1], got {vis:?}"
                )));
            }
        }
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
        let factor_probs = config.cardinality.map(|k| seeded_probs(k, &mut rng));
        let nuisance_probs = config.nuisance.map(|k| seeded_probs(k, &mut rng));
        Ok(SceneWorld {
            config,
            factor_probs,
            nuisance_probs,
        })
    }

    /// |Z|, the number of world states.
    pub fn n_states(&self) -> usize {
        self.config.cardinality.iter().product()
    }

    /// Index of a state, mixed radix with the position varying fastest.
    pub fn state_index(&self, z: &State) -> usize {
        z.iter()
            .zip(self.config.cardinality.iter())
            .fold(0, |acc, (&v, &c)| acc * c + v)
    }

    /// The state with index `i` (inverse of [`Self::state_index`]).
    pub fn state(&self, mut i: usize) -> State {
        let mut z = [0; 4];
        for f in (0..4).rev() {
            let c = self.config.cardinality[f];
            z[f] = i % c;
            i /= c;
        }
        z
    }

    /// The state's value names, e.g. `["circle", "red", "small", "top-left"]`.
    pub fn describe(&self, z: &State) -> [&'static str; 4] {
        [0, 1, 2, 3].map(|f| VALUE_NAMES[f][z[f]])
    }

    /// p(z) = prod_i p_i(z_i) over all states, in index order.
    pub fn p_states(&self) -> Vec<f64> {
        (0..self.n_states())
            .map(|i| {
                self.state(i)
                    .iter()
                    .enumerate()
                    .map(|(f, &v)| self.factor_probs[f][v])
                    .product()
            })
            .collect()
    }

    fn slot(m: Modality) -> usize {
        match m {
            Modality::Image => 0,
            Modality::Text => 1,
        }
    }

    /// Nuisance prior q of modality m.
    pub fn q(&self, m: Modality) -> &[f64] {
        &self.nuisance_probs[Self::slot(m)]
    }

    /// Visibilities of modality m.
    pub fn visibility(&self, m: Modality) -> Visibility {
        match m {
            Modality::Image => self.config.image,
            Modality::Text => self.config.text,
        }
    }

    /// The nuisance's visibility in Pi: 0 for good views (two renderings never share it),
    /// the modality's for views that share one rendering.
    pub fn nuisance_visibility(&self, m: Modality, kind: ViewKind) -> f64 {
        match kind {
            ViewKind::Good => 0.0,
            // Next-token pairs (prefix and continuation of one rendering, drift 0) share
            // the rendering as bad views do (theory::pair_graph's table); scene tasks
            // reject them at validation, but the world's Pi is defined for them.
            ViewKind::Bad | ViewKind::NextToken => self.visibility(m).nuisance,
        }
    }

    /// Number of augmented states |Z| * |U_m|; augmented index s = z * |U_m| + u.
    pub fn n_augmented(&self, m: Modality) -> usize {
        self.n_states() * self.q(m).len()
    }

    /// p(s) = p(z) q(u) over augmented states of modality m.
    pub fn p_augmented(&self, m: Modality) -> Vec<f64> {
        let q = self.q(m);
        self.p_states()
            .iter()
            .flat_map(|pz| q.iter().map(move |qu| pz * qu))
            .collect()
    }

    /// The exact positive-pair matrix over augmented states of modality m (module docs):
    /// `Pi = Pi_shape (x) Pi_colour (x) Pi_size (x) Pi_position (x) Pi_u`.
    ///
    /// Symmetric, non-negative, sums to 1, row sums p(s).
    ///
    /// # Shapes
    /// -> `[|Z| |U_m|, |Z| |U_m|]`
    pub fn pi(&self, m: Modality, kind: ViewKind) -> Matrix {
        let vis = self.visibility(m);
        let mut blocks: Vec<Matrix> = (0..4)
            .map(|f| factor_pi(&self.factor_probs[f], vis.factors[f]))
            .collect();
        blocks.push(factor_pi(self.q(m), self.nuisance_visibility(m, kind)));
        kron_all(&blocks)
    }

    /// The modality's Pi lifted to the joint space Z x U_image x U_text (index
    /// `(z * |U_i| + u_i) * |U_t| + u_t`), where the other modality's nuisance is drawn
    /// independently on both sides: image `Pi (x) q_t q_t^T`, text likewise with q_i.
    /// Both modalities' kernels live on this one space, so the theorem's sin-theta and
    /// bounds compare them directly.
    ///
    /// # Shapes
    /// -> `[|Z| |U_i| |U_t|, same]`
    pub fn pi_joint(&self, m: Modality, kind: ViewKind) -> Matrix {
        let vis = self.visibility(m);
        let v_u = self.nuisance_visibility(m, kind);
        let (vi, vt) = match m {
            Modality::Image => (v_u, 0.0),
            Modality::Text => (0.0, v_u),
        };
        let mut blocks: Vec<Matrix> = (0..4)
            .map(|f| factor_pi(&self.factor_probs[f], vis.factors[f]))
            .collect();
        blocks.push(factor_pi(self.q(Modality::Image), vi));
        blocks.push(factor_pi(self.q(Modality::Text), vt));
        kron_all(&blocks)
    }

    /// Draws z ~ p(z).
    pub fn sample_state(&self, rng: &mut impl Rng) -> State {
        let mut z = [0; 4];
        for (f, zf) in z.iter_mut().enumerate() {
            *zf = draw(&self.factor_probs[f], rng);
        }
        z
    }

    /// Draws u ~ q_m.
    pub fn sample_nuisance(&self, m: Modality, rng: &mut impl Rng) -> usize {
        draw(self.q(m), rng)
    }

    /// One corruption of the rendering (z, u, style): each factor kept w.p. v_i.
    fn corrupt(
        &self,
        m: Modality,
        z: State,
        u: usize,
        style_seed: u64,
        rng: &mut impl Rng,
    ) -> SceneView {
        let vis = self.visibility(m);
        let visible = vis.factors.map(|v| rng.random::<f64>() < v);
        let nuisance_visible = rng.random::<f64>() < vis.nuisance;
        SceneView {
            state: z,
            visible,
            nuisance: u,
            nuisance_visible,
            style_seed,
        }
    }

    /// One positive pair of views (paper §3): good = corruptions of two renderings of one
    /// z (independent u); bad = two corruptions of one rendering (shared z and u). Each
    /// view draws its own unmodelled style (jitter, lighting, noise, synonyms).
    pub fn sample_pair(
        &self,
        m: Modality,
        kind: ViewKind,
        rng: &mut impl Rng,
    ) -> (SceneView, SceneView) {
        let v = self.sample_views(m, kind, 2, rng);
        // Invariant: sample_views(.., 2, ..) returns exactly 2 views.
        (v[0], v[1])
    }

    /// `n` views of one state z ~ p: good views are corruptions of `n` independent
    /// renderings (own u and style each), bad views are `n` corruptions of one rendering.
    /// Every pair among them is distributed as [`Self::pi`] describes.
    pub fn sample_views(
        &self,
        m: Modality,
        kind: ViewKind,
        n: usize,
        rng: &mut impl Rng,
    ) -> Vec<SceneView> {
        let z = self.sample_state(rng);
        let u = self.sample_nuisance(m, rng);
        let style: u64 = rng.random();
        (0..n)
            .map(|i| {
                // The unmodelled per-rendering randomness (jitter, lighting, pixel noise,
                // synonyms) is drawn afresh for every view of either kind: shared by bad
                // views it would be nuisance outside the model (lighting alone, always
                // visible, sits at eigenvalue 1 above the modelled background's v_u), and
                // the pairs would no longer be distributed as `pi` says.
                let (u, style) = match (kind, i) {
                    (_, 0) => (u, style),
                    (ViewKind::Good, _) => (self.sample_nuisance(m, rng), rng.random()),
                    _ => (u, rng.random()),
                };
                self.corrupt(m, z, u, style, rng)
            })
            .collect()
    }

    /// A draw from the posterior of the augmented state given a view: visible factors
    /// (and nuisance) are kept, hidden ones are redrawn from their prior. Returns the
    /// augmented index. This is the map under which view pairs become the exact Pi.
    pub fn posterior_sample(&self, m: Modality, view: &SceneView, rng: &mut impl Rng) -> usize {
        let mut z = view.state;
        for (f, zf) in z.iter_mut().enumerate() {
            if !view.visible[f] {
                *zf = draw(&self.factor_probs[f], rng);
            }
        }
        let u = if view.nuisance_visible {
            view.nuisance
        } else {
            draw(self.q(m), rng)
        };
        self.state_index(&z) * self.q(m).len() + u
    }
}

/// Kronecker product of a list of square matrices, first factor slowest.
fn kron_all(blocks: &[Matrix]) -> Matrix {
    let dims: Vec<usize> = blocks.iter().map(|b| b.nrows()).collect();
    let n: usize = dims.iter().product();
    let split = |mut i: usize| {
        let mut idx = vec![0; dims.len()];
        for k in (0..dims.len()).rev() {
            idx[k] = i % dims[k];
            i /= dims[k];
        }
        idx
    };
    let digits: Vec<Vec<usize>> = (0..n).map(split).collect();
    Mat::from_fn(n, n, |a, b| {
        blocks
            .iter()
            .enumerate()
            .map(|(k, m)| m[(digits[a][k], digits[b][k])])
            .product()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::sym_eigen;

    fn tiny() -> SceneWorld {
        let mut c = SceneConfig::quick(7);
        c.cardinality = [2, 2, 2, 2];
        c.nuisance = [2, 3];
        SceneWorld::new(c).unwrap()
    }

    fn kernel(pi: &Matrix) -> (Matrix, Vec<f64>) {
        let n = pi.nrows();
        let p: Vec<f64> = (0..n).map(|i| (0..n).map(|j| pi[(i, j)]).sum()).collect();
        (
            Mat::from_fn(n, n, |i, j| pi[(i, j)] / (p[i] * p[j]).sqrt()),
            p,
        )
    }

    #[test]
    fn state_index_round_trips() {
        let w = SceneWorld::new(SceneConfig::demo(1)).unwrap();
        assert_eq!(w.n_states(), 192);
        for i in 0..w.n_states() {
            assert_eq!(w.state_index(&w.state(i)), i);
        }
    }

    #[test]
    fn pi_is_a_joint_with_marginal_p() {
        let w = SceneWorld::new(SceneConfig::quick(3)).unwrap();
        for m in [Modality::Image, Modality::Text] {
            let p = w.p_augmented(m);
            for kind in [ViewKind::Good, ViewKind::Bad] {
                let pi = w.pi(m, kind);
                let n = pi.nrows();
                assert_eq!(n, p.len());
                let total: f64 = (0..n)
                    .flat_map(|i| (0..n).map(move |j| (i, j)))
                    .map(|(i, j)| pi[(i, j)])
                    .sum();
                assert!((total - 1.0).abs() < 1e-12, "sum {total}");
                for i in 0..n {
                    let row: f64 = (0..n).map(|j| pi[(i, j)]).sum();
                    assert!((row - p[i]).abs() < 1e-14);
                    for j in 0..n {
                        assert!(pi[(i, j)] >= 0.0 && (pi[(i, j)] - pi[(j, i)]).abs() < 1e-16);
                    }
                }
            }
        }
    }

    /// Closed form: K = (x)_f (v_f I + (1 - v_f) sqrt(p_f) sqrt(p_f)^T), so its eigenvalues
    /// are prod_{f in S} v_f over subsets S of factors, each with multiplicity
    /// prod_{f in S} (n_f - 1); good views have v_u = 0.
    #[test]
    fn kernel_spectrum_is_the_product_closed_form() {
        let w = tiny();
        for m in [Modality::Image, Modality::Text] {
            let vis = w.visibility(m);
            for kind in [ViewKind::Good, ViewKind::Bad] {
                let v_u = if kind == ViewKind::Good {
                    0.0
                } else {
                    vis.nuisance
                };
                let mut vs: Vec<(f64, usize)> = (0..4)
                    .map(|f| (vis.factors[f], w.config.cardinality[f]))
                    .collect();
                vs.push((v_u, w.q(m).len()));
                let mut expected = vec![1.0];
                for &(v, n) in &vs {
                    let mut next = Vec::new();
                    for &e in &expected {
                        next.push(e);
                        next.extend(std::iter::repeat_n(e * v, n - 1));
                    }
                    expected = next;
                }
                expected.sort_by(|a, b| b.total_cmp(a));
                let (k, _) = kernel(&w.pi(m, kind));
                let got = sym_eigen(k.as_ref()).unwrap().values;
                let err = got
                    .iter()
                    .zip(&expected)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max);
                assert!(err < 1e-12, "{m:?} {kind:?}: max eigenvalue error {err}");
            }
        }
    }

    /// The view sampler, mapped to states by (first view's state, posterior draw from the
    /// second view), reproduces Pi to sampling error: every cell within 5 binomial
    /// standard deviations (plus 1e-4 slack for cells near zero), and a chi-square
    /// statistic near its degrees of freedom.
    #[test]
    fn exported_pi_matches_sampler_frequencies() {
        let w = tiny();
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let trials = 400_000usize;
        for m in [Modality::Image, Modality::Text] {
            for kind in [ViewKind::Good, ViewKind::Bad] {
                let pi = w.pi(m, kind);
                let n = pi.nrows();
                let mut counts = vec![0usize; n * n];
                for _ in 0..trials {
                    let (a, b) = w.sample_pair(m, kind, &mut rng);
                    let s1 = w.state_index(&a.state) * w.q(m).len() + a.nuisance;
                    let s2 = w.posterior_sample(m, &b, &mut rng);
                    counts[s1 * n + s2] += 1;
                }
                let mut chi2 = 0.0;
                let mut cells = 0usize;
                for i in 0..n {
                    for j in 0..n {
                        let e = pi[(i, j)];
                        let f = counts[i * n + j] as f64 / trials as f64;
                        let sd = (e * (1.0 - e) / trials as f64).sqrt();
                        assert!(
                            (f - e).abs() <= 5.0 * sd + 1e-4,
                            "{m:?} {kind:?} cell ({i},{j}): {f} vs {e}"
                        );
                        if e * trials as f64 >= 5.0 {
                            chi2 += (f - e).powi(2) * trials as f64 / e;
                            cells += 1;
                        }
                    }
                }
                // chi2 ~ cells - 1 degrees of freedom: mean dof, sd sqrt(2 dof).
                let dof = cells as f64 - 1.0;
                assert!(
                    chi2 < dof + 6.0 * (2.0 * dof).sqrt(),
                    "{m:?} {kind:?}: chi2 {chi2} over {dof} dof"
                );
            }
        }
    }

    #[test]
    fn bad_views_share_the_modelled_rendering_good_views_do_not_have_to() {
        let w = SceneWorld::new(SceneConfig::demo(2)).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut differ = 0;
        for _ in 0..200 {
            let (a, b) = w.sample_pair(Modality::Image, ViewKind::Bad, &mut rng);
            assert_eq!((a.state, a.nuisance), (b.state, b.nuisance));
            assert_ne!(
                a.style_seed, b.style_seed,
                "the unmodelled style is per view"
            );
            let (a, b) = w.sample_pair(Modality::Text, ViewKind::Good, &mut rng);
            assert_eq!(a.state, b.state);
            differ += usize::from(a.style_seed != b.style_seed);
        }
        assert_eq!(differ, 200);
    }

    /// What the model leaves out is not shared by a bad pair either: the synonym of a
    /// shape noun visible in both bad views agrees about half the time (independent
    /// draws), not always (a shared rendering's synonyms would be a nuisance direction
    /// outside Pi).
    #[test]
    fn bad_views_share_no_unmodelled_nuisance() {
        let w = SceneWorld::new(SceneConfig::demo(0)).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let (mut both, mut same) = (0usize, 0usize);
        while both < 400 {
            let (a, b) = w.sample_pair(Modality::Text, ViewKind::Bad, &mut rng);
            if a.visible[0] && b.visible[0] {
                both += 1;
                const NOUNS: [&str; 8] = [
                    "circle", "disc", "square", "box", "triangle", "wedge", "cross", "plus",
                ];
                let noun = |v: &SceneView| {
                    let c = crate::scene::render_text::caption(v);
                    c.split_whitespace()
                        .find(|w| NOUNS.contains(w))
                        .map(str::to_string)
                };
                same += usize::from(noun(&a) == noun(&b));
            }
        }
        let share = same as f64 / both as f64;
        assert!((share - 0.5).abs() < 0.1, "synonym agreement {share}");
    }

    #[test]
    fn bad_config_is_rejected_with_the_field_named() {
        let mut c = SceneConfig::demo(0);
        c.cardinality[1] = 9;
        let e = SceneWorld::new(c).unwrap_err().to_string();
        assert!(e.contains("colour"), "{e}");
    }
}
