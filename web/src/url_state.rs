//! The playground's state lives in the URL query string, so a link reproduces exactly what
//! one sees (`?lab=spectral&preset=clusters&n=12&seed=1&alpha=0.3&d=3&ev=1&rot=0.5`).

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

/// Replaces the query string with `pairs` (without adding a history entry, so sliding a
/// control does not flood the back button).
pub fn set(pairs: &[(&str, String)]) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let Ok(p) = UrlSearchParams::new() else {
        return;
    };
    for (k, v) in pairs {
        p.append(k, v);
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
