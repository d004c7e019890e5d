//! The spectral lab's numbers (paper §2-3), computed so that moving a slider redoes only
//! what the slider changes.
//!
//! Every view kind's Pi is a Kronecker product A ⊗ B (states x nuisances), so K = K_W ⊗
//! K_B and its spectrum is the products of the factors' (`prh_core::view_spectrum`, same
//! numbers as a full decomposition: tests there). The world's K_W spectrum and good-view
//! analysis depend on the preset, n and seed only and are cached across alpha changes; an
//! alpha change then decomposes a k x k nuisance kernel and writes the n k product
//! eigenvectors (O((n k)^2), no O((n k)^3) step): ||K_mix - K_good||_op factorises too, and
//! `prh_core::theorem::cross_modal_from` pairs the rows of the spectra already at hand.

use crate::spectral_lab::{Lab, Settings};
use prh_core::Result;
use prh_core::pair_graph::{Views, observation_names};
use prh_core::spectrum::Spectrum;
use prh_core::theorem::cross_modal_from;
use prh_core::view_spectrum::{
    ViewAnalysis, analyse_views, compare_views_factored, state_spectrum,
};
use prh_core::world::{PresetSpec, World};
use std::cell::RefCell;
use std::sync::Arc;

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
    let good = analyse_views(&world, 0, Views::Good, &states)?;
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
        if !DECIDED.with(|d| d.replace(true)) && crate::url_state::get("simd", 0_u8) != 0 {
            faer::traits::pulp::wasm::enable_simd128();
        }
    }
}

/// Every figure's numbers for one [`Settings`], with the milliseconds they took.
pub fn compute(s: &Settings) -> std::result::Result<Lab, String> {
    enable_simd();
    let t0 = crate::now_ms();
    let lab = (|| -> Result<Lab> {
        let base = base(s)?;
        let views = Views::Mix { alpha: s.alpha };
        let mix = analyse_views(&base.world, 0, views, &base.states)?;
        let bounds = compare_views_factored(&base.states, &base.good, &mix, s.d, s.skip_trivial)?;
        let good = (0, Views::Good, &base.good.spectrum);
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
        })
    })()
    .map_err(|e| e.to_string())?;
    Ok(Lab {
        ms: crate::now_ms() - t0,
        ..lab
    })
}
