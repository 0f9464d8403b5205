//! Reading a tool's files without ever blocking on a special file.
//!
//! A FIFO named `TOOL.md` blocks `open` until a writer appears: every command that reads
//! it (and, for `sync`, every later sync waiting on its lock) would hang. Anything that is
//! not a regular file is refused with an error naming what it is, before it is opened, and
//! the open itself is non-blocking, so a file swapped for a FIFO in between cannot hang
//! either.

use std::fs::{self, File, FileType};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

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
    let what = if ty.is_file() {
        return Ok(());
    } else if ty.is_dir() {
        "a folder"
    } else if ty.is_fifo() {
        "a FIFO (named pipe)"
    } else if ty.is_socket() {
        "a socket"
    } else if ty.is_char_device() || ty.is_block_device() {
        "a device"
    } else {
        "not a regular file"
    };
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{name} is {what}, not a regular file; refusing to read it"),
    ))
}
