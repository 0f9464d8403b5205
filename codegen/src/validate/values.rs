//! Enum values and defaults: what an input accepts, checked as the runtime checks a
//! model's arguments.

use super::*;

/// Why `v` is not a valid value of `input` (`is not an integer`, `has 12 items, at most 10
/// are allowed`, ...), or `None`: the check a TOOL.md default gets, by the rules the
/// runtime's validator applies to a model's arguments (without its tolerance of
/// strings for numbers: a default is written by a person).
pub(super) fn value_problem(input: &Input, v: &Value) -> Option<String> {
    let kind = |v: &Value| match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    };
    let wrong = |want: &str| Some(format!("must be {want}, found {}", kind(v)));
    match (input.ty, v) {
        (InputType::Any, _) => None,
        (_, Value::Null) if input.nullable => None,
        (InputType::String, Value::String(_)) | (InputType::Boolean, Value::Bool(_)) => None,
        (InputType::Number | InputType::Integer, Value::Number(n)) => {
            let f = n.as_f64().unwrap_or_default();
            // An integer is an `i64` in Rust: a larger one could not reach a typed caller.
            if input.ty == InputType::Integer && !n.is_i64() {
                return Some(format!(
                    "must be an integer of at most 19 digits, found {n}"
                ));
            }
            let low = input.minimum.is_some_and(|m| f < m);
            let high = input.maximum.is_some_and(|m| f > m);
            (low || high).then(|| {
                format!(
                    "is {n}, outside the allowed range ({})",
                    input.constraint_text().unwrap_or_default()
                )
            })
        }
        (InputType::Enum, Value::String(s)) => (!input.values.iter().any(|e| e.wire == *s))
            .then(|| format!("`{s}` is not one of its values")),
        (InputType::Const, _) => (input.constant.as_ref() != Some(v))
            .then(|| format!("must be {}", input.constant.clone().unwrap_or_default())),
        (InputType::Array, Value::Array(a)) => {
            let n = a.len() as u64;
            if input.min_items.is_some_and(|m| n < m) || input.max_items.is_some_and(|m| n > m) {
                return Some(format!(
                    "has {n} items, but {} are allowed",
                    input.constraint_text().unwrap_or_default()
                ));
            }
            let items = input.items.as_deref()?;
            a.iter()
                .enumerate()
                .find_map(|(i, e)| value_problem(items, e).map(|p| format!("[{i}] {p}")))
        }
        (InputType::Map, Value::Object(m)) => {
            let items = input.items.as_deref()?;
            m.iter()
                .find_map(|(k, e)| value_problem(items, e).map(|p| format!(".{k} {p}")))
        }
        (InputType::Object, Value::Object(m)) => {
            if let Some(k) = m.keys().find(|k| input.property(k).is_none()) {
                return Some(format!("has the unknown field `{k}`"));
            }
            for p in &input.properties {
                match m.get(&p.name) {
                    None | Some(Value::Null) if p.optional || p.default.is_some() => {}
                    None => return Some(format!("lacks the required field `{}`", p.name)),
                    Some(e) => {
                        if let Some(why) = value_problem(p, e) {
                            return Some(format!(".{} {why}", p.name));
                        }
                    }
                }
            }
            None
        }
        (InputType::String, _) => wrong("a string"),
        (InputType::Number, _) => wrong("a number"),
        (InputType::Integer, _) => wrong("an integer"),
        (InputType::Boolean, _) => wrong("a boolean"),
        (InputType::Enum, _) => wrong("a string"),
        (InputType::Object | InputType::Map, _) => wrong("a mapping"),
        (InputType::Array, _) => wrong("a list"),
    }
}

pub(super) fn check_values(cx: &mut Ctx<'_>, name: &str, v: &YNode) -> Vec<EnumValue> {
    // (value, position) pairs; comma-separated strings are split with positions per value.
    let mut raw: Vec<(String, Pos, usize)> = Vec::new();
    match &v.value {
        YValue::Seq(items) => {
            for n in items {
                match n.as_text() {
                    Some(s) => raw.push((s.trim().to_owned(), n.pos, n.width())),
                    None => {
                        let kind = n.kind();
                        cx.err(
                            n,
                            format!("enum values of `{name}` must be strings, found {kind}"),
                        );
                    }
                }
            }
        }
        _ => match v.as_text() {
            Some(s) => {
                // Columns of each comma-separated piece, when the scalar is on one line and
                // its source is the text itself, plain or inside quotes with no escapes.
                let quoted = v.raw.as_deref().is_some_and(|r| {
                    r.len() >= 2
                        && (r.starts_with('"') && r.ends_with('"')
                            || r.starts_with('\'') && r.ends_with('\''))
                        && r[1..r.len() - 1] == *s
                });
                let exact = !s.contains('\n') && (v.raw.as_deref() == Some(s.as_str()) || quoted);
                let mut col = v.pos.column as usize + usize::from(quoted);
                for piece in s.split(',') {
                    let lead = piece.len() - piece.trim_start().len();
                    let pos = if exact {
                        Pos::new(v.pos.line, (col + piece[..lead].chars().count()) as u32)
                    } else {
                        v.pos
                    };
                    raw.push((piece.trim().to_owned(), pos, piece.trim().chars().count()));
                    col += piece.chars().count() + 1;
                }
            }
            None => {
                let kind = v.kind();
                cx.err(v, format!("`values` of `{name}` must be a comma-separated string or a list, found {kind}"));
                return Vec::new();
            }
        },
    }
    let mut out: Vec<EnumValue> = Vec::new();
    for (value, pos, len) in raw {
        if value.is_empty() {
            cx.warn_at(pos, len, format!("empty enum value in `{name}` is ignored"))
                .hint = Some("remove the extra comma".into());
            continue;
        }
        if out.iter().any(|e| e.wire == value) {
            cx.warn_at(
                pos,
                len,
                format!("duplicate enum value `{value}` in `{name}` is ignored"),
            )
            .hint = Some("list each value once".into());
            continue;
        }
        // Rust identifiers are codegen's problem: a fallback, with a warning that shows it.
        let base = ident::variant_name_or_spelled(&value);
        if ident::variant_name(&value).is_none() {
            cx.warn_at(pos, len, format!("enum value `{value}` of `{name}` has no letters or digits: its Rust variant is `{base}`"));
        }
        let rust = ident::unique(&base, |c| out.iter().any(|e| e.rust == c));
        if rust != base
            && let Some(prev) = out.iter().find(|e| e.rust == base)
        {
            let prev = prev.wire.clone();
            cx.warn_at(pos, len, format!("enum values `{prev}` and `{value}` of `{name}` both map to the Rust variant `{base}`: `{value}` gets `{rust}`"))
                .hint = Some("the values the model sends are unchanged; rename one for a nicer Rust name".into());
        }
        out.push(EnumValue { wire: value, rust });
    }
    if out.is_empty() {
        cx.err(v, format!("enum `{name}` has no values")).hint =
            Some("add `values: first,second` (comma-separated) or a YAML list".into());
    }
    out
}

/// The default `d` of the scalar input `name` of type `ty` (`values`: an enum's), as
/// JSON: a value of the type as written, one converted without loss (with a warning that
/// shows the conversion), or an error.
pub(super) fn check_default(
    cx: &mut Ctx<'_>,
    name: &str,
    ty: InputType,
    values: &[EnumValue],
    d: &YNode,
) -> Option<Value> {
    if let Some(v) = exact_default(ty, d) {
        return Some(v);
    }
    if let Some(v) = converted_default(cx, name, ty, d) {
        return Some(v);
    }
    if ty == InputType::Enum
        && let Some(text) = d.as_text()
    {
        return enum_default(cx, name, values, d, text);
    }
    wrong_default(cx, name, ty, d);
    None
}

/// A default written as a value of the input's type.
fn exact_default(ty: InputType, d: &YNode) -> Option<Value> {
    match (ty, &d.value) {
        (InputType::String, YValue::Str(s)) => Some(Value::String(s.clone())),
        (InputType::Number, YValue::UInt(u)) => Some(Value::from(*u)),
        (InputType::Number, YValue::Int(i)) => Some(Value::from(*i)),
        (InputType::Number, YValue::Float(f)) if f.is_finite() => {
            serde_json::Number::from_f64(*f).map(Value::Number)
        }
        (InputType::Integer, YValue::UInt(u)) if i64::try_from(*u).is_ok() => Some(Value::from(*u)),
        (InputType::Integer, YValue::Int(i)) => Some(Value::from(*i)),
        (InputType::Boolean, YValue::Bool(b)) => Some(Value::Bool(*b)),
        _ => None,
    }
}

/// Lossless conversions, from the scalar's source text: `12345` -> "12345" (and `007`
/// stays "007"), "5" -> 5, "true" -> true, `3.0` -> 3 for an integer; each with a warning
/// that shows how to write it.
fn converted_default(cx: &mut Ctx<'_>, name: &str, ty: InputType, d: &YNode) -> Option<Value> {
    let (value, message, fix) = match (ty, &d.value) {
        (InputType::Integer, YValue::Float(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => {
            let n = *f as i64;
            (
                Value::from(n),
                format!(
                    "default of integer input `{name}` is written with a fraction; read as {n}"
                ),
                format!("write `default: {n}`"),
            )
        }
        (InputType::Integer, YValue::Str(s))
            if number_from_text(s).is_some_and(|n| n.is_i64() || n.is_u64()) =>
        {
            let n = number_from_text(s)?;
            (
                n.clone(),
                format!("default of integer input `{name}` is a quoted string; read as {n}"),
                format!("remove the quotes: `default: {}`", s.trim()),
            )
        }
        (
            InputType::String,
            YValue::Bool(_) | YValue::Int(_) | YValue::UInt(_) | YValue::Float(_),
        ) if d.raw.is_some() => {
            let text = d.raw.clone().unwrap_or_default();
            let kind = d.kind();
            (
                Value::String(text.clone()),
                format!(
                    "default of string input `{name}` is written as {kind}; read as the string \"{text}\""
                ),
                format!("quote it: `default: \"{text}\"`"),
            )
        }
        (InputType::Number, YValue::Str(s)) if number_from_text(s).is_some() => {
            let n = number_from_text(s)?;
            (
                n.clone(),
                format!("default of number input `{name}` is a quoted string; read as {n}"),
                format!("remove the quotes: `default: {}`", s.trim()),
            )
        }
        (InputType::Boolean, YValue::Str(s)) if matches!(s.trim(), "true" | "false") => {
            let b = s.trim() == "true";
            (
                Value::Bool(b),
                format!("default of boolean input `{name}` is a quoted string; read as {b}"),
                format!("remove the quotes: `default: {b}`"),
            )
        }
        _ => return None,
    };
    cx.warn(d, message).hint = Some(fix);
    Some(value)
}

/// An enum's default `text`: one of its values, else an error with the nearest one.
fn enum_default(
    cx: &mut Ctx<'_>,
    name: &str,
    values: &[EnumValue],
    d: &YNode,
    text: String,
) -> Option<Value> {
    if values.iter().any(|v| v.wire == text) {
        return Some(Value::String(text));
    }
    // No values: the enum has its own error already.
    if !values.is_empty() {
        let list: Vec<&str> = values.iter().map(|v| v.wire.as_str()).collect();
        let hint = match suggest(&text, &list) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!("use one of: {}", list.join(", ")),
        };
        cx.err(
            d,
            format!(
                "default `{text}` of enum `{name}` is not one of its values: {}",
                list.join(", ")
            ),
        )
        .hint = Some(hint);
    }
    None
}

/// The error for a default of another type than the input's.
fn wrong_default(cx: &mut Ctx<'_>, name: &str, ty: InputType, d: &YNode) {
    let f = d.as_text().unwrap_or_else(|| d.kind().to_owned());
    let kind = d.kind();
    let want = ty.json_type().unwrap_or(ty.as_str());
    let hint = match (ty, &d.value) {
        (InputType::String, _) if d.raw.is_some() => format!("quote it: `default: \"{f}\"`"),
        (InputType::Boolean, _) => "use `true` or `false`".to_owned(),
        _ => format!("give a {want} default or change the input's `type`"),
    };
    let article = if want.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    cx.err(
        d,
        format!("default of {ty} input `{name}` must be {article} {want}, found {kind} `{f}`"),
    )
    .hint = Some(hint);
}

/// A number written as a string, when it converts without loss: an integer stays an
/// integer, anything else must be a finite float.
pub(super) fn number_from_text(s: &str) -> Option<Value> {
    let t = s.trim();
    if let Ok(u) = t.parse::<u64>() {
        return Some(Value::from(u));
    }
    if let Ok(i) = t.parse::<i64>() {
        return Some(Value::from(i));
    }
    // Rust also parses `inf`, `NaN` and `infinity`: not numbers a model can send.
    if !t.bytes().any(|b| b.is_ascii_digit())
        || t.bytes()
            .any(|b| b.is_ascii_alphabetic() && b != b'e' && b != b'E')
    {
        return None;
    }
    let f = t.parse::<f64>().ok().filter(|f| f.is_finite())?;
    serde_json::Number::from_f64(f).map(Value::Number)
}
