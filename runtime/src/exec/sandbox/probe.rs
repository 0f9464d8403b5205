//! Trying an interpreter once in the real jail (`bwrap ... -- node -e 0`), after
//! [`resolve`](super::interp::resolve) found it.

use super::bwrap::{base_options, push};
use super::interp::{Interp, resolve, which};
use super::{Kind, SandboxPolicy};
use crate::exec::error::ProbeError;
use crate::exec::exit::describe_jailed;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

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
        let stderr = String::from_utf8_lossy(&out.1).trim().to_owned();
        if let Some(why) = no_user_namespace(&stderr) {
            return Err(ProbeError::NoUserNamespace {
                bwrap,
                why,
                light: super::light::unavailable(),
            });
        }
        return Err(ProbeError::Refused {
            bwrap,
            program: program.to_owned(),
            exit: describe_jailed(out.0),
            stderr,
        });
    }
    Ok(interp)
}

/// Why bwrap's trial failed for want of a user namespace, when it did: its own words (a
/// namespace or uid map it could not make: `sysctl user.max_user_namespaces=0`,
/// `kernel.unprivileged_userns_clone=0`, AppArmor's `restrict_unprivileged_userns`, whose
/// namespace lacks the capability to set up the loopback), or a kernel that allows none.
/// Probed by doing (the trial start); the sysctl only backs up words a newer bwrap may
/// change.
fn no_user_namespace(stderr: &str) -> Option<String> {
    const WORDS: [&str; 5] = [
        "namespace",
        "uid map",
        "uid_map",
        "setgroups",
        "RTM_NEWADDR",
    ];
    let said = stderr.lines().find(|l| WORDS.iter().any(|w| l.contains(w)));
    let none_allowed = std::fs::read_to_string("/proc/sys/user/max_user_namespaces")
        .is_ok_and(|v| v.trim() == "0");
    match (said, none_allowed) {
        (Some(line), _) => Some(line.trim().to_owned()),
        (None, true) => Some(format!(
            "user.max_user_namespaces is 0{}",
            if stderr.is_empty() {
                String::new()
            } else {
                format!("; bwrap said: {stderr}")
            }
        )),
        (None, false) => None,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What bwrap 0.8 prints where it cannot make a user namespace (Debian's sysctl,
    /// `max_user_namespaces=0` as a user and as root, Ubuntu's AppArmor rule), and an
    /// unrelated failure, which must not be taken for one.
    #[test]
    fn a_missing_user_namespace_is_told_by_bwraps_words() {
        for words in [
            "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces. On e.g. debian this can be enabled with 'sysctl kernel.unprivileged_userns_clone=1'.",
            "bwrap: Creating new namespace failed: No space left on device",
            "bwrap: setting up uid map: Permission denied",
            "bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted",
        ] {
            assert_eq!(no_user_namespace(words).as_deref(), Some(words));
        }
        let none_allowed = std::fs::read_to_string("/proc/sys/user/max_user_namespaces")
            .is_ok_and(|v| v.trim() == "0");
        let other = "bwrap: Can't find source path /nope: No such file or directory";
        assert_eq!(no_user_namespace(other).is_some(), none_allowed);
    }
}
