//! Bytes into the page: files the user picks and files shipped with the page.

use wasm_bindgen_futures::JsFuture;
use web_sys::File;

/// Reads a browser `File` into bytes.
pub async fn file_bytes(file: &File) -> Result<Vec<u8>, String> {
    let buf = JsFuture::from(file.array_buffer())
        .await
        .map_err(|e| format!("{}: could not read the file: {e:?}", file.name()))?;
    Ok(js_sys::Uint8Array::new(&buf).to_vec())
}

/// The first file of a file input's change event, read into (name, bytes).
pub async fn picked_file(ev: web_sys::Event) -> Option<Result<(String, Vec<u8>), String>> {
    let file = crate::widgets::controls::input_of(&ev)
        .and_then(|i| i.files())
        .and_then(|f| f.get(0))?;
    Some(file_bytes(&file).await.map(|b| (file.name(), b)))
}

/// Fetches a file shipped with the page (`path` relative to it, e.g. `assets/demo_a.npy`).
pub async fn fetch_asset(path: &str) -> Result<Vec<u8>, String> {
    let window = web_sys::window().ok_or("no window")?;
    let resp = JsFuture::from(window.fetch_with_str(path))
        .await
        .map_err(|e| format!("{path}: fetch failed: {e:?}"))?;
    let resp: web_sys::Response =
        wasm_bindgen::JsCast::dyn_into(resp).map_err(|_| format!("{path}: not a response"))?;
    if !resp.ok() {
        return Err(format!("{path}: HTTP {}", resp.status()));
    }
    let buf = JsFuture::from(resp.array_buffer().map_err(|e| format!("{e:?}"))?)
        .await
        .map_err(|e| format!("{e:?}"))?;
    Ok(js_sys::Uint8Array::new(&buf).to_vec())
}
