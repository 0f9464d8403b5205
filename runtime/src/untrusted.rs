//! Strings from outside — a tool's output, an MCP server's texts, a client's request — where
//! they land: on a terminal (escaped, [`terminal`]), in an echo such as an error message
//! (a few hundred bytes at most, [`echo`]); and the random bits that make ids and spill
//! names unguessable ([`random`]).
//!
//! Shared by the runtime, `toolbind call` and `toolbind serve`, so every place that shows
//! such a string shows it the same way.

use std::borrow::Cow;

/// The most characters of a client's or a server's string an echo repeats (a name in an
/// error message, a log line): enough to recognise it, never its megabytes.
pub const ECHO_CHARS: usize = 200;

/// `s` cut to at most `max` characters, with `…` where it was cut.
pub fn clip(s: &str, max: usize) -> Cow<'_, str> {
    // A string of at most `max` bytes has at most `max` characters: no scan.
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    match s.char_indices().nth(max) {
        Some((i, _)) => Cow::Owned(format!("{}…", &s[..i])),
        None => Cow::Borrowed(s),
    }
}

/// `s` as an echo repeats it: at most [`ECHO_CHARS`] characters.
pub fn echo(s: &str) -> Cow<'_, str> {
    clip(s, ECHO_CHARS)
}

/// `v` as JSON, cut after [`ECHO_CHARS`] bytes (with `…`): a client's value repeated in an
/// error message, written no further than that whatever its size.
pub fn echo_json(v: &serde_json::Value) -> String {
    /// Takes bytes up to its cap, then refuses: serialisation stops there.
    struct Capped(Vec<u8>);
    impl std::io::Write for Capped {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let room = ECHO_CHARS - self.0.len();
            if room == 0 {
                return Err(std::io::Error::other("echo cap"));
            }
            let n = buf.len().min(room);
            self.0.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut w = Capped(Vec::with_capacity(64));
    let cut = serde_json::to_writer(&mut w, v).is_err();
    let mut s = String::from_utf8_lossy(&w.0).into_owned();
    if cut || s.len() >= ECHO_CHARS {
        // A character cut in two shows as U+FFFD: drop it.
        s = s.trim_end_matches('\u{fffd}').to_owned();
        s.push('…');
    }
    s
}

/// Whether `c` must not reach a terminal as it is: control characters (C0 but newline and
/// tab, DEL, C1: ESC starts escape sequences that retitle a window, rewrite lines or
/// write files on some terminals, CR overwrites a line, U+009B is a one-character CSI),
/// the bidirectional controls that make text read in another order than it runs (Trojan
/// Source), and the line and paragraph separators.
pub fn is_unsafe_on_terminal(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
        )
}

/// `s` as a terminal may show it: every character of [`is_unsafe_on_terminal`] written
/// as its escape (`\u{1b}`, as Rust's `escape_debug` writes it), the rest as it is
/// (newlines and tabs included: a multi-line message stays readable).
pub fn terminal(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe_on_terminal) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if is_unsafe_on_terminal(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `n` random bytes from the kernel (`/dev/urandom`): task ids, call ids, spill names.
pub fn random(n: usize) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = vec![0u8; n];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes)
}

/// `bytes` as lowercase hex digits.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_drives_a_terminal_and_keeps_lines() {
        assert_eq!(terminal("plain\n\ttext"), "plain\n\ttext");
        assert_eq!(
            terminal("a\x1b]0;owned\x07b\rc\u{9b}2Jd"),
            "a\\u{1b}]0;owned\\u{7}b\\u{d}c\\u{9b}2Jd"
        );
        assert_eq!(
            terminal("x\u{202e}y\u{2066}z\u{7f}"),
            "x\\u{202e}y\\u{2066}z\\u{7f}"
        );
    }

    #[test]
    fn echoes_are_clipped() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcd", 3), "abc…");
        assert_eq!(clip("ééé", 3), "ééé");
        assert_eq!(
            echo(&"x".repeat(1 << 20)).len(),
            ECHO_CHARS + '…'.len_utf8()
        );
        assert_eq!(
            echo_json(&serde_json::json!({"a": [1, 2]})),
            r#"{"a":[1,2]}"#
        );
        let big = serde_json::json!(["é".repeat(1 << 20)]);
        let shown = echo_json(&big);
        assert!(
            shown.len() <= ECHO_CHARS + 3 && shown.ends_with('…'),
            "{shown}"
        );
    }
}
