//! The checkpoint lab's results: the texts' cosine similarities with each text's nearest
//! other text, and each text's nearest ImageNet classes through the fitted rotation.

use crate::checkpoint_lab::Embedded;
use crate::class_vectors::ClassVectors;
use crate::draw;
use crate::export::ExportButtons;
use crate::svg;
use leptos::prelude::*;
use std::sync::Arc;

/// Classes listed per text.
const TOP_CLASSES: usize = 5;

/// Up to this many texts the embeddings are also exposed in the page (`data-rows`), for
/// tests and for copying; beyond it the JSON export has them.
const ROWS_IN_PAGE: usize = 64;

/// Cosine similarity of rows i and j of a row-major `[n, d]` matrix:
/// <x_i, x_j> / (||x_i|| ||x_j||), 0 when either row is zero.
fn cosine(rows: &[f32], d: usize, i: usize, j: usize) -> f64 {
    let (a, b) = (&rows[i * d..(i + 1) * d], &rows[j * d..(j + 1) * d]);
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let na: f64 = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    if na > 0.0 && nb > 0.0 {
        dot / (na * nb)
    } else {
        0.0
    }
}

/// Cosine similarities between the embedded texts and each text's nearest neighbour.
#[component]
pub fn Neighbours(r: Arc<Embedded>) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let n = r.texts.len();
    let sims: Vec<f64> = (0..n * n)
        .map(|x| cosine(&r.rows, r.d, x / n, x % n))
        .collect();
    // The diagonal (each text with itself, cosine 1) is blanked so the colour scale shows
    // the similarities between different texts.
    let s2: Arc<Vec<f64>> = Arc::new(
        sims.iter()
            .enumerate()
            .map(|(x, &v)| if x / n == x % n { 0.0 } else { v })
            .collect(),
    );
    let s3 = s2.clone();
    Effect::new(move |_| {
        if let Some(c) = canvas.get() {
            draw::heatmap(&c, n, n, &s3, true, None);
        }
    });
    let vector =
        Callback::new(move |_| svg::heatmap(200.0, 200.0, (n, n), &s2, true, None).finish());
    let nearest: Vec<(usize, f64)> = (0..n)
        .map(|i| {
            (0..n)
                .filter(|&j| j != i)
                .map(|j| (j, sims[i * n + j]))
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap_or((i, 1.0))
        })
        .collect();
    let json = {
        let r = r.clone();
        Callback::new(
            move |_| serde_json::json!({ "texts": r.texts, "d": r.d, "backend": r.which.name(), "ms": r.ms, "embeddings_row_major": r.rows, "cosine": sims }),
        )
    };
    let data_rows = if n <= ROWS_IN_PAGE {
        serde_json::to_string(&r.rows).unwrap_or_default()
    } else {
        String::new()
    };
    view! {
        <div class="card">
            <h2>"Nearest texts "<span class="status" id="embed-ms" data-backend=r.which.name() data-ms=r.ms.to_string() data-n=n.to_string() data-rows=data_rows>
                {format!("({} texts embedded in {:.0} ms on {})", n, r.ms, r.which.name())}</span>
                <ExportButtons canvas=canvas vector=vector numbers=json name="text_embeddings" /></h2>
            <p class="status" id="backend-note">{format!("backend: {} — {}", r.which.name(), r.note)}</p>
            <canvas node_ref=canvas id="cosine-canvas" width="200" height="200"></canvas>
            <table class="metrics" id="neighbours">
                <tr><th>"text"</th><th>"nearest other text"</th><th>"cosine"</th></tr>
                {r.texts.iter().enumerate().map(|(i, t)| {
                    let (j, s) = nearest[i];
                    view! { <tr><td style="text-align:left">{t.clone()}</td><td style="text-align:left">{r.texts[j].clone()}</td><td>{format!("{s:.3}")}</td></tr> }
                }).collect_view()}
            </table>
            <p class="explain">"Cosine similarity of the pooled embeddings between different texts (red = similar, diagonal blanked). A well-trained good-view encoder makes captions of the same scene each other's nearest text; the demo encoder is tiny (2 layers × 64, 500 CPU steps on 2,000 images) and gets there only partly — drop in a bigger export to compare."</p>
        </div>
    }
}

/// Each text's nearest ImageNet classes: cosine between the centred text embedding and the
/// class vectors mapped into the text space.
#[component]
pub fn Classes(r: Arc<Embedded>, classes: Arc<ClassVectors>) -> impl IntoView {
    let n = r.texts.len();
    let ranked: Result<Vec<Vec<(usize, f64)>>, String> = (0..n)
        .map(|i| classes.nearest(&r.rows[i * r.d..(i + 1) * r.d], TOP_CLASSES))
        .collect();
    let ranked = match ranked {
        Ok(v) => v,
        Err(e) => {
            return view! { <div class="card"><h2>"Nearest ImageNet classes"</h2><pre class="error" id="error-classes-dim">{e}</pre></div> }.into_any();
        }
    };
    let fit = classes.fit.clone();
    view! {
        <div class="card">
            <h2>"Nearest ImageNet classes"</h2>
            <table class="metrics" id="classes-table">
                <tr><th>"text"</th><th>{format!("nearest {TOP_CLASSES} classes (cosine)")}</th></tr>
                {r.texts.iter().zip(&ranked).map(|(t, top)| view! {
                    <tr><td style="text-align:left">{t.clone()}</td><td style="text-align:left">
                        {top.iter().map(|&(j, s)| view! {
                            <span class="cls" data-index=j.to_string() data-score=s.to_string()>{format!("{} ({s:.3})", classes.names[j])}</span>"; "
                        }).collect_view()}
                    </td></tr>
                }).collect_view()}
            </table>
            <p class="explain">{format!(
                "From {}: {} ImageNet classes of the vision model, mapped into this encoder's space through the rotation fitted on paired data. Scores are cos(e − m, c): the text embedding e minus the centring m used in the fit, against each class vector c. A high score means the vision model represents that class where the text encoder puts the text: the two models agree up to a rotation.",
                classes.source, classes.names.len()
            )}</p>
            {(!fit.is_empty()).then(|| view! { <details><summary class="status">"the fit"</summary><pre class="status">{fit}</pre></details> })}
        </div>
    }
    .into_any()
}
