//! Whether a seed tool and its installed copy of the same version hold the same files: a
//! seed edited without bumping its `version:` is told apart from an unchanged one, so a
//! sync can say so instead of "unchanged" (it still installs nothing: an installed copy is
//! never replaced at the same version).

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Whether the files a sync would copy from `seed` (regular files, and symlinks to files
/// inside `root`, as `copy_tree` takes them) are, byte for byte, the files of `installed`,
/// and it has no others. Only contents and names are compared (not modes or times, which a
/// copy does not keep in full), and nothing is parsed. Never follows a symlink out of
/// `root`, never opens a special file.
pub(super) fn same_files(seed: &Path, root: &Path, installed: &Path) -> io::Result<bool> {
    let mut from = BTreeMap::new();
    seed_files(seed, Path::new(""), root, &mut from)?;
    let mut to = BTreeMap::new();
    installed_files(installed, Path::new(""), &mut to)?;
    if from.len() != to.len() || from.keys().ne(to.keys()) {
        return Ok(false);
    }
    for (a, b) in from.values().zip(to.values()) {
        if !same_bytes(a, b)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `rel -> file to read` for what a sync copies from `dir`.
fn seed_files(
    dir: &Path,
    rel: &Path,
    root: &Path,
    out: &mut BTreeMap<PathBuf, PathBuf>,
) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let name = rel.join(entry.file_name());
        let ft = entry.file_type()?;
        if ft.is_dir() {
            seed_files(&path, &name, root, out)?;
        } else if ft.is_file() {
            out.insert(name, path);
        } else if ft.is_symlink()
            && let Ok(real) = fs::canonicalize(&path)
            && real.starts_with(root)
            && real.is_file()
        {
            out.insert(name, real);
        }
    }
    Ok(())
}

/// `rel -> file` for the regular files of an installed copy (a sync writes nothing else).
fn installed_files(dir: &Path, rel: &Path, out: &mut BTreeMap<PathBuf, PathBuf>) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = rel.join(entry.file_name());
        let ft = entry.file_type()?;
        if ft.is_dir() {
            installed_files(&entry.path(), &name, out)?;
        } else {
            // A symlink or special file was not put there by a sync: it differs.
            out.insert(name, entry.path());
        }
    }
    Ok(())
}

fn same_bytes(a: &Path, b: &Path) -> io::Result<bool> {
    let mb = fs::symlink_metadata(b)?;
    if !mb.is_file() || fs::metadata(a)?.len() != mb.len() {
        return Ok(false);
    }
    let (mut fa, mut fb) = (File::open(a)?, File::open(b)?);
    let (mut ba, mut bb) = (vec![0u8; 64 << 10], vec![0u8; 64 << 10]);
    loop {
        let n = read_full(&mut fa, &mut ba)?;
        if n != read_full(&mut fb, &mut bb)? || ba[..n] != bb[..n] {
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
    }
}

/// Reads until `buf` is full or the file ends.
fn read_full(f: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}
