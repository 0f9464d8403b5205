//! bubblewrap's options for one jailed process, and the rlimits and cgroups it starts
//! under.

use super::SandboxPolicy;
use super::interp::{Interp, which};
use super::jail::{ETC, Jail, cgroup_of, jail_env, mounts, working_dir};
use super::seccomp;
use crate::exec::error::SetupError;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use toolbind_codegen::model::ToolSpec;

pub(super) fn push<const N: usize>(opts: &mut Vec<OsString>, items: [&str; N]) {
    opts.extend(items.iter().map(OsString::from));
}

fn push_bind(opts: &mut Vec<OsString>, flag: &str, src: &Path, dest: &Path) {
    opts.push(flag.into());
    opts.push(src.as_os_str().to_owned());
    opts.push(dest.as_os_str().to_owned());
}

/// The options every jail shares: namespaces, the system folders, /proc, /dev, /tmp and
/// the interpreter's prefix.
pub(super) fn base_options(
    policy: &SandboxPolicy,
    interp: &Interp,
    network: bool,
) -> Vec<OsString> {
    let mut o = Vec::new();
    push(&mut o, ["--unshare-all"]);
    if network {
        // Only counts after --unshare-all.
        push(&mut o, ["--share-net"]);
    }
    push(
        &mut o,
        [
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--ro-bind",
            "/usr",
            "/usr",
        ],
    );
    // Copy the host's layout: a symlink where it has one (merged /usr), a bind otherwise.
    for top in ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"] {
        let p = Path::new(top);
        match std::fs::read_link(p) {
            Ok(target) => {
                o.push("--symlink".into());
                o.push(target.into_os_string());
                o.push(top.into());
            }
            Err(_) if p.is_dir() => push_bind(&mut o, "--ro-bind", p, p),
            Err(_) => {}
        }
    }
    for etc in ETC {
        push(&mut o, ["--ro-bind-try", etc, etc]);
    }
    let tmp = policy.limits.tmp_size.max(1 << 20).to_string();
    push(&mut o, ["--proc", "/proc", "--dev", "/dev", "--size"]);
    o.push(tmp.clone().into());
    push(&mut o, ["--tmpfs", "/dev/shm", "--size"]);
    o.push(tmp.into());
    push(&mut o, ["--tmpfs", "/tmp"]);
    for p in &interp.prefixes {
        push_bind(&mut o, "--ro-bind", p, p);
    }
    o
}

pub(super) fn build(
    policy: &SandboxPolicy,
    interp: &Interp,
    tool: &ToolSpec,
    binds: &[PathBuf],
    cwd: Option<&Path>,
) -> Result<Jail, SetupError> {
    let network = policy.network && tool.sandbox.network != Some(false);
    let mut o = base_options(policy, interp, network);

    let state = policy.checked_state_dir(tool)?;
    for (src, dest, writable) in &mounts(policy, tool, binds, &state)? {
        // /usr is already visible, read-only: a grant below it adds nothing.
        if dest.starts_with("/usr") && !writable {
            continue;
        }
        push_bind(
            &mut o,
            if *writable { "--bind" } else { "--ro-bind" },
            src,
            dest,
        );
    }
    // bwrap's root is a tmpfs as large as half the host's memory: left writable, a tool could
    // fill RAM by writing to `/` or `/etc`, past every limit. Read-only once everything is
    // mounted (not recursive: /tmp, /dev/shm, the state folder and write grants stay
    // writable, each with its own bound).
    push(&mut o, ["--remount-ro", "/"]);
    // Applied by bwrap after its own setup, just before it execs the tool; `process::spawn`
    // puts the program on fd 6.
    let seccomp = if network {
        seccomp::common()
    } else {
        seccomp::common_offline()
    }
    .map_err(SetupError::Seccomp)?;
    push(&mut o, ["--seccomp", "6"]);
    o.push("--chdir".into());
    o.push(working_dir(policy, cwd, &state).into_os_string());

    let mut options = Vec::new();
    for a in &o {
        options.extend_from_slice(a.as_bytes());
        options.push(0);
    }
    let (cgroup, nproc) = cgroup_of(policy, BWRAP_PROCESSES)?;
    Ok(Jail {
        bwrap: which(&policy.bwrap).unwrap_or_else(|| policy.bwrap.clone()),
        options,
        exe: interp.exe.clone(),
        env: jail_env(interp, &state),
        limits: policy.limits.clone(),
        cgroup,
        nproc,
        warm: false,
        seccomp: Some(seccomp),
        light: None,
    })
}

/// The slots bwrap itself takes in a jail's cgroup, counted on top of the process limit:
/// its monitor, the namespace's init, the command.
const BWRAP_PROCESSES: u64 = 3;
