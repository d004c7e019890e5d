//! The alignment lab's PCA card: each space projected on its own two main axes, with
//! hover and brush selection linked across the two scatters through the k-NN lists.

use super::compute::Analysis;
use crate::figures::draw::{self, Scatter};
use crate::figures::export::ExportButtons;
use crate::figures::svg;
use leptos::html::Canvas;
use leptos::prelude::*;
use prh_core::measure::knn::Knn;
use prh_core::measure::projection::neighbourhood;
use std::sync::Arc;

/// A brushed selection: the samples inside the rectangle dragged on either scatter.
#[derive(Clone, Debug, Default, PartialEq)]
struct Selection {
    /// Selected samples, ascending.
    points: Vec<usize>,
}

impl Selection {
    /// Mean per-point mutual k-NN of the selected samples (None when empty):
    /// (1/|S|) sum_{i in S} |N_A(i) ∩ N_B(i)| / k.
    fn mean_score(&self, per_point: &[f64]) -> Option<f64> {
        let v: Vec<f64> = self
            .points
            .iter()
            .filter_map(|&i| per_point.get(i).copied())
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }

    /// The selection and every selected sample's k neighbours in one space, without
    /// repeats: what gets ringed on that space's scatter.
    fn with_neighbours(&self, knn: &Knn) -> Vec<usize> {
        neighbourhood(knn, &self.points)
    }
}

/// The rectangle being dragged: (canvas 0 = A / 1 = B, start, current), canvas pixels.
type Brush = Option<(usize, (f64, f64), (f64, f64))>;

/// The interaction state both scatters share.
#[derive(Clone, Copy)]
struct Linked {
    /// The sample under the mouse.
    hovered: RwSignal<Option<usize>>,
    /// The brushed selection.
    selection: RwSignal<Selection>,
    /// The rectangle being dragged.
    brush: RwSignal<Brush>,
}

/// The k-NN lists of one side (0 = A, 1 = B).
fn knn_of(an: &Analysis, side: usize) -> &Knn {
    if side == 0 { &an.knn_a } else { &an.knn_b }
}

/// What one space rings: the hovered sample and its neighbours, or else the selection's
/// neighbours; and the selection itself (drawn red).
fn rings(
    an: &Analysis,
    h: Option<usize>,
    sel: &Selection,
    side: usize,
) -> (Vec<usize>, Vec<usize>) {
    let knn = knn_of(an, side);
    let mut ring: Vec<usize> = Vec::new();
    if let Some(i) = h.filter(|&i| i < knn.n) {
        ring.push(i);
        ring.extend_from_slice(knn.row(i));
    } else {
        ring = sel.with_neighbours(knn);
    }
    (ring, sel.points.clone())
}

/// A scatter of the card: the points fitted to the view box.
fn scatter<'a>(
    points: &'a [(f64, f64)],
    colours: &'a [String],
    (ring, chosen): &'a (Vec<usize>, Vec<usize>),
) -> Scatter<'a> {
    Scatter {
        points,
        colours,
        highlight: ring,
        selected: chosen,
        extent: None,
    }
}

/// Redraws both scatters (and the brush rectangle) whenever the hover, the brush or the
/// selection changes.
fn redraw(
    an: Arc<Analysis>,
    colours: Arc<Vec<String>>,
    canvases: [NodeRef<Canvas>; 2],
    linked: Linked,
) {
    Effect::new(move |_| {
        let (h, b) = (linked.hovered.get(), linked.brush.get());
        let sel = linked.selection.get();
        for (side, pts) in [(0, &an.pca_a), (1, &an.pca_b)] {
            let marks = rings(&an, h, &sel, side);
            if let Some(c) = canvases[side].get() {
                draw::scatter(&c, &scatter(pts, &colours, &marks));
                if let Some((s, p0, p1)) = b
                    && s == side
                {
                    draw::brush_rect(&c, p0, p1);
                }
            }
        }
    });
}

/// A mouse event's position in the canvas's own pixels.
fn pos(canvas: NodeRef<Canvas>, ev: &web_sys::MouseEvent) -> Option<(f64, f64)> {
    canvas
        .get()
        .map(|c| draw::canvas_px(&c, (ev.offset_x() as f64, ev.offset_y() as f64)))
}

/// One scatter's canvas with its mouse handlers: pressing starts a brush, moving drags it
/// (or hovers the nearest point), releasing (or leaving the canvas) ends the drag; a click
/// without a drag (under 3 pixels) clears the selection.
#[component]
fn BrushCanvas(
    side: usize,
    id: &'static str,
    canvas: NodeRef<Canvas>,
    pts: Vec<(f64, f64)>,
    linked: Linked,
) -> impl IntoView {
    let Linked {
        hovered,
        selection,
        brush,
    } = linked;
    let on_down = move |ev: web_sys::MouseEvent| {
        ev.prevent_default();
        if let Some(p) = pos(canvas, &ev) {
            brush.set(Some((side, p, p)));
        }
    };
    let pts_move = pts.clone();
    let on_move = move |ev: web_sys::MouseEvent| {
        let Some(c) = canvas.get() else { return };
        match brush.get_untracked() {
            Some((s, p0, _)) if s == side => {
                if let Some(p) = pos(canvas, &ev) {
                    brush.set(Some((s, p0, p)));
                }
            }
            _ => hovered.set(draw::nearest_point(
                &c,
                &pts_move,
                None,
                (ev.offset_x() as f64, ev.offset_y() as f64),
            )),
        }
    };
    let on_up = move |ev: web_sys::MouseEvent| {
        let Some((s, p0, p1)) = brush.get_untracked() else {
            return;
        };
        if s != side {
            return;
        }
        let p1 = pos(canvas, &ev).unwrap_or(p1);
        brush.set(None);
        let Some(c) = canvas.get() else { return };
        let points = if (p0.0 - p1.0).abs().max((p0.1 - p1.1).abs()) < 3.0 {
            Vec::new()
        } else {
            draw::points_in_rect(&c, &pts, None, p0, p1)
        };
        hovered.set(None);
        selection.set(Selection { points });
    };
    let on_leave = on_up.clone();
    view! {
        <canvas node_ref=canvas id=id width="260" height="260" style="cursor:crosshair"
            on:mousedown=on_down on:mousemove=on_move on:mouseup=on_up on:mouseleave=on_leave></canvas>
    }
}

/// The hovered sample's shared-neighbour count, or how to select.
#[component]
fn HoverInfo(an: Arc<Analysis>, hovered: RwSignal<Option<usize>>) -> impl IntoView {
    let info = move || match hovered.get() {
        Some(i) if i < an.per_point.len() => format!(
            "sample {i}: {:.0} of {} neighbours shared",
            an.per_point[i] * an.knn_a.k as f64,
            an.knn_a.k
        ),
        _ => "hover a point, or drag a rectangle to select".into(),
    };
    view! { <div class="status" id="hover-info">{info}</div> }
}

/// The selection's size, mean mutual k-NN and ringed neighbourhoods.
#[component]
fn BrushInfo(an: Arc<Analysis>, selection: RwSignal<Selection>) -> impl IntoView {
    move || {
        let sel = selection.get();
        let mean = sel.mean_score(&an.per_point);
        let rings = (
            sel.with_neighbours(&an.knn_a).len(),
            sel.with_neighbours(&an.knn_b).len(),
        );
        let text = match mean {
            Some(m) => format!(
                "{} selected · mean mutual {}-NN of the selection {m:.6} · with neighbours: {} in A, {} in B",
                sel.points.len(),
                an.knn_a.k,
                rings.0,
                rings.1
            ),
            None => "no selection".into(),
        };
        let data = serde_json::to_string(&sel.points).unwrap_or_default();
        view! {
            <div class="status" id="brush-info" data-selected=data data-mean=mean.map(|m| m.to_string()).unwrap_or_default()
                data-ringed-a=rings.0.to_string() data-ringed-b=rings.1.to_string()>{text}</div>
        }
    }
}

/// Two PCA scatters; hovering a point rings it and its k neighbours in both spaces, and
/// dragging a rectangle on either one selects the points inside (red) and rings their
/// neighbours in both spaces, with the selection's mean mutual k-NN.
#[component]
pub fn ScatterCard(an: Arc<Analysis>, hovered: RwSignal<Option<usize>>) -> impl IntoView {
    let (ca, cb) = (NodeRef::<Canvas>::new(), NodeRef::<Canvas>::new());
    let colours: Arc<Vec<String>> = Arc::new(
        an.per_point
            .iter()
            .map(|&s| draw::css(draw::sequential(0.15 + 0.85 * s)))
            .collect(),
    );
    let linked = Linked {
        hovered,
        selection: RwSignal::new(Selection::default()),
        brush: RwSignal::new(None),
    };
    let selection = linked.selection;
    redraw(an.clone(), colours.clone(), [ca, cb], linked);
    let json = {
        let an = an.clone();
        Callback::new(
            move |_| serde_json::json!({ "pca_a": an.pca_a, "pca_b": an.pca_b, "mutual_knn_per_point": an.per_point, "selected": selection.get_untracked().points }),
        )
    };
    let vector = {
        let an = an.clone();
        Callback::new(move |_| {
            let sel = selection.get_untracked();
            let fig = |side: usize, pts: &[(f64, f64)]| {
                svg::scatter(
                    260.0,
                    260.0,
                    &scatter(pts, &colours, &rings(&an, None, &sel, side)),
                )
            };
            svg::pair((&fig(0, &an.pca_a), "A"), (&fig(1, &an.pca_b), "B")).finish()
        })
    };
    view! {
        <div class="card">
            <h2>"PCA of A and of B"<ExportButtons canvas=ca vector=vector numbers=json name="pca" second=(cb, Signal::stored(["A".to_string(), "B".to_string()])) /></h2>
            <div class="pair">
                <figure><BrushCanvas side=0 id="scatter-a" canvas=ca pts=an.pca_a.clone() linked=linked /><figcaption>"A"</figcaption></figure>
                <figure><BrushCanvas side=1 id="scatter-b" canvas=cb pts=an.pca_b.clone() linked=linked /><figcaption>"B"</figcaption></figure>
            </div>
            <HoverInfo an=an.clone() hovered=hovered />
            <BrushInfo an=an.clone() selection=selection />
            <p class="explain">"Each space projected on its own two main axes. Hover a sample: it and its k nearest neighbours are ringed in both spaces. Drag a rectangle on either plot: the samples inside turn red in both, their neighbours in each space are ringed, and the selection's mean mutual k-NN is shown (the table's mutual_knn is the mean over all samples). Aligned representations keep the same neighbours even when the pictures look rotated."</p>
        </div>
    }
}
