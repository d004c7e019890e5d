//! Loading embedding files in the browser: drag-and-drop or a file picker, parsed by the
//! same `prh_core::formats::features` reader the CLI uses.

use crate::widgets::controls::input_of;
use crate::widgets::files::file_bytes;
use leptos::prelude::*;
use prh_core::formats::features::Features;

/// Parses an embedding file's bytes, turning a core error into the message shown in the
/// page (it names the file, the field and what was expected).
pub fn parse(name: &str, bytes: &[u8]) -> Result<Features, String> {
    Features::from_bytes(name, bytes, None).map_err(|e| e.to_string())
}

/// Reads and parses the first file of a drop or file-picker selection.
async fn load_first(files: Option<web_sys::FileList>) -> Option<Result<Features, String>> {
    let file = files?.get(0)?;
    Some(match file_bytes(&file).await {
        Ok(bytes) => parse(&file.name(), &bytes),
        Err(e) => Err(e),
    })
}

/// A drop target and file picker for one embedding set.
///
/// `label`: what the set is ("A", "B"); `id`: DOM id of the file input (tests upload
/// through it); `on_load`: receives the parsed features or the error to display.
#[component]
pub fn DropZone(
    label: &'static str,
    id: &'static str,
    on_load: Callback<Result<Features, String>>,
) -> impl IntoView {
    let hover = RwSignal::new(false);
    let on_drop = move |ev: web_sys::DragEvent| {
        ev.prevent_default();
        hover.set(false);
        let files = ev.data_transfer().and_then(|d| d.files());
        leptos::task::spawn_local(async move {
            if let Some(r) = load_first(files).await {
                on_load.run(r);
            }
        });
    };
    let on_pick = move |ev: web_sys::Event| {
        let files = input_of(&ev).and_then(|i| i.files());
        leptos::task::spawn_local(async move {
            if let Some(r) = load_first(files).await {
                on_load.run(r);
            }
        });
    };
    view! {
        <div
            class="drop"
            class:hover=move || hover.get()
            on:dragover=move |ev: web_sys::DragEvent| {
                ev.prevent_default();
                hover.set(true);
            }
            on:dragleave=move |_| hover.set(false)
            on:drop=on_drop
        >
            <b>{format!("Set {label}")}</b>
            " — drop a .npy / .npz / .safetensors file [N, D] or an Embedding Projector vectors.tsv here, or "
            <input type="file" id=id accept=".npy,.npz,.safetensors,.tsv" on:change=on_pick />
        </div>
    }
}
