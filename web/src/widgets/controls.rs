//! Number inputs shared by the labs' control bars.

use wasm_bindgen::JsCast;

/// The `<input>` an event came from, if it came from one.
pub fn input_of(ev: &web_sys::Event) -> Option<web_sys::HtmlInputElement> {
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
}

/// Puts `value` (the value in use) back into the input an event came from: a number
/// input reads "" for "1e" or "-", and the field must never show something other than
/// what is computed.
pub fn restore_value(ev: &web_sys::Event, value: &str) {
    if let Some(input) = input_of(ev) {
        input.set_value(value);
    }
}
