//! The heatmap cards of Pi and K (optionally in Fiedler order), with numbers for small
//! worlds.

use super::compute::Lab;
use super::figures::{NUMBERS_UP_TO, fiedler_order, rows};
use crate::figures::draw;
use crate::figures::export::ExportButtons;
use crate::figures::svg;
use leptos::html::Canvas;
use leptos::prelude::*;
use std::sync::Arc;

/// Heatmap of Pi or K (optionally in Fiedler order), with numbers for small worlds.
#[component]
pub fn MatrixCard(lab: Arc<Lab>, which: &'static str, fiedler: RwSignal<bool>) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let m = if which == "Pi" {
        &lab.pi
    } else {
        &lab.kernel.k
    };
    let n = m.nrows();
    let data = Arc::new(rows(m));
    let order = Arc::new(fiedler_order(&lab));
    let (d2, o2) = (data.clone(), order.clone());
    Effect::new(move |_| {
        let ord = fiedler.get().then_some(o2.as_slice());
        if let Some(c) = canvas.get() {
            draw::heatmap(&c, n, n, &d2, false, ord);
        }
    });
    let (d3, o3) = (data.clone(), order.clone());
    let vector = Callback::new(move |_| {
        let ord = fiedler.get_untracked().then_some(o3.as_slice());
        svg::heatmap(260.0, 260.0, (n, n), &d3, false, ord).finish()
    });
    let json = {
        let (data, names) = (data.clone(), lab.names.clone());
        Callback::new(
            move |_| serde_json::json!({ "matrix": which, "n": n, "names": names, "row_major": *data }),
        )
    };
    let names = lab.names.clone();
    let numbers = move || {
        (n <= NUMBERS_UP_TO).then(|| {
            let ord: Vec<usize> = if fiedler.get() { order.to_vec() } else { (0..n).collect() };
            let scale = if which == "Pi" { 1000.0 } else { 1.0 };
            view! {
                <div class="scroll"><table class="nums">
                    <tr><th></th>{ord.iter().map(|&j| view! { <th>{j}</th> }).collect_view()}</tr>
                    {ord.iter().map(|&i| view! {
                        <tr><th title=names[i].clone()>{i}</th>{ord.iter().map(|&j| view! { <td>{format!("{:.3}", data[i * n + j] * scale)}</td> }).collect_view()}</tr>
                    }).collect_view()}
                </table></div>
                {(which == "Pi").then(|| view! { <div class="status">"values × 1000"</div> })}
            }
        })
    };
    let explain = if which == "Pi" {
        "Pi(x, x') is the probability that a positive pair shows observations x and x' (an observation is a state with a nuisance, e.g. lighting or wording). Good views pair two independent renderings of a state; bad views (α → 1) pair a rendering with a corruption of itself, so the pair also shares the nuisance: watch the diagonal blocks sharpen."
    } else {
        "K = D^−1/2 Pi D^−1/2 with D = diag(p), p the row sums of Pi: the positive-pair graph normalised by how often each observation occurs. Its top eigenvectors are the directions along which positive pairs agree most — what a JEPA learns."
    };
    view! {
        <div class="card">
            <h2>{if which == "Pi" { "Positive pairs Pi" } else { "Kernel K" }}<ExportButtons canvas=canvas vector=vector numbers=json name=if which == "Pi" { "pi" } else { "kernel" } /></h2>
            <canvas node_ref=canvas id=format!("heatmap-{which}") width="260" height="260"></canvas>
            {numbers}
            <p class="explain">{explain}</p>
        </div>
    }
}
