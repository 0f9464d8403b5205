//! The private cache folder (harness files, transpiled TypeScript).
//!
//! Code found there is run as the agent's user, so another local user must not be able to
//! plant it: every folder of the cache is created 0700 and, before use, must be a real
//! folder (not a symlink) owned by the effective user and closed to group and others. A
//! folder of ours that is too open (made by an older version) is tightened; anything else
//! is refused with an error naming it.

use std::fs;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The default cache: `$XDG_CACHE_HOME/toolbind`, else `~/.cache/toolbind`, else one
/// folder per user (not per run, so runs leave nothing behind) in the temp dir, which
/// [`private_dir`] verifies before use.
pub(crate) fn default_dir(
    xdg: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
    tmp: PathBuf,
    euid: u32,
) -> PathBuf {
    if let Some(x) = xdg.filter(|x| !x.is_empty()) {
        return PathBuf::from(x).join("toolbind");
    }
    if let Some(h) = home.filter(|h| !h.is_empty()) {
        return PathBuf::from(h).join(".cache").join("toolbind");
    }
    tmp.join(format!("toolbind-{euid}"))
}

pub(crate) fn euid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// Creates `dir` (0700) if needed and verifies it is private to us.
pub(crate) fn private_dir(dir: &Path) -> Result<(), String> {
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Parents are the user's (XDG_CACHE_HOME, ~/.cache): ordinary folders.
            if let Some(parent) = dir.parent() {
                fs::create_dir_all(parent)
                    .map_err(|e| format!("cannot create the cache {}: {e}", parent.display()))?;
            }
            match fs::DirBuilder::new().mode(0o700).create(dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(format!("cannot create the cache {}: {e}", dir.display())),
            }
        }
        Err(e) => return Err(format!("cannot create the cache {}: {e}", dir.display())),
    }
    let meta = fs::symlink_metadata(dir)
        .map_err(|e| format!("cannot inspect the cache {}: {e}", dir.display()))?;
    let refuse = |why: String| {
        Err(format!(
            "refusing the cache folder {}: {why}; code found there would run as this user (remove it, or set `cache_dir` to a private folder)",
            dir.display()
        ))
    };
    if meta.file_type().is_symlink() {
        return refuse("it is a symlink".into());
    }
    if !meta.is_dir() {
        return refuse("it is not a folder".into());
    }
    let me = euid();
    if meta.uid() != me {
        return refuse(format!("it is owned by uid {}, not {me}", meta.uid()));
    }
    if meta.mode() & 0o077 != 0 {
        // Ours but too open (an older version, a umask): close it.
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("cannot make the cache {} private: {e}", dir.display()))?;
    }
    Ok(())
}

/// Lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// An incremental SHA-256 (the TypeScript transpile cache's keys).
#[cfg(feature = "typescript")]
pub(crate) struct Hasher(Sha256);

#[cfg(feature = "typescript")]
impl Hasher {
    pub(crate) fn new() -> Self {
        Hasher(Sha256::new())
    }

    pub(crate) fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    pub(crate) fn hex(self) -> String {
        hex(&self.0.finalize())
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_home_the_cache_is_one_folder_per_user_not_per_run() {
        let tmp = PathBuf::from("/tmp");
        let d = default_dir(None, None, tmp.clone(), 1000);
        assert_eq!(d, PathBuf::from("/tmp/toolbind-1000"));
        assert!(
            !d.to_string_lossy()
                .contains(&std::process::id().to_string())
        );
        assert_eq!(
            default_dir(None, Some("/h".into()), tmp.clone(), 1),
            PathBuf::from("/h/.cache/toolbind")
        );
        assert_eq!(
            default_dir(Some("/x".into()), Some("/h".into()), tmp, 1),
            PathBuf::from("/x/toolbind")
        );
    }

    #[test]
    fn a_private_dir_is_created_0700_and_a_symlink_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("a/b/cache");
        private_dir(&d).unwrap();
        let mode = fs::metadata(&d).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let open = t.path().join("open");
        fs::create_dir(&open).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
        private_dir(&open).unwrap();
        assert_eq!(fs::metadata(&open).unwrap().mode() & 0o777, 0o700);
        let link = t.path().join("link");
        std::os::unix::fs::symlink(&d, &link).unwrap();
        let err = private_dir(&link).unwrap_err();
        assert!(err.contains("symlink"), "{err}");
    }
}
