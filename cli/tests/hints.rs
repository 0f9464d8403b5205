//! What the command line tells a user to do names what they can type there: a jail's hint
//! names `--allow-read PATH`, never the Rust API; `sync` gives the fix for a seed edited
//! without a version bump; `list --mcp-config` without a tools folder does not warn about
//! the default `./tools` it was never asked for.
//!
//! Every command runs jailed (`--sandbox required`) where a jail is involved, is bounded by
//! its tools' `timeout:` or the server's failing at start, and leaves no process behind.

use crate::common;

use std::fs;
use std::path::Path;

use common::{assert_code, stderr, stdout, toolbind};

fn reader_tool(tools: &Path) {
    let t = tools.join("read_file");
    fs::create_dir_all(&t).unwrap();
    fs::write(
        t.join("TOOL.md"),
        "---\nname: read_file\ndescription: Reads a file.\nlanguage: python\ntimeout: 30\ninputs:\n  path:\n    type: string\n    description: the file\n---\n",
    )
    .unwrap();
    fs::write(
        t.join("index.py"),
        "def execute(i, p, s, u):\n    return open(p['path']).read()\n",
    )
    .unwrap();
}

#[test]
fn a_hidden_path_hint_names_the_commands_flags_not_the_rust_api() {
    let dir = tempfile::tempdir().unwrap();
    reader_tool(&dir.path().join("tools"));
    let hidden = dir.path().join("outside.txt");
    fs::write(&hidden, "not for the tool").unwrap();
    let out = toolbind()
        .args(["call", "read_file", "--sandbox", "required", "--args"])
        .arg(serde_json::json!({ "path": hidden }).to_string())
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .arg(dir.path().join("tools"))
        .output()
        .unwrap();
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        all.contains("the sandbox does not show it to the tool")
            && all.contains("Grant access with `--allow-read PATH` or `--allow-write PATH`"),
        "{all}"
    );
    assert!(!all.contains("SandboxPolicy"), "{all}");
}

#[test]
fn a_failed_mcp_servers_hint_names_the_commands_flags() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("mcp.json");
    let script = common::fixture("mcp_servers/misbehaving.py");
    fs::write(
        &cfg,
        serde_json::json!({"mcpServers": {"broken": {"command": "python3", "args": [script, "stderr"]}}})
            .to_string(),
    )
    .unwrap();
    let out = toolbind()
        .current_dir(dir.path())
        .args(["list", "--sandbox", "required", "--mcp-config"])
        .arg(&cfg)
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(err.contains("MISBEHAVING_TOKEN is not set"), "{err}");
    assert!(
        err.contains("grant it (`--allow-read PATH` or `--allow-write PATH`)"),
        "{err}"
    );
    assert!(!err.contains("SandboxPolicy"), "{err}");
}

#[test]
fn a_path_hidden_from_a_jailed_mcp_server_gets_the_grant_hint() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("mcp.json");
    let script = common::fixture("mcp_servers/misbehaving.py");
    fs::write(
        &cfg,
        serde_json::json!({"mcpServers": {"reader": {"command": "python3", "args": [script, "readfile"]}}})
            .to_string(),
    )
    .unwrap();
    let outside = tempfile::tempdir().unwrap();
    let hidden = outside.path().join("notes.txt");
    fs::write(&hidden, "kept from the server").unwrap();
    let call = |grant: bool| {
        let mut c = toolbind();
        c.current_dir(dir.path())
            .args(["call", "ok", "--sandbox", "required", "--args"])
            .arg(serde_json::json!({ "text": hidden }).to_string())
            .arg("--mcp-config")
            .arg(&cfg)
            .arg("--state-dir")
            .arg(dir.path().join("state"));
        if grant {
            c.arg("--allow-read").arg(outside.path());
        }
        let out = c.output().unwrap();
        format!("{}{}", stdout(&out), stderr(&out))
    };
    let all = call(false);
    assert!(all.contains("cannot read"), "{all}");
    assert!(
        all.contains(&format!(
            "the jail of MCP server `reader` does not show it to the server: `{}`",
            hidden.display()
        )) && all.contains("Grant access with `--allow-read PATH` or `--allow-write PATH`"),
        "{all}"
    );
    assert!(!all.contains("SandboxPolicy"), "{all}");
    // Granted, the server reads it, and nothing is noted.
    let all = call(true);
    assert!(all.contains("ok: kept from the server"), "{all}");
    assert!(!all.contains("does not show"), "{all}");
}

#[test]
fn list_with_only_an_mcp_config_does_not_warn_about_the_default_tools_folder() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("mcp.json");
    let script = common::fixture("mcp_servers/misbehaving.py");
    fs::write(
        &cfg,
        serde_json::json!({"mcpServers": {"fine": {"command": "python3", "args": [script, "pages"]}}})
            .to_string(),
    )
    .unwrap();
    // No `tools` folder where it runs, and none named.
    let out = toolbind()
        .current_dir(dir.path())
        .args(["list", "--sandbox", "required", "--mcp-config"])
        .arg(&cfg)
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .output()
        .unwrap();
    assert_code(&out, 0);
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(all.contains("MCP server `fine`"), "{all}");
    assert!(!all.contains("cannot read tools folder"), "{all}");
    assert!(!all.contains("skipped"), "{all}");
    assert!(all.contains(" from the MCP servers of "), "{all}");
}

#[test]
fn sync_says_to_bump_the_version_of_an_edited_seed() {
    let dir = tempfile::tempdir().unwrap();
    let (seed, data) = (dir.path().join("seed"), dir.path().join("data"));
    let t = seed.join("dice");
    fs::create_dir_all(&t).unwrap();
    fs::write(
        t.join("TOOL.md"),
        "---\nname: dice\ndescription: Rolls.\nversion: 3\nlanguage: bash\n---\n",
    )
    .unwrap();
    fs::write(t.join("index.sh"), "echo 4\n").unwrap();
    let sync = || {
        toolbind()
            .args(["sync", "--seed"])
            .arg(&seed)
            .arg("--data")
            .arg(&data)
            .output()
            .unwrap()
    };
    assert_code(&sync(), 0);
    fs::write(t.join("index.sh"), "echo 5\n").unwrap();
    let out = sync();
    assert_code(&out, 0);
    let text = stdout(&out);
    assert!(
        text.contains(&format!(
            "not installed dice: the seed differs from the installed copy, but both are version 3; bump `version:` to 4 in {} to install it",
            t.join("TOOL.md").display()
        )),
        "{text}"
    );
    assert!(!text.contains("unchanged dice"), "{text}");
    assert_eq!(
        fs::read_to_string(data.join("dice/index.sh")).unwrap(),
        "echo 4\n"
    );
}
