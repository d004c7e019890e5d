//! The alignment lab's Procrustes card: the fitted rotation as a heatmap and retrieval
//! through it, fitted with the analysis for narrow embeddings and on request for wide ones.

use super::compute::{Analysis, fit_rotation};
use super::results::{fmt, warning_list};
use crate::figures::draw;
use crate::figures::export::ExportButtons;
use crate::figures::svg;
use leptos::prelude::*;
use prh_core::linalg;
use prh_core::measure::retrieval::AlignReport;
use std::sync::Arc;

/// The fitted rotation: computed with the analysis for narrow embeddings, on request for
/// wide ones (see [`super::compute::EAGER_ROTATION_WIDTH`]).
#[component]
pub fn RotationCard(an: Arc<Analysis>) -> impl IntoView {
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
