//! The spectral lab's figures, each a card with a short explanation for students and
//! PNG / SVG / JSON export. They read one computed [`Lab`] and the shared selection signals.

use crate::draw::{self, BarMarks, Scatter};
use crate::export::ExportButtons;
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
    // One string of spans (numbers only, nothing to escape) and one click handler that
    // reads the span's index: at 400 observations, 400 separately built spans with their
    // own listeners were a visible part of redrawing after an alpha change.
    let value_spans: String = values
        .iter()
        .enumerate()
        .map(|(j, v)| {
            format!(r#"<span class="ev" title="eigenvalue {j}" data-j="{j}">{v:.6}</span> "#)
        })
        .collect();
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
                Some(g) => format!("spectral gap after the top {}: {g:.6}{}", s.d, if g > 1e-9 { "" } else { " — zero: the representation is not unique" }),
                None => "no eigenvalue after the window: no gap".into(),
            }}</div>
            <div class="eigs" id="eigenvalues" data-values=data_values on:click=on_value inner_html=value_spans></div>
            <p class="explain">
                "K's eigenvalues lie in [−1, 1]. The largest is always 1, with eigenvector √p: it is the
                 \"trivial\" direction (grey) and says nothing about which state you are in. The next d
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

/// The selected eigenvector over the observations.
#[component]
pub fn EigenvectorCard(lab: Arc<Lab>, selected: RwSignal<Option<usize>>) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let n = lab.names.len();
    let default = (lab.spectrum.trivial_index + 1).min(n.saturating_sub(1));
    let column = {
        let lab = lab.clone();
        move || {
            let j = selected.get().filter(|&j| j < n).unwrap_or(default);
            (
                j,
                (0..n)
                    .map(|i| lab.spectrum.vectors[(i, j)])
                    .collect::<Vec<f64>>(),
            )
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
    let json = {
        let (col, lab) = (column.clone(), lab.clone());
        Callback::new(move |_| {
            let (j, v) = col();
            serde_json::json!({ "index": j, "eigenvalue": lab.spectrum.values[j], "names": lab.names, "vector": v })
        })
    };
    let names = lab.names.clone();
    let values = lab.spectrum.values.clone();
    view! {
        <div class="card">
            <h2>{move || { let (j, _) = column(); format!("Eigenvector {j} (λ = {:.4})", values[j]) }}<ExportButtons canvas=canvas vector=vector numbers=json name="eigenvector" /></h2>
            <canvas node_ref=canvas id="eigenvector-canvas" width="440" height="140"></canvas>
            {move || (n <= NUMBERS_UP_TO).then(|| {
                let (_, v) = col3();
                view! { <div class="scroll"><table class="nums">{names.iter().zip(v).map(|(name, x)| view! { <tr><th style="text-align:left">{name.clone()}</th><td>{format!("{x:+.4}")}</td></tr> }).collect_view()}</table></div> }
            })}
            <p class="explain">
                "One bar per observation (state|nuisance), scaled to its largest entry. Observations with
                 the same sign and size are ones the kernel cannot tell apart along this direction. Under
                 good views the top eigenvectors are constant across the nuisances of a state; under bad
                 views some top eigenvectors vary with the nuisance — the representation then encodes it."
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

/// Modality A's and B's optimal representations side by side, A rotated by Q(t).
#[component]
pub fn RotationCard(
    lab: Arc<Lab>,
    rot: RwSignal<f64>,
    selected: RwSignal<Option<usize>>,
) -> impl IntoView {
    let (ca, cb) = (NodeRef::<Canvas>::new(), NodeRef::<Canvas>::new());
    let cross = &lab.cross;
    let b_mod = if lab.world.modalities.len() > 1 { 1 } else { 0 };
    let (ka, kb) = (
        lab.world.modalities[0].q.len(),
        lab.world.modalities[b_mod].q.len(),
    );
    let pts_b = Arc::new(plane(&cross.fb));
    let extent = draw::fit_extent(&pts_b).max(draw::fit_extent(&plane(&cross.fa)));
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
    let json = {
        let lab = lab.clone();
        Callback::new(move |_| {
            let c = &lab.cross;
            serde_json::json!({ "check": c.check, "q": rows(&c.q), "fa": rows(&c.fa), "fb": rows(&c.fb), "states": c.states, "weights": c.weights, "t": rot.get_untracked() })
        })
    };
    let (ma, mb) = (
        lab.world.modalities[0].name.clone(),
        lab.world.modalities[b_mod].name.clone(),
    );
    let caption_a = format!("A: {ma}, good views, rotated by Q(t)");
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
            <h2>"Two modalities, one rotation"<ExportButtons canvas=ca vector=vector numbers=json name="representations" /></h2>
            <div class="pair">
                <figure><canvas node_ref=ca id="rep-a" width="220" height="220"></canvas><figcaption>{caption_a}</figcaption></figure>
                <figure><canvas node_ref=cb id="rep-b" width="220" height="220"></canvas><figcaption>{caption_b}</figcaption></figure>
            </div>
            <label class="status">"rotate A onto B: t = "{move || format!("{:.2}", rot.get())}" "
                <input type="range" id="ctl-rot" min="0" max="1" step="0.01" prop:value=move || rot.get().to_string()
                    on:input=move |ev| { if let Ok(v) = event_target_value(&ev).parse::<f64>() { rot.set(v.clamp(0.0, 1.0)); } } />
            </label>
            <div class="status" id="rotation-residual">{format!(
                "Procrustes residual after the full rotation: {:.3e} (relative {:.3e}); gaps after the window: A {}, B {}",
                check.residual, check.relative_residual, fmt_opt(check.gaps[0]), fmt_opt(check.gaps[1])
            )}</div>
            <p class="explain">{format!(
                "Each dot is one pair (state, nuisance of A, nuisance of B), placed at the first two coordinates of its optimal {}-dimensional representation in each modality ({ka} and {kb} nuisances). Slide t to 1: A turns by one orthogonal Q. With good views on both sides the clouds then coincide (residual at round-off): the same representation up to a rotation. Slide α up: bad views add the nuisance directions with eigenvalues α λ, and once they climb into B's top d, B encodes its nuisance, which no rotation can undo.",
                lab.settings.d
            )}</p>
        </div>
    }
}

fn fmt_opt(x: Option<f64>) -> String {
    x.map_or("n/a".into(), |v| format!("{v:.4}"))
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
                        &format!("{v:.4}"),
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
    let holds = |bound: Option<f64>, measured: f64| match bound {
        Some(x) if measured <= x + 1e-12 => {
            view! { <span class="bound-ok">"holds"</span> }.into_any()
        }
        Some(_) => view! { <span class="bound-bad">"violated"</span> }.into_any(),
        None => view! { <span>"not applicable: the gap is not positive"</span> }.into_any(),
    };
    let vector = Callback::new(move |_| svg::labelled_bars(440.0, 120.0, &bars).finish());
    let json_b = serde_json::to_value(&b).unwrap_or_default();
    let json = Callback::new(move |_| json_b.clone());
    view! {
        <div class="card">
            <h2>"Misalignment and its bound"<ExportButtons canvas=canvas vector=vector numbers=json name="bounds" /></h2>
            <canvas node_ref=canvas id="bounds-canvas" width="440" height="120"></canvas>
            <table class="metrics" id="bounds-table">
                <tr><td>"sin Θ, operator norm"</td><td id="sin-theta-op">{format!("{:.6}", b.sin_theta_op)}</td><td></td></tr>
                <tr><td>"Davis–Kahan ||(K₂−K₁)U₁|| / δ"</td><td id="dk-bound">{fmt_opt(b.davis_kahan_bound)}</td><td>{holds(b.davis_kahan_bound, b.sin_theta_op)}</td></tr>
                <tr><td>"sin Θ, Frobenius"</td><td>{format!("{:.6}", b.sin_theta_fro)}</td><td></td></tr>
                <tr><td>"Yu–Wang–Samworth"</td><td>{fmt_opt(b.yws_bound)}</td><td>{holds(b.yws_bound, b.sin_theta_fro)}</td></tr>
                <tr><td>"||K₂ − K₁|| (op), gap δ"</td><td>{format!("{:.4}, {:.4}", b.e_op, b.davis_kahan_gap)}</td><td></td></tr>
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
