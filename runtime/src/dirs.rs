//! The runtime's own folders — cache, state, spill, the CLI's token — found and opened in
//! one place.
//!
//! Code found in the cache runs as this user, a state folder is bind-mounted read-write
//! into a jail as a tool's `HOME`, and the token guards `serve --http`: each must be a
//! folder no one else planted or swapped. So every folder of ours is created `0700` and,
//! every time before use, opened without following a symlink (`O_NOFOLLOW | O_DIRECTORY`,
//! component by component with `openat`, so a link planted anywhere below the root is
//! refused, not followed) and checked to be a folder owned by the effective user. One of
//! ours that is too open (an older version, a umask) is closed to `0700`; anything else is
//! refused with an error naming the folder and why. A path is never canonicalised through
//! a link: only the user's own prefix above our root (`$HOME`, `$XDG_STATE_HOME`) is
//! resolved.
//!
//! Fallbacks when `HOME` and the `XDG_*` variables are unset are per user
//! (`$TMPDIR/toolbind-<euid>`), never a shared name in the temp folder, and are checked
//! like every other folder of ours (another user's `toolbind-<euid>` is refused).

use std::ffi::{CString, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use toolbind_codegen::model::path_component_problem;

/// Why a folder of ours could not be made or used. Its text names the folder and, for a
/// refusal, what to do.
#[derive(Debug)]
#[non_exhaustive]
pub enum FolderError {
    /// A file-system step on `path` failed.
    Io {
        /// Which step.
        step: FolderStep,
        /// The folder it was taken on.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// `path` exists but is not a private folder of this user's.
    Refused {
        /// The folder.
        path: PathBuf,
        /// What is wrong with it.
        why: Refusal,
    },
    /// A name asked for below a folder is not one plain path component.
    BadName {
        /// The name.
        name: String,
        /// The folder it was asked for under.
        under: PathBuf,
        /// Why it is not a path component.
        why: String,
    },
    /// The path has no last component of its own (`/`, `..`) or holds a NUL byte.
    BadPath {
        /// The path.
        path: PathBuf,
    },
}

/// A step of making or opening a private folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FolderStep {
    /// Making the path absolute, or resolving the user's own prefix above our root.
    Resolve,
    /// `mkdir`.
    Create,
    /// `open` without following a link.
    Open,
    /// `fstat`.
    Inspect,
    /// Closing a folder of ours that was too open to `0700`.
    MakePrivate,
}

/// Why an existing folder is not accepted as ours.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// It is a symbolic link.
    Symlink,
    /// It is not a folder.
    NotAFolder,
    /// Another user owns it.
    OwnedBy {
        /// Its owner.
        uid: u32,
        /// The effective user.
        me: u32,
    },
}

impl std::fmt::Display for FolderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FolderError::Io { step, path, source } => {
                let path = path.display();
                match step {
                    FolderStep::Resolve => write!(f, "cannot resolve {path}: {source}"),
                    FolderStep::Create => write!(f, "cannot create {path}: {source}"),
                    FolderStep::Open => write!(f, "cannot open {path}: {source}"),
                    FolderStep::Inspect => write!(f, "cannot inspect {path}: {source}"),
                    FolderStep::MakePrivate => write!(f, "cannot make {path} private: {source}"),
                }
            }
            FolderError::Refused { path, why } => {
                write!(f, "refusing the folder {}: ", path.display())?;
                match why {
                    Refusal::Symlink => f.write_str("it is a symlink")?,
                    Refusal::NotAFolder => f.write_str("it is not a folder")?,
                    Refusal::OwnedBy { uid, me } => {
                        write!(f, "it is owned by uid {uid}, not {me}")?
                    }
                }
                f.write_str("; toolbind keeps code, state and tokens there, so it must be a private folder of this user's (remove it, or point toolbind elsewhere)")
            }
            FolderError::BadName { name, under, why } => write!(
                f,
                "refusing the folder name {name:?} under {}: {why}",
                under.display()
            ),
            FolderError::BadPath { path } => write!(
                f,
                "refusing {} as a private folder: it has no name of its own, or holds a NUL byte",
                path.display()
            ),
        }
    }
}

impl std::error::Error for FolderError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FolderError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

fn io(step: FolderStep, path: &Path) -> impl FnOnce(std::io::Error) -> FolderError {
    let path = path.to_path_buf();
    move |source| FolderError::Io { step, path, source }
}

/// The effective user id (owner of every folder of ours).
pub(crate) fn euid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

fn var(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// `path` made absolute against the current directory of this moment, the one rule for
/// every folder a user hands the runtime (a tools folder, a grant, a working or cache
/// folder): a jailed process runs elsewhere, where a relative path means something else
/// or nothing. Lexical (`std::path::absolute`: no symlink resolved, nothing read); a path
/// it cannot make absolute (empty, or no current directory) is kept as given, to fail
/// where it is used with its own error.
pub(crate) fn given(path: PathBuf) -> PathBuf {
    match std::path::absolute(&path) {
        Ok(p) => p,
        Err(_) => path,
    }
}

/// The temp folder as an absolute path: a relative `TMPDIR` would otherwise make every
/// folder under it relative to whichever directory a process runs in (and a jail bind
/// of a relative path fails).
fn temp_dir() -> PathBuf {
    let t = std::env::temp_dir();
    std::path::absolute(&t).unwrap_or(t)
}

/// The per-user fallback root in the temp folder.
fn fallback(tmp: PathBuf, euid: u32) -> PathBuf {
    tmp.join(format!("toolbind-{euid}"))
}

/// The cache: `$XDG_CACHE_HOME/toolbind`, else `~/.cache/toolbind`, else
/// `$TMPDIR/toolbind-<euid>` (one folder per user, not per run, so runs leave nothing
/// behind).
pub(crate) fn cache_root() -> PathBuf {
    cache_root_from(var("XDG_CACHE_HOME"), var("HOME"), temp_dir(), euid())
}

pub(crate) fn cache_root_from(
    xdg: Option<OsString>,
    home: Option<OsString>,
    tmp: PathBuf,
    euid: u32,
) -> PathBuf {
    root_from(xdg, home, ".cache/toolbind", fallback(tmp, euid))
}

/// `$XDG_.../toolbind`, else `$HOME/<under_home>`, else `otherwise`.
fn root_from(
    xdg: Option<OsString>,
    home: Option<OsString>,
    under_home: &str,
    otherwise: PathBuf,
) -> PathBuf {
    if let Some(x) = xdg.filter(|x| !x.is_empty()) {
        return PathBuf::from(x).join("toolbind");
    }
    if let Some(h) = home.filter(|h| !h.is_empty()) {
        return PathBuf::from(h).join(under_home);
    }
    otherwise
}

/// The state root (tools' state folders, spill files, the generated HTTP token):
/// `$XDG_STATE_HOME/toolbind`, else `~/.local/state/toolbind`, else
/// `$TMPDIR/toolbind-<euid>/state`.
pub fn state_root() -> PathBuf {
    state_root_from(var("XDG_STATE_HOME"), var("HOME"), temp_dir(), euid())
}

pub(crate) fn state_root_from(
    xdg: Option<OsString>,
    home: Option<OsString>,
    tmp: PathBuf,
    euid: u32,
) -> PathBuf {
    root_from(
        xdg,
        home,
        ".local/state/toolbind",
        fallback(tmp, euid).join("state"),
    )
}

/// Where a session's secrets go (the generated HTTP token): `$XDG_RUNTIME_DIR/toolbind`
/// (the session's own folder, on a tmpfs, gone at logout), else the
/// [state root](state_root).
pub fn runtime_root() -> PathBuf {
    runtime_root_from(var("XDG_RUNTIME_DIR"), state_root)
}

pub(crate) fn runtime_root_from(xdg: Option<OsString>, state: impl FnOnce() -> PathBuf) -> PathBuf {
    xdg.map_or_else(state, |x| PathBuf::from(x).join("toolbind"))
}

/// Creates `dir` (`0700`) if needed and verifies it is a folder of ours that no one else
/// can write; see the [module docs](self). Its parents are the user's own (`~/.cache`,
/// `$XDG_STATE_HOME`) and are created as ordinary folders. For a fallback root in the
/// temp folder the per-user folder itself is checked the same way.
pub fn private_dir(dir: &Path) -> Result<(), FolderError> {
    open_private(dir).map(drop)
}

/// [`private_dir`], then each of `below` (each one normal path component) inside it,
/// created and checked the same way without following a link. Returns the folder's path
/// (absolute, with only the user's prefix above `root` resolved) for a bind mount.
pub fn private_subdir(root: &Path, below: &[&str]) -> Result<PathBuf, FolderError> {
    let mut fd = open_private(root)?;
    let mut path = resolved_prefix(root)?;
    for name in below {
        if let Some(why) = path_component_problem(name) {
            return Err(FolderError::BadName {
                name: (*name).to_owned(),
                under: path,
                why,
            });
        }
        path.push(name);
        fd = open_checked(Some(&fd), &path, name.as_ref())?;
    }
    Ok(path)
}

/// Where the trusted prefix of `abs` ends: for a folder inside the per-user fallback
/// (`$TMPDIR/toolbind-<euid>/...`) the temp folder, so the per-user folder and every one
/// below it are checked (another user can create `toolbind-<euid>` in a shared `/tmp`);
/// otherwise the folder's parent (the user's own `$HOME`, `$XDG_*`, or the folder the
/// caller named).
fn trusted_prefix(abs: &Path) -> PathBuf {
    let tmp = temp_dir();
    if abs.starts_with(fallback(tmp.clone(), euid())) {
        return tmp;
    }
    abs.parent().unwrap_or(Path::new("/")).to_path_buf()
}

/// `dir` with its trusted prefix resolved and the rest kept: the rest has just been
/// opened without following a link, so this is where it really is.
fn resolved_prefix(dir: &Path) -> Result<PathBuf, FolderError> {
    let abs = normalized(&std::path::absolute(dir).map_err(io(FolderStep::Resolve, dir))?);
    let prefix = trusted_prefix(&abs);
    let rest = abs.strip_prefix(&prefix).unwrap_or(Path::new(""));
    let real = prefix
        .canonicalize()
        .map_err(io(FolderStep::Resolve, &prefix))?;
    Ok(real.join(rest))
}

/// `abs` with `.` and `..` taken out by the text alone (`--state-dir ../state` names the
/// folder the user means; the walk below then checks every component for links).
fn normalized(abs: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

fn open_private(dir: &Path) -> Result<OwnedFd, FolderError> {
    let abs = std::path::absolute(dir).map_err(io(FolderStep::Resolve, dir))?;
    if abs.file_name().is_none() {
        return Err(FolderError::BadPath { path: abs });
    }
    let abs = normalized(&abs);
    let prefix = trusted_prefix(&abs);
    std::fs::create_dir_all(&prefix).map_err(io(FolderStep::Create, &prefix))?;
    let mut fd = open_dir(None, &prefix, libc::O_PATH).map_err(io(FolderStep::Open, &prefix))?;
    let mut path = prefix.clone();
    for c in abs
        .strip_prefix(&prefix)
        .unwrap_or(Path::new(""))
        .components()
    {
        let name = c.as_os_str();
        path.push(name);
        fd = open_checked(Some(&fd), &path, name.as_bytes())?;
    }
    Ok(fd)
}

/// Creates `name` under `parent` (`0700`) if missing, opens it without following a link,
/// and checks it: a folder, ours, closed to others (tightened when it is ours).
fn open_checked(
    parent: Option<&OwnedFd>,
    path: &Path,
    name: &[u8],
) -> Result<OwnedFd, FolderError> {
    let cname = CString::new(name).map_err(|_| FolderError::BadPath {
        path: path.to_path_buf(),
    })?;
    let pfd = parent.map_or(libc::AT_FDCWD, |f| f.as_raw_fd());
    // SAFETY: a valid descriptor (or AT_FDCWD) and a NUL-terminated name.
    if unsafe { libc::mkdirat(pfd, cname.as_ptr(), 0o700) } < 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EEXIST) {
            return Err(io(FolderStep::Create, path)(e));
        }
    }
    let refuse = |why: Refusal| FolderError::Refused {
        path: path.to_path_buf(),
        why,
    };
    // SAFETY: as above; the result is checked and owned below.
    let fd = unsafe {
        libc::openat(
            pfd,
            cname.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::ELOOP) => refuse(Refusal::Symlink),
            Some(libc::ENOTDIR) => refuse(if is_symlink_at(pfd, &cname) {
                Refusal::Symlink
            } else {
                Refusal::NotAFolder
            }),
            _ => io(FolderStep::Open, path)(e),
        });
    }
    // SAFETY: openat returned a new descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor and a stat buffer of the right size.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } < 0 {
        return Err(io(FolderStep::Inspect, path)(
            std::io::Error::last_os_error(),
        ));
    }
    let me = euid();
    if st.st_uid != me {
        return Err(refuse(Refusal::OwnedBy { uid: st.st_uid, me }));
    }
    if st.st_mode & 0o077 != 0 {
        // SAFETY: a valid descriptor.
        if unsafe { libc::fchmod(fd.as_raw_fd(), 0o700) } < 0 {
            let e = std::io::Error::last_os_error();
            return Err(io(FolderStep::MakePrivate, path)(e));
        }
    }
    Ok(fd)
}

fn is_symlink_at(pfd: i32, name: &CString) -> bool {
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor (or AT_FDCWD), a NUL-terminated name, a stat buffer.
    (unsafe { libc::fstatat(pfd, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) }) == 0
        && st.st_mode & libc::S_IFMT == libc::S_IFLNK
}

fn open_dir(parent: Option<&OwnedFd>, path: &Path, extra: i32) -> std::io::Result<OwnedFd> {
    let c = CString::new(path.as_os_str().as_bytes())?;
    let pfd = parent.map_or(libc::AT_FDCWD, |f| f.as_raw_fd());
    // SAFETY: a valid descriptor (or AT_FDCWD) and a NUL-terminated path.
    let fd = unsafe { libc::openat(pfd, c.as_ptr(), libc::O_DIRECTORY | libc::O_CLOEXEC | extra) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: openat returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    #[test]
    fn the_runtime_root_is_the_sessions_folder_else_the_state_root() {
        let state = || PathBuf::from("/h/.local/state/toolbind");
        assert_eq!(
            runtime_root_from(Some("/run/user/1000".into()), state),
            PathBuf::from("/run/user/1000/toolbind")
        );
        assert_eq!(runtime_root_from(None, state), state());
    }

    #[test]
    fn without_home_every_root_is_one_folder_per_user_not_per_run() {
        let tmp = PathBuf::from("/tmp");
        let d = cache_root_from(None, None, tmp.clone(), 1000);
        assert_eq!(d, PathBuf::from("/tmp/toolbind-1000"));
        assert!(
            !d.to_string_lossy()
                .contains(&std::process::id().to_string())
        );
        assert_eq!(
            state_root_from(None, None, tmp.clone(), 1000),
            PathBuf::from("/tmp/toolbind-1000/state")
        );
        assert_eq!(
            cache_root_from(None, Some("/h".into()), tmp.clone(), 1),
            PathBuf::from("/h/.cache/toolbind")
        );
        assert_eq!(
            state_root_from(None, Some("/h".into()), tmp.clone(), 1),
            PathBuf::from("/h/.local/state/toolbind")
        );
        assert_eq!(
            cache_root_from(Some("/x".into()), Some("/h".into()), tmp.clone(), 1),
            PathBuf::from("/x/toolbind")
        );
        assert_eq!(
            state_root_from(Some("/x".into()), None, tmp, 1),
            PathBuf::from("/x/toolbind")
        );
    }

    #[test]
    fn a_private_dir_is_created_0700_tightened_and_a_symlink_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("a/b/cache");
        private_dir(&d).unwrap();
        assert_eq!(fs::metadata(&d).unwrap().mode() & 0o777, 0o700);
        let open = t.path().join("open");
        fs::create_dir(&open).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
        private_dir(&open).unwrap();
        assert_eq!(fs::metadata(&open).unwrap().mode() & 0o777, 0o700);
        let link = t.path().join("link");
        std::os::unix::fs::symlink(&d, &link).unwrap();
        let err = private_dir(&link).unwrap_err();
        assert!(
            matches!(&err, FolderError::Refused { path, why: Refusal::Symlink } if *path == link),
            "{err:?}"
        );
        let err = err.to_string();
        assert!(err.contains("symlink") && err.contains("link"), "{err}");
        let file = t.path().join("file");
        fs::write(&file, "x").unwrap();
        let err = private_dir(&file).unwrap_err().to_string();
        assert!(err.contains("not a folder"), "{err}");
        // A FIFO where the folder should be: refused at once, never opened (an open would
        // block until someone writes to it).
        let fifo = t.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let err = private_subdir(t.path(), &["fifo"]).unwrap_err();
        assert!(
            matches!(
                &err,
                FolderError::Refused {
                    why: Refusal::NotAFolder,
                    ..
                }
            ),
            "{err:?}"
        );
    }

    #[test]
    fn a_link_planted_below_the_root_is_refused_not_followed() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("state");
        let p = private_subdir(&root, &["h", "tool"]).unwrap();
        assert_eq!(p, t.path().canonicalize().unwrap().join("state/h/tool"));
        // A sibling's state folder swapped for a link to /etc.
        std::os::unix::fs::symlink("/etc", root.join("h/victim")).unwrap();
        let err = private_subdir(&root, &["h", "victim"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("symlink") && err.contains("victim"), "{err}");
        // The hash folder itself swapped.
        let other = t.path().join("other");
        fs::create_dir(&other).unwrap();
        fs::rename(root.join("h"), t.path().join("h.old")).unwrap();
        std::os::unix::fs::symlink(&other, root.join("h")).unwrap();
        let err = private_subdir(&root, &["h", "tool"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("symlink"), "{err}");
        assert!(fs::read_dir(&other).unwrap().next().is_none());
    }

    #[test]
    fn dot_dot_in_a_root_means_what_it_says() {
        let t = tempfile::tempdir().unwrap();
        fs::create_dir(t.path().join("x")).unwrap();
        let p = private_subdir(&t.path().join("x/../state"), &["tool"]).unwrap();
        assert_eq!(p, t.path().canonicalize().unwrap().join("state/tool"));
    }

    #[test]
    fn names_that_are_not_one_component_are_refused() {
        let t = tempfile::tempdir().unwrap();
        for bad in ["..", ".", "", "a/b", "a\nb"] {
            let err = private_subdir(t.path(), &["h", bad])
                .unwrap_err()
                .to_string();
            assert!(err.contains("refusing the folder name"), "{bad:?}: {err}");
        }
        assert!(!t.path().join("h/a").exists());
    }

    #[test]
    fn a_folder_of_another_user_is_refused() {
        if euid() != 0 {
            return; // only root can make a folder owned by someone else
        }
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("toolbind-1000");
        fs::create_dir(&d).unwrap();
        std::os::unix::fs::chown(&d, Some(12345), Some(12345)).unwrap();
        let err = private_dir(&d).unwrap_err().to_string();
        assert!(err.contains("owned by uid 12345"), "{err}");
    }
}
