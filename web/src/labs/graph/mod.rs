//! Draw a world (teaching, paper §2 on a graph of one's own): add or remove states and
//! positive pairs by clicking, or start from a preset (path, cycle, two cliques, grid, the
//! scenes world), and watch Pi, the degrees p, K = D^-1/2 Pi D^-1/2, its spectrum, the
//! Fiedler vector and Cheeger's bounds follow every edit.
//!
//! The numbers are `prh_core::theory::graph::analyse` (one dense eigendecomposition per
//! edit); the editor exports the drawn graph as a JSON world that `prh-native spectral
//! --world FILE` reads, so a teacher can check any figure on the command line. The view
//! is split in [`canvas`] (the clickable drawing) and [`panels`] (the figures); the lesson
//! embeds the same [`GraphEditor`] with fewer panels.

mod canvas;
mod panels;

use crate::widgets::clock::now_ms;
use crate::widgets::lang::{Lang, t};
use crate::widgets::url_state;
use canvas::GraphCanvas;
use leptos::prelude::*;
use panels::{Figures, PairForm};
use prh_core::theory::graph::{Graph, GraphAnalysis, GraphPreset, analyse};
use std::sync::Arc;

/// Largest number of states a preset may have (the editor stays under ~100 ms per edit
/// up to 200 states; more can be drawn by hand).
pub const MAX_PRESET_N: usize = 200;

/// Which figures an editor shows beside the drawing.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Show {
    /// Pi and p.
    pub pi: bool,
    /// K.
    pub k: bool,
    /// The spectrum (bars, values, the Rayleigh quotient of the picked eigenvector).
    pub spectrum: bool,
    /// Cheeger's bounds and the sweep cut.
    pub cheeger: bool,
    /// Davis–Kahan: how far the edits moved the Fiedler direction from the preset's.
    pub dk: bool,
}

impl Show {
    /// Every figure (the graph tab).
    pub const ALL: Show = Show {
        pi: true,
        k: true,
        spectrum: true,
        cheeger: true,
        dk: true,
    };
}

/// One analysis and the milliseconds it took in this browser.
#[derive(Clone)]
pub struct Computed {
    /// The analysis, or what the theory says is wrong with the graph.
    pub result: Result<Arc<GraphAnalysis>, String>,
    /// Milliseconds `analyse` took.
    pub ms: f64,
}

/// What the editor's parts share: the graph, the picked state and eigenvector, the weight
/// new pairs get, and the computed analysis.
#[derive(Clone, Copy)]
pub struct Editor {
    /// Element ids start with this (several editors can be on one page: the lesson).
    pub prefix: &'static str,
    /// The drawn graph.
    pub graph: RwSignal<Graph>,
    /// The state clicked first when drawing a pair.
    pub picked: RwSignal<Option<usize>>,
    /// The eigenvector the states are coloured by (None: the Fiedler vector).
    pub vector: RwSignal<Option<usize>>,
    /// Weight of a newly drawn pair.
    pub weight: RwSignal<f64>,
    /// Whether clicks erase (states, pairs) instead of drawing.
    pub erase: RwSignal<bool>,
    /// `analyse(graph)`, recomputed on every edit.
    pub computed: Memo<Computed>,
    /// The analysis of the graph as loaded (a preset), which Davis–Kahan compares with.
    pub reference: RwSignal<Option<Arc<GraphAnalysis>>>,
    /// The language of the editor's words (the lesson's; English in the graph tab).
    pub lang: Signal<Lang>,
}

impl Editor {
    /// An editor holding `graph`, its words in `lang`.
    fn new(prefix: &'static str, graph: Graph, lang: Signal<Lang>) -> Editor {
        let graph = RwSignal::new(graph);
        let computed = Memo::new_with_compare(
            move |_| {
                let t0 = now_ms();
                let result = graph.with(analyse).map(Arc::new).map_err(|e| {
                    // Strip the library's "invalid input: " prefix: the page says it plainly.
                    e.to_string()
                        .trim_start_matches("invalid input: ")
                        .to_string()
                });
                Computed {
                    result,
                    ms: now_ms() - t0,
                }
            },
            |_, _| true,
        );
        let reference = RwSignal::new(graph.with_untracked(analyse).ok().map(Arc::new));
        Editor {
            prefix,
            reference,
            graph,
            picked: RwSignal::new(None),
            vector: RwSignal::new(None),
            weight: RwSignal::new(1.0),
            erase: RwSignal::new(false),
            computed,
            lang,
        }
    }

    /// `prefix-name`, an element id.
    pub fn id(&self, name: &str) -> String {
        format!("{}-{name}", self.prefix)
    }

    /// Replaces the graph (a preset) and clears the picks.
    fn load(&self, g: Graph) {
        self.picked.set(None);
        self.vector.set(None);
        self.reference.set(analyse(&g).ok().map(Arc::new));
        self.graph.set(g);
    }
}

/// The graph tab: an editor with every figure, its preset and size in the URL
/// (`gpreset`, `gn`).
#[component]
pub fn GraphLab() -> impl IntoView {
    let preset = GraphPreset::parse(&url_state::get("gpreset", "cycle".to_string()))
        .unwrap_or(GraphPreset::Cycle);
    let n = url_state::get("gn", 6_usize).clamp(2, MAX_PRESET_N);
    view! {
        <p class="status">
            "Draw a world: every state is a dot, every positive pair a line whose width is its weight. "
            "Click empty space to add a state, click two states to join them, switch to erase to remove. "
            "Everything below is recomputed on each edit by the same Rust code as "<code>"prh-native spectral"</code>"."
        </p>
        <GraphEditor prefix="graph" preset=preset n=n show=Show::ALL url=true />
    }
}

/// A preset's name as the editor lists it: the CLI's name in English (`prh-native
/// spectral` reads it), a Korean word in a Korean lesson.
fn preset_label(p: GraphPreset, lang: Lang) -> &'static str {
    match lang {
        Lang::En => p.name(),
        Lang::Ko => match p {
            GraphPreset::Path => "경로",
            GraphPreset::Cycle => "순환",
            GraphPreset::TwoCliques => "두 클리크",
            GraphPreset::Grid => "격자",
            GraphPreset::Scenes => "scenes 세계",
        },
    }
}

/// An editable graph with the figures of `show`. `url`: keep the preset and its size in
/// the URL (the graph tab; the lesson's editors keep theirs in the step). `lang`: the
/// language of its labels, buttons and explanations (the lesson's; English by default).
#[component]
pub fn GraphEditor(
    prefix: &'static str,
    preset: GraphPreset,
    n: usize,
    show: Show,
    #[prop(optional)] url: bool,
    #[prop(optional, into)] lang: Signal<Lang>,
) -> impl IntoView {
    let start = Graph::preset(preset, n).unwrap_or_else(|_| {
        Graph::preset(GraphPreset::Cycle, 6).expect("a 6-cycle is a valid preset")
    });
    let ed = Editor::new(prefix, start, lang);
    let preset_sig = RwSignal::new(preset);
    let n_sig = RwSignal::new(n);
    if url {
        Effect::new(move |_| {
            url_state::update(&[
                ("gpreset", Some(preset_sig.get().name().to_string())),
                ("gn", Some(n_sig.get().to_string())),
            ]);
        });
    }
    let reload = move || {
        if let Ok(g) = Graph::preset(preset_sig.get_untracked(), n_sig.get_untracked()) {
            ed.load(g);
        }
    };
    view! {
        <div class="controls" role="group" aria-label=t("graph presets", "그래프 프리셋").on(lang)>
            <label>{t("preset ", "프리셋 ").on(lang)}
                <select id=ed.id("preset") on:change=move |ev| {
                    if let Ok(p) = GraphPreset::parse(&event_target_value(&ev)) { preset_sig.set(p); reload(); }
                }>
                    {GraphPreset::ALL.iter().map(|p| view! {
                        <option value=p.name() selected=move || preset_sig.get() == *p>{move || preset_label(*p, lang.get())}</option>
                    }).collect_view()}
                </select>
            </label>
            <label>{t("states ", "상태 수 ").on(lang)}
                <input type="number" id=ed.id("n") min="2" max=MAX_PRESET_N.to_string() prop:value=move || n_sig.get().to_string()
                    on:change=move |ev| {
                        if let Ok(v) = event_target_value(&ev).trim().parse::<usize>() { n_sig.set(v.clamp(2, MAX_PRESET_N)); reload(); }
                        else { crate::widgets::controls::restore_value(&ev, &n_sig.get_untracked().to_string()); }
                    } />
            </label>
            <button id=ed.id("reset") on:click=move |_| reload()>{t("reset to preset", "프리셋으로 되돌리기").on(lang)}</button>
            <label><input type="checkbox" id=ed.id("erase") prop:checked=move || ed.erase.get()
                on:change=move |ev| ed.erase.set(event_target_checked(&ev)) />{t("erase mode (click a state or pair to remove it)", "지우기 모드 (상태나 쌍을 클릭하면 지워집니다)").on(lang)}</label>
            <label>{t("weight of new pairs ", "새 쌍의 가중치 ").on(lang)}
                <input type="number" id=ed.id("weight") min="0" step="0.5" prop:value=move || ed.weight.get().to_string()
                    on:change={move |ev| match event_target_value(&ev).trim().parse::<f64>() {
                        Ok(w) if w.is_finite() && w > 0.0 => ed.weight.set(w),
                        _ => crate::widgets::controls::restore_value(&ev, &ed.weight.get_untracked().to_string()),
                    }} />
            </label>
        </div>
        <div class="graph-layout">
            <div class="card graph-card">
                <GraphCanvas ed=ed />
                <PairForm ed=ed />
            </div>
            <Figures ed=ed show=show />
        </div>
    }
}
