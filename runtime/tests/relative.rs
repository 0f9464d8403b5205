//! Relative folders, as the README's `main.rs` gives them (`Loader::new().dir("tools")`):
//! made absolute when given, so every language's tool runs in the jail, whose working
//! folder is not the agent's. Cargo runs integration tests in the crate's folder, so
//! `tests/fixtures/relative` is relative to where the test runs; no test changes directory.
//!
//! Every call is bounded by its TOOL.md's `timeout: 30`, and its processes die with it.

use crate::exec_common;

use std::path::Path;
use std::time::Duration;

use exec_common::call;
use serde_json::json;
use toolbind::exec::{ExecConfig, SubprocessExecutor};
use toolbind::sandbox::{SandboxMode, SandboxPolicy};

const RELATIVE: &str = "tests/fixtures/relative";

fn jailed(scratch: &Path, policy: SandboxPolicy) -> SubprocessExecutor {
    SubprocessExecutor::new(
        ExecConfig::default()
            .cache_dir(scratch.join("cache"))
            .grace(Duration::from_millis(500))
            .sandbox(
                policy
                    .mode(SandboxMode::Required)
                    .state_dir(scratch.join("state")),
            ),
    )
}

#[tokio::test]
async fn a_relative_tools_folder_runs_every_language_in_the_jail() {
    assert!(
        Path::new(RELATIVE).is_dir(),
        "the test runs in the crate's folder"
    );
    let loaded = toolbind::Loader::new().dir(RELATIVE).quiet().load();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let scratch = tempfile::tempdir().unwrap();
    let exec = jailed(scratch.path(), SandboxPolicy::new());
    for (name, said) in [
        ("hello_py", "hello from python"),
        ("hello_sh", "hello from bash"),
        ("hello_ts", "hello from typescript"),
    ] {
        let tool = loaded.registry.get(name).expect(name);
        assert!(tool.dir().is_absolute(), "{}", tool.dir().display());
        let r = call(&exec, tool, json!({})).await;
        assert!(!r.is_error, "{name}: {}", r.text_content());
        assert_eq!(r.text_content().trim(), said, "{name}");
    }
}

#[test]
fn relative_folders_are_made_absolute_when_given() {
    let here = std::env::current_dir().unwrap();
    let loader = toolbind::Loader::new().dir(RELATIVE).dirs(["more/tools"]);
    assert_eq!(
        loader.tools_dirs(),
        [here.join(RELATIVE), here.join("more/tools")]
    );
    let policy = SandboxPolicy::new()
        .allow_read("data/in")
        .allow_write("data/out");
    assert_eq!(policy.get_read(), [here.join("data/in")]);
    assert_eq!(policy.get_write(), [here.join("data/out")]);
    let policy = policy.state_dir("state");
    assert_eq!(policy.get_state_dir(), Some(here.join("state").as_path()));
}
