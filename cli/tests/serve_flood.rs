//! `toolbind serve` under a progress flood with a paused client, and under a flood of
//! requests from a client that reads no answers: its memory stays bounded. Its own test
//! binary: it measures the server process's peak RSS.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use common::{bin, hwm_kib};
use serde_json::{Value, json};

const TOOL_MD: &str = "---\nname: flood\ndescription: Floods progress.\nlanguage: typescript\ninputs:\n  mb:\n    type: number\n    description: MiB of progress.\n---\nFloods.\n";

const INDEX: &str = r#"
import { writeFileSync } from 'node:fs';

export async function execute(id, params, signal, onUpdate) {
  const chunk = 'p'.repeat(64 * 1024 - 16);
  for (let i = 0; i < params.mb * 16; i++) {
    onUpdate?.({ content: [{ type: 'text', text: `${i} ${chunk}` }] });
    if (i % 64 === 63) await new Promise((r) => setImmediate(r));
  }
  onUpdate?.({ content: [{ type: 'text', text: 'last update' }] });
  // HOME is the tool's state folder in the jail: the test waits for this file.
  writeFileSync(`${process.env.HOME}/flooded`, '');
  return { content: [{ type: 'text', text: 'flooded' }] };
}
"#;

/// MiB of progress to flood; `FLOOD_MB=1024` for the BENCHMARKS.md figure.
fn flood_mb() -> u64 {
    std::env::var("FLOOD_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

/// `toolbind serve` on `tools`, initialised: the process, its stdin, its stdout. Jailed,
/// with each tool's state folder (its `HOME`) at `<cache>/../state/<tool>`.
fn start(tools: &Path, cache: &Path) -> (Child, ChildStdin, BufReader<ChildStdout>) {
    let mut child = Command::new(bin())
        .arg("serve")
        .arg("--dir")
        .arg(tools)
        .args(["--sandbox", "required", "--state-dir"])
        .arg(cache.with_file_name("state"))
        .env_remove("PI_TOOLS_DIRS")
        .env("XDG_CACHE_HOME", cache)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "flood-test", "version": "0"}}});
    stdin.write_all(format!("{init}\n").as_bytes()).unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"id\":1"), "{line}");
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .unwrap();
    (child, stdin, stdout)
}

#[test]
fn a_progress_flood_to_a_paused_client_keeps_serve_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let tool = tmp.path().join("tools/flood");
    std::fs::create_dir_all(&tool).unwrap();
    std::fs::write(tool.join("TOOL.md"), TOOL_MD).unwrap();
    std::fs::write(tool.join("index.mjs"), INDEX).unwrap();
    let (mut child, mut stdin, mut stdout) =
        start(&tmp.path().join("tools"), &tmp.path().join("cache"));
    let pid = child.id();
    let mut send = |v: Value| {
        let mut line = serde_json::to_vec(&v).unwrap();
        line.push(b'\n');
        stdin.write_all(&line).unwrap();
        stdin.flush().unwrap();
    };
    let mut line = String::new();
    let before = hwm_kib(pid);
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "flood", "arguments": {"mb": flood_mb()}, "_meta": {"progressToken": "p"}}}),
    );
    // The client pauses: nothing is read until the tool has sent every update.
    let flooded = tmp.path().join("state/flood/flooded");
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while !flooded.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the tool did not finish its flood within 120 s while the client read nothing"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut progress = 0;
    let mut last = String::new();
    let result = loop {
        line.clear();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "serve closed stdout"
        );
        let msg: Value = serde_json::from_str(&line).unwrap();
        if msg["method"] == "notifications/progress" {
            progress += 1;
            last = msg["params"]["message"]
                .as_str()
                .unwrap_or_default()
                .chars()
                .take(20)
                .collect();
        } else if msg["id"] == 2 {
            break msg;
        }
    };
    let grown_mib = hwm_kib(pid).saturating_sub(before) / 1024;
    let _ = child.kill();
    let _ = child.wait();
    eprintln!("serve grew {grown_mib} MiB; {progress} progress notifications");
    assert_eq!(
        result["result"]["content"][0]["text"], "flooded",
        "{result}"
    );
    assert_eq!(last, "last update");
    assert!(grown_mib < 64, "serve grew by {grown_mib} MiB");
}

#[test]
fn a_client_that_reads_no_answers_cannot_grow_serve() {
    // The client keeps sending requests and never reads stdout: once a bounded backlog of
    // answers waits, serve stops reading stdin (and the client's writes block), instead of
    // holding every answer in memory.
    let tmp = tempfile::tempdir().unwrap();
    let (mut child, mut stdin, _stdout) =
        start(&common::fixture("tools"), &tmp.path().join("cache"));
    let pid = child.id();
    let before = hwm_kib(pid);
    // 2 million pings (about 100 MB of requests, 80 MB of answers), from a thread: its
    // writes block once serve stops reading.
    let written = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let progress = written.clone();
    let flood = std::thread::spawn(move || {
        let mut sent = 0u64;
        let mut batch = String::new();
        for id in 1..=2_000_000u64 {
            batch += &format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n");
            if id % 1000 == 0 {
                if stdin.write_all(batch.as_bytes()).is_err() {
                    break;
                }
                sent = id;
                progress.store(sent, std::sync::atomic::Ordering::SeqCst);
                batch.clear();
            }
        }
        sent
    });
    // Until the writer is blocked (no batch taken for a second) or done; at most 30 s.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut seen = u64::MAX;
    while std::time::Instant::now() < deadline && !flood.is_finished() {
        std::thread::sleep(Duration::from_secs(1));
        let now = written.load(std::sync::atomic::Ordering::SeqCst);
        if now == seen {
            break;
        }
        seen = now;
    }
    let grown_mib = hwm_kib(pid).saturating_sub(before) / 1024;
    let _ = child.kill();
    let _ = child.wait();
    let sent = flood.join().unwrap();
    eprintln!("serve grew {grown_mib} MiB; {sent} pings written before it was killed");
    assert!(grown_mib < 64, "serve grew by {grown_mib} MiB");
    // serve did stop reading: most of the flood could not be written.
    assert!(sent < 2_000_000, "all {sent} pings were taken");
}
