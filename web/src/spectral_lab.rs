//! Spectral lab (teaching, paper §2-3): pick a world, slide from good views to bad views,
//! and watch Pi, the kernel K = D^-1/2 Pi D^-1/2, its spectrum, the optimal
//! representations of two modalities and the rotation between them.
//!
//! All numbers come from `prh_core::{theory::world, theory::pair_graph, theory::kernel, theory::spectrum, theory::theorem}`, the
//! code behind `prh-native spectral`, computed in [`crate::spectral_compute`] (which caches
//! the world's state spectrum and good-view analysis across slider moves). The figures are in
//! [`crate::spectral_figures`].

use crate::spectral_compute::compute;
use crate::spectral_figures::{BoundCard, EigenvectorCard, MatrixCard, RotationCard, SpectrumCard};
use leptos::prelude::*;
use prh_core::linalg::Matrix;
use prh_core::theory::kernel::Kernel;
use prh_core::theory::spectrum::Spectrum;
use prh_core::theory::theorem::{CrossModal, SubspaceComparison};
use prh_core::theory::world::{Preset, World};
use std::sync::Arc;
use wasm_bindgen::JsCast;

/// Largest number of states the controls allow (1,000 observations for the two-nuisance
/// presets): a new world decomposes its n x n state kernel K_W (~0.3 s at 500 states in
/// headless Chromium) and draws n k x n k heatmaps.
const MAX_N: usize = 500;
/// Above this many observations the alpha slider recomputes on release, not while sliding.
/// An alpha change costs no eigendecomposition (`prh_core::theory::view_spectrum`: products of the
/// cached K_W eigenpairs and a k x k nuisance kernel's): 35-50 ms from input to the next
/// frame at 400 observations, 80-85 ms at 1,000 on a lightly loaded machine (the
/// O((n k)^2) products, copies and drawing), too close to the 100 ms an interaction may
/// take to stay under it on a busy one (docs/benchmarks.md, Browser).
const LIVE_LIMIT: usize = 400;

/// The world the lab opens on: a ring, whose positive-pair graph is connected (one
/// eigenvalue 1) for every seed and n.
const DEFAULT_PRESET: Preset = Preset::Ring;

/// The lab's inputs (each one a URL query key).
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// World preset (`preset`).
    pub preset: Preset,
    /// Number of states (`n`).
    pub n: usize,
    /// Seed of p(z), q(u) and cluster sizes (`seed`).
    pub seed: u64,
    /// Share of bad views in modality B's positive pairs (`alpha`): 0 good, 1 bad.
    pub alpha: f64,
    /// Representation dimension (`d`).
    pub d: usize,
    /// Leave the trivial eigenpair (lambda = 1, sqrt p) out of the top d (`skip`).
    pub skip_trivial: bool,
}

/// Reads `key` from the URL; a value that is present but does not parse, or fails
/// `valid`, is replaced by `default` with a note saying so (`what`: the accepted values).
fn url_value<T: std::str::FromStr + ToString>(
    key: &str,
    default: T,
    valid: impl Fn(&T) -> bool,
    what: &str,
    notes: &mut Vec<String>,
) -> T {
    let Some(raw) = crate::url_state::params().and_then(|p| p.get(key)) else {
        return default;
    };
    match raw.parse::<T>() {
        Ok(v) if valid(&v) => v,
        _ => {
            notes.push(format!(
                "{key} = {raw} in the link is not {what}: using {key} = {}.",
                default.to_string()
            ));
            default
        }
    }
}

impl Settings {
    /// The settings in the URL, and a note for each value that was replaced.
    fn from_url() -> (Settings, Vec<String>) {
        let mut notes = Vec::new();
        let preset = match crate::url_state::params().and_then(|p| p.get("preset")) {
            None => DEFAULT_PRESET,
            Some(name) => Preset::parse(&name).unwrap_or_else(|e| {
                notes.push(format!("{e}: using {}.", DEFAULT_PRESET.name()));
                DEFAULT_PRESET
            }),
        };
        let settings = Settings {
            // A connected world by default: `clusters` is disconnected (eigenvalue 1 once
            // per cluster), which contradicts the first thing the spectrum card teaches.
            preset,
            n: url_value(
                "n",
                12_usize,
                |&n| (2..=MAX_N).contains(&n),
                &format!("a number of states from 2 to {MAX_N}"),
                &mut notes,
            ),
            seed: url_value("seed", 0_u64, |_| true, "a whole number >= 0", &mut notes),
            alpha: url_value(
                "alpha",
                0.0_f64,
                |a| (0.0..=1.0).contains(a),
                "a number from 0 to 1",
                &mut notes,
            ),
            d: url_value("d", 2_usize, |&d| d >= 1, "a whole number >= 1", &mut notes),
            skip_trivial: url_value("skip", 1_u8, |&v| v <= 1, "0 or 1", &mut notes) != 0,
        };
        (settings, notes)
    }

    /// The CLI command that prints the same spectrum (shown under the figure).
    pub fn cli(&self) -> String {
        format!(
            "prh-native spectral --world {} --n {} --seed {} --views mix --alpha {} --dim {}{}",
            self.preset.name(),
            self.n,
            self.seed,
            self.alpha,
            self.d,
            if self.skip_trivial {
                " --skip-trivial"
            } else {
                ""
            }
        )
    }
}

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

/// The spectral lab: controls and linked figures.
#[component]
pub fn SpectralLab() -> impl IntoView {
    let (initial, url_notes) = Settings::from_url();
    let settings = RwSignal::new(initial);
    // Notes about values the link gave that were replaced, shown until a control changes.
    let url_notes = RwSignal::new(url_notes);
    let selected = RwSignal::new(
        crate::url_state::params()
            .and_then(|p| p.get("ev"))
            .and_then(|v| v.parse::<usize>().ok()),
    );
    let rot = RwSignal::new(crate::url_state::get("rot", 0.0_f64).clamp(0.0, 1.0));
    let fiedler = RwSignal::new(crate::url_state::get("fiedler", 0_u8) != 0);
    let playing = RwSignal::new(false);
    Effect::new(move |prev: Option<()>| {
        let s = settings.get();
        if prev.is_some() {
            url_notes.set(Vec::new());
        }
        let r = if playing.get() {
            rot.get_untracked()
        } else {
            rot.get()
        };
        crate::url_state::update(&[
            ("preset", Some(s.preset.name().to_string())),
            ("n", Some(s.n.to_string())),
            ("seed", Some(s.seed.to_string())),
            ("alpha", Some(s.alpha.to_string())),
            ("d", Some(s.d.to_string())),
            ("skip", Some(u8::from(s.skip_trivial).to_string())),
            // Not rewritten on every animation frame (Chrome throttles frequent history
            // updates): while playing, t is recorded when the animation stops.
            ("rot", Some(r.to_string())),
            ("fiedler", Some(u8::from(fiedler.get()).to_string())),
            ("ev", selected.get().map(|j| j.to_string())),
        ]);
    });
    let lab = Memo::new_with_compare(
        move |_| compute(&settings.get()).map(Arc::new).map_err(Arc::new),
        crate::recomputed,
    );
    // Observation count decides whether the alpha slider is live.
    let live =
        Memo::new(move |_| lab.with(|l| l.as_ref().map_or(true, |l| l.names.len() <= LIVE_LIMIT)));
    // A number field's change: parse and apply, or, when the field holds no number (a
    // number input reads "" for "1e" or "-"), put the value in use back in the field so
    // it never shows something other than what is computed.
    let set_num = move |get: fn(&Settings) -> String, f: fn(&mut Settings, f64)| {
        move |ev: web_sys::Event| match event_target_value(&ev).trim().parse::<f64>() {
            Ok(v) if v.is_finite() => settings.update(|s| f(s, v)),
            _ => {
                if let Some(input) = ev
                    .target()
                    .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
                {
                    input.set_value(&settings.with_untracked(get));
                }
            }
        }
    };
    let on_alpha = set_num(|s| s.alpha.to_string(), |s, v| s.alpha = v.clamp(0.0, 1.0));
    let on_alpha_live = move |ev: web_sys::Event| {
        if live.get_untracked() {
            on_alpha(ev);
        }
    };
    view! {
        <div class="controls">
            <label>"world "
                <select id="ctl-preset" on:change=move |ev| {
                    if let Ok(p) = Preset::parse(&event_target_value(&ev)) { settings.update(|s| s.preset = p); }
                }>
                    {Preset::ALL.iter().map(|p| view! {
                        <option value=p.name() selected=move || settings.with(|s| s.preset == *p)>{p.name()}</option>
                    }).collect_view()}
                </select>
            </label>
            <label>"states n "<input type="number" id="ctl-n" min="2" max=MAX_N.to_string() prop:value=move || settings.with(|s| s.n.to_string())
                on:change=set_num(|s| s.n.to_string(), |s, v| s.n = (v.max(0.0) as usize).clamp(2, MAX_N)) /></label>
            <label>"seed "<input type="number" id="ctl-seed" min="0" prop:value=move || settings.with(|s| s.seed.to_string())
                on:change=set_num(|s| s.seed.to_string(), |s, v| s.seed = v.max(0.0) as u64) /></label>
            <label>"good views "
                <input type="range" id="ctl-alpha" min="0" max="1" step="0.05" prop:value=move || settings.with(|s| s.alpha.to_string())
                    on:input=on_alpha_live on:change=on_alpha />
                " bad views "<span id="alpha-value">{move || settings.with(|s| format!("α = {:.2}", s.alpha))}</span>
            </label>
            <label>"d "<input type="number" id="ctl-d" min="1" prop:value=move || settings.with(|s| s.d.to_string())
                on:change=set_num(|s| s.d.to_string(), |s, v| s.d = (v.max(0.0) as usize).max(1)) /></label>
            <label><input type="checkbox" id="ctl-skip" prop:checked=move || settings.with(|s| s.skip_trivial)
                on:change=move |ev| settings.update(|s| s.skip_trivial = event_target_checked(&ev)) />"skip trivial pair"</label>
            <label><input type="checkbox" id="ctl-fiedler" prop:checked=move || fiedler.get()
                on:change=move |ev| fiedler.set(event_target_checked(&ev)) />"order heatmaps by Fiedler vector"</label>
        </div>
        {move || {
            let notes: Vec<String> = url_notes
                .get()
                .into_iter()
                .chain(lab.with(|l| l.as_ref().map(|l| l.notes.clone()).unwrap_or_default()))
                .collect();
            (!notes.is_empty()).then(|| view! {
                <p class="status warn" id="settings-note">{notes.join(" ")}</p>
            })
        }}
        {move || match lab.get() {
            Err(e) => view! { <pre class="error" id="error-spectral">{e.to_string()}</pre> }.into_any(),
            Ok(l) => view! {
                <div class="status" id="compute-time" data-ms=l.ms.to_string() data-observations=l.names.len().to_string()>
                    {format!("{} · {} observations (state|nuisance) · computed in {:.1} ms in this browser · same numbers as: {}",
                        l.world.name, l.names.len(), l.ms, l.settings.cli())}
                </div>
                <div class="grid">
                    <SpectrumCard lab=l.clone() selected=selected />
                    <MatrixCard lab=l.clone() which="Pi" fiedler=fiedler />
                    <MatrixCard lab=l.clone() which="K" fiedler=fiedler />
                    <EigenvectorCard lab=l.clone() selected=selected />
                    <RotationCard lab=l.clone() rot=rot selected=selected playing=playing />
                    <BoundCard lab=l.clone() />
                </div>
            }.into_any(),
        }}
    }
}
