//! Checkpoint lab: a trained text encoder (the `prh-native export` bundle) running in the
//! browser. Type texts, embed them with burn compiled to wasm32, and see which texts the
//! encoder places together (paper §5: the representation compared across modalities).
//!
//! Backend: burn's CPU backend (ndarray) compiled to WebAssembly. The WebGPU backend is
//! not built into this page yet (it doubles the build), so every embedding runs on CPU.

use crate::draw;
use crate::export::ExportButtons;
use leptos::prelude::*;
use prh_core::backend::Cpu;
use prh_core::bundle::{Bundle, read_bundle};
use prh_core::text_task::embed_texts;
use std::sync::Arc;

/// Texts shown before the user types their own: Multi30k-style captions, two per scene.
const EXAMPLE_TEXTS: &str = "a man rides a bicycle down the street\n\
a cyclist pedals along a city road\n\
two dogs play in the snow\n\
a pair of puppies run through white snow\n\
a woman sings on a stage\n\
a singer performs for a crowd";

/// Where the page's demo bundle lives (trained by `configs/tiny.toml`, see the README).
const DEMO_BUNDLE: &str = "assets/demo_model.prh.safetensors";

/// Embeddings of the typed texts and what they took.
struct Embedded {
    /// The texts, one per row.
    texts: Vec<String>,
    /// Row-major `[n, d]` embeddings (pooled last hidden state).
    rows: Vec<f32>,
    /// Width d.
    d: usize,
    /// Milliseconds embedding took.
    ms: f64,
}

impl Embedded {
    /// Cosine similarity of rows i and j.
    fn cosine(&self, i: usize, j: usize) -> f64 {
        let (a, b) = (
            &self.rows[i * self.d..(i + 1) * self.d],
            &self.rows[j * self.d..(j + 1) * self.d],
        );
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
}

/// Parses bundle bytes on the CPU backend.
fn load(name: &str, bytes: &[u8]) -> Result<Arc<Bundle<Cpu>>, String> {
    read_bundle::<Cpu>(name, bytes, &Default::default())
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

/// Embeds non-empty lines of `text`.
fn embed(bundle: &Bundle<Cpu>, text: &str) -> Result<Embedded, String> {
    let texts: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    if texts.is_empty() {
        return Err("type at least one text (one per line)".into());
    }
    let t0 = crate::now_ms();
    let rows = embed_texts(
        &bundle.model,
        &bundle.spec,
        &bundle.tokenizer,
        &texts,
        16,
        &Default::default(),
    )
    .map_err(|e| e.to_string())?;
    let d = rows.len() / texts.len();
    Ok(Embedded {
        texts,
        rows,
        d,
        ms: crate::now_ms() - t0,
    })
}

/// Fetches and parses the demo bundle shipped with the page.
async fn fetch_demo() -> Result<Arc<Bundle<Cpu>>, String> {
    let window = web_sys::window().ok_or("no window")?;
    let resp = wasm_bindgen_futures::JsFuture::from(window.fetch_with_str(DEMO_BUNDLE))
        .await
        .map_err(|e| format!("{DEMO_BUNDLE}: fetch failed: {e:?}"))?;
    let resp: web_sys::Response = wasm_bindgen::JsCast::dyn_into(resp)
        .map_err(|_| format!("{DEMO_BUNDLE}: not a response"))?;
    if !resp.ok() {
        return Err(format!("{DEMO_BUNDLE}: HTTP {}", resp.status()));
    }
    let buf =
        wasm_bindgen_futures::JsFuture::from(resp.array_buffer().map_err(|e| format!("{e:?}"))?)
            .await
            .map_err(|e| format!("{e:?}"))?;
    load(DEMO_BUNDLE, &js_sys::Uint8Array::new(&buf).to_vec())
}

/// The checkpoint lab.
#[component]
pub fn CheckpointLab() -> impl IntoView {
    let bundle = RwSignal::new(None::<Result<Arc<Bundle<Cpu>>, String>>);
    let text = RwSignal::new(EXAMPLE_TEXTS.to_string());
    let result = RwSignal::new(None::<Result<Arc<Embedded>, String>>);
    Effect::new(move |_| crate::url_state::set(&[("lab", "checkpoint".into())]));
    let load_demo = move |_| {
        leptos::task::spawn_local(async move { bundle.set(Some(fetch_demo().await)) });
    };
    let on_pick = move |ev: web_sys::Event| {
        let files = ev
            .target()
            .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlInputElement>(t).ok())
            .and_then(|i| i.files());
        let Some(file) = files.and_then(|f| f.get(0)) else {
            return;
        };
        leptos::task::spawn_local(async move {
            let name = file.name();
            let r = match wasm_bindgen_futures::JsFuture::from(file.array_buffer()).await {
                Ok(buf) => load(&name, &js_sys::Uint8Array::new(&buf).to_vec()),
                Err(e) => Err(format!("{name}: could not read the file: {e:?}")),
            };
            bundle.set(Some(r));
        });
    };
    let run = move |_| {
        if let Some(Ok(b)) = bundle.get_untracked() {
            result.set(Some(embed(&b, &text.get_untracked()).map(Arc::new)));
        }
    };
    let info = move || {
        match bundle.get() {
        Some(Ok(b)) => view! {
            <p class="status" id="bundle-info">{format!(
                "loaded: {} layers × width {}, vocabulary {}, max {} tokens · backend: CPU (burn ndarray in WebAssembly; WebGPU is not built into this page)",
                b.spec.layers, b.spec.d_model, b.tokenizer.vocab_size(), b.spec.max_len
            )}</p>
        }
        .into_any(),
        Some(Err(e)) => view! { <pre class="error" id="error-bundle">{e}</pre> }.into_any(),
        None => view! { <p class="status">"Load the demo encoder or your own export (prh-native export --run RUN)."</p> }.into_any(),
    }
    };
    view! {
        <div class="controls">
            <button id="load-demo-model" on:click=load_demo>"Load demo encoder"</button>
            <label>"or a bundle (.safetensors) "<input type="file" id="file-bundle" accept=".safetensors" on:change=on_pick /></label>
            <button id="embed" on:click=run disabled=move || !matches!(bundle.get(), Some(Ok(_)))>"Embed the texts"</button>
        </div>
        {info}
        <div class="grid">
            <div class="card">
                <h2>"Texts (one per line)"</h2>
                <textarea id="texts" rows="10" style="width:100%" prop:value=move || text.get()
                    on:input=move |ev| text.set(event_target_value(&ev))></textarea>
                <p class="explain">"The encoder was trained with good views only: two captions of one image are a positive pair; it never saw an image or a pairing with another modality."</p>
            </div>
            {move || match result.get() {
                None => None,
                Some(Err(e)) => Some(view! { <pre class="error" id="error-embed">{e}</pre> }.into_any()),
                Some(Ok(r)) => Some(view! { <Neighbours r=r /> }.into_any()),
            }}
        </div>
    }
}

/// Cosine similarities between the embedded texts and each text's nearest neighbour.
#[component]
fn Neighbours(r: Arc<Embedded>) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let n = r.texts.len();
    let sims: Vec<f64> = (0..n * n).map(|x| r.cosine(x / n, x % n)).collect();
    // The diagonal (each text with itself, cosine 1) is blanked so the colour scale shows
    // the similarities between different texts.
    let s2: Vec<f64> = sims
        .iter()
        .enumerate()
        .map(|(x, &v)| if x / n == x % n { 0.0 } else { v })
        .collect();
    Effect::new(move |_| {
        if let Some(c) = canvas.get() {
            draw::heatmap(&c, n, n, &s2, true, None);
        }
    });
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
            move |_| serde_json::json!({ "texts": r.texts, "d": r.d, "embeddings_row_major": r.rows, "cosine": sims }),
        )
    };
    view! {
        <div class="card">
            <h2>"Nearest texts "<span class="status" id="embed-ms">{format!("({} texts embedded in {:.0} ms on CPU)", n, r.ms)}</span>
                <ExportButtons canvas=canvas numbers=json name="text_embeddings" /></h2>
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
