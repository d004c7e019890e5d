//! The human-readable side of an experiment ([`crate::experiments::multilingual`]): a Markdown table
//! with seed spread and a hand-written SVG plot of alignment over training steps, one
//! line per objective (seed mean) inside a min-max band over seeds.
//!
//! Both are plain strings, so the browser can render them too.

use std::fmt::Write as _;

use crate::experiments::multilingual::SeedStats;

/// One objective's curve: `(step, spread over seeds)` points in step order.
pub struct Series<'a> {
    /// Legend label (the objective).
    pub label: &'a str,
    /// Points in step order.
    pub points: &'a [(usize, SeedStats)],
}

const COLOURS: [&str; 6] = [
    "#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02",
];

/// An SVG line plot (600 x 360): x = training step, y = the score; per series the seed
/// mean as a line and the seed min-max as a translucent band. The y range spans every
/// band (padded by 5%), so a flat curve still shows.
///
/// # Shapes
/// `series [objectives]` of `[steps]` points -> SVG text
pub fn svg_bands(title: &str, y_label: &str, series: &[Series<'_>]) -> String {
    let (w, h, left, right, top, bottom) = (600.0, 360.0, 60.0, 130.0, 30.0, 45.0);
    let all = series.iter().flat_map(|s| s.points.iter());
    let (mut x_max, mut y_min, mut y_max) = (1.0f64, f64::INFINITY, f64::NEG_INFINITY);
    for (step, st) in all {
        x_max = x_max.max(*step as f64);
        y_min = y_min.min(st.min);
        y_max = y_max.max(st.max);
    }
    if !y_min.is_finite() || !y_max.is_finite() {
        (y_min, y_max) = (0.0, 1.0);
    }
    let pad = ((y_max - y_min) * 0.05).max(1e-3);
    let (y_lo, y_hi) = (y_min - pad, y_max + pad);
    let px = |x: f64| left + x / x_max * (w - left - right);
    let py = |y: f64| top + (y_hi - y) / (y_hi - y_lo) * (h - top - bottom);
    let mut s = svg_open(w, h, (left + w - right) / 2.0, title);
    // Axes with 5 ticks each.
    let (x0, x1, y0, y1) = (px(0.0), px(x_max), py(y_lo), py(y_hi));
    let _ = writeln!(
        s,
        "<path d=\"M{x0:.1},{y1:.1} V{y0:.1} H{x1:.1}\" stroke=\"black\" fill=\"none\"/>"
    );
    for i in 0..=4 {
        let f = f64::from(i) / 4.0;
        let (xv, yv) = (f * x_max, y_lo + f * (y_hi - y_lo));
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{xv:.0}</text>\n\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{yv:.3}</text>",
            px(xv),
            y0 + 15.0,
            x0 - 4.0,
            py(yv) + 4.0
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">training step</text>\n\
         <text x=\"14\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {:.1})\">{}</text>",
        (x0 + x1) / 2.0,
        h - 8.0,
        (y0 + y1) / 2.0,
        (y0 + y1) / 2.0,
        escape(y_label)
    );
    for (i, ser) in series.iter().enumerate() {
        let c = COLOURS[i % COLOURS.len()];
        if ser.points.is_empty() {
            continue;
        }
        // Band: along the max edge, back along the min edge.
        let upper = ser.points.iter().map(|(x, st)| (px(*x as f64), py(st.max)));
        let lower = ser
            .points
            .iter()
            .rev()
            .map(|(x, st)| (px(*x as f64), py(st.min)));
        let band: Vec<String> = upper
            .chain(lower)
            .map(|(x, y)| format!("{x:.1},{y:.1}"))
            .collect();
        let line: Vec<String> = ser
            .points
            .iter()
            .map(|(x, st)| format!("{:.1},{:.1}", px(*x as f64), py(st.mean)))
            .collect();
        let ly = top + 14.0 + 16.0 * i as f64;
        let _ = writeln!(
            s,
            "<polygon points=\"{}\" fill=\"{c}\" fill-opacity=\"0.2\" stroke=\"none\"/>\n\
             <polyline points=\"{}\" fill=\"none\" stroke=\"{c}\" stroke-width=\"2\"/>\n\
             <line x1=\"{:.1}\" y1=\"{ly:.1}\" x2=\"{:.1}\" y2=\"{ly:.1}\" stroke=\"{c}\" stroke-width=\"2\"/>\n\
             <text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            band.join(" "),
            line.join(" "),
            w - right + 10.0,
            w - right + 28.0,
            w - right + 32.0,
            ly + 4.0,
            escape(ser.label)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// One objective in a scaling plot: measured `(samples, score)` points and the fitted
/// law drawn over the plotted range.
pub struct ScalingSeries<'a> {
    /// Legend label.
    pub label: &'a str,
    /// `(samples seen, score)` per run.
    pub points: &'a [(f64, f64)],
    /// The fitted law, if any.
    pub law: Option<crate::experiments::scaling_law::PowerLaw>,
}

/// An SVG scatter plot (600 x 360) of score vs samples seen on a log10 x axis, one colour
/// per series, each with its fitted law `a - b n^-c` as a line and the runs as dots.
///
/// # Shapes
/// `series [objectives]` of `[budgets]` points -> SVG text
pub fn svg_scaling(title: &str, y_label: &str, series: &[ScalingSeries<'_>]) -> String {
    svg_log_x(title, "samples seen (log scale)", y_label, series)
}

/// The plot of [`svg_scaling`] with any x quantity on its log10 axis (`x_label` names it).
///
/// # Shapes
/// `series [curves]` of `[points]` -> SVG text
pub fn svg_log_x(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[ScalingSeries<'_>],
) -> String {
    let (w, h, left, right, top, bottom) = (600.0, 360.0, 60.0, 130.0, 30.0, 45.0);
    let pts = series.iter().flat_map(|s| s.points.iter());
    let (mut x_lo, mut x_hi, mut y_lo, mut y_hi) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for &(n, y) in pts.filter(|p| p.0 > 0.0 && p.1.is_finite()) {
        (x_lo, x_hi) = (x_lo.min(n.log10()), x_hi.max(n.log10()));
        (y_lo, y_hi) = (y_lo.min(y), y_hi.max(y));
    }
    if !x_lo.is_finite() {
        (x_lo, x_hi, y_lo, y_hi) = (0.0, 1.0, 0.0, 1.0);
    }
    let (xp, yp) = (
        ((x_hi - x_lo) * 0.05).max(0.05),
        ((y_hi - y_lo) * 0.08).max(1e-3),
    );
    let (x_lo, x_hi, y_lo, y_hi) = (x_lo - xp, x_hi + xp, y_lo - yp, y_hi + yp);
    let px = |x: f64| left + (x - x_lo) / (x_hi - x_lo) * (w - left - right);
    let py = |y: f64| top + (y_hi - y.clamp(y_lo, y_hi)) / (y_hi - y_lo) * (h - top - bottom);
    let mut s = svg_open(w, h, (left + w - right) / 2.0, title);
    let (x0, x1, y0, y1) = (px(x_lo), px(x_hi), py(y_lo), py(y_hi));
    let _ = writeln!(
        s,
        "<path d=\"M{x0:.1},{y1:.1} V{y0:.1} H{x1:.1}\" stroke=\"black\" fill=\"none\"/>"
    );
    for i in 0..=4 {
        let f = f64::from(i) / 4.0;
        let (xv, yv) = (x_lo + f * (x_hi - x_lo), y_lo + f * (y_hi - y_lo));
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{:.0}</text>\n\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{yv:.3}</text>",
            px(xv),
            y0 + 15.0,
            10f64.powf(xv),
            x0 - 4.0,
            py(yv) + 4.0
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n\
         <text x=\"14\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {:.1})\">{}</text>",
        (x0 + x1) / 2.0,
        h - 8.0,
        escape(x_label),
        (y0 + y1) / 2.0,
        (y0 + y1) / 2.0,
        escape(y_label)
    );
    for (i, ser) in series.iter().enumerate() {
        let c = COLOURS[i % COLOURS.len()];
        if let Some(law) = ser.law {
            let line: Vec<String> = (0..=60)
                .map(|k| x_lo + (x_hi - x_lo) * f64::from(k) / 60.0)
                .map(|x| format!("{:.1},{:.1}", px(x), py(law.predict(10f64.powf(x)))))
                .collect();
            let _ = writeln!(
                s,
                "<polyline points=\"{}\" fill=\"none\" stroke=\"{c}\" stroke-width=\"1.5\" stroke-dasharray=\"4 3\"/>",
                line.join(" ")
            );
        }
        for &(n, y) in ser.points.iter().filter(|p| p.0 > 0.0 && p.1.is_finite()) {
            let _ = writeln!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"{c}\"/>",
                px(n.log10()),
                py(y)
            );
        }
        let ly = top + 14.0 + 16.0 * i as f64;
        let _ = writeln!(
            s,
            "<circle cx=\"{:.1}\" cy=\"{ly:.1}\" r=\"3.5\" fill=\"{c}\"/>\n\
             <text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            w - right + 19.0,
            w - right + 32.0,
            ly + 4.0,
            escape(ser.label)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// `a ± s [min, max]` with 3 decimals.
pub fn fmt_stats(st: &SeedStats) -> String {
    format!(
        "{:.3} ± {:.3} [{:.3}, {:.3}]",
        st.mean, st.std, st.min, st.max
    )
}

/// One row of the final-step table.
pub struct Row<'a> {
    /// ViewKind.
    pub label: &'a str,
    /// Final mutual k-NN, its null mean, CKA, R@1 in both directions.
    pub mutual_knn: SeedStats,
    pub null_mean: SeedStats,
    pub cka: SeedStats,
    pub r1_a_to_b: SeedStats,
    pub r1_b_to_a: SeedStats,
    /// Within language A, caption 1 vs caption 2 (mutual k-NN, R@1), when measured.
    pub pair_mutual_knn: Option<SeedStats>,
    pub pair_r1: Option<SeedStats>,
}

/// The Markdown table of final-step scores, one row per objective (and baseline), each
/// cell `mean ± std [min, max]` over seeds; the within-language pair columns when any row
/// has them.
pub fn markdown_table(rows: &[Row<'_>], a: &str, b: &str) -> String {
    let pairs = rows.iter().any(|r| r.pair_mutual_knn.is_some());
    let mut s = format!(
        "| objective | mutual k-NN | null (shuffled) | CKA | R@1 {a}→{b} | R@1 {b}→{a} |{}\n\
         |---|---|---|---|---|---|{}\n",
        if pairs {
            format!(" {a} cap 1 vs 2: mutual k-NN | {a} cap 1 vs 2: R@1 |")
        } else {
            String::new()
        },
        if pairs { "---|---|" } else { "" }
    );
    let cell = |st: &Option<SeedStats>| st.as_ref().map_or("–".to_string(), fmt_stats);
    for r in rows {
        let _ = write!(
            s,
            "| {} | {} | {} | {} | {} | {} |",
            r.label,
            fmt_stats(&r.mutual_knn),
            fmt_stats(&r.null_mean),
            fmt_stats(&r.cka),
            fmt_stats(&r.r1_a_to_b),
            fmt_stats(&r.r1_b_to_a)
        );
        if pairs {
            let _ = write!(s, " {} | {} |", cell(&r.pair_mutual_knn), cell(&r.pair_r1));
        }
        s.push('\n');
    }
    s
}

/// The opening of a `w` x `h` white SVG figure with `title` centred at `title_x`.
fn svg_open(w: f64, h: f64, title_x: f64, title: &str) -> String {
    let mut s = String::new();
    // Writing to a String cannot fail; the result is ignored on purpose.
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
         viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"11\">\n\
         <rect width=\"{w}\" height=\"{h}\" fill=\"white\"/>\n\
         <text x=\"{title_x}\" y=\"18\" text-anchor=\"middle\" font-size=\"13\">{}</text>\n",
        escape(title)
    );
    s
}

fn escape(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::multilingual::seed_stats;

    #[test]
    fn svg_is_well_formed_and_places_points() {
        let pts = vec![
            (0, seed_stats(&[0.1, 0.2]).unwrap()),
            (10, seed_stats(&[0.3, 0.5]).unwrap()),
        ];
        let svg = svg_bands(
            "a <b>",
            "mutual k-NN",
            &[Series {
                label: "good",
                points: &pts,
            }],
        );
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("a &lt;b&gt;") && svg.contains(">good</text>"));
        // Step 0 maps to the left margin (x = 60), step 10 to the right edge (600 - 130).
        assert!(svg.contains("<polyline points=\"60.0,"), "{svg}");
        assert!(svg.contains(" 470.0,"), "{svg}");
        assert_eq!(svg.matches("<polygon").count(), 1);
    }

    #[test]
    fn scaling_svg_places_points_on_a_log_axis() {
        let law = crate::experiments::scaling_law::PowerLaw {
            a: 0.3,
            b: 0.2,
            c: 0.5,
            rmse: 0.0,
        };
        let pts = [(100.0, 0.28), (10_000.0, 0.298)];
        let svg = svg_scaling(
            "t",
            "mutual k-NN",
            &[ScalingSeries {
                label: "good",
                points: &pts,
                law: Some(law),
            }],
        );
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        // x range log10 2..4 padded by 0.1 each side: 100 sits at 60 + 0.1/2.2 * 410.
        assert!(svg.contains("<circle cx=\"78.6\""), "{svg}");
        assert!(svg.contains("<circle cx=\"451.4\""), "{svg}");
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert!(!svg.contains("NaN"));
    }

    #[test]
    fn table_has_one_row_per_objective() {
        let st = seed_stats(&[0.25, 0.75]).unwrap();
        let row = |label| Row {
            label,
            mutual_knn: st,
            null_mean: st,
            cka: st,
            r1_a_to_b: st,
            r1_b_to_a: st,
            pair_mutual_knn: None,
            pair_r1: None,
        };
        let t = markdown_table(&[row("good"), row("bad")], "en", "de");
        assert_eq!(t.lines().count(), 4);
        // mean 0.5, sample std sqrt(2 * 0.0625) = 0.354.
        assert!(t.contains("| good | 0.500 ± 0.354 [0.250, 0.750] |"), "{t}");
        assert!(t.contains("R@1 en→de"));
    }
}
