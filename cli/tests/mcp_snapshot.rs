//! `toolbind mcp snapshot` and `toolbind mcp check` against real MCP servers no one here
//! wrote (the official reference servers, pinned in tests/mcp-servers/package.json and
//! installed by tests/clients/install.sh), and against a server that misbehaves on purpose
//! (fixtures/mcp_servers/misbehaving.py).

use crate::common;

use std::path::{Path, PathBuf};

use common::{Background, assert_code, clients_dir, free_port, stderr, stdout, toolbind};

fn server_bin(name: &str) -> PathBuf {
    let bin = clients_dir().join("servers/node_modules/.bin").join(name);
    assert!(
        bin.exists(),
        "{} is missing: run tests/clients/install.sh",
        bin.display()
    );
    bin
}

/// The snapshots the trybuild cases generate bindings from (tests/ui/fixtures/mcp).
fn fixture_snapshot(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/ui/fixtures/mcp/{name}.json"))
}

fn config(dir: &Path) -> PathBuf {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let c = serde_json::json!({"mcpServers": {
        "everything": {"command": server_bin("mcp-server-everything"), "args": ["stdio"]},
        "filesystem": {"command": server_bin("mcp-server-filesystem"), "args": ["${DATA_DIR}"]},
        "memory": {"command": server_bin("mcp-server-memory"),
                   "env": {"MEMORY_FILE_PATH": "${DATA_DIR}/memory.json"}},
    }});
    let file = dir.join(".mcp.json");
    std::fs::write(&file, serde_json::to_string_pretty(&c).unwrap()).unwrap();
    file
}

#[test]
fn the_reference_servers_snapshot_and_check() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path());
    let data = dir.path().join("data");
    let out = toolbind()
        .current_dir(dir.path())
        .env("DATA_DIR", &data)
        .args(["mcp", "snapshot", "--config"])
        .arg(&cfg)
        // The server runs in the jail: the folder it serves is granted.
        .arg("--allow-read")
        .arg(&data)
        .output()
        .unwrap();
    assert_code(&out, 0);
    let err = stderr(&out);
    for want in [
        "everything: 13 tools from mcp-servers/everything",
        "filesystem: 14 tools from secure-filesystem-server",
        "memory: 9 tools from memory-server",
    ] {
        assert!(err.contains(want), "{want:?} not in\n{err}");
    }
    // What the pinned servers list is byte for byte what the bindings are generated from.
    for name in ["everything", "filesystem", "memory"] {
        let live = std::fs::read_to_string(dir.path().join(format!("mcp/{name}.json"))).unwrap();
        let fixture = std::fs::read_to_string(fixture_snapshot(name)).unwrap();
        assert!(
            live == fixture,
            "the live snapshot of {name} differs from tests/ui/fixtures/mcp/{name}.json: \
             refresh the fixture (toolbind mcp snapshot) and read the diff"
        );
        assert!(
            !live.contains(data.to_str().unwrap()),
            "a snapshot holds the config's paths"
        );
    }
    // Again: nothing changed, nothing rewritten.
    let again = toolbind()
        .current_dir(dir.path())
        .env("DATA_DIR", &data)
        .args(["mcp", "snapshot", "filesystem", "--config"])
        .arg(&cfg)
        .arg("--allow-read")
        .arg(&data)
        .output()
        .unwrap();
    assert_code(&again, 0);
    assert!(stderr(&again).contains("unchanged"), "{}", stderr(&again));

    let check = |snapshot: &Path| {
        toolbind()
            .current_dir(dir.path())
            .env("DATA_DIR", &data)
            .args(["mcp", "check"])
            .arg(snapshot)
            .arg("--config")
            .arg(&cfg)
            .arg("--allow-read")
            .arg(&data)
            .output()
            .unwrap()
    };
    let fs = dir.path().join("mcp/filesystem.json");
    let ok = check(&fs);
    assert_code(&ok, 0);
    assert!(
        stderr(&ok).contains("14 tools match secure-filesystem-server"),
        "{}",
        stderr(&ok)
    );

    // An edited snapshot: a renamed property, a tool the server does not have, a
    // description changed. The contract changes fail the check, naming what changed.
    let text = std::fs::read_to_string(&fs).unwrap();
    let edited = text
        .replacen("\"dryRun\"", "\"dry_run\"", 1)
        .replacen("\"name\": \"move_file\"", "\"name\": \"rename_file\"", 1)
        .replacen("Create a new directory", "Make a new directory", 1);
    assert_ne!(edited, text);
    std::fs::write(&fs, edited).unwrap();
    let bad = check(&fs);
    assert_code(&bad, 1);
    let err = stderr(&bad);
    for want in [
        "tool `edit_file` changed its contract: inputSchema.dry_run: property removed; inputSchema.dryRun: optional property added",
        "error: ",
        "tool `rename_file` was removed",
        "warning: ",
        "tool `move_file` was added",
        "tool `create_directory` changed its description",
        "breaking change(s)",
        // The hand edit is noticed when the snapshot is read, too.
        "hash does not match",
    ] {
        assert!(err.contains(want), "{want:?} not in\n{err}");
    }
}

fn misbehaving(mode: &str) -> std::process::Output {
    let script = common::fixture("mcp_servers/misbehaving.py");
    let dir = tempfile::tempdir().unwrap();
    toolbind()
        .current_dir(dir.path())
        .args([
            "mcp", "snapshot", "--out", "-", "--name", mode, "--", "python3",
        ])
        .arg(&script)
        .arg(mode)
        .output()
        .unwrap()
}

#[test]
fn a_paginated_list_is_read_whole_and_sorted() {
    let out = misbehaving("pages");
    assert_code(&out, 0);
    let snap: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let names: Vec<&str> = snap["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["t0a", "t0b", "t1a", "t1b", "t2a", "t2b"]);
    assert_eq!(snap["name"], "pages");
    assert_eq!(snap["server"]["name"], "misbehaving");
}

#[test]
fn misbehaving_servers_get_bounded_clear_errors() {
    for (mode, want) in [
        (
            "cursor",
            "returned the cursor \"same\" a second time (page 2)",
        ),
        ("endless", "still had more pages after 100"),
        ("huge", "wrote more than 33554432 bytes to stdout"),
        // Gone before `tools/list`, or already while toolbind sends `initialized`.
        ("exit", " (the server exited with code 0)"),
        ("dup", "the server lists two tools named `same`"),
        ("notools", "does not offer tools"),
        (
            "stderr",
            "the server's last stderr lines:\n  fatal: MISBEHAVING_TOKEN is not set",
        ),
    ] {
        let out = misbehaving(mode);
        assert_code(&out, 1);
        let err = stderr(&out);
        assert!(err.contains(want), "{mode}: {want:?} not in\n{err}");
        assert!(
            stdout(&out).is_empty(),
            "{mode}: a failed snapshot printed {}",
            stdout(&out)
        );
    }
    // Lines that are not JSON-RPC are skipped; the answers between them are read.
    let out = misbehaving("garbage");
    assert_code(&out, 0);
    assert!(
        stdout(&out).contains("\"name\": \"ok\""),
        "{}",
        stdout(&out)
    );
}

#[test]
fn config_mistakes_are_named() {
    let dir = tempfile::tempdir().unwrap();
    for (config, want) in [
        (
            r#"{"mcpServers": {"gh": {"command": "x", "env": {"TOKEN": "${TOOLBIND_TEST_UNSET_VAR}"}}}}"#,
            "server `gh`: `env.TOKEN`: the environment variable `TOOLBIND_TEST_UNSET_VAR` is not set",
        ),
        (
            r#"{"mcpServers": {"old": {"type": "sse", "url": "http://127.0.0.1:9/sse"}}}"#,
            "deprecated HTTP+SSE transport",
        ),
        (
            r#"{"mcpServers": {"both": {"command": "x", "url": "http://127.0.0.1:9/mcp"}}}"#,
            "has both `command` (a stdio server) and `url`",
        ),
    ] {
        let file = dir.path().join("c.json");
        std::fs::write(&file, config).unwrap();
        let out = toolbind()
            .current_dir(dir.path())
            .args(["mcp", "snapshot", "--config"])
            .arg(&file)
            .output()
            .unwrap();
        assert_code(&out, 1);
        assert!(
            stderr(&out).contains(want),
            "{want:?} not in\n{}",
            stderr(&out)
        );
    }
    // A server name the config does not have.
    std::fs::write(
        dir.path().join("c.json"),
        r#"{"mcpServers": {"a": {"command": "x"}}}"#,
    )
    .unwrap();
    let out = toolbind()
        .current_dir(dir.path())
        .args(["mcp", "snapshot", "--config", "c.json", "b"])
        .output()
        .unwrap();
    assert_code(&out, 2);
    assert!(
        stderr(&out).contains("has no server `b` (it has: a)"),
        "{}",
        stderr(&out)
    );
    // A command that does not exist.
    let out = toolbind()
        .current_dir(dir.path())
        .args(["mcp", "snapshot", "--", "/nonexistent/mcp-server"])
        .output()
        .unwrap();
    assert_code(&out, 1);
    assert!(
        stderr(&out).contains("cannot start `/nonexistent/mcp-server`"),
        "{}",
        stderr(&out)
    );
    // Nothing was written for any of them.
    assert!(!dir.path().join("mcp").exists());
}

#[test]
fn a_malformed_snapshot_is_an_error_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fs.json");
    let text = std::fs::read_to_string(fixture_snapshot("memory")).unwrap();
    // Line 10 of the file opens the first tool; break its name.
    let broken = text.replacen(
        "\"name\": \"add_observations\"",
        "\"name\": add_observations",
        1,
    );
    std::fs::write(&file, &broken).unwrap();
    let line = broken
        .lines()
        .position(|l| l.contains("add_observations"))
        .unwrap()
        + 1;
    let out = toolbind()
        .args(["mcp", "check"])
        .arg(&file)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_code(&out, 1);
    let err = stderr(&out);
    assert!(
        err.contains(&format!("fs.json:{line}:")) && err.contains("not valid JSON"),
        "{err}"
    );
}

#[test]
fn a_streamable_http_server_snapshots_and_checks() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut cmd = std::process::Command::new(server_bin("mcp-server-everything"));
    cmd.arg("streamableHttp").env("PORT", port.to_string());
    let _server = Background::start(cmd, dir.path().join("server.log"), "listening on port");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let cfg = dir.path().join(".mcp.json");
    std::fs::write(
        &cfg,
        serde_json::json!({"mcpServers": {"everything": {
            "type": "http", "url": url, "headers": {"X-Trace": "${TRACE:-off}"}}}})
        .to_string(),
    )
    .unwrap();
    let out = toolbind()
        .current_dir(dir.path())
        .args(["mcp", "snapshot", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert!(
        stderr(&out).contains("everything: 13 tools from mcp-servers/everything"),
        "{}",
        stderr(&out)
    );
    // Over HTTP the server lists what it lists over stdio, byte for byte.
    let live = std::fs::read_to_string(dir.path().join("mcp/everything.json")).unwrap();
    let fixture = std::fs::read_to_string(fixture_snapshot("everything")).unwrap();
    assert!(live == fixture, "over HTTP:\n{live}");
    // The address, not the bare port: a port's digits can occur in a hash by chance (a
    // fresh-clone CI run met one).
    assert!(
        !live.contains(&url) && !live.contains(&format!("127.0.0.1:{port}")),
        "a snapshot holds the URL"
    );

    let check = toolbind()
        .current_dir(dir.path())
        .args(["mcp", "check", "mcp/everything.json", "--url", &url])
        .output()
        .unwrap();
    assert_code(&check, 0);
    assert!(
        stderr(&check).contains("13 tools match mcp-servers/everything"),
        "{}",
        stderr(&check)
    );
}

#[test]
fn a_server_that_needs_a_token_and_gets_none_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let token = "snapshot-test-token-0123456789";
    let file = dir.path().join("token");
    std::fs::write(&file, format!("{token}\n")).unwrap();
    let mut cmd = std::process::Command::new(common::bin());
    cmd.arg("serve")
        .arg("--dir")
        .arg(common::fixture("tools"))
        .args(["--http", "127.0.0.1:0", "--auth-token-file"])
        .arg(&file)
        .env_remove("TOOLBIND_TOKEN")
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .env("XDG_RUNTIME_DIR", dir.path().join("run"));
    let server = Background::start(cmd, dir.path().join("serve.log"), "/mcp");
    let log = server.log();
    let at = log.find("http://").unwrap();
    let url = log[at..].split_whitespace().next().unwrap().to_owned();
    let snapshot = |extra: &[&str], env: &[(&str, &str)]| {
        let mut c = toolbind();
        c.current_dir(dir.path())
            .args([
                "mcp", "snapshot", "--name", "tb", "--out", "-", "--url", &url,
            ])
            .args(extra);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    };

    let none = snapshot(&[], &[]);
    assert_code(&none, 1);
    let err = stderr(&none);
    assert!(
        err.contains("the server needs a bearer token and none was sent (HTTP 401)")
            && err.contains("--bearer-token-file"),
        "{err}"
    );
    assert!(stdout(&none).is_empty());

    let wrong = snapshot(&["--header", "Authorization: Bearer not-the-token"], &[]);
    assert_code(&wrong, 1);
    let err = stderr(&wrong);
    assert!(
        err.contains("the server refused the bearer token sent"),
        "{err}"
    );
    assert!(
        !err.contains("not-the-token"),
        "an error shows the token: {err}"
    );

    let by_file = snapshot(&["--bearer-token-file", file.to_str().unwrap()], &[]);
    assert_code(&by_file, 0);
    let by_env = snapshot(
        &["--bearer-token-env", "SNAPSHOT_TEST_TOKEN"],
        &[("SNAPSHOT_TEST_TOKEN", token)],
    );
    assert_code(&by_env, 0);
    assert_eq!(stdout(&by_file), stdout(&by_env));
    let snap = stdout(&by_file);
    assert!(snap.contains("\"name\": \"toolbind\""), "{snap}");
    assert!(!snap.contains(token), "a snapshot holds the token");

    // The same from an mcpServers config.
    let cfg = dir.path().join("c.json");
    std::fs::write(
        &cfg,
        serde_json::json!({"mcpServers": {"tb": {"url": url, "bearerTokenFile": file}}})
            .to_string(),
    )
    .unwrap();
    let out = toolbind()
        .current_dir(dir.path())
        .args(["mcp", "snapshot", "--out", "-", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert_eq!(stdout(&out), snap);

    let unset = snapshot(&["--bearer-token-env", "TOOLBIND_TEST_UNSET_VAR"], &[]);
    assert_code(&unset, 1);
    assert!(
        stderr(&unset).contains("`TOOLBIND_TEST_UNSET_VAR` is not set"),
        "{}",
        stderr(&unset)
    );
}

#[test]
fn misbehaving_http_servers_get_bounded_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    for (mode, want) in [
        ("pages", ""),
        (
            "huge",
            "`tools/list` page 1 failed: HTTP response body exceeded the maximum size of 33554432 bytes",
        ),
        (
            "hugesse",
            "before answering `tools/list` page 1 (or its answer, as an event stream, went over the 33554432-byte bound)",
        ),
        (
            "garbage",
            "`initialize` failed: unexpected server response: could not parse JSON response",
        ),
        (
            "exit",
            "the connection to the server ended before `initialize` was done",
        ),
        (
            "cursor",
            "returned the cursor \"same\" a second time (page 2)",
        ),
    ] {
        let mut cmd = std::process::Command::new("python3");
        cmd.arg(common::fixture("mcp_servers/misbehaving.py"))
            .args([mode, "--http"]);
        let server = Background::start(cmd, dir.path().join(format!("{mode}.log")), "/mcp");
        let log = server.log();
        let url = log[log.find("http://").unwrap()..].trim().to_owned();
        let out = toolbind()
            .current_dir(dir.path())
            .args([
                "mcp", "snapshot", "--out", "-", "--name", mode, "--url", &url,
            ])
            .output()
            .unwrap();
        if want.is_empty() {
            assert_code(&out, 0);
            assert!(
                stdout(&out).contains("\"name\": \"t2b\""),
                "{}",
                stdout(&out)
            );
            continue;
        }
        assert_code(&out, 1);
        let err = stderr(&out);
        assert!(err.contains(want), "{mode}: {want:?} not in\n{err}");
        assert!(stdout(&out).is_empty(), "{mode}: printed {}", stdout(&out));
    }
}

/// The example of docs/cli.md and docs/mcp.md, as written there: `npx` downloads the
/// server (network on) into the server's own state folder and runs it in the jail, which
/// shows it the project folder through the grant the docs name. Needs the npm registry.
#[test]
fn the_documented_npx_example_works_in_the_jail() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("notes.txt"), "hello\n").unwrap();
    let run = |args: &[&str]| {
        toolbind()
            .current_dir(&project)
            .args(["mcp"])
            .args(args)
            .args(["--allow-read", ".", "--state-dir"])
            .arg(dir.path().join("state"))
            .args([
                "--",
                "npx",
                "-y",
                "@modelcontextprotocol/server-filesystem",
                ".",
            ])
            .output()
            .unwrap()
    };
    let out = run(&["snapshot", "--name", "fs"]);
    assert_code(&out, 0);
    let err = stderr(&out);
    assert!(
        err.contains("fs: ") && err.contains("tools from secure-filesystem-server"),
        "{err}"
    );
    let snap = std::fs::read_to_string(project.join("mcp/fs.json")).unwrap();
    assert!(snap.contains("\"name\": \"read_text_file\""), "{snap}");
    // The download went into the server's own state folder, not the user's npm cache.
    let state = std::fs::read_dir(dir.path().join("state/mcp"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect::<Vec<_>>();
    assert!(
        state.len() == 1 && state[0].starts_with("npx-"),
        "{state:?}"
    );
    assert!(
        dir.path()
            .join("state/mcp")
            .join(&state[0])
            .join("home/.npm")
            .is_dir()
    );
    // `check` of the same command here: the same jail, the same state folder (no second
    // download).
    let out = run(&["check", "mcp/fs.json"]);
    assert_code(&out, 0);
    assert!(
        stderr(&out).contains("tools match secure-filesystem-server"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_dir(dir.path().join("state/mcp"))
            .unwrap()
            .count(),
        1
    );
}

/// A schema whose `$ref`s multiply (each of 40 definitions references the next twice) is
/// a few hundred bytes whose check would take 2^40 evaluations: refused when it is listed,
/// at once, naming the tool and the bound.
#[test]
fn a_schema_whose_refs_multiply_is_refused_at_snapshot() {
    let out = misbehaving("refbomb");
    assert_code(&out, 1);
    let err = stderr(&out);
    for want in [
        "tool `ok`: its `inputSchema` is refused",
        "more than 100000 schema evaluations",
    ] {
        assert!(err.contains(want), "{want:?} not in\n{err}");
    }
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
}
