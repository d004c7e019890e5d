//! Spectral lab (teaching, paper §2-3): pick a world, slide from good views to bad views,
//! and watch Pi, the kernel K = D^-1/2 Pi D^-1/2, its spectrum, the optimal
//! representations of two modalities and the rotation between them.
//!
//! All numbers come from `prh_core::{theory::world, theory::pair_graph, theory::kernel,
//! theory::spectrum, theory::theorem}`, the code behind `prh-native spectral`, computed in
//! [`compute`] (which caches the world's state spectrum and good-view analysis across
//! slider moves) from the [`settings`]. The figures are one card per file; [`figures`]
//! holds what several cards draw with. `compute` and the cards never import this file.

mod bound_card;
mod compute;
mod convergence_card;
mod eigenvector_card;
mod figures;
mod matrix_card;
mod rotation_card;
mod settings;
mod spectrum_card;

use crate::widgets::controls::restore_value;
use crate::widgets::lang::{Lang, t};
use crate::widgets::url_state;
use bound_card::BoundCard;
use compute::compute;
use convergence_card::ConvergenceCard;
use eigenvector_card::EigenvectorCard;
use leptos::prelude::*;
use matrix_card::MatrixCard;
use prh_core::theory::world::Preset;
use rotation_card::RotationCard;
use settings::MAX_N;
use spectrum_card::SpectrumCard;
use std::sync::Arc;

pub use compute::{Lab, random_basis};
pub use settings::Settings;

/// The lab's numbers for `settings` (what every card draws), for other tabs (the lesson).
pub fn compute_lab(settings: &Settings) -> Result<Lab, String> {
    compute(settings)
}

/// A card of this lab that another tab can show on its own.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Card {
    /// K's spectrum (bars, gap, values).
    Spectrum,
    /// The two modalities' representations and the animated rotation.
    Rotation,
}

/// One card of the lab for fixed settings (the lesson's figures), with the command line
/// that prints the same numbers; its words in `lang` (the lesson's, English by default).
#[component]
pub fn PresetCard(
    settings: Settings,
    card: Card,
    #[prop(optional, into)] lang: Signal<Lang>,
) -> impl IntoView {
    let cli = settings.cli();
    let shared = Shared {
        selected: RwSignal::new(None),
        rot: RwSignal::new(0.0),
        fiedler: RwSignal::new(false),
        playing: RwSignal::new(false),
    };
    match compute(&settings) {
        Err(e) => view! { <pre class="error">{e}</pre> }.into_any(),
        Ok(l) => {
            let l = Arc::new(l);
            let body = match card {
                Card::Spectrum => view! { <SpectrumCard lab=l selected=shared.selected lang=lang /> }.into_any(),
                Card::Rotation => view! {
                    <RotationCard lab=l rot=shared.rot selected=shared.selected playing=shared.playing lang=lang />
                }
                .into_any(),
            };
            view! { {body}<p class="status">{t("same numbers as: ", "같은 숫자를 내는 명령: ").on(lang)}<code>{cli}</code></p> }.into_any()
        }
    }
}

/// Above this many observations the alpha slider recomputes on release, not while sliding.
/// An alpha change costs no eigendecomposition (`prh_core::theory::view_spectrum`: products of the
/// cached K_W eigenpairs and a k x k nuisance kernel's): 35-50 ms from input to the next
/// frame at 400 observations, 80-85 ms at 1,000 on a lightly loaded machine (the
/// O((n k)^2) products, copies and drawing), too close to the 100 ms an interaction may
/// take to stay under it on a busy one (docs/benchmarks.md, Browser).
const LIVE_LIMIT: usize = 400;

/// Change test for memos of computed results: a recomputation always counts as a change
/// (the inputs it depends on did change, and results hold matrices with no cheap equality).
fn recomputed<T>(_: Option<&T>, _: Option<&T>) -> bool {
    true
}

/// The selection and display state the figures share, each one a URL key.
#[derive(Clone, Copy)]
struct Shared {
    /// The clicked eigenvector (`ev`).
    selected: RwSignal<Option<usize>>,
    /// The rotation's t in [0, 1] (`rot`).
    rot: RwSignal<f64>,
    /// Heatmaps in Fiedler order (`fiedler`).
    fiedler: RwSignal<bool>,
    /// Whether the rotation is animating (not in the URL).
    playing: RwSignal<bool>,
}

impl Shared {
    fn from_url() -> Shared {
        Shared {
            selected: RwSignal::new(
                url_state::params()
                    .and_then(|p| p.get("ev"))
                    .and_then(|v| v.parse::<usize>().ok()),
            ),
            rot: RwSignal::new(url_state::get("rot", 0.0_f64).clamp(0.0, 1.0)),
            fiedler: RwSignal::new(url_state::get("fiedler", 0_u8) != 0),
            playing: RwSignal::new(false),
        }
    }
}

/// Writes the settings and the shared state to the URL whenever they change; the first
/// change of the settings also clears the notes about the link's replaced values.
fn sync_url(settings: RwSignal<Settings>, shared: Shared, url_notes: RwSignal<Vec<String>>) {
    let Shared {
        selected,
        rot,
        fiedler,
        playing,
    } = shared;
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
        url_state::update(&[
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
}

/// Computed figures, or the error that stopped them.
type Computed = Memo<Result<Arc<Lab>, Arc<String>>>;

/// The spectral lab: controls and linked figures.
#[component]
pub fn SpectralLab() -> impl IntoView {
    let (initial, url_notes) = Settings::from_url();
    let settings = RwSignal::new(initial);
    // Notes about values the link gave that were replaced, shown until a control changes.
    let url_notes = RwSignal::new(url_notes);
    let shared = Shared::from_url();
    sync_url(settings, shared, url_notes);
    let lab: Computed = Memo::new_with_compare(
        move |_| compute(&settings.get()).map(Arc::new).map_err(Arc::new),
        recomputed,
    );
    // Observation count decides whether the alpha slider is live.
    let live =
        Memo::new(move |_| lab.with(|l| l.as_ref().map_or(true, |l| l.names.len() <= LIVE_LIMIT)));
    view! {
        <Controls settings=settings fiedler=shared.fiedler live=live />
        <Notes url_notes=url_notes lab=lab />
        {move || match lab.get() {
            Err(e) => view! { <pre class="error" id="error-spectral">{e.to_string()}</pre> }.into_any(),
            Ok(l) => view! { <Figures l=l shared=shared /> }.into_any(),
        }}
        <ConvergenceCard />
    }
}

/// A number field's change: parse and apply with `f`, or, when the field holds no number
/// (a number input reads "" for "1e" or "-"), put the value in use (`get`) back in the
/// field so it never shows something other than what is computed.
fn set_num(
    settings: RwSignal<Settings>,
    get: fn(&Settings) -> String,
    f: fn(&mut Settings, f64),
) -> impl Fn(web_sys::Event) + Copy {
    move |ev: web_sys::Event| match event_target_value(&ev).trim().parse::<f64>() {
        Ok(v) if v.is_finite() => settings.update(|s| f(s, v)),
        _ => restore_value(&ev, &settings.with_untracked(get)),
    }
}

/// The control bar: world, n, seed, the alpha slider (live up to [`LIVE_LIMIT`]
/// observations, else on release), d and the two check boxes.
#[component]
fn Controls(
    settings: RwSignal<Settings>,
    fiedler: RwSignal<bool>,
    live: Memo<bool>,
) -> impl IntoView {
    let on_alpha = set_num(
        settings,
        |s| s.alpha.to_string(),
        |s, v| s.alpha = v.clamp(0.0, 1.0),
    );
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
                on:change=set_num(settings, |s| s.n.to_string(), |s, v| s.n = (v.max(0.0) as usize).clamp(2, MAX_N)) /></label>
            <label>"seed "<input type="number" id="ctl-seed" min="0" prop:value=move || settings.with(|s| s.seed.to_string())
                on:change=set_num(settings, |s| s.seed.to_string(), |s, v| s.seed = v.max(0.0) as u64) /></label>
            <label>"good views "
                <input type="range" id="ctl-alpha" min="0" max="1" step="0.05" prop:value=move || settings.with(|s| s.alpha.to_string())
                    on:input=on_alpha_live on:change=on_alpha />
                " bad views "<span id="alpha-value">{move || settings.with(|s| format!("α = {:.2}", s.alpha))}</span>
            </label>
            <label>"d "<input type="number" id="ctl-d" min="1" prop:value=move || settings.with(|s| s.d.to_string())
                on:change=set_num(settings, |s| s.d.to_string(), |s, v| s.d = (v.max(0.0) as usize).max(1)) /></label>
            <label><input type="checkbox" id="ctl-skip" prop:checked=move || settings.with(|s| s.skip_trivial)
                on:change=move |ev| settings.update(|s| s.skip_trivial = event_target_checked(&ev)) />"skip trivial pair"</label>
            <label><input type="checkbox" id="ctl-fiedler" prop:checked=move || fiedler.get()
                on:change=move |ev| fiedler.set(event_target_checked(&ev)) />"order heatmaps by Fiedler vector"</label>
        </div>
    }
}

/// The link's replaced values and the computation's adjustments, in one warning line.
#[component]
fn Notes(url_notes: RwSignal<Vec<String>>, lab: Computed) -> impl IntoView {
    move || {
        let notes: Vec<String> = url_notes
            .get()
            .into_iter()
            .chain(lab.with(|l| l.as_ref().map(|l| l.notes.clone()).unwrap_or_default()))
            .collect();
        (!notes.is_empty()).then(|| {
            view! {
                <p class="status warn" id="settings-note">{notes.join(" ")}</p>
            }
        })
    }
}

/// The timing line and the six cards of one computed [`Lab`].
#[component]
fn Figures(l: Arc<Lab>, shared: Shared) -> impl IntoView {
    let Shared {
        selected,
        rot,
        fiedler,
        playing,
    } = shared;
    view! {
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
    }
}
