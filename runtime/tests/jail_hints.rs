//! The note a jailed call that failed gets when it names a path the jail hides: in the
//! words of the front end (the Rust API by default, `--allow-read` when the policy says
//! so, never both), for a path given as an argument and for one in a variable of the
//! tool's `env:` that its error names.
//!
//! Every test runs under `SandboxMode::Required` (CI installs bubblewrap); every call is
//! bounded by its TOOL.md's `timeout: 30`.

use crate::exec_common;

use std::path::Path;
use std::time::Duration;

use exec_common::call;
use serde_json::json;
use toolbind::ToolInfo;
use toolbind::exec::{ExecConfig, SubprocessExecutor};
use toolbind::sandbox::{GrantHints, SandboxMode, SandboxPolicy};

const READ: &str = "def execute(i, p, s, u):\n    return open(p['path']).read()\n";

/// Reads `$HINTS_DB_PATH` the way `email_db` reads `EMAIL_DB_PATH`.
const READ_ENV: &str = "import os\ndef execute(i, p, s, u):\n    raw = os.environ['HINTS_DB_PATH']\n    if not os.path.exists(raw):\n        raise Exception(f'database not found: HINTS_DB_PATH={raw} does not exist')\n    return 'found'\n";

fn tool(root: &Path, name: &str, extra: &str, code: &str) -> ToolInfo {
    let dir = root.join("tools").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("TOOL.md"),
        format!("---\nname: {name}\ndescription: test tool\nlanguage: python\ntimeout: 30\n{extra}inputs:\n  path:\n    type: string\n    optional: true\n    description: a file\n---\n"),
    )
    .unwrap();
    std::fs::write(dir.join("index.py"), code).unwrap();
    let loaded = toolbind::Loader::new()
        .dir(root.join("tools"))
        .quiet()
        .load();
    loaded.registry.get(name).expect(name).clone()
}

fn executor(root: &Path, hints: Option<GrantHints>, env: &[(&str, &Path)]) -> SubprocessExecutor {
    let mut policy = SandboxPolicy::new()
        .mode(SandboxMode::Required)
        .state_dir(root.join("state"));
    if let Some(h) = hints {
        policy = policy.grant_hints(h);
    }
    SubprocessExecutor::new(
        ExecConfig::default()
            .cache_dir(root.join("cache"))
            .grace(Duration::from_millis(500))
            .env_set(
                env.iter()
                    .map(|(k, v)| (k.to_string(), v.display().to_string())),
            )
            .sandbox(policy),
    )
}

#[tokio::test]
async fn the_hint_names_the_rust_api_or_the_flags_never_both() {
    let lab = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let hidden = outside.path().join("planted.txt");
    std::fs::write(&hidden, "x").unwrap();
    let t = tool(lab.path(), "reader", "", READ);

    let r = call(
        &executor(lab.path(), None, &[]),
        &t,
        json!({"path": hidden}),
    )
    .await;
    let text = r.text_content();
    assert!(r.is_error, "{text}");
    assert!(
        text.contains(&format!("the sandbox does not show it to the tool: `{}`", hidden.display()))
            && text.contains(
                "Grant access with `SandboxPolicy::allow_read(PATH)` or `SandboxPolicy::allow_write(PATH)`"
            ),
        "{text}"
    );
    assert!(!text.contains("--allow-"), "{text}");

    let flags = executor(lab.path(), Some(GrantHints::Flags), &[]);
    let text = call(&flags, &t, json!({"path": hidden}))
        .await
        .text_content();
    assert!(
        text.contains("Grant access with `--allow-read PATH` or `--allow-write PATH`"),
        "{text}"
    );
    assert!(!text.contains("SandboxPolicy"), "{text}");
}

#[tokio::test]
async fn a_hidden_path_in_an_env_variable_the_error_names_gets_the_hint() {
    let lab = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let db = outside.path().join("mail.db");
    std::fs::write(&db, "x").unwrap();
    let t = tool(lab.path(), "maildb", "env:\n  - HINTS_DB_PATH\n", READ_ENV);

    let exec = executor(lab.path(), None, &[("HINTS_DB_PATH", &db)]);
    let r = call(&exec, &t, json!({})).await;
    let text = r.text_content();
    assert!(r.is_error, "{text}");
    assert!(text.contains("does not exist"), "{text}");
    assert!(
        text.contains(&format!(
            "the sandbox does not show it to the tool: `{}` (in `HINTS_DB_PATH`)",
            db.display()
        )) && text.contains("Grant access with `SandboxPolicy::allow_read(PATH)`"),
        "{text}"
    );

    // Granted: the tool finds it.
    let granted = SubprocessExecutor::new(
        ExecConfig::default()
            .cache_dir(lab.path().join("cache"))
            .env_set([("HINTS_DB_PATH", db.display().to_string())])
            .sandbox(
                SandboxPolicy::new()
                    .mode(SandboxMode::Required)
                    .state_dir(lab.path().join("state"))
                    .allow_read(outside.path()),
            ),
    );
    let r = call(&granted, &t, json!({})).await;
    assert_eq!(r.text_content(), "found");

    // A variable the error does not name is no clue: no note.
    let quiet = tool(
        lab.path(),
        "other_error",
        "env:\n  - HINTS_DB_PATH\n",
        "def execute(i, p, s, u):\n    raise Exception('something else broke')\n",
    );
    let text = call(&exec, &quiet, json!({})).await.text_content();
    assert!(!text.contains("does not show"), "{text}");
}
