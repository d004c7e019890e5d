//! The spectral lab's numbers (paper §2-3), computed so that moving a slider redoes only
//! what the slider changes.
//!
//! A world's good-view analysis (K and spectrum of modality A) depends on the preset, n and
//! seed only, so it is cached across alpha
//! changes; an alpha change then costs one eigendecomposition (the mixed kernel) plus the
//! comparison (two for two-modality worlds), and `prh_core::theorem::cross_modal_from` pairs
//! the rows of the spectra already at hand instead of recomputing them.

use crate::spectral_lab::{Lab, Settings};
use prh_core::Result;
use prh_core::kernel::Kernel;
use prh_core::pair_graph::{Views, observation_names, pair_matrix};
use prh_core::spectrum::Spectrum;
use prh_core::theorem::{analyse, compare, cross_modal_from};
use prh_core::world::{PresetSpec, World};
use std::cell::RefCell;
use std::sync::Arc;

/// What depends on the world only: the world and its good-view analyses.
pub struct Base {
    /// Preset, n, seed this was built for.
    key: (String, usize, u64),
    /// The world built from the preset.
    pub world: World,
    /// Observation names of modality A.
    pub names: Vec<String>,
    /// K and spectrum of modality A under good views.
    good: (Kernel, Spectrum),
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
    let good = analyse(&pair_matrix(&world, 0, Views::Good)?)?;
    let names = observation_names(&world, 0)?;
    let b = Arc::new(Base {
        key,
        world,
        names,
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
        let pi = pair_matrix(&base.world, 0, views)?;
        let (kernel, spectrum) = analyse(&pi)?;
        let (k_good, s_good) = &base.good;
        let bounds = compare(k_good, s_good, &kernel, &spectrum, s.d, s.skip_trivial)?;
        // Two modalities when the world has them (scenes: image, text); otherwise the same
        // modality twice, once per kind of views.
        let cross = if base.world.modalities.len() > 1 {
            let (_, s_b) = analyse(&pair_matrix(&base.world, 1, views)?)?;
            cross_modal_from(
                &base.world,
                (0, Views::Good, s_good),
                (1, views, &s_b),
                s.d,
                s.skip_trivial,
            )?
        } else {
            cross_modal_from(
                &base.world,
                (0, Views::Good, s_good),
                (0, views, &spectrum),
                s.d,
                s.skip_trivial,
            )?
        };
        Ok(Lab {
            settings: s.clone(),
            world: base.world.clone(),
            names: base.names.clone(),
            pi,
            kernel,
            spectrum,
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
