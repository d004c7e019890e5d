//! The clickable drawing of the graph: states coloured by the picked eigenvector (the
//! Fiedler vector by default), pairs as lines whose width is their weight, the Cheeger
//! sweep cut's crossing pairs dashed red. Click empty space: add a state; click a state
//! then another: add that pair (or set its weight); in erase mode a click removes.

use super::Editor;
use crate::figures::draw;
use leptos::prelude::*;
use prh_core::theory::graph::GraphAnalysis;
use wasm_bindgen::JsCast;

/// The drawing's size in user units (it scales with the card).
const W: f64 = 460.0;
const H: f64 = 340.0;

/// A state's radius: large for a handful, small for hundreds.
fn radius(n: usize) -> f64 {
    (60.0 / (n.max(1) as f64).sqrt()).clamp(4.0, 16.0)
}

/// The picked eigenvector's value per drawn state (0 for states left out of the
/// analysis), scaled to max |x| = 1, and the index it is.
fn colours(a: &GraphAnalysis, n: usize, pick: Option<usize>) -> (Vec<f64>, usize) {
    let sp = &a.spectrum;
    let j = pick
        .filter(|&j| j < sp.n())
        .unwrap_or((sp.trivial_index + 1).min(sp.n() - 1));
    let mut x = vec![0.0; n];
    for (r, &s) in a.states.iter().enumerate() {
        // D^-1/2 u: the function on states the eigenvector stands for.
        x[s] = sp.vectors[(r, j)] / a.kernel.p[r].sqrt();
    }
    let top = x.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    if top > 0.0 {
        x.iter_mut().for_each(|v| *v /= top);
    }
    (x, j)
}

/// The click position in the drawing's units, as a fraction of its width and height.
fn fraction(ev: &web_sys::MouseEvent) -> Option<(f64, f64)> {
    let el: web_sys::Element = ev.current_target()?.dyn_into().ok()?;
    let svg = el.closest("svg").ok()??;
    let r = svg.get_bounding_client_rect();
    if r.width() <= 0.0 || r.height() <= 0.0 {
        return None;
    }
    Some((
        ((ev.client_x() as f64 - r.left()) / r.width()).clamp(0.02, 0.98),
        ((ev.client_y() as f64 - r.top()) / r.height()).clamp(0.02, 0.98),
    ))
}

/// A click on state `i`: erase it, or pick it / draw a pair from the picked state.
fn click_state(ed: Editor, i: usize) {
    if ed.erase.get_untracked() {
        ed.picked.set(None);
        ed.vector.set(None);
        ed.graph.update(|g| g.remove_state(i));
        return;
    }
    match ed.picked.get_untracked() {
        None => ed.picked.set(Some(i)),
        Some(a) if a == i => ed.picked.set(None),
        Some(a) => {
            let w = ed.weight.get_untracked();
            ed.graph.update(|g| {
                let _ = g.set_pair(a, i, w);
            });
            ed.picked.set(None);
        }
    }
}

/// The drawing.
#[component]
pub fn GraphCanvas(ed: Editor) -> impl IntoView {
    let on_background = move |ev: web_sys::MouseEvent| {
        if ed.erase.get_untracked() {
            return;
        }
        if ed.picked.get_untracked().is_some() {
            ed.picked.set(None);
            return;
        }
        if let Some(pos) = fraction(&ev) {
            ed.graph.update(|g| {
                g.add_state(pos);
            });
        }
    };
    let body = move || {
        let g = ed.graph.get();
        let n = g.n();
        let r = radius(n);
        let computed = ed.computed.get();
        let (x, cut) = match &computed.result {
            Ok(a) => (
                colours(a, n, ed.vector.get()).0,
                a.cheeger
                    .as_ref()
                    .map(|c| c.cut.clone())
                    .unwrap_or_default(),
            ),
            Err(_) => (vec![0.0; n], Vec::new()),
        };
        let top_w = g.edges.iter().fold(0.0_f64, |m, e| m.max(e.w)).max(1e-12);
        let px = |i: usize| (g.positions[i].0 * W, g.positions[i].1 * H);
        let edges = g
            .edges
            .iter()
            .map(|e| {
                let ((x1, y1), (x2, y2)) = (px(e.a), px(e.b));
                let crossing = cut.contains(&e.a) != cut.contains(&e.b);
                let (a, b, w) = (e.a, e.b, e.w);
                let label = format!("pair {a}–{b}, weight {w}");
                let remove = move |ev: web_sys::MouseEvent| {
                    ev.stop_propagation();
                    if ed.erase.get_untracked() {
                        ed.graph.update(|g| {
                            let _ = g.set_pair(a, b, 0.0);
                        });
                    }
                };
                if a == b {
                    // A self-pair: a ring above the state.
                    view! {
                        <circle class="self-pair" cx=x1 cy=y1 - r r=r * 0.8 fill="none" stroke="#777"
                            stroke-width=1.0 + 3.0 * w / top_w on:click=remove><title>{label}</title></circle>
                    }.into_any()
                } else {
                    view! {
                        <line class=if crossing { "pair cut" } else { "pair" } x1=x1 y1=y1 x2=x2 y2=y2
                            stroke=if crossing { "#d62728" } else { "#777" }
                            stroke-dasharray=if crossing { "5 3" } else { "" }
                            stroke-width=1.0 + 4.0 * w / top_w on:click=remove><title>{label}</title></line>
                    }.into_any()
                }
            })
            .collect_view();
        let picked = ed.picked.get();
        let states = (0..n)
            .map(|i| {
                let (cx, cy) = px(i);
                let fill = draw::css(draw::diverging(x[i]));
                let ring = if picked == Some(i) { "#d62728" } else { "#333" };
                view! {
                    <g class="state" data-i=i.to_string() on:click=move |ev: web_sys::MouseEvent| { ev.stop_propagation(); click_state(ed, i); }>
                        <circle cx=cx cy=cy r=r fill=fill stroke=ring stroke-width=if picked == Some(i) { 3.0 } else { 1.0 }>
                            <title>{format!("state {i}: value {:.3}", x[i])}</title>
                        </circle>
                        {(n <= 40).then(|| view! {
                            <text x=cx y=cy + 3.5 text-anchor="middle" font-size="10" pointer-events="none">{i.to_string()}</text>
                        })}
                    </g>
                }
            })
            .collect_view();
        view! { {edges} {states} }
    };
    view! {
        <svg id=ed.id("svg") class="graph-svg" viewBox=format!("0 0 {W} {H}") role="img"
            aria-label="the drawn graph: states and positive pairs">
            <rect class="bg" x="0" y="0" width=W height=H fill="#fbfbfd" on:click=on_background />
            {body}
        </svg>
        <div class="status" id=ed.id("hint")>{move || match (ed.erase.get(), ed.picked.get()) {
            (true, _) => "Erase mode: click a state or a pair to remove it.".to_string(),
            (false, Some(a)) => format!("State {a} picked: click another state to join them (weight {}), or empty space to cancel.", ed.weight.get()),
            (false, None) => "Click empty space to add a state; click two states to join them. Colour: the picked eigenvector (Fiedler by default), red–blue by sign.".to_string(),
        }}</div>
    }
}
