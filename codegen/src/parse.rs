//! Reading one TOOL.md: bytes -> text -> frontmatter YAML (a located tree) + Markdown body.
//!
//! YAML is parsed by serde-saphyr into an untyped tree whose every node keeps its line and
//! column, so a syntax error is reported where it really is and the typed pass
//! ([`crate::validate`]) can point at any key or value.

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

use crate::diagnostic::Diagnostic;
use crate::model::{Body, Pos, Section};

/// A YAML node with its position in the TOOL.md file.
#[derive(Debug, Clone, PartialEq)]
pub struct YNode {
    pub value: YValue,
    pub pos: Pos,
    /// The node's source text, for scalars.
    pub raw: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum YValue {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Seq(Vec<YNode>),
    Map(Vec<(YNode, YNode)>),
}

impl YNode {
    /// A short description of the node's kind for messages: `a string`, `a list`...
    pub fn kind(&self) -> &'static str {
        match self.value {
            YValue::Null => "null",
            YValue::Bool(_) => "a boolean",
            YValue::Int(_) | YValue::UInt(_) => "an integer",
            YValue::Float(_) => "a number",
            YValue::Str(_) => "a string",
            YValue::Seq(_) => "a list",
            YValue::Map(_) => "a mapping",
        }
    }

    /// The node as a string: strings as they are, other scalars by their source text (so
    /// an unquoted `1.10` in a list of enum values stays `1.10`).
    pub fn as_text(&self) -> Option<String> {
        match &self.value {
            YValue::Str(s) => Some(s.clone()),
            YValue::Bool(_) | YValue::Int(_) | YValue::UInt(_) | YValue::Float(_) => {
                self.raw.clone()
            }
            _ => None,
        }
    }

    /// Length of the node's source text in characters (at least 1), for underlines.
    pub fn width(&self) -> usize {
        match (&self.raw, &self.value) {
            (Some(r), _) => r.chars().count().max(1),
            (None, YValue::Str(s)) => s.chars().count().max(1),
            _ => 1,
        }
    }
}

/// One TOOL.md split into its parts.
#[derive(Debug, Clone)]
pub struct Document {
    /// The whole file after BOM removal and CRLF -> LF.
    pub text: Arc<str>,
    /// The frontmatter tree (`None` for an empty frontmatter).
    pub frontmatter: Option<YNode>,
    pub body: Body,
}

/// Decodes a TOOL.md: UTF-8 (a BOM is dropped), CRLF and lone CR become LF.
pub fn decode(file: &Path, bytes: &[u8]) -> Result<Arc<str>, Diagnostic> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            // Counted as every other position is: in the text with CRLF and bare CR as
            // line ends (the valid prefix is UTF-8; the invalid byte follows it).
            let good = String::from_utf8_lossy(&bytes[..e.valid_up_to()]);
            let good = unify_line_ends(&good);
            let line = good.matches('\n').count() + 1;
            let line_start = good.rfind('\n').map_or(0, |i| i + 1);
            let col = good[line_start..].chars().count() + 1;
            return Err(Diagnostic::new(
                file,
                Pos::new(line as u32, col as u32),
                format!(
                    "file is not valid UTF-8 (invalid byte 0x{:02x})",
                    bytes[e.valid_up_to()]
                ),
            )
            .hint("save the file as UTF-8"));
        }
    };
    Ok(Arc::from(unify_line_ends(text)))
}

/// The text with CRLF and bare CR as `\n`: how every line and column is counted.
fn unify_line_ends(text: &str) -> Cow<'_, str> {
    if text.contains('\r') {
        Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// Splits and parses a decoded TOOL.md. Errors here stop the file: nothing typed can be
/// said about a file whose YAML does not parse.
pub fn parse_document(file: &Path, text: Arc<str>) -> Result<Document, Diagnostic> {
    let err = |pos: Pos, msg: String| Diagnostic::new(file, pos, msg).source_text(text.clone());
    if text.trim().is_empty() {
        return Err(err(Pos::new(1, 1), "file is empty".into()).hint(
            "a TOOL.md starts with YAML frontmatter between `---` lines: name, description, inputs",
        ));
    }
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or_default();
    if first.trim_end() != "---" {
        return Err(err(
            Pos::new(1, 1),
            "missing frontmatter: the file must start with a `---` line".into(),
        )
        .span(first.trim_end().chars().count())
        .hint("put the YAML metadata (name, description, inputs) between two `---` lines at the top of the file"));
    }
    let yaml_start = first.len();
    let mut offset = yaml_start;
    let mut close = None;
    let mut line_no = 1u32;
    for line in lines {
        line_no += 1;
        if line.trim_end() == "---" {
            close = Some((offset, offset + line.len(), line_no));
            break;
        }
        offset += line.len();
    }
    let Some((yaml_end, body_start, close_line)) = close else {
        return Err(err(
            Pos::new(1, 1),
            "unterminated frontmatter: no closing `---` line".into(),
        )
        .span(3)
        .hint("add a line `---` after the last frontmatter key"));
    };
    let yaml = &text[yaml_start..yaml_end];
    let frontmatter = parse_yaml(yaml, 1).map_err(|(pos, msg)| {
        if msg.starts_with("duplicate key") {
            let hint = "each key may appear once in a mapping: remove or merge the repeated one";
            return err(pos, msg).hint(hint);
        }
        // The parser's limits (nesting depth, node count with aliases expanded) keep a
        // hostile file from exhausting the stack or memory; say so in words.
        let detail = msg.strip_prefix("yaml syntax error: ").unwrap_or(&msg);
        if detail.starts_with("budget breached") || detail.contains("recursion limit") {
            return err(
                pos,
                format!("frontmatter too large or too deeply nested for a TOOL.md ({detail})"),
            )
            .hint("TOOL.md metadata is a few keys and one level of inputs: remove the deep nesting or the repeated aliases");
        }
        err(pos, msg).hint("fix the YAML at this position; strings with `: ` or `#` need quotes")
    })?;
    let body = parse_body(&text[body_start..], close_line);
    Ok(Document {
        text: text.clone(),
        frontmatter,
        body,
    })
}

/// The deepest nesting a TOOL.md frontmatter may have.
const MAX_YAML_DEPTH: usize = 28;
/// The most YAML nodes a TOOL.md frontmatter may have, aliases counted where used
/// (a tool of 100 inputs has about 1,500).
const MAX_YAML_NODES: usize = 50_000;

/// Parses frontmatter YAML whose first line is file line `line_offset + 1`.
fn parse_yaml(yaml: &str, line_offset: u32) -> Result<Option<YNode>, (Pos, String)> {
    if yaml.trim().is_empty() {
        return Ok(None);
    }
    // YAML 1.2 booleans only: `values: [yes, no]` must stay strings, `y` is not `true`.
    // Limits sized for a TOOL.md (whose deepest real node is an enum value of an input
    // nested as deep as inputs may be, 10 levels: depth 23), far
    // below the parser's general defaults: deserialising recurses once per level, and
    // 60 levels overflowed a 2 MiB thread stack (a test or tokio thread) in a debug
    // build; the node cap bounds alias bombs.
    let options = serde_saphyr::options! {
        strict_booleans: true,
        budget: serde_saphyr::budget! {
            max_depth: MAX_YAML_DEPTH,
            max_nodes: MAX_YAML_NODES,
        },
    };
    match serde_saphyr::from_str_with_options::<Spanned<RawNode>>(yaml, options) {
        Ok(node) => Ok(Some(convert(node, yaml, line_offset))),
        Err(e) => {
            let loc = e.location();
            let (line, col) = loc.map_or((1, 1), |l| (l.line().max(1), l.column().max(1)));
            let msg = yaml_message(&e);
            let pos = Pos::new(line as u32 + line_offset, col as u32);
            match msg.strip_prefix("duplicate mapping key: ") {
                Some(key) => Err((pos, format!("duplicate key `{key}`"))),
                None => Err((pos, format!("yaml syntax error: {msg}"))),
            }
        }
    }
}

/// serde-saphyr's message without its own location prefix or snippet.
fn yaml_message(e: &serde_saphyr::Error) -> String {
    let opts = serde_saphyr::render_options! { snippets: serde_saphyr::SnippetMode::Off };
    let s = e.without_snippet().render_with_options(opts);
    let s = s.lines().next().unwrap_or_default().trim();
    let s = s.strip_prefix("error: ").unwrap_or(s);
    // "line 2 column 4: unclosed bracket '['" -> "unclosed bracket '['"
    let s = match s.find(": ") {
        Some(i) if s.starts_with("line ") => &s[i + 2..],
        _ => s,
    };
    let s = s
        .split(" at line ")
        .next()
        .unwrap_or(s)
        .trim_end_matches(", set DuplicateKeyPolicy in Options if acceptable");
    s.to_owned()
}

#[derive(Debug)]
enum RawNode {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Seq(Vec<Spanned<RawNode>>),
    Map(Vec<(Spanned<RawNode>, Spanned<RawNode>)>),
}

impl<'de> Deserialize<'de> for RawNode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = RawNode;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E>(self) -> Result<RawNode, E> {
        Ok(RawNode::Null)
    }
    fn visit_none<E>(self) -> Result<RawNode, E> {
        Ok(RawNode::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<RawNode, E> {
        Ok(RawNode::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<RawNode, E> {
        Ok(RawNode::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<RawNode, E> {
        Ok(RawNode::UInt(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<RawNode, E> {
        Ok(RawNode::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<RawNode, E> {
        Ok(RawNode::Str(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<RawNode, E> {
        Ok(RawNode::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<RawNode, A::Error> {
        let mut items = Vec::new();
        while let Some(x) = a.next_element()? {
            items.push(x);
        }
        Ok(RawNode::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<RawNode, A::Error> {
        let mut entries = Vec::new();
        while let Some(k) = a.next_key::<Spanned<RawNode>>()? {
            let v = a.next_value()?;
            entries.push((k, v));
        }
        Ok(RawNode::Map(entries))
    }
}

fn convert(node: Spanned<RawNode>, yaml: &str, line_offset: u32) -> YNode {
    let loc = node.referenced;
    let pos = Pos::new(loc.line() as u32 + line_offset, loc.column().max(1) as u32);
    let span = loc.span();
    let raw = match (span.byte_offset(), span.byte_len()) {
        (Some(o), Some(l)) => yaml.get(o as usize..(o + l) as usize).map(str::to_owned),
        _ => None,
    };
    let value = match node.value {
        RawNode::Null => YValue::Null,
        RawNode::Bool(b) => YValue::Bool(b),
        RawNode::Int(i) => YValue::Int(i),
        RawNode::UInt(u) => YValue::UInt(u),
        RawNode::Float(f) => YValue::Float(f),
        RawNode::Str(s) => YValue::Str(s),
        RawNode::Seq(items) => YValue::Seq(
            items
                .into_iter()
                .map(|n| convert(n, yaml, line_offset))
                .collect(),
        ),
        RawNode::Map(entries) => YValue::Map(
            entries
                .into_iter()
                .map(|(k, v)| (convert(k, yaml, line_offset), convert(v, yaml, line_offset)))
                .collect(),
        ),
    };
    let raw = match value {
        YValue::Seq(_) | YValue::Map(_) => None,
        _ => raw,
    };
    YNode { value, pos, raw }
}

/// Reads the Markdown body: its text, first `#` title and `##` sections. `fence_line` is the
/// file line of the closing `---`.
fn parse_body(md: &str, fence_line: u32) -> Body {
    use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};

    let leading_blank = md.len() - md.trim_start_matches('\n').len();
    let markdown = md.trim_matches('\n').trim_end().to_owned();
    let first_line = fence_line + 1 + leading_blank as u32;
    let mut title = None;
    let mut sections = Vec::new();
    let mut current: Option<(HeadingLevel, usize, String)> = None;
    for (event, range) in Parser::new(&markdown).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                current = Some((level, range.start, String::new()));
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, _, s)) = &mut current {
                    s.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, start, text)) = current.take() {
                    let line = first_line + markdown[..start].matches('\n').count() as u32;
                    match level {
                        HeadingLevel::H1 if title.is_none() => title = Some(text.trim().to_owned()),
                        HeadingLevel::H2 => sections.push(Section {
                            title: text.trim().to_owned(),
                            line,
                        }),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    Body {
        markdown,
        title,
        sections,
    }
}

/// Reads only the `version` of a TOOL.md — what an up-to-date sync needs, and fast.
/// `None` when the file has no readable frontmatter or no valid version (a missing version
/// reads as `Some(0)`). For a file the parser accepts, always the version it reads; for
/// one it refuses, a best guess (sync validates a seed fully before installing it).
///
/// The common file (`version: 3` on a top-level line, only one-line keys above it) is
/// read line by line without parsing YAML; anything the line scan cannot be sure of (a
/// quoted or bracketed value spanning lines above it, `version: 0x10`, a quoted key) is
/// read by the YAML parser instead. Fuzzing found the line scan alone answering
/// differently from the parser for such files, which let a sync downgrade a tool.
pub fn read_version(text: &str) -> Option<u64> {
    let text = unify_line_ends(text.strip_prefix('\u{feff}').unwrap_or(text));
    let text = &*text;
    match scan_version(text) {
        Scan::Version(v) => Some(v),
        Scan::NoFrontmatter => None,
        Scan::Unsure => parsed_version(text),
    }
}

enum Scan {
    Version(u64),
    NoFrontmatter,
    Unsure,
}

fn scan_version(text: &str) -> Scan {
    let mut lines = text.split('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return Scan::NoFrontmatter;
    }
    for line in lines {
        let line = line.trim_end();
        if line == "---" {
            return Scan::Version(0);
        }
        if let Some(rest) = line.strip_prefix("version:") {
            let v = match rest.split_once(" #") {
                Some((v, _)) => v,
                None => rest,
            };
            let v = v.trim_start_matches(' ');
            return match v.parse::<u64>() {
                Ok(n) if v.bytes().all(|b| b.is_ascii_digit()) => Scan::Version(n),
                _ => Scan::Unsure,
            };
        }
        if !one_line_entry(line) {
            return Scan::Unsure;
        }
    }
    Scan::NoFrontmatter
}

/// A line that cannot leave a scalar or collection open for the lines below it: blank, a
/// comment, or an entry (`key: value`, `- item`, indented or not) whose value cannot run
/// on. Anything unusual counts as open: the caller then asks the parser.
fn one_line_entry(line: &str) -> bool {
    let t = line.trim_start_matches(' ');
    t.is_empty() || t.starts_with('#') || entry(t)
}

/// `- item`, `key:` or `key: value` with a one-line value; or a plain or quoted value
/// alone.
fn entry(t: &str) -> bool {
    if let Some(item) = t.strip_prefix("- ") {
        return entry(item.trim_start_matches(' '));
    }
    if t == "-" {
        return true;
    }
    if !t.starts_with(['"', '\'', '[', '{'])
        && let Some((key, v)) = t.split_once(':')
    {
        let plain_key = !key.is_empty()
            && key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        return plain_key && (v.is_empty() || v.starts_with(' ')) && one_line_value(v.trim());
    }
    // A flow collection standing alone is a whole mapping or list (`{name: t, version:
    // 3}` as the frontmatter): its keys are not lines, so only the parser can read it.
    !t.starts_with(['[', '{']) && one_line_value(t)
}

/// A value that ends on its line: empty, a block-scalar header (`|`, `>`: the text below
/// must be indented, so it cannot hide a top-level line), a plain value, a quoted value
/// that closes, or a flow collection that closes and holds no quotes or comments.
fn one_line_value(v: &str) -> bool {
    match v.as_bytes().first() {
        None | Some(b'|' | b'>') => true,
        Some(b'"') => closes(&v[1..], '"'),
        Some(b'\'') => closes(&v[1..], '\''),
        Some(b'[' | b'{') => flow_closes(v),
        Some(b'&' | b'*' | b'!' | b'%' | b'@' | b'`') => false,
        Some(_) => !v.contains('\t'),
    }
}

/// Whether a quoted scalar's text closes on this line, with only a comment after it.
fn closes(rest: &str, quote: char) -> bool {
    let mut chars = rest.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' if quote == '"' => {
                chars.next();
            }
            c if c == quote => {
                if quote == '\'' && rest[i + 1..].starts_with('\'') {
                    chars.next();
                    continue;
                }
                let after = rest[i + 1..].trim();
                return after.is_empty() || after.starts_with('#');
            }
            _ => {}
        }
    }
    false
}

/// Whether a flow collection closes on this line with nothing after it. One holding a
/// quote or `#` is not judged here (whether a quote opens a string depends on where it
/// stands): the parser reads it.
fn flow_closes(v: &str) -> bool {
    if v.contains(['"', '\'', '#']) {
        return false;
    }
    let mut depth = 0i32;
    for (i, c) in v.char_indices() {
        match c {
            '[' | '{' => depth += 1,
            ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return v[i + 1..].trim().is_empty();
                }
            }
            _ => {}
        }
    }
    false
}

/// The version as the full parser and validator read it.
fn parsed_version(text: &str) -> Option<u64> {
    let doc = parse_document(Path::new(crate::model::TOOL_FILE), Arc::from(text)).ok()?;
    let Some(root) = doc.frontmatter else {
        return Some(0);
    };
    let YValue::Map(entries) = &root.value else {
        return None;
    };
    let version = entries
        .iter()
        .find(|(k, _)| matches!(&k.value, YValue::Str(s) if s == "version"));
    match version.map(|(_, v)| &v.value) {
        None => Some(0),
        Some(YValue::UInt(u)) => Some(*u),
        Some(YValue::Int(i)) => u64::try_from(*i).ok(),
        Some(YValue::Str(s)) => version_from_text(s),
        Some(YValue::Float(f)) => version_from_float(*f),
        Some(_) => None,
    }
}

/// Reads only the tool `name` of a TOOL.md, as cheaply as [`read_version`]: what sync
/// needs to tell two seed folders claiming one name apart without validating either.
/// `None` when there is no readable frontmatter or no usable name. For a file the
/// validator accepts, always the name it reads.
///
/// A plain `name: web_fetch` line (letters, digits, `_`, `-`, starting with a letter or
/// `_`, not a YAML keyword) with only one-line keys above it is read by a line scan;
/// anything else by the YAML parser.
pub fn read_name(text: &str) -> Option<String> {
    let text = unify_line_ends(text.strip_prefix('\u{feff}').unwrap_or(text));
    let text = &*text;
    match scan_name(text) {
        NameScan::Name(n) => Some(n.to_owned()),
        NameScan::None => None,
        NameScan::Unsure => parsed_name(text),
    }
}

enum NameScan<'a> {
    Name(&'a str),
    None,
    Unsure,
}

fn scan_name(text: &str) -> NameScan<'_> {
    let mut lines = text.split('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return NameScan::None;
    }
    for line in lines {
        let line = line.trim_end();
        if line == "---" {
            return NameScan::None;
        }
        if let Some(rest) = line.strip_prefix("name:") {
            let v = match rest.split_once(" #") {
                Some((v, _)) => v,
                None => rest,
            };
            let v = v.trim_matches(' ');
            let plain = v.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
            let keyword = matches!(
                v.to_ascii_lowercase().as_str(),
                "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n"
            );
            return if plain && !keyword && rest.starts_with(' ') {
                NameScan::Name(v)
            } else {
                NameScan::Unsure
            };
        }
        if !one_line_entry(line) {
            return NameScan::Unsure;
        }
    }
    NameScan::None
}

/// The name as the parser and validator read it: a non-empty string (trimmed at the end),
/// or a number as written.
fn parsed_name(text: &str) -> Option<String> {
    let doc = parse_document(Path::new(crate::model::TOOL_FILE), Arc::from(text)).ok()?;
    let root = doc.frontmatter?;
    let YValue::Map(entries) = &root.value else {
        return None;
    };
    let (_, v) = entries
        .iter()
        .find(|(k, _)| matches!(&k.value, YValue::Str(s) if s == "name"))?;
    match &v.value {
        YValue::Str(s) if !s.trim().is_empty() => Some(s.trim_end().to_owned()),
        YValue::UInt(_) | YValue::Int(_) => v.raw.clone(),
        _ => None,
    }
}

/// A version written as a string (`version: "2"`): its digits, surrounding spaces
/// ignored. The validator reads it so (with a warning) and sync's fast read agrees.
pub(crate) fn version_from_text(s: &str) -> Option<u64> {
    let t = s.trim();
    // `"2.0"` is the whole number 2, as `"2"` is: lossless. `"2.1"` is not a version.
    let t = match t.split_once('.') {
        Some((whole, zeros)) if !zeros.is_empty() && zeros.bytes().all(|b| b == b'0') => whole,
        _ => t,
    };
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

/// A YAML float that is a whole, non-negative version (`version: 2.0`).
pub(crate) fn version_from_float(f: f64) -> Option<u64> {
    (f.fract() == 0.0 && (0.0..9.0e15).contains(&f)).then_some(f as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(s: &str) -> Result<Document, Diagnostic> {
        let p = Path::new("t/TOOL.md");
        parse_document(p, decode(p, s.as_bytes())?)
    }

    #[test]
    fn positions_are_file_lines() {
        let d = doc("---\nname: x\ninputs:\n  a:\n    type: string\n---\n# X\n\n## Usage\nhi\n")
            .unwrap();
        let YValue::Map(m) = &d.frontmatter.unwrap().value else {
            panic!()
        };
        assert_eq!(m[0].0.pos, Pos::new(2, 1));
        assert_eq!(m[0].1.pos, Pos::new(2, 7));
        assert_eq!(m[1].0.pos, Pos::new(3, 1));
        assert_eq!(d.body.title.as_deref(), Some("X"));
        assert_eq!(d.body.sections[0].title, "Usage");
        assert_eq!(d.body.sections[0].line, 9);
    }

    #[test]
    fn syntax_error_at_its_real_line() {
        let e = doc("---\nname: x\ninputs: [a,\n---\n").unwrap_err();
        assert_eq!(e.pos.line, 3, "{e}");
        assert!(e.message.starts_with("yaml syntax error: "), "{e}");
        let e = doc("---\nname: x\nname: y\n---\n").unwrap_err();
        assert_eq!(e.pos, Pos::new(3, 1), "{e}");
        assert!(e.message.contains("duplicate"), "{e}");
    }

    #[test]
    fn fences() {
        assert!(doc("").unwrap_err().message.contains("empty"));
        assert!(
            doc("name: x\n")
                .unwrap_err()
                .message
                .contains("missing frontmatter")
        );
        assert!(
            doc("---\nname: x\n")
                .unwrap_err()
                .message
                .contains("unterminated")
        );
        let d = doc("\u{feff}---\r\nname: x\r\n---\r\n# T\r\n").unwrap();
        assert_eq!(d.body.title.as_deref(), Some("T"));
        let e = decode(Path::new("t"), b"---\nname: \xff\n").unwrap_err();
        assert_eq!(e.pos, Pos::new(2, 7));
    }

    #[test]
    fn yaml_12_booleans_and_raw_scalars() {
        let d = doc("---\nvalues: [yes, no, 1.10, y]\n---\n").unwrap();
        let YValue::Map(m) = &d.frontmatter.unwrap().value else {
            panic!()
        };
        let YValue::Seq(items) = &m[0].1.value else {
            panic!()
        };
        let texts: Vec<_> = items.iter().map(|n| n.as_text().unwrap()).collect();
        assert_eq!(texts, ["yes", "no", "1.10", "y"]);
    }

    #[test]
    fn version_fast_path() {
        assert_eq!(read_version("---\nname: x\nversion: 3\n---\n"), Some(3));
        assert_eq!(read_version("---\nname: x\n---\n"), Some(0));
        assert_eq!(read_version("---\nversion: -1\n---\n"), None);
        assert_eq!(read_version("nope"), None);
    }

    #[test]
    fn version_fast_path_defers_to_the_parser_when_unsure() {
        let v = |front: &str| read_version(&format!("---\nname: x\n{front}\n---\n"));
        // Spellings the line scan cannot read, as the parser reads them.
        assert_eq!(v("version: 0x10"), Some(16));
        assert_eq!(v("version: +3"), Some(3));
        assert_eq!(v("\"version\": 3"), Some(3));
        assert_eq!(v("version: !!int 5"), Some(5));
        assert_eq!(v("version: 4 # bumped"), Some(4));
        // Quoted digits are read as the number (the validator warns).
        assert_eq!(v("version: \"3\""), Some(3));
        assert_eq!(v("version: \"3a\""), None);
        // A quoted value spanning lines hides a `version:` line inside it.
        assert_eq!(
            v("description: \"one\nversion: 9\n two\"\nversion: 2"),
            Some(2)
        );
        assert_eq!(v("description: [a,\nversion: 9]\nversion: 2"), Some(2));
        // Found in review: a quote inside a flow item is text, one at an item's start
        // opens a string that runs on.
        let tricky = "prompt_guidelines: [use x'b, 'a]\nversion: 9\nuse x']\nversion: 2";
        assert_eq!(v(tricky), Some(2));
        assert_eq!(
            v("env:\n  - k: \"open\nversion: 9\n  \"\nversion: 2"),
            Some(2)
        );
        // The common file never reaches the parser: one-line values above the version.
        assert!(matches!(
            scan_version(
                "---\nname: x\ndescription: \"a \\\" b\"\nlabel: 'it''s'\nenv: [A, B]\nversion: 7\n---\n"
            ),
            Scan::Version(7)
        ));
    }

    #[test]
    fn name_fast_path_agrees_with_the_validator() {
        let opts = crate::validate::Options::default()
            .require_entry(false)
            .portable_names(false);
        for front in [
            "name: web_fetch",
            "name: web_fetch # the fetcher",
            "name: \"web_fetch\"",
            "name: 'it''s'",
            "name: 42",
            "name: web-fetch   ",
            "\"name\": quoted_key",
            "label: \"a\nname: fake\n b\"\nname: real",
            "prompt_snippet: 'a\nname: fake\n b'\nname: real",
            "name: >\n  folded",
        ] {
            let text = format!("---\n{front}\ndescription: d\n---\n");
            let spec = crate::load::parse_tool_md(
                Path::new("t/TOOL.md"),
                Path::new("t"),
                text.as_bytes(),
                &opts,
            )
            .unwrap_or_else(|e| panic!("{front:?}: {e:#?}"));
            assert_eq!(
                read_name(&text).as_deref(),
                Some(spec.name.as_str()),
                "{front:?}"
            );
        }
        // No usable name: what the validator refuses.
        for front in [
            "name: true",
            "name: null",
            "name: ''",
            "name: [a]",
            "label: x",
        ] {
            let text = format!("---\n{front}\ndescription: d\n---\n");
            assert_eq!(read_name(&text), None, "{front:?}");
        }
        assert_eq!(read_name("no frontmatter"), None);
        // The common file never reaches the parser.
        assert!(matches!(
            scan_name("---\ndescription: \"a b\"\nname: x_1\n---\n"),
            NameScan::Name("x_1")
        ));
    }
}
