//! The convergence card (issue 19, item 4): how trained encoders approach the predicted
//! representation F, step by step, from an exported `prh-native demo` run. The curves and
//! the figure come from `prh_core::experiments::convergence`, the code behind the demo's
//! own `convergence.svg`, so the page and the report folder show the same lines.

use crate::figures::export;
use crate::figures::numbers;
use crate::widgets::files::{fetch_asset, picked_file};
use leptos::prelude::*;
use prh_core::experiments::convergence::{EncoderCurve, convergence_svg, curves_from_results_json};

/// The demo run shipped with the page (`prh-native demo`'s results.json, web/make_demo.sh).
const SHIPPED: &str = "assets/demo_results.json";

/// Loaded curves with where they came from, or the error that stopped them.
type Loaded = Option<Result<(String, Vec<EncoderCurve>), String>>;

/// Parses a results.json's bytes into its curves (errors name the file and the field).
fn parse(name: &str, bytes: &[u8]) -> Result<(String, Vec<EncoderCurve>), String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("{name}: not UTF-8 text ({e})"))?;
    curves_from_results_json(name, text)
        .map(|c| (name.to_string(), c))
        .map_err(|e| e.to_string())
}

/// The last evaluation's (CKA, sin-theta) of a curve, if it has one.
fn last(c: &EncoderCurve) -> Option<(f64, f64)> {
    c.curve
        .last()
        .map(|p| (p.cka_to_theory, p.sin_theta_to_theory))
}

/// The figure, the final numbers per encoder and the export button.
#[component]
fn CurvesView(source: String, curves: Vec<EncoderCurve>) -> impl IntoView {
    let markup = convergence_svg(&curves);
    let for_download = markup.clone();
    let rows = curves
        .iter()
        .map(|c| {
            let (cka, sin) = last(c).map_or(("–".into(), "–".into()), |(a, b)| {
                (numbers::fixed(a, 3), numbers::fixed(b, 3))
            });
            let stop = if c.plateau { "plateau" } else { "budget" };
            view! {
                <tr class="conv-row" data-label=c.label.clone()>
                    <td>{c.label.clone()}</td><td>{format!("{} ({stop})", c.steps)}</td>
                    <td class="conv-cka">{cka}</td><td class="conv-sin">{sin}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <p class="status" id="convergence-source" data-encoders=curves.len().to_string()>
            {format!("{source}: {} encoders", curves.len())}
            " "<button id="export-convergence-svg" on:click=move |_| { let _ = export::svg(&for_download, "convergence.svg"); }>"SVG"</button>
        </p>
        <div id="convergence-figure" inner_html=markup></div>
        <table class="metrics" id="convergence-table">
            <tr><th>"encoder"</th><th>"steps (stopped by)"</th><th>"CKA with F"</th><th>"sin Θ to span(F)"</th></tr>
            {rows}
        </table>
    }
}

/// Learned vs predicted during training: load a demo run's results.json (or the shipped one).
#[component]
pub fn ConvergenceCard() -> impl IntoView {
    let loaded = RwSignal::new(Loaded::None);
    let load_shipped = move |_| {
        leptos::task::spawn_local(async move {
            let r = match fetch_asset(SHIPPED).await {
                Ok(bytes) => parse("demo_results.json (shipped)", &bytes),
                Err(e) => Err(e),
            };
            loaded.set(Some(r));
        });
    };
    let on_pick = move |ev: web_sys::Event| {
        leptos::task::spawn_local(async move {
            if let Some(r) = picked_file(ev).await {
                loaded.set(Some(r.and_then(|(name, bytes)| parse(&name, &bytes))));
            }
        });
    };
    view! {
        <div class="card">
            <h2>"Learned encoders approaching the prediction"</h2>
            <p>
                <button id="conv-load-demo" on:click=load_shipped>"Load the shipped demo run"</button>
                " or a results.json written by " <code>"prh-native demo"</code> ": "
                <input type="file" id="conv-file" accept=".json" on:change=on_pick />
            </p>
            {move || match loaded.get() {
                None => ().into_any(),
                Some(Err(e)) => view! { <pre class="error" id="error-convergence">{e}</pre> }.into_any(),
                Some(Ok((source, curves))) => view! { <CurvesView source=source curves=curves /> }.into_any(),
            }}
            <p class="explain">
                "Each line is one encoder trained by the demo (solid: pictures or image symbols,
                 dashed: captions or caption symbols), evaluated every 50 steps on one uncorrupted
                 view of every state: left, its CKA with the predicted representation F = D^-1/2 U_d
                 of its own modality's kernel (1 = the prediction reached, up to a rotation); right,
                 the sine of the largest principal angle between its top-d subspace and span(F)
                 (0 = every predicted direction learned, 1 = one missed entirely)."
            </p>
        </div>
    }
}
