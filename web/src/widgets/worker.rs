//! Module web workers, created and driven through `js_sys::Reflect` rather than web-sys's
//! `Worker` type, whose feature flags would rebuild web-sys and every crate above it. A
//! worker script is a small JS file next to `prh-web.js` (`metrics-worker.js`,
//! `train-worker.js`) that loads the page's own module a second time, off the main thread.

use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::Closure;
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

/// What a worker reported to [`listen`]'s handler.
pub enum Event<'a> {
    /// A message; the lookup reads one of its string fields (`None` when absent).
    Message(&'a dyn Fn(&str) -> Option<String>),
    /// The worker failed to load or crashed: "the {what} failed: {reason}".
    Failed(String),
}

/// A worker's `onmessage` and `onerror` handlers, kept alive while the worker may call them.
pub struct Listeners {
    _on_message: Closure<dyn FnMut(JsValue)>,
    _on_error: Closure<dyn FnMut(JsValue)>,
}

/// Sets `worker`'s `onmessage` and `onerror` to call `handler` (`what` names the worker in
/// errors). Keep the returned [`Listeners`] for as long as the worker runs.
pub fn listen(
    worker: &JsValue,
    what: &str,
    handler: impl FnMut(Event<'_>) + 'static,
) -> Result<Listeners, String> {
    let handler = Rc::new(RefCell::new(handler));
    let h = handler.clone();
    let on_message = Closure::<dyn FnMut(JsValue)>::new(move |ev: JsValue| {
        let data = js_sys::Reflect::get(&ev, &"data".into()).unwrap_or(JsValue::NULL);
        let field = |k: &str| {
            js_sys::Reflect::get(&data, &k.into())
                .ok()
                .and_then(|v| v.as_string())
        };
        (h.borrow_mut())(Event::Message(&field));
    });
    let failed = format!("the {what} failed");
    let on_error = Closure::<dyn FnMut(JsValue)>::new(move |ev: JsValue| {
        let text = js_sys::Reflect::get(&ev, &"message".into())
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_else(|| "it failed to load".into());
        (handler.borrow_mut())(Event::Failed(format!("{failed}: {text}")));
    });
    let js = |e: JsValue| format!("the {what} did not start: {e:?}");
    js_sys::Reflect::set(worker, &"onmessage".into(), on_message.as_ref()).map_err(js)?;
    js_sys::Reflect::set(worker, &"onerror".into(), on_error.as_ref()).map_err(js)?;
    Ok(Listeners {
        _on_message: on_message,
        _on_error: on_error,
    })
}
