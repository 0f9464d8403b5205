//! `--help` of every command, pinned by snapshots in `tests/snapshots/help/`
//! (`UPDATE_EXPECT=1 cargo test -p toolbind-cli --test it help::` rewrites them).

use crate::common;

use common::{assert_code, expect_file, run, stdout};

const COMMANDS: [&str; 9] = [
    "check", "gen", "schema", "prompt", "docs", "sync", "list", "call", "serve",
];

#[test]
fn top_level_help() {
    let o = run(&["--help"]);
    assert_code(&o, 0);
    let text = stdout(&o);
    for c in COMMANDS {
        assert!(
            text.contains(&format!("\n  {c} ")),
            "`{c}` missing:\n{text}"
        );
    }
    expect_file("help/toolbind.txt", &text);
}

#[test]
fn every_command_has_help() {
    for c in COMMANDS {
        let o = run(&[c, "--help"]);
        assert_code(&o, 0);
        let text = stdout(&o);
        assert!(
            text.contains(&format!("Usage: toolbind {c}")),
            "{c}:\n{text}"
        );
        expect_file(&format!("help/{c}.txt"), &text);
    }
}

#[test]
fn version() {
    let o = run(&["--version"]);
    assert_code(&o, 0);
    assert_eq!(
        stdout(&o),
        format!("toolbind {}\n", env!("CARGO_PKG_VERSION"))
    );
}
