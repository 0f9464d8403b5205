//! Random ids and keys for what `serve` hands out (task ids, 2026-07-28 calls, the
//! replica, a drawn sealing key), and how logs show an id.

/// `n` random bytes; `bytes` as hex digits: the runtime's, which names spill files with
/// them too.
pub(crate) use toolbind::untrusted::{hex, random};

/// 128 random bits, as 32 hex digits.
pub(crate) fn new_id() -> std::io::Result<String> {
    random(16).map(|b| hex(&b))
}

/// An id as logs show it: its first 8 digits. A task's id is a key to its result for
/// anyone with the server's token; a log line is no place for the whole key.
pub(crate) fn short(id: &str) -> String {
    let mut s: String = id.chars().take(8).collect();
    if id.chars().nth(8).is_some() {
        s.push('…');
    }
    s
}
