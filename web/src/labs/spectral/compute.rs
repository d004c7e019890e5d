//! The spectral lab's numbers (paper §2-3), computed so that moving a slider redoes only
//! what the slider changes.
//!
//! Every view kind's Pi is a Kronecker product A ⊗ B (states x nuisances), so K = K_W ⊗
//! K_B and its spectrum is the products of the factors' (`prh_core::theory::view_spectrum`, same
//! numbers as a full decomposition: tests there). The world's K_W spectrum and good-view
//! analysis depend on the preset, n and seed only and are cached across alpha changes; an
//! alpha change then decomposes a k x k nuisance kernel and writes the n k product
//! eigenvectors (O((n k)^2), no O((n k)^3) step): ||K_mix - K_good||_op factorises too, and
//! `prh_core::theory::theorem::cross_modal_from` pairs the rows of the spectra already at hand.

use super::settings::Settings;
use prh_core::Result;
use prh_core::linalg::{self, Matrix};
use prh_core::rng::{Stream, generator, standard_normal};
use prh_core::theory::kernel::Kernel;
use prh_core::theory::pair_graph::{Pairing, observation_names};
use prh_core::theory::spectrum::Spectrum;
use prh_core::theory::theorem::{CrossModal, SubspaceComparison, cross_modal_from};
use prh_core::theory::view_spectrum::{
    ViewAnalysis, analyse_views, compare_views_factored, state_spectrum,
};
use prh_core::theory::world::{PresetSpec, World, grid_shape};
use std::cell::RefCell;
use std::sync::Arc;

/// Everything the figures show, computed from one [`Settings`].
pub struct Lab {
    /// The inputs these numbers belong to.
    pub settings: Settings,
    /// The world built from the preset.
    pub world: World,
    /// Observation names `state|nuisance` of modality A.
    pub names: Vec<String>,
    /// Pi over modality A's observations under the mixture views.
    pub pi: Matrix,
    /// K and p for that Pi.
    pub kernel: Kernel,
    /// Its spectrum (decreasing, trivial pair first).
    pub spectrum: Spectrum,
    /// sin Theta between the good-view and the alpha-view top-d subspaces, with bounds.
    pub bounds: SubspaceComparison,
    /// Modality A under good views vs modality B (or A again) under the alpha views.
    pub cross: CrossModal,
    /// Milliseconds all of the above took in this browser.
    pub ms: f64,
    /// What was adjusted to make the settings computable (d above the number of
    /// eigenvectors, n rounded to a grid), one sentence each.
    pub notes: Vec<String>,
}

/// What depends on the world only: the world, its state spectrum and good-view analysis.
pub struct Base {
    /// Preset, n, seed this was built for.
    key: (String, usize, u64),
    /// The world built from the preset.
    pub world: World,
    /// Observation names of modality A.
    pub names: Vec<String>,
    /// Spectrum of K_W, the state factor of every view kind the lab shows.
    states: Spectrum,
    /// Modality A under good views.
    good: ViewAnalysis,
}

thread_local! {
    /// The last world's [`Base`] (the page computes on one thread).
    static BASE: RefCell<Option<Arc<Base>>> = const { RefCell::new(None) };
}

/// The good-view analysis of the settings' world, from the cache when the world is the same.
fn base(s: &Settings) -> Result<Arc<Base>> {
    let key = (s.preset.name().to_string(), s.n, s.seed);
    if let Some(b) = BASE.with(|c| c.borrow().clone()).filter(|b| b.key == key) {
        return Ok(b);
    }
    let world = World::preset(&PresetSpec {
        preset: s.preset,
        n: s.n,
        seed: s.seed,
        ..PresetSpec::default()
    })?;
    let states = state_spectrum(&world)?;
    let good = analyse_views(&world, 0, Pairing::Good, &states)?;
    let names = observation_names(&world, 0)?;
    let b = Arc::new(Base {
        key,
        world,
        names,
        states,
        good,
    });
    BASE.with(|c| *c.borrow_mut() = Some(b.clone()));
    Ok(b)
}

/// Switches on faer's wasm SIMD kernels when the URL asks for it (`?simd=1`). faer's SIMD
/// layer (pulp) compiles its `simd128` code paths into the module in any case, behind
/// `#[target_feature(enable = "simd128")]`, and takes them at run time only when this flag
/// is set (wasm has no CPU-feature detection). Off by default: in headless Chromium it gave
/// no consistent gain (docs/benchmarks.md, Browser: 100 observations 2.4x faster on load,
/// 400 and 1,000 within the noise or slower, f64 lanes being only two wide). Results differ
/// from the scalar path by round-off only (summation order; simd128 has no fused
/// multiply-add).
fn enable_simd() {
    #[cfg(target_arch = "wasm32")]
    {
        thread_local! {
            static DECIDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        }
        // Read the URL once: the lab rewrites the query string after the first compute.
        if !DECIDED.with(|d| d.replace(true)) && crate::widgets::url_state::get("simd", 0_u8) != 0 {
            faer::traits::pulp::wasm::enable_simd128();
        }
    }
}

/// A seeded random orthogonal `[d, d]` matrix: the orthogonal polar factor U V^T of a
/// matrix G of standard normals (G = U S V^T), which is Haar-distributed. Stream `Init`
/// of `prh_core::rng`, step = modality: the basis an encoder's initialisation and
/// training would land in, different per modality and fixed by the world's seed.
///
/// # Shapes
/// -> `[d, d]`
pub fn random_basis(seed: u64, modality: u64, d: usize) -> Result<Matrix> {
    let mut rng = generator(seed, Stream::Init, modality);
    let g = Matrix::from_fn(d, d, |_, _| standard_normal(&mut rng));
    let s = linalg::svd(g.as_ref())?;
    Ok(&s.u * s.v.transpose())
}

/// Shows each modality in its own random basis: F_a -> F_a R_a, F_b -> F_b R_b. The
/// eigensolver returns both modalities' F in the same basis (Q = I under good views), so
/// without this the rotation card would have nothing to rotate; real encoders are only
/// determined up to such a rotation (the theorem). The fitted rotation follows without a
/// new fit: min over orthogonal Q of ||(F_a R_a Q - F_b R_b)||_w = ||(F_a Q_0 - F_b)||_w at
/// Q = R_a^T Q_0 R_b (R_b is orthogonal), so Q' = R_a^T Q_0 R_b with the same residual.
/// R_b's last column is negated when that makes det Q' = +1: a proper rotation, which
/// the animation from I to Q' can reach continuously (both are random bases either way).
///
/// # Shapes
/// `c.fa, c.fb [rows, d]`, `c.q [d, d]` -> the same shapes
fn in_random_bases(mut c: CrossModal, seed: u64) -> Result<CrossModal> {
    let d = c.q.nrows();
    let ra = random_basis(seed, 0, d)?;
    let mut rb = random_basis(seed, 1, d)?;
    let mut q = ra.transpose() * &c.q * &rb;
    if q.determinant() < 0.0 {
        for i in 0..d {
            rb[(i, d - 1)] = -rb[(i, d - 1)];
            q[(i, d - 1)] = -q[(i, d - 1)];
        }
    }
    c.fa = &c.fa * &ra;
    c.fb = &c.fb * &rb;
    c.q = q;
    Ok(c)
}

/// The settings as computed for `world`, with a sentence for each change: d at most the
/// number of eigenvectors in the window (observations n k of the smaller modality, less
/// the trivial one when skipped), and, for the grid worlds, the state count the world
/// has (n rounded to a product of three attribute sizes, `prh_core::theory::world::grid_shape`).
fn adjusted(s: &Settings, world: &World) -> (Settings, Vec<String>) {
    let mut notes = Vec::new();
    let mut out = s.clone();
    let states = world.n();
    if states != s.n {
        let [a, b, c] = grid_shape(s.n);
        notes.push(format!(
            "n = {} is rounded to {a} × {b} × {c} = {states} states: a {} world is every combination of three attributes.",
            s.n,
            s.preset.name()
        ));
    }
    let (m, k) = world
        .modalities
        .iter()
        .map(|m| (m.name.as_str(), m.q.len()))
        .min_by_key(|&(_, k)| k)
        .unwrap_or(("obs", 1));
    let observations = states * k;
    let available = observations - usize::from(s.skip_trivial);
    if s.d > available {
        out.d = available;
        notes.push(format!(
            "d = {} is more than the {available} eigenvectors available: {states} states × {k} nuisances = {observations} observations{}{}, so d = {available} is shown.",
            s.d,
            if world.modalities.len() > 1 { format!(" of {m}, the smaller modality") } else { String::new() },
            if s.skip_trivial { ", less the trivial one" } else { "" },
        ));
    }
    (out, notes)
}

/// Every figure's numbers for one [`Settings`], with the milliseconds they took.
pub fn compute(s: &Settings) -> std::result::Result<Lab, String> {
    enable_simd();
    let t0 = crate::widgets::clock::now_ms();
    let lab = (|| -> Result<Lab> {
        let base = base(s)?;
        let (s, notes) = &adjusted(s, &base.world);
        let views = Pairing::Mix { alpha: s.alpha };
        let mix = analyse_views(&base.world, 0, views, &base.states)?;
        let bounds = compare_views_factored(&base.states, &base.good, &mix, s.d, s.skip_trivial)?;
        let good = (0, Pairing::Good, &base.good.spectrum);
        // Two modalities when the world has them (scenes: image, text); otherwise the same
        // modality twice, once per kind of views.
        let cross = if base.world.modalities.len() > 1 {
            let b = analyse_views(&base.world, 1, views, &base.states)?;
            cross_modal_from(
                &base.world,
                good,
                (1, views, &b.spectrum),
                s.d,
                s.skip_trivial,
            )?
        } else {
            cross_modal_from(
                &base.world,
                good,
                (0, views, &mix.spectrum),
                s.d,
                s.skip_trivial,
            )?
        };
        let cross = in_random_bases(cross, s.seed)?;
        Ok(Lab {
            settings: s.clone(),
            world: base.world.clone(),
            names: base.names.clone(),
            pi: mix.pi,
            kernel: mix.kernel,
            spectrum: mix.spectrum,
            bounds,
            cross,
            ms: 0.0,
            notes: notes.clone(),
        })
    })()
    .map_err(|e| e.to_string())?;
    Ok(Lab {
        ms: crate::widgets::clock::now_ms() - t0,
        ..lab
    })
}
