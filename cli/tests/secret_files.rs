//! `serve`'s secret files (`--auth-token-file`, `--request-state-key-file`) go through
//! `toolbind::secret::read_secret_file`: a FIFO, a 200 MB file, a folder or a file owned by
//! another user is a clear error at start (exit 2), never a hang; a file other users can
//! read gives its warning and is used.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use common::{Background, eventually, fixture, output_within, toolbind};

/// A 32-byte key, as `head -c 32 /dev/urandom | base64` writes one.
const KEY: &str = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n";
const TOKEN: &str = "secret-files-token-0123456789\n";

/// `serve` with `flag file` (and `--http` for the token file).
fn serve_with(flag: &str, file: &Path) -> Command {
    let mut cmd = toolbind();
    cmd.args(["serve", "--dir"])
        .arg(fixture("tools"))
        .env_remove("TOOLBIND_TOKEN");
    if flag == "--auth-token-file" {
        cmd.args(["--http", "127.0.0.1:0"]);
    }
    cmd.arg(flag).arg(file);
    cmd
}

/// Runs `serve` with `flag file`, bounded to 20 s: it must end with exit 2 and a message
/// naming the file and containing `want`.
fn refused(flag: &str, file: &Path, want: &str) {
    let out = output_within(serve_with(flag, file), 20.0)
        .unwrap_or_else(|| panic!("serve blocked on {flag} {}", file.display()));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{flag}: {err}");
    assert!(err.contains(flag), "{flag}: {err}");
    assert!(err.contains(&file.display().to_string()), "{flag}: {err}");
    assert!(err.contains(want), "{flag}: {want:?} not in {err}");
}

#[test]
fn special_big_and_foreign_secret_files_are_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let folder = dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    let big = dir.path().join("big");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(200 * 1024 * 1024)
        .unwrap();
    for flag in ["--auth-token-file", "--request-state-key-file"] {
        // No writer on the FIFO: a blocking open would never return.
        refused(flag, &fifo, "is a FIFO (named pipe), not a regular file");
        refused(flag, &folder, "is a folder, not a regular file");
        // Refused from its size, never read.
        refused(flag, &big, "209715200 bytes");
    }
}

#[test]
fn a_secret_file_of_another_user_is_refused_at_start() {
    if !nix::unistd::geteuid().is_root() {
        // Only root can give a file to another user; CI runs this suite as root, and
        // toolbind's own unit test (secret::tests) covers the check the same way.
        eprintln!("skipped: not root, so no file of another user can be made");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (flag, content) in [
        ("--auth-token-file", TOKEN),
        ("--request-state-key-file", KEY),
    ] {
        let file = dir.path().join(flag.trim_start_matches('-'));
        std::fs::write(&file, content).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::chown(&file, Some(65534), Some(65534)).unwrap();
        refused(flag, &file, "belongs to user 65534");
    }
}

#[test]
fn a_secret_file_others_can_read_warns_and_is_used() {
    let dir = tempfile::tempdir().unwrap();
    // The key: serve on stdio warns and starts (its stdin is closed, so it then ends).
    let key = dir.path().join("key");
    std::fs::write(&key, KEY).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = output_within(serve_with("--request-state-key-file", &key), 20.0)
        .expect("serve blocked on a readable key file");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is readable by other users (chmod 600 it)"),
        "{err}"
    );
    assert!(err.contains("serving "), "{err}");

    // The token: the server starts, warns, and says where its token came from.
    let token = dir.path().join("token");
    std::fs::write(&token, TOKEN).unwrap();
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o640)).unwrap();
    let s = Background::start(
        serve_with("--auth-token-file", &token),
        dir.path().join("log"),
        "serving ",
    );
    assert!(
        eventually(10.0, || s.log().contains("bearer token: from")),
        "{}",
        s.log()
    );
    let log = s.log();
    assert!(
        log.contains("is readable by other users (chmod 600 it)"),
        "{log}"
    );
    assert!(!log.contains(TOKEN.trim()), "the token was logged:\n{log}");
}
