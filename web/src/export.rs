//! Exporting what the user sees: a figure as PNG (the canvas) or SVG (vector markup from
//! [`crate::svg`]), its numbers as JSON.

use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Blob, BlobPropertyBag, HtmlAnchorElement, HtmlCanvasElement, Url};

/// Starts a browser download of `href` under the file name `name`.
fn download(href: &str, name: &str) -> Result<(), JsValue> {
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or_else(|| JsValue::from_str("no document"))?;
    let a: HtmlAnchorElement = document.create_element("a")?.dyn_into()?;
    a.set_href(href);
    a.set_download(name);
    a.click();
    Ok(())
}

/// Downloads a canvas as a PNG file.
pub fn png(canvas: &HtmlCanvasElement, name: &str) -> Result<(), JsValue> {
    download(&canvas.to_data_url()?, name)
}

/// Downloads a JSON document.
pub fn json(value: &serde_json::Value, name: &str) -> Result<(), JsValue> {
    let text =
        serde_json::to_string_pretty(value).map_err(|e| JsValue::from_str(&e.to_string()))?;
    text_file(&text, "application/json", name)
}

/// Downloads an SVG document.
pub fn svg(markup: &str, name: &str) -> Result<(), JsValue> {
    text_file(markup, "image/svg+xml", name)
}

/// Downloads `text` as a file of MIME type `mime`.
fn text_file(text: &str, mime: &str, name: &str) -> Result<(), JsValue> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let opts = BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = Blob::new_with_str_sequence_and_options(&parts, &opts)?;
    let url = Url::create_object_url_with_blob(&blob)?;
    let r = download(&url, name);
    Url::revoke_object_url(&url)?;
    r
}

/// The "PNG", "SVG" and "JSON" buttons of a figure.
///
/// `canvas`: the figure's canvas; `vector`: builds the figure as SVG markup;
/// `numbers`: builds the JSON of what it shows; `name`: file stem of the downloads (and
/// the buttons' ids: `export-{name}-svg`, ...).
#[component]
pub fn ExportButtons(
    canvas: NodeRef<leptos::html::Canvas>,
    vector: Callback<(), String>,
    numbers: Callback<(), serde_json::Value>,
    name: &'static str,
) -> impl IntoView {
    let to_svg = move |_| {
        if let Err(e) = svg(&vector.run(()), &format!("{name}.svg")) {
            web_sys::console::error_1(&e);
        }
    };
    let to_png = move |_| {
        if let Some(c) = canvas.get()
            && let Err(e) = png(&c, &format!("{name}.png"))
        {
            web_sys::console::error_1(&e);
        }
    };
    let to_json = move |_| {
        if let Err(e) = json(&numbers.run(()), &format!("{name}.json")) {
            web_sys::console::error_1(&e);
        }
    };
    view! {
        <span class="export">
            <button id=format!("export-{name}-png") on:click=to_png title="Download this figure as PNG">"PNG"</button>
            <button id=format!("export-{name}-svg") on:click=to_svg title="Download this figure as SVG (vector)">"SVG"</button>
            <button id=format!("export-{name}-json") on:click=to_json title="Download the numbers behind this figure as JSON">"JSON"</button>
        </span>
    }
}
