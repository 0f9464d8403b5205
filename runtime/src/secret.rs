//! Secrets: a wrapper for sensitive inputs (Debug and Display never show the value), and
//! the one reader of secret files (tokens, keys) that refuses what is not a private,
//! small, regular file before reading it.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub use crate::sensitive::REDACTED;

/// A sensitive value (`sensitive: true` in TOOL.md). It serialises transparently — the tool
/// needs the real value — but `Debug` and `Display` print [`REDACTED`].
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Secret<T>(T);

impl<T> Secret<T> {
    /// Wraps a value.
    pub const fn new(value: T) -> Self {
        Secret(value)
    }

    /// The real value. Named so every read of a secret is easy to find.
    pub fn expose(&self) -> &T {
        &self.0
    }

    /// The value, unwrapped.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> From<T> for Secret<T> {
    fn from(value: T) -> Self {
        Secret(value)
    }
}

impl From<&str> for Secret<String> {
    fn from(value: &str) -> Self {
        Secret(value.to_owned())
    }
}

impl<T> fmt::Debug for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl<T> fmt::Display for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl<T: Serialize> Serialize for Secret<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// A value that does not fit is refused without quoting it: serde's message would (`invalid
/// type: integer \`123456789\``), and a secret inside a list or object has no field of its
/// own to hide it.
impl<'de, T: Deserialize<'de>> Deserialize<'de> for Secret<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        T::deserialize(d)
            .map(Secret)
            .map_err(|_| D::Error::custom("invalid value (sensitive, not shown)"))
    }
}

/// A secret file's content, read by [`read_secret_file`].
#[derive(Clone)]
pub struct SecretFile {
    bytes: Secret<Vec<u8>>,
    mode: u32,
}

impl SecretFile {
    /// The file's bytes, as read (not trimmed).
    pub fn bytes(&self) -> &[u8] {
        self.bytes.expose()
    }

    /// The bytes, unwrapped.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes.into_inner()
    }

    /// The file's permission bits (`st_mode & 0o7777`), from the `fstat` of the file read.
    pub fn mode(&self) -> u32 {
        self.mode
    }

    /// Whether the mode gives its group or other users any access (`mode & 0o077`): the
    /// caller warns (`chmod 600 it`), in its own words; the file was still read.
    pub fn readable_by_others(&self) -> bool {
        self.mode & 0o077 != 0
    }
}

impl fmt::Debug for SecretFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretFile")
            .field("bytes", &self.bytes)
            .field("mode", &format_args!("{:o}", self.mode))
            .finish()
    }
}

/// Why [`read_secret_file`] refused a file. Every message names the file (as `what` and
/// its path) and never holds any of its content.
#[derive(Debug)]
#[non_exhaustive]
pub enum SecretFileError {
    /// It could not be opened, `fstat`ed or read.
    Io {
        /// What the file is for, as the caller named it.
        what: String,
        /// The path given.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// It is not a regular file; `kind` says what it is (`a FIFO (named pipe)`, `a folder`,
    /// `a device`, `a socket`).
    NotRegular {
        /// What the file is for, as the caller named it.
        what: String,
        /// The path given.
        path: PathBuf,
        /// What it is instead.
        kind: &'static str,
    },
    /// It belongs to another user than this process's effective user (or root): that user
    /// could change the secret under us.
    Owner {
        /// What the file is for, as the caller named it.
        what: String,
        /// The path given.
        path: PathBuf,
        /// Its owner.
        uid: u32,
        /// This process's effective user.
        euid: u32,
    },
    /// It holds more than `max` bytes (`size` from its `fstat`; a file that grows while it
    /// is read reports `max + 1`). Nothing past `max + 1` bytes is ever read.
    TooBig {
        /// What the file is for, as the caller named it.
        what: String,
        /// The path given.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The cap.
        max: u64,
    },
    /// Other users may write it (`mode & 0o022`), or it is reached through a link another
    /// user owns, or it sits in a folder any user may write without the sticky bit: another
    /// user could change the secret, or put a file of their choosing (a link to a
    /// world-readable file whose content they know) in its place. `why` says which.
    Changeable {
        /// What the file is for, as the caller named it.
        what: String,
        /// The path given.
        path: PathBuf,
        /// Which of the three, in words, with the fix.
        why: String,
    },
}

impl fmt::Display for SecretFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SecretFileError::Io { what, path, source } => {
                write!(f, "cannot read {what} {}: {source}", path.display())
            }
            SecretFileError::NotRegular { what, path, kind } => write!(
                f,
                "{what} {} is {kind}, not a regular file; refusing to read it",
                path.display()
            ),
            SecretFileError::Owner {
                what,
                path,
                uid,
                euid,
            } => write!(
                f,
                "{what} {} belongs to user {uid}, not to this user ({euid}) or root; refusing to read a secret another user can change",
                path.display()
            ),
            SecretFileError::TooBig {
                what,
                path,
                size,
                max,
            } => write!(
                f,
                "{what} {} is {size} bytes, over the {max}-byte limit",
                path.display()
            ),
            SecretFileError::Changeable { what, path, why } => write!(
                f,
                "{what} {} {why}; refusing to read a secret another user can change",
                path.display()
            ),
        }
    }
}

impl std::error::Error for SecretFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SecretFileError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Reads a secret file (a bearer token, a key) of at most `max` bytes; `what` names it in
/// errors (`--auth-token-file`, `the token file`).
///
/// Opened with `O_NONBLOCK | O_CLOEXEC`, so a FIFO or a device never blocks the caller;
/// then the opened descriptor's `fstat` decides, before anything is read: it must be a
/// regular file, owned by this process's effective user or by root, of at most `max` bytes
/// (a 200 MB file is refused without reading it). At most `max + 1` bytes are then read. A
/// mode open to other users is not an error: [`SecretFile::readable_by_others`] tells the
/// caller to warn.
///
/// ```no_run
/// let key = toolbind::secret::read_secret_file("key".as_ref(), "the key file", 4096)?;
/// if key.readable_by_others() {
///     eprintln!("warning: the key file is readable by other users (chmod 600 it)");
/// }
/// # Ok::<(), toolbind::secret::SecretFileError>(())
/// ```
pub fn read_secret_file(path: &Path, what: &str, max: u64) -> Result<SecretFile, SecretFileError> {
    use std::io::Read;
    use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
    let io = |source| SecretFileError::Io {
        what: what.to_owned(),
        path: path.to_owned(),
        source,
    };
    let mut file = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(path)
        .map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    let ty = meta.file_type();
    if !ty.is_file() {
        let kind = if ty.is_dir() {
            "a folder"
        } else if ty.is_fifo() {
            "a FIFO (named pipe)"
        } else if ty.is_socket() {
            "a socket"
        } else if ty.is_char_device() || ty.is_block_device() {
            "a device"
        } else {
            "a special file"
        };
        return Err(SecretFileError::NotRegular {
            what: what.to_owned(),
            path: path.to_owned(),
            kind,
        });
    }
    let euid = nix::unistd::geteuid().as_raw();
    if meta.uid() != euid && meta.uid() != 0 {
        return Err(SecretFileError::Owner {
            what: what.to_owned(),
            path: path.to_owned(),
            uid: meta.uid(),
            euid,
        });
    }
    if let Some(why) = changeable(path, meta.mode(), euid) {
        return Err(SecretFileError::Changeable {
            what: what.to_owned(),
            path: path.to_owned(),
            why,
        });
    }
    let too_big = |size| SecretFileError::TooBig {
        what: what.to_owned(),
        path: path.to_owned(),
        size,
        max,
    };
    if meta.len() > max {
        return Err(too_big(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    (&mut file)
        .take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > max {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(SecretFile {
        bytes: Secret::new(bytes),
        mode: meta.mode() & 0o7777,
    })
}

/// Why another user could change the secret at `path` (whose opened file has `mode`), if
/// they could: the file is group- or other-writable; the path's last component is a link
/// another user owns; or the folder holding it is writable by every user without the
/// sticky bit (they could swap the file for a link to a root-owned file they can read).
/// Links owned by this user or root are followed (Kubernetes mounts its secrets as links).
fn changeable(path: &Path, mode: u32, euid: u32) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    if mode & 0o022 != 0 {
        return Some(format!(
            "can be written by other users (mode {:o}: chmod go-w, or 600)",
            mode & 0o7777
        ));
    }
    if let Ok(link) = std::fs::symlink_metadata(path)
        && link.file_type().is_symlink()
        && link.uid() != euid
        && link.uid() != 0
    {
        return Some(format!(
            "is a link owned by user {}, not by this user ({euid}) or root",
            link.uid()
        ));
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match std::fs::metadata(folder) {
        Ok(dir) if dir.mode() & 0o002 != 0 && dir.mode() & 0o1000 == 0 => Some(format!(
            "is in {}, a folder every user can write (mode {:o}, no sticky bit): move it to a folder only you can write",
            folder.display(),
            dir.mode() & 0o7777
        )),
        _ => None,
    }
}

/// Sensitive values shorter than this many characters are not redacted from outbound
/// text: replacing every `1234` or `true` in a result would corrupt ordinary text and
/// still not hide a value that short. Keep secrets at least this long.
pub const MIN_REDACTED_CHARS: usize = 6;

/// The values of the sensitive inputs of one call, as the tool sees them.
pub(crate) fn secrets_of(
    tool: &toolbind_codegen::model::ToolSpec,
    params: &serde_json::Map<String, serde_json::Value>,
) -> Vec<String> {
    crate::sensitive::sensitive_texts(tool, params)
        .into_iter()
        .filter(|s| s.chars().count() >= MIN_REDACTED_CHARS)
        .collect()
}

/// Replaces sensitive values in everything that leaves a call. Each value is looked for as
/// is and in its JSON-escaped forms (`"` -> `\"`, escaped twice for JSON inside JSON, and
/// with non-ASCII as `\uXXXX` as Python's `json.dumps` writes it), longest first.
#[derive(Debug, Clone, Default)]
pub(crate) struct Redactor {
    needles: Vec<String>,
}

impl Redactor {
    pub(crate) fn new(values: &[String]) -> Self {
        let mut needles = Vec::new();
        for v in values {
            if v.chars().count() < MIN_REDACTED_CHARS {
                continue;
            }
            let once = json_escape(v, false);
            let twice = json_escape(&once, false);
            let ascii = json_escape(v, true);
            let ascii_twice = json_escape(&ascii, true);
            needles.extend([v.clone(), once, twice, ascii, ascii_twice]);
        }
        needles.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        needles.dedup();
        Redactor { needles }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// `text` with every needle replaced by [`REDACTED`].
    pub(crate) fn text(&self, text: &str) -> String {
        let mut out = text.to_owned();
        self.in_place(&mut out);
        out
    }

    pub(crate) fn in_place(&self, text: &mut String) {
        for n in &self.needles {
            if text.contains(n.as_str()) {
                *text = text.replace(n.as_str(), REDACTED);
            }
        }
    }

    /// Every string (and object key) in `value`; a number equal to a secret becomes the
    /// string [`REDACTED`].
    pub(crate) fn value(&self, value: &mut serde_json::Value) {
        use serde_json::Value;
        match value {
            Value::String(s) => self.in_place(s),
            Value::Number(n) => {
                if self.needles.iter().any(|x| *x == n.to_string()) {
                    *value = Value::String(REDACTED.into());
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.value(v)),
            Value::Object(map) => {
                let old = std::mem::take(map);
                for (mut k, mut v) in old {
                    self.in_place(&mut k);
                    self.value(&mut v);
                    map.insert(k, v);
                }
            }
            Value::Bool(_) | Value::Null => {}
        }
    }

    pub(crate) fn content(&self, content: &mut [crate::result::Content]) {
        use crate::result::{Content, ResourceContents};
        for block in content {
            match block {
                Content::Text { text } => self.in_place(text),
                Content::Resource { resource } => {
                    self.in_place(&mut resource.uri);
                    if let ResourceContents::Text { text } = &mut resource.contents {
                        self.in_place(text);
                    }
                }
                Content::ResourceLink(l) => {
                    self.in_place(&mut l.uri);
                    self.in_place(&mut l.name);
                    for t in [&mut l.title, &mut l.description].into_iter().flatten() {
                        self.in_place(t);
                    }
                }
                // Base64 data: a secret in it is not its text.
                Content::Image { .. } | Content::Audio { .. } => {}
            }
        }
    }

    /// The text blocks and `details` of a result.
    pub(crate) fn result(&self, result: &mut crate::result::ToolResult) {
        if self.is_empty() {
            return;
        }
        self.content(&mut result.content);
        if let Some(d) = &mut result.details {
            self.value(d);
        }
    }
}

/// The body of the JSON string literal of `s` (no quotes); `ascii` escapes everything
/// beyond ASCII as `\uXXXX` (UTF-16 units, lowercase hex, as Python writes them).
fn json_escape(s: &str, ascii: bool) -> String {
    let quoted = serde_json::to_string(s).unwrap_or_default();
    let body = &quoted[1..quoted.len().saturating_sub(1).max(1)];
    if !ascii {
        return body.to_owned();
    }
    let mut out = String::with_capacity(body.len());
    for c in body.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redactor_finds_raw_and_json_escaped_forms_and_skips_short_values() {
        let r = Redactor::new(&["pa\"ss\\wörd".into(), "12345".into()]);
        let raw = "x pa\"ss\\wörd y";
        assert_eq!(r.text(raw), "x [REDACTED] y");
        let json = serde_json::to_string(&serde_json::json!({"t": "pa\"ss\\wörd"})).unwrap();
        assert!(!r.text(&json).contains("ss"), "{}", r.text(&json));
        let twice = serde_json::to_string(&json).unwrap();
        assert!(!r.text(&twice).contains("ss"), "{}", r.text(&twice));
        assert_eq!(r.text("pa\\\"ss\\\\w\\u00f6rd"), "[REDACTED]");
        // Too short to redact without corrupting ordinary text.
        assert_eq!(r.text("id 12345"), "id 12345");
        let mut v = serde_json::json!({"pa\"ss\\wörd": [1, "a pa\"ss\\wörd"]});
        r.value(&mut v);
        assert_eq!(v, serde_json::json!({"[REDACTED]": [1, "a [REDACTED]"]}));
    }

    #[test]
    fn secrets_are_redacted_from_resources_and_links_too() {
        use crate::result::{Content, EmbeddedResource, ResourceLink};
        let r = Redactor::new(&["hunter2-very-secret".into()]);
        let mut link = ResourceLink::new("https://x/?k=hunter2-very-secret", "n");
        link.description = Some("key hunter2-very-secret".into());
        let mut content = vec![
            Content::Resource {
                resource: EmbeddedResource::text("file:///t", "the key is hunter2-very-secret"),
            },
            Content::ResourceLink(link),
        ];
        r.content(&mut content);
        let json = serde_json::to_string(&content).unwrap();
        assert!(!json.contains("hunter2"), "{json}");
        assert_eq!(json.matches("[REDACTED]").count(), 3, "{json}");
    }

    #[test]
    fn a_value_that_does_not_fit_is_refused_without_quoting_it() {
        for v in [
            serde_json::json!(123456789),
            serde_json::json!(["hunter22"]),
        ] {
            let e = serde_json::from_value::<Secret<String>>(v.clone())
                .unwrap_err()
                .to_string();
            assert!(!e.contains("123456789") && !e.contains("hunter22"), "{e}");
            assert!(e.contains("sensitive, not shown"), "{e}");
        }
        // Inside a list, where no field of its own hides it.
        let e = serde_json::from_value::<Vec<Secret<String>>>(serde_json::json!(["ok", 987654321]))
            .unwrap_err()
            .to_string();
        assert!(!e.contains("987654321"), "{e}");
    }

    #[test]
    fn debug_and_display_redact() {
        let s = Secret::new("hunter2-very-secret".to_owned());
        assert_eq!(format!("{s:?}"), REDACTED);
        assert_eq!(format!("{s}"), REDACTED);
        assert_eq!(format!("{:?}", Some(&s)), format!("Some({REDACTED})"));
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            "\"hunter2-very-secret\""
        );
    }

    #[test]
    fn a_secret_file_is_read_and_its_mode_reported() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "s3cret\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let f = read_secret_file(&path, "the token file", 64).unwrap();
        assert_eq!(f.bytes(), b"s3cret\n");
        assert!(!f.readable_by_others());
        assert!(!format!("{f:?}").contains("s3cret"));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let f = read_secret_file(&path, "the token file", 64).unwrap();
        assert!(f.readable_by_others(), "{:o}", f.mode());
        assert_eq!(f.into_bytes(), b"s3cret\n");
        // Exactly at the cap is read; one byte over is not.
        assert!(read_secret_file(&path, "the token file", 7).is_ok());
        let e = read_secret_file(&path, "the token file", 6).unwrap_err();
        assert!(
            matches!(
                e,
                SecretFileError::TooBig {
                    size: 7,
                    max: 6,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn special_big_and_missing_secret_files_are_refused_without_reading() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        // No writer: a blocking open would hang here.
        let e = read_secret_file(&fifo, "--auth-token-file", 4096).unwrap_err();
        assert!(
            e.to_string()
                .contains("a FIFO (named pipe), not a regular file"),
            "{e}"
        );
        assert!(e.to_string().contains(&fifo.display().to_string()), "{e}");
        let e = read_secret_file(dir.path(), "--auth-token-file", 4096).unwrap_err();
        assert!(
            matches!(
                e,
                SecretFileError::NotRegular {
                    kind: "a folder",
                    ..
                }
            ),
            "{e}"
        );
        let big = dir.path().join("big");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(200 << 20)
            .unwrap();
        let e = read_secret_file(&big, "the token file", 64 << 10).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "the token file {} is 209715200 bytes, over the 65536-byte limit",
                big.display()
            )
        );
        let e = read_secret_file(&dir.path().join("none"), "the token file", 64).unwrap_err();
        assert!(
            e.to_string().starts_with("cannot read the token file"),
            "{e}"
        );
        assert!(std::error::Error::source(&e).is_some());
    }

    #[test]
    fn a_secret_file_of_another_user_is_refused() {
        if !nix::unistd::geteuid().is_root() {
            // Only root can give a file away (CI runs the suite as root); as another user
            // this case is covered by CI alone.
            eprintln!("skipped: not root, cannot chown a file to another user");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "s3cret").unwrap();
        std::os::unix::fs::chown(&path, Some(65534), None).unwrap();
        let e = read_secret_file(&path, "the token file", 64).unwrap_err();
        assert!(
            matches!(
                e,
                SecretFileError::Owner {
                    uid: 65534,
                    euid: 0,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("belongs to user 65534"), "{e}");
        // Root's own files are fine for any reader.
        std::os::unix::fs::chown(&path, Some(0), None).unwrap();
        assert!(read_secret_file(&path, "the token file", 64).is_ok());
    }

    #[test]
    fn a_secret_others_can_change_or_replace_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path, m| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "s3cret").unwrap();
        // Writable by the group or by everyone: refused, with the fix.
        for m in [0o620, 0o602, 0o666] {
            mode(&path, m).unwrap();
            let e = read_secret_file(&path, "the token file", 64).unwrap_err();
            assert!(
                matches!(e, SecretFileError::Changeable { .. }),
                "{m:o}: {e}"
            );
            assert!(
                e.to_string().contains("can be written by other users"),
                "{e}"
            );
        }
        mode(&path, 0o600).unwrap();
        // In a folder every user can write, without the sticky bit: anyone could put a
        // link to a file whose content they know in its place.
        mode(dir.path(), 0o777).unwrap();
        let e = read_secret_file(&path, "the token file", 64).unwrap_err();
        assert!(
            e.to_string().contains("a folder every user can write"),
            "{e}"
        );
        // With the sticky bit (as /tmp), only the owner may replace the file.
        mode(dir.path(), 0o1777).unwrap();
        assert!(read_secret_file(&path, "the token file", 64).is_ok());
        mode(dir.path(), 0o700).unwrap();
        // A link this user owns is followed (Kubernetes mounts its secrets as links).
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert_eq!(
            read_secret_file(&link, "the token file", 64)
                .unwrap()
                .bytes(),
            b"s3cret"
        );
        if nix::unistd::geteuid().is_root() {
            // A link another user owns, even to a file root owns, is not.
            std::os::unix::fs::lchown(&link, Some(65534), None).unwrap();
            let e = read_secret_file(&link, "the token file", 64).unwrap_err();
            assert!(e.to_string().contains("a link owned by user 65534"), "{e}");
        } else {
            eprintln!("skipped the other user's link: not root, cannot lchown a link away");
        }
    }
}
