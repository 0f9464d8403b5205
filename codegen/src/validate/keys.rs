//! The value of one top-level key of a TOOL.md, checked on its own: the name, version,
//! language, timeout, annotations, sandbox, env, asks and the other one-word settings.

use super::*;

/// `name:`'s value: a string, or a YAML integer read as its digits.
pub(super) fn check_name_value(cx: &mut Ctx<'_>, v: &YNode) -> Option<String> {
    match &v.value {
        // `name: 123` is YAML's integer, and a name providers accept.
        YValue::UInt(_) | YValue::Int(_) if v.raw.is_some() => {
            let text = v.raw.clone().unwrap_or_default();
            cx.warn(
                v,
                format!("`name` is written as a number; read as `{text}`"),
            )
            .hint = Some(format!("quote it: `name: \"{text}\"`"));
            Some(text)
        }
        _ => cx.nonempty_string("name", v),
    }
}

/// `asks:`: the questions the tool cannot do without, each once; an unknown one is an
/// error (a tool listed as needing nothing would run for a client that cannot answer).
pub(super) fn check_asks(cx: &mut Ctx<'_>, v: &YNode) -> Vec<Ask> {
    let mut asks = Vec::new();
    for (word, node) in string_list(cx, "asks", v) {
        match Ask::ALL
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(word.trim()))
        {
            Some((_, ask)) if !asks.contains(ask) => asks.push(*ask),
            Some(_) => {}
            None => {
                cx.err(&node, format!("`{word}` is not a question a client can be asked"))
                    .hint = Some(
                    "expected `elicitation` (forms: ctx.elicit, ctx.confirm), `sampling` (ctx.sample) or `roots` (ctx.roots)".into(),
                );
            }
        }
    }
    asks
}

/// `env:`: the variable names passed to the tool; one that is not a name is dropped.
pub(super) fn check_env(cx: &mut Ctx<'_>, v: &YNode) -> Vec<String> {
    let mut env = Vec::new();
    for (var, node) in string_list(cx, "env", v) {
        if !is_env_name(&var) {
            cx.warn(
                &node,
                format!(
                    "`{var}` is not an environment variable name; it is not passed to the tool"
                ),
            )
            .hint = Some("use letters, digits and `_`, not starting with a digit".into());
        } else {
            env.push(var);
        }
    }
    env
}

/// A mode key (`worker:`, `output:`, `execution:`): one of `modes`' words, in any case;
/// else an error naming what was found, with `expected` as the hint.
pub(super) fn one_of<T: Copy>(
    cx: &mut Ctx<'_>,
    v: &YNode,
    key: &str,
    modes: &[(&str, T)],
    expected: &str,
) -> Option<T> {
    let word = v.as_text().map(|t| t.to_lowercase());
    if let Some((_, mode)) = modes.iter().find(|(w, _)| Some(*w) == word.as_deref()) {
        return Some(*mode);
    }
    let found = word.unwrap_or_else(|| v.kind().to_owned());
    cx.err(v, format!("unknown {key} mode `{found}`")).hint = Some(expected.into());
    None
}

pub(super) fn check_version(cx: &mut Ctx<'_>, v: &YNode) -> Option<u64> {
    match &v.value {
        YValue::UInt(u) => Some(*u),
        YValue::Int(i) if *i >= 0 => Some(*i as u64),
        YValue::Str(s) if crate::parse::version_from_text(s).is_some() => {
            let n = crate::parse::version_from_text(s);
            let n = n.unwrap_or(0);
            let hint = if s.trim().parse::<u64>().is_ok() {
                format!("remove the quotes: `version: {n}`")
            } else {
                format!("write `version: {n}`")
            };
            cx.warn(v, format!("`version` is a quoted string; read as {n}"))
                .hint = Some(hint);
            Some(n)
        }
        YValue::Float(f) if crate::parse::version_from_float(*f).is_some() => {
            let n = crate::parse::version_from_float(*f).unwrap_or(0);
            cx.warn(
                v,
                format!("`version` is written with a fraction; read as {n}"),
            )
            .hint = Some(format!("versions are whole numbers: write `version: {n}`"));
            Some(n)
        }
        _ => {
            let found = v.as_text().unwrap_or_else(|| v.kind().to_owned());
            let hint = match &v.value {
                YValue::Int(_) => "versions only go up: start at 0 or 1".to_owned(),
                YValue::Float(f) => {
                    format!("use a whole number, e.g. `version: {}`", f.ceil().max(1.0))
                }
                YValue::Str(s) if s.trim().parse::<u64>().is_ok() => {
                    format!("remove the quotes: `version: {}`", s.trim())
                }
                _ => "use a whole number such as `version: 1` and bump it on every change".into(),
            };
            cx.err(
                v,
                format!("`version` must be a non-negative integer, found `{found}`"),
            )
            .hint = Some(hint);
            None
        }
    }
}

pub(super) fn check_language(cx: &mut Ctx<'_>, v: &YNode) -> Option<Language> {
    let Some(text) = v.as_text() else {
        let kind = v.kind();
        cx.err(v, format!("`language` must be a string, found {kind}"));
        return None;
    };
    if let Some(l) = Language::from_name(&text) {
        return Some(l);
    }
    // JavaScript is what a typescript tool's `index.js`/`index.mjs` entry already is: the
    // same runner, so the word is read as it is meant.
    if matches!(text.to_lowercase().as_str(), "javascript" | "js") {
        return Some(Language::TypeScript);
    }
    let guess = language_alias(&text).or_else(|| suggest(&text, LANGUAGE_NAMES));
    cx.err(
        v,
        format!("unknown language `{text}`, expected one of typescript, python, bash"),
    )
    .hint = guess.map(|g| format!("did you mean `{g}`?"));
    None
}

pub(super) fn check_timeout(cx: &mut Ctx<'_>, v: &YNode) -> Option<f64> {
    let secs = match &v.value {
        YValue::UInt(u) => *u as f64,
        YValue::Int(i) => *i as f64,
        YValue::Float(f) => *f,
        YValue::Str(s) => match number_from_text(s).and_then(|n| n.as_f64()) {
            Some(n) if n.is_finite() && n > 0.0 => {
                cx.warn(
                    v,
                    format!("`timeout` is a quoted string; read as {n} seconds"),
                )
                .hint = Some(format!("remove the quotes: `timeout: {}`", s.trim()));
                return Some(n);
            }
            _ => f64::NAN,
        },
        _ => f64::NAN,
    };
    if secs.is_finite() && secs > 0.0 {
        Some(secs)
    } else {
        // The source text, quotes and all: the value as written.
        let found = v
            .raw
            .clone()
            .or_else(|| v.as_text())
            .unwrap_or_else(|| v.kind().to_owned());
        cx.err(
            v,
            format!("`timeout` must be a positive number of seconds, found `{found}`"),
        )
        .hint = Some("write e.g. `timeout: 30`".into());
        None
    }
}

pub(super) fn check_annotations(cx: &mut Ctx<'_>, v: &YNode) -> Annotations {
    let mut a = Annotations::default();
    let Some(entries) = map_entries(v) else {
        let kind = v.kind();
        cx.err(v, format!("`annotations` must be a mapping, found {kind}"));
        return a;
    };
    for (k, val) in entries {
        let key = key_name(k).unwrap_or_default();
        let slot = match key.as_str() {
            "read_only" => &mut a.read_only,
            "destructive" => &mut a.destructive,
            "idempotent" => &mut a.idempotent,
            "open_world" => &mut a.open_world,
            _ => {
                // Hosts define more hints than toolbind reads: a near-miss of one it reads
                // is an error, anything else a warning.
                let mut ignored = BTreeMap::new();
                cx.extra_key("annotation", k, val, &key, ANNOTATION_KEYS, &mut ignored);
                continue;
            }
        };
        *slot = cx.boolean(&key, val);
    }
    a
}

/// `sandbox: {network: false}`: a tool narrowing the runtime's sandbox policy.
pub(super) fn check_sandbox(cx: &mut Ctx<'_>, v: &YNode) -> ToolSandbox {
    let mut s = ToolSandbox::default();
    let Some(entries) = map_entries(v) else {
        let kind = v.kind();
        cx.err(v, format!("`sandbox` must be a mapping, found {kind}"))
            .hint = Some("write `sandbox: {network: false}`".into());
        return s;
    };
    for (k, val) in entries {
        let key = key_name(k).unwrap_or_default();
        match key.as_str() {
            "network" => s.network = cx.boolean("network", val),
            _ => cx.unknown_key("sandbox key", k, &key, SANDBOX_KEYS),
        }
    }
    s
}

pub(super) fn string_list(cx: &mut Ctx<'_>, key: &str, v: &YNode) -> Vec<(String, YNode)> {
    match &v.value {
        YValue::Seq(items) => items
            .iter()
            .filter_map(|n| match n.as_text() {
                Some(s) => Some((s, n.clone())),
                None => {
                    let kind = n.kind();
                    cx.err(n, format!("items of `{key}` must be strings, found {kind}"));
                    None
                }
            })
            .collect(),
        YValue::Str(s) => vec![(s.clone(), v.clone())],
        _ => {
            let kind = v.kind();
            cx.err(
                v,
                format!("`{key}` must be a list of strings, found {kind}"),
            );
            Vec::new()
        }
    }
}

pub(super) fn is_env_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The provider dialects that reject a name (`accepts` says which accept it), listed, and
/// how a message refers to them; `None` when every one accepts it.
pub(super) fn rejected_by(accepts: impl Fn(Dialect) -> bool) -> Option<(String, &'static str)> {
    let list: Vec<&str> = Dialect::PROVIDERS
        .into_iter()
        .filter(|d| !accepts(*d))
        .map(Dialect::as_str)
        .collect();
    let those = if list.len() == 1 {
        "that dialect"
    } else {
        "those dialects"
    };
    (!list.is_empty()).then(|| (list.join(", "), those))
}

/// A snake_case name every provider accepts, for hints: ASCII letters, digits and `_`,
/// starting with a letter or `_`, at most 64 characters (`café` -> `caf`, a 70-letter name cut
/// to 64).
pub(super) fn snake_suggestion(s: &str) -> String {
    let snake = ident::field_name_or_spelled(s);
    let mut out: String = snake
        .trim_start_matches("r#")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        out.insert(0, '_');
    }
    out.truncate(64);
    let trimmed = out.trim_end_matches('_');
    if trimmed.is_empty() {
        "my_tool".to_owned()
    } else {
        trimmed.to_owned()
    }
}

pub(super) fn check_tool_name(
    cx: &mut Ctx<'_>,
    name: &str,
    node: &YNode,
    opts: &Options,
) -> (String, String) {
    // A tool's name is a folder name (its state folder, its synced folder, its caches):
    // one that is not one plain path component is refused whatever the other rules say.
    if let Some(why) = crate::model::path_component_problem(name) {
        cx.err(
            node,
            format!(
                "tool name `{}` cannot be used: {why}; a tool name becomes a folder name (its \
                 state folder, its synced folder)",
                name.escape_debug()
            ),
        )
        .hint = Some(format!(
            "name the tool with letters, digits and `_`, e.g. `{}`",
            snake_suggestion(name)
        ));
        return (String::new(), String::new());
    }
    if opts.portable_names && !Dialect::PROVIDERS.iter().any(|d| d.accepts_tool_name(name)) {
        cx.err(node, format!("invalid tool name `{name}`: model providers accept only letters, digits, `_` and `-`, 1 to 64 characters"))
            .hint = Some(format!("use snake_case, e.g. `{}`", snake_suggestion(name)));
        return (String::new(), String::new());
    }
    if let Some((rejecting, those)) = rejected_by(|d| d.accepts_tool_name(name)) {
        cx.warn(
            node,
            format!(
                "tool name `{name}` is rejected by {rejecting}: the tool is left out of {those}"
            ),
        )
        .hint = Some(format!(
            "rename it to `{}` to reach every provider",
            snake_suggestion(name)
        ));
    }
    // The platform's TOOLS.md says "Use snake_case"; providers accept more, and so does
    // toolbind.
    let snake = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    let module = ident::module_name(name);
    if !snake {
        cx.warn(node, format!("tool name `{name}` is not snake_case"))
            .hint = Some(format!(
            "the format asks for snake_case (`{}`); the tool loads and works as it is",
            snake_suggestion(name)
        ));
    } else if ident::field_name(name).as_deref() != Some(module.as_str()) {
        cx.warn(
            node,
            format!("tool name `{name}` would shadow a crate: its Rust module is `{module}`"),
        );
    }
    (module, ident::variant_name_or_spelled(name))
}

/// Whether a guideline mentions the tool by name as a word (`todo`, not `todos`).
pub(super) fn names_tool(guideline: &str, name: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    guideline.match_indices(name).any(|(i, _)| {
        let before = guideline[..i].chars().next_back();
        let after = guideline[i + name.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}
