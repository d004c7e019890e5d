//! The rotation card: modality A's and B's optimal representations, each in its own
//! random basis, and the fitted rotation Q(t) from I to Q, animated.

use super::compute::Lab;
use super::figures::{fmt_opt, rows};
use crate::figures::draw::{self, Scatter};
use crate::figures::export::ExportButtons;
use crate::figures::numbers;
use crate::figures::svg;
use crate::widgets::lang::{Lang, t};
use leptos::html::Canvas;
use leptos::prelude::*;
use prh_core::linalg::{self, Matrix};
use std::sync::Arc;

/// The rotation Q(t) = polar((1 - t) I + t Q) from the identity to the fitted Q: orthogonal
/// for every t (the orthogonal factor U V^T of the SVD), so the animation only rotates.
///
/// # Shapes
/// `q [d, d]` -> `[d, d]`
fn partial_rotation(q: &Matrix, t: f64) -> Matrix {
    let d = q.nrows();
    let m = Matrix::from_fn(d, d, |i, j| {
        t * q[(i, j)] + if i == j { 1.0 - t } else { 0.0 }
    });
    match linalg::svd(m.as_ref()) {
        Ok(s) => &s.u * s.v.transpose(),
        Err(_) => m,
    }
}

/// First two columns of each row (the second is 0 when d = 1).
fn plane(m: &Matrix) -> Vec<(f64, f64)> {
    (0..m.nrows())
        .map(|i| (m[(i, 0)], if m.ncols() > 1 { m[(i, 1)] } else { 0.0 }))
        .collect()
}

/// Half-width of a scatter view box that holds the first two coordinates of every row of
/// `fa Q(t)` for every t and every row of `fb`: an orthogonal Q(t) keeps each row's norm,
/// and two coordinates of a row are at most its norm, so max_r ||row_r|| (with the 10 %
/// margin of [`draw::fit_extent`]) covers the whole animation.
///
/// # Shapes
/// `fa [rows, d]`, `fb [rows, d]`
pub fn rotation_extent(fa: &Matrix, fb: &Matrix) -> f64 {
    // Each row's norm as a point on the x axis, so fit_extent applies its margin to it.
    let norms = |m: &Matrix| -> Vec<(f64, f64)> {
        (0..m.nrows()).map(|i| (m.row(i).norm_l2(), 0.0)).collect()
    };
    draw::fit_extent(&norms(fa)).max(draw::fit_extent(&norms(fb)))
}

/// Step of the play button's animation per frame (t runs 0 -> 1 -> 0 in 4 s at 50 ms).
const PLAY_STEP: f64 = 0.025;
/// Milliseconds between animation frames.
const PLAY_FRAME_MS: u64 = 50;

/// While `playing`, moves t by [`PLAY_STEP`] per frame, turning at 0 and 1. The interval
/// belongs to the card that calls this and is cleared with it (a recomputed lab builds a
/// new card, which restarts it if still playing).
fn animate(rot: RwSignal<f64>, playing: RwSignal<bool>) {
    let direction = StoredValue::new(1.0_f64);
    Effect::new(move |_| {
        if !playing.get() {
            return;
        }
        let handle = set_interval_with_handle(
            move || {
                let mut t = rot.get_untracked() + direction.get_value() * PLAY_STEP;
                if !(0.0..=1.0).contains(&t) {
                    direction.update_value(|d| *d = -*d);
                    t = t.clamp(0.0, 1.0);
                }
                rot.set(t);
            },
            std::time::Duration::from_millis(PLAY_FRAME_MS),
        )
        .ok();
        // Runs when `playing` changes (the effect re-runs) or the card goes away.
        if let Some(h) = handle {
            on_cleanup(move || h.clear());
        }
    });
}

/// Modality B's index in the world: 1 when it has two modalities, else A again.
fn b_modality(lab: &Lab) -> usize {
    if lab.world.modalities.len() > 1 { 1 } else { 0 }
}

/// Modality A's cloud at rotation t, and each pair row's colour: its state, or the
/// selected eigenvector's entry at the row's observation of modality A
/// (row r = (z ka + u_a) kb + u_b).
///
/// # Shapes
/// `lab.cross.fa [rows, d]` -> `rows` points and colours
fn frame(lab: &Lab, t: f64, sel: Option<usize>) -> (Vec<(f64, f64)>, Vec<String>) {
    let cross = &lab.cross;
    let kb = lab.world.modalities[b_modality(lab)].q.len();
    let a_t = &cross.fa * &partial_rotation(&cross.q, t);
    let pts_a = plane(&a_t);
    let n_obs = lab.names.len();
    let colours: Vec<String> = (0..cross.states.len())
        .map(|r| match sel.filter(|&j| j < n_obs) {
            Some(j) => {
                let col_max = (0..n_obs)
                    .fold(0.0_f64, |m, i| m.max(lab.spectrum.vectors[(i, j)].abs()))
                    .max(1e-300);
                draw::css(draw::diverging(lab.spectrum.vectors[(r / kb, j)] / col_max))
            }
            None => draw::PALETTE[cross.states[r] % draw::PALETTE.len()].to_string(),
        })
        .collect();
    (pts_a, colours)
}

/// ||Q - I||_F: how far the animation turns A.
///
/// # Shapes
/// `q [d, d]` -> scalar
fn distance_from_identity(q: &Matrix) -> f64 {
    let d = q.nrows();
    (0..d)
        .flat_map(|i| (0..d).map(move |j| (i, j)))
        .map(|(i, j)| (q[(i, j)] - if i == j { 1.0 } else { 0.0 }).powi(2))
        .sum::<f64>()
        .sqrt()
}

/// A scatter of the rotation card: every pair row, in the view box of the whole animation.
fn scatter<'a>(points: &'a [(f64, f64)], colours: &'a [String], extent: f64) -> Scatter<'a> {
    Scatter {
        points,
        colours,
        highlight: &[],
        selected: &[],
        extent: Some(extent),
    }
}

/// A pairing's label from the core (`good`, `bad`, `mix(alpha=0.5)`, `next-token(drift=…)`)
/// in Korean, its parameter as written.
fn views_ko(label: &str) -> String {
    match label {
        "good" => "좋은 뷰".to_string(),
        "bad" => "나쁜 뷰".to_string(),
        _ => label
            .replacen("mix(", "혼합 뷰 (", 1)
            .replacen("next-token(", "다음 토큰 (", 1),
    }
}

/// Modality A's and B's optimal representations side by side, each in its own random
/// basis, A rotated by Q(t); `playing` animates t back and forth. Words in `lang` (the
/// lesson's; English in the spectral tab).
#[component]
pub fn RotationCard(
    lab: Arc<Lab>,
    rot: RwSignal<f64>,
    selected: RwSignal<Option<usize>>,
    playing: RwSignal<bool>,
    #[prop(optional, into)] lang: Signal<Lang>,
) -> impl IntoView {
    animate(rot, playing);
    let (ca, cb) = (NodeRef::<Canvas>::new(), NodeRef::<Canvas>::new());
    let cross = &lab.cross;
    let pts_b = Arc::new(plane(&cross.fb));
    let extent = rotation_extent(&cross.fa, &cross.fb);
    // Both clouds at rotation t, each pair row coloured.
    let (lab2, pb2) = (lab.clone(), pts_b.clone());
    Effect::new(move |_| {
        let (pts_a, colours) = frame(&lab2, rot.get(), selected.get());
        for (canvas, pts) in [(ca, &pts_a), (cb, pb2.as_ref())] {
            if let Some(c) = canvas.get() {
                draw::scatter(&c, &scatter(pts, &colours, extent));
            }
        }
    });
    let json = {
        let lab = lab.clone();
        Callback::new(move |_| {
            let c = &lab.cross;
            let t = rot.get_untracked();
            let a_t = &c.fa * &partial_rotation(&c.q, t);
            serde_json::json!({ "check": c.check, "q": rows(&c.q), "fa": rows(&c.fa), "fb": rows(&c.fb), "fa_rotated_t": rows(&a_t), "d": c.q.nrows(), "extent": extent, "states": c.states, "weights": c.weights, "t": t })
        })
    };
    let (ma, mb) = (
        lab.world.modalities[0].name.clone(),
        lab.world.modalities[b_modality(&lab)].name.clone(),
    );
    let views_b = cross.check.views[1].clone();
    // The panels' captions, also written into the exported PNG and SVG.
    let captions = Memo::new(move |_| match lang.get() {
        Lang::En => [
            format!("A: {ma}, good views, turned by Q(t)"),
            format!("B: {mb}, {views_b}"),
        ],
        Lang::Ko => [
            format!("A: {ma}, 좋은 뷰, Q(t)로 회전"),
            format!("B: {mb}, {}", views_ko(&views_b)),
        ],
    });
    let vector = {
        let lab = lab.clone();
        Callback::new(move |_| {
            let (pts_a, colours) = frame(&lab, rot.get_untracked(), selected.get_untracked());
            let fig =
                |pts: &[(f64, f64)]| svg::scatter(220.0, 220.0, &scatter(pts, &colours, extent));
            let [ca_, cb_] = captions.get_untracked();
            svg::pair((&fig(&pts_a), &ca_), (&fig(&pts_b), &cb_)).finish()
        })
    };
    let explain = {
        let lab = lab.clone();
        move || rotation_explain(&lab, lang.get())
    };
    view! {
        <div class="card">
            <h2>{t("Two modalities, one rotation", "두 모달리티, 하나의 회전").on(lang)}<ExportButtons canvas=ca vector=vector numbers=json name="representations"
                second=(cb, Signal::from(captions)) lang=lang /></h2>
            <div class="pair">
                <figure><canvas node_ref=ca id="rep-a" width="220" height="220"></canvas><figcaption>{move || captions.get()[0].clone()}</figcaption></figure>
                <figure><canvas node_ref=cb id="rep-b" width="220" height="220"></canvas><figcaption>{move || captions.get()[1].clone()}</figcaption></figure>
            </div>
            <RotationStatus lab=lab.clone() rot=rot playing=playing lang=lang />
            <p class="explain">{explain}</p>
        </div>
    }
}

/// The t slider with its play button, ||Q − I|| and the Procrustes residual, in `lang`.
#[component]
fn RotationStatus(
    lab: Arc<Lab>,
    rot: RwSignal<f64>,
    playing: RwSignal<bool>,
    lang: Signal<Lang>,
) -> impl IntoView {
    // Copied out of the lab: the lines below are redrawn when the language changes.
    let check = lab.cross.check.clone();
    let q_distance = distance_from_identity(&lab.cross.q);
    view! {
        <label class="status">{t("rotate A onto B: t = ", "A를 B에 맞춰 회전: t = ").on(lang)}<span id="rot-t" data-t=move || rot.get().to_string()>{move || format!("{:.2}", rot.get())}</span>" "
            <input type="range" id="ctl-rot" min="0" max="1" step="0.01" prop:value=move || rot.get().to_string()
                on:input=move |ev| { if let Ok(v) = event_target_value(&ev).parse::<f64>() { playing.set(false); rot.set(v.clamp(0.0, 1.0)); } } />
            <button id="rot-play" on:click=move |_| playing.update(|p| *p = !*p)>{move || if playing.get() { t("⏸ pause", "⏸ 일시 정지").get(lang.get()) } else { t("▶ play", "▶ 재생").get(lang.get()) }}</button>
        </label>
        <div class="status" id="rotation-q" data-q-distance=q_distance.to_string()>{move || format!(
            "‖Q − I‖ = {} {}",
            numbers::fixed(q_distance, 3),
            t("(Frobenius): the rotation the animation applies", "(프로베니우스 노름): 애니메이션이 적용하는 회전").get(lang.get())
        )}</div>
        <div class="status" id="rotation-residual">{move || match lang.get() {
            Lang::En => format!(
                "Procrustes residual after the full rotation: {:.3e} (relative {:.3e}); gaps after the window: A {}, B {}",
                check.residual, check.relative_residual, fmt_opt(check.gaps[0]), fmt_opt(check.gaps[1])
            ),
            Lang::Ko => format!(
                "끝까지 회전한 뒤의 프로크루스테스 잔차: {:.3e} (상대 {:.3e}); 상위 d개 다음의 간격: A {}, B {}",
                check.residual, check.relative_residual, fmt_opt(check.gaps[0]), fmt_opt(check.gaps[1])
            ),
        }}</div>
    }
}

/// The rotation card's explanation in `lang`, with the lab's d and nuisance counts.
fn rotation_explain(lab: &Lab, lang: Lang) -> String {
    let (ka, kb) = (
        lab.world.modalities[0].q.len(),
        lab.world.modalities[b_modality(lab)].q.len(),
    );
    let d = lab.settings.d;
    if lang == Lang::Ko {
        return format!(
            "각 점은 하나의 쌍(상태, A의 방해 요인, B의 방해 요인)이며, 각 모달리티에서 그 쌍의 최적 {d}차원 표현의 처음 두 좌표에 놓입니다 (방해 요인은 각각 {ka}개와 {kb}개). 정리는 각 표현을 회전을 제외하고만 정하고, 고유값 풀이기 하나는 두 모달리티에 같은 기저를 줄 것입니다. 그래서 따로 학습한 두 인코더가 그렇듯이, 각 모달리티를 자신의 무작위 직교 기저로 보여 줍니다 (세계의 시드로 정함: F_A R_A와 F_B R_B). 재생을 누르거나 t를 1까지 밀어 보세요. A가 맞춘 직교 행렬 Q만큼 회전합니다 (Q(t)는 회전들을 거쳐 I에서 Q로 가고, 보기 영역은 모든 t를 담습니다). 양쪽 모두 좋은 뷰이면 이때 두 점구름이 겹칩니다 (잔차는 반올림 오차 수준): 회전을 제외하면 같은 표현입니다. α를 올려 보세요. 나쁜 뷰는 고유값이 α λ인 방해 요인 방향을 더하고, 그 고유값이 B의 상위 d 안으로 올라오면 B는 자신의 방해 요인을 인코딩합니다. 이것은 어떤 회전으로도 되돌릴 수 없습니다."
        );
    }
    format!(
        "Each dot is one pair (state, nuisance of A, nuisance of B), placed at the first two coordinates of its optimal {}-dimensional representation in each modality ({ka} and {kb} nuisances). The theorem fixes each representation only up to a rotation, and one eigensolver would hand both modalities the same basis; so, as two separately trained encoders would, each modality is shown in its own random orthogonal basis (seeded by the world's seed: F_A R_A and F_B R_B). Press play, or slide t to 1: A turns by the fitted orthogonal Q (Q(t) goes from I to Q through rotations; the view box holds every t). With good views on both sides the clouds then coincide (residual at round-off): the same representation up to a rotation. Slide α up: bad views add the nuisance directions with eigenvalues α λ, and once they climb into B's top d, B encodes its nuisance, which no rotation can undo.",
        lab.settings.d
    )
}
