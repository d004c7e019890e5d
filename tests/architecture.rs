//! The shells stay thin (issue 18, docs/architecture.md): no function in `native/src` or
//! `web/src` is longer than [`MAX_LINES`] lines, counted from the line of its `fn` keyword
//! to the line of its closing brace (doc comments and attributes not counted; a nested
//! function counts inside its parent and on its own). Leptos components are functions too.
//! The sources are parsed with `syn`, so braces inside strings, chars and macros do not
//! confuse the count.

use proc_macro2::Span;
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// The longest function the shells may hold.
const MAX_LINES: usize = 80;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every function of one file: (name, first line, length in lines).
#[derive(Default)]
struct Functions(Vec<(String, usize, usize)>);

impl Functions {
    fn add(&mut self, name: &syn::Ident, fn_token: Span, close: Span) {
        let (first, last) = (fn_token.start().line, close.end().line);
        self.0.push((name.to_string(), first, last + 1 - first));
    }
}

impl<'ast> Visit<'ast> for Functions {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.add(
            &f.sig.ident,
            f.sig.fn_token.span,
            f.block.brace_token.span.close(),
        );
        syn::visit::visit_item_fn(self, f);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.add(
            &f.sig.ident,
            f.sig.fn_token.span,
            f.block.brace_token.span.close(),
        );
        syn::visit::visit_impl_item_fn(self, f);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.add(
                &f.sig.ident,
                f.sig.fn_token.span,
                block.brace_token.span.close(),
            );
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}

/// Functions of every `.rs` file under `dir` longer than [`MAX_LINES`], as
/// "path:line name (N lines)", and how many functions were measured.
fn long_functions(dir: &Path) -> (Vec<String>, usize) {
    let mut files = Vec::new();
    rust_files(dir, &mut files);
    let (mut long, mut count) = (Vec::new(), 0);
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read source");
        let ast = syn::parse_file(&text).unwrap_or_else(|e| {
            panic!(
                "{}:{}: cannot parse: {e}",
                file.display(),
                e.span().start().line
            )
        });
        let mut fns = Functions::default();
        fns.visit_file(&ast);
        count += fns.0.len();
        for (name, line, len) in fns.0 {
            if len > MAX_LINES {
                long.push(format!("{}:{line} {name} ({len} lines)", file.display()));
            }
        }
    }
    (long, count)
}

#[test]
fn shells_have_no_function_over_80_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for shell in ["native/src", "web/src"] {
        let (long, count) = long_functions(&root.join(shell));
        // Guards the guard: a parse that saw nothing would pass vacuously.
        assert!(count > 100, "{shell}: only {count} functions found");
        assert!(
            long.is_empty(),
            "{shell}: functions over {MAX_LINES} lines (split them; docs/architecture.md):\n{}",
            long.join("\n")
        );
    }
}

/// The counter itself, on a source whose lengths are known: braces in strings and chars
/// do not end a function, nested functions count on their own, and doc lines do not count.
#[test]
fn function_lengths_are_counted_from_fn_to_closing_brace() {
    let src = "/// doc\n#[inline]\nfn a() {\n    let s = \"}\";\n    let c = '{';\n    fn inner() {\n    }\n}\nimpl X {\n    fn b(&self) -> u8 { 1 }\n}\n";
    let mut fns = Functions::default();
    fns.visit_file(&syn::parse_file(src).unwrap());
    assert_eq!(
        fns.0,
        vec![
            ("a".to_string(), 3, 6),
            ("inner".to_string(), 6, 2),
            ("b".to_string(), 10, 1)
        ]
    );
}
