//! Text from outside (a TOOL.md, an MCP server's `tools/list`, a snapshot) made safe to put
//! in a `///` doc comment of generated code.
//!
//! rustdoc reads a doc comment as Markdown: a fenced or indented code block in it is a
//! doctest that `cargo test` compiles and runs on the developer's machine, raw HTML goes
//! live in `cargo doc`'s pages, and rustc refuses bidirectional-override characters in a
//! comment. So descriptions are escaped here, not blanked out: they render as the words
//! their author wrote (inline code spans and emphasis included), but no line can open a
//! block (code, quote, list, heading, HTML), no `<` is a tag, no `[` a link, and no
//! control or invisible character reaches the source.

use std::fmt::Write;

/// Whether `c` is shown as `U+XXXX` instead of written: control characters, and the
/// invisible and direction-changing format characters (rustc's
/// `text_direction_codepoint_in_comment` denies U+202A–U+202E and U+2066–U+2069).
fn hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\r')
        || matches!(
            c,
            '\u{00AD}'
                | '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
        )
}

/// `s` with every [`hidden`] character spelled `U+XXXX` and tabs made spaces; `None` when
/// there is nothing to change.
fn visible(s: &str) -> Option<String> {
    if !s.chars().any(hidden) {
        return None;
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\t' => out.push(' '),
            c if hidden(c) => {
                let _ = write!(out, "U+{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Some(out)
}

/// The characters that open a block when they start a line (a code fence, a quote, a
/// list item, a heading, a setext underline, a table, a thematic break), each replaced by
/// its numeric character reference when it does: a reference is text to the block
/// parser, and renders as the character. Returns where the opener starts, how many bytes
/// it spans (a fence's whole run of backticks or tildes) and the reference for each.
fn block_opener(line: &str) -> Option<(usize, usize, &'static str)> {
    let first = line.chars().next()?;
    if first == '`' || first == '~' {
        let run = line.bytes().take_while(|&b| b == first as u8).count();
        return Some((0, run, if first == '`' { "&#96;" } else { "&#126;" }));
    }
    let entity = match first {
        '>' => "&#62;",
        '-' => "&#45;",
        '+' => "&#43;",
        '*' => "&#42;",
        '#' => "&#35;",
        '=' => "&#61;",
        '|' => "&#124;",
        '_' => "&#95;",
        ':' => "&#58;",
        '0'..='9' => {
            // An ordered list item: up to nine digits, then `.` or `)`.
            let digits = line.bytes().take_while(u8::is_ascii_digit).count();
            return match line.as_bytes().get(digits) {
                Some(b'.') if digits <= 9 => Some((digits, 1, "&#46;")),
                Some(b')') if digits <= 9 => Some((digits, 1, "&#41;")),
                _ => None,
            };
        }
        _ => return None,
    };
    Some((0, 1, entity))
}

/// The extensions rustdoc turns on in pulldown-cmark (tables, footnotes, strikethrough,
/// task lists, smart punctuation): what a doc comment is parsed with.
fn rustdoc_options() -> pulldown_cmark::Options {
    use pulldown_cmark::Options;
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_SMART_PUNCTUATION
}

/// Whether rustdoc would find in `doc` anything but paragraphs of text, emphasis and
/// inline code: a code block (a doctest), HTML, a link or image, a list, a quote or a
/// heading.
fn live(doc: &str) -> bool {
    use pulldown_cmark::{Event, Parser, Tag};
    Parser::new_ext(doc, rustdoc_options()).any(|e| match e {
        Event::Start(t) => matches!(
            t,
            Tag::CodeBlock(_)
                | Tag::HtmlBlock
                | Tag::Link { .. }
                | Tag::Image { .. }
                | Tag::List(_)
                | Tag::BlockQuote(_)
                | Tag::Heading { .. }
                | Tag::FootnoteDefinition(_)
                | Tag::MetadataBlock(_)
        ),
        Event::Html(_)
        | Event::InlineHtml(_)
        | Event::FootnoteReference(_)
        | Event::InlineMath(_)
        | Event::DisplayMath(_) => true,
        _ => false,
    })
}

/// Untrusted text as doc-comment Markdown that renders as the same words and holds no
/// block but paragraphs, no raw HTML, no link, and no hidden character. Lines keep their
/// breaks; their indentation goes (four spaces would make a code block).
///
/// Inline code spans are kept; the result is parsed once more as rustdoc parses it, and
/// text for which escaping around code spans is not enough (it has been found: a `\`
/// before a backtick re-pairs the spans) is escaped whole instead, every punctuation
/// character, where nothing can be live.
pub(crate) fn text(s: &str) -> String {
    if is_plain(s) {
        return s.to_owned();
    }
    let s = s.replace("\r\n", "\n");
    let s = visible(&s).unwrap_or(s);
    let kept = keep_code(&s);
    // Without a backtick there is no code span: every `<`, `[` and `\\` is escaped and
    // every line start made inert, so there is nothing to check (a parse per description
    // would be most of what emitting costs).
    if !s.contains('`') || !live(&kept) {
        return kept;
    }
    strict(&s)
}

/// Whether `s` is text that [`text`] would leave as it is (most descriptions): printable
/// ASCII with none of the characters it escapes, and no line that starts with white space
/// or a block opener.
fn is_plain(s: &str) -> bool {
    s.bytes().all(|b| {
        (b == b'\n' || (0x20..0x7f).contains(&b))
            && !matches!(b, b'\\' | b'<' | b'[' | b']' | b'`' | b'~')
    }) && s
        .split('\n')
        .all(|l| l == l.trim() && block_opener(l).is_none())
}

/// [`text`] with every ASCII punctuation character backslash-escaped: no construct of
/// Markdown can start (a backslash-escaped character is always a literal).
fn strict(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 2);
    for (i, line) in s.split(['\n', '\r']).enumerate() {
        if i > 0 {
            out.push('\n');
        }
        for c in line.trim().chars() {
            if c.is_ascii_punctuation() {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out
}

/// [`text`]'s readable form: block openers at line starts made character references,
/// `\`, `<`, `[` and `]` escaped outside inline code spans.
fn keep_code(s: &str) -> String {
    let mut lines = String::with_capacity(s.len() + 16);
    for (i, line) in s.split(['\n', '\r']).enumerate() {
        if i > 0 {
            lines.push('\n');
        }
        let line = line.trim();
        match block_opener(line) {
            Some((at, len, entity)) => {
                lines.push_str(&line[..at]);
                for _ in 0..len {
                    lines.push_str(entity);
                }
                lines.push_str(&line[at + len..]);
            }
            None => lines.push_str(line),
        }
    }
    inline(&lines)
}

/// `s` with `\`, `<`, `[` and `]` escaped outside its code spans (inside one they are
/// shown as written, and are harmless).
fn inline(s: &str) -> String {
    if !s.contains(['\\', '<', '[', ']']) {
        return s.to_owned();
    }
    let spans: Vec<std::ops::Range<usize>> = if s.contains('`') {
        pulldown_cmark::Parser::new_ext(s, rustdoc_options())
            .into_offset_iter()
            .filter(|(e, _)| matches!(e, pulldown_cmark::Event::Code(_)))
            .map(|(_, r)| r)
            .collect()
    } else {
        Vec::new()
    };
    let mut out = String::with_capacity(s.len() + 16);
    let mut spans = spans.iter().peekable();
    for (i, c) in s.char_indices() {
        while spans.peek().is_some_and(|r| r.end <= i) {
            spans.next();
        }
        if spans.peek().is_some_and(|r| r.contains(&i)) {
            out.push(c);
            continue;
        }
        match c {
            '\\' => out.push_str("\\\\"),
            '<' => out.push_str("&lt;"),
            '[' => out.push_str("\\["),
            ']' => out.push_str("\\]"),
            c => out.push(c),
        }
    }
    out
}

/// Untrusted text as one inline code span (a name, an enum value, a default): one line,
/// hidden characters and line breaks spelled out (`\n`, `U+202E`), fenced by more
/// backticks than it holds in a row.
pub(crate) fn code(s: &str) -> String {
    if !s.is_empty() && s.bytes().all(|b| (0x21..0x7f).contains(&b) && b != b'`') {
        return format!("`{s}`");
    }
    let mut body = String::with_capacity(s.len() + 2);
    for c in s.chars() {
        match c {
            '\n' => body.push_str("\\n"),
            '\r' => body.push_str("\\r"),
            '\t' => body.push_str("\\t"),
            c if hidden(c) => {
                let _ = write!(body, "U+{:04X}", u32::from(c));
            }
            c => body.push(c),
        }
    }
    if body.trim().is_empty() {
        return format!("\"{body}\"");
    }
    let mut run = 0;
    let mut longest = 0;
    for c in body.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    // A span's content that starts or ends with a backtick needs a space between it and
    // the fence (which CommonMark then strips).
    let pad = if body.starts_with('`') || body.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{body}{pad}{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pulldown_cmark::{Event, Parser, Tag};

    /// What rustdoc would find in a doc comment made of these lines: any code block or
    /// HTML, and the rendered text.
    fn blocks(doc: &str) -> (Vec<String>, String) {
        let mut bad = Vec::new();
        let mut text = String::new();
        for e in Parser::new_ext(doc, rustdoc_options()) {
            match e {
                Event::Start(Tag::CodeBlock(k)) => bad.push(format!("code block {k:?}")),
                Event::Start(Tag::HtmlBlock) => bad.push("html block".into()),
                Event::Html(h) | Event::InlineHtml(h) => bad.push(format!("html {h}")),
                Event::Start(Tag::Link { .. }) => bad.push("link".into()),
                Event::Start(Tag::List(_)) => bad.push("list".into()),
                Event::Start(Tag::BlockQuote(_)) => bad.push("quote".into()),
                Event::Start(Tag::Heading { .. }) => bad.push("heading".into()),
                Event::Start(Tag::Image { .. }) => bad.push("image".into()),
                Event::Start(Tag::FootnoteDefinition(_)) | Event::FootnoteReference(_) => {
                    bad.push("footnote".into())
                }
                Event::Text(t) | Event::Code(t) => text.push_str(&t),
                Event::SoftBreak | Event::HardBreak => text.push('\n'),
                _ => {}
            }
        }
        (bad, text)
    }

    const HOSTILE: &[&str] = &[
        "Look:\n```\nstd::process::exit(1);\n```",
        "Look:\n~~~rust\nstd::process::exit(1);\n~~~",
        "Look:\n\n    std::process::exit(1);",
        "Look:\n\n\tstd::process::exit(1);",
        "- ```\n  std::process::exit(1);\n  ```",
        "-     std::process::exit(1);",
        ">     std::process::exit(1);",
        "> ```\n> std::process::exit(1);\n> ```",
        "1. ```\n   boom();\n   ```",
        "1)     boom();",
        "<script>alert(1)</script>",
        "text <img src=x onerror=alert(1)> more",
        "<details>\n\n```\nboom();\n```\n</details>",
        "[click](javascript:alert(1))",
        "[x]: javascript:alert(1)\n\n[x]",
        "\\```\nboom();\n\\```",
        "\\<script>",
        "`a\n```\nboom();\n```\nb`",
        "# heading\n===\n---",
        "a\u{202E}b\u{2066}c\u{0007}d\u{1b}[31m",
        // Found by fuzzing the first version: escaping around code spans re-paired them.
        "\\`a`<img src=x onerror=alert(1)>`",
        "~$<!x`>`<img src=x onerror=alert(1)>`!`",
        "|</b><$\u{2039}img src=x onerror=alert(1)>``$``-<b>```",
        "[^1]\n\n[^1]: a footnote",
        "![x](y.png)",
    ];

    #[test]
    fn hostile_text_opens_no_block_no_html_no_link() {
        for h in HOSTILE {
            let doc = text(h);
            let (bad, _) = blocks(&doc);
            assert!(bad.is_empty(), "{h:?} became {doc:?}: {bad:?}");
            assert!(!doc.chars().any(hidden), "{doc:?}");
        }
    }

    /// Random strings of Markdown's significant pieces, alone and in the places emit puts
    /// them: nothing live ever comes out.
    #[test]
    fn fuzzed_text_stays_text() {
        const PIECES: &[&str] = &[
            "`",
            "``",
            "```",
            "\n",
            "\n\n",
            "    ",
            "\t",
            "\\",
            "<b>",
            "</b>",
            "<!--",
            "<img src=x>",
            "&lt;",
            "&#96;",
            "[",
            "]",
            "(u)",
            "![",
            "[^1]",
            ":",
            "$",
            "~",
            "~~~",
            "*",
            "_",
            "#",
            "-",
            "+",
            "1.",
            "2)",
            ">",
            "|",
            "=",
            "!",
            "&",
            "x",
            " ",
            "http://a.b",
        ];
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..30_000 {
            let n = (next() % 10 + 1) as usize;
            let s: String = (0..n)
                .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                .collect();
            let t = text(&s);
            for doc in [
                t.clone(),
                format!("{}: {t}", code("name")),
                format!("`x` (v1, bash): {t}"),
                format!("{t}\n\nDefault: {}.", code(&s)),
            ] {
                let (bad, _) = blocks(&doc);
                assert!(bad.is_empty(), "{s:?} became {doc:?}: {bad:?}");
            }
            let (bad, _) = blocks(&code(&s));
            assert!(bad.is_empty(), "{s:?} became {:?}: {bad:?}", code(&s));
        }
    }

    #[test]
    fn text_renders_as_written() {
        for (src, shown) in [
            ("Search the web.", "Search the web."),
            (
                "Use `grep -r` to find <things> in [brackets].",
                "Use grep -r to find <things> in [brackets].",
            ),
            ("- one\n- two", "- one\n- two"),
            ("```\ncode\n```", "```\ncode\n```"),
            ("1. first", "1. first"),
            ("a \\ b", "a \\ b"),
            ("x\u{202E}y", "xU+202Ey"),
            ("    indented", "indented"),
        ] {
            let (bad, t) = blocks(&text(src));
            assert!(bad.is_empty(), "{src:?}: {bad:?}");
            assert_eq!(t, shown, "{src:?} -> {:?}", text(src));
        }
    }

    #[test]
    fn code_is_one_span() {
        for (src, shown) in [
            ("name", "name"),
            ("a`b", "a`b"),
            ("``", "``"),
            ("x\ny", "x\\ny"),
            ("<b>", "<b>"),
            ("\u{202E}", "U+202E"),
        ] {
            let c = code(src);
            let (bad, t) = blocks(&c);
            assert!(bad.is_empty(), "{src:?}: {bad:?}");
            assert_eq!(t, shown, "{src:?} -> {c:?}");
            assert!(!c.contains('\n'));
        }
        assert_eq!(code(""), "\"\"");
        assert_eq!(code("web_search"), "`web_search`");
    }
}
