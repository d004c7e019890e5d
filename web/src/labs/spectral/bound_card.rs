//! The bound card: measured sin Θ next to the Davis–Kahan and Yu–Wang–Samworth bounds.

use super::compute::Lab;
use super::figures::fmt_opt;
use crate::figures::draw;
use crate::figures::export::ExportButtons;
use crate::figures::numbers;
use crate::figures::svg;
use leptos::html::Canvas;
use leptos::prelude::*;
use std::sync::Arc;

/// Whether a bound holds for the `measured` sin Θ: "holds", "violated", "not applicable"
/// without a gap, or "holds, vacuous" when the bound is at or above `ceiling`, the
/// largest sin Θ can be: 1 in the operator norm, sqrt(d) in the Frobenius norm (d angles,
/// each sine <= 1). A bound that high holds whatever happened, and a green "holds" would
/// suggest it told us something.
fn verdict(bound: Option<f64>, measured: f64, ceiling: f64, norm: &str) -> AnyView {
    match bound {
        Some(x) if x >= ceiling => {
            let why = format!(
                "holds, vacuous: the bound is ≥ {} and {norm} sin Θ ≤ {} always",
                numbers::fixed(ceiling, 2),
                numbers::fixed(ceiling, 2)
            );
            view! { <span class="bound-vacuous" data-ceiling=ceiling.to_string()>{why}</span> }
                .into_any()
        }
        Some(x) if measured <= x + 1e-12 => {
            view! { <span class="bound-ok">"holds"</span> }.into_any()
        }
        Some(_) => view! { <span class="bound-bad">"violated"</span> }.into_any(),
        None => view! { <span>"not applicable: the gap is not positive"</span> }.into_any(),
    }
}

/// Measured sin-theta next to the Davis–Kahan and Yu–Wang–Samworth bounds.
#[component]
pub fn BoundCard(lab: Arc<Lab>) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let b = lab.bounds.clone();
    let bars: Vec<(&str, Option<f64>, &str)> = vec![
        ("sin Θ (op)", Some(b.sin_theta_op), "#1f4e9c"),
        ("Davis–Kahan", b.davis_kahan_bound, "#d62728"),
        ("sin Θ (Frobenius)", Some(b.sin_theta_fro), "#4e79a7"),
        ("Yu–Wang–Samworth", b.yws_bound, "#f28e2b"),
    ];
    let bars2 = bars.clone();
    Effect::new(move |_| {
        if let Some(c) = canvas.get() {
            draw::labelled_bars(&c, &bars2);
        }
    });
    let fro_ceiling = (b.d as f64).sqrt();
    let vector = Callback::new(move |_| svg::labelled_bars(440.0, 120.0, &bars).finish());
    let json_b = serde_json::to_value(&b).unwrap_or_default();
    let json = Callback::new(move |_| json_b.clone());
    view! {
        <div class="card">
            <h2>"Misalignment and its bound"<ExportButtons canvas=canvas vector=vector numbers=json name="bounds" /></h2>
            <canvas node_ref=canvas id="bounds-canvas" width="440" height="120"></canvas>
            <table class="metrics" id="bounds-table">
                <tr><td>"sin Θ, operator norm"</td><td id="sin-theta-op">{numbers::fixed(b.sin_theta_op, 6)}</td><td></td></tr>
                <tr><td>"Davis–Kahan ||(K₂−K₁)U₁|| / δ"</td><td id="dk-bound" data-value=b.davis_kahan_bound.map(|v| v.to_string()).unwrap_or_default()>{fmt_opt(b.davis_kahan_bound)}</td><td id="dk-verdict">{verdict(b.davis_kahan_bound, b.sin_theta_op, 1.0, "operator-norm")}</td></tr>
                <tr><td>"sin Θ, Frobenius"</td><td>{numbers::fixed(b.sin_theta_fro, 6)}</td><td></td></tr>
                <tr><td>"Yu–Wang–Samworth"</td><td id="yws-bound" data-value=b.yws_bound.map(|v| v.to_string()).unwrap_or_default()>{fmt_opt(b.yws_bound)}</td><td id="yws-verdict">{verdict(b.yws_bound, b.sin_theta_fro, fro_ceiling, "Frobenius")}</td></tr>
                <tr><td>"||K₂ − K₁|| (op), gap δ"</td><td>{format!("{}, {}", numbers::fixed(b.e_op, 4), numbers::fixed(b.davis_kahan_gap, 4))}</td><td></td></tr>
            </table>
            <p class="explain">
                "How far the good-view representation (K₁) moves when a share α of the positive pairs are
                 bad views (K₂): sin Θ is the sine of the largest angle between the two top-d subspaces
                 (0 = same subspace, 1 = orthogonal). Davis–Kahan bounds it by how much the kernel
                 changed divided by the spectral gap: a large gap makes the representation robust, a
                 small one lets it swing."
            </p>
        </div>
    }
}
