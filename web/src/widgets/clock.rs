//! The page's clock: how long a computation took, shown beside its results.

use wasm_bindgen::JsCast;

/// Wall-clock milliseconds from the page's performance timer (0 when unavailable), used
/// to show how long a computation took.
/// Read from the global scope, so it also works in the metrics worker (no window there).
pub fn now_ms() -> f64 {
    let perf = js_sys::Reflect::get(&js_sys::global(), &"performance".into()).ok();
    perf.and_then(|p| {
        let now: js_sys::Function = js_sys::Reflect::get(&p, &"now".into())
            .ok()?
            .dyn_into()
            .ok()?;
        now.call0(&p).ok()?.as_f64()
    })
    .unwrap_or(0.0)
}
