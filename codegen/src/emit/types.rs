//! The Rust types of a tool's inputs and outputs: `Params` and its fields, the structs
//! and enums nested in them, `Output` and its `output` module.

use std::fmt::Write;

use crate::model::{EnumValue, Input, InputType, OutputField, OutputType, ToolSpec};
use crate::rustdoc::{code, text};

use super::construct::constructors;
use super::layout::{W, derive_fit, lit, typed_line};
use super::serde::{
    default_fn, enum_serde, fields_deserialize, fields_serialize, output_deserialize,
};
use super::value::rust_type;

pub(super) fn field(w: &mut W, input: &Input) {
    let mut doc = text(input.description.trim());
    if let Some(u) = input.union_text() {
        let _ = write!(
            doc,
            "\n\nTakes {} (the schema's union: a JSON value in Rust).",
            text(&u)
        );
    }
    if let Some(c) = input.constraint_text() {
        let _ = write!(doc, "\n\nAllowed: {} (checked by the runtime).", text(&c));
    }
    if let Some(d) = input.public_default() {
        let _ = write!(doc, "\n\nDefault: {}.", code(&d.to_string()));
    }
    if input.sensitive {
        doc.push_str("\n\nSensitive: `Debug` and `Display` print a redaction.");
    }
    w.doc(&doc);
    let (ty, optional) = rust_type(input, &w.rt);
    let name = &input.rust_name;
    if optional {
        typed_line(
            w,
            &format!("pub {name}: "),
            &format!("::core::option::Option<{ty}>"),
            ",",
        );
    } else {
        typed_line(w, &format!("pub {name}: "), &ty, ",");
    }
}

/// A struct for an object input nested in a tool's params, with its serde impls and `Arg`.
fn input_struct(w: &mut W, input: &Input, path: &str) {
    let rt = w.rt.clone();
    let ty = &input.rust_type;
    let doc = match (input.description.trim(), input.name.is_empty()) {
        ("", true) => format!("An element of {}.", code(path.trim_end_matches("[]"))),
        ("", false) => format!("The {} object.", code(path)),
        (d, _) => text(d),
    };
    w.doc(&doc);
    w.derive(&[
        "::core::fmt::Debug",
        "::core::clone::Clone",
        "::core::cmp::PartialEq",
    ]);
    w.open(&format!("pub struct {ty} {{"));
    for p in &input.properties {
        field(w, p);
    }
    w.close("}");
    fields_serialize(w, ty, &input.properties);
    fields_deserialize(w, ty, &input.properties, true);
    constructors(w, ty, &input.properties, true);
    w.impl_for(&format!("impl {rt}::__private::Arg"), ty);
    w.open(&format!("fn arg(&self) -> {rt}::__private::ArgValue {{"));
    w.line(&format!("{rt}::__private::arg_of(self)"));
    w.close("}");
    w.close("}");
}

/// The enums and structs nested in a tool's inputs (and its top-level enums), in
/// declaration order, an object before its fields' types, each with its path.
fn input_types<'a>(inputs: &'a [Input], parent: &str, out: &mut Vec<(String, &'a Input)>) {
    for i in inputs {
        let path = if parent.is_empty() {
            i.name.clone()
        } else {
            format!("{parent}.{}", i.name)
        };
        input_type(i, path, out);
    }
}

fn input_type<'a>(i: &'a Input, path: String, out: &mut Vec<(String, &'a Input)>) {
    match i.ty {
        InputType::Enum => out.push((path, i)),
        InputType::Object if !i.rust_type.is_empty() => {
            out.push((path.clone(), i));
            input_types(&i.properties, &path, out);
        }
        InputType::Array | InputType::Map => {
            if let Some(items) = &i.items {
                input_type(items, format!("{path}[]"), out);
            }
        }
        _ => {}
    }
}

const OUTPUT_DERIVES: &[&str] = &[
    "::core::fmt::Debug",
    "::core::clone::Clone",
    "::core::cmp::PartialEq",
];

/// The Rust type of an output, as written in the tool's module (`in_output`: in its
/// `output` module, where the nested types are named without `output::`).
fn output_rust_type(ty: &OutputType, in_output: bool, rt: &str) -> String {
    let nested = |name: &str| {
        if in_output {
            name.to_owned()
        } else {
            format!("output::{name}")
        }
    };
    match ty {
        OutputType::String => "::std::string::String".to_owned(),
        OutputType::Number => "f64".to_owned(),
        OutputType::Integer => "i64".to_owned(),
        OutputType::Boolean => "bool".to_owned(),
        OutputType::Enum { rust_type, .. } => nested(rust_type),
        OutputType::Object { rust_type, .. } if rust_type.is_empty() => {
            format!("{rt}::__private::JsonObject")
        }
        OutputType::Object { rust_type, .. } => nested(rust_type),
        OutputType::Array { items } => {
            format!(
                "::std::vec::Vec<{}>",
                output_rust_type(&items.ty, in_output, rt)
            )
        }
        // A type added to the model later: any JSON, until the emitter knows it.
        #[allow(unreachable_patterns)]
        _ => format!("{rt}::__private::serde_json::Value"),
    }
}

/// A struct over output fields (`Output`, or an object nested in it) and its
/// `Deserialize` ([`output_deserialize`]).
fn output_struct(w: &mut W, name: &str, fields: &[OutputField], in_output: bool) {
    derive_fit(w, OUTPUT_DERIVES);
    w.open(&format!("pub struct {name} {{"));
    for f in fields {
        if f.description.is_empty() {
            w.doc(&code(&f.name));
        } else {
            w.doc(&text(&f.description));
        }
        let ty = output_rust_type(&f.ty, in_output, &w.rt);
        let ty = if f.optional {
            format!("::core::option::Option<{ty}>")
        } else {
            ty
        };
        typed_line(w, &format!("pub {}: ", f.rust_name), &ty, ",");
    }
    w.close("}");
    output_deserialize(w, name, fields);
}

/// The objects and enums nested in a tool's outputs, in declaration order (an object
/// before its fields' types), each with its path (`messages[].labels`).
fn nested_outputs<'a>(
    fields: &'a [OutputField],
    parent: &str,
    out: &mut Vec<(String, &'a OutputField)>,
) {
    for f in fields {
        let path = if parent.is_empty() {
            f.name.clone()
        } else {
            format!("{parent}.{}", f.name)
        };
        nested_output(f, path, out);
    }
}

fn nested_output<'a>(f: &'a OutputField, path: String, out: &mut Vec<(String, &'a OutputField)>) {
    match &f.ty {
        OutputType::Enum { .. } => out.push((path, f)),
        OutputType::Object {
            properties,
            rust_type,
        } if !rust_type.is_empty() => {
            out.push((path.clone(), f));
            nested_outputs(properties, &path, out);
        }
        OutputType::Array { items } => nested_output(items, format!("{path}[]"), out),
        _ => {}
    }
}

/// `Output` (the typed `details` of a tool that declares `outputs:`) and, in a module
/// `output`, the objects and enums nested in it.
fn output_types(w: &mut W, tool: &ToolSpec) {
    if tool.outputs.is_empty() {
        return;
    }
    let name = code(&tool.name);
    w.doc(&format!(
        "The `details` of a {name} result, as its TOOL.md `outputs:` declares them: what\n\
         `Runtime::call_output` and `Runtime::output` give. Fields not declared are ignored."
    ));
    output_struct(w, "Output", &tool.outputs, false);
    let mut nested = Vec::new();
    nested_outputs(&tool.outputs, "", &mut nested);
    if nested.is_empty() {
        return;
    }
    w.doc(&format!(
        "The objects and enums nested in the outputs of {name}."
    ));
    w.open("pub mod output {");
    for (path, f) in nested {
        let described = if f.description.is_empty() {
            None
        } else {
            Some(f.description.as_str())
        };
        match &f.ty {
            OutputType::Enum { values, rust_type } => {
                w.doc(&format!("Values of {}.", code(&path)));
                enum_items(w, rust_type, &path, values, None, false);
            }
            OutputType::Object {
                properties,
                rust_type,
            } => {
                let doc = match (described, f.name.is_empty()) {
                    (Some(d), _) => text(d),
                    (None, true) => format!("An element of {}.", code(path.trim_end_matches("[]"))),
                    (None, false) => format!("The {} object.", code(&path)),
                };
                w.doc(&doc);
                output_struct(w, rust_type, properties, true);
            }
            _ => {}
        }
    }
    w.close("}");
}

pub(super) const VALUE_DERIVES: &[&str] = &[
    "::core::fmt::Debug",
    "::core::clone::Clone",
    "::core::marker::Copy",
    "::core::cmp::PartialEq",
    "::core::cmp::Eq",
    "::core::hash::Hash",
];

fn enum_type(w: &mut W, input: &Input, path: &str) {
    let name = input.enum_type_name();
    let default = input.public_default().and_then(|d| d.as_str());
    w.doc(&format!("Allowed values of {}.", code(path)));
    enum_items(w, &name, path, &input.values, default, true);
}

/// An enum over `values` with its impls (`ALL`, `as_str`, `Display`, serde by the wire
/// spelling, `FromStr`, and `Arg` when it is an input's, a `Params` field); `wire_name` is
/// the input or output it belongs to, for errors.
fn enum_items(
    w: &mut W,
    name: &str,
    wire_name: &str,
    values: &[EnumValue],
    default: Option<&str>,
    input: bool,
) {
    enum_decl(w, name, values, default);
    enum_consts(w, name, wire_name, values);
    enum_display(w, name);
    enum_serde(w, name, input);
    enum_from_str(w, name);
}

/// `pub enum {name}`: a variant per value, documented by its wire spelling.
fn enum_decl(w: &mut W, name: &str, values: &[EnumValue], default: Option<&str>) {
    let mut derives = VALUE_DERIVES.to_vec();
    if default.is_some() {
        derives.push("::core::default::Default");
    }
    w.derive(&derives);
    w.open(&format!("pub enum {name} {{"));
    for v in values {
        w.doc(&code(&v.wire));
        if default == Some(v.wire.as_str()) {
            w.line("#[default]");
        }
        w.line(&format!("{},", v.rust));
    }
    w.close("}");
}

/// The enum's inherent impl: `ALL`, `INPUT` (its input's name, for errors) and `as_str`.
fn enum_consts(w: &mut W, name: &str, wire_name: &str, values: &[EnumValue]) {
    w.open(&format!("impl {name} {{"));
    w.line("/// Every value, in TOOL.md order.");
    let items: Vec<String> = values
        .iter()
        .map(|v| format!("{name}::{}", v.rust))
        .collect();
    let one = format!(
        "pub const ALL: &'static [{name}] = &[{}];",
        items.join(", ")
    );
    if w.fits(&one) {
        w.line(&one);
    } else {
        w.open(&format!("pub const ALL: &'static [{name}] = &["));
        for i in &items {
            w.line(&format!("{i},"));
        }
        w.close("];");
    }
    w.line(&format!("const INPUT: &'static str = {};", lit(wire_name)));
    w.line("/// The value exactly as the model sends it.");
    w.open("pub const fn as_str(self) -> &'static str {");
    w.open("match self {");
    for v in values {
        w.arm(&format!("Self::{}", v.rust), &lit(&v.wire));
    }
    w.close("}");
    w.close("}");
    w.close("}");
}

/// `Display`: the wire spelling.
fn enum_display(w: &mut W, name: &str) {
    w.impl_for("impl ::core::fmt::Display", name);
    w.open("fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {");
    w.line("f.write_str(self.as_str())");
    w.close("}");
    w.close("}");
}

/// `FromStr` by the wire spelling, its error naming the input.
fn enum_from_str(w: &mut W, name: &str) {
    let rt = w.rt.clone();
    w.impl_for("impl ::core::str::FromStr", name);
    w.line(&format!("type Err = {rt}::__private::ParseEnumError;"));
    w.open("fn from_str(s: &str) -> ::core::result::Result<Self, Self::Err> {");
    let parse = format!("{rt}::__private::parse_enum(Self::INPUT, s, Self::ALL, Self::as_str)");
    if w.fits(&parse) {
        w.line(&parse);
    } else {
        // An output enum sits one module deeper, in the tool's `output` module.
        w.open(&format!("{rt}::__private::parse_enum("));
        for a in ["Self::INPUT", "s", "Self::ALL", "Self::as_str"] {
            w.line(&format!("{a},"));
        }
        w.close(")");
    }
    w.close("}");
    w.close("}");
}

/// A tool's `Params`, its nested types and enums, and its `Output`.
pub(super) fn params_and_types(w: &mut W, tool: &ToolSpec) {
    w.doc(&format!("Parameters of {}.", code(&tool.name)));
    w.derive(&[
        "::core::fmt::Debug",
        "::core::clone::Clone",
        "::core::cmp::PartialEq",
    ]);
    if tool.inputs.is_empty() {
        w.line("pub struct Params {}");
    } else {
        w.open("pub struct Params {");
        for input in &tool.inputs {
            field(w, input);
        }
        w.close("}");
    }
    fields_serialize(w, "Params", &tool.inputs);
    fields_deserialize(w, "Params", &tool.inputs, false);
    for input in tool.inputs.iter().filter(|i| i.public_default().is_some()) {
        default_fn(w, input);
    }
    constructors(w, "Params", &tool.inputs, false);
    let mut nested = Vec::new();
    input_types(&tool.inputs, "", &mut nested);
    for (path, input) in nested {
        if input.ty == InputType::Enum {
            enum_type(w, input, &path);
        } else {
            input_struct(w, input, &path);
        }
    }
    output_types(w, tool);
}
