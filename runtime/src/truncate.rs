//! Output truncation, following the Pi tool API's "Output Truncation" contract: keep the
//! head of a tool's text, at most 50 KB and 2000 lines by default, and tell the model what
//! was cut.
//!
//! ```
//! use toolbind::truncate::{truncate_head, TruncateOptions};
//!
//! let text = "line\n".repeat(3000);
//! let t = truncate_head(&text, TruncateOptions::default());
//! assert!(t.truncated);
//! assert_eq!((t.output_lines, t.total_lines), (2000, 3000));
//! assert_eq!(t.note(None), "[Output truncated: 2000/3000 lines (9.8KB/14.6KB)]");
//! ```

use std::path::Path;

/// The Pi tool API's `DEFAULT_MAX_BYTES`: 50 KB, about 10,000 tokens.
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;
/// The Pi tool API's `DEFAULT_MAX_LINES`.
pub const DEFAULT_MAX_LINES: usize = 2000;

/// Limits for [`truncate_head`]. Both apply; whichever is reached first cuts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TruncateOptions {
    pub(crate) max_bytes: usize,
    pub(crate) max_lines: usize,
}

impl TruncateOptions {
    /// Keeps at most `max_bytes` bytes and `max_lines` lines.
    pub const fn new(max_bytes: usize, max_lines: usize) -> Self {
        TruncateOptions {
            max_bytes,
            max_lines,
        }
    }

    /// The most bytes of UTF-8 kept (the note is not counted). Default
    /// [`DEFAULT_MAX_BYTES`].
    pub const fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// The most lines kept. Default [`DEFAULT_MAX_LINES`].
    pub const fn max_lines(mut self, lines: usize) -> Self {
        self.max_lines = lines;
        self
    }

    /// See [`max_bytes`](Self::max_bytes).
    pub const fn get_max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// See [`max_lines`](Self::max_lines).
    pub const fn get_max_lines(&self) -> usize {
        self.max_lines
    }
}

impl Default for TruncateOptions {
    /// 50 KB and 2000 lines, the Pi tool API's built-in limits.
    fn default() -> Self {
        TruncateOptions {
            max_bytes: DEFAULT_MAX_BYTES,
            max_lines: DEFAULT_MAX_LINES,
        }
    }
}

/// What [`truncate_head`] kept, with the counts the note reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncation<'a> {
    /// The kept head of the text (all of it when nothing was cut).
    pub content: &'a str,
    /// Whether anything was cut.
    pub truncated: bool,
    /// Lines in the whole text.
    pub total_lines: usize,
    /// Lines in [`content`](Self::content).
    pub output_lines: usize,
    /// Bytes in the whole text.
    pub total_bytes: usize,
    /// Bytes in [`content`](Self::content).
    pub output_bytes: usize,
}

impl Truncation<'_> {
    /// The note appended after truncated text, for example
    /// `[Output truncated: 2000/8642 lines (49.9KB/210.3KB)]`; with `full_output`, the note
    /// also says where the whole text was saved.
    pub fn note(&self, full_output: Option<&Path>) -> String {
        let mut note = format!(
            "[Output truncated: {}/{} lines ({}/{})",
            self.output_lines,
            self.total_lines,
            format_size(self.output_bytes),
            format_size(self.total_bytes)
        );
        if let Some(path) = full_output {
            note.push_str(". Full output saved to: ");
            note.push_str(&path.display().to_string());
        }
        note.push(']');
        note
    }
}

/// Keeps the beginning of `text` within `opts`' limits.
///
/// Whole lines are kept where possible. Only when not even the first line fits in
/// `max_bytes` is a line cut, and then on a character boundary: the result is always valid
/// UTF-8 and never longer than `max_bytes`. Lines are counted as `str::lines` does (a final
/// newline does not start another line).
///
/// ```
/// use toolbind::truncate::{truncate_head, TruncateOptions};
///
/// let opts = TruncateOptions::new(5, 100);
/// let t = truncate_head("ééé\nabc", opts);
/// assert_eq!(t.content, "éé"); // 4 bytes: a third `é` would need 6
/// assert!(t.truncated);
/// ```
pub fn truncate_head(text: &str, opts: TruncateOptions) -> Truncation<'_> {
    let total_bytes = text.len();
    let newlines = memchr_count(text.as_bytes());
    let total_lines = newlines + usize::from(!text.is_empty() && !text.ends_with('\n'));
    if total_bytes <= opts.max_bytes && total_lines <= opts.max_lines {
        return Truncation {
            content: text,
            truncated: false,
            total_lines,
            output_lines: total_lines,
            total_bytes,
            output_bytes: total_bytes,
        };
    }

    // The end of the `max_lines`-th line, without its newline.
    let mut end = if total_lines > opts.max_lines {
        if opts.max_lines == 0 {
            0
        } else {
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .nth(opts.max_lines - 1)
                .map_or(text.len(), |(i, _)| i)
        }
    } else {
        text.len()
    };
    if end > opts.max_bytes {
        let head = &text[..text.floor_char_boundary(opts.max_bytes)];
        end = match head.rfind('\n') {
            Some(i) => i,
            // Not even one whole line fits: cut inside it rather than show nothing.
            None => head.len(),
        };
    }
    let content = &text[..end];
    let output_lines = if content.is_empty() {
        0
    } else {
        memchr_count(content.as_bytes()) + 1
    };
    Truncation {
        content,
        truncated: true,
        total_lines,
        output_lines,
        total_bytes,
        output_bytes: content.len(),
    }
}

fn memchr_count(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| **b == b'\n').count()
}

/// The Pi tool API's `formatSize`: `512B`, `49.9KB`, `3.2MB`.
pub fn format_size(bytes: usize) -> String {
    const KB: f64 = 1024.0;
    if bytes < 1024 {
        format!("{bytes}B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1}KB", bytes as f64 / KB)
    } else {
        format!("{:.1}MB", bytes as f64 / (KB * KB))
    }
}
