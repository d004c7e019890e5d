//! Canvas figures: heatmaps, bar charts and scatter plots drawn with the 2-D context.
//!
//! Hand-written because each figure is a few dozen canvas calls and a plotting crate
//! (plotters) would add size to the module without making these simpler.

use wasm_bindgen::{Clamped, JsCast};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement, ImageData};

/// The 2-D context of a canvas, or `None` when the browser refuses one.
pub fn context(canvas: &HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    canvas
        .get_context("2d")
        .ok()??
        .dyn_into::<CanvasRenderingContext2d>()
        .ok()
}

/// Sequential colour map (white -> dark blue) for non-negative values in [0, 1].
pub fn sequential(t: f64) -> [u8; 3] {
    let t = t.clamp(0.0, 1.0);
    // Interpolate white (255,255,255) -> steel blue (70,130,180) -> navy (8,29,88).
    let (a, b, s) = if t < 0.5 {
        ([255.0, 255.0, 255.0], [70.0, 130.0, 180.0], t * 2.0)
    } else {
        ([70.0, 130.0, 180.0], [8.0, 29.0, 88.0], t * 2.0 - 1.0)
    };
    let mix = |i: usize| (a[i] + (b[i] - a[i]) * s) as u8;
    [mix(0), mix(1), mix(2)]
}

/// Diverging colour map (blue -> white -> red) for signed values in [-1, 1].
pub fn diverging(t: f64) -> [u8; 3] {
    let t = t.clamp(-1.0, 1.0);
    let (end, s) = if t < 0.0 {
        ([33.0, 102.0, 172.0], -t)
    } else {
        ([178.0, 24.0, 43.0], t)
    };
    let mix = |i: usize| (255.0 + (end[i] - 255.0) * s) as u8;
    [mix(0), mix(1), mix(2)]
}

/// CSS colour string of a colour-map entry.
pub fn css(c: [u8; 3]) -> String {
    format!("rgb({},{},{})", c[0], c[1], c[2])
}

/// Draws a row-major `[rows, cols]` matrix as a heatmap filling the canvas.
///
/// `signed`: diverging map scaled by max |x|; otherwise sequential map scaled by max x.
/// `order`: optional row/column permutation (e.g. sorting by the Fiedler vector).
pub fn heatmap(
    canvas: &HtmlCanvasElement,
    rows: usize,
    cols: usize,
    data: &[f64],
    signed: bool,
    order: Option<&[usize]>,
) {
    let Some(ctx) = context(canvas) else { return };
    let (w, h) = (canvas.width() as usize, canvas.height() as usize);
    if rows == 0 || cols == 0 || data.len() != rows * cols || w == 0 || h == 0 {
        ctx.clear_rect(0.0, 0.0, w as f64, h as f64);
        return;
    }
    let scale = heat_scale(data, signed);
    let idx = |k: usize, n: usize| {
        order
            .and_then(|o| o.get(k).copied())
            .unwrap_or(k)
            .min(n - 1)
    };
    let mut px = vec![0_u8; w * h * 4];
    for y in 0..h {
        let i = idx(y * rows / h, rows);
        for x in 0..w {
            let j = idx(x * cols / w, cols);
            let c = heat_colour(data[i * cols + j] / scale, signed);
            let o = (y * w + x) * 4;
            px[o..o + 3].copy_from_slice(&c);
            px[o + 3] = 255;
        }
    }
    if let Ok(img) = ImageData::new_with_u8_clamped_array_and_sh(Clamped(&px), w as u32, h as u32) {
        let _ = ctx.put_image_data(&img, 0.0, 0.0);
    }
}

/// The value a heatmap maps to full colour: max |x| when `signed`, else max x (1 when
/// that is not positive).
pub fn heat_scale(data: &[f64], signed: bool) -> f64 {
    let scale = data
        .iter()
        .fold(0.0_f64, |m, &x| m.max(if signed { x.abs() } else { x }));
    if scale > 0.0 { scale } else { 1.0 }
}

/// A heatmap cell's colour for a value already divided by [`heat_scale`].
pub fn heat_colour(v: f64, signed: bool) -> [u8; 3] {
    if signed { diverging(v) } else { sequential(v) }
}

/// How the bars of a spectrum are marked.
pub struct BarMarks {
    /// Bars `0..top` are the representation's eigenvalues (drawn dark).
    pub top: usize,
    /// The clicked bar, outlined in red.
    pub selected: Option<usize>,
    /// The trivial eigenvalue's index (drawn grey).
    pub trivial: Option<usize>,
    /// Value range of the y axis, (low, high); [-1, 1] for a normalised spectrum.
    pub y_range: (f64, f64),
}

impl BarMarks {
    /// Plain bars on [-1, 1] (eigenvalues, unit eigenvector entries): nothing marked.
    pub fn plain() -> BarMarks {
        BarMarks {
            top: 0,
            selected: None,
            trivial: None,
            y_range: (-1.0, 1.0),
        }
    }
}

/// Left margin of [`bars`], needed to map clicks back to bars.
pub const BAR_MARGIN: f64 = 34.0;

/// Where [`bars`] puts things on a `w` x `h` figure (shared with the SVG export).
pub struct BarGeometry {
    h: f64,
    lo: f64,
    hi: f64,
    span: f64,
    /// Width of one bar slot.
    pub bw: f64,
}

impl BarGeometry {
    /// The layout of `n` bars on the y range of `marks`.
    pub fn new(w: f64, h: f64, n: usize, marks: &BarMarks) -> BarGeometry {
        let (lo, hi) = marks.y_range;
        BarGeometry {
            h,
            lo,
            hi,
            span: if hi > lo { hi - lo } else { 1.0 },
            bw: (w - BAR_MARGIN) / n.max(1) as f64,
        }
    }

    /// The y pixel of value `v` (clamped to the range; 8 px margins).
    pub fn y_of(&self, v: f64) -> f64 {
        8.0 + (self.hi - v.clamp(self.lo, self.hi)) / self.span * (self.h - 16.0)
    }

    /// Tick values with their labels: both ends of the range, and 0 inside it.
    pub fn ticks(&self) -> Vec<(f64, String)> {
        let mut t = vec![self.lo, self.hi];
        if self.lo < 0.0 && self.hi > 0.0 {
            t.push(0.0);
        }
        t.into_iter().map(|v| (v, tick_label(v))).collect()
    }

    /// Bar j of value v as (x, y, width, height), from 0 (or the nearest end) to v.
    pub fn bar_rect(&self, j: usize, v: f64) -> (f64, f64, f64, f64) {
        let (y0, y1) = (self.y_of(0.0_f64.clamp(self.lo, self.hi)), self.y_of(v));
        (
            BAR_MARGIN + j as f64 * self.bw + self.bw * 0.1,
            y0.min(y1),
            (self.bw * 0.8).max(1.0),
            (y1 - y0).abs().max(1.0),
        )
    }
}

/// Bar j's colour: grey if trivial, dark inside the top window, light after it.
pub fn bar_colour(j: usize, marks: &BarMarks) -> &'static str {
    if Some(j) == marks.trivial {
        "#bbb"
    } else if j < marks.top {
        "#1f4e9c"
    } else {
        "#8fb3e0"
    }
}

/// Draws values as vertical bars on the y range of `marks`, with the top-d block and the
/// gap marked.
pub fn bars(canvas: &HtmlCanvasElement, values: &[f64], marks: &BarMarks) {
    let Some(ctx) = context(canvas) else { return };
    let (w, h) = (canvas.width() as f64, canvas.height() as f64);
    ctx.set_fill_style_str("#fff");
    ctx.fill_rect(0.0, 0.0, w, h);
    let n = values.len();
    if n == 0 {
        return;
    }
    let geom = BarGeometry::new(w, h, n, marks);
    ctx.set_stroke_style_str("#999");
    ctx.set_line_width(1.0);
    ctx.set_font("10px sans-serif");
    ctx.set_fill_style_str("#555");
    for (v, label) in geom.ticks() {
        ctx.begin_path();
        ctx.move_to(BAR_MARGIN, geom.y_of(v));
        ctx.line_to(w, geom.y_of(v));
        ctx.stroke();
        let _ = ctx.fill_text(&label, 4.0, geom.y_of(v) + 3.0);
    }
    let bw = geom.bw;
    for (j, &v) in values.iter().enumerate() {
        ctx.set_fill_style_str(bar_colour(j, marks));
        let (x, y, bw_, bh) = geom.bar_rect(j, v);
        ctx.fill_rect(x, y, bw_, bh);
        if Some(j) == marks.selected {
            ctx.set_stroke_style_str("#d62728");
            ctx.set_line_width(2.0);
            ctx.stroke_rect(BAR_MARGIN + j as f64 * bw, 2.0, bw, h - 4.0);
        }
    }
    // The spectral gap: a dashed line between bar top-1 and bar top.
    if marks.top > 0 && marks.top < n {
        ctx.set_stroke_style_str("#d62728");
        ctx.set_line_width(1.5);
        let x = BAR_MARGIN + marks.top as f64 * bw;
        let _ = ctx.set_line_dash(&js_sys::Array::of2(&4.into(), &3.into()));
        ctx.begin_path();
        ctx.move_to(x, 0.0);
        ctx.line_to(x, h);
        ctx.stroke();
        let _ = ctx.set_line_dash(&js_sys::Array::new());
        ctx.set_fill_style_str("#d62728");
        let _ = ctx.fill_text("gap", x + 3.0, 12.0);
    }
}

/// Horizontal bars with names and values (the bound card): `(name, value, colour)`, the
/// longest value filling the width less 200 px; `None` prints "n/a (no gap)".
/// [`crate::figures::svg::labelled_bars`] writes the same figure as SVG.
pub fn labelled_bars(canvas: &HtmlCanvasElement, rows: &[(&str, Option<f64>, &str)]) {
    let Some(ctx) = context(canvas) else { return };
    let (w, h) = (canvas.width() as f64, canvas.height() as f64);
    ctx.set_fill_style_str("#fff");
    ctx.fill_rect(0.0, 0.0, w, h);
    let top = rows.iter().filter_map(|b| b.1).fold(1e-12_f64, f64::max);
    let row = h / rows.len() as f64;
    ctx.set_font("11px sans-serif");
    for (i, (name, v, colour)) in rows.iter().enumerate() {
        let y = i as f64 * row;
        ctx.set_fill_style_str("#333");
        let _ = ctx.fill_text(name, 4.0, y + row * 0.65);
        match v {
            Some(v) => {
                ctx.set_fill_style_str(colour);
                ctx.fill_rect(130.0, y + row * 0.2, (w - 200.0) * v / top, row * 0.6);
                ctx.set_fill_style_str("#333");
                let _ = ctx.fill_text(
                    &crate::figures::numbers::fixed(*v, 4),
                    134.0 + (w - 200.0) * v / top,
                    y + row * 0.65,
                );
            }
            None => {
                let _ = ctx.fill_text("n/a (no gap)", 134.0, y + row * 0.65);
            }
        }
    }
}

/// Maps a click's x offset on a [`bars`] canvas to a bar index.
pub fn bar_at(canvas: &HtmlCanvasElement, n: usize, offset_x: f64) -> Option<usize> {
    let w = canvas.client_width() as f64;
    if n == 0 || w <= BAR_MARGIN {
        return None;
    }
    let x = offset_x * canvas.width() as f64 / w;
    let j = ((x - BAR_MARGIN) / ((canvas.width() as f64 - BAR_MARGIN) / n as f64)).floor();
    (j >= 0.0 && (j as usize) < n).then_some(j as usize)
}

/// A 2-D point set prepared for drawing: positions and the view box they fit in.
pub struct Scatter<'a> {
    /// Points as (x, y).
    pub points: &'a [(f64, f64)],
    /// Colour of each point (CSS).
    pub colours: &'a [String],
    /// Points to draw enlarged with a black ring (hovered point and its neighbours).
    pub highlight: &'a [usize],
    /// Points to ring in red (a brushed selection).
    pub selected: &'a [usize],
    /// Half-width of the square view box centred at the origin; `None` = fit the points.
    pub extent: Option<f64>,
}

/// The half-width that fits every point of a scatter with a 10% margin.
pub fn fit_extent(points: &[(f64, f64)]) -> f64 {
    let m = points
        .iter()
        .fold(0.0_f64, |m, &(x, y)| m.max(x.abs()).max(y.abs()));
    if m > 0.0 { m * 1.1 } else { 1.0 }
}

/// Pixel position of a data point on a `w` x `h` scatter whose square view box has
/// half-width `extent`.
pub fn to_px_in(w: f64, h: f64, extent: f64, (x, y): (f64, f64)) -> (f64, f64) {
    let s = w.min(h) / 2.0 / extent;
    (w / 2.0 + x * s, h / 2.0 - y * s)
}

/// Pixel position of a data point on a scatter canvas.
fn to_px(canvas: &HtmlCanvasElement, extent: f64, p: (f64, f64)) -> (f64, f64) {
    to_px_in(canvas.width() as f64, canvas.height() as f64, extent, p)
}

/// Dot radius of a scatter of `n` points (smaller when crowded).
pub fn point_radius(n: usize) -> f64 {
    if n > 300 { 2.0 } else { 4.0 }
}

/// A mouse position (offset in CSS pixels) in the canvas's own pixels.
pub fn canvas_px(canvas: &HtmlCanvasElement, offset: (f64, f64)) -> (f64, f64) {
    let cw = canvas.client_width() as f64;
    let ratio = if cw > 0.0 {
        canvas.width() as f64 / cw
    } else {
        1.0
    };
    (offset.0 * ratio, offset.1 * ratio)
}

/// The points of a scatter inside the rectangle with corners `a` and `b` (canvas pixels).
pub fn points_in_rect(
    canvas: &HtmlCanvasElement,
    points: &[(f64, f64)],
    extent: Option<f64>,
    a: (f64, f64),
    b: (f64, f64),
) -> Vec<usize> {
    let extent = extent.unwrap_or_else(|| fit_extent(points));
    let (x0, x1) = (a.0.min(b.0), a.0.max(b.0));
    let (y0, y1) = (a.1.min(b.1), a.1.max(b.1));
    (0..points.len())
        .filter(|&i| {
            let (x, y) = to_px(canvas, extent, points[i]);
            (x0..=x1).contains(&x) && (y0..=y1).contains(&y)
        })
        .collect()
}

/// Outlines a brush rectangle (canvas pixels) over a drawn figure.
pub fn brush_rect(canvas: &HtmlCanvasElement, a: (f64, f64), b: (f64, f64)) {
    let Some(ctx) = context(canvas) else { return };
    ctx.set_stroke_style_str("#d62728");
    ctx.set_line_width(1.0);
    let _ = ctx.set_line_dash(&js_sys::Array::of2(&3.into(), &2.into()));
    ctx.stroke_rect(
        a.0.min(b.0),
        a.1.min(b.1),
        (a.0 - b.0).abs(),
        (a.1 - b.1).abs(),
    );
    let _ = ctx.set_line_dash(&js_sys::Array::new());
}

/// Draws a scatter plot centred at the origin with axes.
pub fn scatter(canvas: &HtmlCanvasElement, s: &Scatter<'_>) {
    let Some(ctx) = context(canvas) else { return };
    let (w, h) = (canvas.width() as f64, canvas.height() as f64);
    ctx.set_fill_style_str("#fff");
    ctx.fill_rect(0.0, 0.0, w, h);
    ctx.set_stroke_style_str("#ddd");
    ctx.set_line_width(1.0);
    ctx.begin_path();
    ctx.move_to(w / 2.0, 0.0);
    ctx.line_to(w / 2.0, h);
    ctx.move_to(0.0, h / 2.0);
    ctx.line_to(w, h / 2.0);
    ctx.stroke();
    let extent = s.extent.unwrap_or_else(|| fit_extent(s.points));
    let radius = point_radius(s.points.len());
    for (i, &p) in s.points.iter().enumerate() {
        let (x, y) = to_px(canvas, extent, p);
        ctx.set_fill_style_str(s.colours.get(i).map_or("#1f4e9c", String::as_str));
        ctx.begin_path();
        let _ = ctx.arc(x, y, radius, 0.0, std::f64::consts::TAU);
        ctx.fill();
    }
    ctx.set_line_width(2.0);
    for (set, colour) in [(s.highlight, "#000"), (s.selected, "#d62728")] {
        ctx.set_stroke_style_str(colour);
        for &i in set {
            if let Some(&p) = s.points.get(i) {
                let (x, y) = to_px(canvas, extent, p);
                ctx.begin_path();
                let _ = ctx.arc(x, y, radius + 3.0, 0.0, std::f64::consts::TAU);
                ctx.stroke();
            }
        }
    }
}

/// The point of a scatter nearest to a mouse position (offset in CSS pixels), if within
/// 12 pixels.
pub fn nearest_point(
    canvas: &HtmlCanvasElement,
    points: &[(f64, f64)],
    extent: Option<f64>,
    offset: (f64, f64),
) -> Option<usize> {
    let cw = canvas.client_width() as f64;
    if cw <= 0.0 {
        return None;
    }
    let ratio = canvas.width() as f64 / cw;
    let (mx, my) = canvas_px(canvas, offset);
    let extent = extent.unwrap_or_else(|| fit_extent(points));
    let mut best = None;
    let mut best_d = 12.0 * ratio;
    for (i, &p) in points.iter().enumerate() {
        let (x, y) = to_px(canvas, extent, p);
        let d = ((x - mx).powi(2) + (y - my).powi(2)).sqrt();
        if d < best_d {
            best_d = d;
            best = Some(i);
        }
    }
    best
}

/// Categorical palette (Tableau 10) for colouring states by cluster or sign.
pub const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// Axis label of a tick: at most two decimals, trailing zeros dropped ("1", "-1", "0.35").
fn tick_label(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.to_string() }
}
