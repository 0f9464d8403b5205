//! Reading a tool's files without ever blocking on a special file.
//!
//! A FIFO named `TOOL.md` blocks `open` until a writer appears: every command that reads
//! it (and, for `sync`, every later sync waiting on its lock) would hang. Anything that is
//! not a regular file is refused with an error naming what it is, before it is opened, and
//! the open itself is non-blocking, so a file swapped for a FIFO in between cannot hang
//! either.
//!
//! A tool's own files are read under one more rule, in [`read_folder_file`]: a symlink is
//! followed only to a file inside the tool folder, and a size limit is checked from the
//! metadata before anything is read. No error quotes the content of a file it refused.

use std::fmt;
use std::fs::{self, File, FileType};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Reads `path` (following symlinks) if it is a regular file; anything else (a FIFO, a
/// socket, a device, a folder) is an [`io::ErrorKind::InvalidInput`] error naming what it
/// is, and is never opened in a way that could block.
pub fn read_regular_file(path: &Path) -> io::Result<Vec<u8>> {
    read(path, true)
}

/// [`read_regular_file`] without following a final symlink: a symlink fails with `ELOOP`
/// (as `O_NOFOLLOW` reports it).
pub fn read_regular_file_no_follow(path: &Path) -> io::Result<Vec<u8>> {
    read(path, false)
}

fn read(path: &Path, follow: bool) -> io::Result<Vec<u8>> {
    let meta = if follow {
        fs::metadata(path)?
    } else {
        fs::symlink_metadata(path)?
    };
    if meta.file_type().is_symlink() {
        return Err(io::Error::from_raw_os_error(libc::ELOOP));
    }
    refuse_special(path, meta.file_type())?;
    let mut flags = libc::O_NONBLOCK;
    if !follow {
        flags |= libc::O_NOFOLLOW;
    }
    let mut f = File::options().read(true).custom_flags(flags).open(path)?;
    refuse_special(path, f.metadata()?.file_type())?;
    let mut buf = Vec::with_capacity(meta.len().min(1 << 20) as usize);
    f.read_to_end(&mut buf)?;
    Ok(buf)
}

fn refuse_special(path: &Path, ty: FileType) -> io::Result<()> {
    let Some(what) = special_kind(ty) else {
        return Ok(());
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is {what}, not a regular file; refusing to read it",
            file_name(path)
        ),
    ))
}

/// What a file that is not a regular file is, for messages; `None` for a regular file.
fn special_kind(ty: FileType) -> Option<&'static str> {
    Some(if ty.is_file() {
        return None;
    } else if ty.is_dir() {
        "a folder"
    } else if ty.is_fifo() {
        "a FIFO (named pipe)"
    } else if ty.is_socket() {
        "a socket"
    } else if ty.is_char_device() || ty.is_block_device() {
        "a device"
    } else {
        "a special file"
    })
}

/// The largest TOOL.md any command reads: 1 MiB. A TOOL.md is frontmatter and a few
/// kilobytes of docs; a bigger one is refused from its metadata, before it is opened, so a
/// 200 MB file costs nothing to refuse.
pub const MAX_TOOL_FILE_BYTES: u64 = 1 << 20;

/// Why a file of a tool folder (its TOOL.md, its entry file) was not used. The message
/// names the file and says what it is; it never holds anything of the file's content or
/// of what a symlink points to.
#[derive(Debug)]
#[non_exhaustive]
pub struct FolderFileError {
    /// The file, as it was asked for (`<tool folder>/TOOL.md`).
    pub path: PathBuf,
    /// What is wrong with it.
    pub kind: FolderFileErrorKind,
}

/// What [`FolderFileError`] found.
#[derive(Debug)]
#[non_exhaustive]
pub enum FolderFileErrorKind {
    /// There is no file (and no symlink) of that name.
    NotFound,
    /// A symlink that resolves outside the tool folder, or to nothing: it is not followed.
    SymlinkOutside,
    /// Not a regular file: what it is (`a FIFO (named pipe)`, `a folder`, ...). It was
    /// never opened.
    NotRegular(&'static str),
    /// Larger than the limit, by its metadata: nothing of it was read.
    TooLarge {
        /// The file's size in bytes.
        size: u64,
        /// The limit in bytes.
        limit: u64,
    },
    /// The operating system's error.
    Io(io::Error),
}

impl FolderFileError {
    fn new(path: &Path, kind: FolderFileErrorKind) -> Self {
        FolderFileError {
            path: path.to_path_buf(),
            kind,
        }
    }

    /// Whether the file is simply missing.
    pub fn is_not_found(&self) -> bool {
        matches!(self.kind, FolderFileErrorKind::NotFound)
    }

    /// The fix, when there is one to say.
    pub fn hint(&self) -> Option<String> {
        match &self.kind {
            FolderFileErrorKind::SymlinkOutside => Some(
                "a tool folder must hold its own files: replace the symlink with the file, or \
                 point it at a file inside the tool folder"
                    .to_owned(),
            ),
            FolderFileErrorKind::NotRegular(_) => Some("replace it with a regular file".to_owned()),
            FolderFileErrorKind::TooLarge { .. } => Some(
                "a TOOL.md holds the frontmatter and the tool's docs; move large content into \
                 other files of the tool folder"
                    .to_owned(),
            ),
            FolderFileErrorKind::NotFound | FolderFileErrorKind::Io(_) => None,
        }
    }

    /// A file-level [`Diagnostic`](crate::diagnostic::Diagnostic) (no position) saying what this is,
    /// with its [`hint`](Self::hint).
    pub fn to_diagnostic(&self) -> crate::diagnostic::Diagnostic {
        let d = crate::diagnostic::Diagnostic::new(
            &self.path,
            crate::model::Pos::NONE,
            self.to_string(),
        );
        match self.hint() {
            Some(h) => d.hint(h),
            None => d,
        }
    }

    /// The error as an [`io::Error`]: the operating system's own, or
    /// [`io::ErrorKind::InvalidInput`] with this message.
    pub fn into_io(self) -> io::Error {
        match self.kind {
            FolderFileErrorKind::Io(e) => e,
            FolderFileErrorKind::NotFound => io::Error::from(io::ErrorKind::NotFound),
            _ => io::Error::new(io::ErrorKind::InvalidInput, self.to_string()),
        }
    }
}

impl fmt::Display for FolderFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = file_name(&self.path);
        match &self.kind {
            FolderFileErrorKind::NotFound => write!(f, "{name} does not exist"),
            FolderFileErrorKind::SymlinkOutside => write!(
                f,
                "{name} is a symlink out of the tool folder (or to nothing); not followed, \
                 nothing it points to is read"
            ),
            FolderFileErrorKind::NotRegular(what) => {
                write!(
                    f,
                    "{name} is {what}, not a regular file; refusing to read it"
                )
            }
            FolderFileErrorKind::TooLarge { size, limit } => write!(
                f,
                "{name} is {size} bytes, over the limit of {limit} bytes{}; not read",
                if limit % (1 << 20) == 0 {
                    format!(" ({} MiB)", limit >> 20)
                } else {
                    String::new()
                }
            ),
            FolderFileErrorKind::Io(e) => write!(f, "cannot read {name}: {e}"),
        }
    }
}

impl std::error::Error for FolderFileError {}

/// Where `path` really is when it is a regular file, folder or special file that stays
/// inside `folder`: the path itself when it is not a symlink, the symlink's resolved target
/// when that lies inside the folder. `Err(SymlinkOutside)` for a symlink that leaves the
/// folder or dangles — the rule sync applies to seed tools, and the loader and `check` to
/// every tool.
pub fn resolve_in_folder(folder: &Path, path: &Path) -> Result<PathBuf, FolderFileError> {
    let err = |kind| FolderFileError::new(path, kind);
    let meta = fs::symlink_metadata(path).map_err(|e| {
        err(if e.kind() == io::ErrorKind::NotFound {
            FolderFileErrorKind::NotFound
        } else {
            FolderFileErrorKind::Io(e)
        })
    })?;
    if !meta.file_type().is_symlink() {
        return Ok(path.to_path_buf());
    }
    let root = fs::canonicalize(folder).map_err(|e| err(FolderFileErrorKind::Io(e)))?;
    match fs::canonicalize(path) {
        Ok(real) if real.starts_with(&root) => Ok(real),
        _ => Err(err(FolderFileErrorKind::SymlinkOutside)),
    }
}

/// Reads the file `path` of the tool folder `folder` under the rules every command shares:
/// a symlink is followed only to a file inside the folder ([`resolve_in_folder`]); a FIFO,
/// socket, device or folder is refused without being opened (and the open is
/// non-blocking, so a swap in between cannot hang); a file over `limit` bytes is refused
/// from its metadata, before anything is read, and the read itself stops after `limit`
/// bytes. Errors name the file, never its content.
pub fn read_folder_file(
    folder: &Path,
    path: &Path,
    limit: u64,
) -> Result<Vec<u8>, FolderFileError> {
    let real = resolve_in_folder(folder, path)?;
    let err = |kind| FolderFileError::new(path, kind);
    let io = |e: io::Error| err(FolderFileErrorKind::Io(e));
    let check = |meta: &fs::Metadata| {
        if let Some(what) = special_kind(meta.file_type()) {
            return Err(err(FolderFileErrorKind::NotRegular(what)));
        }
        if meta.len() > limit {
            return Err(err(FolderFileErrorKind::TooLarge {
                size: meta.len(),
                limit,
            }));
        }
        Ok(())
    };
    // `real` has no symlink as its last component: one appearing there now is refused.
    check(&fs::symlink_metadata(&real).map_err(io)?)?;
    let f = File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(&real)
        .map_err(io)?;
    let meta = f.metadata().map_err(io)?;
    check(&meta)?;
    let mut buf = Vec::with_capacity(meta.len() as usize);
    f.take(limit + 1).read_to_end(&mut buf).map_err(io)?;
    if buf.len() as u64 > limit {
        // It grew after the check.
        return Err(err(FolderFileErrorKind::TooLarge {
            size: buf.len() as u64,
            limit,
        }));
    }
    Ok(buf)
}

/// Reads `<folder>/TOOL.md` with [`read_folder_file`] and [`MAX_TOOL_FILE_BYTES`].
pub fn read_tool_file(folder: &Path) -> Result<Vec<u8>, FolderFileError> {
    read_folder_file(
        folder,
        &folder.join(crate::model::TOOL_FILE),
        MAX_TOOL_FILE_BYTES,
    )
}

/// The entry file of a tool folder: the first of `candidates` that is a regular file there
/// (directly, or through a symlink that stays inside the folder). `Ok(None)` when none
/// exists; when none is usable but one exists as something else (a FIFO, a folder, a
/// symlink out of the folder), that one's error. Only metadata is read: nothing is opened.
pub fn find_entry(folder: &Path, candidates: &[&str]) -> Result<Option<String>, FolderFileError> {
    let mut problem = None;
    for c in candidates {
        let path = folder.join(c);
        let real = match resolve_in_folder(folder, &path) {
            Ok(real) => real,
            Err(e) if e.is_not_found() => continue,
            Err(e) => {
                problem.get_or_insert(e);
                continue;
            }
        };
        match fs::metadata(&real) {
            Ok(m) => match special_kind(m.file_type()) {
                None => return Ok(Some((*c).to_owned())),
                Some(what) => {
                    problem.get_or_insert(FolderFileError::new(
                        &path,
                        FolderFileErrorKind::NotRegular(what),
                    ));
                }
            },
            Err(e) => {
                problem.get_or_insert(FolderFileError::new(&path, FolderFileErrorKind::Io(e)));
            }
        }
    }
    match problem {
        Some(p) => Err(p),
        None => Ok(None),
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}
