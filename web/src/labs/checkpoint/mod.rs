//! Checkpoint lab: a trained text encoder (the `prh-native export` bundle) running in the
//! browser. Type texts, embed them with burn — on WebGPU when the browser has an adapter,
//! else on the CPU backend compiled to WebAssembly — and see which texts the encoder places
//! together and, through the rotation fitted by the vision experiment, which ImageNet
//! classes (paper §5: the representation compared across modalities).
//!
//! The numbers are in [`compute`] (backends in [`backends`], class vectors in
//! [`class_vectors`]); results are drawn by [`results`]. None of them imports this file.

mod backends;
mod class_vectors;
mod compute;
mod container;
mod pretrained;
mod results;

use crate::widgets::files::{fetch_asset, picked_file};
use crate::widgets::url_state;
use class_vectors::ClassVectors;
use compute::{DemoModel, Embedded, Loaded, embed, load};
use leptos::prelude::*;
use results::{Classes, Neighbours};
use std::sync::Arc;

/// Texts shown before the user types their own: Multi30k-style captions, two per scene.
const EXAMPLE_TEXTS: &str = "a man rides a bicycle down the street\n\
a cyclist pedals along a city road\n\
two dogs play in the snow\n\
a pair of puppies run through white snow\n\
a woman sings on a stage\n\
a singer performs for a crowd";

/// A loaded file slot: nothing yet, the parsed value, or the error to show.
type Slot<T> = RwSignal<Option<Result<Arc<T>, String>>>;

/// The lab's state, each piece a signal (the URL keys say which ones a link carries).
#[derive(Clone, Copy)]
struct State {
    bundle: Slot<Loaded>,
    classes: Slot<ClassVectors>,
    /// The text box (`texts`, one per line; left out while it holds the examples).
    text: RwSignal<String>,
    /// Which shipped encoder is loaded (`model` in the URL: a link reloads and embeds it);
    /// None once the user's own bundle is loaded, which no URL can carry.
    model: RwSignal<Option<DemoModel>>,
    result: Slot<Embedded>,
    /// "auto", "webgpu" or "cpu" (`backend`).
    backend: RwSignal<String>,
    busy: RwSignal<bool>,
    /// Cosines of the rows minus their mean (`centre`).
    centred: RwSignal<bool>,
    /// Counts bundle loads. A new encoder clears the embeddings of the old one (and an
    /// embedding still running for the old one is dropped when it finishes): the classes
    /// table must never pair one encoder's embeddings with another's class vectors.
    loads: RwSignal<u64>,
    /// Why the shown embeddings were cleared (the encoder changed), until the next embed.
    cleared: RwSignal<Option<String>>,
}

impl State {
    /// A new lab's state, from the URL where a link carries it.
    fn from_url() -> State {
        State {
            bundle: RwSignal::new(None),
            classes: RwSignal::new(None),
            text: RwSignal::new(url_state::get("texts", EXAMPLE_TEXTS.to_string())),
            model: RwSignal::new(None),
            result: RwSignal::new(None),
            backend: RwSignal::new(url_state::get("backend", "auto".to_string())),
            busy: RwSignal::new(false),
            centred: RwSignal::new(url_state::get("centre", 0_u8) != 0),
            loads: RwSignal::new(0_u64),
            cleared: RwSignal::new(None),
        }
    }

    /// Writes the lab's URL keys whenever they change.
    fn sync_url(self) {
        Effect::new(move |_| {
            let t = self.text.get();
            url_state::update(&[
                ("backend", Some(self.backend.get())),
                ("model", self.model.get().map(|m| m.key().to_string())),
                // The example texts are the default: left out, so ordinary links stay short.
                ("texts", (t != EXAMPLE_TEXTS).then_some(t)),
                ("centre", self.centred.get().then(|| "1".to_string())),
            ])
        });
    }

    /// Shows a newly loaded bundle (or its error), clearing the old encoder's embeddings.
    fn set_bundle(self, b: Result<Arc<Loaded>, String>) {
        let name = match &b {
            Ok(l) => l.name.clone(),
            Err(_) => "a file that did not load".to_string(),
        };
        if let Some(Ok(old)) = self.result.get_untracked() {
            self.cleared.set(Some(format!(
                "The encoder changed (now {name}): the embeddings made with {} were cleared. Press \"Embed the texts\" to embed them with this one.",
                old.encoder
            )));
        }
        self.result.set(None);
        self.bundle.set(Some(b));
        self.loads.update(|n| *n += 1);
    }

    /// Sets the class vectors from a file's bytes (or the error).
    fn set_classes(self, source: &str, bytes: Result<Vec<u8>, String>) {
        self.classes.set(Some(bytes.and_then(|b| {
            ClassVectors::from_bytes(source, &b)
                .map(Arc::new)
                .map_err(|e| e.to_string())
        })));
    }

    /// Embeds the text box with the loaded encoder (the button, and a link's `model=`).
    fn embed_now(self) {
        let Some(Ok(b)) = self.bundle.get_untracked() else {
            return;
        };
        self.busy.set(true);
        let (t, want) = (self.text.get_untracked(), self.backend.get_untracked());
        let load_no = self.loads.get_untracked();
        leptos::task::spawn_local(async move {
            let r = embed(b, t, want).await;
            self.busy.set(false);
            // The encoder was replaced while this ran: these embeddings belong to no input.
            if self.loads.get_untracked() != load_no {
                return;
            }
            self.cleared.set(None);
            self.result.set(Some(r.map(|mut e| {
                e.bundle_load = load_no;
                Arc::new(e)
            })));
        });
    }

    /// Loads a shipped encoder (with its class vectors for the vision demo); `then_embed`:
    /// embed the texts once it is loaded.
    fn load_model(self, which: DemoModel, then_embed: bool) {
        self.model.set(Some(which));
        leptos::task::spawn_local(async move {
            let enc = which.bundle();
            self.set_bundle(fetch_asset(enc).await.and_then(|b| load(enc, b)));
            if let Some(cls) = which.classes() {
                self.set_classes(cls, fetch_asset(cls).await);
            }
            if then_embed {
                self.embed_now();
            }
        });
    }
}

/// The checkpoint lab.
#[component]
pub fn CheckpointLab() -> impl IntoView {
    let st = State::from_url();
    st.sync_url();
    if let Some(m) = DemoModel::parse(&url_state::get("model", String::new())) {
        st.load_model(m, true);
    }
    view! {
        <Controls st=st />
        <LoadedInfo st=st />
        <PretrainedCard st=st />
        <div class="grid">
            <div class="card">
                <h2>"Texts (one per line)"</h2>
                <textarea id="texts" rows="10" style="width:100%" prop:value=move || st.text.get()
                    on:input=move |ev| st.text.set(event_target_value(&ev))></textarea>
                <p class="explain">"The encoder was trained with good views only: two captions of one image are a positive pair; it never saw an image or a pairing with another modality."</p>
            </div>
            <ResultCards st=st />
        </div>
    }
}

/// The control bar: the shipped encoders, file inputs, backend, centring, embed.
#[component]
fn Controls(st: State) -> impl IntoView {
    let on_pick = move |ev: web_sys::Event| {
        leptos::task::spawn_local(async move {
            if let Some(r) = picked_file(ev).await {
                st.model.set(None);
                st.set_bundle(r.and_then(|(name, b)| load(&name, b)));
            }
        });
    };
    let on_classes = move |ev: web_sys::Event| {
        leptos::task::spawn_local(async move {
            if let Some(r) = picked_file(ev).await {
                match r {
                    Ok((name, b)) => st.set_classes(&name, Ok(b)),
                    Err(e) => st.classes.set(Some(Err(e))),
                }
            }
        });
    };
    let (backend, centred, busy, bundle) = (st.backend, st.centred, st.busy, st.bundle);
    view! {
        <div class="controls">
            <button id="load-demo-model" on:click=move |_| st.load_model(DemoModel::Demo, false)>"Load demo encoder"</button>
            <button id="load-demo-vision" on:click=move |_| st.load_model(DemoModel::Vision, false) title="The views-vision experiment's good-view encoder with the ImageNet classes of EfficientNet-Lite0 mapped into its space">"Load vision-aligned demo (encoder + ImageNet classes)"</button>
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
            <button id="embed" on:click=move |_| st.embed_now() disabled=move || busy.get() || !matches!(bundle.get(), Some(Ok(_)))>
                {move || if busy.get() { "embedding…" } else { "Embed the texts" }}
            </button>
        </div>
    }
}

/// A Hugging Face checkpoint folder: pick it (or its files), then embed the text box (a
/// text encoder) or picked images (an image encoder) into the lab's neighbour card.
#[component]
fn PretrainedCard(st: State) -> impl IntoView {
    let hf: Slot<pretrained::HfLoaded> = RwSignal::new(None);
    // A folder picker: `webkitdirectory` is not an attribute the view macro knows.
    let folder_input = NodeRef::<leptos::html::Input>::new();
    Effect::new(move |_| {
        if let Some(i) = folder_input.get() {
            let _ = i.set_attribute("webkitdirectory", "");
        }
    });
    let images: RwSignal<Vec<(String, Vec<u8>)>> = RwSignal::new(Vec::new());
    let on_folder = move |ev: web_sys::Event| {
        let Some(list) = crate::widgets::controls::input_of(&ev).and_then(|i| i.files()) else {
            return;
        };
        leptos::task::spawn_local(async move {
            let loaded = pretrained::read_files(list)
                .await
                .and_then(|f| pretrained::load(&f));
            // Embeddings of the previous encoder belong to no input of this one.
            st.result.set(None);
            st.loads.update(|n| *n += 1);
            hf.set(Some(loaded));
        });
    };
    let on_images = move |ev: web_sys::Event| {
        let Some(list) = crate::widgets::controls::input_of(&ev).and_then(|i| i.files()) else {
            return;
        };
        leptos::task::spawn_local(async move {
            let mut picked = Vec::new();
            for i in 0..list.length() {
                if let Some(f) = list.get(i)
                    && let Ok(b) = crate::widgets::files::file_bytes(&f).await
                {
                    picked.push((f.name(), b));
                }
            }
            picked.sort_by(|a, b| a.0.cmp(&b.0));
            images.set(picked);
        });
    };
    let embed = move |_| {
        let Some(Ok(m)) = hf.get_untracked() else {
            return;
        };
        st.loads.update(|n| *n += 1);
        let load_no = st.loads.get_untracked();
        let r = pretrained::embed(&m, &st.text.get_untracked(), &images.get_untracked());
        st.cleared.set(None);
        st.result.set(Some(r.map(|mut e| {
            e.bundle_load = load_no;
            Arc::new(e)
        })));
    };
    let info = move || {
        match hf.get() {
        Some(Ok(m)) => view! { <p class="status" id="hf-info">{format!("loaded {}: {}", m.name, m.describe)}</p> }.into_any(),
        Some(Err(e)) => view! { <pre class="error" id="error-hf">{e}</pre> }.into_any(),
        None => view! { <p class="status">"A Hugging Face checkpoint folder as published (BERT, MiniLM and sentence-transformers folders; ViT, DINOv2): the same loader as prh-native embed --hf, on the CPU backend."</p> }.into_any(),
    }
    };
    view! {
        <div class="controls" id="hf-controls">
            <label>"Hugging Face folder "<input type="file" id="hf-folder" node_ref=folder_input on:change=on_folder /></label>
            <label>"or its files "<input type="file" id="hf-files" multiple=true on:change=on_folder /></label>
            <label>"images (image encoders) "<input type="file" id="hf-images" multiple=true accept=".png,.jpg,.jpeg" on:change=on_images /></label>
            <button id="hf-embed" on:click=embed disabled=move || !matches!(hf.get(), Some(Ok(_)))>"Embed with the checkpoint"</button>
        </div>
        {info}
    }
}

/// What is loaded: the bundle's shape (or its error, or how to load one) and the class
/// vectors' size (or their error).
#[component]
fn LoadedInfo(st: State) -> impl IntoView {
    let info = move || {
        match st.bundle.get() {
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
        match st.classes.get() {
        Some(Ok(c)) => view! {
            <p class="status" id="classes-info">{format!("class vectors {}: {} classes × {} dims", c.source, c.names.len(), c.d)}</p>
        }
        .into_any(),
        Some(Err(e)) => view! { <pre class="error" id="error-classes">{e}</pre> }.into_any(),
        None => ().into_any(),
    }
    };
    view! { {info}{classes_info} }
}

/// The embedding's error, or its notices and the neighbour and class cards; the reason
/// when the embeddings were cleared.
#[component]
fn ResultCards(st: State) -> impl IntoView {
    // Whether the text box differs from the texts of the shown embeddings (a memo, so
    // typing re-renders only the notice).
    let texts_changed = Memo::new(move |_| {
        st.result
            .with(|r| matches!(r, Some(Ok(e)) if e.source_text != st.text.get()))
    });
    move || match st.result.get() {
        None => st
            .cleared
            .get()
            .map(|m| view! { <p class="stale" id="stale-embed">{m}</p> }.into_any()),
        Some(Err(e)) => Some(view! { <pre class="error" id="error-embed">{e}</pre> }.into_any()),
        Some(Ok(r)) => {
            Some(view! { <Embeddings r=r st=st texts_changed=texts_changed /> }.into_any())
        }
    }
}

/// One embedding's notices (stale texts, texts cut to the context) and its cards.
#[component]
fn Embeddings(r: Arc<Embedded>, st: State, texts_changed: Memo<bool>) -> impl IntoView {
    let (r1, r2) = (r.clone(), r.clone());
    view! {
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
        {move || view! { <Neighbours r=r1.clone() centred=st.centred.get() /> }}
        {move || st.classes.get().and_then(Result::ok).map(|c| view! { <Classes r=r2.clone() classes=c /> })}
    }
}
