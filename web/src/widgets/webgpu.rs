//! The page's two burn backends: WebGPU (burn's wgpu backend on `navigator.gpu`) when the
//! browser offers an adapter, else the CPU backend (burn ndarray compiled to
//! WebAssembly). Used by the checkpoint lab (embedding) and the live lab's training
//! worker; works on the page and in a worker (both have `navigator.gpu`).
//!
//! WebGPU cannot block: the device is created with `init_setup_async`, and everything
//! that runs on it awaits its read-backs.

use prh_core::backend::burn;
use std::cell::RefCell;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// The WebGPU backend (burn's wgpu backend; in wasm its only graphics API is WebGPU).
#[cfg(target_arch = "wasm32")]
pub type Gpu = prh_core::backend::Wgpu;
/// Native builds of this crate (`cargo check --workspace`) have no WebGPU: the CPU backend
/// stands in so the code type-checks; [`webgpu_device`] always fails there.
#[cfg(not(target_arch = "wasm32"))]
pub type Gpu = prh_core::backend::Cpu;

/// [`Gpu`] for training (autodiff).
pub type GpuTrain = burn::backend::Autodiff<Gpu>;

/// Which backend something ran on.
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

/// The adapter WebGPU runs on.
#[derive(Clone, Debug, PartialEq)]
pub struct Adapter {
    /// "vendor / architecture / description", as the browser reports it.
    pub text: String,
    /// A software adapter (the browser's fallback, e.g. SwiftShader): WebGPU emulated on
    /// the CPU, slower there than the CPU backend itself.
    pub software: bool,
}

impl std::fmt::Display for Adapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)?;
        if self.software {
            f.write_str(" (a software adapter)")?;
        }
        Ok(())
    }
}

/// A JS value as text for an error message.
fn js_text(v: &JsValue) -> String {
    v.as_string().unwrap_or_else(|| format!("{v:?}"))
}

/// Asks `navigator.gpu` (of the page or the worker) for an adapter; returns what it is,
/// or why there is none.
async fn adapter_info() -> Result<Adapter, String> {
    let nav =
        js_sys::Reflect::get(&js_sys::global(), &"navigator".into()).map_err(|e| js_text(&e))?;
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
    let text = if parts.is_empty() {
        "unnamed adapter".to_string()
    } else {
        parts.join(" / ")
    };
    // `isFallbackAdapter` moved from the adapter to its info; read either. Chromium's
    // SwiftShader may not set it, so its name counts too.
    let flag = |o: &JsValue| {
        js_sys::Reflect::get(o, &"isFallbackAdapter".into())
            .ok()
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
    };
    let lower = text.to_lowercase();
    let software = flag(&info)
        || flag(&adapter)
        || ["swiftshader", "llvmpipe", "lavapipe"]
            .iter()
            .any(|s| lower.contains(s));
    Ok(Adapter { text, software })
}

/// The WebGPU device with its adapter, or why there is none.
pub type DeviceOrWhy = Result<(burn::tensor::Device<Gpu>, Adapter), String>;

thread_local! {
    /// The page's (or worker's) one WebGPU device (burn allows one per adapter), with its
    /// adapter, or why there is none; created on first use.
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
