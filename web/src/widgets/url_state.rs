//! The playground's state lives in the URL query string, so a link reproduces exactly what
//! one sees (`?lab=spectral&preset=ring&n=12&seed=1&alpha=0.3&d=3&ev=1&rot=0.5`), for
//! every lab at once ([`update`]).

use std::str::FromStr;
use web_sys::UrlSearchParams;

/// The query string of the current page, parsed.
pub fn params() -> Option<UrlSearchParams> {
    let search = web_sys::window()?.location().search().ok()?;
    UrlSearchParams::new_with_str(&search).ok()
}

/// Reads `key` from the query string, falling back to `default` when it is missing or
/// does not parse (a hand-edited link must still open a page).
pub fn get<T: FromStr>(key: &str, default: T) -> T {
    params()
        .and_then(|p| p.get(key))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Updates the query string: each `(key, Some(value))` sets `key`, each `(key, None)`
/// removes it, and every other key stays. The labs stay mounted when another tab is
/// shown, and their keys do not collide (spectral: preset, n, seed, alpha, d, skip, rot,
/// fiedler, ev; alignment: k, data; checkpoint: backend, model, texts, centre), so one
/// link holds all three labs' state and `lab` says which is shown. No history entry is
/// added, so sliding a control does not flood the back button.
pub fn update(pairs: &[(&str, Option<String>)]) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let Some(p) = params().or_else(|| UrlSearchParams::new().ok()) else {
        return;
    };
    for (k, v) in pairs {
        match v {
            Some(v) => p.set(k, v),
            None => p.delete(k),
        }
    }
    let query: String = p.to_string().into();
    let path = window.location().pathname().unwrap_or_default();
    if let Ok(history) = window.history() {
        let _ = history.replace_state_with_url(
            &wasm_bindgen::JsValue::NULL,
            "",
            Some(&format!("{path}?{query}")),
        );
    }
}
