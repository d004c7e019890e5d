//! The alignment lab's metric cards: the CLI's report as a table with each metric's
//! permutation null, and the histogram of per-point mutual k-NN.

use super::compute::{Analysis, num};
use crate::figures::draw;
use crate::figures::export::ExportButtons;
use crate::figures::svg;
use leptos::html::Canvas;
use leptos::prelude::*;
use std::sync::Arc;

/// Formats a score for the table.
pub fn fmt(x: f64) -> String {
    format!("{x:.6}")
}

/// The table's metrics: (key in the report, value, what it measures).
fn metric_rows(r: &serde_json::Value) -> Vec<(&'static str, f64, &'static str)> {
    vec![
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
    ]
}

/// The permutation-null line under the table (`null` in the CLI's JSON).
fn null_note(r: &serde_json::Value) -> String {
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
}

/// The report's warnings about degenerate inputs and tied neighbour lists.
fn report_warnings(r: &serde_json::Value) -> Vec<String> {
    r["warnings"]
        .as_array()
        .map(|w| {
            w.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The null mutual k-NN's mean ± std, or "—".
fn null_spread(r: &serde_json::Value) -> String {
    match (
        r.get("null_mutual_knn_mean")
            .and_then(serde_json::Value::as_f64),
        r.get("null_mutual_knn_std")
            .and_then(serde_json::Value::as_f64),
    ) {
        (Some(m), Some(s)) => format!("{} ± {}", fmt(m), fmt(s)),
        _ => "—".into(),
    }
}

/// A metric's permutation-null cells: mean ± std, p and the calibrated score.
fn null_cells(r: &serde_json::Value, name: &str) -> impl IntoView + use<> {
    let s = &r["null"][name];
    let cell = |key: &str, id: &str| {
        let v = s[key].as_f64();
        view! { <td id=format!("{id}-{name}") data-value=v.map(|x| x.to_string()).unwrap_or_default()>{v.map_or_else(|| "—".to_string(), fmt)}</td> }
    };
    let spread = match (s["mean"].as_f64(), s["std"].as_f64()) {
        (Some(m), Some(sd)) => format!("{} ± {}", fmt(m), fmt(sd)),
        _ => "—".into(),
    };
    view! { <td>{spread}</td>{cell("p_value", "p")}{cell("calibrated", "calibrated")} }
}

/// The metrics table with the null of each metric, the notes and the report's JSON.
#[component]
pub fn MetricsCard(an: Arc<Analysis>) -> impl IntoView {
    let r = &an.report;
    let (n, k) = (an.knn_a.n, an.knn_a.k);
    let warnings = report_warnings(r);
    let report_json = r.clone();
    view! {
        <div class="card">
            <h2>"Alignment metrics "<span class="status" id="align-ms">{format!("(computed in this browser: metrics {:.0} ms, PCA {:.0} ms)", an.ms[0], an.ms[1])}</span></h2>
            <table class="metrics" id="metrics-table">
                <tr><th>"metric"</th><th>"value"</th><th>"null mean ± std"</th><th>"p"</th><th>"calibrated"</th><th>"meaning"</th></tr>
                {metric_rows(r).into_iter().map(|(name, v, what)| view! {
                    <tr><td>{name}</td><td id=format!("metric-{name}") data-value=v.to_string()>{fmt(v)}</td>{null_cells(r, name)}<td class="explain" style="text-align:left">{what}</td></tr>
                }).collect_view()}
                <tr><td>"null mutual_knn"</td><td id="metric-null">{null_spread(r)}</td><td class="explain" style="text-align:left">"mean ± std over shuffled pairings: the chance level (about k/N)"</td></tr>
            </table>
            <p class="explain">{format!("N = {}, k = {}. Same code and defaults as `prh-native metrics` (outliers clamped at the 0.95 quantile, rows L2-normalised).", n, k)}</p>
            <p class="explain" id="null-note">{null_note(r)}</p>
            {warning_list("metric-warnings", &warnings)}
            <button on:click=move |_| { let _ = crate::figures::export::json(&report_json, "metrics.json"); }>"JSON"</button>
        </div>
    }
}

/// The per-point mutual k-NN card: the histogram and its exports.
#[component]
pub fn PerPointCard(an: Arc<Analysis>) -> impl IntoView {
    let k = an.knn_a.k;
    let hist_canvas = NodeRef::<Canvas>::new();
    let per_point_json = {
        let pp = an.per_point.clone();
        Callback::new(move |_| serde_json::json!({ "mutual_knn_per_point": pp }))
    };
    let (shares, hist_marks) = histogram(&an.per_point, k);
    let hist_svg = Callback::new(move |_| svg::bars(420.0, 120.0, &shares, &hist_marks).finish());
    view! {
        <div class="card">
            <h2>"Per-point mutual k-NN"</h2>
            <p class="explain">"Each sample's own score |N_A(i) ∩ N_B(i)| / k; the table's mutual_knn is their mean. Points in the scatters are coloured by it (dark = neighbours agree)."</p>
            <PerPointHistogram canvas=hist_canvas values=an.per_point.clone() k=k />
            <ExportButtons canvas=hist_canvas vector=hist_svg numbers=per_point_json name="mutual_knn_per_point" />
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
fn PerPointHistogram(canvas: NodeRef<Canvas>, values: Vec<f64>, k: usize) -> impl IntoView {
    let (shares, marks) = histogram(&values, k);
    Effect::new(move |_| {
        if let Some(c) = canvas.get() {
            draw::bars(&c, &shares, &marks);
        }
    });
    view! { <canvas node_ref=canvas width="420" height="120"></canvas><div class="status">"share of samples with 0, 1, …, k shared neighbours"</div> }
}

/// A report's warnings (degenerate inputs, ties) as a list with element id `id`; nothing
/// when there are none.
pub fn warning_list(id: &'static str, warnings: &[String]) -> Option<impl IntoView + use<>> {
    (!warnings.is_empty()).then(|| {
        let items: Vec<String> = warnings.iter().map(|w| format!("warning: {w}")).collect();
        view! {
            <ul class="warnings" id=id>
                {items.into_iter().map(|w| view! { <li class="error">{w}</li> }).collect_view()}
            </ul>
        }
    })
}
