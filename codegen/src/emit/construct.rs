//! How a caller builds `Params` (and an object nested in it) without naming every field:
//! `new` over the required inputs, a `with_` setter per optional one, and `Default` when
//! nothing is required.
//!
//! The shape follows prost and typify. prost derives `Default` on every message (every
//! proto3 field has a zero value) and callers write `..Default::default()`; typify
//! implements `Default` only when every field has a default, from the schema's `default`
//! values. A TOOL.md has required inputs, so a blanket `Default` would invent values the
//! tool never accepts: here `Default` exists only when every input is optional or has a
//! TOOL.md default, and then it is exactly those defaults. `new` takes the required
//! inputs, so adding one stays a compile error at every caller, while adding an optional
//! input changes nothing for a caller of `new` and the setters. `#[non_exhaustive]` would
//! not help: the structs live in the user's own crate, where it forbids nothing.

use crate::model::Input;
use crate::rustdoc::code;

use super::layout::{W, typed_line};
use super::value::{plain_name, rust_type};

/// `impl {ty} { new, with_* }`, and `Default` when no field is required. `nested`: the
/// default functions are the struct's own (`Self::__default_x`), not the module's.
pub(super) fn constructors(w: &mut W, ty: &str, fields: &[Input], nested: bool) {
    let required: Vec<&Input> = fields.iter().filter(|i| is_required(i)).collect();
    w.open(&format!("impl {ty} {{"));
    new_fn(w, ty, fields, &required, nested);
    for input in fields.iter().filter(|i| !is_required(i)) {
        setter(w, input);
    }
    w.close("}");
    if required.is_empty() {
        w.impl_for("impl ::core::default::Default", ty);
        w.doc(&format!(
            "Every input at its TOOL.md default or left out: {}.",
            code(&format!("{ty}::new()"))
        ));
        w.open("fn default() -> Self {");
        w.line("Self::new()");
        w.close("}");
        w.close("}");
    }
}

/// A field `new` must be given: neither optional nor defaulted in the generated code
/// (a sensitive default is applied by the runtime, so its field is an optional one).
fn is_required(input: &Input) -> bool {
    let (_, optional) = rust_type(input, "");
    !optional && input.public_default().is_none() && !(input.nullable && input.optional)
}

fn new_fn(w: &mut W, ty: &str, fields: &[Input], required: &[&Input], nested: bool) {
    let mut doc = format!("{} with its required inputs, in TOOL.md order.", code(ty));
    if required.len() < fields.len() {
        doc.push_str(
            " Optional inputs\nare left out and defaulted ones take their TOOL.md default; \
             the `with_` methods\nset them.",
        );
    }
    w.doc(&doc);
    if required.len() > 7 {
        // clippy's default bound; the inputs are the TOOL.md's, not the user's choice.
        w.line("#[allow(clippy::too_many_arguments)]");
    }
    let params: Vec<String> = required
        .iter()
        .map(|i| format!("{}: {}", i.rust_name, rust_type(i, &w.rt).0))
        .collect();
    let one = format!("pub fn new({}) -> Self {{", params.join(", "));
    if w.fits(&one) {
        w.open(&one);
    } else {
        w.open("pub fn new(");
        for i in required {
            typed_line(
                w,
                &format!("{}: ", i.rust_name),
                &rust_type(i, &w.rt).0,
                ",",
            );
        }
        w.close(") -> Self {");
        w.indent += 1;
    }
    let prefix = if nested { "Self::" } else { "" };
    let values: Vec<String> = fields
        .iter()
        .map(|i| {
            let name = &i.rust_name;
            if is_required(i) {
                name.clone()
            } else if i.public_default().is_some() {
                format!("{name}: {prefix}__default_{}()", plain_name(name))
            } else {
                format!("{name}: ::core::option::Option::None")
            }
        })
        .collect();
    // prettyplease keeps a struct literal on one line only if it is at most 35 columns
    // wide (see `fields_deserialize`).
    let literal = if values.is_empty() {
        "Self {}".to_owned()
    } else {
        format!("Self {{ {} }}", values.join(", "))
    };
    if values.is_empty() || (literal.chars().count() <= 35 && w.fits(&literal)) {
        w.line(&literal);
    } else {
        w.open("Self {");
        for v in &values {
            w.line(&format!("{v},"));
        }
        w.close("}");
    }
    w.close("}");
}

/// `with_{name}(self, value) -> Self`: the value of an optional or defaulted input, as
/// the field holds it (an optional one wrapped in `Some`).
fn setter(w: &mut W, input: &Input) {
    let (value_ty, wrapped) = rust_type(input, &w.rt);
    let name = &input.rust_name;
    let plain = plain_name(name);
    // A raw identifier (`r#type`) is no intra-doc link.
    if name == plain {
        w.doc(&format!(
            "Sets the input {} ([`Self::{plain}`]).",
            code(&input.name)
        ));
    } else {
        w.doc(&format!("Sets the input {}.", code(&input.name)));
    }
    if plain.starts_with('_') {
        // `with__2fa` (a parameter named `2fa`): rustc's snake-case lint dislikes the
        // double underscore.
        w.line("#[allow(non_snake_case)]");
    }
    let one = format!("pub fn with_{plain}(mut self, {name}: {value_ty}) -> Self {{");
    if w.fits(&one) {
        w.open(&one);
    } else {
        w.open(&format!("pub fn with_{plain}("));
        w.line("mut self,");
        typed_line(w, &format!("{name}: "), &value_ty, ",");
        w.close(") -> Self {");
        w.indent += 1;
    }
    if wrapped {
        w.call(
            &format!("self.{name} = ::core::option::Option::Some("),
            name,
            true,
            ");",
        );
    } else {
        w.line(&format!("self.{name} = {name};"));
    }
    w.line("self");
    w.close("}");
}
