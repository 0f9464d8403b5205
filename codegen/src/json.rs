//! A JSON reader that keeps where every value starts, so that a problem found after
//! parsing (a wrong type in a snapshot, a schema that does not map) can point at its
//! line and column. serde_json gives positions only for syntax errors.
//!
//! Hostile input stays bounded: nesting deeper than [`MAX_DEPTH`] is an error (no stack
//! overflow), and the caller bounds the text's size before reading it.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::model::Pos;

/// The deepest nesting of arrays and objects read.
pub(crate) const MAX_DEPTH: usize = 128;

/// Where each value of a document starts, by JSON pointer (RFC 6901; `""` is the root).
#[derive(Debug, Clone, Default)]
pub(crate) struct Spans(HashMap<String, Pos>);

impl Spans {
    /// The position of the value at `pointer`, or of its nearest parent that has one.
    pub(crate) fn at(&self, pointer: &str) -> Pos {
        let mut p = pointer;
        loop {
            if let Some(pos) = self.0.get(p) {
                return *pos;
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => return Pos::new(1, 1),
            }
        }
    }
}

/// One JSON pointer segment, escaped (`~` → `~0`, `/` → `~1`).
pub(crate) fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// Parses `text` as one JSON value with positions, or says where and why it is not JSON.
pub(crate) fn parse(text: &str) -> Result<(Value, Spans), (Pos, String)> {
    let mut r = Reader {
        s: text.as_bytes(),
        text,
        i: 0,
        line: 1,
        line_start: 0,
        spans: Spans::default(),
    };
    r.ws();
    let v = r.value(String::new(), 0)?;
    r.ws();
    if r.i < r.s.len() {
        return Err((r.pos(), "trailing characters after the JSON value".into()));
    }
    Ok((v, r.spans))
}

struct Reader<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
    line: u32,
    line_start: usize,
    spans: Spans,
}

impl Reader<'_> {
    fn pos(&self) -> Pos {
        let col = self.text[self.line_start..self.i.min(self.s.len())]
            .chars()
            .count();
        Pos::new(self.line, col as u32 + 1)
    }

    fn ws(&mut self) {
        while let Some(&b) = self.s.get(self.i) {
            match b {
                b'\n' => {
                    self.i += 1;
                    self.line += 1;
                    self.line_start = self.i;
                }
                b' ' | b'\t' | b'\r' => self.i += 1,
                _ => break,
            }
        }
    }

    fn err<T>(&self, msg: impl Into<String>) -> Result<T, (Pos, String)> {
        Err((self.pos(), msg.into()))
    }

    fn expect(&mut self, b: u8) -> Result<(), (Pos, String)> {
        if self.s.get(self.i) == Some(&b) {
            self.i += 1;
            Ok(())
        } else {
            self.err(format!("expected `{}`", b as char))
        }
    }

    fn value(&mut self, ptr: String, depth: usize) -> Result<Value, (Pos, String)> {
        if depth > MAX_DEPTH {
            return self.err(format!("nested more than {MAX_DEPTH} levels deep"));
        }
        self.spans.0.insert(ptr.clone(), self.pos());
        match self.s.get(self.i) {
            None => self.err("unexpected end of file: expected a value"),
            Some(b'{') => {
                self.i += 1;
                let mut map = Map::new();
                self.ws();
                if self.s.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(Value::Object(map));
                }
                loop {
                    self.ws();
                    if self.s.get(self.i) != Some(&b'"') {
                        return self.err("expected a key in double quotes");
                    }
                    let key_pos = self.pos();
                    let key = self.string()?;
                    if map.contains_key(&key) {
                        return Err((key_pos, format!("duplicate key `{key}`")));
                    }
                    self.ws();
                    self.expect(b':')?;
                    self.ws();
                    let v = self.value(format!("{ptr}/{}", escape(&key)), depth + 1)?;
                    map.insert(key, v);
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Value::Object(map));
                        }
                        _ => return self.err("expected `,` or `}`"),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(Value::Array(items));
                }
                loop {
                    self.ws();
                    let v = self.value(format!("{ptr}/{}", items.len()), depth + 1)?;
                    items.push(v);
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Value::Array(items));
                        }
                        _ => return self.err("expected `,` or `]`"),
                    }
                }
            }
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b't') => self.word("true", Value::Bool(true)),
            Some(b'f') => self.word("false", Value::Bool(false)),
            Some(b'n') => self.word("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => {
                let start = self.i;
                while let Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') = self.s.get(self.i)
                {
                    self.i += 1;
                }
                match serde_json::from_str::<serde_json::Number>(&self.text[start..self.i]) {
                    Ok(n) => Ok(Value::Number(n)),
                    Err(_) => {
                        self.i = start;
                        self.err("malformed number")
                    }
                }
            }
            Some(_) => self.err("expected a JSON value"),
        }
    }

    fn word(&mut self, w: &str, v: Value) -> Result<Value, (Pos, String)> {
        if self.s[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Ok(v)
        } else {
            self.err("expected a JSON value")
        }
    }

    fn hex4(&mut self) -> Result<u32, (Pos, String)> {
        let h = self.s.get(self.i..self.i + 4).and_then(|h| {
            std::str::from_utf8(h)
                .ok()
                .and_then(|h| u32::from_str_radix(h, 16).ok())
        });
        match h {
            Some(h) => {
                self.i += 4;
                Ok(h)
            }
            None => self.err("malformed `\\u` escape: expected four hex digits"),
        }
    }

    fn string(&mut self) -> Result<String, (Pos, String)> {
        self.i += 1; // the opening quote
        let mut out = String::new();
        loop {
            let start = self.i;
            while let Some(&b) = self.s.get(self.i) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.i += 1;
            }
            out.push_str(&self.text[start..self.i]);
            match self.s.get(self.i) {
                None => return self.err("unterminated string"),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.i += 1;
                    let c = match self.s.get(self.i) {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            self.i += 1;
                            let hi = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&hi) {
                                if !self.s[self.i..].starts_with(b"\\u") {
                                    return self.err("lone surrogate in `\\u` escape");
                                }
                                self.i += 2;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return self.err("lone surrogate in `\\u` escape");
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else {
                                hi
                            };
                            match char::from_u32(code) {
                                Some(c) => {
                                    out.push(c);
                                    continue;
                                }
                                None => return self.err("lone surrogate in `\\u` escape"),
                            }
                        }
                        _ => return self.err("unknown escape in string"),
                    };
                    self.i += 1;
                    out.push(c);
                }
                Some(_) => return self.err("control character in string: escape it"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_positions() {
        let text = "{\n  \"a\": [1, {\"b/c\": \"x\\u00e9\\ud83d\\ude00\"}],\n  \"n\": -1.5e3\n}";
        let (v, spans) = parse(text).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"a": [1, {"b/c": "xé😀"}], "n": -1.5e3})
        );
        assert_eq!(spans.at("/a"), Pos::new(2, 8));
        assert_eq!(spans.at("/a/1/b~1c"), Pos::new(2, 20));
        assert_eq!(spans.at("/n"), Pos::new(3, 8));
        // A pointer with no value of its own falls back to its parent.
        assert_eq!(spans.at("/a/1/nothing"), Pos::new(2, 12));
    }

    #[test]
    fn errors_say_where() {
        for (text, pos, msg) in [
            ("{\"a\": 1,}", (1, 9), "key"),
            ("{\"a\": 1, \"a\": 2}", (1, 10), "duplicate key `a`"),
            ("[1 2]", (1, 4), "`,` or `]`"),
            ("\n\n  tru", (3, 3), "JSON value"),
            ("\"abc", (1, 5), "unterminated"),
            ("{} x", (1, 4), "trailing"),
            ("\"\\ud800x\"", (1, 8), "surrogate"),
            ("01x", (1, 1), "number"),
        ] {
            let (p, m) = parse(text).unwrap_err();
            assert_eq!((p.line, p.column), pos, "{text:?}: {m}");
            assert!(m.contains(msg), "{text:?}: {m}");
        }
        let deep = "[".repeat(MAX_DEPTH + 2);
        assert!(parse(&deep).unwrap_err().1.contains("nested"));
    }
}
