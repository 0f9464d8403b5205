//! The Rust type of an input's value and the default it is filled with: what a field of
//! `Params` is declared as, in `Params` and in the serde impls alike.

use proc_macro2::Literal;

use crate::model::{Input, InputType};

use super::layout::lit;

/// The Rust type of a value of `input` (without the `Option` of an optional field).
fn value_type(input: &Input, rt: &str) -> String {
    let base = match input.ty {
        InputType::String => "::std::string::String".to_owned(),
        InputType::Number => "f64".to_owned(),
        InputType::Integer => "i64".to_owned(),
        InputType::Boolean => "bool".to_owned(),
        InputType::Object if input.rust_type.is_empty() => {
            format!("{rt}::__private::JsonObject")
        }
        InputType::Enum | InputType::Object => input.enum_type_name(),
        InputType::Array => format!(
            "::std::vec::Vec<{}>",
            input
                .items
                .as_deref()
                .map_or_else(|| any_type(rt), |i| value_type(i, rt))
        ),
        InputType::Map => format!(
            "::std::collections::BTreeMap<::std::string::String, {}>",
            input
                .items
                .as_deref()
                .map_or_else(|| any_type(rt), |i| value_type(i, rt))
        ),
        InputType::Const => match &input.constant {
            Some(serde_json::Value::String(_)) => "::std::string::String".to_owned(),
            Some(serde_json::Value::Bool(_)) => "bool".to_owned(),
            Some(serde_json::Value::Number(n)) if n.is_i64() => "i64".to_owned(),
            Some(serde_json::Value::Number(_)) => "f64".to_owned(),
            _ => any_type(rt),
        },
        InputType::Any => any_type(rt),
    };
    let base = if input.nullable && input.ty != InputType::Any {
        format!("::core::option::Option<{base}>")
    } else {
        base
    };
    if input.sensitive {
        format!("{rt}::__private::Secret<{base}>")
    } else {
        base
    }
}

fn any_type(rt: &str) -> String {
    format!("{rt}::__private::serde_json::Value")
}

pub(super) fn rust_type(input: &Input, rt: &str) -> (String, bool) {
    // A sensitive default is applied by the runtime, never written into code: the field
    // is an `Option` the runtime fills. A nullable field is already an `Option`.
    let optional = !input.required() && input.public_default().is_none();
    (
        value_type(input, rt),
        optional && (!input.nullable || input.sensitive),
    )
}

pub(super) fn plain_name(rust_name: &str) -> &str {
    rust_name.trim_start_matches("r#")
}

pub(super) fn default_value(input: &Input, rt: &str) -> String {
    let v = match (input.public_default(), input.ty) {
        (Some(serde_json::Value::String(s)), InputType::String) => {
            format!("::std::string::String::from({})", lit(s))
        }
        (Some(serde_json::Value::Number(n)), InputType::Number) => {
            Literal::f64_unsuffixed(n.as_f64().unwrap_or_default()).to_string()
        }
        (Some(serde_json::Value::Number(n)), InputType::Integer) if n.is_i64() => {
            Literal::i64_unsuffixed(n.as_i64().unwrap_or_default()).to_string()
        }
        (Some(serde_json::Value::Bool(b)), InputType::Boolean) => b.to_string(),
        (Some(serde_json::Value::String(s)), InputType::Enum) => {
            let variant = input
                .values
                .iter()
                .find(|v| &v.wire == s)
                .map_or("", |v| v.rust.as_str());
            format!("{}::{variant}", input.enum_type_name())
        }
        // Objects, arrays and anything else: read from the JSON TOOL.md gave, which
        // toolbind-codegen has checked against the input.
        (Some(d), _) => format!("{rt}::__private::json_default({})", lit(&d.to_string())),
        _ => "::core::default::Default::default()".to_owned(),
    };
    if input.sensitive {
        format!("{rt}::__private::Secret::new({v})")
    } else {
        v
    }
}
