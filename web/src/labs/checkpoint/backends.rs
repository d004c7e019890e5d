//! The checkpoint lab's two burn backends: WebGPU (burn's wgpu backend on the browser's
//! `navigator.gpu`) when the browser offers an adapter, else the CPU backend (burn ndarray
//! compiled to WebAssembly).
//!
//! WebGPU cannot block: the device is created with `init_setup_async` and results are read
//! back with `into_data_async`, so embedding here is an async twin of
//! `prh_core::tasks::text::embed_texts` (same tokenisation, padding and pooled
//! representation, awaited read-back).

use burn::tensor::backend::Backend;
use prh_core::backend::burn;
use prh_core::models::text_encoder::{EncoderSpec, TextEncoder};
use prh_core::tasks::text::{padded_tensors, tokenize_batch};
use prh_core::text::tokenizer::TextTokenizer;
use prh_core::text::views::Padded;
use std::cell::RefCell;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// The WebGPU backend (burn's wgpu backend; in wasm its only graphics API is WebGPU).
#[cfg(target_arch = "wasm32")]
pub type Gpu = prh_core::backend::Wgpu;
/// Native builds of this crate (clippy, `cargo check`) have no WebGPU: the CPU backend
/// stands in so the code type-checks; [`webgpu_device`] always fails there.
#[cfg(not(target_arch = "wasm32"))]
pub type Gpu = prh_core::backend::Cpu;

/// Which backend an embedding ran on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// burn wgpu on WebGPU.
    WebGpu,
    /// burn ndarray in WebAssembly.
    Cpu,
}

impl Which {
    /// Short name shown in the page and read by the tests.
    pub fn name(self) -> &'static str {
        match self {
            Which::WebGpu => "WebGPU",
            Which::Cpu => "CPU",
        }
    }
}

/// A JS value as text for an error message.
fn js_text(v: &JsValue) -> String {
    v.as_string().unwrap_or_else(|| format!("{v:?}"))
}

/// Asks `navigator.gpu` for an adapter; returns its description, or why there is none.
async fn adapter_info() -> Result<String, String> {
    let window = web_sys::window().ok_or("no window")?;
    let nav: JsValue = window.navigator().into();
    let gpu = js_sys::Reflect::get(&nav, &"gpu".into()).map_err(|e| js_text(&e))?;
    if gpu.is_undefined() || gpu.is_null() {
        return Err("navigator.gpu is undefined: this browser does not expose WebGPU".into());
    }
    let request: js_sys::Function = js_sys::Reflect::get(&gpu, &"requestAdapter".into())
        .and_then(|f| {
            f.dyn_into()
                .map_err(|_| "requestAdapter is not a function".into())
        })
        .map_err(|e| js_text(&e))?;
    let promise: js_sys::Promise = request
        .call0(&gpu)
        .and_then(|p| {
            p.dyn_into()
                .map_err(|_| "requestAdapter did not return a promise".into())
        })
        .map_err(|e| js_text(&e))?;
    let adapter = JsFuture::from(promise).await.map_err(|e| js_text(&e))?;
    if adapter.is_null() || adapter.is_undefined() {
        return Err("navigator.gpu.requestAdapter() returned no adapter".into());
    }
    let info = js_sys::Reflect::get(&adapter, &"info".into()).unwrap_or(JsValue::UNDEFINED);
    let field = |k: &str| {
        js_sys::Reflect::get(&info, &k.into())
            .ok()
            .and_then(|v| v.as_string())
            .filter(|s| !s.is_empty())
    };
    let parts: Vec<String> = ["vendor", "architecture", "description"]
        .iter()
        .filter_map(|k| field(k))
        .collect();
    Ok(if parts.is_empty() {
        "unnamed adapter".into()
    } else {
        parts.join(" / ")
    })
}

/// The WebGPU device with its adapter's description, or why there is none.
type DeviceOrWhy = Result<(burn::tensor::Device<Gpu>, String), String>;

thread_local! {
    /// The page's one WebGPU device (burn allows one per adapter), with the adapter's
    /// description, or why there is none; created on first use.
    static DEVICE: RefCell<Option<DeviceOrWhy>> =
        const { RefCell::new(None) };
}

/// The WebGPU device, created once: checks for an adapter first (burn's own adapter
/// request panics when there is none), then sets burn's wgpu runtime up asynchronously.
pub async fn webgpu_device() -> DeviceOrWhy {
    if let Some(r) = DEVICE.with(|d| d.borrow().clone()) {
        return r;
    }
    let r = create_device().await;
    DEVICE.with(|d| *d.borrow_mut() = Some(r.clone()));
    r
}

#[cfg(target_arch = "wasm32")]
async fn create_device() -> DeviceOrWhy {
    use burn::backend::wgpu::{
        RuntimeOptions, WgpuDevice, graphics::AutoGraphicsApi, init_setup_async,
    };
    let info = adapter_info().await?;
    let device = WgpuDevice::default();
    init_setup_async::<AutoGraphicsApi>(&device, RuntimeOptions::default()).await;
    Ok((device, info))
}

#[cfg(not(target_arch = "wasm32"))]
async fn create_device() -> DeviceOrWhy {
    // Keeps the adapter probe compiled (and linted) natively; there is no navigator here.
    let _ = adapter_info;
    Err("WebGPU exists only in the browser build".into())
}

/// Pads a batch to exactly `[rows, len]`. Extra columns are padding (masked, so attention
/// and pooling ignore them); extra rows hold one unmasked token and are dropped after the
/// forward pass. On WebGPU every new tensor shape costs kernel compilation and autotuning,
/// so one fixed shape per batch is much faster than the CPU path's shortest padding.
///
/// # Shapes
/// `p [n, l]` -> `[rows, len]` with rows >= n, len >= l.
fn fixed_shape(p: &Padded, rows: usize, len: usize, pad_id: u32) -> Padded {
    let (rows, len) = (rows.max(p.n), len.max(p.len));
    let mut ids = vec![i64::from(pad_id); rows * len];
    let mut pad = vec![true; rows * len];
    for r in 0..rows {
        for c in 0..len {
            if r < p.n && c < p.len {
                ids[r * len + c] = p.ids[r * p.len + c];
                pad[r * len + c] = p.pad[r * p.len + c];
            } else if r >= p.n && c == 0 {
                pad[r * len] = false;
            }
        }
    }
    Padded {
        ids,
        pad,
        n: rows,
        len,
    }
}

/// Embeds `texts` on backend `B`: tokenise, truncate to the context (leaving room for
/// [CLS] when the model uses it, `prh_core::tasks::text::tokenize_batch`), pad, take
/// [`TextEncoder::represent`] (the pooled last hidden state), and read each batch back
/// asynchronously. `fixed`: pad every batch to `[batch, max_len]` ([`fixed_shape`], for
/// WebGPU); otherwise to the batch's longest text as `prh_core::tasks::text::embed_texts`
/// does. Also returns each text's token count before the cut, so the page can say which
/// texts were cut.
///
/// # Shapes
/// `texts` n strings -> (row-major `[n, d_model]`, `[n]` token counts)
pub async fn embed<B: Backend>(
    model: &TextEncoder<B>,
    spec: &EncoderSpec,
    tok: &TextTokenizer,
    texts: &[String],
    (batch, fixed): (usize, bool),
    device: &burn::tensor::Device<B>,
) -> Result<(Vec<f32>, Vec<usize>), String> {
    let mut out = Vec::with_capacity(texts.len() * spec.d_model);
    let mut tokens = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(batch.max(1)) {
        let (mut padded, counts) = tokenize_batch(tok, spec, chunk).map_err(|e| e.to_string())?;
        tokens.extend(counts);
        if fixed {
            padded = fixed_shape(&padded, batch.max(1), spec.max_len, tok.pad);
        }
        let (i, p) = padded_tensors::<B>(&padded, device);
        let z = model
            .represent(i, p)
            .into_data_async()
            .await
            .map_err(|e| format!("reading the embeddings back: {e:?}"))?;
        // Only the batch's own rows (fixed-shape batches carry filler rows).
        out.extend(z.iter::<f32>().take(chunk.len() * spec.d_model));
    }
    Ok((out, tokens))
}
