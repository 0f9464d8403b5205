//! Finding the real interpreter behind a command name, and trying it once in the jail.

use super::bwrap::{base_options, push};
use super::running::describe;
use super::{Kind, SandboxPolicy};
use crate::exec::error::{InterpError, ProbeError};
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

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

/// Finds the interpreter, then runs it inside the real jail: `bwrap ... -- node -e 0`.
pub(super) fn probe(
    policy: &SandboxPolicy,
    kind: Kind,
    program: &str,
) -> Result<Interp, ProbeError> {
    let Some(bwrap) = which(&policy.bwrap) else {
        return Err(ProbeError::NoBwrap {
            bwrap: policy.bwrap.clone(),
        });
    };
    let interp = resolve(kind, program)?;
    let mut opts = base_options(policy, &interp, policy.network);
    push(&mut opts, ["--chdir", "/"]);
    // Every jailed call passes `--json-status-fd` (bwrap 0.3.1 and later): an older bwrap
    // fails here, once, with its own "Unknown option", not at every call.
    push(&mut opts, ["--json-status-fd", "1"]);
    // And its environment through `--clearenv`/`--setenv` (bwrap 0.5.0 and later).
    push(
        &mut opts,
        ["--clearenv", "--setenv", "PATH", "/usr/bin:/bin"],
    );
    let mut cmd = std::process::Command::new(&bwrap);
    cmd.args(&opts)
        .arg("--")
        .arg(&interp.exe)
        .args(match kind {
            Kind::Node => ["-e", "0"],
            Kind::Python => ["-c", "pass"],
            Kind::Bash => ["-c", "true"],
        })
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let out = run_bounded(cmd, Duration::from_secs(20)).map_err(|e| ProbeError::BwrapFailed {
        bwrap: bwrap.clone(),
        why: e.to_string(),
    })?;
    if !out.0.success() {
        return Err(ProbeError::Refused {
            bwrap,
            program: program.to_owned(),
            exit: describe(out.0),
            stderr: String::from_utf8_lossy(&out.1).trim().to_owned(),
        });
    }
    Ok(interp)
}

/// Runs `cmd` for at most `limit`, returning its status and stderr.
fn run_bounded(
    mut cmd: std::process::Command,
    limit: Duration,
) -> std::io::Result<(ExitStatus, Vec<u8>)> {
    use std::io::Read;
    let mut child = cmd.spawn()?;
    let mut stderr = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(s) = stderr.as_mut() {
            let _ = s.take(16 << 10).read_to_end(&mut buf);
        }
        buf
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::other(format!(
                "no answer within {} s",
                limit.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Ok((status, reader.join().unwrap_or_default()))
}

pub(super) fn which(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 {
        return program.is_file().then(|| program.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| {
                use std::os::unix::fs::PermissionsExt;
                m.is_file() && m.permissions().mode() & 0o111 != 0
            })
        })
}

/// The real interpreter behind `program` (a pyenv shim, an nvm or cache install) and the
/// host folders it needs.
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
        Kind::Python => {
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
        if p == Path::new("/") || p.starts_with("/usr") || kept.iter().any(|k| p.starts_with(k)) {
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
