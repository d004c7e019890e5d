//! The clickable drawing of the graph: states coloured by the picked eigenvector (the
//! Fiedler vector by default), pairs as lines whose width is their weight, the Cheeger
//! sweep cut's crossing pairs dashed red. Click empty space: add a state; click a state
//! then another: add that pair (or set its weight); in erase mode a click removes.

use super::Editor;
use crate::figures::draw;
use crate::widgets::lang::{Lang, t};
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

/// The drawing's markup: the background, pairs (`.pair`, `data-a`, `data-b`; self-pairs as
/// rings) and states (`.state`, `data-i`). One string set as the SVG's content, with one
/// click handler on the SVG ([`GraphCanvas`]): at 200 states and ~370 pairs, building each
/// element with its own listener cost more than the analysis of an edit.
fn markup(ed: Editor) -> String {
    use std::fmt::Write;
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
    let (pair_word, weight_word) = match ed.lang.get() {
        Lang::En => ("pair", "weight"),
        Lang::Ko => ("쌍", "가중치"),
    };
    let mut out =
        format!(r##"<rect class="bg" x="0" y="0" width="{W}" height="{H}" fill="#fbfbfd"/>"##);
    // Writing to a String cannot fail.
    for e in &g.edges {
        let ((x1, y1), (x2, y2)) = (px(e.a), px(e.b));
        let (a, b, w) = (e.a, e.b, e.w);
        if a == b {
            let _ = write!(
                out,
                r##"<circle class="pair self-pair" data-a="{a}" data-b="{b}" cx="{x1:.1}" cy="{:.1}" r="{:.1}" fill="none" stroke="#777" stroke-width="{:.2}"><title>{pair_word} {a}–{b}, {weight_word} {w}</title></circle>"##,
                y1 - r,
                r * 0.8,
                1.0 + 3.0 * w / top_w
            );
        } else {
            let crossing = cut.contains(&a) != cut.contains(&b);
            let _ = write!(
                out,
                r##"<line class="pair{}" data-a="{a}" data-b="{b}" x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{}" stroke-dasharray="{}" stroke-width="{:.2}"><title>{pair_word} {a}–{b}, {weight_word} {w}</title></line>"##,
                if crossing { " cut" } else { "" },
                if crossing { "#d62728" } else { "#777" },
                if crossing { "5 3" } else { "" },
                1.0 + 4.0 * w / top_w
            );
        }
    }
    let picked = ed.picked.get();
    let (state_word, value_word) = match ed.lang.get() {
        Lang::En => ("state", "value"),
        Lang::Ko => ("상태", "값"),
    };
    for (i, &xi) in x.iter().enumerate().take(n) {
        let (cx, cy) = px(i);
        let (ring, sw) = if picked == Some(i) {
            ("#d62728", 3.0)
        } else {
            ("#333", 1.0)
        };
        let _ = write!(
            out,
            r#"<g class="state" data-i="{i}"><circle cx="{cx:.1}" cy="{cy:.1}" r="{r:.1}" fill="{}" stroke="{ring}" stroke-width="{sw}"><title>{state_word} {i}: {value_word} {:.3}</title></circle>"#,
            draw::css(draw::diverging(xi)),
            xi
        );
        if n <= 40 {
            let _ = write!(
                out,
                r#"<text x="{cx:.1}" y="{:.1}" text-anchor="middle" font-size="10" pointer-events="none">{i}</text>"#,
                cy + 3.5
            );
        }
        out.push_str("</g>");
    }
    out
}

/// The element a click landed on, or its nearest ancestor matching `selector`.
fn clicked(ev: &web_sys::MouseEvent, selector: &str) -> Option<web_sys::Element> {
    let el: web_sys::Element = ev.target()?.dyn_into().ok()?;
    el.closest(selector).ok()?
}

/// A number attribute of an element.
fn attr(el: &web_sys::Element, name: &str) -> Option<usize> {
    el.get_attribute(name)?.parse().ok()
}

/// One click on the drawing: a state, a pair, or empty space.
fn on_click(ed: Editor, ev: &web_sys::MouseEvent) {
    if let Some(i) = clicked(ev, ".state").and_then(|s| attr(&s, "data-i")) {
        click_state(ed, i);
    } else if let Some(p) = clicked(ev, ".pair") {
        if let (true, Some(a), Some(b)) = (
            ed.erase.get_untracked(),
            attr(&p, "data-a"),
            attr(&p, "data-b"),
        ) {
            ed.graph.update(|g| {
                let _ = g.set_pair(a, b, 0.0);
            });
        }
    } else if !ed.erase.get_untracked() {
        if ed.picked.get_untracked().is_some() {
            ed.picked.set(None);
        } else if let Some(pos) = fraction(ev) {
            ed.graph.update(|g| {
                g.add_state(pos);
            });
        }
    }
}

/// The drawing.
#[component]
pub fn GraphCanvas(ed: Editor) -> impl IntoView {
    view! {
        <svg id=ed.id("svg") class="graph-svg" viewBox=format!("0 0 {W} {H}") role="img"
            aria-label=t("the drawn graph: states and positive pairs", "그린 그래프: 상태와 양성 쌍").on(ed.lang)
            on:click=move |ev: web_sys::MouseEvent| on_click(ed, &ev) inner_html=move || markup(ed)>
        </svg>
        <div class="status" id=ed.id("hint")>{move || match (ed.erase.get(), ed.picked.get(), ed.lang.get()) {
            (true, _, lang) => t("Erase mode: click a state or a pair to remove it.", "지우기 모드: 지울 상태나 쌍을 클릭하세요.").get(lang).to_string(),
            (false, Some(a), Lang::En) => format!("State {a} picked: click another state to join them (weight {}), or empty space to cancel.", ed.weight.get()),
            (false, Some(a), Lang::Ko) => format!("상태 {a} 선택됨: 다른 상태를 클릭하면 둘을 잇고 (가중치 {}), 빈 곳을 클릭하면 취소합니다.", ed.weight.get()),
            (false, None, lang) => t(
                "Click empty space to add a state; click two states to join them. Colour: the picked eigenvector (Fiedler by default), red–blue by sign.",
                "빈 곳을 클릭하면 상태가 추가되고, 두 상태를 차례로 클릭하면 둘이 이어집니다. 색: 고른 고유벡터 (기본은 피들러 벡터), 부호에 따라 빨강–파랑.",
            ).get(lang).to_string(),
        }}</div>
    }
}
