//! Checkpoint lab: a trained text encoder (the `prh-native export` bundle) running in the
//! browser. Type texts, embed them with burn — on WebGPU when the browser has an adapter,
//! else on the CPU backend compiled to WebAssembly — and see which texts the encoder places
//! together and, through the rotation fitted by the vision experiment, which ImageNet
//! classes (paper §5: the representation compared across modalities).
//!
//! Results are drawn by [`crate::checkpoint_results`].

use crate::backends::{self, Gpu, Which};
use crate::checkpoint_results::{Classes, Neighbours};
use crate::class_vectors::ClassVectors;
use leptos::prelude::*;
use prh_core::backend::Cpu;
use prh_core::tasks::bundle::{Bundle, read_bundle};
use std::sync::Arc;

/// Texts shown before the user types their own: Multi30k-style captions, two per scene.
const EXAMPLE_TEXTS: &str = "a man rides a bicycle down the street\n\
a cyclist pedals along a city road\n\
two dogs play in the snow\n\
a pair of puppies run through white snow\n\
a woman sings on a stage\n\
a singer performs for a crowd";

/// Where the page's demo bundle lives (trained by `configs/tiny.toml`, see the README).
pub const DEMO_BUNDLE: &str = "assets/demo_model.prh.safetensors";
/// The views-vision experiment's good-view encoder and its ImageNet class vectors
/// (`web/make_demo.sh --vision`).
pub const DEMO_VISION: (&str, &str) = (
    "assets/demo_vision.prh.safetensors",
    "assets/demo_vision.imagenet.safetensors",
);

/// The encoders shipped with the page (`model` in the URL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DemoModel {
    /// [`DEMO_BUNDLE`].
    Demo,
    /// [`DEMO_VISION`]: encoder and ImageNet class vectors.
    Vision,
}

impl DemoModel {
    /// The URL value (`model=`).
    fn key(self) -> &'static str {
        match self {
            DemoModel::Demo => "demo",
            DemoModel::Vision => "vision",
        }
    }

    fn parse(s: &str) -> Option<DemoModel> {
        [DemoModel::Demo, DemoModel::Vision]
            .into_iter()
            .find(|m| m.key() == s)
    }

    /// The bundle's path under the page.
    fn bundle(self) -> &'static str {
        match self {
            DemoModel::Demo => DEMO_BUNDLE,
            DemoModel::Vision => DEMO_VISION.0,
        }
    }

    /// Its class-vector file, if it ships one.
    fn classes(self) -> Option<&'static str> {
        match self {
            DemoModel::Demo => None,
            DemoModel::Vision => Some(DEMO_VISION.1),
        }
    }
}

/// Texts per forward pass on the CPU (as `prh-native embed`'s reference values were made).
const BATCH: usize = 16;
/// Texts per forward pass on WebGPU, every batch padded to one shape (fewer, larger
/// dispatches; see `backends::fixed_shape`).
const GPU_BATCH: usize = 64;

/// A loaded bundle: the CPU model, and the bytes to build the WebGPU one from on demand.
pub struct Loaded {
    /// File name.
    pub name: String,
    /// The encoder on the CPU backend.
    pub cpu: Bundle<Cpu>,
    /// The file's bytes.
    bytes: Vec<u8>,
}

/// Embeddings of the typed texts and what they took.
pub struct Embedded {
    /// The texts, one per row.
    pub texts: Vec<String>,
    /// Row-major `[n, d]` embeddings (pooled last hidden state).
    pub rows: Vec<f32>,
    /// Width d.
    pub d: usize,
    /// Milliseconds the embedding itself took (device set-up and model upload excluded).
    pub ms: f64,
    /// The backend that ran.
    pub which: Which,
    /// The WebGPU adapter, or why the CPU ran instead.
    pub note: String,
    /// File name of the encoder that embedded them.
    pub encoder: String,
    /// The encoder's shape in words ("2 layers × width 64, max 32 tokens").
    pub model: String,
    /// Which bundle load made these (the lab counts loads): results of an earlier encoder
    /// are never shown beside a later one's inputs.
    pub bundle_load: u64,
    /// The text box as it was embedded (stale results are marked when it changes).
    pub source_text: String,
    /// Texts longer than the encoder's context: (text index, its token count).
    pub cut: Vec<(usize, usize)>,
    /// Tokens the encoder reads per text (max_len, less one for [CLS] when it uses one).
    pub cap: usize,
}

/// Parses bundle bytes on the CPU backend (after checking they are a safetensors file at
/// all, so another format gets a message that says what it is).
fn load(name: &str, bytes: Vec<u8>) -> Result<Arc<Loaded>, String> {
    crate::container::check_safetensors(name, &bytes)?;
    let cpu = read_bundle::<Cpu>(name, &bytes, &Default::default()).map_err(|e| e.to_string())?;
    Ok(Arc::new(Loaded {
        name: name.to_string(),
        cpu,
        bytes,
    }))
}

/// Fetches a file shipped with the page.
pub async fn fetch_asset(path: &str) -> Result<Vec<u8>, String> {
    let window = web_sys::window().ok_or("no window")?;
    let resp = wasm_bindgen_futures::JsFuture::from(window.fetch_with_str(path))
        .await
        .map_err(|e| format!("{path}: fetch failed: {e:?}"))?;
    let resp: web_sys::Response =
        wasm_bindgen::JsCast::dyn_into(resp).map_err(|_| format!("{path}: not a response"))?;
    if !resp.ok() {
        return Err(format!("{path}: HTTP {}", resp.status()));
    }
    let buf =
        wasm_bindgen_futures::JsFuture::from(resp.array_buffer().map_err(|e| format!("{e:?}"))?)
            .await
            .map_err(|e| format!("{e:?}"))?;
    Ok(js_sys::Uint8Array::new(&buf).to_vec())
}

/// The first file of a file input's change event, read into (name, bytes).
async fn picked_file(ev: web_sys::Event) -> Option<Result<(String, Vec<u8>), String>> {
    let file = ev
        .target()
        .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlInputElement>(t).ok())
        .and_then(|i| i.files())
        .and_then(|f| f.get(0))?;
    let name = file.name();
    Some(
        match wasm_bindgen_futures::JsFuture::from(file.array_buffer()).await {
            Ok(buf) => Ok((name, js_sys::Uint8Array::new(&buf).to_vec())),
            Err(e) => Err(format!("{name}: could not read the file: {e:?}")),
        },
    )
}

thread_local! {
    /// What "auto" chose after measuring both backends once on this page: the backend,
    /// and the measured milliseconds of WebGPU (warm) and the CPU on those texts.
    static AUTO_CHOICE: std::cell::Cell<Option<(Which, f64, f64)>> = const { std::cell::Cell::new(None) };
}

/// `texts` embedded on the CPU backend: (rows, token counts), milliseconds.
async fn on_cpu(
    loaded: &Loaded,
    texts: &[String],
) -> Result<((Vec<f32>, Vec<usize>), f64), String> {
    let b = &loaded.cpu;
    let t0 = crate::now_ms();
    let out = backends::embed(
        &b.model,
        &b.spec,
        &b.tokenizer,
        texts,
        (BATCH, false),
        &Default::default(),
    )
    .await?;
    Ok((out, crate::now_ms() - t0))
}

/// `texts` embedded on WebGPU, `runs` times (the first pays for kernel compilation and
/// autotuning): the last run's (rows, token counts) and milliseconds, and the model
/// upload's milliseconds.
async fn on_gpu(
    loaded: &Loaded,
    texts: &[String],
    device: &prh_core::backend::burn::tensor::Device<Gpu>,
    runs: usize,
) -> Result<((Vec<f32>, Vec<usize>), f64, f64), String> {
    let t0 = crate::now_ms();
    let gpu = read_bundle::<Gpu>(&loaded.name, &loaded.bytes, device).map_err(|e| e.to_string())?;
    let upload = crate::now_ms() - t0;
    let mut last = None;
    for _ in 0..runs.max(1) {
        let t1 = crate::now_ms();
        let out = backends::embed(
            &gpu.model,
            &gpu.spec,
            &gpu.tokenizer,
            texts,
            (GPU_BATCH, true),
            device,
        )
        .await?;
        last = Some((out, crate::now_ms() - t1));
    }
    let (out, ms) = last.ok_or("no WebGPU run")?;
    Ok((out, ms, upload))
}

/// Embeds the non-empty lines of `text` on the backend `want` asks for ("webgpu", "cpu" or
/// "auto"). "auto" uses the CPU when there is no WebGPU adapter; with one, it measures
/// both backends once on the first texts it embeds (WebGPU warm: its first run compiles
/// kernels) and keeps the faster for the rest of the page's life, saying why. A software
/// adapter such as SwiftShader is ~100x slower than the CPU backend, so picking WebGPU
/// because it exists would be the wrong choice there.
async fn embed(loaded: Arc<Loaded>, text: String, want: String) -> Result<Embedded, String> {
    let texts: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    if texts.is_empty() {
        return Err("type at least one text (one per line)".into());
    }
    let b = &loaded.cpu;
    let gpu = match want.as_str() {
        "cpu" => Err("CPU chosen".to_string()),
        _ => backends::webgpu_device().await,
    };
    let ((rows, tokens), ms, which, note) = match (want.as_str(), gpu) {
        ("cpu", _) => {
            let (out, ms) = on_cpu(&loaded, &texts).await?;
            (out, ms, Which::Cpu, "CPU chosen".to_string())
        }
        ("webgpu", Ok((device, adapter))) => {
            let (out, ms, upload) = on_gpu(&loaded, &texts, &device, 1).await?;
            let note = format!("adapter: {adapter}; model upload {upload:.0} ms");
            (out, ms, Which::WebGpu, note)
        }
        (_, Ok((device, adapter))) => match AUTO_CHOICE.with(std::cell::Cell::get) {
            Some((which, g, c)) => {
                let note = format!(
                    "auto: {} (measured once on this page: WebGPU {g:.0} ms vs CPU {c:.0} ms; adapter: {adapter})",
                    which.name()
                );
                if which == Which::WebGpu {
                    let (out, ms, _) = on_gpu(&loaded, &texts, &device, 1).await?;
                    (out, ms, which, note)
                } else {
                    let (out, ms) = on_cpu(&loaded, &texts).await?;
                    (out, ms, which, note)
                }
            }
            None => {
                let (g_out, g, _) = on_gpu(&loaded, &texts, &device, 2).await?;
                let (c_out, c) = on_cpu(&loaded, &texts).await?;
                let which = if g < c { Which::WebGpu } else { Which::Cpu };
                AUTO_CHOICE.with(|a| a.set(Some((which, g, c))));
                let note = format!(
                    "auto: measured both on these texts, WebGPU {g:.0} ms (warm) vs CPU {c:.0} ms; using {} from now on (adapter: {adapter})",
                    which.name()
                );
                if which == Which::WebGpu {
                    (g_out, g, which, note)
                } else {
                    (c_out, c, which, note)
                }
            }
        },
        ("webgpu", Err(e)) => return Err(format!("WebGPU was asked for but is unavailable: {e}")),
        (_, Err(e)) => {
            let (out, ms) = on_cpu(&loaded, &texts).await?;
            let note = format!("WebGPU unavailable ({e}), fell back to the CPU");
            (out, ms, Which::Cpu, note)
        }
    };
    let d = rows.len() / texts.len();
    let cap = backends::context_tokens(&b.spec);
    let cut = tokens
        .iter()
        .enumerate()
        .filter(|&(_, &t)| t > cap)
        .map(|(i, &t)| (i, t))
        .collect();
    Ok(Embedded {
        texts,
        rows,
        d,
        ms,
        which,
        note,
        encoder: loaded.name.clone(),
        model: format!(
            "{} layers × width {}, max {} tokens",
            b.spec.layers, b.spec.d_model, b.spec.max_len
        ),
        bundle_load: 0,
        source_text: text,
        cut,
        cap,
    })
}

/// A loaded file slot: nothing yet, the parsed value, or the error to show.
type Slot<T> = RwSignal<Option<Result<Arc<T>, String>>>;

/// The checkpoint lab.
#[component]
pub fn CheckpointLab() -> impl IntoView {
    let bundle: Slot<Loaded> = RwSignal::new(None);
    let classes: Slot<ClassVectors> = RwSignal::new(None);
    // The texts come from the URL when a link carries them (`texts`, one per line).
    let text = RwSignal::new(crate::url_state::get("texts", EXAMPLE_TEXTS.to_string()));
    // Which shipped encoder is loaded (`model` in the URL: a link reloads and embeds it);
    // None once the user's own bundle is loaded, which no URL can carry.
    let model = RwSignal::new(None::<DemoModel>);
    let result: Slot<Embedded> = RwSignal::new(None);
    let backend = RwSignal::new(crate::url_state::get("backend", "auto".to_string()));
    let busy = RwSignal::new(false);
    let centred = RwSignal::new(crate::url_state::get("centre", 0_u8) != 0);
    // Counts bundle loads. A new encoder clears the embeddings of the old one (and an
    // embedding still running for the old one is dropped when it finishes): the classes
    // table must never pair one encoder's embeddings with another's class vectors.
    let loads = RwSignal::new(0_u64);
    let cleared = RwSignal::new(None::<String>);
    let set_bundle = move |b: Result<Arc<Loaded>, String>| {
        let name = match &b {
            Ok(l) => l.name.clone(),
            Err(_) => "a file that did not load".to_string(),
        };
        if let Some(Ok(old)) = result.get_untracked() {
            cleared.set(Some(format!(
                "The encoder changed (now {name}): the embeddings made with {} were cleared. Press \"Embed the texts\" to embed them with this one.",
                old.encoder
            )));
        }
        result.set(None);
        bundle.set(Some(b));
        loads.update(|n| *n += 1);
    };
    Effect::new(move |_| {
        let t = text.get();
        crate::url_state::update(&[
            ("backend", Some(backend.get())),
            ("model", model.get().map(|m| m.key().to_string())),
            // The example texts are the default: left out, so ordinary links stay short.
            ("texts", (t != EXAMPLE_TEXTS).then_some(t)),
            ("centre", centred.get().then(|| "1".to_string())),
        ])
    });
    // Embeds the text box with the loaded encoder (the button, and a link's `model=`).
    let embed_now = move || {
        let Some(Ok(b)) = bundle.get_untracked() else {
            return;
        };
        busy.set(true);
        let (t, want) = (text.get_untracked(), backend.get_untracked());
        let load_no = loads.get_untracked();
        leptos::task::spawn_local(async move {
            let r = embed(b, t, want).await;
            busy.set(false);
            // The encoder was replaced while this ran: these embeddings belong to no input.
            if loads.get_untracked() != load_no {
                return;
            }
            cleared.set(None);
            result.set(Some(r.map(|mut e| {
                e.bundle_load = load_no;
                Arc::new(e)
            })));
        });
    };
    // Loads a shipped encoder (with its class vectors for the vision demo); `then_embed`:
    // embed the texts once it is loaded.
    let load_model = move |which: DemoModel, then_embed: bool| {
        model.set(Some(which));
        leptos::task::spawn_local(async move {
            let enc = which.bundle();
            set_bundle(fetch_asset(enc).await.and_then(|b| load(enc, b)));
            if let Some(cls) = which.classes() {
                classes.set(Some(fetch_asset(cls).await.and_then(|b| {
                    ClassVectors::from_bytes(cls, &b)
                        .map(Arc::new)
                        .map_err(|e| e.to_string())
                })));
            }
            if then_embed {
                embed_now();
            }
        });
    };
    let load_demo = move |_| load_model(DemoModel::Demo, false);
    let load_vision = move |_| load_model(DemoModel::Vision, false);
    if let Some(m) = DemoModel::parse(&crate::url_state::get("model", String::new())) {
        load_model(m, true);
    }
    let on_pick = move |ev: web_sys::Event| {
        leptos::task::spawn_local(async move {
            if let Some(r) = picked_file(ev).await {
                model.set(None);
                set_bundle(r.and_then(|(name, b)| load(&name, b)));
            }
        });
    };
    let on_classes = move |ev: web_sys::Event| {
        leptos::task::spawn_local(async move {
            if let Some(r) = picked_file(ev).await {
                classes.set(Some(r.and_then(|(name, b)| {
                    ClassVectors::from_bytes(&name, &b)
                        .map(Arc::new)
                        .map_err(|e| e.to_string())
                })));
            }
        });
    };
    let run = move |_| embed_now();
    // Whether the text box differs from the texts of the shown embeddings (a memo, so
    // typing re-renders only the notice).
    let texts_changed = Memo::new(move |_| {
        result.with(|r| matches!(r, Some(Ok(e)) if e.source_text != text.get()))
    });
    let info = move || {
        match bundle.get() {
        Some(Ok(b)) => view! {
            <p class="status" id="bundle-info">{format!(
                "loaded {}: {} layers × width {}, vocabulary {}, max {} tokens",
                b.name, b.cpu.spec.layers, b.cpu.spec.d_model, b.cpu.tokenizer.vocab_size(), b.cpu.spec.max_len
            )}</p>
        }
        .into_any(),
        Some(Err(e)) => view! { <pre class="error" id="error-bundle">{e}</pre> }.into_any(),
        None => view! { <p class="status">"Load the demo encoder or your own export (prh-native export --run RUN)."</p> }.into_any(),
    }
    };
    let classes_info = move || {
        match classes.get() {
        Some(Ok(c)) => view! {
            <p class="status" id="classes-info">{format!("class vectors {}: {} classes × {} dims", c.source, c.names.len(), c.d)}</p>
        }
        .into_any(),
        Some(Err(e)) => view! { <pre class="error" id="error-classes">{e}</pre> }.into_any(),
        None => ().into_any(),
    }
    };
    view! {
        <div class="controls">
            <button id="load-demo-model" on:click=load_demo>"Load demo encoder"</button>
            <button id="load-demo-vision" on:click=load_vision title="The views-vision experiment's good-view encoder with the ImageNet classes of EfficientNet-Lite0 mapped into its space">"Load vision-aligned demo (encoder + ImageNet classes)"</button>
            <label>"or a bundle (.safetensors) "<input type="file" id="file-bundle" accept=".safetensors" on:change=on_pick /></label>
            <label>"ImageNet class vectors (.imagenet.safetensors) "<input type="file" id="file-classes" accept=".safetensors" on:change=on_classes /></label>
            <label>"backend "
                <select id="backend" on:change=move |ev| backend.set(event_target_value(&ev))>
                    {[("auto", "the faster of WebGPU and CPU, measured once"), ("webgpu", "WebGPU"), ("cpu", "CPU (WebAssembly)")].into_iter().map(|(v, t)| view! {
                        <option value=v selected=move || backend.get() == v>{t}</option>
                    }).collect_view()}
                </select>
            </label>
            <label title="Subtract the mean of the typed texts' embeddings before taking cosines: removes the direction all embeddings share, which makes raw cosines all high">
                <input type="checkbox" id="centre-cosines" prop:checked=move || centred.get()
                    on:change=move |ev| centred.set(event_target_checked(&ev)) />"centred cosines"</label>
            <button id="embed" on:click=run disabled=move || busy.get() || !matches!(bundle.get(), Some(Ok(_)))>
                {move || if busy.get() { "embedding…" } else { "Embed the texts" }}
            </button>
        </div>
        {info}
        {classes_info}
        <div class="grid">
            <div class="card">
                <h2>"Texts (one per line)"</h2>
                <textarea id="texts" rows="10" style="width:100%" prop:value=move || text.get()
                    on:input=move |ev| text.set(event_target_value(&ev))></textarea>
                <p class="explain">"The encoder was trained with good views only: two captions of one image are a positive pair; it never saw an image or a pairing with another modality."</p>
            </div>
            {move || match result.get() {
                None => cleared.get().map(|m| view! { <p class="stale" id="stale-embed">{m}</p> }.into_any()),
                Some(Err(e)) => Some(view! { <pre class="error" id="error-embed">{e}</pre> }.into_any()),
                Some(Ok(r)) => { let (r1, r2) = (r.clone(), r.clone()); Some(view! {
                    {move || texts_changed.get().then(|| view! {
                        <p class="stale" id="stale-texts">"The texts changed since they were embedded: the results below are for the texts as they were. Press \"Embed the texts\" to update them."</p>
                    })}
                    {(!r.cut.is_empty()).then(|| view! {
                        <p class="stale" id="truncation-warning">{format!(
                            "Cut to the encoder's context ({} tokens): {}. Only the first {} tokens of each were embedded.",
                            r.cap,
                            r.cut.iter().map(|&(i, t)| format!("text {} ({t} tokens, \"{}…\")", i + 1, r.texts[i].chars().take(30).collect::<String>())).collect::<Vec<_>>().join("; "),
                            r.cap
                        )}</p>
                    })}
                    {move || view! { <Neighbours r=r1.clone() centred=centred.get() /> }}
                    {move || classes.get().and_then(Result::ok).map(|c| view! { <Classes r=r2.clone() classes=c /> })}
                }.into_any()) }
            }}
        </div>
    }
}
