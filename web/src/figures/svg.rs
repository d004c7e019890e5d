//! The figures as SVG: the same geometry and colours as the canvas drawings in
//! [`crate::figures::draw`], written as vector markup (one `<rect>` per heatmap cell or bar, one
//! `<circle>` per point, `<text>` for labels) so a figure can go into a paper or slides at
//! any size.
//!
//! Hand-written strings: each figure is a few element kinds, and an SVG crate would add
//! size to the module without making them simpler. Every element carries a class
//! (`cell`, `bar`, `pt`, `ring`, `sel`, `label`) so tests can count what was drawn.

use crate::figures::draw::{self, BarMarks, Scatter};
use std::fmt::Write;

/// An SVG document of `w` x `h` user units with a white background.
pub struct Svg {
    w: f64,
    h: f64,
    body: String,
}

/// Escapes text for XML content and attribute values.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

impl Svg {
    /// An empty figure of the given size.
    pub fn new(w: f64, h: f64) -> Svg {
        Svg {
            w,
            h,
            body: String::new(),
        }
    }

    /// A rectangle of class `class` filled with `fill`.
    pub fn rect(&mut self, class: &str, (x, y, w, h): (f64, f64, f64, f64), fill: &str) {
        // Writing to a String cannot fail.
        let _ = writeln!(
            self.body,
            r#"<rect class="{class}" x="{x:.2}" y="{y:.2}" width="{w:.2}" height="{h:.2}" fill="{fill}"/>"#
        );
    }

    /// A circle; `stroke` Some((colour, width)) draws an unfilled ring instead of a dot.
    pub fn circle(
        &mut self,
        class: &str,
        (x, y, r): (f64, f64, f64),
        fill: &str,
        stroke: Option<(&str, f64)>,
    ) {
        let _ = match stroke {
            Some((c, sw)) => writeln!(
                self.body,
                r#"<circle class="{class}" cx="{x:.2}" cy="{y:.2}" r="{r:.2}" fill="none" stroke="{c}" stroke-width="{sw}"/>"#
            ),
            None => writeln!(
                self.body,
                r#"<circle class="{class}" cx="{x:.2}" cy="{y:.2}" r="{r:.2}" fill="{fill}"/>"#
            ),
        };
    }

    /// A straight line; `dash` e.g. "4 3".
    pub fn line(&mut self, (x1, y1, x2, y2): (f64, f64, f64, f64), stroke: &str, dash: &str) {
        let _ = writeln!(
            self.body,
            r#"<line x1="{x1:.2}" y1="{y1:.2}" x2="{x2:.2}" y2="{y2:.2}" stroke="{stroke}" stroke-dasharray="{dash}"/>"#
        );
    }

    /// A text label at (x, y) (baseline), `size` in user units.
    pub fn text(&mut self, (x, y): (f64, f64), size: f64, fill: &str, s: &str) {
        let _ = writeln!(
            self.body,
            r#"<text class="label" x="{x:.2}" y="{y:.2}" font-size="{size}" font-family="sans-serif" fill="{fill}">{}</text>"#,
            esc(s)
        );
    }

    /// Places another figure at (x, y) inside this one.
    pub fn place(&mut self, (x, y): (f64, f64), inner: &Svg) {
        let _ = writeln!(self.body, r#"<g transform="translate({x},{y})">"#);
        self.body.push_str(&inner.body);
        self.body.push_str("</g>\n");
    }

    /// The complete document.
    pub fn finish(&self) -> String {
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\n<rect class=\"bg\" width=\"{w}\" height=\"{h}\" fill=\"#fff\"/>\n{}</svg>\n",
            self.body,
            w = self.w,
            h = self.h
        )
    }
}

/// A row-major `[rows, cols]` matrix as `rows * cols` cells of a `w` x `h` heatmap, with
/// the colour maps and scaling of [`draw::heatmap`].
pub fn heatmap(
    w: f64,
    h: f64,
    (rows, cols): (usize, usize),
    data: &[f64],
    signed: bool,
    order: Option<&[usize]>,
) -> Svg {
    let mut svg = Svg::new(w, h);
    if rows == 0 || cols == 0 || data.len() != rows * cols {
        return svg;
    }
    let scale = draw::heat_scale(data, signed);
    let idx = |k: usize, n: usize| {
        order
            .and_then(|o| o.get(k).copied())
            .unwrap_or(k)
            .min(n - 1)
    };
    let (cw, ch) = (w / cols as f64, h / rows as f64);
    for y in 0..rows {
        let i = idx(y, rows);
        for x in 0..cols {
            let j = idx(x, cols);
            let fill = draw::css(draw::heat_colour(data[i * cols + j] / scale, signed));
            // A hair of overlap hides the anti-aliasing seams between cells.
            svg.rect(
                "cell",
                (x as f64 * cw, y as f64 * ch, cw + 0.05, ch + 0.05),
                &fill,
            );
        }
    }
    svg
}

/// Bars as drawn by [`draw::bars`] on a `w` x `h` figure: one `bar` rect per value, axis
/// ticks, the gap line.
pub fn bars(w: f64, h: f64, values: &[f64], marks: &BarMarks) -> Svg {
    let mut svg = Svg::new(w, h);
    let n = values.len();
    if n == 0 {
        return svg;
    }
    let geom = draw::BarGeometry::new(w, h, n, marks);
    for (v, label) in geom.ticks() {
        let y = geom.y_of(v);
        svg.line((draw::BAR_MARGIN, y, w, y), "#999", "none");
        svg.text((4.0, y + 3.0), 10.0, "#555", &label);
    }
    for (j, &v) in values.iter().enumerate() {
        svg.rect("bar", geom.bar_rect(j, v), draw::bar_colour(j, marks));
        if Some(j) == marks.selected {
            let x = draw::BAR_MARGIN + j as f64 * geom.bw;
            let _ = writeln!(
                svg.body,
                r##"<rect class="selected" x="{x:.2}" y="2" width="{:.2}" height="{:.2}" fill="none" stroke="#d62728" stroke-width="2"/>"##,
                geom.bw,
                h - 4.0
            );
        }
    }
    if marks.top > 0 && marks.top < n {
        let x = draw::BAR_MARGIN + marks.top as f64 * geom.bw;
        svg.line((x, 0.0, x, h), "#d62728", "4 3");
        svg.text((x + 3.0, 12.0), 10.0, "#d62728", "gap");
    }
    svg
}

/// A scatter as drawn by [`draw::scatter`] on a `w` x `h` figure: axes, one `pt` circle per
/// point, a `ring` per highlighted point and a `sel` ring per selected point.
pub fn scatter(w: f64, h: f64, s: &Scatter<'_>) -> Svg {
    let mut svg = Svg::new(w, h);
    svg.line((w / 2.0, 0.0, w / 2.0, h), "#ddd", "none");
    svg.line((0.0, h / 2.0, w, h / 2.0), "#ddd", "none");
    let extent = s.extent.unwrap_or_else(|| draw::fit_extent(s.points));
    let radius = draw::point_radius(s.points.len());
    for (i, &p) in s.points.iter().enumerate() {
        let (x, y) = draw::to_px_in(w, h, extent, p);
        let fill = s.colours.get(i).map_or("#1f4e9c", String::as_str);
        svg.circle("pt", (x, y, radius), fill, None);
    }
    for (class, set, colour) in [
        ("ring", s.highlight, "#000"),
        ("sel", s.selected, "#d62728"),
    ] {
        for &i in set {
            if let Some(&p) = s.points.get(i) {
                let (x, y) = draw::to_px_in(w, h, extent, p);
                svg.circle(class, (x, y, radius + 3.0), "none", Some((colour, 2.0)));
            }
        }
    }
    svg
}

/// Two figures side by side with a caption under each (the paired scatters).
pub fn pair(left: (&Svg, &str), right: (&Svg, &str)) -> Svg {
    let gap = 12.0;
    let h = left.0.h.max(right.0.h);
    let mut svg = Svg::new(left.0.w + gap + right.0.w, h + 18.0);
    svg.place((0.0, 0.0), left.0);
    svg.place((left.0.w + gap, 0.0), right.0);
    svg.text((4.0, h + 13.0), 11.0, "#333", left.1);
    svg.text((left.0.w + gap + 4.0, h + 13.0), 11.0, "#333", right.1);
    svg
}

/// Horizontal bars with names and values (the bound card): `(name, value, colour)`.
pub fn labelled_bars(w: f64, h: f64, rows: &[(&str, Option<f64>, &str)]) -> Svg {
    let mut svg = Svg::new(w, h);
    let top = rows.iter().filter_map(|b| b.1).fold(1e-12_f64, f64::max);
    let row = h / rows.len().max(1) as f64;
    for (i, (name, v, colour)) in rows.iter().enumerate() {
        let y = i as f64 * row;
        svg.text((4.0, y + row * 0.65), 11.0, "#333", name);
        match v {
            Some(v) => {
                let len = (w - 200.0) * v / top;
                svg.rect("bar", (130.0, y + row * 0.2, len, row * 0.6), colour);
                svg.text(
                    (134.0 + len, y + row * 0.65),
                    11.0,
                    "#333",
                    &crate::figures::numbers::fixed(*v, 4),
                );
            }
            None => svg.text((134.0, y + row * 0.65), 11.0, "#333", "n/a (no gap)"),
        }
    }
    svg
}
