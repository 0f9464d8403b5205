//! Mapping wire names (tool names, parameter names, enum values) to Rust identifiers.
//!
//! Wire names stay exactly as TOOL.md spells them (serde renames back); only the Rust side is
//! mapped. The mapping is deterministic. Rust identifiers are codegen's problem, never the
//! user's: a name with no letters or digits is spelled out (`+` -> `Plus`), and two names
//! mapping to one identifier get a numbered suffix in declaration order (`mb`, `MB` ->
//! `Mb`, `Mb2`), each with a warning that shows the mapping.

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

/// Crate names a tool module must not shadow: `use std::...` in the user's module would
/// become ambiguous, and generated code names `::toolbind`, `::core` and `::std`.
const RESERVED_MODULES: &[&str] = &["std", "core", "alloc", "proc_macro", "test", "toolbind"];

/// The word for a punctuation character, for names with no letters or digits.
fn spell(c: char) -> String {
    let w = match c {
        '+' => "plus",
        '-' => "minus",
        '*' => "star",
        '/' => "slash",
        '\\' => "backslash",
        '.' => "dot",
        ',' => "comma",
        ':' => "colon",
        ';' => "semicolon",
        '=' => "equals",
        '<' => "lt",
        '>' => "gt",
        '!' => "bang",
        '?' => "question",
        '%' => "percent",
        '&' => "amp",
        '|' => "pipe",
        '^' => "caret",
        '~' => "tilde",
        '@' => "at",
        '#' => "hash",
        '$' => "dollar",
        '(' => "lparen",
        ')' => "rparen",
        '[' => "lbracket",
        ']' => "rbracket",
        '{' => "lbrace",
        '}' => "rbrace",
        '\'' => "quote",
        '"' => "dquote",
        '`' => "backtick",
        '_' => "underscore",
        ' ' => "space",
        c => return format!("u{:04x}", u32::from(c)),
    };
    w.to_owned()
}

/// `name` with every character that is not an identifier character spelled out as a word:
/// `+` -> `plus`, `<=` -> `lt_equals`. For names that have no letters or digits.
pub fn spelled(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_string()
            } else {
                spell(c)
            }
        })
        .collect::<Vec<_>>()
        .join("_")
}

/// [`field_name`], or for a name without letters or digits its [`spelled`] form.
pub fn field_name_or_spelled(name: &str) -> String {
    field_name(name)
        .or_else(|| field_name(&spelled(name)))
        .unwrap_or_else(|| "field".to_owned())
}

/// [`variant_name`], or for a name without letters or digits its [`spelled`] form.
pub fn variant_name_or_spelled(name: &str) -> String {
    variant_name(name)
        .or_else(|| variant_name(&spelled(name)))
        .unwrap_or_else(|| "Value".to_owned())
}

/// The Rust module name of a tool: [`field_name_or_spelled`], with `_tool` appended when it
/// would shadow a crate (`std` -> `std_tool`).
pub fn module_name(name: &str) -> String {
    let m = field_name_or_spelled(name);
    if RESERVED_MODULES.contains(&m.as_str()) {
        format!("{m}_tool")
    } else {
        m
    }
}

/// `base`, or `base` with the first numbered suffix from 2 up that is not in `taken`:
/// `max_results` -> `max_results_2` (snake case), `Mb` -> `Mb2`, `V1` -> `V1_2`.
pub fn unique(base: &str, taken: impl Fn(&str) -> bool) -> String {
    if !taken(base) {
        return base.to_owned();
    }
    // `self_` -> `self_2`, not `self__2`.
    let plain = base.trim_start_matches("r#");
    let plain = match plain.strip_suffix('_') {
        Some(stem) if !stem.is_empty() => stem,
        _ => plain,
    };
    let snake = !plain.starts_with(|c: char| c.is_uppercase());
    (2u32..)
        .map(|n| {
            if snake || plain.ends_with(|c: char| c.is_ascii_digit()) {
                format!("{plain}_{n}")
            } else {
                format!("{plain}{n}")
            }
        })
        .find(|c| !taken(c))
        .unwrap_or_else(|| plain.to_owned())
}

/// Splits a name into lowercase words at separators and camelCase boundaries:
/// `maxResults` -> [max, results], `HTTPServer` -> [http, server], `x-1.5` -> [x, 1, 5].
fn words(name: &str) -> Vec<String> {
    let ascii = ascii_letters(name);
    let chars: Vec<char> = ascii.chars().collect();
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

/// `name` with its letters made ASCII, so that generated identifiers are: two names that
/// rustc would read as one identifier after its NFC normalisation (`é` written as one
/// character or as `e` and a combining accent) cannot become two, and no identifier
/// trips rustc's lints on confusable or uncommon characters under `#![deny(warnings)]`.
/// A letter whose compatibility decomposition holds ASCII letters keeps those (`ü` ->
/// `u`, `ﬁ` -> `fi`, a lone combining accent -> nothing); any other letter becomes a word
/// of its own, `u` and its code point (`検` -> `u691c`). Characters that are not identifier characters stay separators.
fn ascii_letters(name: &str) -> std::borrow::Cow<'_, str> {
    use unicode_normalization::UnicodeNormalization;
    if name.is_ascii() {
        return std::borrow::Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii() || !unicode_ident::is_xid_continue(c) {
            out.push(c);
            continue;
        }
        for d in std::iter::once(c).nfkd() {
            if d.is_ascii_alphanumeric() {
                out.push(d);
            } else if !unicode_normalization::char::is_combining_mark(d) {
                // Its own word: `_` on both sides.
                let _ =
                    std::fmt::Write::write_fmt(&mut out, format_args!("_u{:04x}_", u32::from(d)));
            }
        }
    }
    std::borrow::Cow::Owned(out)
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
        assert_eq!(variant_name("ünïcode").as_deref(), Some("Unicode"));
        // One identifier for one name as rustc reads it: NFC `é` and `e` + U+0301 agree.
        assert_eq!(field_name("caf\u{e9}"), field_name("cafe\u{301}"));
        assert_eq!(field_name("検索").as_deref(), Some("u691c_u7d22"));
        assert_eq!(variant_name("検索").as_deref(), Some("U691cU7d22"));
        // A Cyrillic `а` is not the Latin `a` it looks like.
        assert_eq!(field_name("q\u{430}").as_deref(), Some("q_u0430"));
        assert_eq!(spelled("\u{2603}"), "u2603");
        assert_eq!(variant_name(""), None);
        assert_eq!(type_name("params"), "ParamsEnum");
        // Not XID: separators, so `m²` and `m³` both become `M` (a collision validation
        // reports) instead of identifiers rustc rejects.
        assert_eq!(variant_name("m²").as_deref(), Some("M"));
        assert_eq!(variant_name("²"), None);
        assert_eq!(field_name("a½b").as_deref(), Some("a_b"));
    }

    #[test]
    fn fallbacks() {
        assert_eq!(variant_name_or_spelled("+"), "Plus");
        assert_eq!(variant_name_or_spelled("-"), "Minus");
        assert_eq!(variant_name_or_spelled("*"), "Star");
        assert_eq!(variant_name_or_spelled("/"), "Slash");
        assert_eq!(variant_name_or_spelled("<="), "LtEquals");
        assert_eq!(field_name_or_spelled("--"), "minus_minus");
        assert_eq!(module_name("std"), "std_tool");
        assert_eq!(module_name("toolbind"), "toolbind_tool");
        assert_eq!(module_name("self"), "self_");
        assert_eq!(module_name("web-search"), "web_search");
        let taken = ["Mb", "Mb2"];
        assert_eq!(unique("Mb", |c| taken.contains(&c)), "Mb3");
        assert_eq!(unique("V1", |c| c == "V1"), "V1_2");
        assert_eq!(
            unique("max_results", |c| c == "max_results"),
            "max_results_2"
        );
        assert_eq!(unique("r#type", |c| c == "r#type"), "type_2");
        assert_eq!(unique("free", |_| false), "free");
        assert_eq!(unique("self_", |c| c == "self_"), "self_2");
        assert_eq!(unique("Self_", |c| c == "Self_"), "Self2");
    }
}
