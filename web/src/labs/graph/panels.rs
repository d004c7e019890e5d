//! The figures beside the drawing (what the theory says about the graph, heatmaps of Pi
//! and K, the spectrum with the Rayleigh quotient of the picked eigenvector, Cheeger's
//! bounds) and the keyboard way to edit (a form for pairs and states, the world as JSON).

use super::{Editor, Show};
use crate::figures::draw::{self, BarMarks};
use crate::figures::numbers;
use crate::widgets::lang::{Lang, Text, t};
use leptos::html::Canvas;
use leptos::prelude::*;
use prh_core::linalg::{self, Matrix};
use prh_core::theory::graph::{Graph, GraphAnalysis};
use prh_core::theory::theorem::compare;
use std::sync::Arc;

/// The figures of `show` for the editor's current analysis, or the reason there is none.
#[component]
pub fn Figures(ed: Editor, show: Show) -> impl IntoView {
    view! {
        <div class="graph-figures">
            {move || {
                let c = ed.computed.get();
                match c.result {
                    Err(e) => view! {
                        <p class="error" id=ed.id("error") role="alert">{e}</p>
                    }.into_any(),
                    Ok(a) => view! { <Analysis ed=ed a=a ms=c.ms show=show /> }.into_any(),
                }
            }}
        </div>
    }
}

/// The notes, the summary line and the chosen figures of one analysis.
#[component]
fn Analysis(ed: Editor, a: Arc<GraphAnalysis>, ms: f64, show: Show) -> impl IntoView {
    let notes = a
        .notes
        .iter()
        .map(|n| view! { <p class="status warn graph-note">{n.explain()}</p> })
        .collect_view();
    let values = serde_json::to_string(&a.spectrum.values).unwrap_or_default();
    let pairs = ed.graph.with_untracked(|g| g.edges.len());
    let states = a.states.len();
    let summary = move || match ed.lang.get() {
        Lang::En => format!(
            "{states} states analysed · {pairs} pairs · computed in {ms:.1} ms in this browser"
        ),
        Lang::Ko => {
            format!("상태 {states}개 분석 · 쌍 {pairs}개 · 이 브라우저에서 {ms:.1} ms에 계산")
        }
    };
    view! {
        <div id=ed.id("notes")>{notes}</div>
        <div class="status" id=ed.id("summary") data-ms=ms.to_string() data-states=a.states.len().to_string()
            data-pairs=pairs.to_string() data-values=values data-p=serde_json::to_string(&a.kernel.p).unwrap_or_default()>{summary}</div>
        <div class="grid">
            {show.pi.then(|| view! { <PiCard ed=ed a=a.clone() /> })}
            {show.k.then(|| view! { <KCard ed=ed a=a.clone() /> })}
            {show.spectrum.then(|| view! { <SpectrumCard ed=ed a=a.clone() /> })}
            {show.cheeger.then(|| view! { <CheegerCard ed=ed a=a.clone() /> })}
            {show.dk.then(|| view! { <DavisKahanCard ed=ed a=a.clone() /> })}
        </div>
    }
}

/// A square heatmap canvas of `m` (signed colours when `signed`), named `label` in `lang`.
#[component]
fn Heat(id: String, m: Matrix, signed: bool, label: Text, lang: Signal<Lang>) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let data = linalg::to_row_major(m.as_ref());
    let n = m.nrows();
    Effect::new(move |_| {
        if let Some(c) = canvas.get() {
            draw::heatmap(&c, n, n, &data, signed, None);
        }
    });
    view! { <canvas node_ref=canvas id=id width="220" height="220" role="img" aria-label=label.on(lang)></canvas> }
}

/// Pi and the degrees p (as numbers up to 12 states).
#[component]
fn PiCard(ed: Editor, a: Arc<GraphAnalysis>) -> impl IntoView {
    let p = &a.kernel.p;
    let shown: Vec<String> = a
        .states
        .iter()
        .zip(p)
        .take(12)
        .map(|(s, v)| format!("p{s} = {}", numbers::fixed(*v, 4)))
        .collect();
    view! {
        <div class="card">
            <h2>{t("Pi and the degrees p", "Pi와 차수 p").on(ed.lang)}</h2>
            <Heat id=ed.id("pi") m=a.pi.clone() signed=false label=t("heatmap of Pi", "Pi의 히트맵") lang=ed.lang />
            <p class="eigs" id=ed.id("degrees")>{shown.join("  ")}{(p.len() > 12).then_some(" …")}</p>
            <p class="explain">{t(
                "Pi = A / sum(A): how often each pair is drawn. Its row sums are the degrees p, how often a state appears at all.",
                "Pi = A / sum(A): 각 쌍이 뽑히는 빈도입니다. 행의 합이 차수 p, 즉 한 상태가 얼마나 자주 나타나는지입니다.",
            ).on(ed.lang)}</p>
        </div>
    }
}

/// K = D^-1/2 Pi D^-1/2.
#[component]
fn KCard(ed: Editor, a: Arc<GraphAnalysis>) -> impl IntoView {
    let k01 = (a.kernel.n() > 1).then(|| a.kernel.k[(0, 1)]);
    view! {
        <div class="card">
            <h2>{t("The kernel K", "커널 K").on(ed.lang)}</h2>
            <Heat id=ed.id("k") m=a.kernel.k.clone() signed=true label=t("heatmap of K", "K의 히트맵") lang=ed.lang />
            <p class="eigs" id=ed.id("k01")>{move || k01.map(|v| format!(
                "{} = {}",
                t("K(first two analysed states)", "K(분석한 처음 두 상태)").get(ed.lang.get()),
                numbers::fixed(v, 4)
            )).unwrap_or_default()}</p>
            <p class="explain">{t(
                "K_ij = Pi_ij / sqrt(p_i p_j): Pi with each state's popularity divided out, so a busy state does not dominate.",
                "K_ij = Pi_ij / sqrt(p_i p_j): Pi에서 각 상태의 빈도를 나누어 없앤 것이라, 자주 나오는 상태가 전체를 좌우하지 않습니다.",
            ).on(ed.lang)}</p>
        </div>
    }
}

/// The spectrum: bars (a click picks the eigenvector that colours the drawing), the values
/// and the picked vector's Rayleigh quotient.
#[component]
fn SpectrumCard(ed: Editor, a: Arc<GraphAnalysis>) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let values = a.spectrum.values.clone();
    let n = values.len();
    let fiedler = (a.spectrum.trivial_index + 1).min(n - 1);
    let picked = move || ed.vector.get().filter(|&j| j < n).unwrap_or(fiedler);
    let vals = values.clone();
    Effect::new(move |_| {
        let marks = BarMarks {
            top: 0,
            selected: Some(picked()),
            trivial: Some(0),
            y_range: (-1.0, 1.0),
        };
        if let Some(c) = canvas.get() {
            draw::bars(&c, &vals, &marks);
        }
    });
    let on_click = move |ev: web_sys::MouseEvent| {
        if let Some(j) = canvas
            .get()
            .and_then(|c| draw::bar_at(&c, n, ev.offset_x() as f64))
        {
            ed.vector.set(Some(j));
        }
    };
    let a2 = a.clone();
    let rayleigh = move || {
        let j = picked();
        let u: Vec<f64> = (0..n).map(|i| a2.spectrum.vectors[(i, j)]).collect();
        let k = &a2.kernel.k;
        let num: f64 = (0..n)
            .map(|i| u[i] * (0..n).map(|l| k[(i, l)] * u[l]).sum::<f64>())
            .sum();
        let den: f64 = u.iter().map(|x| x * x).sum();
        let (q, v) = (numbers::fixed(num / den, 6), numbers::fixed(values[j], 6));
        match ed.lang.get() {
            Lang::En => format!("eigenvector {j}: Rayleigh quotient uᵀKu / uᵀu = {q} = λ{j} = {v}"),
            Lang::Ko => format!("고유벡터 {j}: 레일리 몫 uᵀKu / uᵀu = {q} = λ{j} = {v}"),
        }
    };
    let list: String = a
        .spectrum
        .values
        .iter()
        .map(|v| numbers::fixed(*v, 4))
        .collect::<Vec<_>>()
        .join("  ");
    view! {
        <div class="card">
            <h2>{t("Spectrum of K", "K의 스펙트럼").on(ed.lang)}</h2>
            <canvas node_ref=canvas id=ed.id("spectrum") width="440" height="150" on:click=on_click style="cursor:pointer"
                role="img" aria-label=t(
                    "eigenvalues of K as bars; click one to colour the states by its eigenvector",
                    "K의 고유값 막대 그래프. 막대를 클릭하면 그 고유벡터로 상태를 색칠합니다",
                ).on(ed.lang)></canvas>
            <p class="status" id=ed.id("rayleigh")>{rayleigh}</p>
            <p class="eigs" id=ed.id("eigenvalues")>{list}</p>
            <label class="status">{t("colour by eigenvector ", "색칠할 고유벡터 ").on(ed.lang)}
                <input type="number" id=ed.id("vector") min="0" max=(n - 1).to_string() prop:value=move || picked().to_string()
                    on:change={move |ev| if let Ok(j) = event_target_value(&ev).trim().parse::<usize>() { ed.vector.set(Some(j.min(n - 1))); }} />
            </label>
        </div>
    }
}

/// Cheeger's inequality with the sweep cut.
#[component]
fn CheegerCard(ed: Editor, a: Arc<GraphAnalysis>) -> impl IntoView {
    let Some(c) = a.cheeger.clone() else {
        return view! { <div class="card"><h2>{t("Cheeger", "치거").on(ed.lang)}</h2>
            <p class="status">{t("One state: no cut to make.", "상태가 하나뿐이라 자를 곳이 없습니다.").on(ed.lang)}</p></div> }.into_any();
    };
    let cut = c
        .cut
        .iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    view! {
        <div class="card">
            <h2>{t("Cheeger's inequality", "치거 부등식").on(ed.lang)}</h2>
            <table class="metrics" id=ed.id("cheeger") data-lambda2=c.lambda2.to_string() data-sweep=c.sweep.to_string()
                data-lower=c.lower.to_string() data-upper=c.upper.to_string()>
                <tr><td>{t("λ2 (second eigenvalue of K)", "λ2 (K의 두 번째 고유값)").on(ed.lang)}</td><td>{numbers::fixed(c.lambda2, 4)}</td></tr>
                <tr><td>{t("lower bound (1 − λ2) / 2", "하한 (1 − λ2) / 2").on(ed.lang)}</td><td>{numbers::fixed(c.lower, 4)}</td></tr>
                <tr><td>{t("conductance of the sweep cut", "스윕 절단의 전도율").on(ed.lang)}</td><td>{numbers::fixed(c.sweep, 4)}</td></tr>
                <tr><td>{t("upper bound √(2 (1 − λ2))", "상한 √(2 (1 − λ2))").on(ed.lang)}</td><td>{numbers::fixed(c.upper, 4)}</td></tr>
            </table>
            <p class="status">{t("sweep cut (dashed red pairs cross it): ", "스윕 절단 (빨간 점선 쌍이 가로지름): ").on(ed.lang)}"{" {cut} "}"</p>
            <p class="explain">{t(
                "The conductance of a cut is the weight crossing it over the smaller side's degree. The best cut h lies between the bounds; sorting states by the Fiedler vector and cutting at the best point (the sweep) finds one within the upper bound.",
                "절단의 전도율은 절단을 가로지르는 가중치를 작은 쪽의 차수로 나눈 값입니다. 가장 좋은 절단의 전도율 h는 두 한계 사이에 있고, 상태를 피들러 벡터 순으로 정렬해 가장 좋은 지점에서 자르면 (스윕) 상한 안에 드는 절단을 찾습니다.",
            ).on(ed.lang)}</p>
        </div>
    }
    .into_any()
}

/// Davis–Kahan between the graph as loaded (K) and as edited (K'), for the top d = 1
/// eigenvector after the trivial one (the Fiedler direction).
#[component]
fn DavisKahanCard(ed: Editor, a: Arc<GraphAnalysis>) -> impl IntoView {
    let body = move || {
        let Some(r) = ed.reference.get() else {
            return view! { <p class="status">{t("The preset had no analysis to compare with.", "비교할 프리셋의 분석 결과가 없습니다.").on(ed.lang)}</p> }
                .into_any();
        };
        if r.states != a.states {
            return view! { <p class="status" id=ed.id("dk-note")>
                {t(
                    "Davis–Kahan compares two kernels on the same states: change weights (not states) to see how far the Fiedler direction moves, or reset to the preset.",
                    "데이비스–카한 정리는 같은 상태 위의 두 커널을 비교합니다. 상태가 아니라 가중치를 바꿔 피들러 방향이 얼마나 움직이는지 보거나, 프리셋으로 되돌리세요.",
                ).on(ed.lang)}
            </p> }.into_any();
        }
        match compare(&r.kernel, &r.spectrum, &a.kernel, &a.spectrum, 1, true) {
            Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
            Ok(c) => view! {
                <table class="metrics" id=ed.id("dk") data-sin=c.sin_theta_op.to_string()
                    data-bound=c.davis_kahan_bound.map(|b| b.to_string()).unwrap_or_default()>
                    <tr><td>{t("‖K' − K‖ (operator norm)", "‖K' − K‖ (연산자 노름)").on(ed.lang)}</td><td>{numbers::fixed(c.e_op, 4)}</td></tr>
                    <tr><td>{t("gap δ of the preset", "프리셋의 간격 δ").on(ed.lang)}</td><td>{numbers::fixed(c.davis_kahan_gap, 4)}</td></tr>
                    <tr><td>{t("measured ‖sin Θ‖ (op)", "측정한 ‖sin Θ‖ (연산자 노름)").on(ed.lang)}</td><td>{numbers::fixed(c.sin_theta_op, 4)}</td></tr>
                    <tr><td>{t("Davis–Kahan bound ‖(K' − K) u₂‖ / δ", "데이비스–카한 상한 ‖(K' − K) u₂‖ / δ").on(ed.lang)}</td>
                        <td>{c.davis_kahan_bound.map_or(t("n/a (no gap)", "없음 (간격 0)").get(ed.lang.get()).to_string(), |b| numbers::fixed(b, 4))}</td></tr>
                </table>
            }.into_any(),
        }
    };
    view! {
        <div class="card">
            <h2>{t("Davis–Kahan: edited vs preset", "데이비스–카한: 편집한 그래프와 프리셋").on(ed.lang)}</h2>
            {body}
            <p class="explain">{t(
                "K is the graph as loaded, K' the graph after your edits. The angle between their Fiedler directions is at most the change (along the old direction) over the gap.",
                "K는 불러온 그대로의 그래프, K'는 편집한 뒤의 그래프입니다. 두 피들러 방향 사이의 각은 (이전 방향을 따른) 변화량을 간격으로 나눈 값을 넘지 않습니다.",
            ).on(ed.lang)}</p>
        </div>
    }
}

/// The drawn graph as a JSON world for `prh-native spectral --world FILE` (states named by
/// index; isolated states are listed, and the CLI refuses them as the theory does).
pub fn world_json(g: &Graph) -> String {
    let states: Vec<String> = (0..g.n()).map(|i| i.to_string()).collect();
    let edges: Vec<(String, String, f64)> = g
        .edges
        .iter()
        .map(|e| (e.a.to_string(), e.b.to_string(), e.w))
        .collect();
    serde_json::json!({ "name": "drawn in the playground", "states": states, "edges": edges })
        .to_string()
}

/// Editing without a mouse: set a pair's weight, add or remove a state; and the graph as
/// a JSON world.
#[component]
pub fn PairForm(ed: Editor) -> impl IntoView {
    let from = RwSignal::new(0_usize);
    let to = RwSignal::new(1_usize);
    let w = RwSignal::new(1.0_f64);
    let error = RwSignal::new(String::new());
    let num = |s: RwSignal<usize>| {
        move |ev: web_sys::Event| {
            if let Ok(v) = event_target_value(&ev).trim().parse::<usize>() {
                s.set(v);
            }
        }
    };
    let set_pair = move |_| {
        let r = ed.graph.try_update(|g| {
            g.set_pair(from.get_untracked(), to.get_untracked(), w.get_untracked())
        });
        error.set(match r {
            Some(Err(e)) => e.to_string(),
            _ => String::new(),
        });
    };
    let remove_state = move |_| {
        let i = from.get_untracked();
        if i < ed.graph.with_untracked(|g| g.n()) {
            ed.vector.set(None);
            ed.graph.update(|g| g.remove_state(i));
        }
    };
    let add_state = move |_| {
        let k = ed.graph.with_untracked(|g| g.n()) as f64;
        // Placed on a small spiral so added states do not cover each other.
        ed.graph.update(|g| {
            g.add_state((
                0.5 + 0.04 * k.sqrt() * k.cos(),
                0.5 + 0.04 * k.sqrt() * k.sin(),
            ));
        });
    };
    view! {
        <div class="pair-form" role="group" aria-label=t("edit the graph with the keyboard", "키보드로 그래프 편집").on(ed.lang)>
            <label>{t("state ", "상태 ").on(ed.lang)}<input type="number" id=ed.id("from") min="0" prop:value=move || from.get().to_string() on:change=num(from) /></label>
            <label>{t("to state ", "이을 상태 ").on(ed.lang)}<input type="number" id=ed.id("to") min="0" prop:value=move || to.get().to_string() on:change=num(to) /></label>
            <label>{t("weight ", "가중치 ").on(ed.lang)}<input type="number" id=ed.id("pair-weight") min="0" step="0.5" prop:value=move || w.get().to_string()
                on:change={move |ev| if let Ok(v) = event_target_value(&ev).trim().parse::<f64>() { w.set(v); }} /></label>
            <button id=ed.id("set-pair") on:click=set_pair>{t("set pair (weight 0 removes it)", "쌍 설정 (가중치 0이면 삭제)").on(ed.lang)}</button>
            <button id=ed.id("remove-state") on:click=remove_state>{t("remove state", "상태 삭제").on(ed.lang)}</button>
            <button id=ed.id("add-state") on:click=add_state>{t("add a state", "상태 추가").on(ed.lang)}</button>
            <p class="error" hidden=move || error.with(String::is_empty) role="alert">{move || error.get()}</p>
            <details>
                <summary>{t(
                    "the graph as a JSON world (for prh-native spectral --world FILE)",
                    "이 그래프를 JSON 세계로 (prh-native spectral --world FILE용)",
                ).on(ed.lang)}</summary>
                <textarea id=ed.id("json") readonly rows="4" cols="60" aria-label=t("the graph as a JSON world", "JSON 세계로 나타낸 그래프").on(ed.lang)
                    prop:value=move || ed.graph.with(world_json)></textarea>
            </details>
        </div>
    }
}
