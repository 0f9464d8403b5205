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

use crate::result::{Content, RuntimeNotes, ToolResult};
use crate::spill::{MAX_SPILL_FILE_BYTES, spill_text};

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
/// Truncates the text of `result` to `limits` — one budget for the whole
/// result, shared by its text blocks in order — appending the note to each block that
/// was cut (and saving its full text to `spill_dir`, when given); see
/// [`Runtime::truncate_result`](crate::Runtime::truncate_result).
///
/// A note the executor added when it had already cut the tool's output (`[output
/// truncated by the runtime: ...]`, which gives the tool's real totals) is kept as it
/// is, outside the budget, and this truncation's own note says that it counts only what
/// the executor kept.
pub(crate) fn truncate_result(
    limits: TruncateOptions,
    spill_dir: Option<&Path>,
    tool: &str,
    tool_call_id: &str,
    result: &mut ToolResult,
) {
    let mut budget = limits;
    let executor_cut = !result.runtime_notes.is_empty();
    let mut dropped: Vec<usize> = Vec::new();
    let mut cut_whole = 0usize;
    for (i, block) in result.content.iter_mut().enumerate() {
        let Content::Text { text } = block else {
            continue;
        };
        if result.runtime_notes.contains(i) {
            continue;
        }
        let spent = budget.max_bytes == 0 || budget.max_lines == 0;
        if spent && !text.is_empty() {
            // Nothing of it can be shown. Past the first few such blocks (a note and a
            // spill file each), the rest are left out under one note: a result of many
            // blocks must not flood the model with notes, or the folder with files.
            if cut_whole >= MAX_NOTED_BLOCKS {
                dropped.push(i);
                continue;
            }
            cut_whole += 1;
        }
        let t = truncate_head(text, budget);
        budget.max_bytes = budget.max_bytes.saturating_sub(t.output_bytes);
        budget.max_lines = budget.max_lines.saturating_sub(t.output_lines);
        if !t.truncated {
            continue;
        }
        let spilled =
            spill_dir.map(|dir| spill_text(dir, tool, tool_call_id, i, text, MAX_SPILL_FILE_BYTES));
        let mut out = String::with_capacity(t.content.len() + 120);
        if !t.content.is_empty() {
            out.push_str(t.content);
            out.push_str("\n\n");
        }
        let note = |path: Option<&Path>| {
            if !executor_cut {
                return t.note(path);
            }
            // The totals are of what the executor kept; its own note has the tool's, and
            // the spill holds only what was kept: never call it the full output.
            let mut note = t.note(None);
            note.insert_str(
                note.len() - 1,
                "; counted after the runtime's own cut, see its note below",
            );
            if let Some(p) = path {
                note.insert_str(
                    note.len() - 1,
                    &format!(". The text the runtime kept is saved to: {}", p.display()),
                );
            }
            note
        };
        match &spilled {
            Some(Ok(path)) => out.push_str(&note(Some(path))),
            Some(Err(e)) => {
                out.push_str(&note(None));
                out.push_str(&format!(" (the full output could not be saved: {e})"));
            }
            None => out.push_str(&note(None)),
        }
        *text = out;
    }
    if !dropped.is_empty() {
        drop_blocks(spill_dir, tool, tool_call_id, result, &dropped);
    }
}

/// Takes the text blocks at `dropped` (which the budget left no room for) out of
/// `result`, saving their text to one spill file when a spill folder is configured, and
/// says so in one note.
fn drop_blocks(
    spill_dir: Option<&Path>,
    tool: &str,
    tool_call_id: &str,
    result: &mut ToolResult,
    dropped: &[usize],
) {
    let mut joined = String::new();
    let mut kept = Vec::with_capacity(result.content.len() - dropped.len() + 1);
    let mut notes = RuntimeNotes::default();
    for (i, block) in std::mem::take(&mut result.content).into_iter().enumerate() {
        match block {
            Content::Text { text } if dropped.contains(&i) => {
                if !joined.is_empty() {
                    joined.push('\n');
                }
                joined.push_str(&text);
            }
            block => {
                if result.runtime_notes.contains(i) {
                    notes.push(kept.len());
                }
                kept.push(block);
            }
        }
    }
    let mut note = format!(
        "[{} more text blocks ({} bytes) left out: the output limit was reached",
        dropped.len(),
        joined.len()
    );
    if let Some(dir) = spill_dir {
        match spill_text(
            dir,
            tool,
            tool_call_id,
            dropped[0],
            &joined,
            MAX_SPILL_FILE_BYTES,
        ) {
            Ok(path) => note.push_str(&format!(". Their text is saved to: {}", path.display())),
            Err(e) => note.push_str(&format!(" (their text could not be saved: {e})")),
        }
    }
    note.push(']');
    kept.push(Content::text(note));
    result.content = kept;
    result.runtime_notes = notes;
}

/// How many text blocks the budget left no room for get a note (and a spill file) each;
/// the rest are left out under one.
const MAX_NOTED_BLOCKS: usize = 16;
