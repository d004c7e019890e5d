//! The lesson's text to HTML: paragraphs, `code`, and LaTeX formulas rendered to MathML by
//! pulldown-latex (the browser draws MathML Core natively, on screen and in print, so the
//! page ships no JavaScript or fonts for it). A formula that does not parse is shown as
//! its source in a red `math-error` span, which the end-to-end test looks for in every
//! step and language.

use pulldown_latex::config::DisplayMode;
use pulldown_latex::{Parser, RenderConfig, Storage, mathml::push_mathml};

/// Escapes text for HTML content.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One formula as MathML, or the parser's first complaint.
pub fn formula(tex: &str, display: bool) -> Result<String, String> {
    let storage = Storage::new();
    if let Some(e) = Parser::new(tex, &storage).find_map(|e| e.err()) {
        return Err(e.to_string());
    }
    let storage = Storage::new();
    let mut out = String::new();
    let config = RenderConfig {
        display_mode: if display {
            DisplayMode::Block
        } else {
            DisplayMode::Inline
        },
        ..Default::default()
    };
    push_mathml(&mut out, Parser::new(tex, &storage), config).map_err(|e| e.to_string())?;
    Ok(out)
}

/// `tex` rendered, or its source marked as an error.
fn math_html(tex: &str, display: bool) -> String {
    formula(tex, display).unwrap_or_else(|e| {
        format!(
            r#"<span class="math-error" title="{}">{}</span>"#,
            esc(&e).replace('"', "&quot;"),
            esc(tex)
        )
    })
}

/// One paragraph: text with `$...$`, `$$...$$` and `` `...` `` spans.
fn paragraph(p: &str) -> String {
    let mut out = String::new();
    let mut rest = p;
    while !rest.is_empty() {
        let next = rest.find(['$', '`']).unwrap_or(rest.len());
        out.push_str(&esc(&rest[..next]));
        rest = &rest[next..];
        let (open, display) = if rest.starts_with("$$") {
            ("$$", true)
        } else if rest.starts_with('$') {
            ("$", false)
        } else if rest.starts_with('`') {
            ("`", false)
        } else {
            break;
        };
        let body = &rest[open.len()..];
        // An unclosed delimiter is text, not the start of a formula.
        let Some(end) = body.find(open) else {
            out.push_str(&esc(rest));
            break;
        };
        let inner = &body[..end];
        if open == "`" {
            out.push_str(&format!("<code>{}</code>", esc(inner)));
        } else {
            out.push_str(&math_html(inner, display));
        }
        rest = &body[end + open.len()..];
    }
    out
}

/// A text of paragraphs separated by blank lines, as HTML.
pub fn render(text: &str) -> String {
    text.split("\n\n")
        .map(|p| format!("<p>{}</p>", paragraph(p.trim())))
        .collect()
}

/// One line (a title, a question) without the paragraph wrapper.
pub fn render_inline(text: &str) -> String {
    paragraph(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labs::lesson::content::{Lang, STEPS};

    #[test]
    fn formulas_parse_in_every_step_and_language() {
        for s in STEPS {
            for lang in [Lang::En, Lang::Ko] {
                for text in [s.body, s.question, s.title, s.try_this] {
                    let html = render(text.get(lang));
                    assert!(!html.contains("math-error"), "{} ({lang:?}): {html}", s.key);
                }
            }
        }
    }

    #[test]
    fn delimiters() {
        assert_eq!(render("a `b<c` d"), "<p>a <code>b&lt;c</code> d</p>");
        assert!(render("x $y$ z").contains("<math"));
        assert_eq!(render("costs $5"), "<p>costs $5</p>");
        assert!(render(r"$\badcommand$").contains("math-error"));
    }
}
