//! Caption lab (issue 23, the paper's showcase): a picture of the scene world goes
//! through the image encoder, one map fitted on N paired states, and a decoder trained on
//! captions only. Compose a scene (or pick a held-out picture), see the picture and the
//! caption, and drag N down to watch the caption break when too few pairs fix the
//! rotation. The numbers are in [`compute`], the same core code as `prh-native caption`.
//!
//! URL keys: `cap` (`symbols` | `pictures`: which shipped captioner), `pic` (a held-out
//! picture's index, or absent for a composed scene), `scene` (shape, colour, size,
//! position, background as five digits), `n` (pairs) and `map` (`rotation` | `linear`).

mod compute;

use crate::figures::draw::context;
use crate::widgets::files::{fetch_asset, picked_file};
use crate::widgets::url_state;
use compute::{Captioned, Captioner, load};
use leptos::prelude::*;
use prh_core::experiments::captioner::MapKind;
use prh_core::scene::{FACTORS, SceneView, VALUE_NAMES};
use std::sync::Arc;
use wasm_bindgen::Clamped;

/// The shipped captioners: (key, asset, label).
const SHIPPED: [(&str, &str, &str); 2] = [
    (
        "symbols",
        "assets/demo_captioner_symbols.safetensors",
        "encoders of symbols (they reach the theorem's prediction)",
    ),
    (
        "pictures",
        "assets/demo_captioner_pictures.safetensors",
        "encoders of 32x32 pictures (they reach the prediction with the spectral loss)",
    ),
];

/// The lab's state.
#[derive(Clone, Copy)]
struct State {
    captioner: RwSignal<Option<Result<Arc<Captioner>, String>>>,
    /// A held-out picture (index into the bundle's test views), or a composed scene.
    pic: RwSignal<Option<usize>>,
    /// The composed scene: shape, colour, size, position, background.
    scene: RwSignal<[usize; 5]>,
    n: RwSignal<usize>,
    map: RwSignal<MapKind>,
    which: RwSignal<Option<&'static str>>,
}

impl State {
    fn from_url() -> State {
        let scene = url_state::get("scene", "00000".to_string());
        let digits: Vec<usize> = scene
            .chars()
            .filter_map(|c| c.to_digit(10).map(|d| d as usize))
            .collect();
        let mut s = [0usize; 5];
        for (k, d) in digits.into_iter().take(5).enumerate() {
            s[k] = d;
        }
        let pic = url_state::get("pic", String::new()).parse().ok();
        let map = MapKind::parse(&url_state::get("map", "rotation".to_string()))
            .unwrap_or(MapKind::Rotation);
        State {
            captioner: RwSignal::new(None),
            pic: RwSignal::new(pic),
            scene: RwSignal::new(s),
            n: RwSignal::new(url_state::get("n", 16_usize)),
            map: RwSignal::new(map),
            which: RwSignal::new(None),
        }
    }

    fn sync_url(self) {
        Effect::new(move |_| {
            let s = self.scene.get();
            url_state::update(&[
                ("cap", self.which.get().map(str::to_string)),
                ("pic", self.pic.get().map(|p| p.to_string())),
                (
                    "scene",
                    self.pic
                        .get()
                        .is_none()
                        .then(|| s.iter().map(|d| d.to_string()).collect()),
                ),
                ("n", Some(self.n.get().to_string())),
                ("map", Some(self.map.get().name().to_string())),
            ])
        });
    }

    fn load_shipped(self, key: &'static str) {
        let Some((_, asset, _)) = SHIPPED.iter().find(|s| s.0 == key) else {
            return;
        };
        self.which.set(Some(key));
        leptos::task::spawn_local(async move {
            let r = fetch_asset(asset).await.and_then(|b| load(asset, &b));
            self.set(r);
        });
    }

    fn set(self, r: Result<Captioner, String>) {
        if let Ok(c) = &r {
            self.n.update(|n| *n = (*n).clamp(1, c.pool()));
            if self
                .pic
                .get_untracked()
                .is_some_and(|p| p >= c.bundle.test_views.len())
            {
                self.pic.set(None);
            }
        }
        self.captioner.set(Some(r.map(Arc::new)));
    }

    /// The view to caption: a held-out picture as the CLI rendered it, or the composed
    /// scene (style seed 0).
    fn view(self, c: &Captioner) -> SceneView {
        match self.pic.get() {
            Some(p) => {
                let (state, bg, seed) = c.bundle.test_views[p];
                SceneView::full(state, bg, seed)
            }
            None => {
                let s = self.scene.get();
                let card = c.world.config.cardinality;
                let z = [0, 1, 2, 3].map(|f| s[f].min(card[f] - 1));
                SceneView::full(z, s[4].min(c.world.config.nuisance[0] - 1), 0)
            }
        }
    }
}

/// The caption lab.
#[component]
pub fn CaptionLab() -> impl IntoView {
    let st = State::from_url();
    st.sync_url();
    let first = match url_state::get("cap", "symbols".to_string()).as_str() {
        "pictures" => "pictures",
        _ => "symbols",
    };
    st.load_shipped(first);
    let on_pick = move |ev: web_sys::Event| {
        leptos::task::spawn_local(async move {
            if let Some(r) = picked_file(ev).await {
                st.which.set(None);
                st.set(r.and_then(|(name, b)| load(&name, &b)));
            }
        });
    };
    view! {
        <div class="controls">
            {SHIPPED.iter().map(|&(key, _, label)| view! {
                <button id=format!("load-captioner-{key}") class:active=move || st.which.get() == Some(key)
                    on:click=move |_| st.load_shipped(key)>{format!("Load the captioner of {label}")}</button>
            }).collect_view()}
            <label>"or an export (prh-native caption --export) "<input type="file" id="file-captioner" accept=".safetensors" on:change=on_pick /></label>
        </div>
        {move || match st.captioner.get() {
            None => view! { <p class="status">"loading the captioner…"</p> }.into_any(),
            Some(Err(e)) => view! { <pre class="error" id="error-captioner">{e}</pre> }.into_any(),
            Some(Ok(c)) => view! { <Lab st=st c=c /> }.into_any(),
        }}
    }
}

/// The controls, the picture and the caption of a loaded captioner.
#[component]
fn Lab(st: State, c: Arc<Captioner>) -> impl IntoView {
    let pool = c.pool();
    let c2 = c.clone();
    let result = Memo::new(move |_| {
        let view = st.view(&c2);
        c2.caption(&view, st.map.get(), st.n.get())
            .map(|r| (view, r))
    });
    let tests = c.bundle.test_views.len();
    view! {
        <p class="status" id="captioner-info">{format!(
            "loaded {}: image encoder of {} observations, d = {}, fit pool {} states, {} held-out pictures, beam {}",
            c.name, c.observation, c.bundle.dim, pool, tests, c.bundle.beam
        )}</p>
        <SceneControls st=st c=c.clone() />
        <FitControls st=st pool=pool />
        <div class="grid">
            <div class="card">
                <h2>"The picture"</h2>
                <Picture result=result />
                <p class="explain">{if c.observation == "symbolic" {
                    "This image encoder reads the picture's one-hot code (which shape, colour, size, position and background it shows: what a perfect feature learner would extract), not its pixels; it was trained on image views alone, and no caption ever reached it."
                } else {
                    "The image encoder sees this picture (its own jitter and lighting) and nothing else; no caption ever reached it."
                }}</p>
            </div>
            <div class="card">
                <h2>"The caption"</h2>
                {move || match result.get() {
                    Err(e) => view! { <pre class="error" id="error-caption">{e}</pre> }.into_any(),
                    Ok((v, r)) => view! { <CaptionCard view=v r=r n=st.n.get() map=st.map.get() d=c.bundle.dim /> }.into_any(),
                }}
            </div>
        </div>
    }
}

/// What to caption: one select per scene factor and background, or a held-out picture.
#[component]
fn SceneControls(st: State, c: Arc<Captioner>) -> impl IntoView {
    let card = c.world.config.cardinality;
    let backgrounds = c.world.config.nuisance[0];
    let selects = (0..5)
        .map(|k| {
            let (name, count) = if k < 4 {
                (FACTORS[k], card[k])
            } else {
                ("background", backgrounds)
            };
            view! {
                <label>{name}" "
                    <select id=format!("scene-{name}") on:change=move |ev| {
                        let v: usize = event_target_value(&ev).parse().unwrap_or(0);
                        st.scene.update(|s| s[k] = v);
                        st.pic.set(None);
                    }>
                        {(0..count).map(|v| {
                            let label = if k < 4 { VALUE_NAMES[k][v].to_string() } else { format!("background {v}") };
                            view! { <option value=v.to_string() selected=move || st.scene.get()[k] == v>{label}</option> }
                        }).collect_view()}
                    </select>
                </label>
            }
        })
        .collect_view();
    view! {
        <div class="controls">
            {selects}
            <label>"or a held-out picture "
                <select id="pic" on:change=move |ev| st.pic.set(event_target_value(&ev).parse().ok())>
                    <option value="" selected=move || st.pic.get().is_none()>"(the scene composed)"</option>
                    {(0..c.bundle.test_views.len()).map(|i| {
                        let (z, bg, _) = c.bundle.test_views[i];
                        let label = format!("{}: {}, background {bg}", i, (0..4).map(|f| VALUE_NAMES[f][z[f]]).collect::<Vec<_>>().join(" "));
                        view! { <option value=i.to_string() selected=move || st.pic.get() == Some(i)>{label}</option> }
                    }).collect_view()}
                </select>
            </label>
        </div>
    }
}

/// How the map is fitted: the number of pairs N (at most `pool`) and the map's kind.
#[component]
fn FitControls(st: State, pool: usize) -> impl IntoView {
    view! {
        <div class="controls">
            <label>"pairs N the map is fitted on: "<b id="n-value">{move || st.n.get()}</b>" "
                <input type="range" id="n" min="1" max=pool.to_string() prop:value=move || st.n.get().to_string()
                    on:input=move |ev| st.n.set(event_target_value(&ev).parse().unwrap_or(1)) />
            </label>
            <label>"map "
                <select id="map" on:change=move |ev| st.map.set(MapKind::parse(&event_target_value(&ev)).unwrap_or(MapKind::Rotation))>
                    {[MapKind::Rotation, MapKind::Linear, MapKind::PairFree].into_iter().map(|m| view! {
                        <option value=m.name() selected=move || st.map.get() == m>{m.name()}</option>
                    }).collect_view()}
                </select>
            </label>
        </div>
    }
}

/// The picture, scaled up on a canvas.
#[component]
fn Picture(result: Memo<Result<(SceneView, Captioned), String>>) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    Effect::new(move |_| {
        let (Some(cv), Ok((_, r))) = (canvas.get(), result.get()) else {
            return;
        };
        let Some(ctx) = context(&cv) else { return };
        let px: Vec<u8> = r
            .rgb
            .chunks(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect();
        if let Ok(img) = web_sys::ImageData::new_with_u8_clamped_array_and_sh(Clamped(&px), 32, 32)
        {
            let _ = ctx.put_image_data(&img, 0.0, 0.0);
        }
    });
    view! { <canvas id="picture" node_ref=canvas width="32" height="32" style="width:192px;height:192px;image-rendering:pixelated"></canvas> }
}

/// The caption and which attributes it got right.
#[component]
fn CaptionCard(view: SceneView, r: Captioned, n: usize, map: MapKind, d: usize) -> impl IntoView {
    let rows = (0..4)
        .map(|f| {
            let truth = VALUE_NAMES[f][view.state[f]];
            let said = r.parsed[f].map_or("(not said)".to_string(), |v| VALUE_NAMES[f].get(v).copied().unwrap_or("?").to_string());
            let ok = r.parsed[f] == Some(view.state[f]);
            view! { <tr class:ok=ok class:wrong=!ok><td>{FACTORS[f]}</td><td>{truth}</td><td>{said}</td><td>{if ok { "right" } else { "wrong" }}</td></tr> }
        })
        .collect_view();
    let all = (0..4).all(|f| r.parsed[f] == Some(view.state[f]));
    let hint = if map == MapKind::Rotation && n < d {
        format!(
            "With N = {n} < d = {d} pairs the rotation is not determined: its d(d-1)/2 = {} parameters need about d pairs.",
            d * (d - 1) / 2
        )
    } else {
        String::new()
    };
    view! {
        <p class="caption" id="caption-text" style="font-size:1.3em">{format!("\u{201c}{}\u{201d}", r.caption)}</p>
        <table class="table" id="caption-attributes"><tr><th>"factor"</th><th>"true"</th><th>"caption says"</th><th></th></tr>{rows}</table>
        <p class="status" id="caption-verdict">{if all { "all four attributes right" } else { "some attributes wrong" }}</p>
        <p class="explain">{hint}</p>
    }
}
