//! `toolbind sync` tells the truth: a tool that failed to install (here: a full disk,
//! simulated with a file-size limit) makes the exit status non-zero, and the report
//! separates failed from skipped.

use crate::common;

use std::os::unix::process::CommandExt;

use common::{stderr, stdout, toolbind};

const TOOL_MD: &str = "---\nname: NAME\ndescription: A tool.\nlanguage: bash\n---\nA tool.\n";

fn seed_tool(seed: &std::path::Path, name: &str, data_bytes: usize) {
    let dir = seed.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("TOOL.md"), TOOL_MD.replace("NAME", name)).unwrap();
    std::fs::write(dir.join("index.sh"), "echo hi\n").unwrap();
    std::fs::write(dir.join("data.bin"), vec![b'x'; data_bytes]).unwrap();
}

#[test]
fn a_tool_that_fails_to_install_fails_the_command_and_is_reported_as_failed() {
    let tmp = tempfile::tempdir().unwrap();
    let seed = tmp.path().join("seed");
    seed_tool(&seed, "big", 256 * 1024);
    seed_tool(&seed, "small", 10);
    let data = tmp.path().join("data");
    let mut cmd = toolbind();
    cmd.args(["sync", "--seed", seed.to_str().unwrap(), "--data"])
        .arg(&data);
    // Writes past 64 KiB fail with EFBIG, as on a full disk (ENOSPC).
    // SAFETY: only async-signal-safe calls (signal, setrlimit) between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            use nix::sys::resource::{Resource, setrlimit};
            use nix::sys::signal::{SigHandler, Signal, signal};
            signal(Signal::SIGXFSZ, SigHandler::SigIgn).map_err(std::io::Error::from)?;
            setrlimit(Resource::RLIMIT_FSIZE, 64 * 1024, 64 * 1024)
                .map_err(std::io::Error::from)?;
            Ok(())
        });
    }
    let o = cmd.output().unwrap();
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{}", stderr(&o));
    assert!(out.contains("installed small (version 0)"), "{out}");
    assert!(out.contains("failed big: "), "{out}");
    assert!(out.contains("File too large"), "{out}");
    assert!(
        out.ends_with("1 installed, 0 updated, 0 unchanged, 0 skipped, 1 failed\n"),
        "{out}"
    );
    assert!(stderr(&o).contains("1 tool(s) failed"), "{}", stderr(&o));
    // What did install is usable; nothing of the failed tool was left behind.
    assert!(data.join("small/index.sh").is_file());
    assert!(!data.join("big").exists());
}
