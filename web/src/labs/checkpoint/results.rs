//! The checkpoint lab's results: the texts' cosine similarities with each text's nearest
//! other text, and each text's nearest ImageNet classes through the fitted rotation.

use super::class_vectors::ClassVectors;
use super::compute::Embedded;
use crate::figures::draw;
use crate::figures::export::ExportButtons;
use crate::figures::svg;
use leptos::prelude::*;
use std::sync::Arc;

/// Classes listed per text.
const TOP_CLASSES: usize = 5;

/// Random directions drawn for the chance level of the top class score: its mean is then
/// known to about std / 16.
const CHANCE_DRAWS: usize = 256;

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

/// Rows minus their mean: x_i - (1/n) sum_j x_j, so that cosines measure where texts sit
/// relative to each other rather than along the direction all embeddings share.
///
/// # Shapes
/// `rows [n, d]` row-major -> `[n, d]`
fn centre_rows(rows: &[f32], d: usize) -> Vec<f32> {
    let n = rows.len() / d.max(1);
    let mean: Vec<f64> = (0..d)
        .map(|c| (0..n).map(|i| f64::from(rows[i * d + c])).sum::<f64>() / n as f64)
        .collect();
    rows.iter()
        .enumerate()
        .map(|(x, &v)| (f64::from(v) - mean[x % d]) as f32)
        .collect()
}

/// What the caption says about the encoder: the demo encoders by what they are, any
/// other bundle by its shape.
fn encoder_caption(r: &Embedded) -> String {
    use super::compute::{DEMO_BUNDLE, DEMO_VISION};
    if r.encoder == DEMO_BUNDLE {
        "The demo encoder is a bag of word embeddings (128-d, 800 CPU steps of 128 Multi30k images, the views-multilingual recipe; caption 1 vs caption 2 of 300 test images: mutual 10-NN 0.31): small, so expect only some captions of a scene to find each other — drop in a bigger export to compare.".into()
    } else if r.encoder == DEMO_VISION.0 {
        "This is the views-vision experiment's good-view encoder (a bag of word embeddings, 128-d, 8,192 steps on WordNet glosses and Multi30k captions, 8,000-token vocabulary; mutual 10-NN 0.25 with EfficientNet-Lite0's class vectors, ImageNet-100 R@5 0.85): small, so expect the nearest classes to be right for plain everyday words, not for rare ones.".into()
    } else {
        format!("This encoder ({}): {}.", r.encoder, r.model)
    }
}

/// Cosine similarities between the embedded texts and each text's nearest neighbour;
/// `centred`: cosines of the rows minus their mean ([`centre_rows`]).
#[component]
pub fn Neighbours(r: Arc<Embedded>, centred: bool) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let n = r.texts.len();
    let rows = if centred {
        centre_rows(&r.rows, r.d)
    } else {
        r.rows.clone()
    };
    // Centring in f64 and rounding back to f32 keeps one cosine routine; the rounding
    // (~1e-7 relative) is far below the printed 3 decimals.
    let sims: Vec<f64> = (0..n * n)
        .map(|x| cosine(&rows, r.d, x / n, x % n))
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
    // None for a lone text: it has no other text to be near.
    let nearest: Vec<Option<(usize, f64)>> = (0..n)
        .map(|i| {
            (0..n)
                .filter(|&j| j != i)
                .map(|j| (j, sims[i * n + j]))
                .max_by(|a, b| a.1.total_cmp(&b.1))
        })
        .collect();
    let json = {
        let r = r.clone();
        Callback::new(
            move |_| serde_json::json!({ "texts": r.texts, "d": r.d, "backend": r.which.name(), "ms": r.ms, "embeddings_row_major": r.rows, "centred": centred, "cosine": sims }),
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
                <tr><th>"text"</th><th>"nearest other text"</th><th>{if centred { "centred cosine" } else { "cosine" }}</th></tr>
                {r.texts.iter().enumerate().map(|(i, t)| match nearest[i] {
                    Some((j, s)) => view! { <tr><td style="text-align:left">{t.clone()}</td><td style="text-align:left" data-j=j.to_string()>{r.texts[j].clone()}</td><td data-cos=s.to_string()>{format!("{s:.3}")}</td></tr> }.into_any(),
                    None => view! { <tr><td style="text-align:left">{t.clone()}</td><td style="text-align:left" class="status">"— (no other text: type at least two)"</td><td>"—"</td></tr> }.into_any(),
                }).collect_view()}
            </table>
            <p class="explain">{format!(
                "{} of the pooled embeddings between different texts (red = similar, diagonal blanked). A well-trained good-view encoder makes captions of the same scene each other's nearest text; with {n} texts a text's nearest is one given other text by chance with probability 1/(n − 1){}. {}{}",
                if centred { "Centred cosine (each embedding minus the mean of these texts' embeddings)" } else { "Cosine similarity" },
                if n > 1 { format!(" = {:.3}", 1.0 / (n - 1) as f64) } else { String::new() },
                encoder_caption(&r),
                if centred && n < 3 { " Centring needs at least three texts: with two, the centred embeddings are opposite (cosine −1)." } else if !centred { " Raw cosines of such encoders are often all high (the embeddings share a direction): tick \"centred cosines\" to compare them around their mean." } else { "" }
            )}</p>
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
    let (chance, chance_sd) = classes.chance_top_score(CHANCE_DRAWS);
    let measured = match &classes.measured {
        Some(m) => view! {
            <p class="status" id="classes-alignment" data-r1=m.r1.to_string() data-r1-chance=m.chance(1).to_string()>{format!(
                "Measured alignment of this encoder with the vision model (recorded in the file's fit): text → image retrieval over the {} ImageNet-100 classes held out of the fit gives R@1 = {:.3} (chance {:.3}) and R@5 = {:.3} (chance {:.3}).",
                m.classes, m.r1, m.chance(1), m.r5, m.chance(5)
            )}</p>
        }.into_any(),
        None => view! {
            <p class="status" id="classes-alignment">"This file records no measured alignment (retrieval scores of its fit): compare the scores below with the chance level only."</p>
        }.into_any(),
    };
    let verdict = match &classes.measured {
        Some(m) if m.r1 >= 0.5 => {
            "The measured alignment is high: the two models largely agree up to a rotation."
        }
        Some(m) if m.r1 > 2.0 * m.chance(1) => {
            "The measured alignment is above chance but far from perfect: the two models agree up to a rotation only in part, so read single class names with care."
        }
        Some(_) => {
            "The measured alignment is near chance: these class names say little about the text."
        }
        None => "How far the two models agree is not recorded in this file.",
    };
    view! {
        <div class="card">
            <h2>"Nearest ImageNet classes"</h2>
            {measured}
            <p class="status" id="classes-chance" data-mean=chance.to_string() data-std=chance_sd.to_string()>{format!(
                "Chance level: a random direction's best class scores {chance:.3} ± {chance_sd:.3} (mean ± std of the top cosine over {CHANCE_DRAWS} random directions in this {}-dimensional space); texts marked \"≈ chance\" score no higher than mean + 2 std.",
                classes.d
            )}</p>
            <table class="metrics" id="classes-table">
                <tr><th>"text"</th><th>{format!("nearest {TOP_CLASSES} classes (cosine)")}</th></tr>
                {r.texts.iter().zip(&ranked).map(|(t, top)| view! {
                    <tr><td style="text-align:left">{t.clone()}{top.first().filter(|&&(_, s)| s <= chance + 2.0 * chance_sd).map(|_| view! { <span class="status chance-mark">" (≈ chance)"</span> })}</td><td style="text-align:left">
                        {top.iter().map(|&(j, s)| view! {
                            <span class="cls" data-index=j.to_string() data-score=s.to_string()>{format!("{} ({s:.3})", classes.names[j])}</span>"; "
                        }).collect_view()}
                    </td></tr>
                }).collect_view()}
            </table>
            <p class="explain">{format!(
                "From {}: {} ImageNet classes of the vision model, mapped into this encoder's space through the rotation fitted on paired data. Scores are cos(e − m, c): the text embedding e minus the centring m used in the fit, against each class vector c. A high score means the vision model represents that class where the text encoder puts the text. {verdict}",
                classes.source, classes.names.len()
            )}</p>
            {(!fit.is_empty()).then(|| view! { <details><summary class="status">"the fit"</summary><pre class="status">{fit}</pre></details> })}
        </div>
    }
    .into_any()
}
