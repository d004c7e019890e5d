//! The alignment lab's heavy numbers (metrics, per-point k-NN, PCA) in a web worker, so
//! the page keeps responding while they run (4 s at 2,000 x 768, 14 s at 4,000 x 768 on
//! the main thread) and the user can cancel.
//!
//! The worker is the page's own module loaded a second time: `metrics-worker.js` (next
//! to `prh-web.js` in dist/) imports it, and `main` does not mount the page there (no
//! window). The page sends both sets (values as a `Float64Array`, and shapes), the worker
//! calls [`prh_worker_analyse`], which posts a line per stage and returns the [`Parts`] as
//! JSON.
//! Workers are created by [`crate::widgets::worker`].

use super::compute::{Parts, analyse_parts};
use crate::widgets::worker;
use prh_core::formats::features::Features;
use wasm_bindgen::prelude::*;
use wasm_bindgen::{JsCast, JsValue};

/// The worker script, relative to the page (written next to `prh-web.js` by .ci/web.sh and
/// by trunk, see index.html).
const SCRIPT: &str = "./metrics-worker.js";

/// One set from a message built by [`set_message`] (`key` = "a" or "b").
fn set_from(msg: &JsValue, key: &str) -> Result<Features, String> {
    let get = |k: String| js_sys::Reflect::get(msg, &k.into()).unwrap_or(JsValue::UNDEFINED);
    let name = get(format!("name_{key}")).as_string().unwrap_or_default();
    let data = get(key.to_string())
        .dyn_into::<js_sys::Float64Array>()
        .map_err(|_| format!("{name}: the values did not arrive as a Float64Array"))?
        .to_vec();
    let shape: Vec<usize> = js_sys::Array::from(&get(format!("shape_{key}")))
        .iter()
        .filter_map(|v| v.as_f64().map(|x| x as usize))
        .collect();
    match shape[..] {
        [n, l, d] => Features::new(&name, n, l, d, data).map_err(|e| e.to_string()),
        _ => Err(format!(
            "{name}: expected a shape [n, layers, d], got {shape:?}"
        )),
    }
}

/// Runs in the worker on a message from [`Job::start`] (sets a and b as values and shapes,
/// k): computes [`analyse_parts`], calling `progress(stage)` before each stage, and
/// returns the parts as JSON (or the error message).
///
/// # Shapes
/// message `a [n * layers * d]` row-major with `shape_a = [n, layers, d]`; same for b.
#[wasm_bindgen]
pub fn prh_worker_analyse(msg: &JsValue, progress: &js_sys::Function) -> Result<String, JsValue> {
    let say = |stage: &str| {
        let _ = progress.call1(&JsValue::NULL, &JsValue::from_str(stage));
    };
    let k = js_sys::Reflect::get(msg, &"k".into())
        .ok()
        .and_then(|v| v.as_f64())
        .map_or(10, |k| k as usize);
    let parts = (|| {
        let (a, b) = (set_from(msg, "a")?, set_from(msg, "b")?);
        analyse_parts(&a, &b, k, &say)
    })()
    .map_err(|e| JsValue::from_str(&e))?;
    serde_json::to_string(&parts).map_err(|e| JsValue::from_str(&e.to_string()))
}

/// What the worker reports to the page.
pub enum Message {
    /// The stage now running.
    Stage(String),
    /// The finished parts, or the error.
    Done(Result<Parts, String>),
}

/// A running computation in a worker; [`Job::cancel`] (or dropping the job) ends it.
pub struct Job {
    worker: JsValue,
    /// Kept alive for as long as the worker may call them.
    _listeners: worker::Listeners,
}

/// A message object for the worker: one set's name, values and shape.
fn set_message(msg: &js_sys::Object, key: &str, f: &Features) -> Result<(), JsValue> {
    let set = |k: String, v: &JsValue| js_sys::Reflect::set(msg, &k.into(), v).map(|_| ());
    set(format!("name_{key}"), &JsValue::from_str(&f.source))?;
    set(
        key.to_string(),
        &js_sys::Float64Array::from(f.data.as_slice()).into(),
    )?;
    let shape = js_sys::Array::of3(
        &JsValue::from(f.n as u32),
        &JsValue::from(f.layers as u32),
        &JsValue::from(f.d as u32),
    );
    set(format!("shape_{key}"), &shape.into())
}

impl Job {
    /// Starts a worker on sets `a` and `b` with k neighbours; `on_message` receives each
    /// stage and then the result (also when the worker fails to load or crashes).
    pub fn start(
        a: &Features,
        b: &Features,
        k: usize,
        on_message: impl FnMut(Message) + 'static,
    ) -> Result<Job, String> {
        let js = |e: JsValue| format!("the metrics worker did not start: {e:?}");
        let worker = worker::spawn(SCRIPT, "metrics worker")?;
        let w = worker.clone();
        let mut on_message = on_message;
        let listeners = worker::listen(&worker, "metrics worker", move |ev| {
            let msg = match ev {
                worker::Event::Failed(text) => Message::Done(Err(text)),
                worker::Event::Message(field) => {
                    if let Some(stage) = field("stage") {
                        Message::Stage(stage)
                    } else if let Some(json) = field("done") {
                        Message::Done(serde_json::from_str(&json).map_err(|e| e.to_string()))
                    } else {
                        Message::Done(Err(field("error").unwrap_or_else(|| {
                            "the metrics worker sent an unknown message".into()
                        })))
                    }
                }
            };
            // A finished worker is ended here; the Job (and these handlers) are dropped
            // later by the lab, never from inside this call.
            if matches!(msg, Message::Done(_)) {
                worker::terminate(&w);
            }
            on_message(msg);
        })?;
        let msg = js_sys::Object::new();
        set_message(&msg, "a", a).map_err(js)?;
        set_message(&msg, "b", b).map_err(js)?;
        js_sys::Reflect::set(&msg, &"k".into(), &JsValue::from(k as u32)).map_err(js)?;
        worker::post(&worker, &msg)?;
        Ok(Job {
            worker,
            _listeners: listeners,
        })
    }

    /// Stops the worker at once (its result, if any, is never delivered).
    pub fn cancel(&self) {
        worker::terminate(&self.worker);
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        self.cancel();
    }
}
