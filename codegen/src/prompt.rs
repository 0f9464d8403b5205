//! System-prompt text and Markdown docs.
//!
//! The system prompt follows pi's layout: an "Available tools" section with one line per
//! tool (its `prompt_snippet`, else its description), a "Guidelines" section when any tool
//! declares `prompt_guidelines`, then each tool's TOOL.md body — the documentation the
//! platform's TOOLS.md says the agent sees once the tool is loaded. Sensitive values never
//! reach any of it: a sensitive input cannot have a default, and only descriptions are
//! printed.

use std::fmt::Write;

use crate::model::{Input, InputType, OutputField, OutputType, ToolSpec};

/// The tool's line of the "Available tools" section: `- name: snippet`.
pub fn tool_line(tool: &ToolSpec) -> String {
    format!("- {}: {}", tool.name, one_line(tool.snippet()))
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The "Available tools" section.
pub fn available_tools(tools: &[ToolSpec]) -> String {
    let mut s = String::from("## Available tools\n\n");
    if tools.is_empty() {
        s.push_str("(none)\n");
    }
    for t in tools {
        s.push_str(&tool_line(t));
        s.push('\n');
    }
    s
}

/// The "Guidelines" section, when any tool declares guidelines.
pub fn guidelines(tools: &[ToolSpec]) -> Option<String> {
    let lines: Vec<&String> = tools.iter().flat_map(|t| &t.prompt_guidelines).collect();
    if lines.is_empty() {
        return None;
    }
    let mut s = String::from("## Guidelines\n\n");
    for g in lines {
        let _ = writeln!(s, "- {}", one_line(g));
    }
    Some(s)
}

/// The documentation of one tool for the system prompt: its body with headings moved two
/// levels down so they nest under the prompt's own sections.
pub fn tool_docs(tool: &ToolSpec) -> String {
    let mut s = format!("### {} (`{}`)\n\n", tool.label, tool.name);
    let body = strip_title(&tool.body.markdown);
    if body.is_empty() {
        let _ = writeln!(s, "{}", tool.description.trim());
    } else {
        s.push_str(&demote_headings(body, 2));
        s.push('\n');
    }
    s
}

/// The body without its leading `# Title` line: the tool's own heading replaces it.
fn strip_title(md: &str) -> &str {
    match md.strip_prefix("# ") {
        Some(rest) => rest
            .split_once('\n')
            .map_or("", |(_, r)| r)
            .trim_start_matches('\n'),
        None => md,
    }
}

/// The complete system-prompt text for a set of tools.
pub fn system_prompt(tools: &[ToolSpec]) -> String {
    let mut s = available_tools(tools);
    if let Some(g) = guidelines(tools) {
        s.push('\n');
        s.push_str(&g);
    }
    if !tools.is_empty() {
        s.push_str("\n## Tool documentation\n");
        for t in tools {
            s.push('\n');
            s.push_str(&tool_docs(t));
        }
    }
    s
}

fn cell(s: &str) -> String {
    one_line(s).replace('|', "\\|")
}

/// A Markdown tools table, like the "Existing Tools" table of the platform's TOOLS.md.
pub fn tools_table(tools: &[ToolSpec]) -> String {
    let mut s = String::from("| Tool | Description |\n| --- | --- |\n");
    for t in tools {
        let _ = writeln!(s, "| `{}` | {} |", t.name, cell(&t.description));
    }
    s
}

/// Human docs for a tools folder: the table, then per tool its facts, an inputs table and
/// its body ([`tool_reference`] at level 2).
pub fn docs(tools: &[ToolSpec]) -> String {
    let mut s = String::from("# Tools\n\n");
    s.push_str(&tools_table(tools));
    for t in tools {
        s.push('\n');
        s.push_str(&tool_reference(t, 2));
    }
    s
}

/// One tool's reference page, as `toolbind docs` prints it for each tool: a heading of
/// `level` (`## Label (`name`)` at 2), the description, its facts (version, language,
/// timeout, environment), an inputs table and the TOOL.md body with its headings moved
/// `level` levels down. `toolbind serve` offers it at level 1 as the tool's MCP resource.
pub fn tool_reference(t: &ToolSpec, level: usize) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "{} {} (`{}`)\n\n{}\n\n- Version: {}\n- Language: {}\n",
        "#".repeat(level.clamp(1, 6)),
        t.label,
        t.name,
        t.description.trim(),
        t.version,
        t.language
    );
    if let Some(secs) = t.timeout_secs {
        let _ = writeln!(s, "- Timeout: {secs} s");
    }
    if !t.env.is_empty() {
        let _ = writeln!(s, "- Environment: {}", t.env.join(", "));
    }
    if !t.inputs.is_empty() {
        s.push_str("\n| Input | Type | Required | Default | Description |\n| --- | --- | --- | --- | --- |\n");
        input_rows(&mut s, &t.inputs, "");
    }
    if !t.outputs.is_empty() {
        s.push_str("\n| Output | Type | Required | Description |\n| --- | --- | --- | --- |\n");
        output_rows(&mut s, &t.outputs, "");
    }
    let body = strip_title(&t.body.markdown);
    if !body.is_empty() {
        s.push('\n');
        s.push_str(&demote_headings(body, level));
        s.push('\n');
    }
    s
}

/// One docs table row per input, nested fields by their path (`edits[].old_text`): a
/// field's "Required" is within the object holding it.
fn input_rows(s: &mut String, inputs: &[Input], parent: &str) {
    for i in inputs {
        let path = if parent.is_empty() {
            i.name.clone()
        } else {
            format!("{parent}.{}", i.name)
        };
        let default = match (i.public_default(), &i.default) {
            (Some(d), _) => format!("`{d}`"),
            (None, Some(_)) => "(hidden)".to_owned(),
            (None, None) => String::new(),
        };
        let mut desc = cell(&i.description);
        if let Some(c) = i.constraint_text() {
            let _ = write!(desc, " ({})", cell(&c));
        }
        if i.sensitive {
            desc.push_str(" (sensitive)");
        }
        let _ = writeln!(
            s,
            "| `{path}` | {} | {} | {} | {} |",
            cell(&input_type_text(i)),
            if i.required() { "yes" } else { "no" },
            cell(&default),
            desc.trim()
        );
        let mut inner = i;
        let mut nested = path;
        while let (InputType::Array | InputType::Map, Some(items)) =
            (inner.ty, inner.items.as_deref())
        {
            nested.push_str("[]");
            inner = items;
        }
        if inner.ty == InputType::Object && !inner.properties.is_empty() {
            input_rows(s, &inner.properties, &nested);
        }
    }
}

/// `string`, `enum: a, b`, `array of object`, `map of integer`...
fn input_type_text(i: &Input) -> String {
    match (i.ty, i.items.as_deref()) {
        (InputType::Enum, _) => {
            let v: Vec<&str> = i.values.iter().map(|v| v.wire.as_str()).collect();
            format!("enum: {}", v.join(", "))
        }
        (InputType::Array, Some(items)) => format!("array of {}", input_type_text(items)),
        (InputType::Map, Some(items)) => format!("map of {}", input_type_text(items)),
        (InputType::Const, _) => match &i.constant {
            Some(c) => format!("const {c}"),
            None => "const".to_owned(),
        },
        (other, _) => other.to_string(),
    }
}

/// One docs table row per declared output, nested fields by their path
/// (`messages[].subject`).
fn output_rows(s: &mut String, fields: &[OutputField], parent: &str) {
    for f in fields {
        let path = if parent.is_empty() {
            f.name.clone()
        } else {
            format!("{parent}.{}", f.name)
        };
        let _ = writeln!(
            s,
            "| `{path}` | {} | {} | {} |",
            cell(&output_type_text(&f.ty)),
            if f.optional { "no" } else { "yes" },
            cell(&f.description)
        );
        let mut ty = &f.ty;
        let mut nested = path;
        while let OutputType::Array { items } = ty {
            nested.push_str("[]");
            ty = &items.ty;
        }
        if let OutputType::Object { properties, .. } = ty {
            output_rows(s, properties, &nested);
        }
    }
}

/// `string`, `enum: a, b`, `array of object`...
fn output_type_text(ty: &OutputType) -> String {
    match ty {
        OutputType::Enum { values, .. } => {
            let v: Vec<&str> = values.iter().map(|v| v.wire.as_str()).collect();
            format!("enum: {}", v.join(", "))
        }
        OutputType::Array { items } => format!("array of {}", output_type_text(&items.ty)),
        other => other.to_string(),
    }
}

/// Moves every ATX heading `by` levels down (capped at `######`), leaving code blocks alone.
pub fn demote_headings(md: &str, by: usize) -> String {
    use pulldown_cmark::{Event, Parser, Tag};

    let mut starts: Vec<usize> = Parser::new(md)
        .into_offset_iter()
        .filter_map(|(e, r)| match e {
            Event::Start(Tag::Heading { .. }) if md[r.start..].starts_with('#') => Some(r.start),
            _ => None,
        })
        .collect();
    starts.reverse();
    let mut out = md.to_owned();
    for at in starts {
        let level = md[at..].chars().take_while(|c| *c == '#').count();
        let add = by.min(6usize.saturating_sub(level));
        out.insert_str(at, &"#".repeat(add));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demotes_headings_not_code() {
        let md = "# T\n\ntext\n\n## U\n\n```sh\n# comment\n```\n###### deep\n";
        assert_eq!(
            demote_headings(md, 2),
            "### T\n\ntext\n\n#### U\n\n```sh\n# comment\n```\n###### deep\n"
        );
    }
}
