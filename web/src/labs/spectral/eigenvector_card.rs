//! The eigenvector card: the selected eigenvector as a feature of the observations,
//! f_j = D^-1/2 u_j.

use super::compute::Lab;
use super::figures::NUMBERS_UP_TO;
use crate::figures::draw::{self, BarMarks};
use crate::figures::export::ExportButtons;
use crate::figures::numbers;
use crate::figures::svg;
use leptos::html::Canvas;
use leptos::prelude::*;
use prh_core::linalg::Matrix;
use std::sync::Arc;

/// Column j of the representation F = D^-1/2 U: f_j(x) = u_j(x) / sqrt(p(x)), the feature
/// an optimal encoder assigns to observation x along eigenvector j (paper §2). The plain
/// eigenvector u_j = sqrt(p) f_j also varies with how often each observation occurs (the
/// nuisance's q(u) under good views), so only f_j is constant where the kernel cannot
/// tell observations apart.
///
/// # Shapes
/// `vectors [n, n]`, `p [n]` -> `[n]`
pub fn feature_column(vectors: &Matrix, p: &[f64], j: usize) -> Vec<f64> {
    (0..vectors.nrows())
        .map(|i| vectors[(i, j)] / p[i].sqrt())
        .collect()
}

/// The selected eigenvector as a feature of the observations: f_j = D^-1/2 u_j.
#[component]
pub fn EigenvectorCard(lab: Arc<Lab>, selected: RwSignal<Option<usize>>) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let n = lab.names.len();
    let default = (lab.spectrum.trivial_index + 1).min(n.saturating_sub(1));
    let column = {
        let lab = lab.clone();
        move || {
            let j = selected.get().filter(|&j| j < n).unwrap_or(default);
            (j, feature_column(&lab.spectrum.vectors, &lab.spectrum.p, j))
        }
    };
    // Scaled to the largest entry, so every eigenvector fills the [-1, 1] axis.
    let scaled = |v: Vec<f64>| {
        let m = v.iter().fold(0.0_f64, |m, x| m.max(x.abs())).max(1e-300);
        v.iter().map(|x| x / m).collect::<Vec<f64>>()
    };
    let col2 = column.clone();
    Effect::new(move |_| {
        let (_, v) = col2();
        if let Some(c) = canvas.get() {
            draw::bars(&c, &scaled(v), &BarMarks::plain());
        }
    });
    let col4 = column.clone();
    let vector = Callback::new(move |_| {
        let (_, v) = untrack(&col4);
        svg::bars(440.0, 140.0, &scaled(v), &BarMarks::plain()).finish()
    });
    let col3 = column.clone();
    let col5 = column.clone();
    let json = {
        let (col, lab) = (column.clone(), lab.clone());
        Callback::new(move |_| {
            let (j, f) = col();
            let u: Vec<f64> = (0..n).map(|i| lab.spectrum.vectors[(i, j)]).collect();
            serde_json::json!({ "index": j, "eigenvalue": lab.spectrum.values[j], "names": lab.names, "feature_f": f, "eigenvector_u": u })
        })
    };
    let names = lab.names.clone();
    let values = lab.spectrum.values.clone();
    view! {
        <div class="card">
            <h2>{move || { let (j, _) = column(); format!("Feature {j}: F = D^−1/2 u_{j} (λ = {})", numbers::fixed(values[j], 4)) }}<ExportButtons canvas=canvas vector=vector numbers=json name="eigenvector" /></h2>
            <canvas node_ref=canvas id="eigenvector-canvas" width="440" height="140"
                data-feature=move || serde_json::to_string(&col5().1).unwrap_or_default()></canvas>
            {move || (n <= NUMBERS_UP_TO).then(|| {
                let (_, v) = col3();
                view! { <div class="scroll"><table class="nums" id="feature-table">
                    <tr><th style="text-align:left">"observation"</th><th>"f(x) = u(x)/√p(x)"</th></tr>
                    {names.iter().zip(v).map(|(name, x)| view! { <tr><th style="text-align:left">{name.clone()}</th><td>{numbers::signed(x, 4)}</td></tr> }).collect_view()}
                </table></div> }
            })}
            <p class="explain">
                "What is plotted: the column of the optimal representation F = D^−1/2 U for this
                 eigenvector, f(x) = u(x)/√p(x) — the value an optimal encoder gives observation x
                 (state|nuisance) along this direction — one bar per observation, scaled to its largest
                 entry (the table gives the unscaled values). The eigenvector u itself is √p times this
                 and also varies with how often each observation occurs. Observations with equal bars are
                 ones the kernel cannot tell apart along this direction. Under good views the top
                 features are constant across the nuisances of a state; under bad views some top
                 features vary with the nuisance — the representation then encodes it."
            </p>
        </div>
    }
}
