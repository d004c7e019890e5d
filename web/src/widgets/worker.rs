//! Module web workers, created and driven through `js_sys::Reflect` rather than web-sys's
//! `Worker` type, whose feature flags would rebuild web-sys and every crate above it. A
//! worker script is a small JS file next to `prh-web.js` (`metrics-worker.js`,
//! `train-worker.js`) that loads the page's own module a second time, off the main thread.

use wasm_bindgen::{JsCast, JsValue};

/// `obj.name(args...)` through reflection.
pub fn call(obj: &JsValue, name: &str, args: &js_sys::Array) -> Result<JsValue, JsValue> {
    let f: js_sys::Function = js_sys::Reflect::get(obj, &name.into())?.dyn_into()?;
    f.apply(obj, args)
}

/// `new Worker(script, { type: "module" })`; the error names what failed to start.
pub fn spawn(script: &str, what: &str) -> Result<JsValue, String> {
    let js = |e: JsValue| format!("the {what} did not start: {e:?}");
    let ctor: js_sys::Function = js_sys::Reflect::get(&js_sys::global(), &"Worker".into())
        .map_err(js)?
        .dyn_into()
        .map_err(js)?;
    let opts = js_sys::Object::new();
    js_sys::Reflect::set(&opts, &"type".into(), &"module".into()).map_err(js)?;
    js_sys::Reflect::construct(&ctor, &js_sys::Array::of2(&script.into(), &opts)).map_err(js)
}

/// `worker.postMessage(msg)`.
pub fn post(worker: &JsValue, msg: &JsValue) -> Result<(), String> {
    call(worker, "postMessage", &js_sys::Array::of1(msg))
        .map(|_| ())
        .map_err(|e| format!("postMessage failed: {e:?}"))
}

/// `worker.terminate()`.
pub fn terminate(worker: &JsValue) {
    let _ = call(worker, "terminate", &js_sys::Array::new());
}
