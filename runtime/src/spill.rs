//! The spill folder: where the runtime keeps what it will not hold in a result — the full
//! text of a truncated block, and binary blocks (images, audio, resource blobs) over the
//! executor's bound, decoded into real files while the tool is still sending them.
//!
//! Files are created `create_new` and 0600 in a folder verified private, named
//! `<tool>-<call id>-<block>-<pid>-<32 random hex digits>.<ext>`, and pruned by one
//! retention rule each time one is written. A binary file is written as `.part` and renamed
//! once whole: a file with its final name is complete.
//!
//! The folder is one per user, shared by every process and session of that user: a name
//! is a key to what a call returned. Its 128 random bits make it unguessable (the pid and
//! call id only keep it readable), and this process remembers the names it wrote
//! ([`written_here`]), so a server hands out only those. A file is read only when it is a
//! regular file with one link, opened without following a symlink.

use crate::lock::Locked;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use std::time::Duration;

/// The most bytes of one block saved to a spill file; the note says when more was cut.
pub const MAX_SPILL_FILE_BYTES: usize = 16 << 20;
/// Spill files older than this are removed when a new one is written.
pub const SPILL_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);
/// When a new spill file is written, the oldest are removed until the folder holds at
/// most this much.
pub const MAX_SPILL_DIR_BYTES: u64 = 256 << 20;

/// The default spill folder: `$XDG_STATE_HOME/toolbind/spill`, else
/// `~/.local/state/toolbind/spill`, else `$TMPDIR/toolbind-<euid>/state/spill`.
pub fn default_spill_dir() -> PathBuf {
    crate::dirs::state_root().join("spill")
}

/// The file extensions the runtime writes for binary blocks, with their MIME types; any
/// other type is saved as `.bin`. `.txt` is a truncated text block; `.part` a binary file
/// still being written (or left by a runtime that died writing it).
const BINARY_TYPES: &[(&str, &str)] = &[
    ("png", "image/png"),
    ("jpg", "image/jpeg"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
    ("svg", "image/svg+xml"),
    ("wav", "audio/wav"),
    ("mp3", "audio/mpeg"),
    ("ogg", "audio/ogg"),
    ("flac", "audio/flac"),
    ("pdf", "application/pdf"),
    ("zip", "application/zip"),
    ("json", "application/json"),
    ("bin", "application/octet-stream"),
];

/// The extension a binary block of `mime` is saved with.
pub(crate) fn extension_for(mime: Option<&str>) -> &'static str {
    let mime = mime.map(|m| {
        m.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    });
    let mime = match mime.as_deref() {
        Some("audio/x-wav" | "audio/wave") => "audio/wav",
        Some("audio/mp3") => "audio/mpeg",
        Some(m) => m,
        None => "",
    };
    BINARY_TYPES
        .iter()
        .find(|(_, m)| *m == mime)
        .map_or("bin", |(ext, _)| ext)
}

/// The MIME type of a spill file, from its extension (`text/plain` for a text spill).
pub fn mime_type_of(name: &str) -> &'static str {
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    if ext == "txt" {
        return "text/plain";
    }
    BINARY_TYPES
        .iter()
        .find(|(e, _)| *e == ext)
        .map_or("application/octet-stream", |(_, m)| m)
}

fn is_ours(name: &str) -> bool {
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    ext == "txt" || ext == "part" || BINARY_TYPES.iter().any(|(e, _)| *e == ext)
}

/// A file-name-safe stem for one block of one call: the tool's name (when it is one path
/// component), the call id (its characters outside `[A-Za-z0-9_-]` replaced, at most 64),
/// the block, the pid, and 128 random bits: what makes the name unguessable.
fn stem(tool: &str, tool_call_id: &str, block: &str) -> Result<String, String> {
    // A tool of a hand-built registry skipped the loader's name rule: its name is not
    // joined as it is.
    let tool = if toolbind_codegen::model::path_component_problem(tool).is_none() {
        tool
    } else {
        "tool"
    };
    let id: String = tool_call_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    let key = crate::untrusted::random(16)
        .map_err(|e| format!("cannot name a spill file: /dev/urandom: {e}"))?;
    Ok(format!(
        "{tool}-{id}-{block}-{}-{}",
        std::process::id(),
        crate::untrusted::hex(&key)
    ))
}

/// The names of the spill files this process wrote, the newest [`MAX_REMEMBERED`].
static WRITTEN: std::sync::Mutex<Written> = std::sync::Mutex::new(Written {
    names: std::collections::BTreeSet::new(),
    order: std::collections::VecDeque::new(),
});

/// How many spill names a process remembers (the oldest forgotten first): about 2 MiB of
/// names. The 256 MiB folder holds fewer files than that unless they are tiny.
const MAX_REMEMBERED: usize = 16_384;

struct Written {
    names: std::collections::BTreeSet<String>,
    order: std::collections::VecDeque<String>,
}

fn remember(path: &Path) {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return;
    };
    let mut w = WRITTEN.locked();
    if w.names.insert(name.to_owned()) {
        w.order.push_back(name.to_owned());
    }
    while w.order.len() > MAX_REMEMBERED {
        if let Some(old) = w.order.pop_front() {
            w.names.remove(&old);
        }
    }
}

/// Whether this process wrote the spill file `name` (and remembers it): what a server
/// checks before it serves a file by a name a client sent. The folder is shared by every
/// process of the user; a name another process wrote, or a file planted there, is not
/// this process's to hand out.
pub fn written_here(name: &str) -> bool {
    WRITTEN.locked().names.contains(name)
}

fn create(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
}

/// Writes the full text of a truncated block (at most `max` bytes, the file saying when
/// more was cut) to a new `.txt` file, then applies the retention rule.
pub(crate) fn spill_text(
    dir: &Path,
    tool: &str,
    tool_call_id: &str,
    block: usize,
    text: &str,
    max: usize,
) -> Result<PathBuf, String> {
    crate::dirs::private_dir(dir).map_err(|e| e.to_string())?;
    let path = dir.join(format!(
        "{}.txt",
        stem(tool, tool_call_id, &block.to_string())?
    ));
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let written = create(&path).and_then(|mut f: File| {
        f.write_all(&text.as_bytes()[..end])?;
        if end < text.len() {
            write!(f, "\n[spill file cut at {max} bytes of {}]\n", text.len())?;
        }
        Ok(())
    });
    written.map_err(|e| format!("{}: {e}", path.display()))?;
    remember(&path);
    prune(dir, &path);
    Ok(path)
}

/// A binary block being decoded into a spill file as its base64 arrives.
pub(crate) struct BinarySpill {
    dir: PathBuf,
    part: PathBuf,
    stem: String,
    file: File,
    decoder: Base64Stream,
    buf: Vec<u8>,
    /// Decoded bytes written so far.
    pub(crate) bytes: u64,
}

impl BinarySpill {
    /// Starts a `.part` file for one block (`block` names it within the call).
    pub(crate) fn create(
        dir: &Path,
        tool: &str,
        tool_call_id: &str,
        block: &str,
    ) -> Result<Self, String> {
        crate::dirs::private_dir(dir).map_err(|e| e.to_string())?;
        let stem = stem(tool, tool_call_id, block)?;
        let part = dir.join(format!("{stem}.part"));
        let file = create(&part).map_err(|e| format!("{}: {e}", part.display()))?;
        Ok(BinarySpill {
            dir: dir.to_path_buf(),
            part,
            stem,
            file,
            decoder: Base64Stream::default(),
            buf: Vec::with_capacity(64 << 10),
            bytes: 0,
        })
    }

    /// Decodes one piece of the block's base64 text into the file.
    pub(crate) fn write(&mut self, piece: &str) -> Result<(), String> {
        self.buf.clear();
        self.decoder.feed(piece, &mut self.buf)?;
        self.flush()
    }

    fn flush(&mut self) -> Result<(), String> {
        self.file
            .write_all(&self.buf)
            .map_err(|e| format!("writing {}: {e}", self.part.display()))?;
        self.bytes += self.buf.len() as u64;
        Ok(())
    }

    /// Finishes the block: the last bytes are written and the file renamed to its final
    /// name, with the extension of `mime` (or of the MIME type a `data:` prefix named,
    /// returned). The retention rule runs after.
    pub(crate) fn finish(
        mut self,
        mime: Option<&str>,
    ) -> Result<(PathBuf, Option<String>), String> {
        self.buf.clear();
        let decoder = std::mem::take(&mut self.decoder);
        let prefix_mime = decoder.finish(&mut self.buf)?;
        self.flush()?;
        let ext = extension_for(mime.or(prefix_mime.as_deref()));
        let path = self.dir.join(format!("{}.{ext}", self.stem));
        // The `.part` name is ours (create_new): no link can stand at the final name
        // unless planted in our private folder, and rename replaces, never follows, it.
        std::fs::rename(&self.part, &path)
            .map_err(|e| format!("renaming {}: {e}", self.part.display()))?;
        self.part = PathBuf::new();
        remember(&path);
        prune(&self.dir, &path);
        Ok((path, prefix_mime))
    }
}

impl Drop for BinarySpill {
    /// A block that was refused, or whose call ended otherwise, leaves no file behind.
    fn drop(&mut self) {
        if !self.part.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.part);
        }
    }
}

/// The retention rule: spill files older than [`SPILL_RETENTION`] go, then the oldest
/// until the folder holds at most [`MAX_SPILL_DIR_BYTES`]. `keep` (the file just written)
/// stays. Only regular files with the names the runtime writes are touched.
fn prune(dir: &Path, keep: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = std::time::SystemTime::now();
    let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let name = e.file_name();
        let ours = name.to_str().is_some_and(is_ours);
        if !meta.is_file() || !ours || path == keep {
            continue;
        }
        let modified = meta.modified().unwrap_or(now);
        if now.duration_since(modified).unwrap_or_default() > SPILL_RETENTION {
            let _ = std::fs::remove_file(&path);
            continue;
        }
        // A `.part` being written by a call in flight is counted but not removed.
        if name.to_str().is_some_and(|n| n.ends_with(".part")) {
            continue;
        }
        files.push((modified, meta.len(), path));
    }
    let kept = std::fs::metadata(keep).map_or(0, |m| m.len());
    let mut total: u64 = files.iter().map(|f| f.1).sum::<u64>() + kept;
    files.sort();
    for (_, len, path) in files {
        if total <= MAX_SPILL_DIR_BYTES {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total -= len;
        }
    }
}

/// Why a spill file cannot be read by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// The name is not one the runtime writes (a path, `..`, a hidden or unknown file).
    NotASpillName,
    /// No such file (pruned, or never written).
    NotFound,
    /// Larger than [`MAX_SPILL_DIR_BYTES`]: not a file the runtime wrote.
    TooLarge(u64),
    /// Another I/O error, described.
    Io(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::NotASpillName => write!(f, "not the name of a spill file"),
            ReadError::NotFound => write!(
                f,
                "no such spill file (spill files are pruned after 7 days or past 256 MiB in all)"
            ),
            ReadError::TooLarge(n) => {
                write!(f, "the file is {n} bytes, more than a spill file holds")
            }
            ReadError::Io(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for ReadError {}

/// Reads the spill file `name` in `dir` — a name the runtime writes, one path component,
/// never a symlink, a regular file with one link — with its MIME type (from its extension). `name` is untrusted input
/// (a client's `toolbind://spill/<name>`): anything else is refused without touching the
/// file system outside `dir`.
pub fn read_spill(dir: &Path, name: &str) -> Result<(Vec<u8>, &'static str), ReadError> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let plain = !name.is_empty()
        && name.len() <= 255
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && is_ours(name)
        && !name.ends_with(".part");
    if !plain {
        return Err(ReadError::NotASpillName);
    }
    let path = dir.join(name);
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(&path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => ReadError::NotFound,
            _ if e.raw_os_error() == Some(nix::libc::ELOOP) => ReadError::NotASpillName,
            _ => ReadError::Io(format!("{}: {e}", path.display())),
        })?;
    let meta = file
        .metadata()
        .map_err(|e| ReadError::Io(format!("{}: {e}", path.display())))?;
    // One link only: a hard link planted under a spill name (to a key, a token) is not a
    // file the runtime wrote, whatever its name.
    use std::os::unix::fs::MetadataExt;
    if !meta.is_file() || meta.nlink() != 1 {
        return Err(ReadError::NotASpillName);
    }
    if meta.len() > MAX_SPILL_DIR_BYTES {
        return Err(ReadError::TooLarge(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    Read::by_ref(&mut file)
        .take(MAX_SPILL_DIR_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ReadError::Io(format!("{}: {e}", path.display())))?;
    Ok((bytes, mime_type_of(name)))
}

/// The `file://` URL of `path` (made absolute), percent-encoding bytes outside RFC 3986's
/// unreserved characters and `/`: how a binary block saved to the spill folder is linked.
pub fn file_url(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut url = String::from("file://");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'_' | b'.' | b'~') {
            url.push(b as char);
        } else {
            url.push_str(&format!("%{b:02X}"));
        }
    }
    url
}

/// The name of the spill file `uri` links to, when it is a [`file_url`] of a file directly
/// in `dir`: what a server turns into a link of its own (`toolbind serve`:
/// `toolbind://spill/<name>`).
pub fn spill_name<'u>(dir: &Path, uri: &'u str) -> Option<&'u str> {
    let base = file_url(dir);
    let name = uri
        .strip_prefix(base.trim_end_matches('/'))?
        .strip_prefix('/')?;
    (!name.is_empty() && !name.contains('/') && !name.contains('%')).then_some(name)
}

/// Standard base64 with padding.
pub fn base64_encode(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        let quad = [18, 12, 6, 0].map(|s| A[(n >> s) as usize & 63] as char);
        out.push(quad[0]);
        out.push(quad[1]);
        out.push(if c.len() > 1 { quad[2] } else { '=' });
        out.push(if c.len() > 2 { quad[3] } else { '=' });
    }
    out
}

/// A base64 decoder fed in pieces, with the repairs of
/// `exec::protocol`'s `base64_text`: a `data:…;base64,` prefix (its
/// MIME type kept), whitespace, the URL-safe alphabet (not mixed with the standard one),
/// missing or partial padding. Errors use the same words.
#[derive(Default)]
pub(crate) struct Base64Stream {
    /// Characters read so far (for error positions and the prefix rule).
    pos: u64,
    /// The start of the text, held until it is known whether it is a `data:` URL.
    head: Option<String>,
    mime: Option<String>,
    url_safe: bool,
    standard: bool,
    acc: u32,
    n: u8,
    pad: u8,
    digits: u64,
}

impl Base64Stream {
    pub(crate) fn feed(&mut self, piece: &str, out: &mut Vec<u8>) -> Result<(), String> {
        let mut piece = piece;
        let joined;
        if self.pos == 0 || self.head.is_some() {
            // The `data:` prefix may straddle pieces: hold the head until its comma.
            let mut head = self.head.take().unwrap_or_default();
            head.push_str(piece);
            if head.len() < 5 && "data:".starts_with(&head) {
                self.pos = 1;
                self.head = Some(head);
                return Ok(());
            }
            if head.starts_with("data:") {
                match head.split_once(',') {
                    Some((h, _)) if h.ends_with(";base64") => {
                        let mime = h["data:".len()..]
                            .trim_end_matches(";base64")
                            .split(';')
                            .next()
                            .unwrap_or("");
                        self.mime = (!mime.is_empty()).then(|| mime.to_owned());
                        let skip = h.len() + 1;
                        joined = head;
                        piece = &joined[skip..];
                        // Positions count from after the prefix, as `base64_text`'s do.
                        self.pos = 0;
                    }
                    Some(_) => {
                        return Err(
                            "is a data: URL that is not base64 (`;base64,` missing)".to_owned()
                        );
                    }
                    None if head.len() <= 512 => {
                        self.pos = 1;
                        self.head = Some(head);
                        return Ok(());
                    }
                    None => {
                        return Err(
                            "is a data: URL that is not base64 (`;base64,` missing)".to_owned()
                        );
                    }
                }
            } else {
                joined = head;
                piece = &joined;
                self.pos = 0;
            }
        }
        self.digits_of(piece, out)
    }

    fn digits_of(&mut self, piece: &str, out: &mut Vec<u8>) -> Result<(), String> {
        out.reserve(piece.len() / 4 * 3 + 3);
        for (i, c) in piece.char_indices() {
            let v = match c {
                'A'..='Z' => c as u32 - 'A' as u32,
                'a'..='z' => c as u32 - 'a' as u32 + 26,
                '0'..='9' => c as u32 - '0' as u32 + 52,
                '+' | '/' => {
                    self.standard = true;
                    if c == '+' { 62 } else { 63 }
                }
                '-' | '_' => {
                    self.url_safe = true;
                    if c == '-' { 62 } else { 63 }
                }
                ' ' | '\n' | '\r' | '\t' => continue,
                '=' => {
                    self.pad += 1;
                    if self.pad > 2 {
                        return Err(
                            "is not base64: `=` padding inside the data or more than two"
                                .to_owned(),
                        );
                    }
                    continue;
                }
                other => {
                    return Err(format!(
                        "is not base64: byte {} is {:?}",
                        self.pos + i as u64,
                        other.escape_debug().to_string()
                    ));
                }
            };
            if self.pad > 0 {
                return Err(
                    "is not base64: `=` padding inside the data or more than two".to_owned(),
                );
            }
            if self.url_safe && self.standard {
                return Err(
                    "is not base64: it mixes the standard (`+`, `/`) and URL-safe (`-`, `_`) alphabets"
                        .to_owned(),
                );
            }
            self.acc = (self.acc << 6) | v;
            self.n += 1;
            self.digits += 1;
            if self.n == 4 {
                let a = self.acc;
                out.extend_from_slice(&[(a >> 16) as u8, (a >> 8) as u8, a as u8]);
                self.acc = 0;
                self.n = 0;
            }
        }
        self.pos += piece.len() as u64;
        Ok(())
    }

    /// The last bytes; the MIME type a `data:` prefix named.
    pub(crate) fn finish(mut self, out: &mut Vec<u8>) -> Result<Option<String>, String> {
        if let Some(head) = self.head.take() {
            if head.starts_with("data:") {
                return Err("is a data: URL that is not base64 (`;base64,` missing)".to_owned());
            }
            // Short text that only looked like the start of `data:`.
            self.pos = 0;
            self.digits_of(&head, out)?;
        }
        if self.digits == 0 {
            return Err("is empty".to_owned());
        }
        let a = self.acc;
        match self.n {
            0 => {}
            1 => {
                return Err(format!(
                    "is not base64: {} characters cannot be whole bytes",
                    self.digits
                ));
            }
            2 => out.push((a >> 4) as u8),
            _ => out.extend_from_slice(&[(a >> 10) as u8, (a >> 2) as u8]),
        }
        Ok(self.mime)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(pieces: &[&str]) -> Result<(Vec<u8>, Option<String>), String> {
        let mut d = Base64Stream::default();
        let mut out = Vec::new();
        for p in pieces {
            d.feed(p, &mut out)?;
        }
        let mime = d.finish(&mut out)?;
        Ok((out, mime))
    }

    #[test]
    fn pieces_decode_as_the_whole_would() {
        let bytes: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        for len in [1, 2, 3, 998, 999, 1000] {
            let text = base64_encode(&bytes[..len]);
            for cut in [1, 2, 3, 5, 7, 64] {
                let pieces: Vec<&str> = text
                    .as_bytes()
                    .chunks(cut)
                    .map(|c| std::str::from_utf8(c).unwrap())
                    .collect();
                assert_eq!(decode(&pieces).unwrap().0, &bytes[..len], "{len}/{cut}");
            }
        }
    }

    #[test]
    fn the_repairs_of_whole_strings_apply_to_pieces() {
        assert_eq!(decode(&["aGk"]).unwrap().0, b"hi");
        assert_eq!(decode(&["aGk=="]).unwrap().0, b"hi");
        assert_eq!(decode(&["aG\nk="]).unwrap().0, b"hi");
        assert_eq!(decode(&["-_-_"]).unwrap().0, [0xfb, 0xff, 0xbf]);
        let (b, m) = decode(&["da", "ta:image/png;ba", "se64,aGk="]).unwrap();
        assert_eq!(
            (b.as_slice(), m.as_deref()),
            (&b"hi"[..], Some("image/png"))
        );
        assert!(
            decode(&["data:image/png,aGk="])
                .unwrap_err()
                .contains("not base64")
        );
        assert!(decode(&["+/-_"]).unwrap_err().contains("mixes"));
        assert!(
            decode(&["aGk=", "aGk="])
                .unwrap_err()
                .contains("padding inside")
        );
        assert!(decode(&["aGk*"]).unwrap_err().contains("byte 3"));
        assert!(
            decode(&["a"])
                .unwrap_err()
                .contains("cannot be whole bytes")
        );
        assert_eq!(decode(&[""]).unwrap_err(), "is empty");
        assert_eq!(decode(&["da"]).unwrap().0, [0x75]);
        assert_eq!(
            decode(&["data:image/png"]).unwrap_err(),
            "is a data: URL that is not base64 (`;base64,` missing)"
        );
    }

    #[test]
    fn names_are_unguessable_and_remembered_by_the_process_that_wrote_them() {
        let dir = tempfile::tempdir().unwrap();
        let spill = dir.path().join("spill");
        let a = spill_text(&spill, "t", "c", 0, "text", 100).unwrap();
        let b = spill_text(&spill, "t", "c", 0, "text", 100).unwrap();
        let name = |p: &Path| p.file_name().unwrap().to_str().unwrap().to_owned();
        assert_ne!(name(&a), name(&b));
        for n in [name(&a), name(&b)] {
            // `<tool>-<call>-<block>-<pid>-<32 hex digits>.txt`: 128 random bits.
            let key = n.strip_suffix(".txt").unwrap().rsplit('-').next().unwrap();
            assert!(
                key.len() == 32 && key.bytes().all(|c| c.is_ascii_hexdigit()),
                "{n}"
            );
            assert!(written_here(&n), "{n}");
        }
        // The name an earlier runtime gave the same call's file: not this process's.
        let guessed = format!("t-c-0-{}-0.txt", std::process::id());
        std::fs::write(spill.join(&guessed), "planted").unwrap();
        assert!(!written_here(&guessed));
    }

    #[test]
    fn a_hard_link_at_a_spill_name_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("id_ed25519");
        std::fs::write(&secret, b"private key").unwrap();
        std::fs::hard_link(&secret, dir.path().join("t-1-0-2-3.txt")).unwrap();
        assert_eq!(
            read_spill(dir.path(), "t-1-0-2-3.txt"),
            Err(ReadError::NotASpillName)
        );
        // Nor once the original is gone but another link stays.
        std::fs::hard_link(&secret, dir.path().join("t-1-0-2-4.txt")).unwrap();
        std::fs::remove_file(&secret).unwrap();
        assert_eq!(
            read_spill(dir.path(), "t-1-0-2-4.txt"),
            Err(ReadError::NotASpillName)
        );
    }

    #[test]
    fn only_names_the_runtime_writes_are_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t-1-0-2-3.png"), b"png").unwrap();
        std::fs::write(dir.path().join("secret.key"), b"no").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link.txt")).unwrap();
        assert_eq!(
            read_spill(dir.path(), "t-1-0-2-3.png").unwrap(),
            (b"png".to_vec(), "image/png")
        );
        for bad in [
            "secret.key",
            "../t-1-0-2-3.png",
            "/etc/passwd",
            ".hidden.txt",
            "a/b.txt",
            "x.part",
            "",
        ] {
            assert_eq!(
                read_spill(dir.path(), bad),
                Err(ReadError::NotASpillName),
                "{bad}"
            );
        }
        assert_eq!(
            read_spill(dir.path(), "link.txt"),
            Err(ReadError::NotASpillName)
        );
        assert_eq!(read_spill(dir.path(), "gone.txt"), Err(ReadError::NotFound));
        // A name with a newline; a FIFO and a folder planted under names the runtime writes
        // (the open does not block on the FIFO, and neither is a file).
        assert_eq!(
            read_spill(dir.path(), "a\nb.txt"),
            Err(ReadError::NotASpillName)
        );
        let fifo = dir.path().join("t-1-0-2-4.png");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        assert_eq!(
            read_spill(dir.path(), "t-1-0-2-4.png"),
            Err(ReadError::NotASpillName)
        );
        std::fs::create_dir(dir.path().join("t-1-0-2-5.txt")).unwrap();
        assert_eq!(
            read_spill(dir.path(), "t-1-0-2-5.txt"),
            Err(ReadError::NotASpillName)
        );
    }
}
