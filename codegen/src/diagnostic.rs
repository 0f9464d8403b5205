//! One error type for every malformed input, rendered three ways: a plain
//! `file:line:col: message` line (the macro, logs), a rustc-style snippet (build.rs, CLI) and
//! JSON (`toolbind check --format json`).

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A 1-based line and column in a source file (columns count characters, as rustc does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Pos {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
}

impl Pos {
    /// No position: the error is about a whole file or folder.
    pub const NONE: Pos = Pos { line: 0, column: 0 };

    /// A position (1-based line and column).
    pub const fn new(line: u32, column: u32) -> Self {
        Pos { line, column }
    }
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// How bad a [`Diagnostic`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[non_exhaustive]
pub enum Severity {
    /// The tool cannot be used as written: the build fails and the runtime skips the tool.
    #[default]
    Error,
    /// Something the platform itself accepts but that deserves a look (an extra key, a
    /// name a provider rejects, a fallback Rust identifier): the tool loads and compiles.
    Warning,
}

impl Severity {
    /// `error` or `warning`, as rustc and `toolbind check --format json` spell it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error or warning in a tools folder: where it is, what is wrong, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Diagnostic {
    /// Whether the tool can be used despite it.
    pub severity: Severity,
    /// The file (usually a TOOL.md) or folder the error is about.
    pub file: PathBuf,
    /// 1-based line and column (columns count characters).
    pub pos: Pos,
    /// Lowercase, names the construct: ``unknown input type `strin` ``.
    pub message: String,
    /// The fix, when there is one: ``did you mean `string`?``.
    pub hint: Option<String>,
    /// Length in characters of the offending text, for the snippet's underline.
    pub len: usize,
    /// The file's text (after BOM/CRLF normalisation), for snippets.
    pub source: Option<Arc<str>>,
}

impl Diagnostic {
    /// An error at `pos` in `file`.
    pub fn new(file: impl Into<PathBuf>, pos: Pos, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            file: file.into(),
            pos,
            message: message.into(),
            hint: None,
            len: 1,
            source: None,
        }
    }

    /// Makes this diagnostic a warning.
    #[must_use]
    pub fn warning(mut self) -> Self {
        self.severity = Severity::Warning;
        self
    }

    /// Whether this is an error (the tool cannot be used as written).
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    #[must_use]
    /// Adds the fix, shown after the message (`help: ...`).
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    #[must_use]
    /// How many characters the underline spans (default 1).
    pub fn span(mut self, len: usize) -> Self {
        self.len = len.max(1);
        self
    }

    #[must_use]
    /// The file's text, so the report can quote the line.
    pub fn source_text(mut self, source: Arc<str>) -> Self {
        self.source = Some(source);
        self
    }

    /// `file:line:col: message` plus `(hint)` — one line, for the macro and logs. A
    /// warning's message starts with `warning: `.
    pub fn plain(&self) -> String {
        let level = match self.severity {
            Severity::Error => "",
            Severity::Warning => "warning: ",
        };
        let mut s = if self.pos == Pos::NONE {
            format!("{}: {level}{}", self.file.display(), self.message)
        } else {
            format!(
                "{}:{}:{}: {level}{}",
                self.file.display(),
                self.pos.line,
                self.pos.column,
                self.message
            )
        };
        if let Some(h) = &self.hint {
            s.push_str(" (help: ");
            s.push_str(h);
            s.push(')');
        }
        s
    }

    /// A rustc-style report with a source snippet; `color` adds ANSI styles.
    pub fn render(&self, color: bool) -> String {
        use annotate_snippets::{AnnotationKind, Level, Renderer, Snippet};

        let renderer = if color {
            Renderer::styled()
        } else {
            Renderer::plain()
        };
        let path = self.file.display().to_string();
        let level = match self.severity {
            Severity::Error => Level::ERROR,
            Severity::Warning => Level::WARNING,
        };
        let title = level.primary_title(self.message.as_str());
        let group = match self.source.as_deref().and_then(|s| self.byte_span(s)) {
            Some((src, range)) => {
                let snippet = Snippet::source(src)
                    .path(path.as_str())
                    .line_start(1)
                    .annotation(AnnotationKind::Primary.span(range));
                let g = title.element(snippet);
                match &self.hint {
                    Some(h) => g.element(Level::HELP.message(h.as_str())),
                    None => g,
                }
            }
            None if self.pos == Pos::NONE => {
                let g = title.element(annotate_snippets::Origin::path(path.as_str()));
                match &self.hint {
                    Some(h) => g.element(Level::HELP.message(h.as_str())),
                    None => g,
                }
            }
            None => {
                // `char_column` is the 1-based column as shown (annotate-snippets itself
                // passes `start.char + 1`): the same number as `plain()` and `to_json()`.
                let origin = annotate_snippets::Origin::path(path.as_str())
                    .line(self.pos.line as usize)
                    .char_column(self.pos.column as usize);
                let g = title.element(origin);
                match &self.hint {
                    Some(h) => g.element(Level::HELP.message(h.as_str())),
                    None => g,
                }
            }
        };
        c1_escaped(renderer.render(&[group]).to_string())
    }

    /// The byte range of the annotated text in `src`, clamped to its line.
    fn byte_span<'s>(&self, src: &'s str) -> Option<(&'s str, Range<usize>)> {
        let line_idx = (self.pos.line as usize).checked_sub(1)?;
        let line_start = if line_idx == 0 {
            0
        } else {
            src.match_indices('\n').nth(line_idx - 1)?.0 + 1
        };
        let line_end = src[line_start..]
            .find('\n')
            .map_or(src.len(), |i| line_start + i);
        let line = &src[line_start..line_end];
        let col = self.pos.column.saturating_sub(1) as usize;
        let start = line.char_indices().nth(col).map_or(line.len(), |(i, _)| i);
        let end = line[start..]
            .char_indices()
            .nth(self.len)
            .map_or(line.len(), |(i, _)| start + i);
        Some((src, line_start + start..line_start + end))
    }

    /// The machine-readable form used by `toolbind check --format json`.
    pub fn to_json(&self) -> serde_json::Value {
        // A folder-level error has no position: null, not a made-up 0 or 1.
        let (line, column) = if self.pos == Pos::NONE {
            (None, None)
        } else {
            (Some(self.pos.line), Some(self.pos.column))
        };
        serde_json::json!({
            "file": self.file.display().to_string(),
            "line": line,
            "column": column,
            "severity": self.severity.as_str(),
            "message": self.message,
            "hint": self.hint,
        })
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.plain())
    }
}

impl std::error::Error for Diagnostic {}

/// All diagnostics of a run, sorted by file and position: errors and warnings together,
/// so a failed build shows everything at once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(Diagnostic::is_error)
    }

    /// The errors only.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter().filter(|d| d.is_error())
    }

    /// The warnings only.
    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter().filter(|d| !d.is_error())
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The diagnostics, in report order.
    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.0.iter()
    }

    /// Sorts by file and position and drops exact repeats.
    pub fn sort(&mut self) {
        self.0
            .sort_by(|a, b| (&a.file, a.pos, &a.message).cmp(&(&b.file, b.pos, &b.message)));
        self.0
            .dedup_by(|a, b| a.file == b.file && a.pos == b.pos && a.message == b.message);
    }

    /// Every diagnostic rendered rustc-style, then a one-line summary.
    pub fn render(&self, color: bool) -> String {
        let mut out = String::new();
        for d in &self.0 {
            out.push_str(&d.render(color));
            out.push_str("\n\n");
        }
        out.push_str(&self.summary());
        out
    }

    /// `error: 3 errors in 2 files`, `error: 1 error and 2 warnings in 2 files` or
    /// `warning: 2 warnings in 1 file`.
    pub fn summary(&self) -> String {
        let mut files: Vec<&Path> = self.0.iter().map(|d| d.file.as_path()).collect();
        files.sort();
        files.dedup();
        let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        let errors = self.errors().count();
        let warnings = self.warnings().count();
        let what = match (errors, warnings) {
            (e, 0) => format!("error: {}", plural(e, "error")),
            (0, w) => format!("warning: {}", plural(w, "warning")),
            (e, w) => format!("error: {} and {}", plural(e, "error"), plural(w, "warning")),
        };
        format!("{what} in {}", plural(files.len(), "file"))
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in &self.0 {
            writeln!(f, "{d}")?;
        }
        write!(f, "{}", self.summary())
    }
}

impl std::error::Error for Diagnostics {}

impl IntoIterator for Diagnostics {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

/// The longest word [`suggest`] looks at, in bytes: past it no known word is close, and
/// the edit distance (work and memory that grow with the word's length) is not computed.
/// `word` may be a client's megabytes (an unknown tool's name sent to `toolbind serve`).
pub const MAX_SUGGEST_WORD: usize = 256;

/// The known word closest to `word`, when it is close enough to be a likely misspelling.
/// A word over `MAX_SUGGEST_WORD` (256) bytes gets none.
pub fn suggest<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    if word.len() > MAX_SUGGEST_WORD {
        return None;
    }
    let word_l = word.to_lowercase();
    if word_l.len() >= 3
        && let Some(k) = known.iter().find(|k| k.starts_with(&word_l))
    {
        return Some(k);
    }
    known
        .iter()
        .map(|k| (edit_distance(&word_l, k), *k))
        .filter(|(d, k)| *d <= (k.len().max(word.len()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// [`suggest`] held to a closer match: what an unknown key must be to be taken for a typo
/// of a known one (an error) rather than metadata (a warning). `section` is three edits
/// from `execution`, a suggestion but not a typo.
pub(crate) fn near_miss<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    let k = suggest(word, known)?;
    let word_l = word.to_lowercase();
    let close = (word_l.len() >= 3 && k.starts_with(&word_l))
        || edit_distance(&word_l, k) <= (k.len().max(word.len()) / 4).max(1);
    close.then_some(k)
}

/// Optimal string alignment distance: Levenshtein plus adjacent transpositions (`alpah`).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

/// A rendered diagnostic with DEL and the C1 control characters (U+0080–U+009F) spelled
/// `\u{9b}`: annotate-snippets replaces ESC, BEL and the bidi controls of the file and
/// message it shows, but not these, and U+009B alone is a CSI to many terminals. A
/// message quotes a snapshot's or a TOOL.md's text; the styles' own escapes are ESC, kept.
fn c1_escaped(rendered: String) -> String {
    if !rendered.chars().any(|c| ('\u{7f}'..='\u{9f}').contains(&c)) {
        return rendered;
    }
    let mut out = String::with_capacity(rendered.len() + 16);
    for c in rendered.chars() {
        if ('\u{7f}'..='\u{9f}').contains(&c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        let types = ["string", "number", "boolean", "enum"];
        assert_eq!(suggest("strin", &types), Some("string"));
        assert_eq!(suggest("boolen", &types), Some("boolean"));
        assert_eq!(suggest("Number", &types), Some("number"));
        assert_eq!(suggest("xyz", &types), None);
        // A huge word costs nothing: no suggestion, no distance computed.
        let huge = format!("strin{}", "g".repeat(16 << 20));
        assert_eq!(suggest(&huge, &types), None);
        assert_eq!(
            suggest("descripton", &["description", "name"]),
            Some("description")
        );
    }

    #[test]
    fn render_points_at_the_column() {
        let src: Arc<str> = Arc::from("---\nname: x\ntype: strin\n---\n");
        let d = Diagnostic::new("t/TOOL.md", Pos::new(3, 7), "unknown input type `strin`")
            .span(5)
            .hint("did you mean `string`?")
            .source_text(src);
        let r = d.render(false);
        assert!(r.contains("t/TOOL.md:3:7"), "{r}");
        assert!(r.contains("^^^^^"), "{r}");
        assert!(r.contains("help: did you mean `string`?"), "{r}");
        assert_eq!(
            d.plain(),
            "t/TOOL.md:3:7: unknown input type `strin` (help: did you mean `string`?)"
        );
    }

    #[test]
    fn c1_controls_in_a_message_reach_no_terminal() {
        let d = Diagnostic::new(
            Path::new("mcp/x.json"),
            Pos::new(1, 1),
            "tool `a\u{1b}]2;TITLE\u{7}b\u{9b}31m`: bad".to_owned(),
        );
        for color in [false, true] {
            let r = d.render(color);
            assert!(
                !r.chars().any(|c| ('\u{7f}'..='\u{9f}').contains(&c)),
                "{r:?}"
            );
            assert!(r.contains("\\u{9b}31m"), "{r:?}");
        }
    }
}
