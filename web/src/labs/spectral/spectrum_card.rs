//! The spectrum card: K's eigenvalues as bars, the top-d window, the gap and the
//! eigenvalue-1 multiplicity (connected components); a click picks an eigenvector.

use super::compute::Lab;
use crate::figures::draw::{self, BarMarks};
use crate::figures::export::ExportButtons;
use crate::figures::numbers;
use crate::figures::svg;
use crate::widgets::lang::{Lang, t};
use leptos::html::Canvas;
use leptos::prelude::*;
use std::sync::Arc;
use wasm_bindgen::JsCast;

/// Multiplicity of eigenvalue 1 in a decreasing spectrum of K: the number of connected
/// components of the positive-pair graph (K = D^-1/2 Pi D^-1/2 is similar to the random
/// walk D^-1 Pi, whose eigenvalue-1 space is spanned by the components' indicators).
/// Counted within the tolerance the core uses to place sqrt(p) in that space.
pub fn eigenvalue_one_multiplicity(values: &[f64]) -> usize {
    values.iter().take_while(|&&v| v >= 1.0 - 1e-9).count()
}

/// The eigenvalue bars: top-d window dark, trivial pair grey, the gap dashed; a click picks
/// an eigenvector. Words in `lang` (the lesson's; English in the spectral tab).
#[component]
pub fn SpectrumCard(
    lab: Arc<Lab>,
    selected: RwSignal<Option<usize>>,
    #[prop(optional, into)] lang: Signal<Lang>,
) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let s = &lab.settings;
    let window_end = if s.skip_trivial {
        lab.spectrum.trivial_index + 1 + s.d
    } else {
        s.d
    };
    let values = lab.spectrum.values.clone();
    let gap = lab.spectrum.gap(s.d, s.skip_trivial).ok().flatten();
    let trivial = s.skip_trivial.then_some(lab.spectrum.trivial_index);
    let marks = move |sel: Option<usize>, n: usize| BarMarks {
        top: window_end.min(n),
        selected: sel,
        trivial,
        y_range: (-1.0, 1.0),
    };
    let vals = values.clone();
    Effect::new(move |_| {
        let sel = selected.get();
        if let Some(c) = canvas.get() {
            draw::bars(&c, &vals, &marks(sel, vals.len()));
        }
    });
    let vals = values.clone();
    let vector = Callback::new(move |_| {
        svg::bars(
            440.0,
            170.0,
            &vals,
            &marks(selected.get_untracked(), vals.len()),
        )
        .finish()
    });
    let n = values.len();
    let on_click = move |ev: web_sys::MouseEvent| {
        if let Some(c) = canvas.get() {
            selected.set(draw::bar_at(&c, n, ev.offset_x() as f64));
        }
    };
    let json = spectrum_json(&lab, gap);
    let components = eigenvalue_one_multiplicity(&values);
    let d = s.d;
    view! {
        <div class="card">
            <h2>{t("Spectrum of K", "K의 스펙트럼").on(lang)}<ExportButtons canvas=canvas vector=vector numbers=json name="spectrum" lang=lang /></h2>
            <canvas node_ref=canvas id="spectrum-canvas" width="440" height="170" on:click=on_click style="cursor:pointer"></canvas>
            <div class="status">{move || gap_line(gap, d, lang.get())}</div>
            {(components > 1).then(|| view! { <ComponentsNote components=components lang=lang /> })}
            <ValueList values=values selected=selected lang=lang />
            <SpectrumExplain lang=lang />
        </div>
    }
}

/// The spectrum card's JSON export: the eigenvalues, the window (d, skip_trivial, the
/// trivial index) and the gap.
fn spectrum_json(lab: &Lab, gap: Option<f64>) -> Callback<(), serde_json::Value> {
    let s = &lab.settings;
    let (values, d, skip, t) = (
        lab.spectrum.values.clone(),
        s.d,
        s.skip_trivial,
        lab.spectrum.trivial_index,
    );
    Callback::new(
        move |_| serde_json::json!({ "eigenvalues": values, "d": d, "skip_trivial": skip, "trivial_index": t, "gap": gap }),
    )
}

/// The status line under the bars: the gap after the top `d`, or that there is none, in
/// `lang`.
fn gap_line(gap: Option<f64>, d: usize, lang: Lang) -> String {
    match (gap, lang) {
        (Some(g), Lang::En) => format!(
            "spectral gap after the top {d}: {}{}",
            numbers::fixed(g, 6),
            if g > 1e-9 {
                ""
            } else {
                " — zero: the representation is not unique"
            }
        ),
        (Some(g), Lang::Ko) => format!(
            "상위 {d}개 다음의 스펙트럼 간격: {}{}",
            numbers::fixed(g, 6),
            if g > 1e-9 {
                ""
            } else {
                " — 0: 표현이 유일하지 않습니다"
            }
        ),
        (None, l) => t(
            "no eigenvalue after the window: no gap",
            "상위 d개 다음에 고유값이 없어 간격도 없습니다",
        )
        .get(l)
        .to_string(),
    }
}

/// What the bars show and what the theorem says about them, in `lang`.
#[component]
fn SpectrumExplain(lang: Signal<Lang>) -> impl IntoView {
    view! {
        <p class="explain">{t(
            "K's eigenvalues lie in [−1, 1]. The largest is always 1, with eigenvector √p: it is the \
             \"trivial\" direction (grey) and says nothing about which state you are in. Eigenvalue 1 \
             is repeated once per connected component of the positive-pair graph (a world whose \
             clusters never pair with each other has one per cluster). The next d \
             eigenvectors (dark) span the optimal d-dimensional representation F = D^−1/2 U_d. If the \
             gap after them (red dashed line) is positive, every optimal encoder equals F up to a \
             rotation — the theorem. Click a bar to colour the states by its eigenvector.",
            "K의 고유값은 [−1, 1] 안에 있습니다. 가장 큰 고유값은 언제나 1이고 그 고유벡터는 √p입니다. \
             이것이 \"자명한\" 방향(회색)으로, 어느 상태에 있는지에 대해 아무것도 알려 주지 않습니다. \
             고유값 1은 양성 쌍 그래프의 연결 성분마다 한 번씩 반복됩니다 (군집끼리 서로 짝지어지지 않는 \
             세계는 군집마다 하나씩 가집니다). 그다음 d개의 고유벡터(진한 색)가 최적의 d 차원 표현 \
             F = D^−1/2 U_d를 생성합니다. 그 뒤의 간격(빨간 점선)이 양수이면, 모든 최적 인코더는 회전을 \
             제외하면 F와 같습니다. 이것이 정리입니다. 막대를 클릭하면 그 고유벡터로 상태를 색칠합니다.",
        ).on(lang)}</p>
    }
}

/// What a repeated eigenvalue 1 means: one connected component of the positive-pair
/// graph each (`components` > 1), in `lang`.
#[component]
fn ComponentsNote(components: usize, lang: Signal<Lang>) -> impl IntoView {
    view! {
        <p class="status warn" id="components-note" data-components=components.to_string()>{move || match lang.get() {
            Lang::Ko => format!(
            "고유값 1이 {components}번 나타납니다: 양성 쌍 그래프에 연결 성분이 {components}개 있습니다 (양성 쌍의 사슬로 이어지지 않는 관측들의 무리). K는 성분마다 고유값 1의 고유벡터를 하나씩 가지며, 그것은 그 성분으로 제한한 √p입니다. √p 자체는 이들의 합이고, 그 {components}차원 공간의 어떤 정규직교 기저도 다른 기저만큼 타당합니다. \"자명한 쌍 건너뛰기\"는 √p만 뺍니다. 풀이기가 돌려준 나머지 {}개의 고유값 1 벡터는 성분 지시 벡터들의 임의의 혼합이어서, 관측이 어느 성분에 속하는지만 알려 줄 뿐 그보다 자세한 것은 알려 주지 않습니다. 연결된 세계 (ring, grid, scenes)를 고르면 고유값 1이 하나만 보입니다.",
            components - 1
            ),
            Lang::En => format!(
            "Eigenvalue 1 appears {components} times: the positive-pair graph has {components} connected components (groups of observations that no chain of positive pairs links). K has one eigenvalue-1 eigenvector per component, √p restricted to it; √p itself is their sum, and any orthonormal basis of that {components}-dimensional space is as valid as another. \"Skip trivial\" leaves out √p only: the other {} eigenvalue-1 vectors the solver returned are arbitrary mixtures of component indicators, and they say which component an observation is in, nothing finer. Pick a connected world (ring, grid, scenes) to see one eigenvalue 1.",
            components - 1
            ),
        }}</p>
    }
}

/// The eigenvalues as numbers; a click on one selects its eigenvector.
///
/// One string of spans (numbers only, nothing to escape) and one click handler that
/// reads the span's index: at 400 observations, 400 separately built spans with their
/// own listeners were a visible part of redrawing after an alpha change.
/// Long spectra (up to 1,536 observations) are folded after LIST_HEAD values behind
/// "show all", so the card stays readable; data-values always holds every value.
///
/// Titles and the fold button in `lang`.
#[component]
fn ValueList(
    values: Vec<f64>,
    selected: RwSignal<Option<usize>>,
    lang: Signal<Lang>,
) -> impl IntoView {
    let n = values.len();
    let data_values = serde_json::to_string(&values).unwrap_or_default();
    let show_all = RwSignal::new(false);
    let value_spans = move || -> String {
        let word = t("eigenvalue", "고유값").get(lang.get());
        let shown = if show_all.get() {
            values.len()
        } else {
            values.len().min(numbers::LIST_HEAD)
        };
        values[..shown]
            .iter()
            .enumerate()
            .map(|(j, v)| {
                format!(
                    r#"<span class="ev" title="{word} {j}" data-j="{j}">{}</span> "#,
                    numbers::fixed(*v, 6)
                )
            })
            .collect()
    };
    let folded = n > numbers::LIST_HEAD;
    let on_value = move |ev: web_sys::MouseEvent| {
        let j = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|e| e.get_attribute("data-j"))
            .and_then(|j| j.parse::<usize>().ok());
        if j.is_some() {
            selected.set(j);
        }
    };
    view! {
        <div class="eigs" id="eigenvalues" data-values=data_values on:click=on_value inner_html=value_spans></div>
        {folded.then(|| view! {
            <button id="eigs-show-all" class="link" on:click=move |_| show_all.update(|a| *a = !*a)>
                {move || match (show_all.get(), lang.get()) {
                    (true, Lang::En) => format!("show the first {} only", numbers::LIST_HEAD),
                    (true, Lang::Ko) => format!("처음 {}개만 보기", numbers::LIST_HEAD),
                    (false, Lang::En) => format!("show all {n} eigenvalues"),
                    (false, Lang::Ko) => format!("고유값 {n}개 모두 보기"),
                }}
            </button>
        })}
    }
}
