//! The writer of generated code: text already in the layout `prettyplease` gives it
//! (line width, where a list, a call or a type breaks), and the literals it quotes.

use std::rc::Rc;

use proc_macro2::Literal;

/// prettyplease's line width.
const MARGIN: usize = 89;

/// The text written so far, at an indentation, for a runtime reached by `rt`.
pub(super) struct W {
    pub(super) s: String,
    pub(super) indent: usize,
    /// The path generated code reaches the runtime by (`::toolbind`, or what
    /// `Config::runtime_path` set): written into code as it is emitted, so the layout is
    /// measured with the path the file holds.
    pub(super) rt: Rc<str>,
}

impl W {
    pub(super) fn new(rt: &str) -> Self {
        W {
            s: String::new(),
            indent: 0,
            rt: rt.into(),
        }
    }
    pub(super) fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.s.push_str("    ");
        }
        self.s.push_str(text);
        self.s.push('\n');
    }
    pub(super) fn open(&mut self, text: &str) {
        self.line(text);
        self.indent += 1;
    }
    pub(super) fn close(&mut self, text: &str) {
        self.indent -= 1;
        self.line(text);
    }
    /// `impl {head} for {ty} {`, with `for {ty}` on its own line when the header is too
    /// long (an enum type named after a long input name), as prettyplease writes it.
    pub(super) fn impl_for(&mut self, head: &str, ty: &str) {
        let one = format!("{head} for {ty} {{");
        if self.fits(&one) {
            self.open(&one);
        } else {
            self.line(head);
            self.open(&format!("for {ty} {{"));
        }
    }
    /// `impl<'de> Deserialize<'de> for {ty} {` and its `fn deserialize(d)` header; the
    /// caller writes the body and closes both.
    pub(super) fn open_deserialize(&mut self, ty: &str) {
        let rt = self.rt.clone();
        self.impl_for(
            &format!("impl<'de> {rt}::__private::serde::Deserialize<'de>"),
            ty,
        );
        self.open(&format!(
            "fn deserialize<D: {rt}::__private::serde::Deserializer<'de>>("
        ));
        self.line("d: D,");
        self.close(") -> ::core::result::Result<Self, D::Error> {");
        self.indent += 1;
    }
    pub(super) fn fits(&self, text: &str) -> bool {
        // prettyplease lets a list item's trailing comma (a field, an arm, an element)
        // stand one column past the margin.
        let slack = usize::from(text.ends_with(','));
        self.indent * 4 + text.chars().count() <= MARGIN + slack
    }
    /// Whether `text` fits with no slack: a comma that is a word, not a break's text.
    pub(super) fn fits_strictly(&self, text: &str) -> bool {
        self.indent * 4 + text.chars().count() <= MARGIN
    }
    /// `{head}{arg}{close}` on one line when it fits, else `arg` (with `comma` after it)
    /// on its own line, as prettyplease breaks a call or a macro whose one argument is too
    /// wide.
    pub(super) fn call(&mut self, head: &str, arg: &str, comma: bool, close: &str) {
        let one = format!("{head}{arg}{close}");
        if self.fits(&one) {
            self.line(&one);
        } else {
            self.open(head);
            self.line(&format!("{arg}{}", if comma { "," } else { "" }));
            self.close(close);
        }
    }
    pub(super) fn doc(&mut self, text: &str) {
        // No text, no doc: an empty `///` fails clippy's `empty_docs` (an MCP server's
        // field with no description).
        if text.trim().is_empty() {
            return;
        }
        // A `\r` from a YAML escape is a line break too: rustc rejects a bare CR in a doc.
        for l in text.trim().split(['\n', '\r']) {
            let l = l.trim_end();
            if l.is_empty() {
                self.line("///");
            } else {
                self.line(&format!("/// {l}"));
            }
        }
    }
    /// A match arm; its expression moves into a block when the arm does not fit.
    pub(super) fn arm(&mut self, pat: &str, expr: &str) {
        let one = format!("{pat} => {expr},");
        if self.fits(&one) {
            self.line(&one);
            return;
        }
        // A tuple-struct pattern too long for its line (a variant named after a long tool
        // name) is broken the way prettyplease breaks it: `Self::Long(\n    p,\n) => ...`.
        let split = pat.strip_suffix(')').and_then(|p| p.split_once('('));
        match split {
            Some((path, binding)) if !self.fits(&format!("{pat} =>")) => {
                self.open(&format!("{path}("));
                self.line(&format!("{binding},"));
                let tail = format!(") => {expr},");
                if self.fits(&tail) {
                    self.close(&tail);
                } else {
                    self.close(") => {");
                    self.indent += 1;
                    self.line(expr);
                    self.close("}");
                }
            }
            _ => {
                self.open(&format!("{pat} => {{"));
                self.line(expr);
                self.close("}");
            }
        }
    }
    /// `#[derive(...)]` over `paths`: on one line when it fits, else one per line.
    pub(super) fn derive(&mut self, paths: &[&str]) {
        let one = format!("#[derive({})]", paths.join(", "));
        if self.fits(&one) {
            self.line(&one);
            return;
        }
        self.open("#[derive(");
        for p in paths {
            self.line(&format!("{p},"));
        }
        self.close(")]");
    }
}

pub(super) fn lit(s: &str) -> String {
    Literal::string(s).to_string()
}

/// `name: f.method(args)?,` in a struct literal, broken as prettyplease breaks it. Only
/// the last field's comma may stand past the margin: prettyplease writes it as the break's
/// pre-break text, while the comma after any other field is a word and counts.
pub(super) fn field_call(w: &mut W, name: &str, method: &str, args: &[String], last: bool) {
    let fits = |w: &W, text: &str| {
        if last {
            w.fits(text)
        } else {
            w.fits_strictly(text)
        }
    };
    let call = format!("{method}({})", args.join(", "));
    let one = format!("{name}: f.{call}?,");
    if fits(w, &one) {
        w.line(&one);
        return;
    }
    w.line(&format!("{name}: f"));
    w.indent += 1;
    if fits(w, &format!(".{call}?,")) {
        w.line(&format!(".{call}?,"));
    } else {
        w.open(&format!(".{method}("));
        for a in args {
            w.line(&format!("{a},"));
        }
        w.close(")?,");
    }
    w.indent -= 1;
}

/// `const _: &[u8] = ::core::include_bytes!("path");` (prettyplease breaks a macro's
/// tokens without a trailing comma).
pub(super) fn include_bytes(w: &mut W, path: &str) {
    w.call(
        "const _: &[u8] = ::core::include_bytes!(",
        &lit(path),
        false,
        ");",
    );
}

/// `{head}{ty}{tail}` where `ty` is a type such as `A<B<C>>`: on one line when it fits,
/// otherwise with the outermost generic arguments on their own lines, as prettyplease
/// breaks them.
pub(super) fn typed_line(w: &mut W, head: &str, ty: &str, tail: &str) {
    let one = format!("{head}{ty}{tail}");
    if w.fits(&one) {
        w.line(&one);
        return;
    }
    match (ty.find('<'), ty.strip_suffix('>')) {
        (Some(i), Some(inner)) => {
            w.open(&format!("{head}{}", &ty[..=i]));
            typed_line(w, "", &inner[i + 1..], ",");
            w.close(&format!(">{tail}"));
        }
        _ => w.line(&one),
    }
}

/// `#[derive(...)]` on one line when it fits, else one path per line.
pub(super) fn derive_fit(w: &mut W, paths: &[&str]) {
    let one = format!("#[derive({})]", paths.join(", "));
    if w.fits(&one) {
        w.line(&one);
    } else {
        w.derive(paths);
    }
}
