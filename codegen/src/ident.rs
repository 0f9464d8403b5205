//! Mapping wire names (tool names, parameter names, enum values) to Rust identifiers.
//!
//! Wire names stay exactly as TOOL.md spells them (serde renames back); only the Rust side is
//! mapped. The mapping is deterministic; two names mapping to one identifier is a validation
//! error, never a silent rename.

/// Strict and reserved keywords of Rust 2024 (plus `gen`, reserved in edition 2024).
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// Keywords that cannot be raw identifiers (`r#self` is an error).
const NOT_RAW: &[&str] = &["self", "Self", "super", "crate", "_"];

/// Type names the generated module already uses; an enum input mapping to one gets a suffix.
const RESERVED_TYPES: &[&str] = &["Params", "Tool", "Secret", "Option", "String", "Result"];

/// Splits a name into lowercase words at separators and camelCase boundaries:
/// `maxResults` -> [max, results], `HTTPServer` -> [http, server], `x-1.5` -> [x, 1, 5].
fn words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut words = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        // Rust identifiers are Unicode XID: `²` is alphanumeric but not XID, so it separates.
        if c == '_' || !unicode_ident::is_xid_continue(c) {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if c.is_uppercase() && !cur.is_empty() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if prev.is_lowercase() || prev.is_numeric() || (prev.is_uppercase() && next_lower) {
                words.push(std::mem::take(&mut cur));
            }
        }
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// Whether `s` is a valid Rust identifier (before keyword escaping).
fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || unicode_ident::is_xid_start(c))
        && chars.all(unicode_ident::is_xid_continue)
}

/// A `snake_case` Rust identifier for a field or module: `maxResults` -> `max_results`,
/// `type` -> `r#type`, `2fa` -> `_2fa`, `self` -> `self_`. `None` when the name has no
/// alphanumeric character at all.
pub fn field_name(name: &str) -> Option<String> {
    let w = words(name);
    if w.is_empty() {
        return None;
    }
    let mut s = w.join("_");
    if !s.starts_with(unicode_ident::is_xid_start) {
        s.insert(0, '_');
    }
    is_ident(&s).then(|| escape_keyword(s))
}

/// An `UpperCamelCase` Rust identifier for a type or variant: `single` -> `Single`,
/// `1080p` -> `V1080p`, `x-1.5` -> `X15`... words keep a `_` between digits so `1.5` and `15`
/// differ: `1.5` -> `V1_5`. `None` when the name has no alphanumeric character.
pub fn variant_name(name: &str) -> Option<String> {
    let w = words(name);
    if w.is_empty() {
        return None;
    }
    let mut s = String::new();
    for (i, word) in w.iter().enumerate() {
        let prev_digit = s.ends_with(|c: char| c.is_ascii_digit());
        if i > 0 && prev_digit && word.starts_with(|c: char| c.is_ascii_digit()) {
            s.push('_');
        }
        let mut cs = word.chars();
        if let Some(first) = cs.next() {
            s.extend(first.to_uppercase());
            s.push_str(cs.as_str());
        }
    }
    if !s.starts_with(unicode_ident::is_xid_start) {
        s.insert(0, 'V');
    }
    if !is_ident(&s) {
        return None;
    }
    Some(if s == "Self" { "Self_".to_owned() } else { s })
}

/// The Rust type name of an enum input or a tool (`mode` -> `Mode`; `params` -> `ParamsEnum`
/// because `Params` is taken by the generated struct).
pub fn type_name(name: &str) -> String {
    let s = variant_name(name).unwrap_or_else(|| "Value".to_owned());
    if RESERVED_TYPES.contains(&s.as_str()) {
        format!("{s}Enum")
    } else {
        s
    }
}

fn escape_keyword(s: String) -> String {
    if NOT_RAW.contains(&s.as_str()) {
        format!("{s}_")
    } else if KEYWORDS.contains(&s.as_str()) {
        format!("r#{s}")
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields() {
        assert_eq!(field_name("maxResults").as_deref(), Some("max_results"));
        assert_eq!(field_name("HTTPServer").as_deref(), Some("http_server"));
        assert_eq!(field_name("output_path").as_deref(), Some("output_path"));
        assert_eq!(field_name("type").as_deref(), Some("r#type"));
        assert_eq!(field_name("self").as_deref(), Some("self_"));
        assert_eq!(field_name("2fa").as_deref(), Some("_2fa"));
        assert_eq!(field_name("x-api.key").as_deref(), Some("x_api_key"));
        assert_eq!(field_name("gen").as_deref(), Some("r#gen"));
        assert_eq!(field_name("--"), None);
    }

    #[test]
    fn variants() {
        assert_eq!(variant_name("single").as_deref(), Some("Single"));
        assert_eq!(variant_name("1080p").as_deref(), Some("V1080p"));
        assert_eq!(variant_name("x-1.5").as_deref(), Some("X1_5"));
        assert_eq!(variant_name("gpt-4o-mini").as_deref(), Some("Gpt4oMini"));
        assert_eq!(variant_name("Self").as_deref(), Some("Self_"));
        assert_eq!(variant_name("high-quality").as_deref(), Some("HighQuality"));
        assert_eq!(variant_name("192k").as_deref(), Some("V192k"));
        assert_eq!(variant_name("ünïcode").as_deref(), Some("Ünïcode"));
        assert_eq!(variant_name(""), None);
        assert_eq!(type_name("params"), "ParamsEnum");
        // Not XID: separators, so `m²` and `m³` both become `M` (a collision validation
        // reports) instead of identifiers rustc rejects.
        assert_eq!(variant_name("m²").as_deref(), Some("M"));
        assert_eq!(variant_name("²"), None);
        assert_eq!(field_name("a½b").as_deref(), Some("a_b"));
    }
}
