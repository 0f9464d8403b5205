//! Where OAuth credentials live: one file per protected resource in the token folder,
//! found by the resource's canonical URL (never by a config's server name), written
//! whole (temp file, 0600, rename) and read through the one secret-file reader; and the
//! lock that makes one refresh or login at a time, across processes, per resource.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::transport::auth::AuthorizationMetadata;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::OAuthError;

/// The largest credential file read (metadata, a client, two tokens).
const MAX_FILE: u64 = 256 * 1024;

/// A resource server's URL as tokens are kept and matched: scheme and host lowercase,
/// the default port dropped, no fragment, no trailing `/` but at the root, the query
/// kept (two tenants told apart by a query are two resources). `None` for what is not
/// an http(s) URL.
pub(crate) fn canonical(url: &str) -> Option<String> {
    let mut u = url::Url::parse(url).ok()?;
    if !matches!(u.scheme(), "http" | "https") || u.host_str().is_none() {
        return None;
    }
    u.set_fragment(None);
    let _ = u.set_username("");
    let _ = u.set_password(None);
    let path = u.path().trim_end_matches('/').to_owned();
    u.set_path(if path.is_empty() { "/" } else { &path });
    let mut s = u.to_string();
    if u.path() == "/" && u.query().is_none() {
        s.pop();
    }
    Some(s)
}

/// How the client is known to the authorization server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum ClientKind {
    /// A client id (and secret) the user registered and configured.
    PreRegistered,
    /// A Client ID Metadata Document URL used as the client id.
    MetadataDocument,
    /// Registered by toolbind (Dynamic Client Registration).
    Registered,
}

/// The client as the authorization server knows it.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct Client {
    pub(crate) id: String,
    /// A registered client's secret (a configured one is read from its source each time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) secret: Option<String>,
    pub(crate) redirect_uri: String,
    pub(crate) kind: ClientKind,
}

/// One resource's credentials: what a restart needs to use and refresh them without
/// discovery.
/// The version of the credential file's format.
pub(crate) const FORMAT: u32 = 1;

#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct Record {
    /// [`FORMAT`].
    #[serde(rename = "v")]
    pub(crate) format: u32,
    /// The canonical URL of the resource (the file's key, checked on read).
    pub(crate) resource: String,
    /// The authorization server's issuer (its metadata's `issuer`).
    pub(crate) issuer: Option<String>,
    /// The `resource` (RFC 8707) the token was asked for (the protected-resource
    /// metadata's): sent again with each refresh.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) indicator: Option<String>,
    pub(crate) metadata: AuthorizationMetadata,
    pub(crate) client: Client,
    pub(crate) access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) refresh_token: Option<String>,
    /// Seconds since the epoch; `None` when the server gave no `expires_in` (then the
    /// token is used until the server refuses it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) expires_at: Option<u64>,
    /// When the token came (seconds since the epoch): a short-lived token is refreshed
    /// at half its life rather than `margin` before its end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) received_at: Option<u64>,
    #[serde(default)]
    pub(crate) scopes: Vec<String>,
    /// Whether this token came from the client-credentials grant (renewed by the grant,
    /// with no person).
    #[serde(default)]
    pub(crate) client_credentials: bool,
}

impl std::fmt::Debug for Record {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Record")
            .field("resource", &self.resource)
            .field("issuer", &self.issuer)
            .field("client_id", &self.client.id)
            .field("expires_at", &self.expires_at)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Record {
    /// Whether the token is still good for `margin`, or half its life when that is
    /// shorter (an unknown expiry is good).
    pub(crate) fn fresh(&self, margin: Duration) -> bool {
        let Some(at) = self.expires_at else {
            return true;
        };
        let half = self
            .received_at
            .map_or(u64::MAX, |got| at.saturating_sub(got) / 2);
        at > now().saturating_add(margin.as_secs().min(half))
    }
}

/// The token folder and one resource's files in it.
#[derive(Debug, Clone)]
pub(crate) struct Store {
    /// Made (0700, and checked) only when something is written or locked: a connect to
    /// a server that never asks for OAuth leaves no folder, and works where the state
    /// root cannot be written.
    dir: PathBuf,
    file: PathBuf,
    lock: PathBuf,
    resource: String,
}

impl Store {
    /// The files of `resource` (canonical) under `dir`, for
    /// the client `identity` ([`OAuth::identity`](super::OAuth::identity)): a headless
    /// agent's grant and a person's login to the same server are kept apart.
    pub(crate) fn new(dir: &Path, resource: &str, identity: &str) -> Result<Store, OAuthError> {
        let hash = Sha256::digest(format!("{resource}\n{identity}").as_bytes());
        let name: String = hash[..12].iter().map(|b| format!("{b:02x}")).collect();
        Ok(Store {
            dir: dir.to_owned(),
            file: dir.join(format!("r-{name}.json")),
            lock: dir.join(format!("r-{name}.lock")),
            resource: resource.to_owned(),
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.file
    }

    /// The stored record, if any. A file that is not toolbind's (another owner, open to
    /// others, not a regular file), unreadable or for another resource is an error, not
    /// "no credentials": a planted or swapped file is never used.
    pub(crate) fn load(&self) -> Result<Option<Record>, OAuthError> {
        let what = format!("the OAuth credentials for {}", self.resource);
        let file = match crate::secret::read_secret_file(&self.file, &what, MAX_FILE) {
            Ok(f) => f,
            Err(crate::secret::SecretFileError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                return Ok(None);
            }
            Err(e) => return Err(OAuthError::Store(e.to_string())),
        };
        if file.readable_by_others() {
            return Err(OAuthError::Store(format!(
                "{} is readable by other users; toolbind writes it 0600, so it was changed or planted: remove it and log in again",
                self.file.display()
            )));
        }
        // One this toolbind cannot read (an older or newer format, a torn write) is no
        // credentials: the next login writes it anew. Only ours gets this far (owner and
        // mode checked above).
        let Ok(record) = serde_json::from_slice::<Record>(file.bytes()) else {
            return Ok(None);
        };
        if record.format != FORMAT {
            return Ok(None);
        }
        if record.resource != self.resource {
            return Err(OAuthError::Store(format!(
                "{} holds credentials for another resource: remove it and log in again",
                self.file.display()
            )));
        }
        Ok(Some(record))
    }

    /// Writes `record` whole: a new 0600 file beside it, synced, renamed over.
    fn private(&self) -> Result<(), OAuthError> {
        crate::dirs::private_dir(&self.dir).map_err(|e| OAuthError::Store(e.to_string()))
    }

    pub(crate) fn save(&self, record: &Record) -> Result<(), OAuthError> {
        self.private()?;
        let err = |e: std::io::Error| {
            OAuthError::Store(format!("cannot write {}: {e}", self.file.display()))
        };
        let body =
            serde_json::to_vec_pretty(record).map_err(|e| OAuthError::Store(e.to_string()))?;
        let tmp = self
            .file
            .with_extension(format!("json.{}.tmp", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        let mut f = std::fs::File::options()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
            .open(&tmp)
            .map_err(err)?;
        let written = f.write_all(&body).and_then(|()| f.sync_all());
        if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, &self.file)) {
            let _ = std::fs::remove_file(&tmp);
            return Err(err(e));
        }
        Ok(())
    }

    /// Removes the record; whether there was one.
    pub(crate) fn remove(&self) -> Result<bool, OAuthError> {
        match std::fs::remove_file(&self.file) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(OAuthError::Store(format!(
                "cannot remove {}: {e}",
                self.file.display()
            ))),
        }
    }

    /// The resource's lock, held until the guard drops: another process (or task) that
    /// wants it waits, at most `wait`. The lock file is apart from the record, so the
    /// record's rename does not drop it.
    pub(crate) async fn lock(&self, wait: Duration) -> Result<std::fs::File, OAuthError> {
        self.private()?;
        let path = self.lock.clone();
        let f = std::fs::File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
            .open(&path)
            .map_err(|e| OAuthError::Store(format!("cannot open {}: {e}", path.display())))?;
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            match f.try_lock() {
                Ok(()) => return Ok(f),
                Err(std::fs::TryLockError::WouldBlock) => {}
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(OAuthError::Store(format!(
                        "cannot lock {}: {e}",
                        path.display()
                    )));
                }
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(OAuthError::Store(format!(
                    "another toolbind has held the lock on {} for {} s (a login or refresh in progress?)",
                    path.display(),
                    wait.as_secs()
                )));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_is_known_by_its_canonical_url() {
        let c = |u| canonical(u).unwrap();
        assert_eq!(
            c("HTTPS://MCP.Example.com:443/mcp/"),
            "https://mcp.example.com/mcp"
        );
        assert_eq!(
            c("https://mcp.example.com/mcp#x"),
            "https://mcp.example.com/mcp"
        );
        assert_eq!(c("https://u:p@mcp.example.com/"), "https://mcp.example.com");
        assert_eq!(c("http://127.0.0.1:8080/mcp"), "http://127.0.0.1:8080/mcp");
        assert_ne!(
            c("https://a.example/mcp?t=1"),
            c("https://a.example/mcp?t=2")
        );
        assert_ne!(
            c("https://api.github.com/mcp"),
            c("https://github.evil.example/mcp")
        );
        assert_eq!(canonical("ftp://x/y"), None);
        assert_eq!(canonical("not a url"), None);
    }

    fn record(resource: &str) -> Record {
        Record {
            format: FORMAT,
            resource: resource.into(),
            issuer: Some("https://as.example".into()),
            indicator: None,
            metadata: AuthorizationMetadata::default(),
            client: Client {
                id: "c".into(),
                secret: None,
                redirect_uri: "http://127.0.0.1:1/callback".into(),
                kind: ClientKind::Registered,
            },
            access_token: "at".into(),
            refresh_token: Some("rt".into()),
            expires_at: Some(now() + 3600),
            received_at: Some(now()),
            scopes: vec!["a".into()],
            client_credentials: false,
        }
    }

    #[test]
    fn a_record_is_written_private_and_read_back_only_for_its_resource() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(&dir.path().join("t"), "https://a.example/mcp", "").unwrap();
        assert!(store.load().unwrap().is_none());
        assert!(
            !dir.path().join("t").exists(),
            "nothing written, no folder made"
        );
        store.save(&record("https://a.example/mcp")).unwrap();
        let mode = std::fs::metadata(store.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(store.load().unwrap().unwrap().access_token, "at");
        assert!(!format!("{:?}", store.load().unwrap().unwrap()).contains("at\""));
        // Another resource's file put in its place is refused.
        let other = Store::new(&dir.path().join("t"), "https://b.example/mcp", "").unwrap();
        other.save(&record("https://b.example/mcp")).unwrap();
        std::fs::rename(other.path(), store.path()).unwrap();
        let e = store.load().unwrap_err().to_string();
        assert!(e.contains("another resource"), "{e}");
        // A file opened to others is refused.
        store.save(&record("https://a.example/mcp")).unwrap();
        std::fs::set_permissions(store.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = store.load().unwrap_err().to_string();
        assert!(e.contains("readable by other users"), "{e}");
        // A file of another user's (planted where ours would be): refused. Only root can
        // make one; as another user the mode check above is what a plant meets.
        if nix::unistd::geteuid().is_root() {
            store.save(&record("https://a.example/mcp")).unwrap();
            std::os::unix::fs::chown(store.path(), Some(4242), None).unwrap();
            let e = store.load().unwrap_err().to_string();
            assert!(e.contains("4242"), "{e}");
        }
        assert!(store.remove().unwrap());
        assert!(!store.remove().unwrap());
    }

    #[tokio::test]
    async fn the_lock_is_one_holder_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path(), "https://a.example/mcp", "").unwrap();
        let held = store.lock(Duration::from_secs(1)).await.unwrap();
        let e = store.lock(Duration::from_millis(100)).await.unwrap_err();
        assert!(e.to_string().contains("held the lock"), "{e}");
        drop(held);
        store.lock(Duration::from_millis(100)).await.unwrap();
    }
}
