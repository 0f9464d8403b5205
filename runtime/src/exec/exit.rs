//! How a process ended, in words: "exited with code 3", "was killed by signal 9
//! (SIGKILL)", for a plain process and for one behind bwrap (which reports a signal as
//! exit code 128 + N).

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use nix::sys::signal::Signal;

/// "exited with code 3", "was killed by signal 9 (SIGKILL)".
pub(crate) fn describe_exit(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        format!("exited with code {code}")
    } else if let Some(sig) = status.signal() {
        killed_by(sig)
    } else {
        format!("ended ({status})")
    }
}

/// "was killed by signal 9 (SIGKILL)".
pub(crate) fn killed_by(sig: i32) -> String {
    match Signal::try_from(sig) {
        Ok(s) => format!("was killed by signal {sig} ({})", s.as_str()),
        Err(_) => format!("was killed by signal {sig}"),
    }
}

/// How a process behind bwrap ended: bwrap reports a tool killed by signal N as exit
/// code 128 + N.
pub(crate) fn describe_jailed(status: ExitStatus) -> String {
    match status.code() {
        Some(c) if c > 128 && c < 192 => killed_by(c - 128),
        _ => describe_exit(status),
    }
}
