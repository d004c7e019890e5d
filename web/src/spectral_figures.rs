//! The spectral lab's figures, each a card with a short explanation for students and
//! PNG / SVG / JSON export. They read one computed [`Lab`] and the shared selection signals.

use crate::draw::{self, BarMarks, Scatter};
use crate::export::ExportButtons;
use crate::numbers;
use crate::spectral_lab::Lab;
use crate::svg;
use leptos::html::Canvas;
use leptos::prelude::*;
use prh_core::linalg::{self, Matrix};
use std::sync::Arc;
use wasm_bindgen::JsCast;

/// Observation counts up to which matrices and vectors are also printed as numbers.
const NUMBERS_UP_TO: usize = 24;

/// Row-major copy of a matrix, for drawing and JSON. Read column by column through slices:
/// for the 400 x 400 heatmaps, per-entry indexing (with its bounds checks) cost more in
/// the browser than the rest of the copy.
fn rows(m: &Matrix) -> Vec<f64> {
    let (r, c) = (m.nrows(), m.ncols());
    let mut out = vec![0.0; r * c];
    for j in 0..c {
        for (i, x) in m.col_as_slice(j).iter().enumerate() {
            out[i * c + j] = *x;
        }
    }
    out
}

/// Observation order sorted by the Fiedler vector (the first non-trivial eigenvector), so
/// that states the kernel connects sit next to each other.
fn fiedler_order(lab: &Lab) -> Vec<usize> {
    let j = lab.spectrum.trivial_index + 1;
    let n = lab.names.len();
    let mut order: Vec<usize> = (0..n).collect();
    if j < n {
        order.sort_by(|&a, &b| {
            lab.spectrum.vectors[(a, j)].total_cmp(&lab.spectrum.vectors[(b, j)])
        });
    }
    order
}

/// Multiplicity of eigenvalue 1 in a decreasing spectrum of K: the number of connected
/// components of the positive-pair graph (K = D^-1/2 Pi D^-1/2 is similar to the random
/// walk D^-1 Pi, whose eigenvalue-1 space is spanned by the components' indicators).
/// Counted within the tolerance the core uses to place sqrt(p) in that space.
pub fn eigenvalue_one_multiplicity(values: &[f64]) -> usize {
    values.iter().take_while(|&&v| v >= 1.0 - 1e-9).count()
}

/// The eigenvalue bars: top-d window dark, trivial pair grey, the gap dashed; a click picks
/// an eigenvector.
#[component]
pub fn SpectrumCard(lab: Arc<Lab>, selected: RwSignal<Option<usize>>) -> impl IntoView {
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
    let json = {
        let (values, d, skip, t) = (
            values.clone(),
            s.d,
            s.skip_trivial,
            lab.spectrum.trivial_index,
        );
        Callback::new(
            move |_| serde_json::json!({ "eigenvalues": values, "d": d, "skip_trivial": skip, "trivial_index": t, "gap": gap }),
        )
    };
    let data_values = serde_json::to_string(&values).unwrap_or_default();
    let components = eigenvalue_one_multiplicity(&values);
    // One string of spans (numbers only, nothing to escape) and one click handler that
    // reads the span's index: at 400 observations, 400 separately built spans with their
    // own listeners were a visible part of redrawing after an alpha change.
    // Long spectra (up to 1,536 observations) are folded after LIST_HEAD values behind
    // "show all", so the card stays readable; data-values always holds every value.
    let show_all = RwSignal::new(false);
    let vals = values.clone();
    let value_spans = move || -> String {
        let shown = if show_all.get() {
            vals.len()
        } else {
            vals.len().min(numbers::LIST_HEAD)
        };
        vals[..shown]
            .iter()
            .enumerate()
            .map(|(j, v)| {
                format!(
                    r#"<span class="ev" title="eigenvalue {j}" data-j="{j}">{}</span> "#,
                    numbers::fixed(*v, 6)
                )
            })
            .collect()
    };
    let folded = values.len() > numbers::LIST_HEAD;
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
        <div class="card">
            <h2>"Spectrum of K"<ExportButtons canvas=canvas vector=vector numbers=json name="spectrum" /></h2>
            <canvas node_ref=canvas id="spectrum-canvas" width="440" height="170" on:click=on_click style="cursor:pointer"></canvas>
            <div class="status">{match gap {
                Some(g) => format!("spectral gap after the top {}: {}{}", s.d, numbers::fixed(g, 6), if g > 1e-9 { "" } else { " — zero: the representation is not unique" }),
                None => "no eigenvalue after the window: no gap".into(),
            }}</div>
            {(components > 1).then(|| view! {
                <p class="status warn" id="components-note" data-components=components.to_string()>{format!(
                    "Eigenvalue 1 appears {components} times: the positive-pair graph has {components} connected components (groups of observations that no chain of positive pairs links). K has one eigenvalue-1 eigenvector per component, √p restricted to it; √p itself is their sum, and any orthonormal basis of that {components}-dimensional space is as valid as another. \"Skip trivial\" leaves out √p only: the other {} eigenvalue-1 vectors the solver returned are arbitrary mixtures of component indicators, and they say which component an observation is in, nothing finer. Pick a connected world (ring, grid, scenes) to see one eigenvalue 1.",
                    components - 1
                )}</p>
            })}
            <div class="eigs" id="eigenvalues" data-values=data_values on:click=on_value inner_html=value_spans></div>
            {folded.then(|| view! {
                <button id="eigs-show-all" class="link" on:click=move |_| show_all.update(|a| *a = !*a)>
                    {move || if show_all.get() { format!("show the first {} only", numbers::LIST_HEAD) } else { format!("show all {n} eigenvalues") }}
                </button>
            })}
            <p class="explain">
                "K's eigenvalues lie in [−1, 1]. The largest is always 1, with eigenvector √p: it is the
                 \"trivial\" direction (grey) and says nothing about which state you are in. Eigenvalue 1
                 is repeated once per connected component of the positive-pair graph (a world whose
                 clusters never pair with each other has one per cluster). The next d
                 eigenvectors (dark) span the optimal d-dimensional representation F = D^−1/2 U_d. If the
                 gap after them (red dashed line) is positive, every optimal encoder equals F up to a
                 rotation — the theorem. Click a bar to colour the states by its eigenvector."
            </p>
        </div>
    }
}

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

/// Modality A's and B's optimal representations side by side, each in its own random
/// basis, A rotated by Q(t); `playing` animates t back and forth.
#[component]
pub fn RotationCard(
    lab: Arc<Lab>,
    rot: RwSignal<f64>,
    selected: RwSignal<Option<usize>>,
    playing: RwSignal<bool>,
) -> impl IntoView {
    // The animation: while playing, t moves by PLAY_STEP per frame and turns at 0 and 1.
    // The interval belongs to this card and is cleared with it (a recomputed lab builds a
    // new card, which restarts it if still playing).
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
    let (ca, cb) = (NodeRef::<Canvas>::new(), NodeRef::<Canvas>::new());
    let cross = &lab.cross;
    let b_mod = if lab.world.modalities.len() > 1 { 1 } else { 0 };
    let (ka, kb) = (
        lab.world.modalities[0].q.len(),
        lab.world.modalities[b_mod].q.len(),
    );
    let pts_b = Arc::new(plane(&cross.fb));
    let extent = rotation_extent(&cross.fa, &cross.fb);
    // Both clouds at rotation t, each pair row coloured.
    let lab2 = lab.clone();
    let frame = move |t: f64, sel: Option<usize>| -> (Vec<(f64, f64)>, Vec<String>) {
        let cross = &lab2.cross;
        let a_t = &cross.fa * &partial_rotation(&cross.q, t);
        let pts_a = plane(&a_t);
        let n_obs = lab2.names.len();
        // Colour each pair row by its state, or by the selected eigenvector's entry at the
        // row's observation of modality A (row r = (z ka + u_a) kb + u_b).
        let colours: Vec<String> = (0..cross.states.len())
            .map(|r| match sel.filter(|&j| j < n_obs) {
                Some(j) => {
                    let col_max = (0..n_obs)
                        .fold(0.0_f64, |m, i| m.max(lab2.spectrum.vectors[(i, j)].abs()))
                        .max(1e-300);
                    draw::css(draw::diverging(
                        lab2.spectrum.vectors[(r / kb, j)] / col_max,
                    ))
                }
                None => draw::PALETTE[cross.states[r] % draw::PALETTE.len()].to_string(),
            })
            .collect();
        (pts_a, colours)
    };
    let (f2, pb2) = (frame.clone(), pts_b.clone());
    Effect::new(move |_| {
        let (pts_a, colours) = f2(rot.get(), selected.get());
        for (canvas, pts) in [(ca, &pts_a), (cb, pb2.as_ref())] {
            if let Some(c) = canvas.get() {
                draw::scatter(
                    &c,
                    &Scatter {
                        points: pts,
                        colours: &colours,
                        highlight: &[],
                        selected: &[],
                        extent: Some(extent),
                    },
                );
            }
        }
    });
    let check = cross.check.clone();
    let q_distance = {
        let d = cross.q.nrows();
        (0..d)
            .flat_map(|i| (0..d).map(move |j| (i, j)))
            .map(|(i, j)| (cross.q[(i, j)] - if i == j { 1.0 } else { 0.0 }).powi(2))
            .sum::<f64>()
            .sqrt()
    };
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
        lab.world.modalities[b_mod].name.clone(),
    );
    let caption_a = format!("A: {ma}, good views, turned by Q(t)");
    let caption_b = format!("B: {mb}, {}", check.views[1]);
    let vector = {
        let (ca_, cb_) = (caption_a.clone(), caption_b.clone());
        Callback::new(move |_| {
            let (pts_a, colours) = frame(rot.get_untracked(), selected.get_untracked());
            let fig = |pts: &[(f64, f64)]| {
                svg::scatter(
                    220.0,
                    220.0,
                    &Scatter {
                        points: pts,
                        colours: &colours,
                        highlight: &[],
                        selected: &[],
                        extent: Some(extent),
                    },
                )
            };
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
            <p class="explain">{format!(
                "Each dot is one pair (state, nuisance of A, nuisance of B), placed at the first two coordinates of its optimal {}-dimensional representation in each modality ({ka} and {kb} nuisances). The theorem fixes each representation only up to a rotation, and one eigensolver would hand both modalities the same basis; so, as two separately trained encoders would, each modality is shown in its own random orthogonal basis (seeded by the world's seed: F_A R_A and F_B R_B). Press play, or slide t to 1: A turns by the fitted orthogonal Q (Q(t) goes from I to Q through rotations; the view box holds every t). With good views on both sides the clouds then coincide (residual at round-off): the same representation up to a rotation. Slide α up: bad views add the nuisance directions with eigenvalues α λ, and once they climb into B's top d, B encodes its nuisance, which no rotation can undo.",
                lab.settings.d
            )}</p>
        </div>
    }
}

fn fmt_opt(x: Option<f64>) -> String {
    x.map_or("n/a".into(), |v| numbers::fixed(v, 4))
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
        let Some(c) = canvas.get() else { return };
        let Some(ctx) = draw::context(&c) else { return };
        let (w, h) = (c.width() as f64, c.height() as f64);
        ctx.set_fill_style_str("#fff");
        ctx.fill_rect(0.0, 0.0, w, h);
        let top = bars2.iter().filter_map(|b| b.1).fold(1e-12_f64, f64::max);
        let row = h / bars2.len() as f64;
        ctx.set_font("11px sans-serif");
        for (i, (name, v, colour)) in bars2.iter().enumerate() {
            let y = i as f64 * row;
            ctx.set_fill_style_str("#333");
            let _ = ctx.fill_text(name, 4.0, y + row * 0.65);
            match v {
                Some(v) => {
                    ctx.set_fill_style_str(colour);
                    ctx.fill_rect(130.0, y + row * 0.2, (w - 200.0) * v / top, row * 0.6);
                    ctx.set_fill_style_str("#333");
                    let _ = ctx.fill_text(
                        &numbers::fixed(*v, 4),
                        134.0 + (w - 200.0) * v / top,
                        y + row * 0.65,
                    );
                }
                None => {
                    let _ = ctx.fill_text("n/a (no gap)", 134.0, y + row * 0.65);
                }
            }
        }
    });
    // The largest sin Θ can be: 1 in the operator norm, sqrt(d) in the Frobenius norm
    // (d angles, each sine <= 1). A bound at or above it holds whatever happened: it is
    // vacuous, and a green "holds" would suggest it told us something.
    let holds = |bound: Option<f64>, measured: f64, ceiling: f64, norm: &str| match bound {
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
    };
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
                <tr><td>"Davis–Kahan ||(K₂−K₁)U₁|| / δ"</td><td id="dk-bound" data-value=b.davis_kahan_bound.map(|v| v.to_string()).unwrap_or_default()>{fmt_opt(b.davis_kahan_bound)}</td><td id="dk-verdict">{holds(b.davis_kahan_bound, b.sin_theta_op, 1.0, "operator-norm")}</td></tr>
                <tr><td>"sin Θ, Frobenius"</td><td>{numbers::fixed(b.sin_theta_fro, 6)}</td><td></td></tr>
                <tr><td>"Yu–Wang–Samworth"</td><td id="yws-bound" data-value=b.yws_bound.map(|v| v.to_string()).unwrap_or_default()>{fmt_opt(b.yws_bound)}</td><td id="yws-verdict">{holds(b.yws_bound, b.sin_theta_fro, fro_ceiling, "Frobenius")}</td></tr>
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
