//! Exporting what the user sees: a figure as PNG (the canvas) or SVG (vector markup from
//! [`crate::figures::svg`]), its numbers as JSON.

use crate::widgets::lang::{Lang, t};
use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Blob, BlobPropertyBag, HtmlAnchorElement, HtmlCanvasElement, Url};

/// Starts a browser download of `href` under the file name `name`.
fn download(href: &str, name: &str) -> Result<(), JsValue> {
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or_else(|| JsValue::from_str("no document"))?;
    let a: HtmlAnchorElement = document.create_element("a")?.dyn_into()?;
    a.set_href(href);
    a.set_download(name);
    a.click();
    Ok(())
}

/// Downloads a canvas as a PNG file.
pub fn png(canvas: &HtmlCanvasElement, name: &str) -> Result<(), JsValue> {
    download(&canvas.to_data_url()?, name)
}

/// Gap between the panels of a two-panel PNG, in pixels.
pub const PANEL_GAP: u32 = 12;
/// Height of the caption strip under the panels of a two-panel PNG, in pixels.
const CAPTION_HEIGHT: u32 = 20;

/// Draws two canvases side by side on a new white canvas, `a` at x = 0 and `b` at
/// x = a.width + [`PANEL_GAP`] (both at y = 0, 1:1 pixels), each caption centred under its
/// panel: the PNG of a two-panel figure is the whole figure, not its first panel.
///
/// # Shapes
/// `a [wa, ha]`, `b [wb, hb]` -> `[wa + gap + wb, max(ha, hb) + caption strip]`
pub fn side_by_side(
    a: &HtmlCanvasElement,
    b: &HtmlCanvasElement,
    captions: &[String; 2],
) -> Result<HtmlCanvasElement, JsValue> {
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or_else(|| JsValue::from_str("no document"))?;
    let out: HtmlCanvasElement = document.create_element("canvas")?.dyn_into()?;
    let (w, h) = (
        a.width() + PANEL_GAP + b.width(),
        a.height().max(b.height()) + CAPTION_HEIGHT,
    );
    out.set_width(w);
    out.set_height(h);
    let ctx =
        crate::figures::draw::context(&out).ok_or_else(|| JsValue::from_str("no 2-D context"))?;
    ctx.set_fill_style_str("#fff");
    ctx.fill_rect(0.0, 0.0, f64::from(w), f64::from(h));
    let xb = f64::from(a.width() + PANEL_GAP);
    ctx.draw_image_with_html_canvas_element(a, 0.0, 0.0)?;
    ctx.draw_image_with_html_canvas_element(b, xb, 0.0)?;
    ctx.set_fill_style_str("#333");
    ctx.set_font("12px sans-serif");
    ctx.set_text_align("center");
    let y = f64::from(h) - 6.0;
    ctx.fill_text(&captions[0], f64::from(a.width()) / 2.0, y)?;
    ctx.fill_text(&captions[1], xb + f64::from(b.width()) / 2.0, y)?;
    Ok(out)
}

/// Downloads a JSON document.
pub fn json(value: &serde_json::Value, name: &str) -> Result<(), JsValue> {
    let text =
        serde_json::to_string_pretty(value).map_err(|e| JsValue::from_str(&e.to_string()))?;
    text_file(&text, "application/json", name)
}

/// Downloads an SVG document.
pub fn svg(markup: &str, name: &str) -> Result<(), JsValue> {
    text_file(markup, "image/svg+xml", name)
}

/// Downloads `text` as a file of MIME type `mime`.
fn text_file(text: &str, mime: &str, name: &str) -> Result<(), JsValue> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let opts = BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = Blob::new_with_str_sequence_and_options(&parts, &opts)?;
    let url = Url::create_object_url_with_blob(&blob)?;
    let r = download(&url, name);
    Url::revoke_object_url(&url)?;
    r
}

/// The "PNG", "SVG" and "JSON" buttons of a figure.
///
/// `canvas`: the figure's canvas; `vector`: builds the figure as SVG markup;
/// `numbers`: builds the JSON of what it shows; `name`: file stem of the downloads (and
/// the buttons' ids: `export-{name}-svg`, ...); `second`: for a two-panel figure, the
/// right panel's canvas and both panels' captions (the PNG then holds both panels,
/// [`side_by_side`]); `lang`: the language of the buttons' tooltips (English by default).
#[component]
pub fn ExportButtons(
    canvas: NodeRef<leptos::html::Canvas>,
    vector: Callback<(), String>,
    numbers: Callback<(), serde_json::Value>,
    name: &'static str,
    #[prop(optional)] second: Option<(NodeRef<leptos::html::Canvas>, Signal<[String; 2]>)>,
    #[prop(optional, into)] lang: Signal<Lang>,
) -> impl IntoView {
    let to_svg = move |_| {
        if let Err(e) = svg(&vector.run(()), &format!("{name}.svg")) {
            web_sys::console::error_1(&e);
        }
    };
    let to_png = move |_| {
        let Some(c) = canvas.get() else { return };
        let r = match &second {
            Some((b, captions)) => match b.get() {
                Some(b) => side_by_side(&c, &b, &captions.get_untracked())
                    .and_then(|both| png(&both, &format!("{name}.png"))),
                None => Err(JsValue::from_str("the second panel is not in the page")),
            },
            None => png(&c, &format!("{name}.png")),
        };
        if let Err(e) = r {
            web_sys::console::error_1(&e);
        }
    };
    let to_json = move |_| {
        if let Err(e) = json(&numbers.run(()), &format!("{name}.json")) {
            web_sys::console::error_1(&e);
        }
    };
    view! {
        <span class="export">
            <button id=format!("export-{name}-png") on:click=to_png title=t("Download this figure as PNG", "이 그림을 PNG로 내려받기").on(lang)>"PNG"</button>
            <button id=format!("export-{name}-svg") on:click=to_svg title=t("Download this figure as SVG (vector)", "이 그림을 SVG(벡터)로 내려받기").on(lang)>"SVG"</button>
            <button id=format!("export-{name}-json") on:click=to_json title=t("Download the numbers behind this figure as JSON", "이 그림의 숫자를 JSON으로 내려받기").on(lang)>"JSON"</button>
        </span>
    }
}
