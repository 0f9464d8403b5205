//! A stdio server's stdout as toolbind reads it: one JSON-RPC message a line, each line
//! bounded in bytes, and a message that the client would drop unread ends the connection
//! with the reason instead.
//!
//! rmcp (like the other official SDKs) skips a line it cannot parse, so that a server's
//! stray log lines do no harm. But a line that starts as a JSON message and cannot be
//! parsed — invalid UTF-8, or nested deeper than serde_json's recursion limit — is an
//! answer lost: the call it answered would wait for its whole timeout, told nothing. Such
//! a line is checked here, as it streams past, at no extra copy.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// The deepest nesting serde_json parses (its recursion limit is 128 levels: the 128th
/// `[` or `{` fails).
const MAX_DEPTH: u32 = 127;

/// Why toolbind stopped reading a server's stdout, once it has.
#[derive(Debug, Default)]
pub(crate) struct Broken(AtomicU8);

const OVER: u8 = 1;
const NOT_UTF8: u8 = 2;
const TOO_DEEP: u8 = 3;

impl Broken {
    fn set(&self, why: u8) {
        let _ = self
            .0
            .compare_exchange(0, why, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// What the server did, for a message; `None` while its stdout is read.
    pub(crate) fn message(&self, max_bytes: u64) -> Option<String> {
        match self.0.load(Ordering::SeqCst) {
            OVER => Some(format!(
                "the server wrote a message longer than {max_bytes} bytes (max_message_bytes): toolbind stopped reading and ended the connection"
            )),
            NOT_UTF8 => Some(
                "the server wrote a message that is not valid UTF-8, which no JSON-RPC client can read: toolbind ended the connection".to_owned(),
            ),
            TOO_DEEP => Some(format!(
                "the server wrote a message nested deeper than {MAX_DEPTH} levels, which the JSON-RPC client cannot read: toolbind ended the connection"
            )),
            _ => None,
        }
    }
}

/// The checks on the line being read.
#[derive(Debug, Default)]
struct Line {
    bytes: u64,
    /// A byte other than white space was seen.
    started: bool,
    /// The line starts as JSON (`{` or `[`): a message, not a log line.
    message: bool,
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// UTF-8: continuation bytes still expected, and the range the next must be in.
    need: u8,
    low: u8,
    high: u8,
    bad: u8,
}

impl Line {
    /// Takes one byte other than `\n`.
    fn push(&mut self, b: u8) {
        self.bytes += 1;
        if !self.utf8(b) && self.bad == 0 {
            self.bad = NOT_UTF8;
        }
        if !self.started {
            // White space and a byte-order mark may come first (rmcp strips a BOM).
            if matches!(b, b' ' | b'\t' | b'\r' | 0xEF | 0xBB | 0xBF) {
                return;
            }
            self.started = true;
            self.message = matches!(b, b'{' | b'[');
        }
        if !self.message {
            return;
        }
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
            }
            return;
        }
        match b {
            b'"' => self.in_string = true,
            b'{' | b'[' => {
                self.depth += 1;
                if self.depth > MAX_DEPTH && self.bad == 0 {
                    self.bad = TOO_DEEP;
                }
            }
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
    }

    /// Whether `b` continues valid UTF-8 (RFC 3629: no overlong forms, no surrogates,
    /// nothing past U+10FFFF).
    fn utf8(&mut self, b: u8) -> bool {
        if self.need > 0 {
            if b < self.low || b > self.high {
                self.need = 0;
                return false;
            }
            self.need -= 1;
            (self.low, self.high) = (0x80, 0xBF);
            return true;
        }
        let (need, low, high) = match b {
            0x00..=0x7F => return true,
            0xC2..=0xDF => (1, 0x80, 0xBF),
            0xE0 => (2, 0xA0, 0xBF),
            0xE1..=0xEC | 0xEE..=0xEF => (2, 0x80, 0xBF),
            0xED => (2, 0x80, 0x9F),
            0xF0 => (3, 0x90, 0xBF),
            0xF1..=0xF3 => (3, 0x80, 0xBF),
            0xF4 => (3, 0x80, 0x8F),
            _ => return false,
        };
        (self.need, self.low, self.high) = (need, low, high);
        true
    }

    /// At the line's end: why the message cannot be read, if it cannot.
    fn end(&mut self) -> Option<u8> {
        let bad = if self.need > 0 { NOT_UTF8 } else { self.bad };
        let message = self.message;
        *self = Line::default();
        (message && bad != 0).then_some(bad)
    }
}

/// A reader of a server's stdout that fails once one line (one message) goes over `max`
/// bytes, so that a server writing an endless line cannot make the client hold more than
/// that, or once a message cannot be read (see the module's docs).
pub(crate) struct Lines<R> {
    inner: R,
    max: u64,
    line: Line,
    broken: Arc<Broken>,
}

impl<R> Lines<R> {
    pub(crate) fn new(inner: R, max: u64, broken: Arc<Broken>) -> Self {
        Lines {
            inner,
            max,
            line: Line::default(),
            broken,
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Lines<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                for &b in &buf.filled()[before..] {
                    let why = if b == b'\n' {
                        this.line.end()
                    } else {
                        this.line.push(b);
                        (this.line.bytes > this.max).then_some(OVER)
                    };
                    if let Some(why) = why {
                        this.broken.set(why);
                        return Poll::Ready(Err(std::io::Error::other(
                            "a message the client cannot read",
                        )));
                    }
                }
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &[u8]) -> Option<u8> {
        let mut line = Line::default();
        for &b in text {
            if b == b'\n' {
                if let Some(why) = line.end() {
                    return Some(why);
                }
            } else {
                line.push(b);
            }
        }
        None
    }

    fn nested(n: usize) -> String {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}1{}}}\n",
            "[".repeat(n),
            "]".repeat(n)
        )
    }

    #[test]
    fn the_depth_bound_is_serde_jsons() {
        // The message's own object is one level.
        for n in [0, 10, 125, 126, 127, 200] {
            let text = nested(n);
            let serde = serde_json::from_str::<serde_json::Value>(&text).is_ok();
            assert_eq!(check(text.as_bytes()).is_none(), serde, "{n} levels");
        }
        // Brackets in strings are not nesting.
        let s = format!("{{\"a\":\"{}\"}}\n", "[{".repeat(500));
        assert_eq!(check(s.as_bytes()), None);
        let s = format!("{{\"a\":\"\\\"{}\"}}\n", "[".repeat(500));
        assert_eq!(check(s.as_bytes()), None);
    }

    #[test]
    fn invalid_utf8_in_a_message_is_caught() {
        for bad in [
            &b"{\"a\":\"\xff\"}\n"[..],
            b"{\"a\":\"\xc0\xaf\"}\n",
            b"{\"a\":\"\xed\xa0\x80\"}\n",
            b"{\"a\":\"\xf4\x90\x80\x80\"}\n",
            b"{\"a\":\"\xe2\x82\"}\n",
        ] {
            assert!(std::str::from_utf8(bad).is_err());
            assert_eq!(check(bad), Some(NOT_UTF8), "{bad:?}");
        }
        for good in ["{\"a\":\"é€𝄞\"}\n", "\u{feff}{\"a\":1}\n", "  [1]\n"] {
            assert_eq!(check(good.as_bytes()), None, "{good:?}");
        }
        // A log line is not a message: rmcp skips it, and so it stays harmless.
        assert_eq!(check(b"starting \xff up [[[[\n"), None);
    }
}
