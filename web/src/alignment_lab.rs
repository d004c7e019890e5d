//! Alignment lab: how aligned are two embedding sets of the same N samples (paper §5)?
//! The PRH metrics with a permutation null, per-point mutual k-NN, PCA views with linked
//! neighbour highlighting, and the Procrustes rotation with its retrieval scores.

use crate::draw::{self, Scatter};
use crate::drop_zone::{DropZone, parse};
use crate::export::ExportButtons;
use crate::metrics_worker::{Job, Message};
use crate::pca::pca_2d;
use crate::svg;
use leptos::prelude::*;
use prh_core::formats::features::Features;
use prh_core::linalg::{self, Matrix};
use prh_core::measure::knn::Knn;
use prh_core::measure::metrics::{LayerView, MetricOptions, measure};
use prh_core::measure::preprocess::Preprocess;
use prh_core::measure::retrieval::{AlignReport, align_and_rank};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Everything the lab shows for one pair of embedding sets.
struct Analysis {
    /// The CLI's `metrics --json` report (same function, same defaults), as that JSON.
    report: serde_json::Value,
    /// |N_A(i) ∩ N_B(i)| / k per sample, at the best mutual k-NN layer pair.
    per_point: Vec<f64>,
    /// Neighbour lists in A and in B (that layer pair).
    knn_a: Knn,
    knn_b: Knn,
    /// First two principal components of each side.
    pca_a: Vec<(f64, f64)>,
    pca_b: Vec<(f64, f64)>,
    /// The two sets and the layer pair used, for fitting the rotation later.
    inputs: (Arc<Features>, Arc<Features>, usize, usize),
    /// Procrustes fit on the first half of the pairs, retrieval on the second half, and
    /// the milliseconds it took; `None` while deferred (wide embeddings, see
    /// [`EAGER_ROTATION_WIDTH`]).
    align: Option<(Result<AlignReport, String>, f64)>,
    /// Milliseconds the metrics and the PCA took in this browser.
    ms: [f64; 2],
}

/// Which inputs a result was computed from: the load number of each set (the lab counts
/// loads per slot) and k. A result is shown only while all three are still current.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct InputKey {
    a: u64,
    b: u64,
    k: usize,
}

/// An analysis with the inputs it belongs to, and what changed since the one before.
struct Computed {
    key: InputKey,
    /// "A = file (N × D) vs B = file, k".
    inputs: String,
    /// Set when only one side was replaced: the other is the earlier file, said so.
    kept: Option<String>,
    result: Result<Arc<Analysis>, String>,
}

/// Per-sample mutual k-NN, the terms of PRH's mean: s_i = |N_A(i) ∩ N_B(i)| / k.
///
/// # Shapes
/// `a [n, k]`, `b [n, k]` -> `[n]`
fn per_point_mutual_knn(a: &Knn, b: &Knn) -> Vec<f64> {
    (0..a.n.min(b.n))
        .map(|i| a.row(i).iter().filter(|j| b.row(i).contains(j)).count() as f64 / a.k as f64)
        .collect()
}

/// Widest embedding for which the rotation is fitted right away: the fit is an SVD of a
/// [d_a, d_b] matrix, ~10 s in wasm at 1280 x 1280, so wider sets get a button instead.
const EAGER_ROTATION_WIDTH: usize = 256;

/// Procrustes fit on the first half of the pairs (rotation-equivariant preprocessing: rows
/// normalised, no clamp) and retrieval through it on the second half, with its duration.
fn fit_rotation(
    a: &Features,
    b: &Features,
    la: usize,
    lb: usize,
) -> (Result<AlignReport, String>, f64) {
    let t0 = crate::now_ms();
    let pre = Preprocess::normalize_only();
    let half = a.n / 2;
    let fit = (|| {
        let (fa, ta) = a.split_rows(half).map_err(|e| e.to_string())?;
        let (fb, tb) = b.split_rows(half).map_err(|e| e.to_string())?;
        let m = |f: &Features, l: usize| pre.layer_matrix(f, l).map_err(|e| e.to_string());
        align_and_rank(
            m(&fa, la)?.as_ref(),
            m(&fb, lb)?.as_ref(),
            m(&ta, la)?.as_ref(),
            m(&tb, lb)?.as_ref(),
        )
        .map_err(|e| e.to_string())
    })();
    (fit, crate::now_ms() - t0)
}

/// The part of an analysis computed in the worker ([`crate::metrics_worker`]): plain
/// numbers, sent to the page as JSON.
#[derive(Serialize, Deserialize)]
pub struct Parts {
    /// The CLI's `metrics --json` report (same function, same defaults), as that JSON.
    report: serde_json::Value,
    /// The best mutual k-NN layer pair (layer of A, layer of B).
    layers: (usize, usize),
    /// |N_A(i) ∩ N_B(i)| / k per sample at that layer pair.
    per_point: Vec<f64>,
    /// Samples N and neighbours k of the lists below.
    n: usize,
    k: usize,
    /// Flat `[n, k]` neighbour lists in A and in B (`prh_core::measure::knn::Knn::idx`).
    knn_a: Vec<usize>,
    knn_b: Vec<usize>,
    /// First two principal components of each side.
    pca_a: Vec<(f64, f64)>,
    pca_b: Vec<(f64, f64)>,
    /// Milliseconds the metrics and the PCA took.
    ms: [f64; 2],
}

/// The metrics (k neighbours), per-point mutual k-NN and PCA of two sets; `say(stage)` is
/// called before each stage (the worker posts it to the page).
pub fn analyse_parts(
    a: &Features,
    b: &Features,
    k: usize,
    say: &dyn Fn(&str),
) -> Result<Parts, String> {
    let t0 = crate::now_ms();
    let opts = MetricOptions {
        k,
        ..MetricOptions::default()
    };
    say("metrics: k-NN lists, CKA, CKNNA and the permutation null");
    let report = measure(a, b, &opts).map_err(|e| e.to_string())?;
    // Re-derive the best mutual k-NN layer pair's neighbours exactly as `measure` does.
    let (la, lb) = report.best_layers.mutual_knn;
    say("per-point mutual k-NN");
    let view = |f: &Features, l: usize| -> Result<(Matrix, LayerView), String> {
        let mut f = f.clone();
        opts.preprocess.clamp(&mut f).map_err(|e| e.to_string())?;
        let x = opts
            .preprocess
            .layer_matrix(&f, l)
            .map_err(|e| e.to_string())?;
        let v = LayerView::new(&x, &opts).map_err(|e| e.to_string())?;
        Ok((x, v))
    };
    let (xa, va) = view(a, la)?;
    let (xb, vb) = view(b, lb)?;
    let per_point = per_point_mutual_knn(&va.knn, &vb.knn);
    let t1 = crate::now_ms();
    say("PCA of each side");
    let (pca_a, pca_b) = (pca_2d(&xa)?, pca_2d(&xb)?);
    let t2 = crate::now_ms();
    Ok(Parts {
        report: serde_json::to_value(&report).map_err(|e| e.to_string())?,
        layers: (la, lb),
        per_point,
        n: va.knn.n,
        k: va.knn.k,
        knn_a: va.knn.idx,
        knn_b: vb.knn.idx,
        pca_a,
        pca_b,
        ms: [t1 - t0, t2 - t1],
    })
}

/// The analysis of two sets from the worker's [`Parts`]; the rotation is fitted here right
/// away for narrow embeddings (see [`EAGER_ROTATION_WIDTH`]).
fn analysis_from(parts: Parts, a: Arc<Features>, b: Arc<Features>) -> Analysis {
    let (la, lb) = parts.layers;
    let align = (a.d.max(b.d) <= EAGER_ROTATION_WIDTH).then(|| fit_rotation(&a, &b, la, lb));
    let knn = |idx: Vec<usize>| Knn {
        n: parts.n,
        k: parts.k,
        idx,
    };
    Analysis {
        report: parts.report,
        per_point: parts.per_point,
        knn_a: knn(parts.knn_a),
        knn_b: knn(parts.knn_b),
        pca_a: parts.pca_a,
        pca_b: parts.pca_b,
        inputs: (a, b, la, lb),
        align,
        ms: parts.ms,
    }
}

/// A number of the report JSON by key (NaN when absent: shown as such, never as a score).
fn num(report: &serde_json::Value, key: &str) -> f64 {
    report
        .get(key)
        .and_then(serde_json::Value::as_f64)
        .unwrap_or(f64::NAN)
}

/// Fetches a demo file shipped in `assets/` and parses it.
async fn fetch_demo(name: &str) -> Result<Features, String> {
    let window = web_sys::window().ok_or("no window")?;
    let resp =
        wasm_bindgen_futures::JsFuture::from(window.fetch_with_str(&format!("assets/{name}")))
            .await
            .map_err(|e| format!("assets/{name}: fetch failed: {e:?}"))?;
    let resp: web_sys::Response = wasm_bindgen::JsCast::dyn_into(resp)
        .map_err(|_| format!("assets/{name}: not a response"))?;
    if !resp.ok() {
        return Err(format!("assets/{name}: HTTP {}", resp.status()));
    }
    let buf =
        wasm_bindgen_futures::JsFuture::from(resp.array_buffer().map_err(|e| format!("{e:?}"))?)
            .await
            .map_err(|e| format!("{e:?}"))?;
    parse(name, &js_sys::Uint8Array::new(&buf).to_vec())
}

/// The demo pairs shipped in `assets/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Demo {
    /// `demo_a.npy` vs `demo_b.npy` (web/make_demo.sh).
    Captions,
    /// The views-multilingual experiment's good-view encoders (en and de trained apart),
    /// embedding the 1,000 test_2016 images' first caption in each language.
    Multilingual,
}

impl Demo {
    /// The URL value (`data=`).
    fn key(self) -> &'static str {
        match self {
            Demo::Captions => "demo",
            Demo::Multilingual => "multilingual",
        }
    }

    fn parse(s: &str) -> Option<Demo> {
        [Demo::Captions, Demo::Multilingual]
            .into_iter()
            .find(|d| d.key() == s)
    }

    /// File names of sets A and B.
    fn files(self) -> (&'static str, &'static str) {
        match self {
            Demo::Captions => ("demo_a.npy", "demo_b.npy"),
            Demo::Multilingual => ("demo_multi_en.npy", "demo_multi_de.npy"),
        }
    }
}

/// Formats a score for the table.
fn fmt(x: f64) -> String {
    format!("{x:.6}")
}

/// The alignment lab.
#[component]
pub fn AlignmentLab() -> impl IntoView {
    let set_a = RwSignal::new(None::<Result<Arc<Features>, String>>);
    let set_b = RwSignal::new(None::<Result<Arc<Features>, String>>);
    let k = RwSignal::new(crate::url_state::get("k", 10_usize));
    let hovered = RwSignal::new(None::<usize>);
    // Which demo pair is loaded (`data` in the URL: a link reloads it); None once a file
    // of the user's is loaded, which no URL can carry.
    let demo = RwSignal::new(None::<Demo>);
    Effect::new(move |_| {
        crate::url_state::update(&[
            ("k", Some(k.get().to_string())),
            ("data", demo.get().map(|d| d.key().to_string())),
        ])
    });
    // Load counters: every new file (or error) in a slot gets a new number, so results
    // name the inputs they came from and a late result for old inputs is dropped.
    let (loads_a, loads_b) = (RwSignal::new(0_u64), RwSignal::new(0_u64));
    let loaded = |s: RwSignal<Option<Result<Arc<Features>, String>>>, n: RwSignal<u64>| {
        Callback::new(move |r: Result<Features, String>| {
            s.set(Some(r.map(Arc::new)));
            n.update(|x| *x += 1);
            demo.set(None);
        })
    };
    let (on_a, on_b) = (loaded(set_a, loads_a), loaded(set_b, loads_b));
    let load_pair = move |which: Demo| {
        let (a, b) = which.files();
        demo.set(Some(which));
        leptos::task::spawn_local(async move {
            let (fa, fb) = (fetch_demo(a).await, fetch_demo(b).await);
            // Both sides at once: one analysis, no intermediate "new A vs old B".
            set_a.set(Some(fa.map(Arc::new)));
            set_b.set(Some(fb.map(Arc::new)));
            loads_a.update(|x| *x += 1);
            loads_b.update(|x| *x += 1);
        });
    };
    let load_demo = move |_| load_pair(Demo::Captions);
    let load_multilingual = move |_| load_pair(Demo::Multilingual);
    // A link with `data=` reloads its demo pair.
    if let Some(d) = Demo::parse(&crate::url_state::get("data", String::new())) {
        load_pair(d);
    }
    let analysis = RwSignal::new(None::<Arc<Computed>>);
    // The stage the worker is in while one runs; the running job (dropping it ends it);
    // whether the user cancelled the last one.
    let progress = RwSignal::new(None::<String>);
    let job = StoredValue::new_local(None::<Job>);
    let cancelled = RwSignal::new(false);
    // The inputs of the last analysis started, to say which side a new one kept.
    let last = StoredValue::new(None::<InputKey>);
    Effect::new(move |_| {
        let key = InputKey {
            a: loads_a.get(),
            b: loads_b.get(),
            k: k.get(),
        };
        // Whatever was shown, or is running, belongs to other inputs now: clear and end it.
        analysis.set(None);
        job.set_value(None);
        cancelled.set(false);
        let (Some(Ok(a)), Some(Ok(b))) = (set_a.get_untracked(), set_b.get_untracked()) else {
            return;
        };
        let kept = last.get_value().and_then(|p| {
            if p.a != key.a && p.b == key.b {
                Some(format!("Set A was replaced; set B is still {}, loaded before it: these scores compare the new A with that B.", b.source))
            } else if p.b != key.b && p.a == key.a {
                Some(format!("Set B was replaced; set A is still {}, loaded before it: these scores compare that A with the new B.", a.source))
            } else {
                None
            }
        });
        last.set_value(Some(key));
        let inputs = format!(
            "Results for A = {} (N = {}, D = {}) vs B = {} (N = {}, D = {}), k = {}",
            a.source, a.n, a.d, b.source, b.n, b.d, key.k
        );
        // The metrics run in a worker (the page stays responsive); its stages show as
        // they start, and a result for inputs that changed meanwhile is dropped.
        let (a2, b2) = (a.clone(), b.clone());
        let on_message = move |m: Message| match m {
            Message::Stage(stage) => progress.set(Some(stage)),
            Message::Done(r) => {
                progress.set(None);
                let now = InputKey {
                    a: loads_a.get_untracked(),
                    b: loads_b.get_untracked(),
                    k: k.get_untracked(),
                };
                if now == key {
                    let result = r.map(|p| Arc::new(analysis_from(p, a2.clone(), b2.clone())));
                    analysis.set(Some(Arc::new(Computed {
                        key,
                        inputs: inputs.clone(),
                        kept: kept.clone(),
                        result,
                    })));
                }
            }
        };
        progress.set(Some("starting the worker".into()));
        match Job::start(&a, &b, key.k, on_message) {
            Ok(j) => job.set_value(Some(j)),
            Err(e) => {
                progress.set(None);
                analysis.set(Some(Arc::new(Computed {
                    key,
                    inputs: String::new(),
                    kept: None,
                    result: Err(e),
                })));
            }
        }
    });
    let cancel = move |_| {
        // Dropping the job terminates its worker.
        job.set_value(None);
        progress.set(None);
        cancelled.set(true);
    };
    let err_of = |s: RwSignal<Option<Result<Arc<Features>, String>>>, id: &'static str| {
        move || match s.get() {
            Some(Err(e)) => Some(view! { <pre class="error" id=id>{e}</pre> }),
            _ => None,
        }
    };
    let info_of = |s: RwSignal<Option<Result<Arc<Features>, String>>>| {
        move || match s.get() {
            Some(Ok(f)) => format!(
                "{}: N = {}, layers = {}, D = {}",
                f.source, f.n, f.layers, f.d
            ),
            _ => String::new(),
        }
    };
    view! {
        <div class="controls">
            <DropZone label="A" id="file-a" on_load=on_a />
            <DropZone label="B" id="file-b" on_load=on_b />
            <button id="load-demo" on:click=load_demo>"Load demo sets"</button>
            <button id="load-demo-multilingual" on:click=load_multilingual
                title="English and German JEPAs trained apart with good views (views-multilingual, seed 0): 1,000 test_2016 images, one caption per language">
                "Load en vs de (views-multilingual)"</button>
            <label>
                "k "
                <input type="number" id="knn-k" min="1" max="100" prop:value=move || k.get().to_string()
                    on:change=move |ev| { match event_target_value(&ev).trim().parse::<usize>() {
                        Ok(v) => k.set(v.clamp(1, 100)),
                        // Not a number: show the k in use again rather than a blank field.
                        Err(_) => {
                            if let Some(input) = ev.target().and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlInputElement>(t).ok()) {
                                input.set_value(&k.get_untracked().to_string());
                            }
                        }
                    } } />
            </label>
        </div>
        <div class="status"><span id="info-a">{info_of(set_a)}</span>" · "<span id="info-b">{info_of(set_b)}</span></div>
        {err_of(set_a, "error-a")}
        {err_of(set_b, "error-b")}
        {move || progress.get().map(|stage| view! {
            <p class="status" id="busy" data-stage=stage.clone()>{format!("Computing in a background worker (the page stays usable): {stage}… ")}
                <button id="cancel-analysis" on:click=cancel>"Cancel"</button></p>
        })}
        {move || cancelled.get().then(|| view! {
            <p class="stale" id="analysis-cancelled">"Cancelled: no results for these inputs. Change k or load a file to compute again."</p>
        })}
        {move || match analysis.get() {
            None => view! { <p class="status">"Load two embedding sets of the same N samples (row i of A and row i of B describe the same thing), or the demo sets."</p> }.into_any(),
            Some(c) => {
                let head = view! {
                    <p class="status" id="results-for" data-load-a=c.key.a.to_string() data-load-b=c.key.b.to_string()>{c.inputs.clone()}</p>
                    {c.kept.clone().map(|m| view! { <p class="stale" id="pair-note">{m}</p> })}
                };
                match &c.result {
                    Err(e) => view! { {head}<pre class="error" id="error-analysis">{e.clone()}</pre> }.into_any(),
                    Ok(an) => view! { {head}<Results an=an.clone() hovered=hovered /> }.into_any(),
                }
            }
        }}
    }
}

/// The figures of one analysis.
#[component]
fn Results(an: Arc<Analysis>, hovered: RwSignal<Option<usize>>) -> impl IntoView {
    let r = &an.report;
    let null = match (
        r.get("null_mutual_knn_mean")
            .and_then(serde_json::Value::as_f64),
        r.get("null_mutual_knn_std")
            .and_then(serde_json::Value::as_f64),
    ) {
        (Some(m), Some(s)) => format!("{} ± {}", fmt(m), fmt(s)),
        _ => "—".into(),
    };
    let (n, k) = (an.knn_a.n, an.knn_a.k);
    let rows: Vec<(&str, f64, &str)> = vec![
        (
            "mutual_knn",
            num(r, "mutual_knn"),
            "mean share of each sample's k nearest neighbours found in both spaces",
        ),
        (
            "cycle_knn",
            num(r, "cycle_knn"),
            "share of samples reached back by an A-neighbour of a B-neighbour",
        ),
        (
            "lcs_knn",
            num(r, "lcs_knn"),
            "longest common subsequence of the ordered neighbour lists (0..k)",
        ),
        (
            "cka",
            num(r, "cka"),
            "linear CKA: similarity of the two Gram matrices, rotation and scale invariant",
        ),
        (
            "cka_rbf",
            num(r, "cka_rbf"),
            "CKA with an RBF kernel (sigma 1)",
        ),
        (
            "unbiased_cka",
            num(r, "unbiased_cka"),
            "linear CKA with the unbiased HSIC estimator",
        ),
        (
            "cknna",
            num(r, "cknna"),
            "CKA restricted to mutual k-NN pairs",
        ),
        (
            "svcca",
            num(r, "svcca"),
            "mean canonical correlation of the top 10 SVD directions of each side",
        ),
        (
            "edit_distance_knn",
            num(r, "edit_distance_knn"),
            "1 - edit distance of the ordered neighbour lists / k",
        ),
    ];
    // Each metric's permutation null (`null` in the CLI's JSON), and the report's warnings
    // about degenerate inputs and tied neighbour lists.
    let nulls = r.get("null").cloned().unwrap_or(serde_json::Value::Null);
    let null_cells = move |name: &str| {
        let s = &nulls[name];
        let cell = |key: &str, id: &str| {
            let v = s[key].as_f64();
            view! { <td id=format!("{id}-{name}") data-value=v.map(|x| x.to_string()).unwrap_or_default()>{v.map_or_else(|| "—".to_string(), fmt)}</td> }
        };
        let spread = match (s["mean"].as_f64(), s["std"].as_f64()) {
            (Some(m), Some(sd)) => format!("{} ± {}", fmt(m), fmt(sd)),
            _ => "—".into(),
        };
        view! { <td>{spread}</td>{cell("p_value", "p")}{cell("calibrated", "calibrated")} }
    };
    let null_note = {
        let nul = &r["null"];
        match nul["shuffles"].as_u64() {
            Some(b) => format!(
                "Null: {b} shuffles of B's rows{}; p = (1 + #{{null ≥ score}}) / (1 + shuffles); calibrated = (score − null mean) / (perfect − null mean): 0 at chance, 1 perfect. {}",
                if nul["max_over_layer_pairs"].as_bool() == Some(true) {
                    ", each the max over all layer pairs"
                } else {
                    ""
                },
                nul["kernel_note"].as_str().unwrap_or("")
            ),
            None => String::new(),
        }
    };
    let warnings: Vec<String> = r["warnings"]
        .as_array()
        .map(|w| {
            w.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let report_json = r.clone();
    let hist_canvas = NodeRef::<leptos::html::Canvas>::new();
    let per_point_json = {
        let pp = an.per_point.clone();
        Callback::new(move |_| serde_json::json!({ "mutual_knn_per_point": pp }))
    };
    let (shares, hist_marks) = histogram(&an.per_point, k);
    let hist_svg = Callback::new(move |_| svg::bars(420.0, 120.0, &shares, &hist_marks).finish());
    view! {
        <div class="grid">
            <div class="card">
                <h2>"Alignment metrics "<span class="status" id="align-ms">{format!("(computed in this browser: metrics {:.0} ms, PCA {:.0} ms)", an.ms[0], an.ms[1])}</span></h2>
                <table class="metrics" id="metrics-table">
                    <tr><th>"metric"</th><th>"value"</th><th>"null mean ± std"</th><th>"p"</th><th>"calibrated"</th><th>"meaning"</th></tr>
                    {rows.into_iter().map(|(name, v, what)| view! {
                        <tr><td>{name}</td><td id=format!("metric-{name}") data-value=v.to_string()>{fmt(v)}</td>{null_cells(name)}<td class="explain" style="text-align:left">{what}</td></tr>
                    }).collect_view()}
                    <tr><td>"null mutual_knn"</td><td id="metric-null">{null}</td><td class="explain" style="text-align:left">"mean ± std over shuffled pairings: the chance level (about k/N)"</td></tr>
                </table>
                <p class="explain">{format!("N = {}, k = {}. Same code and defaults as `prh-native metrics` (outliers clamped at the 0.95 quantile, rows L2-normalised).", n, k)}</p>
                <p class="explain" id="null-note">{null_note}</p>
                {warning_list("metric-warnings", &warnings)}
                <button on:click=move |_| { let _ = crate::export::json(&report_json, "metrics.json"); }>"JSON"</button>
            </div>
            <ScatterCard an=an.clone() hovered=hovered />
            <RotationCard an=an.clone() />
            <div class="card">
                <h2>"Per-point mutual k-NN"</h2>
                <p class="explain">"Each sample's own score |N_A(i) ∩ N_B(i)| / k; the table's mutual_knn is their mean. Points in the scatters are coloured by it (dark = neighbours agree)."</p>
                <PerPointHistogram canvas=hist_canvas values=an.per_point.clone() k=k />
                <ExportButtons canvas=hist_canvas vector=hist_svg numbers=per_point_json name="mutual_knn_per_point" />
            </div>
        </div>
    }
}

/// Share of samples with 0, 1, ..., k shared neighbours (scores are multiples of 1/k),
/// and the bar marks that fit them.
fn histogram(values: &[f64], k: usize) -> (Vec<f64>, draw::BarMarks) {
    let mut counts = vec![0.0; k + 1];
    for v in values {
        counts[((v * k as f64).round() as usize).min(k)] += 1.0;
    }
    let total = values.len().max(1) as f64;
    let shares: Vec<f64> = counts.iter().map(|c| c / total).collect();
    let top = shares.iter().fold(0.0_f64, |m, &x| m.max(x));
    let marks = draw::BarMarks {
        y_range: (0.0, top.max(1e-9)),
        ..draw::BarMarks::plain()
    };
    (shares, marks)
}

/// A histogram of per-point scores (values are multiples of 1/k).
#[component]
fn PerPointHistogram(
    canvas: NodeRef<leptos::html::Canvas>,
    values: Vec<f64>,
    k: usize,
) -> impl IntoView {
    let (shares, marks) = histogram(&values, k);
    Effect::new(move |_| {
        if let Some(c) = canvas.get() {
            draw::bars(&c, &shares, &marks);
        }
    });
    view! { <canvas node_ref=canvas width="420" height="120"></canvas><div class="status">"share of samples with 0, 1, …, k shared neighbours"</div> }
}

/// A brushed selection: the samples inside the rectangle dragged on either scatter.
#[derive(Clone, Debug, Default, PartialEq)]
struct Selection {
    /// Selected samples, ascending.
    points: Vec<usize>,
}

impl Selection {
    /// Mean per-point mutual k-NN of the selected samples (None when empty):
    /// (1/|S|) sum_{i in S} |N_A(i) ∩ N_B(i)| / k.
    fn mean_score(&self, per_point: &[f64]) -> Option<f64> {
        let v: Vec<f64> = self
            .points
            .iter()
            .filter_map(|&i| per_point.get(i).copied())
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }

    /// The selection and every selected sample's k neighbours in one space, without
    /// repeats: what gets ringed on that space's scatter.
    fn with_neighbours(&self, knn: &Knn) -> Vec<usize> {
        let mut seen = vec![false; knn.n];
        for &i in self.points.iter().filter(|&&i| i < knn.n) {
            seen[i] = true;
            for &j in knn.row(i) {
                seen[j] = true;
            }
        }
        (0..knn.n).filter(|&i| seen[i]).collect()
    }
}

/// Two PCA scatters; hovering a point rings it and its k neighbours in both spaces, and
/// dragging a rectangle on either one selects the points inside (red) and rings their
/// neighbours in both spaces, with the selection's mean mutual k-NN.
#[component]
fn ScatterCard(an: Arc<Analysis>, hovered: RwSignal<Option<usize>>) -> impl IntoView {
    let (ca, cb) = (
        NodeRef::<leptos::html::Canvas>::new(),
        NodeRef::<leptos::html::Canvas>::new(),
    );
    let colours: Arc<Vec<String>> = Arc::new(
        an.per_point
            .iter()
            .map(|&s| draw::css(draw::sequential(0.15 + 0.85 * s)))
            .collect(),
    );
    let selection = RwSignal::new(Selection::default());
    // The rectangle being dragged: (canvas 0 = A / 1 = B, start, current), canvas pixels.
    let brush = RwSignal::new(None::<(usize, (f64, f64), (f64, f64))>);
    // What each space rings: the hovered sample and its neighbours, or else the
    // selection's neighbours.
    let rings = {
        let an = an.clone();
        move |h: Option<usize>, sel: &Selection, side: usize| -> (Vec<usize>, Vec<usize>) {
            let knn = if side == 0 { &an.knn_a } else { &an.knn_b };
            let mut ring: Vec<usize> = Vec::new();
            if let Some(i) = h.filter(|&i| i < knn.n) {
                ring.push(i);
                ring.extend_from_slice(knn.row(i));
            } else {
                ring = sel.with_neighbours(knn);
            }
            (ring, sel.points.clone())
        }
    };
    let (an2, colours2, rings2) = (an.clone(), colours.clone(), rings.clone());
    Effect::new(move |_| {
        let (h, b) = (hovered.get(), brush.get());
        let sel = selection.get();
        for (side, canvas, pts) in [(0, ca, &an2.pca_a), (1, cb, &an2.pca_b)] {
            let (ring, chosen) = rings2(h, &sel, side);
            if let Some(c) = canvas.get() {
                draw::scatter(
                    &c,
                    &Scatter {
                        points: pts,
                        colours: &colours2,
                        highlight: &ring,
                        selected: &chosen,
                        extent: None,
                    },
                );
                if let Some((s, p0, p1)) = b
                    && s == side
                {
                    draw::brush_rect(&c, p0, p1);
                }
            }
        }
    });
    let pos = |canvas: NodeRef<leptos::html::Canvas>, ev: &web_sys::MouseEvent| {
        canvas
            .get()
            .map(|c| draw::canvas_px(&c, (ev.offset_x() as f64, ev.offset_y() as f64)))
    };
    let on_down = move |side: usize, canvas: NodeRef<leptos::html::Canvas>| {
        move |ev: web_sys::MouseEvent| {
            ev.prevent_default();
            if let Some(p) = pos(canvas, &ev) {
                brush.set(Some((side, p, p)));
            }
        }
    };
    let on_move =
        move |side: usize, canvas: NodeRef<leptos::html::Canvas>, pts: Vec<(f64, f64)>| {
            move |ev: web_sys::MouseEvent| {
                let Some(c) = canvas.get() else { return };
                match brush.get_untracked() {
                    Some((s, p0, _)) if s == side => {
                        if let Some(p) = pos(canvas, &ev) {
                            brush.set(Some((s, p0, p)));
                        }
                    }
                    _ => hovered.set(draw::nearest_point(
                        &c,
                        &pts,
                        None,
                        (ev.offset_x() as f64, ev.offset_y() as f64),
                    )),
                }
            }
        };
    // Releasing the button (or leaving the canvas) ends the drag; a click without a drag
    // (under 3 pixels) clears the selection.
    let on_up = move |side: usize, canvas: NodeRef<leptos::html::Canvas>, pts: Vec<(f64, f64)>| {
        move |ev: web_sys::MouseEvent| {
            let Some((s, p0, p1)) = brush.get_untracked() else {
                return;
            };
            if s != side {
                return;
            }
            let p1 = pos(canvas, &ev).unwrap_or(p1);
            brush.set(None);
            let Some(c) = canvas.get() else { return };
            let points = if (p0.0 - p1.0).abs().max((p0.1 - p1.1).abs()) < 3.0 {
                Vec::new()
            } else {
                draw::points_in_rect(&c, &pts, None, p0, p1)
            };
            hovered.set(None);
            selection.set(Selection { points });
        }
    };
    let info = {
        let an = an.clone();
        move || match hovered.get() {
            Some(i) if i < an.per_point.len() => format!(
                "sample {i}: {:.0} of {} neighbours shared",
                an.per_point[i] * an.knn_a.k as f64,
                an.knn_a.k
            ),
            _ => "hover a point, or drag a rectangle to select".into(),
        }
    };
    let brush_info = {
        let an = an.clone();
        move || {
            let sel = selection.get();
            let mean = sel.mean_score(&an.per_point);
            let rings = (
                sel.with_neighbours(&an.knn_a).len(),
                sel.with_neighbours(&an.knn_b).len(),
            );
            let text = match mean {
                Some(m) => format!(
                    "{} selected · mean mutual {}-NN of the selection {m:.6} · with neighbours: {} in A, {} in B",
                    sel.points.len(),
                    an.knn_a.k,
                    rings.0,
                    rings.1
                ),
                None => "no selection".into(),
            };
            let data = serde_json::to_string(&sel.points).unwrap_or_default();
            view! {
                <div class="status" id="brush-info" data-selected=data data-mean=mean.map(|m| m.to_string()).unwrap_or_default()
                    data-ringed-a=rings.0.to_string() data-ringed-b=rings.1.to_string()>{text}</div>
            }
        }
    };
    let json = {
        let an = an.clone();
        Callback::new(
            move |_| serde_json::json!({ "pca_a": an.pca_a, "pca_b": an.pca_b, "mutual_knn_per_point": an.per_point, "selected": selection.get_untracked().points }),
        )
    };
    let vector = {
        let an = an.clone();
        Callback::new(move |_| {
            let sel = selection.get_untracked();
            let fig = |side: usize, pts: &[(f64, f64)]| {
                let (ring, chosen) = rings(None, &sel, side);
                svg::scatter(
                    260.0,
                    260.0,
                    &Scatter {
                        points: pts,
                        colours: &colours,
                        highlight: &ring,
                        selected: &chosen,
                        extent: None,
                    },
                )
            };
            svg::pair((&fig(0, &an.pca_a), "A"), (&fig(1, &an.pca_b), "B")).finish()
        })
    };
    view! {
        <div class="card">
            <h2>"PCA of A and of B"<ExportButtons canvas=ca vector=vector numbers=json name="pca" second=(cb, ["A".to_string(), "B".to_string()]) /></h2>
            <div class="pair">
                <figure><canvas node_ref=ca id="scatter-a" width="260" height="260" style="cursor:crosshair"
                    on:mousedown=on_down(0, ca) on:mousemove=on_move(0, ca, an.pca_a.clone())
                    on:mouseup=on_up(0, ca, an.pca_a.clone()) on:mouseleave=on_up(0, ca, an.pca_a.clone())></canvas><figcaption>"A"</figcaption></figure>
                <figure><canvas node_ref=cb id="scatter-b" width="260" height="260" style="cursor:crosshair"
                    on:mousedown=on_down(1, cb) on:mousemove=on_move(1, cb, an.pca_b.clone())
                    on:mouseup=on_up(1, cb, an.pca_b.clone()) on:mouseleave=on_up(1, cb, an.pca_b.clone())></canvas><figcaption>"B"</figcaption></figure>
            </div>
            <div class="status" id="hover-info">{info}</div>
            {brush_info}
            <p class="explain">"Each space projected on its own two main axes. Hover a sample: it and its k nearest neighbours are ringed in both spaces. Drag a rectangle on either plot: the samples inside turn red in both, their neighbours in each space are ringed, and the selection's mean mutual k-NN is shown (the table's mutual_knn is the mean over all samples). Aligned representations keep the same neighbours even when the pictures look rotated."</p>
        </div>
    }
}

/// The fitted rotation: computed with the analysis for narrow embeddings, on request for
/// wide ones (see [`EAGER_ROTATION_WIDTH`]).
#[component]
fn RotationCard(an: Arc<Analysis>) -> impl IntoView {
    let fitted = RwSignal::new(an.align.clone());
    let busy = RwSignal::new(false);
    let (a, b, la, lb) = an.inputs.clone();
    let (da, db) = (a.d, b.d);
    let request = move |_| {
        busy.set(true);
        let (a, b) = (a.clone(), b.clone());
        set_timeout(
            move || {
                fitted.set(Some(fit_rotation(&a, &b, la, lb)));
                busy.set(false);
            },
            std::time::Duration::from_millis(30),
        );
    };
    move || {
        match fitted.get() {
        None => view! {
            <div class="card">
                <h2>"Procrustes rotation"</h2>
                <p class="explain">{format!("Fitting Q takes an SVD of a {da}×{db} matrix: seconds in this browser for wide embeddings.")}</p>
                <button id="fit-rotation" on:click=request.clone() disabled=move || busy.get()>
                    {move || if busy.get() { "fitting…" } else { "Fit the rotation" }}
                </button>
            </div>
        }
        .into_any(),
        Some((Err(e), _)) => view! { <div class="card"><h2>"Procrustes rotation"</h2><pre class="error" id="error-rotation">{e}</pre></div> }.into_any(),
        Some((Ok(al), ms)) => view! { <RotationFigure al=al ms=ms /> }.into_any(),
    }
    }
}

/// A report's warnings (degenerate inputs, ties) as a list with element id `id`; nothing
/// when there are none.
fn warning_list(id: &'static str, warnings: &[String]) -> Option<impl IntoView + use<>> {
    (!warnings.is_empty()).then(|| {
        let items: Vec<String> = warnings.iter().map(|w| format!("warning: {w}")).collect();
        view! {
            <ul class="warnings" id=id>
                {items.into_iter().map(|w| view! { <li class="error">{w}</li> }).collect_view()}
            </ul>
        }
    })
}

/// The fitted rotation as a heatmap, with retrieval through it.
#[component]
fn RotationFigure(al: AlignReport, ms: f64) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let q = al.fit.q.clone();
    let (rows, cols) = (q.nrows(), q.ncols());
    let data = linalg::to_row_major(q.as_ref());
    let data2 = data.clone();
    Effect::new(move |_| {
        if let Some(c) = canvas.get() {
            draw::heatmap(&c, rows, cols, &data2, true, None);
        }
    });
    let data3 = data.clone();
    let vector = Callback::new(move |_| {
        svg::heatmap(260.0, 260.0, (rows, cols), &data3, true, None).finish()
    });
    let line = |name: &str, s: &prh_core::measure::retrieval::RetrievalScores| {
        view! { <tr><td>{name.to_string()}</td><td>{fmt(s.r1)}</td><td>{fmt(s.r5)}</td><td>{fmt(s.r10)}</td><td>{format!("{:.1}", s.mean_rank)}</td></tr> }
    };
    let json_al = serde_json::json!({ "q_rows": rows, "q_cols": cols, "q": data, "a_to_b": al.a_to_b, "b_to_a": al.b_to_a, "chance": al.chance, "n_fit": al.n_fit, "n_test": al.n_test, "ties": prh_core::measure::retrieval::TIE_RULE, "warnings": al.warnings });
    let warnings = al.warnings.clone();
    let json = Callback::new(move |_| json_al.clone());
    view! {
        <div class="card">
            <h2>"Procrustes rotation "<span class="status">{format!("({ms:.0} ms)")}</span><ExportButtons canvas=canvas vector=vector numbers=json name="rotation" /></h2>
            <canvas node_ref=canvas id="rotation-canvas" width="260" height="260"></canvas>
            <table class="metrics" id="retrieval-table">
                <tr><th>"direction"</th><th>"R@1"</th><th>"R@5"</th><th>"R@10"</th><th>"mean rank"</th></tr>
                {line("A → B", &al.a_to_b)}
                {line("B → A", &al.b_to_a)}
                {line("chance", &al.chance)}
            </table>
            <p class="explain">{format!(
                "The orthogonal Q minimising ||A Q − B|| (shown {rows}×{cols}, red > 0 > blue), fitted on the first {} pairs; retrieval ranks the {} held-out samples through it. The theorem says good-view encoders differ by exactly such a rotation.",
                al.n_fit, al.n_test
            )}</p>
            <p class="explain">"Ties are ranked as a random tie-break would rank them, in expectation, so a collapsed embedding scores chance, never a perfect R@1."</p>
            {warning_list("retrieval-warnings", &warnings)}
        </div>
    }
}
