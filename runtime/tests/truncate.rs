//! Truncation of tool output (the Pi tool API's "Output Truncation"): both limits,
//! multi-byte text, the note.

use toolbind::truncate::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncateOptions, Truncation, format_size, truncate_head,
};

fn numbered(n: usize) -> String {
    (0..n).map(|i| format!("line {i}\n")).collect()
}

#[test]
fn defaults_are_seed_002s() {
    let d = TruncateOptions::default();
    assert_eq!((d.get_max_bytes(), d.get_max_lines()), (50 * 1024, 2000));
    assert_eq!((DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES), (51200, 2000));
}

#[test]
fn short_text_is_untouched() {
    let text = numbered(2000);
    let t = truncate_head(&text, TruncateOptions::default());
    assert!(!t.truncated);
    assert_eq!(t.content, text);
    assert_eq!((t.total_lines, t.output_lines), (2000, 2000));
    assert_eq!((t.total_bytes, t.output_bytes), (text.len(), text.len()));

    let empty = truncate_head("", TruncateOptions::default());
    assert!(!empty.truncated);
    assert_eq!((empty.total_lines, empty.output_lines), (0, 0));
}

#[test]
fn a_final_newline_is_not_another_line() {
    let opts = TruncateOptions::new(100, 2);
    assert!(!truncate_head("a\nb\n", opts).truncated);
    assert_eq!(truncate_head("a\nb\n", opts).total_lines, 2);
    let t = truncate_head("a\nb\nc", opts);
    assert!(t.truncated);
    assert_eq!(t.total_lines, 3);
    assert_eq!(t.content, "a\nb");
}

#[test]
fn cut_at_the_line_limit() {
    let text = numbered(3000);
    let t = truncate_head(&text, TruncateOptions::default());
    assert!(t.truncated);
    assert_eq!((t.output_lines, t.total_lines), (2000, 3000));
    assert!(t.content.starts_with("line 0\nline 1\n"));
    assert!(
        t.content.ends_with("\nline 1999"),
        "{:?}",
        &t.content[t.content.len() - 20..]
    );
    assert_eq!(t.output_bytes, t.content.len());
    assert_eq!(t.total_bytes, text.len());
    assert_eq!(t.content.lines().count(), 2000);
}

#[test]
fn cut_at_the_byte_limit_keeps_whole_lines() {
    // 200 lines of 1000 bytes: 200,000 bytes, far under 2000 lines.
    let line = format!("{}\n", "x".repeat(999));
    let text = line.repeat(200);
    let t = truncate_head(&text, TruncateOptions::default());
    assert!(t.truncated);
    assert!(t.output_bytes <= DEFAULT_MAX_BYTES);
    assert_eq!(t.output_lines, 51); // 51 * 1000 - 1 = 50,999 <= 51,200 < 52 * 1000 - 1
    assert_eq!(t.content.len(), 51 * 1000 - 1);
    assert!(text.starts_with(t.content));
    assert_eq!(&text[t.content.len()..t.content.len() + 1], "\n");
    assert_eq!((t.total_lines, t.total_bytes), (200, 200_000));
}

#[test]
fn whichever_limit_comes_first_cuts() {
    let text = numbered(100); // "line 0\n" .. "line 99\n"
    let by_lines = truncate_head(&text, TruncateOptions::new(10_000, 3));
    assert_eq!(by_lines.content, "line 0\nline 1\nline 2");
    let by_bytes = truncate_head(&text, TruncateOptions::new(16, 3));
    assert_eq!(by_bytes.content, "line 0\nline 1");
    assert_eq!(by_bytes.output_lines, 2);
}

#[test]
fn multi_byte_text_is_never_split() {
    // 1-, 2-, 3- and 4-byte characters, one long line, so the cut falls inside a line.
    let unit = "aé日🦀";
    let text = unit.repeat(50);
    for max_bytes in 0..=60 {
        let t = truncate_head(&text, TruncateOptions::new(max_bytes, 10));
        assert!(t.truncated, "max_bytes {max_bytes}");
        assert!(t.content.len() <= max_bytes, "max_bytes {max_bytes}");
        // As long as possible: one more character would not fit.
        let next = text[t.content.len()..].chars().next().unwrap();
        assert!(
            t.content.len() + next.len_utf8() > max_bytes,
            "max_bytes {max_bytes}: kept {} bytes",
            t.content.len()
        );
        assert!(text.starts_with(t.content));
        assert!(text.is_char_boundary(t.content.len()));
        assert_eq!(t.output_lines, usize::from(!t.content.is_empty()));
    }
}

#[test]
fn multi_byte_lines_cut_at_a_line_end() {
    let text = "日本語のテキスト\n".repeat(100); // 25 bytes a line
    let t = truncate_head(&text, TruncateOptions::new(60, 2000));
    assert_eq!(t.content, "日本語のテキスト\n日本語のテキスト");
    assert_eq!(t.output_lines, 2);
    assert_eq!(t.output_bytes, 49);
}

#[test]
fn the_note_reads_like_seed_002s() {
    let t = Truncation {
        content: "",
        truncated: true,
        total_lines: 8642,
        output_lines: 2000,
        total_bytes: 215_347, // 210.3 KB
        output_bytes: 51_098, // 49.9 KB
    };
    assert_eq!(
        t.note(None),
        "[Output truncated: 2000/8642 lines (49.9KB/210.3KB)]"
    );
    assert_eq!(
        t.note(Some(std::path::Path::new("/tmp/out/search-c1-0.txt"))),
        "[Output truncated: 2000/8642 lines (49.9KB/210.3KB). Full output saved to: /tmp/out/search-c1-0.txt]"
    );
}

#[test]
fn sizes_format_like_seed_002s_format_size() {
    assert_eq!(format_size(0), "0B");
    assert_eq!(format_size(1023), "1023B");
    assert_eq!(format_size(1024), "1.0KB");
    assert_eq!(format_size(51_098), "49.9KB");
    assert_eq!(format_size(3 * 1024 * 1024 + 300_000), "3.3MB");
}

#[test]
fn zero_lines_keeps_nothing() {
    let t = truncate_head("a\nb", TruncateOptions::new(100, 0));
    assert!(t.truncated);
    assert_eq!((t.content, t.output_lines), ("", 0));
}
