//! A process's private temporary folder (the lighter jail's `TMPDIR`): `0700`, removed
//! with everything in it when the process is done, and left-overs of dead runtimes swept.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A per-process temporary folder, `0700`, removed with everything in it when dropped.
#[derive(Debug)]
pub(crate) struct PrivateTmp(PathBuf);

impl PrivateTmp {
    /// A new folder in `parent` (`<state root>/light-tmp`).
    pub(super) fn new(parent: &Path) -> std::io::Result<Self> {
        use std::os::unix::fs::DirBuilderExt;
        static N: AtomicU64 = AtomicU64::new(0);
        static SWEPT: std::sync::Once = std::sync::Once::new();
        SWEPT.call_once(|| sweep(parent));
        let dir = parent.join(format!(
            "{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        // Left by an earlier runtime of the same pid that was killed.
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        Ok(PrivateTmp(dir))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

/// Removes the folders of runtimes that are gone (killed before they could): a folder is
/// `<pid>-<n>`, and one whose pid is no live process is left over. A pid reused since is
/// taken for alive: its folder stays until a later sweep.
fn sweep(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.split_once('-'))
            .and_then(|(p, _)| p.parse::<i32>().ok())
            .filter(|p| *p > 0)
        else {
            continue;
        };
        // SAFETY: kill with signal 0 only asks whether the process exists.
        let gone = unsafe { libc::kill(pid, 0) } < 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            remove_tree(&e.path());
        }
    }
}

impl Drop for PrivateTmp {
    fn drop(&mut self) {
        remove_tree(&self.0);
    }
}

/// Removes the folder `dir` and all in it, a tool's own modes notwithstanding: a folder the
/// tool made unwritable (`chmod 500`) would otherwise keep its files for good. Links are
/// never followed (`remove_dir_all` and the walk below both take them as files).
fn remove_tree(dir: &Path) {
    if std::fs::remove_dir_all(dir).is_ok() || !dir.exists() {
        return;
    }
    fn open_up(dir: &Path, depth: usize) {
        use std::os::unix::fs::PermissionsExt;
        let Ok(meta) = std::fs::symlink_metadata(dir) else {
            return;
        };
        if !meta.is_dir() || depth > 64 {
            return;
        }
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            open_up(&e.path(), depth + 1);
        }
    }
    open_up(dir, 0);
    let _ = std::fs::remove_dir_all(dir);
}
