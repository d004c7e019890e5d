//! Alignment lab: how aligned are two embedding sets of the same N samples (paper §5)?
//! The PRH metrics with a permutation null, per-point mutual k-NN, PCA views with linked
//! neighbour highlighting, and the Procrustes rotation with its retrieval scores.
//!
//! The numbers are in [`compute`] (run in a web worker, [`worker`]); the cards in
//! [`results`], [`scatter`] and [`rotation`]. None of them imports this file.

mod compute;
mod results;
mod rotation;
mod scatter;
mod worker;

use crate::widgets::controls::restore_value;
use crate::widgets::drop_zone::DropZone;
use crate::widgets::url_state;
use compute::Analysis;
use compute::{Computed, Demo, InputKey, analysis_from, fetch_demo};
use leptos::prelude::*;
use prh_core::formats::features::Features;
use results::{MetricsCard, PerPointCard};
use rotation::RotationCard;
use scatter::ScatterCard;
use std::sync::Arc;
use worker::{Job, Message};

/// One embedding set's slot: nothing yet, the parsed set, or the error to show.
type Slot = RwSignal<Option<Result<Arc<Features>, String>>>;

/// The lab's inputs: both sets with their load counters, k, and the demo pair loaded.
#[derive(Clone, Copy)]
struct Inputs {
    set_a: Slot,
    set_b: Slot,
    /// Load counters: every new file (or error) in a slot gets a new number, so results
    /// name the inputs they came from and a late result for old inputs is dropped.
    loads_a: RwSignal<u64>,
    loads_b: RwSignal<u64>,
    /// Neighbours per sample (`k` in the URL).
    k: RwSignal<usize>,
    /// Which demo pair is loaded (`data` in the URL: a link reloads it); None once a file
    /// of the user's is loaded, which no URL can carry.
    demo: RwSignal<Option<Demo>>,
}

impl Inputs {
    /// The inputs as they are now, tracked (an effect reading this re-runs on a change).
    fn key(self) -> InputKey {
        InputKey {
            a: self.loads_a.get(),
            b: self.loads_b.get(),
            k: self.k.get(),
        }
    }

    /// [`Inputs::key`] without tracking.
    fn key_untracked(self) -> InputKey {
        InputKey {
            a: self.loads_a.get_untracked(),
            b: self.loads_b.get_untracked(),
            k: self.k.get_untracked(),
        }
    }

    /// What a file loaded into one slot does: set it, count the load, forget the demo.
    fn on_load(self, s: Slot, n: RwSignal<u64>) -> Callback<Result<Features, String>> {
        Callback::new(move |r: Result<Features, String>| {
            s.set(Some(r.map(Arc::new)));
            n.update(|x| *x += 1);
            self.demo.set(None);
        })
    }

    /// Fetches a demo pair and sets both sides at once: one analysis, no intermediate
    /// "new A vs old B".
    fn load_pair(self, which: Demo) {
        let (a, b) = which.files();
        self.demo.set(Some(which));
        leptos::task::spawn_local(async move {
            let (fa, fb) = (fetch_demo(a).await, fetch_demo(b).await);
            self.set_a.set(Some(fa.map(Arc::new)));
            self.set_b.set(Some(fb.map(Arc::new)));
            self.loads_a.update(|x| *x += 1);
            self.loads_b.update(|x| *x += 1);
        });
    }
}

/// The running analysis: its stage, its worker job (dropping it ends it), whether the
/// user cancelled the last one, and the finished result.
#[derive(Clone, Copy)]
struct Run {
    progress: RwSignal<Option<String>>,
    job: StoredValue<Option<Job>, LocalStorage>,
    cancelled: RwSignal<bool>,
    analysis: RwSignal<Option<Arc<Computed>>>,
}

/// Which side a new analysis kept from the one before (`prev`), in words.
fn kept_note(prev: Option<InputKey>, key: InputKey, a: &Features, b: &Features) -> Option<String> {
    prev.and_then(|p| {
        if p.a != key.a && p.b == key.b {
            Some(format!("Set A was replaced; set B is still {}, loaded before it: these scores compare the new A with that B.", b.source))
        } else if p.b != key.b && p.a == key.a {
            Some(format!("Set B was replaced; set A is still {}, loaded before it: these scores compare that A with the new B.", a.source))
        } else {
            None
        }
    })
}

/// Starts the worker on sets `a` and `b` for `key`: its stages show as they start, and a
/// result for inputs that changed meanwhile is dropped.
fn start_job(
    inputs: Inputs,
    run: Run,
    key: InputKey,
    sets: (Arc<Features>, Arc<Features>),
    kept: Option<String>,
) {
    let (a, b) = sets;
    let text = format!(
        "Results for A = {} (N = {}, D = {}) vs B = {} (N = {}, D = {}), k = {}",
        a.source, a.n, a.d, b.source, b.n, b.d, key.k
    );
    let (a2, b2) = (a.clone(), b.clone());
    let on_message = move |m: Message| match m {
        Message::Stage(stage) => run.progress.set(Some(stage)),
        Message::Done(r) => {
            run.progress.set(None);
            if inputs.key_untracked() == key {
                let result = r.map(|p| Arc::new(analysis_from(p, a2.clone(), b2.clone())));
                run.analysis.set(Some(Arc::new(Computed {
                    key,
                    inputs: text.clone(),
                    kept: kept.clone(),
                    result,
                })));
            }
        }
    };
    run.progress.set(Some("starting the worker".into()));
    match Job::start(&a, &b, key.k, on_message) {
        Ok(j) => run.job.set_value(Some(j)),
        Err(e) => {
            run.progress.set(None);
            run.analysis.set(Some(Arc::new(Computed {
                key,
                inputs: String::new(),
                kept: None,
                result: Err(e),
            })));
        }
    }
}

/// Re-runs the analysis whenever a set or k changes: whatever was shown, or is running,
/// belongs to other inputs then, so it is cleared and ended first.
fn analyse_on_change(inputs: Inputs, run: Run) {
    // The inputs of the last analysis started, to say which side a new one kept.
    let last = StoredValue::new(None::<InputKey>);
    Effect::new(move |_| {
        let key = inputs.key();
        run.analysis.set(None);
        run.job.set_value(None);
        run.cancelled.set(false);
        let (Some(Ok(a)), Some(Ok(b))) =
            (inputs.set_a.get_untracked(), inputs.set_b.get_untracked())
        else {
            return;
        };
        let kept = kept_note(last.get_value(), key, &a, &b);
        last.set_value(Some(key));
        start_job(inputs, run, key, (a, b), kept);
    });
}

/// The alignment lab.
#[component]
pub fn AlignmentLab() -> impl IntoView {
    let inputs = Inputs {
        set_a: RwSignal::new(None),
        set_b: RwSignal::new(None),
        loads_a: RwSignal::new(0_u64),
        loads_b: RwSignal::new(0_u64),
        k: RwSignal::new(url_state::get("k", 10_usize)),
        demo: RwSignal::new(None::<Demo>),
    };
    let hovered = RwSignal::new(None::<usize>);
    Effect::new(move |_| {
        url_state::update(&[
            ("k", Some(inputs.k.get().to_string())),
            ("data", inputs.demo.get().map(|d| d.key().to_string())),
        ])
    });
    // A link with `data=` reloads its demo pair.
    if let Some(d) = Demo::parse(&url_state::get("data", String::new())) {
        inputs.load_pair(d);
    }
    let run = Run {
        progress: RwSignal::new(None),
        job: StoredValue::new_local(None),
        cancelled: RwSignal::new(false),
        analysis: RwSignal::new(None),
    };
    analyse_on_change(inputs, run);
    view! {
        <Controls inputs=inputs />
        <SetInfo inputs=inputs />
        <Progress run=run />
        {move || match run.analysis.get() {
            None => view! { <p class="status">"Load two embedding sets of the same N samples (row i of A and row i of B describe the same thing), or the demo sets."</p> }.into_any(),
            Some(c) => view! { <Shown c=c hovered=hovered /> }.into_any(),
        }}
    }
}

/// The control bar: a drop zone per set, the demo pairs, k.
#[component]
fn Controls(inputs: Inputs) -> impl IntoView {
    let on_a = inputs.on_load(inputs.set_a, inputs.loads_a);
    let on_b = inputs.on_load(inputs.set_b, inputs.loads_b);
    let k = inputs.k;
    view! {
        <div class="controls">
            <DropZone label="A" id="file-a" on_load=on_a />
            <DropZone label="B" id="file-b" on_load=on_b />
            <button id="load-demo" on:click=move |_| inputs.load_pair(Demo::Captions)>"Load demo sets"</button>
            <button id="load-demo-multilingual" on:click=move |_| inputs.load_pair(Demo::Multilingual)
                title="English and German JEPAs trained apart with good views (views-multilingual, seed 0): 1,000 test_2016 images, one caption per language">
                "Load en vs de (views-multilingual)"</button>
            <label>
                "k "
                <input type="number" id="knn-k" min="1" max="100" prop:value=move || k.get().to_string()
                    on:change=move |ev| { match event_target_value(&ev).trim().parse::<usize>() {
                        Ok(v) => k.set(v.clamp(1, 100)),
                        // Not a number: show the k in use again rather than a blank field.
                        Err(_) => restore_value(&ev, &k.get_untracked().to_string()),
                    } } />
            </label>
        </div>
    }
}

/// Each set's shape, and the error of a set that did not load.
#[component]
fn SetInfo(inputs: Inputs) -> impl IntoView {
    let err_of = |s: Slot, id: &'static str| {
        move || match s.get() {
            Some(Err(e)) => Some(view! { <pre class="error" id=id>{e}</pre> }),
            _ => None,
        }
    };
    let info_of = |s: Slot| {
        move || match s.get() {
            Some(Ok(f)) => format!(
                "{}: N = {}, layers = {}, D = {}",
                f.source, f.n, f.layers, f.d
            ),
            _ => String::new(),
        }
    };
    view! {
        <div class="status"><span id="info-a">{info_of(inputs.set_a)}</span>" · "<span id="info-b">{info_of(inputs.set_b)}</span></div>
        {err_of(inputs.set_a, "error-a")}
        {err_of(inputs.set_b, "error-b")}
    }
}

/// The worker's stage with a cancel button while it runs; a note once cancelled.
#[component]
fn Progress(run: Run) -> impl IntoView {
    let cancel = move |_| {
        // Dropping the job terminates its worker.
        run.job.set_value(None);
        run.progress.set(None);
        run.cancelled.set(true);
    };
    view! {
        {move || run.progress.get().map(|stage| view! {
            <p class="status" id="busy" data-stage=stage.clone()>{format!("Computing in a background worker (the page stays usable): {stage}… ")}
                <button id="cancel-analysis" on:click=cancel>"Cancel"</button></p>
        })}
        {move || run.cancelled.get().then(|| view! {
            <p class="stale" id="analysis-cancelled">"Cancelled: no results for these inputs. Change k or load a file to compute again."</p>
        })}
    }
}

/// A finished analysis: which inputs it is for, and its figures or its error.
#[component]
fn Shown(c: Arc<Computed>, hovered: RwSignal<Option<usize>>) -> impl IntoView {
    let head = view! {
        <p class="status" id="results-for" data-load-a=c.key.a.to_string() data-load-b=c.key.b.to_string()>{c.inputs.clone()}</p>
        {c.kept.clone().map(|m| view! { <p class="stale" id="pair-note">{m}</p> })}
    };
    match &c.result {
        Err(e) => {
            view! { {head}<pre class="error" id="error-analysis">{e.clone()}</pre> }.into_any()
        }
        Ok(an) => view! { {head}<Results an=an.clone() hovered=hovered /> }.into_any(),
    }
}

/// The figures of one analysis.
#[component]
fn Results(an: Arc<Analysis>, hovered: RwSignal<Option<usize>>) -> impl IntoView {
    view! {
        <div class="grid">
            <MetricsCard an=an.clone() />
            <ScatterCard an=an.clone() hovered=hovered />
            <RotationCard an=an.clone() />
            <PerPointCard an=an.clone() />
        </div>
    }
}
