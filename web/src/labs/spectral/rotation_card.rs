//! The rotation card: modality A's and B's optimal representations, each in its own
//! random basis, and the fitted rotation Q(t) from I to Q, animated.

use super::compute::Lab;
use super::figures::{fmt_opt, rows};
use crate::figures::draw::{self, Scatter};
use crate::figures::export::ExportButtons;
use crate::figures::numbers;
use crate::figures::svg;
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

/// Modality A's and B's optimal representations side by side, each in its own random
/// basis, A rotated by Q(t); `playing` animates t back and forth.
#[component]
pub fn RotationCard(
    lab: Arc<Lab>,
    rot: RwSignal<f64>,
    selected: RwSignal<Option<usize>>,
    playing: RwSignal<bool>,
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
    let caption_a = format!("A: {ma}, good views, turned by Q(t)");
    let caption_b = format!("B: {mb}, {}", cross.check.views[1]);
    let vector = {
        let (ca_, cb_, lab) = (caption_a.clone(), caption_b.clone(), lab.clone());
        Callback::new(move |_| {
            let (pts_a, colours) = frame(&lab, rot.get_untracked(), selected.get_untracked());
            let fig =
                |pts: &[(f64, f64)]| svg::scatter(220.0, 220.0, &scatter(pts, &colours, extent));
            svg::pair((&fig(&pts_a), &ca_), (&fig(&pts_b), &cb_)).finish()
        })
    };
    view! {
        <div class="card">
            <h2>"Two modalities, one rotation"<ExportButtons canvas=ca vector=vector numbers=json name="representations" second=(cb, [caption_a.clone(), caption_b.clone()]) /></h2>
            <div class="pair">
                <figure><canvas node_ref=ca id="rep-a" width="220" height="220"></canvas><figcaption>{caption_a}</figcaption></figure>
                <figure><canvas node_ref=cb id="rep-b" width="220" height="220"></canvas><figcaption>{caption_b}</figcaption></figure>
            </div>
            <RotationStatus lab=lab.clone() rot=rot playing=playing />
            <p class="explain">{rotation_explain(&lab)}</p>
        </div>
    }
}

/// The t slider with its play button, ||Q − I|| and the Procrustes residual.
#[component]
fn RotationStatus(lab: Arc<Lab>, rot: RwSignal<f64>, playing: RwSignal<bool>) -> impl IntoView {
    let check = &lab.cross.check;
    let q_distance = distance_from_identity(&lab.cross.q);
    view! {
        <label class="status">"rotate A onto B: t = "<span id="rot-t" data-t=move || rot.get().to_string()>{move || format!("{:.2}", rot.get())}</span>" "
            <input type="range" id="ctl-rot" min="0" max="1" step="0.01" prop:value=move || rot.get().to_string()
                on:input=move |ev| { if let Ok(v) = event_target_value(&ev).parse::<f64>() { playing.set(false); rot.set(v.clamp(0.0, 1.0)); } } />
            <button id="rot-play" on:click=move |_| playing.update(|p| *p = !*p)>{move || if playing.get() { "⏸ pause" } else { "▶ play" }}</button>
        </label>
        <div class="status" id="rotation-q" data-q-distance=q_distance.to_string()>{format!(
            "‖Q − I‖ = {} (Frobenius): the rotation the animation applies",
            numbers::fixed(q_distance, 3)
        )}</div>
        <div class="status" id="rotation-residual">{format!(
            "Procrustes residual after the full rotation: {:.3e} (relative {:.3e}); gaps after the window: A {}, B {}",
            check.residual, check.relative_residual, fmt_opt(check.gaps[0]), fmt_opt(check.gaps[1])
        )}</div>
    }
}

/// The rotation card's explanation, with the lab's d and nuisance counts.
fn rotation_explain(lab: &Lab) -> String {
    let (ka, kb) = (
        lab.world.modalities[0].q.len(),
        lab.world.modalities[b_modality(lab)].q.len(),
    );
    format!(
        "Each dot is one pair (state, nuisance of A, nuisance of B), placed at the first two coordinates of its optimal {}-dimensional representation in each modality ({ka} and {kb} nuisances). The theorem fixes each representation only up to a rotation, and one eigensolver would hand both modalities the same basis; so, as two separately trained encoders would, each modality is shown in its own random orthogonal basis (seeded by the world's seed: F_A R_A and F_B R_B). Press play, or slide t to 1: A turns by the fitted orthogonal Q (Q(t) goes from I to Q through rotations; the view box holds every t). With good views on both sides the clouds then coincide (residual at round-off): the same representation up to a rotation. Slide α up: bad views add the nuisance directions with eigenvalues α λ, and once they climb into B's top d, B encodes its nuisance, which no rotation can undo.",
        lab.settings.d
    )
}
