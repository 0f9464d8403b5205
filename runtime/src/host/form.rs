//! The forms a tool or server may ask for: what MCP elicitation allows, and whether an
//! answer fits its form (types, choices, bounds, string formats).

use serde_json::Value;

use super::{Refusal, shorten};

/// string (optionally with `enum`, `enumNames` or titled `oneOf` choices), number,
/// integer, boolean, or an array of string choices (`items` with `enum` or titled
/// `anyOf`): no nesting.
pub(super) fn flat_schema(schema: &Value) -> Result<(), String> {
    let refuse = |why: String| {
        Err(format!(
            "ctx.elicit: {why}; MCP elicitation takes a flat object of string, number, integer, boolean or choice fields"
        ))
    };
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return refuse("the schema must be `{type: \"object\", properties: {...}}`".into());
    }
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return refuse("the schema has no `properties` object".into());
    };
    for (name, p) in props {
        let name = shorten(name, 64);
        match p.get("type").and_then(Value::as_str) {
            Some("string") => {
                if let Some(e) = p.get("enum")
                    && !e.as_array().is_some_and(|v| v.iter().all(Value::is_string))
                {
                    return refuse(format!("`{name}`'s enum must be a list of strings"));
                }
                if let Some(o) = p.get("oneOf")
                    && choices(o).is_none()
                {
                    return refuse(format!(
                        "`{name}`'s oneOf must be a list of {{const: <string>, title}}"
                    ));
                }
            }
            Some("number" | "integer" | "boolean") => {}
            Some("array") => {
                let items = &p["items"];
                let ok = match (items.get("enum"), items.get("anyOf")) {
                    (Some(e), None) => e.as_array().is_some_and(|v| v.iter().all(Value::is_string)),
                    (None, Some(a)) => choices(a).is_some(),
                    _ => false,
                };
                if !ok {
                    return refuse(format!(
                        "`{name}` is an array: only a multi-select of string choices (`items` with `enum` or `anyOf` of consts)"
                    ));
                }
            }
            Some(other) => {
                return refuse(format!("`{name}` is of type `{}`", shorten(other, 64)));
            }
            None => return refuse(format!("`{name}` has no `type`")),
        }
    }
    Ok(())
}

/// The `const` strings of a titled-choices list (`[{const, title}, ...]`).
fn choices(list: &Value) -> Option<Vec<Value>> {
    list.as_array()?
        .iter()
        .map(|c| c.get("const").filter(|v| v.is_string()).cloned())
        .collect()
}

/// The values a field allows, when it is a choice: `enum`, or `oneOf` consts.
fn allowed(p: &Value) -> Option<Vec<Value>> {
    p.get("enum")
        .and_then(Value::as_array)
        .cloned()
        .or_else(|| p.get("oneOf").and_then(choices))
}

/// Checks an accepted answer's content against its (flat) schema: required fields there,
/// no field it does not name, each of its type and within its choices and bounds.
pub(super) fn fits(schema: &Value, content: &serde_json::Map<String, Value>) -> Result<(), String> {
    let bad = |why: String| Err(format!("the answer does not fit the form: {why}"));
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for req in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !content.contains_key(req) {
            return bad(format!("`{req}` is required"));
        }
    }
    for (name, v) in content {
        let Some(p) = props.get(name) else {
            return bad(format!(
                "`{}` is not a field of the form",
                crate::untrusted::echo(name)
            ));
        };
        unfit(name, p, v).or_else(bad)?;
    }
    Ok(())
}

/// Whether `value` fits the elicitation form's field `name` of schema `spec`: its type,
/// its choices, its bounds (`minimum`, `maximum`, `minLength`, `maxLength`, `minItems`,
/// `maxItems`) and its string `format` (`email`, `uri`, `date`, `date-time`); else why
/// not, naming the field. The runtime checks a whole answer so before the tool sees it; a
/// host that fills a form field by field (`toolbind call` on the terminal) can check each
/// field as it is given, and ask again.
pub fn field_fits(name: &str, spec: &Value, value: &Value) -> Result<(), Refusal> {
    unfit(name, spec, value).map_err(Refusal::Unfit)
}

/// Why `value` does not fit field `name` of schema `spec`, naming the field.
fn unfit(name: &str, spec: &Value, value: &Value) -> Result<(), String> {
    let (p, v) = (spec, value);
    let ok = match p.get("type").and_then(Value::as_str) {
        Some("string") => v.is_string(),
        Some("number") => v.is_number(),
        Some("integer") => v.as_f64().is_some_and(|f| f.fract() == 0.0),
        Some("boolean") => v.is_boolean(),
        Some("array") => v.is_array(),
        _ => false,
    };
    if !ok {
        return Err(format!(
            "`{name}` must be a {}, got {}",
            p["type"],
            crate::untrusted::echo_json(v)
        ));
    }
    if let Some(allowed) = allowed(p)
        && !allowed.contains(v)
    {
        return Err(format!("`{name}` must be one of {}", Value::Array(allowed)));
    }
    if let (Some(items), Some(allowed)) = (
        v.as_array(),
        allowed(&p["items"]).or_else(|| p["items"].get("anyOf").and_then(choices)),
    ) && let Some(wrong) = items.iter().find(|i| !allowed.contains(i))
    {
        return Err(format!(
            "`{name}` holds {}, not one of {}",
            crate::untrusted::echo_json(wrong),
            Value::Array(allowed)
        ));
    }
    let number = |key: &str| p.get(key).and_then(Value::as_f64);
    let count = |key: &str| p.get(key).and_then(Value::as_u64);
    if let Some(x) = v.as_f64() {
        if number("minimum").is_some_and(|m| x < m) {
            return Err(format!("`{name}` is below its minimum {}", p["minimum"]));
        }
        if number("maximum").is_some_and(|m| x > m) {
            return Err(format!("`{name}` is above its maximum {}", p["maximum"]));
        }
    }
    if let Some(s) = v.as_str() {
        let n = s.chars().count() as u64;
        if count("minLength").is_some_and(|m| n < m) {
            return Err(format!("`{name}` is shorter than {}", p["minLength"]));
        }
        if count("maxLength").is_some_and(|m| n > m) {
            return Err(format!("`{name}` is longer than {}", p["maxLength"]));
        }
        if let Some(f) = p.get("format").and_then(Value::as_str)
            && !has_format(f, s)
        {
            return Err(format!("`{name}` is not a valid {f}"));
        }
    }
    if let Some(items) = v.as_array() {
        let n = items.len() as u64;
        if count("minItems").is_some_and(|m| n < m) {
            return Err(format!(
                "`{name}` has {n} choices, fewer than its minItems {}",
                p["minItems"]
            ));
        }
        if count("maxItems").is_some_and(|m| n > m) {
            return Err(format!(
                "`{name}` has {n} choices, more than its maxItems {}",
                p["maxItems"]
            ));
        }
    }
    Ok(())
}

/// Whether `s` is of one of the string formats MCP elicitation names (`email`, `uri`,
/// `date`, `date-time`, as JSON Schema defines them); another format is not checked (a
/// format JSON Schema does not know is an annotation).
fn has_format(format: &str, s: &str) -> bool {
    match format {
        "email" => is_email(s),
        "uri" => is_uri(s),
        "date" => is_date(s),
        "date-time" => is_date_time(s),
        _ => true,
    }
}

/// RFC 5321's address: a dot-atom or a quoted string, `@`, and a domain of dot-separated
/// labels (letters, digits, inner hyphens) or an address literal (`[...]`); ASCII only
/// (JSON Schema's `idn-email` is another format).
fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.rsplit_once('@') else {
        return false;
    };
    let atext = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c);
    let local_ok = if local.len() >= 2 && local.starts_with('"') && local.ends_with('"') {
        // A quoted string: printable ASCII and spaces, `"` and `\` only escaped.
        let mut chars = local[1..local.len() - 1].chars();
        let mut ok = true;
        while let Some(c) = chars.next() {
            ok &= match c {
                '\\' => chars
                    .next()
                    .is_some_and(|e| e == ' ' || e.is_ascii_graphic()),
                '"' => false,
                c => c == ' ' || c.is_ascii_graphic(),
            };
        }
        ok
    } else {
        local
            .split('.')
            .all(|atom| !atom.is_empty() && atom.chars().all(atext))
    };
    let domain_ok = match domain.strip_prefix('[').and_then(|d| d.strip_suffix(']')) {
        Some(literal) => {
            !literal.is_empty()
                && literal
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | ':'))
        }
        None => {
            domain.len() <= 253
                && domain.split('.').all(|label| {
                    (1..=63).contains(&label.len())
                        && !label.starts_with('-')
                        && !label.ends_with('-')
                        && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                })
        }
    };
    local_ok && domain_ok
}

/// RFC 3986's URI: a scheme (a letter, then letters, digits, `+`, `-`, `.`), a colon, and
/// the rest of unreserved, reserved and percent-encoded characters only.
fn is_uri(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = |j: usize| b.get(j).is_some_and(u8::is_ascii_hexdigit);
                if !(hex(i + 1) && hex(i + 2)) {
                    return false;
                }
                i += 3;
            }
            c if c.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=".contains(&c) => i += 1,
            _ => return false,
        }
    }
    has_uri_scheme(s)
}

/// Whether `s` starts with a scheme and its colon, as RFC 3986 writes it: a letter, then
/// letters, digits, `+`, `-`, `.`.
pub(crate) fn has_uri_scheme(s: &str) -> bool {
    s.split_once(':').is_some_and(|(scheme, _)| {
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

/// RFC 3339's date-time: full-date `T` hh:mm:ss[.fraction] and `Z` or ±hh:mm; a leap
/// second (`:60`) only at 23:59 UTC.
fn is_date_time(s: &str) -> bool {
    let Some((date, time)) = s.split_once(['T', 't']) else {
        return false;
    };
    let Some(i) = time.find(['Z', 'z', '+', '-']) else {
        return false;
    };
    let (clock, zone) = time.split_at(i);
    let (hms, fraction) = match clock.split_once('.') {
        Some((hms, f)) => (hms, Some(f)),
        None => (clock, None),
    };
    // The offset east of UTC, in minutes.
    let offset = match zone {
        "Z" | "z" => Some(0),
        _ if zone.len() == 6 && zone.starts_with(['+', '-']) => {
            zone[1..].split_once(':').and_then(|(h, m)| {
                let h = two_digits(h).filter(|h| *h < 24)?;
                let m = two_digits(m).filter(|m| *m < 60)?;
                let minutes = i64::from(h * 60 + m);
                Some(if zone.starts_with('-') {
                    -minutes
                } else {
                    minutes
                })
            })
        }
        _ => None,
    };
    let [h, m, sec] = hms.split(':').collect::<Vec<_>>()[..] else {
        return false;
    };
    let (Some(h), Some(m), Some(sec), Some(offset)) = (
        two_digits(h).filter(|h| *h < 24),
        two_digits(m).filter(|m| *m < 60),
        two_digits(sec).filter(|s| *s <= 60),
        offset,
    ) else {
        return false;
    };
    let utc_minute = (i64::from(h * 60 + m) - offset).rem_euclid(24 * 60);
    is_date(date)
        && fraction.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
        && (sec < 60 || utc_minute == 23 * 60 + 59)
}

/// `YYYY-MM-DD`, a day that exists (RFC 3339's full-date).
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(year), Some(month), Some(day)) = (
        s[..4]
            .parse::<u32>()
            .ok()
            .filter(|_| b[..4].iter().all(u8::is_ascii_digit)),
        two_digits(&s[5..7]),
        two_digits(&s[8..]),
    ) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// Two ASCII digits, as a number.
fn two_digits(s: &str) -> Option<u32> {
    (s.len() == 2 && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_flat_forms_are_asked() {
        let ok = json!({"type": "object", "properties": {
            "name": {"type": "string"}, "age": {"type": "integer"},
            "color": {"type": "string", "enum": ["red", "blue"]}, "sure": {"type": "boolean"}}});
        assert!(flat_schema(&ok).is_ok());
        let choices = json!({"type": "object", "properties": {
            "titled": {"type": "string", "oneOf": [{"const": "v1", "title": "One"}]},
            "legacy": {"type": "string", "enum": ["a"], "enumNames": ["A"]},
            "multi": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}},
            "titledMulti": {"type": "array", "items": {"anyOf": [{"const": "p", "title": "P"}]}}}});
        assert!(flat_schema(&choices).is_ok());
        let m = |v: Value| v.as_object().unwrap().clone();
        assert!(
            fits(
                &choices,
                &m(json!({"titled": "v1", "multi": ["x"], "titledMulti": ["p"]}))
            )
            .is_ok()
        );
        assert!(fits(&choices, &m(json!({"titled": "v2"}))).is_err());
        assert!(fits(&choices, &m(json!({"multi": ["z"]}))).is_err());
        assert!(fits(&choices, &m(json!({"titledMulti": ["q"]}))).is_err());
        let arrays = json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "object"}}}});
        assert!(flat_schema(&arrays).is_err());
        let nested = json!({"type": "object", "properties": {"a": {"type": "object"}}});
        let e = flat_schema(&nested).unwrap_err();
        assert!(e.contains("`a` is of type `object`"), "{e}");
        assert!(flat_schema(&json!({"type": "array"})).is_err());
        assert!(flat_schema(&json!({"type": "object"})).is_err());
    }

    /// A client's answer is echoed in the error for the tool and the client, cut to a few
    /// hundred bytes: a megabyte field name or value is not repeated whole.
    #[test]
    fn an_answer_that_does_not_fit_is_echoed_in_a_few_hundred_bytes() {
        let form = json!({"type": "object", "properties": {
            "n": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}}});
        let huge = "x".repeat(1 << 20);
        let m = |v: Value| v.as_object().unwrap().clone();
        for answer in [
            json!({huge.clone(): 1}),
            json!({"n": huge.clone()}),
            json!({"tags": ["a", huge.clone()]}),
        ] {
            let e = fits(&form, &m(answer)).unwrap_err();
            assert!(e.len() < 1_000, "{} bytes", e.len());
        }
    }

    #[test]
    fn answers_are_checked_against_the_form() {
        let schema = json!({"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "maxLength": 5}, "age": {"type": "integer", "minimum": 0},
            "color": {"type": "string", "enum": ["red", "blue"]}}});
        let m = |v: Value| v.as_object().unwrap().clone();
        assert!(
            fits(
                &schema,
                &m(json!({"name": "Ada", "age": 36, "color": "red"}))
            )
            .is_ok()
        );
        for (content, why) in [
            (json!({"age": 1}), "`name` is required"),
            (json!({"name": "Ada", "x": 1}), "`x` is not a field"),
            (json!({"name": 7}), "`name` must be a \"string\""),
            (
                json!({"name": "Ada", "age": 1.5}),
                "`age` must be a \"integer\"",
            ),
            (
                json!({"name": "Ada", "color": "green"}),
                "`color` must be one of",
            ),
            (json!({"name": "Ada", "age": -1}), "below its minimum"),
            (json!({"name": "Adalbert"}), "longer than 5"),
        ] {
            let e = fits(&schema, &m(content)).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
    }

    #[test]
    fn answers_are_checked_for_their_format_and_number_of_choices() {
        let schema = json!({"type": "object", "properties": {
            "email": {"type": "string", "format": "email"},
            "site": {"type": "string", "format": "uri"},
            "day": {"type": "string", "format": "date"},
            "at": {"type": "string", "format": "date-time"},
            "other": {"type": "string", "format": "hostname-ish"},
            "pick": {"type": "array", "minItems": 1, "maxItems": 2,
                     "items": {"type": "string", "enum": ["a", "b", "c"]}}}});
        let m = |v: Value| v.as_object().unwrap().clone();
        for good in [
            json!({"email": "ada@example.org"}),
            json!({"email": "ada@localhost"}),
            json!({"site": "https://example.org/a?b=c"}),
            json!({"site": "urn:isbn:0451450523"}),
            json!({"day": "2024-02-29"}),
            json!({"day": "2026-12-31"}),
            json!({"at": "2026-12-05T21:27:30Z"}),
            json!({"at": "2026-12-05t21:27:30.125+01:00"}),
            json!({"at": "2016-12-31T15:59:60.5-08:00"}),
            json!({"at": "2016-12-31T23:59:60Z"}),
            json!({"email": "\"joe bloggs\"@l33t.com"}),
            json!({"email": "first.last+tag@sub.example.org"}),
            json!({"email": "ada@[127.0.0.1]"}),
            json!({"site": "https://example.org/a%20b?q=%C3%A9#frag"}),
            json!({"other": "anything at all"}),
            json!({"pick": ["a"]}),
            json!({"pick": ["a", "c"]}),
        ] {
            assert!(fits(&schema, &m(good.clone())).is_ok(), "{good}");
        }
        for (bad, why) in [
            (json!({"email": "ada"}), "`email` is not a valid email"),
            (json!({"email": "@example.org"}), "not a valid email"),
            (json!({"email": "ada@"}), "not a valid email"),
            (json!({"email": "a@b@c"}), "not a valid email"),
            (
                json!({"email": "ada lovelace@example.org"}),
                "not a valid email",
            ),
            (json!({"site": "example.org"}), "`site` is not a valid uri"),
            (json!({"site": "1http://x"}), "not a valid uri"),
            (json!({"site": "http://exa mple.org"}), "not a valid uri"),
            (json!({"day": "2023-02-29"}), "`day` is not a valid date"),
            (json!({"day": "2026-13-01"}), "not a valid date"),
            (json!({"day": "2026-1-01"}), "not a valid date"),
            (json!({"day": "+026-01-01"}), "not a valid date"),
            (json!({"day": "2026-12-05T00:00:00Z"}), "not a valid date"),
            (json!({"at": "2026-12-05"}), "`at` is not a valid date-time"),
            (
                json!({"at": "2026-12-05T21:27:30"}),
                "not a valid date-time",
            ),
            (
                json!({"at": "2026-12-05T24:00:00Z"}),
                "not a valid date-time",
            ),
            (
                json!({"at": "2026-12-05T21:27:30.Z"}),
                "not a valid date-time",
            ),
            (
                json!({"at": "2026-12-05T21:27:30+1:00"}),
                "not a valid date-time",
            ),
            (json!({"at": "2026-12-05T21:27Z"}), "not a valid date-time"),
            (json!({"email": ".ada@example.org"}), "not a valid email"),
            (json!({"email": "a..b@example.org"}), "not a valid email"),
            (json!({"email": "ada@-example.org"}), "not a valid email"),
            (json!({"email": "ada@exämple.org"}), "not a valid email"),
            (json!({"site": "http://exämple.org/"}), "not a valid uri"),
            (json!({"site": "http://example.org/<x>"}), "not a valid uri"),
            (json!({"site": "http://example.org/%zz"}), "not a valid uri"),
            (json!({"site": "http://example.org/%4"}), "not a valid uri"),
            (
                json!({"at": "2026-12-05T21:27:30Z01:00"}),
                "not a valid date-time",
            ),
            (
                json!({"at": "2016-12-31T23:59:60-08:00"}),
                "not a valid date-time",
            ),
            (
                json!({"at": "2016-12-31T23:58:60Z"}),
                "not a valid date-time",
            ),
            (
                json!({"at": "2016-12-31T23:59:61Z"}),
                "not a valid date-time",
            ),
            (
                json!({"pick": []}),
                "`pick` has 0 choices, fewer than its minItems 1",
            ),
            (
                json!({"pick": ["a", "b", "c"]}),
                "`pick` has 3 choices, more than its maxItems 2",
            ),
        ] {
            let e = fits(&schema, &m(bad.clone())).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
