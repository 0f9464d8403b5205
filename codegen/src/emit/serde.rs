//! Serde impls of generated structs, written through the runtime's generic helpers
//! (`Args`, `Fields`) instead of derives, and the default functions they call.

use crate::model::{Input, InputType, OutputField};

use super::layout::{W, field_call, lit};
use super::value::{default_value, plain_name, rust_type};

/// `Serialize` for `Params` (or a struct nested in it) through the runtime's `Args`: the
/// wire names, absent optional fields left out, whole numbers as JSON integers. Like
/// `fields_deserialize`, a fraction of a derive's compile time, because the generic work
/// is shared by every tool.
pub(super) fn fields_serialize(w: &mut W, ty: &str, fields: &[Input]) {
    let rt = w.rt.clone();
    w.impl_for(&format!("impl {rt}::__private::serde::Serialize"), ty);
    w.open(&format!(
        "fn serialize<S: {rt}::__private::serde::Serializer>("
    ));
    w.line("&self,");
    w.line("s: S,");
    w.close(") -> ::core::result::Result<S::Ok, S::Error> {");
    w.indent += 1;
    if fields.is_empty() {
        w.line(&format!("{rt}::__private::Args::new().serialize(s)"));
    } else {
        w.line(&format!("let mut a = {rt}::__private::Args::new();"));
        for input in fields {
            let one = format!("a.put({}, &self.{});", lit(&input.name), input.rust_name);
            if w.fits(&one) {
                w.line(&one);
            } else {
                w.open("a.put(");
                w.line(&format!("{},", lit(&input.name)));
                w.line(&format!("&self.{},", input.rust_name));
                w.close(");");
            }
        }
        w.line("a.serialize(s)");
    }
    w.close("}");
    w.close("}");
}

/// `Deserialize` for `Params` (or a struct nested in it) through the runtime's `Fields`:
/// unknown fields rejected, missing ones reported, defaults filled. A serde derive here
/// costs each user ~70 ms of rustc time per tool; this costs a fraction, because the
/// generic work is shared. `nested`: the default functions are the struct's own
/// (`Self::__default_x`), not the module's.
pub(super) fn fields_deserialize(w: &mut W, ty: &str, fields: &[Input], nested: bool) {
    let rt = w.rt.clone();
    w.open(&format!("impl {ty} {{"));
    let names: Vec<String> = fields.iter().map(|i| lit(&i.name)).collect();
    let one = format!(
        "const FIELDS: &'static [&'static str] = &[{}];",
        names.join(", ")
    );
    if w.fits(&one) {
        w.line(&one);
    } else {
        w.open("const FIELDS: &'static [&'static str] = &[");
        for n in &names {
            w.line(&format!("{n},"));
        }
        w.close("];");
    }
    if nested {
        for input in fields.iter().filter(|i| i.public_default().is_some()) {
            default_fn(w, input);
        }
    }
    w.close("}");
    w.open_deserialize(ty);
    if fields.is_empty() {
        w.line(&format!("{rt}::__private::Fields::new(d, Self::FIELDS)?;"));
        // `Self`, not the name: a struct named `D` would be the type parameter here.
        let name = if nested { "Self" } else { ty };
        w.line(&format!("::core::result::Result::Ok({name} {{}})"));
    } else {
        w.line(&format!(
            "let mut f = {rt}::__private::Fields::new(d, Self::FIELDS)?;"
        ));
        let name = if nested { "Self" } else { ty };
        let calls: Vec<(&str, &str, Vec<String>)> = fields
            .iter()
            .map(|input| {
                let (_, optional) = rust_type(input, &w.rt);
                let wire = lit(&input.name);
                // A nullable field is an `Option` already: one that may be absent is read
                // as optional too.
                let optional = optional
                    || (input.nullable && input.optional && input.public_default().is_none());
                let (method, args) = if optional && input.sensitive {
                    ("optional_secret", vec![wire])
                } else if optional {
                    ("optional", vec![wire])
                } else if input.sensitive {
                    ("required_secret", vec![wire])
                } else if input.public_default().is_some() {
                    let prefix = if nested { "Self::" } else { "" };
                    let f = format!("{prefix}__default_{}", plain_name(&input.rust_name));
                    ("or_default", vec![wire, f])
                } else {
                    ("required", vec![wire])
                };
                (input.rust_name.as_str(), method, args)
            })
            .collect();
        // prettyplease keeps a struct literal on one line only if it fits and is short:
        // its `expr_struct` ends the group with `end_with_max_width(34)`, which breaks a
        // literal wider than 35 columns however much room the line has left.
        let inline: Vec<String> = calls
            .iter()
            .map(|(field, method, args)| format!("{field}: f.{method}({})?", args.join(", ")))
            .collect();
        let literal = format!("{name} {{ {} }}", inline.join(", "));
        let one = format!("::core::result::Result::Ok({literal})");
        if literal.chars().count() <= 35 && w.fits(&one) {
            w.line(&one);
        } else {
            w.open(&format!("::core::result::Result::Ok({name} {{"));
            for (i, (field, method, args)) in calls.iter().enumerate() {
                field_call(w, field, method, args, i + 1 == calls.len());
            }
            w.close("})");
        }
    }
    w.close("}");
    w.close("}");
}

pub(super) fn default_fn(w: &mut W, input: &Input) {
    let (ty, _) = rust_type(input, &w.rt);
    if plain_name(&input.rust_name).starts_with('_') {
        // `__default__2fa` (a parameter named `2fa`): rustc's snake-case lint dislikes the
        // double underscore.
        w.line("#[allow(non_snake_case)]");
    }
    w.open(&format!(
        "fn __default_{}() -> {ty} {{",
        plain_name(&input.rust_name)
    ));
    let value = default_value(input, &w.rt);
    match value.split_once('(') {
        // A call whose argument does not fit goes on its own line, as prettyplease puts it.
        Some((callee, arg))
            if !w.fits(&value) && (input.ty == InputType::String || !input.ty.is_scalar()) =>
        {
            w.open(&format!("{callee}("));
            w.line(&format!("{},", arg.trim_end_matches(')')));
            w.close(")");
        }
        _ => w.line(&value),
    }
    w.close("}");
}

/// An enum's `Serialize` and `Deserialize` by the wire spelling (and, between them, `Arg`
/// when it is an input's).
pub(super) fn enum_serde(w: &mut W, name: &str, input: bool) {
    let rt = w.rt.clone();
    // Serde by the wire spelling, through generic helpers: a derive per enum would cost
    // every user compile time for code that is the same for all of them.
    w.impl_for(&format!("impl {rt}::__private::serde::Serialize"), name);
    w.open(&format!(
        "fn serialize<S: {rt}::__private::serde::Serializer>("
    ));
    w.line("&self,");
    w.line("s: S,");
    w.close(") -> ::core::result::Result<S::Ok, S::Error> {");
    w.indent += 1;
    w.line("s.serialize_str(self.as_str())");
    w.close("}");
    w.close("}");
    if input {
        w.impl_for(&format!("impl {rt}::__private::Arg"), name);
        w.open(&format!("fn arg(&self) -> {rt}::__private::ArgValue {{"));
        w.line("::core::option::Option::Some(self.as_str().into())");
        w.close("}");
        w.close("}");
    }
    w.open_deserialize(name);
    w.line(&format!(
        "{rt}::__private::deserialize_enum(d, Self::ALL, Self::as_str)"
    ));
    w.close("}");
    w.close("}");
}

/// `Deserialize` for an output struct (`Output`, or an object nested in it), written through
/// `__private::Record` (unknown fields ignored, optional ones absent or `null`) instead of a
/// serde derive, for the same compile-time reason as `Params`.
pub(super) fn output_deserialize(w: &mut W, name: &str, fields: &[OutputField]) {
    let rt = w.rt.clone();
    w.open_deserialize(name);
    w.line(&format!("let mut f = {rt}::__private::Record::new(d)?;"));
    // `Self`, not the name: a struct named `D` would be the type parameter here.
    w.open("::core::result::Result::Ok(Self {");
    for (i, f) in fields.iter().enumerate() {
        let method = if f.optional { "optional" } else { "required" };
        field_call(
            w,
            &f.rust_name,
            method,
            &[lit(&f.name)],
            i + 1 == fields.len(),
        );
    }
    w.close("})");
    w.close("}");
    w.close("}");
}
