//! The demo's convergence figure (issue 19, item 4): each encoder's alignment to its
//! predicted representation against the training step, CKA with F in one panel and
//! ||sin Theta||_op to span(F) in the other, one line per encoder (captions dashed).
//!
//! One figure, two readers: `prh-native demo` draws it from its results into
//! `convergence.svg`, and the playground's spectral lab draws it from an exported demo
//! run's `results.json` ([`curves_from_results_json`]), so both show the same curves.
//! Plain SVG text, no tensors.

use crate::experiments::demo::{Convergence, CurvePoint, KindResults};
use crate::{Error, Result};
use serde::Deserialize;

/// One encoder's evaluations during training.
#[derive(Debug, Clone, PartialEq)]
pub struct EncoderCurve {
    /// What it is, e.g. `rendered spectral good image`.
    pub label: String,
    /// Whether it is the caption encoder (drawn dashed).
    pub caption: bool,
    /// Steps trained.
    pub steps: usize,
    /// Whether the plateau rule stopped it (else it used its whole budget).
    pub plateau: bool,
    /// CKA and sin-theta to F at each evaluation.
    pub curve: Vec<CurvePoint>,
}

/// The two curves of one demo entry named `name` (e.g. `rendered spectral good`): its
/// image encoder's, then its caption encoder's.
fn entry_curves(name: &str, image: &Convergence, text: &Convergence) -> [EncoderCurve; 2] {
    [("image", false, image), ("text", true, text)].map(|(modality, caption, t)| EncoderCurve {
        label: format!("{name} {modality}"),
        caption,
        steps: t.steps,
        plateau: t.plateau,
        curve: t.curve.clone(),
    })
}

/// The curves of a demo's results: image then caption encoder of each entry.
pub fn curves_of(results: &[KindResults]) -> Vec<EncoderCurve> {
    results
        .iter()
        .flat_map(|r| entry_curves(&r.label(), &r.image_training, &r.text_training))
        .collect()
}

/// What [`curves_from_results_json`] reads of one `results` entry (the spelled names of
/// [`KindResults`]' kind, loss and observation, and its two [`Convergence`]s).
#[derive(Deserialize)]
struct EntryFields {
    kind: String,
    loss: String,
    observation: String,
    image_training: Convergence,
    text_training: Convergence,
}

/// The curves of a demo run's `results.json` (the file `prh-native demo` writes): for
/// each entry of its `results` array, the image and the caption encoder's
/// `*_training.curve`. Errors name the file, the entry and the field that is missing or
/// malformed.
pub fn curves_from_results_json(name: &str, text: &str) -> Result<Vec<EncoderCurve>> {
    let bad = |what: String| Error::invalid(format!("{name}: {what}"));
    let doc: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        bad(format!(
            "not JSON ({e}); expected a demo run's results.json"
        ))
    })?;
    let entries = doc
        .get("results")
        .and_then(|r| r.as_array())
        .ok_or_else(|| {
            bad("no `results` array; expected the results.json of `prh-native demo`".into())
        })?;
    let mut out = Vec::with_capacity(2 * entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let e = EntryFields::deserialize(entry).map_err(|err| {
            bad(format!(
                "results[{i}]: {err} (expected kind, loss, observation and image_training / \
                 text_training with steps, plateau and curve [{{step, loss, cka_to_theory, \
                 sin_theta_to_theory}}])"
            ))
        })?;
        // Named as KindResults::label names it.
        let name = format!("{} {} {}", e.observation, e.loss, e.kind);
        out.extend(entry_curves(&name, &e.image_training, &e.text_training));
    }
    if out.is_empty() {
        return Err(bad("`results` is empty: no encoder was trained".into()));
    }
    Ok(out)
}

/// Line colours, one per pair of encoders (image solid, caption dashed).
const COLOURS: [&str; 8] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
];

/// The two-panel figure: x = step (0 to the longest run), y in [0, 1]; left CKA with F
/// (1 = reached), right sin-theta to span(F) (0 = reached); a legend below.
pub fn convergence_svg(lines: &[EncoderCurve]) -> String {
    let (pw, pad) = (380.0, 44.0);
    let rows = lines.len().div_ceil(4) as f64;
    let h = 300.0 + 14.0 * rows;
    let w = 2.0 * pw;
    let max_step = lines
        .iter()
        .flat_map(|l| l.curve.iter().map(|p| p.step))
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let mut s = format!(
        "<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' font-family='sans-serif' font-size='11'>\n<rect width='100%' height='100%' fill='white'/>\n"
    );
    for (panel, title) in [
        "CKA with the predicted F (1 = reached)",
        "sin-theta to span(F) (0 = reached)",
    ]
    .iter()
    .enumerate()
    {
        s += &panel_svg(panel, title, lines, max_step, (pw, pad));
    }
    s += &legend_svg(lines, pad);
    s + "</svg>\n"
}

/// Panel `panel` (0: CKA with F, 1: sin-theta to span(F)), 300 px high.
fn panel_svg(
    panel: usize,
    title: &str,
    lines: &[EncoderCurve],
    max_step: f64,
    (pw, pad): (f64, f64),
) -> String {
    let h = 300.0;
    let x0 = panel as f64 * pw;
    let x = |step: f64| x0 + pad + (pw - 1.5 * pad) * step / max_step;
    let y = |v: f64| h - pad - (h - 2.5 * pad) * v.clamp(0.0, 1.0);
    let mut s = format!("<text x='{}' y='16'>{title}</text>\n", x0 + pad);
    for v in [0.0, 0.5, 1.0] {
        s += &format!(
            "<text x='{}' y='{}'>{v:.1}</text><line x1='{}' y1='{}' x2='{}' y2='{}' stroke='#eee'/>\n",
            x0 + 12.0,
            y(v) + 4.0,
            x(0.0),
            y(v),
            x(max_step),
            y(v)
        );
    }
    s += &format!(
        "<text x='{}' y='{}'>step (max {max_step:.0})</text>\n",
        x0 + pw / 2.0 - 30.0,
        h - pad + 16.0
    );
    for (i, line) in lines.iter().enumerate() {
        let pts: Vec<String> = line
            .curve
            .iter()
            .map(|p| {
                let v = if panel == 0 {
                    p.cka_to_theory
                } else {
                    p.sin_theta_to_theory
                };
                format!("{:.1},{:.1}", x(p.step as f64), y(v))
            })
            .collect();
        s += &format!(
            "<polyline class='curve' data-label='{}' points='{}' fill='none' stroke='{}' stroke-width='1.5'{}/>\n",
            line.label,
            pts.join(" "),
            COLOURS[(i / 2) % COLOURS.len()],
            dash(line.caption)
        );
    }
    s
}

/// `stroke-dasharray` for caption encoders.
fn dash(caption: bool) -> &'static str {
    if caption {
        " stroke-dasharray='4 2'"
    } else {
        ""
    }
}

/// One legend entry per encoder: its label and its steps (P: stopped on the plateau).
fn legend_svg(lines: &[EncoderCurve], pad: f64) -> String {
    let mut s = String::new();
    for (i, line) in lines.iter().enumerate() {
        let (col, row) = (i % 4, i / 4);
        let (lx, ly) = (pad + 180.0 * col as f64, 310.0 + 14.0 * row as f64);
        s += &format!(
            "<line x1='{lx}' y1='{}' x2='{}' y2='{}' stroke='{}' stroke-width='1.5'{}/><text x='{}' y='{ly}'>{} ({}{})</text>\n",
            ly - 4.0,
            lx + 16.0,
            ly - 4.0,
            COLOURS[(i / 2) % COLOURS.len()],
            dash(line.caption),
            lx + 20.0,
            line.label,
            line.steps,
            if line.plateau { " P" } else { "" }
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(steps: usize) -> serde_json::Value {
        let curve: Vec<serde_json::Value> = (0..=steps / 50)
            .map(|k| {
                serde_json::json!({"step": 50 * k, "loss": -1.0, "cka_to_theory": 0.5,
                    "sin_theta_to_theory": 1.0 - 0.1 * k as f64})
            })
            .collect();
        let t = serde_json::json!({"steps": steps, "plateau": true, "curve": curve});
        serde_json::json!({"kind": "good", "loss": "spectral", "observation": "rendered",
            "image_training": t.clone(), "text_training": t, "learned": {}})
    }

    /// A results.json gives two curves per entry, labelled as the demo labels them, and
    /// the figure draws one polyline per curve per panel with every point.
    #[test]
    fn results_json_gives_the_curves_and_the_figure_draws_them() {
        let doc = serde_json::json!({"results": [entry(200), entry(100)]}).to_string();
        let lines = curves_from_results_json("results.json", &doc).unwrap();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0].label, "rendered spectral good image");
        assert!(lines[1].caption && !lines[0].caption);
        assert_eq!(lines[0].curve.len(), 5);
        assert!((lines[0].curve[4].sin_theta_to_theory - 0.6).abs() < 1e-12);
        let svg = convergence_svg(&lines);
        assert_eq!(svg.matches("<polyline class='curve'").count(), 8);
        assert!(svg.contains("step (max 200)"));
        assert!(svg.contains("rendered spectral good text (200 P)"));
    }

    /// Malformed input names the file, the entry and the field.
    #[test]
    fn bad_results_name_file_entry_and_field() {
        for (doc, needles) in [
            ("{", vec!["r.json", "not JSON"]),
            ("{\"x\": 1}", vec!["r.json", "`results`"]),
            ("{\"results\": []}", vec!["r.json", "empty"]),
            (
                "{\"results\": [{\"kind\": \"good\"}]}",
                vec!["r.json", "results[0]", "loss"],
            ),
        ] {
            let e = curves_from_results_json("r.json", doc)
                .unwrap_err()
                .to_string();
            for n in needles {
                assert!(e.contains(n), "{e:?} lacks {n:?}");
            }
        }
    }
}
