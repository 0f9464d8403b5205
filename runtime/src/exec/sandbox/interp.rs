//! Finding the real interpreter behind a command name (a shim, an nvm or cache install)
//! and the host folders it needs, and which folders a jail may show at all.

use super::Kind;
use crate::exec::error::InterpError;
use std::path::{Path, PathBuf};

/// An interpreter as the jail sees it.
#[derive(Debug, Clone)]
pub(super) struct Interp {
    /// The real executable, run by absolute path inside the jail.
    pub(super) exe: PathBuf,
    /// Host folders (outside `/usr`) the interpreter needs, bound read-only.
    pub(super) prefixes: Vec<PathBuf>,
    /// Folders put first on the jail's `PATH`.
    pub(super) path: Vec<PathBuf>,
}

pub(super) fn which(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 {
        return program.is_file().then(|| program.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    // A relative `PATH` entry (`.`, `bin`) would find a file of whatever folder the agent
    // runs in: never one to trust as an interpreter.
    std::env::split_paths(&path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(program))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| {
                use std::os::unix::fs::PermissionsExt;
                m.is_file() && m.permissions().mode() & 0o111 != 0
            })
        })
}

/// Whether `program` names an interpreter this user chose: a bare name found on their
/// `PATH` (absolute entries only, see [`which`]), or a path in the system's own folders
/// (`/usr`, `/bin`, `/sbin`). Only such an interpreter is ever run on the host (a Python is
/// asked where it lives); any other file (`./python3`, a project's `.venv/bin/python`, a
/// path a server's package or a project's config names) is only ever run inside the jail.
fn trusted_interpreter(program: &str) -> bool {
    let p = Path::new(program);
    if p.components().count() == 1 && !program.contains('/') {
        return true;
    }
    system_path(p)
}

/// `p` is absolute, plain (no `.` or `..`) and in `/usr`, `/bin` or `/sbin`.
pub(crate) fn system_path(p: &Path) -> bool {
    use std::path::Component;
    p.is_absolute()
        && p.components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
        && ["/usr", "/bin", "/sbin"].iter().any(|s| p.starts_with(s))
}

/// The real interpreter behind `program` (a pyenv shim, an nvm or cache install) and the
/// host folders it needs. Only a [`trusted_interpreter`] is run on the host to learn them;
/// any other is located from its path alone (and a virtualenv from its `pyvenv.cfg`).
/// Every folder kept is one the jail may show ([`unsafe_to_show`]).
pub(super) fn resolve(kind: Kind, program: &str) -> Result<Interp, InterpError> {
    let found = which(Path::new(program)).ok_or_else(|| InterpError::NotOnPath {
        program: program.to_owned(),
    })?;
    let real = found.canonicalize().map_err(|e| InterpError::Unresolved {
        path: found.clone(),
        why: e.to_string(),
    })?;
    let mut prefixes = Vec::new();
    let exe = match kind {
        Kind::Python if trusted_interpreter(program) => {
            // A pyenv shim is a shell script: ask python itself where it lives.
            let out = std::process::Command::new(&found)
                .args([
                    "-c",
                    "import sys;print(sys.executable);print(sys.prefix);print(sys.base_prefix)",
                ])
                .stdin(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .output()
                .map_err(|e| InterpError::CannotRun {
                    program: program.to_owned(),
                    why: e.to_string(),
                })?;
            let text = String::from_utf8_lossy(&out.stdout);
            let lines: Vec<&str> = text.lines().collect();
            if !out.status.success() || lines.len() < 3 || lines[0].is_empty() {
                return Err(InterpError::NoLocation {
                    program: program.to_owned(),
                });
            }
            prefixes.push(PathBuf::from(lines[1]));
            prefixes.push(PathBuf::from(lines[2]));
            let exe = PathBuf::from(lines[0]);
            if let Ok(r) = exe.canonicalize()
                && let Some(p) = r.parent().and_then(Path::parent)
            {
                prefixes.push(p.to_path_buf());
            }
            exe
        }
        Kind::Python => {
            // Never run: a virtualenv's `bin/python` keeps its own path (Python finds its
            // `pyvenv.cfg` beside `bin`), and the venv and the base install are shown.
            let named = std::path::absolute(&found).unwrap_or(found);
            if let Some(p) = real.parent().and_then(Path::parent) {
                prefixes.push(p.to_path_buf());
            }
            match named.parent().and_then(Path::parent) {
                Some(venv) if venv.join("pyvenv.cfg").is_file() => {
                    prefixes.push(venv.to_path_buf());
                    named
                }
                _ => real,
            }
        }
        Kind::Node | Kind::Bash => {
            if let Some(p) = real.parent().and_then(Path::parent) {
                prefixes.push(p.to_path_buf());
            }
            real
        }
    };
    let mut kept: Vec<PathBuf> = Vec::new();
    for p in prefixes {
        let Ok(p) = p.canonicalize() else { continue };
        if p.starts_with("/usr") || unsafe_to_show(&p) || kept.iter().any(|k| p.starts_with(k)) {
            continue;
        }
        kept.retain(|k| !k.starts_with(&p));
        kept.push(p);
    }
    let path = exe.parent().map(Path::to_path_buf).into_iter().collect();
    Ok(Interp {
        exe,
        prefixes: kept,
        path,
    })
}

/// Folders of a home folder whose names start with a dot that hold toolchains (an nvm
/// node, a pyenv python, a virtualenv, `uv` in `~/.local/bin`), which the jail may show
/// whole.
const HOME_TOOLCHAINS: &[&str] = &[
    ".nvm",
    ".fnm",
    ".volta",
    ".pyenv",
    ".venv",
    ".virtualenvs",
    ".conda",
    ".cargo/bin",
    ".rustup/toolchains",
    ".deno/bin",
    ".bun/bin",
    ".asdf/installs",
    ".local/bin",
    ".local/lib",
    ".local/pipx",
    ".local/share/uv",
    ".local/share/pnpm",
    ".local/share/fnm",
];

/// Folders (and files) of a home that hold secrets: never shown, nor anything in them
/// (but for the [`HOME_TOOLCHAINS`] in them: `.local/share/uv`).
const HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config",
    ".kube",
    ".docker",
    ".password-store",
    ".pki",
    ".mozilla",
    ".thunderbird",
    ".local/share",
    ".local/state",
    ".m2",
    ".gradle",
    ".terraform.d",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".vault-token",
];

/// Whether showing `dir` (read-only, in any jail: an interpreter's prefix, a server's
/// package folder, a folder a `#!` line names) would show what is not the jailed
/// program's: `/`, the system's live state (`/proc`, `/sys`, `/dev`, `/run` with its
/// sockets, `/etc`, `/boot`; `/tmp` and `/var` themselves), the user's home folder or a
/// folder holding it, a dot-folder of the home itself (`~/.cache`, `~/.local`: they mix
/// what a program may see with what it must not) unless it is a toolchain's
/// ([`HOME_TOOLCHAINS`]), a folder of [`HOME_SECRETS`] or one in it (`~/.ssh`,
/// `~/.config/gh`), or toolbind's state root (every server's and tool's `HOME`), a
/// folder holding it or one inside it. `dir` is judged as named and where its links lead
/// (a bind shows the target). A relative `dir` is never shown.
pub(crate) fn unsafe_to_show(dir: &Path) -> bool {
    let real = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    unsafe_as_is(dir) || unsafe_as_is(&real)
}

fn unsafe_as_is(dir: &Path) -> bool {
    use std::path::Component;
    const SYSTEM: [&str; 6] = ["/proc", "/sys", "/dev", "/run", "/etc", "/boot"];
    const SHARED: [&str; 4] = ["/", "/tmp", "/var", "/var/tmp"];
    if !dir.is_absolute()
        || dir
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
    {
        return true;
    }
    let real = |p: PathBuf| p.canonicalize().unwrap_or(p);
    if SHARED.iter().any(|s| dir == Path::new(s)) || SYSTEM.iter().any(|s| dir.starts_with(s)) {
        return true;
    }
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        let home = PathBuf::from(home);
        for h in [home.clone(), real(home)] {
            if h.starts_with(dir) {
                return true;
            }
            if let Ok(rest) = dir.strip_prefix(&h)
                && rest
                    .components()
                    .next()
                    .is_some_and(|c| c.as_os_str().as_encoded_bytes().starts_with(b"."))
                && !HOME_TOOLCHAINS.iter().any(|t| rest.starts_with(t))
                && (rest.components().count() == 1
                    || HOME_SECRETS.iter().any(|t| rest.starts_with(t)))
            {
                return true;
            }
        }
    }
    let state = crate::dirs::state_root();
    [state.clone(), real(state)]
        .iter()
        .any(|s| s.starts_with(dir) || dir.starts_with(s))
}
