//! The bearer token: where it comes from (a file, `$TOOLBIND_TOKEN`, or one generated into
//! a private file), and the 401 answer to a request without it.

use std::io::{Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Response, StatusCode};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::exit::Failure;
use crate::serve::config::Http;

use super::body::UNAUTHORIZED;
use super::body::rpc_error;
use super::{HttpBody, TOKEN_ENV, log};

/// The largest `--auth-token-file` read (as for an MCP config's `bearerTokenFile`).
const MAX_TOKEN_FILE: u64 = 64 * 1024;

/// The bearer token, kept only as its SHA-256 (compared in constant time).
pub(super) struct Token {
    digest: [u8; 32],
    /// Where it came from, for the log: never the token itself.
    pub(super) source: String,
}

impl Token {
    pub(super) fn load(opts: &Http) -> Result<Token, Failure> {
        let (token, source) = if let Some(path) = &opts.auth_token_file {
            // The one reader of secret files: a FIFO, a folder, a big file or another
            // user's file is refused from its fstat, before anything is read.
            let file =
                toolbind::secret::read_secret_file(path, "--auth-token-file", MAX_TOKEN_FILE)
                    .map_err(|e| Failure::usage(e.to_string()))?;
            if file.readable_by_others() {
                log(&format!(
                    "warning: {} is readable by other users (chmod 600 it)",
                    path.display()
                ));
            }
            let text = String::from_utf8(file.into_bytes()).map_err(|_| {
                Failure::usage(format!(
                    "cannot read --auth-token-file {}: stream did not contain valid UTF-8",
                    path.display()
                ))
            })?;
            (text, format!("from {}", path.display()))
        } else if let Some(t) = std::env::var_os(TOKEN_ENV).filter(|t| !t.is_empty()) {
            (
                t.to_string_lossy().into_owned(),
                format!("from ${TOKEN_ENV}"),
            )
        } else {
            let path = default_token_file()?;
            let (token, new) = generated_token(&path)?;
            (
                token,
                format!(
                    "{} {} (mode 0600); clients send `Authorization: Bearer <its content>`",
                    if new { "generated into" } else { "reused from" },
                    path.display()
                ),
            )
        };
        let token = token.trim();
        if token.is_empty() {
            return Err(Failure::usage(format!(
                "the bearer token ({source}) is empty"
            )));
        }
        // RFC 6750's token68: what an `Authorization: Bearer` header can carry. A token
        // with a space or a second line could never be sent.
        let token68 = |c: char| c.is_ascii_alphanumeric() || "-._~+/".contains(c);
        if !token.trim_end_matches('=').chars().all(token68) {
            return Err(Failure::usage(format!(
                "the bearer token ({source}) has characters an `Authorization: Bearer` header cannot carry (whitespace, a second line, control characters, ...): use one line of letters, digits and -._~+/ (and trailing =)"
            )));
        }
        if token.len() < 16 {
            log("warning: the bearer token is shorter than 16 characters: easy to guess");
        }
        Ok(Token {
            digest: Sha256::digest(token.as_bytes()).into(),
            source,
        })
    }

    /// The 401 answer, unless the request carries `Authorization: Bearer <the token>`.
    pub(super) fn refusal(&self, headers: &HeaderMap) -> Option<Response<HttpBody>> {
        let presented = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                let (scheme, rest) = v.trim().split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
            });
        let (message, challenge) = match presented {
            Some(t) if ct_eq(&Sha256::digest(t.as_bytes()).into(), &self.digest) => return None,
            Some(_) => (
                "Unauthorized: the bearer token is not this server's",
                r#"Bearer realm="toolbind", error="invalid_token""#,
            ),
            None => (
                "Unauthorized: send `Authorization: Bearer <token>` (toolbind serve --auth-token-file, $TOOLBIND_TOKEN or the generated token file)",
                r#"Bearer realm="toolbind""#,
            ),
        };
        let mut r = rpc_error(StatusCode::UNAUTHORIZED, Value::Null, UNAUTHORIZED, message);
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static(challenge),
        );
        Some(r)
    }
}

/// Equality of two digests in time independent of where they differ.
fn ct_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let diff = a
        .iter()
        .zip(b)
        .fold(0u8, |acc, (x, y)| acc | std::hint::black_box(x ^ y));
    std::hint::black_box(diff) == 0
}

/// `http-token` in [`toolbind::dirs::runtime_root`]: `$XDG_RUNTIME_DIR/toolbind`, else the
/// state root (`$XDG_STATE_HOME/toolbind`, `~/.local/state/toolbind`, or the per-user
/// `$TMPDIR/toolbind-<euid>/state`).
fn default_token_file() -> Result<PathBuf, Failure> {
    Ok(toolbind::dirs::runtime_root().join("http-token"))
}

/// The token in `path` if it is a private file holding one; else a new random token
/// written there (0600, in a 0700 folder). Returns it and whether it is new.
fn generated_token(path: &Path) -> Result<(String, bool), Failure> {
    let fail = |what: &str, e: std::io::Error| {
        Failure::failed(format!("cannot {what} {}: {e}", path.display()))
    };
    use std::os::unix::fs::MetadataExt;
    let me = nix::unistd::geteuid().as_raw();
    let dir = path.parent().unwrap_or(Path::new("."));
    // The folder must be ours and private, reached without following a link: in a
    // folder others can write, someone else could have planted the token (or swap it).
    toolbind::dirs::private_dir(dir).map_err(|e| {
        Failure::failed(format!(
            "{e} (the folder of the generated token: pass --auth-token-file or set {TOKEN_ENV})"
        ))
    })?;
    let existing = || {
        let m = std::fs::symlink_metadata(path).ok()?;
        // Never a FIFO or a link: a FIFO named http-token would block the start.
        let text = toolbind_codegen::read_regular_file_no_follow(path)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())?;
        let token = text.trim();
        (m.is_file()
            && m.uid() == me
            && m.permissions().mode() & 0o077 == 0
            && token.len() >= 32
            && token.chars().all(|c| c.is_ascii_hexdigit()))
        .then(|| token.to_owned())
    };
    if let Some(token) = existing() {
        return Ok((token, false));
    }
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| fail("read random bytes for", e))?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let tmp = path.with_extension(format!("tmp{}-{}", std::process::id(), &token[..8]));
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(|e| fail("write", e))?;
    f.write_all(format!("{token}\n").as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(|e| fail("write", e))?;
    // Two servers starting at once must not each write a token and leave one of them
    // answering with a token the file no longer holds: the token is put in place only
    // where there is none (a link fails if the file exists), else the other's is used.
    // A file that is there but unusable (not private, not a token) is replaced.
    let placed = match std::fs::hard_link(&tmp, path) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match existing() {
            Some(theirs) => {
                let _ = std::fs::remove_file(&tmp);
                return Ok((theirs, false));
            }
            None => std::fs::rename(&tmp, path),
        },
        linked => linked.and_then(|()| std::fs::remove_file(&tmp)),
    };
    placed.map_err(|e| fail("write", e))?;
    Ok((token, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn a_fifo_where_the_generated_token_lives_is_replaced_not_read() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("toolbind");
        std::fs::create_dir(&dir).unwrap();
        let path = dir.join("http-token");
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        // Reading a FIFO with no writer would block here forever.
        let (token, new) = generated_token(&path).unwrap();
        assert!(new && token.len() >= 32);
        assert!(std::fs::symlink_metadata(&path).unwrap().is_file());
    }

    #[test]
    fn tokens_compare_whole() {
        let t = Token {
            digest: Sha256::digest(b"s3cret-s3cret-s3cret").into(),
            source: String::new(),
        };
        let auth = |v: &str| headers(&[("authorization", v)]);
        assert!(t.refusal(&auth("Bearer s3cret-s3cret-s3cret")).is_none());
        assert!(t.refusal(&auth("bearer  s3cret-s3cret-s3cret ")).is_none());
        for bad in [
            "Bearer s3cret",
            "Bearer s3cret-s3cret-s3cret!",
            "Basic s3cret-s3cret-s3cret",
            "",
        ] {
            let r = t.refusal(&auth(bad)).unwrap();
            assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
            assert!(
                r.headers()[header::WWW_AUTHENTICATE]
                    .to_str()
                    .unwrap()
                    .starts_with("Bearer")
            );
        }
        assert!(t.refusal(&HeaderMap::new()).is_some());
    }

    #[test]
    fn a_generated_token_is_private_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("toolbind/http-token");
        let (a, new) = generated_token(&path).unwrap();
        assert!(new);
        assert_eq!(a.len(), 64);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        assert_eq!(generated_token(&path).unwrap(), (a.clone(), false));
        // A file others can read is not trusted: a new token replaces it.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let (b, new) = generated_token(&path).unwrap();
        assert!(new && b != a);
    }

    #[test]
    fn servers_starting_together_share_one_generated_token() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("toolbind/http-token");
        let tokens: Vec<String> = std::thread::scope(|s| {
            let starts: Vec<_> = (0..8)
                .map(|_| s.spawn(|| generated_token(&path).unwrap().0))
                .collect();
            starts.into_iter().map(|t| t.join().unwrap()).collect()
        });
        let file = std::fs::read_to_string(&path).unwrap();
        assert!(
            tokens.iter().all(|t| *t == file.trim()),
            "{tokens:?} {file}"
        );
        // No temporary file is left behind.
        let left: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["http-token"]);
    }
}
