//! `toolbind serve --http` against a client that plays the attacker: it reads another
//! session's or another process's spill files by name, plants links at a spill name, and
//! sends megabytes where a name goes (a tool, a prompt, a resource URI, an argument, a task
//! id). Each gets a short error, and the server's memory stays bounded.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{bin, eventually, hwm_kib};
use serde_json::{Value, json};

const TOKEN: &str = "test-token-0123456789abcdef";

/// A running `toolbind serve --http 127.0.0.1:0`, killed when dropped.
struct Serve {
    child: Child,
    addr: String,
    stderr: PathBuf,
}

impl Serve {
    fn start(tools: &Path, spill: &Path, state: &Path, args: &[&str]) -> Serve {
        let stderr = state.join(format!("stderr-{}", args.join("_")));
        std::fs::create_dir_all(state).unwrap();
        let child = Command::new(bin())
            .args([
                "serve",
                "--http",
                "127.0.0.1:0",
                "--sandbox",
                "off",
                "--dir",
            ])
            .arg(tools)
            .arg("--spill-dir")
            .arg(spill)
            .args(args)
            .env_remove("PI_TOOLS_DIRS")
            .env("TOOLBIND_TOKEN", TOKEN)
            .env("XDG_STATE_HOME", state.join("state"))
            .env("XDG_RUNTIME_DIR", state.join("run"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        let mut s = Serve {
            child,
            addr: String::new(),
            stderr,
        };
        let found = eventually(20.0, || {
            let log = s.log();
            let Some(at) = log.find("at http://") else {
                return false;
            };
            let rest = &log[at + "at http://".len()..];
            s.addr = rest[..rest.find("/mcp").unwrap()].to_string();
            true
        });
        assert!(found, "serve did not start:\n{}", s.log());
        s
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// POSTs one JSON-RPC message (in `session`, when given); the status, the session id
    /// the server named, and the JSON-RPC answer (from a JSON or an event-stream body).
    fn post(&self, session: Option<&str>, body: &str) -> (u16, Option<String>, Value, usize) {
        let mut conn = TcpStream::connect(&self.addr).unwrap();
        conn.set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             Connection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        if let Some(s) = session {
            head.push_str(&format!("Mcp-Session-Id: {s}\r\n"));
        }
        head.push_str("\r\n");
        let _ = conn.write_all(head.as_bytes());
        let _ = conn.write_all(body.as_bytes());
        let mut reader = BufReader::new(conn);
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let status: u16 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        let mut sid = None;
        loop {
            line.clear();
            reader.read_line(&mut line).unwrap();
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':')
                && k.eq_ignore_ascii_case("mcp-session-id")
            {
                sid = Some(v.trim().to_owned());
            }
        }
        let mut raw = Vec::new();
        let _ = reader.read_to_end(&mut raw);
        let text = String::from_utf8_lossy(&raw);
        let answer = text
            .lines()
            .map(|l| l.strip_prefix("data: ").unwrap_or(l))
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v.get("id").is_some())
            .unwrap_or(Value::Null);
        (status, sid, answer, raw.len())
    }

    /// A new session, initialized.
    fn session(&self) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}});
        let (status, sid, _, _) = self.post(None, &init.to_string());
        assert_eq!(status, 200, "{}", self.log());
        let sid = sid.expect("a session id");
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        self.post(Some(&sid), &done.to_string());
        sid
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `big` prints 20,000 lines (its result is cut and spilled); it takes an enum `mode`
/// and a number `n`, both optional.
fn tools(dir: &Path) -> PathBuf {
    let tools = dir.join("tools");
    let big = tools.join("big");
    std::fs::create_dir_all(&big).unwrap();
    std::fs::write(
        big.join("TOOL.md"),
        "---\nname: big\ndescription: Prints a lot.\nlanguage: bash\ninputs:\n  mode:\n    \
         type: enum\n    values: fast, slow\n    description: How.\n    optional: true\n  n:\n    \
         type: number\n    description: How many.\n    optional: true\n---\nPrints a lot.\n",
    )
    .unwrap();
    std::fs::write(
        big.join("index.sh"),
        "cat >/dev/null\nfor i in $(seq 1 20000); do echo \"line $i\"; done\n",
    )
    .unwrap();
    tools
}

fn msg(id: u32, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// Calls `big` in `session`: the `toolbind://spill/` URI its truncation note names.
fn spill_uri(s: &Serve, session: Option<&str>) -> String {
    let (status, _, answer, _) = s.post(
        session,
        &msg(1, "tools/call", json!({"name": "big", "arguments": {}})),
    );
    assert_eq!(status, 200, "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {answer}"));
    let at = text
        .find("toolbind://spill/")
        .unwrap_or_else(|| panic!("no spill URI in {text}"));
    let rest = &text[at..];
    rest[..rest.find(']').unwrap()].to_owned()
}

fn read(s: &Serve, session: Option<&str>, uri: &str) -> Value {
    s.post(session, &msg(2, "resources/read", json!({"uri": uri})))
        .2
}

fn is_whole_spill(answer: &Value) -> bool {
    answer["result"]["contents"][0]["text"]
        .as_str()
        .is_some_and(|t| t.lines().count() == 20000 && t.ends_with("line 20000"))
}

fn is_not_found(answer: &Value) -> bool {
    answer["error"]["code"] == -32002 && answer.get("result").is_none()
}

#[test]
fn a_spill_file_is_served_only_to_the_session_and_the_process_that_wrote_it() {
    let tmp = tempfile::tempdir().unwrap();
    let tools = tools(tmp.path());
    let spill = tmp.path().join("spill");
    let s = Serve::start(&tools, &spill, &tmp.path().join("one"), &[]);
    let (a, b) = (s.session(), s.session());
    let uri = spill_uri(&s, Some(&a));
    // 128 random bits in the name: `<tool>-<call>-<block>-<pid>-<32 hex digits>.txt`.
    let key = uri
        .strip_suffix(".txt")
        .unwrap()
        .rsplit('-')
        .next()
        .unwrap();
    assert!(
        key.len() == 32 && key.bytes().all(|c| c.is_ascii_hexdigit()),
        "a guessable spill name: {uri}"
    );

    assert!(is_whole_spill(&read(&s, Some(&a), &uri)), "{}", s.log());
    // Another session of the same server, holding the same token: not found.
    let other = read(&s, Some(&b), &uri);
    assert!(is_not_found(&other), "another session read it: {other}");
    assert!(!other.to_string().contains("line 1"), "{other}");

    // Another server of the same user over the same spill folder (a stateless one: the
    // name alone would do there), and the first server's other session after its own
    // call: still not found.
    let s2 = Serve::start(&tools, &spill, &tmp.path().join("two"), &["--stateless"]);
    let there = read(&s2, None, &uri);
    assert!(is_not_found(&there), "another process served it: {there}");
    let own = spill_uri(&s2, None);
    assert!(is_whole_spill(&read(&s2, None, &own)), "{}", s2.log());
    assert!(is_not_found(&read(&s, Some(&a), &own)));
    spill_uri(&s, Some(&b));
    assert!(is_not_found(&read(&s, Some(&b), &uri)));
    // A file planted in the folder under a name the runtime writes is not served either.
    let planted = format!("big-mcp-2-0-{}-0.txt", s.child.id());
    std::fs::write(spill.join(&planted), "planted").unwrap();
    let r = read(&s, Some(&a), &format!("toolbind://spill/{planted}"));
    assert!(is_not_found(&r), "{r}");
}

#[test]
fn a_link_planted_at_a_spill_name_is_not_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let tools = tools(tmp.path());
    let spill = tmp.path().join("spill");
    let s = Serve::start(&tools, &spill, &tmp.path().join("one"), &[]);
    let a = s.session();
    let secret = tmp.path().join("id_ed25519");
    std::fs::write(&secret, "PRIVATE KEY").unwrap();
    for kind in ["hard link", "symlink"] {
        let uri = spill_uri(&s, Some(&a));
        let path = spill.join(uri.strip_prefix("toolbind://spill/").unwrap());
        std::fs::remove_file(&path).unwrap();
        if kind == "hard link" {
            std::fs::hard_link(&secret, &path).unwrap();
        } else {
            std::os::unix::fs::symlink(&secret, &path).unwrap();
        }
        let r = read(&s, Some(&a), &uri);
        assert!(
            !r.to_string().contains("PRIVATE KEY"),
            "{kind} followed: {r}"
        );
        assert!(is_not_found(&r), "{kind}: {r}");
    }
}

#[test]
fn megabytes_where_a_name_goes_get_short_errors_and_serve_stays_small() {
    let tmp = tempfile::tempdir().unwrap();
    let tools = tools(tmp.path());
    let spill = tmp.path().join("spill");
    let s = Serve::start(&tools, &spill, &tmp.path().join("one"), &[]);
    let a = s.session();
    let pid = s.child.id();
    // Warm: one call and one unknown tool.
    spill_uri(&s, Some(&a));
    let (_, _, r, _) = s.post(
        Some(&a),
        &msg(3, "tools/call", json!({"name": "bigg", "arguments": {}})),
    );
    assert!(
        r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("did you mean `big`")),
        "{r}"
    );
    let before = hwm_kib(pid);

    // The reported attack: a 15 MB tool name, answered in a few hundred bytes, and the
    // server's peak memory grows by a few copies of the request at most (not the 1.2 GB
    // of a "did you mean" edit distance against it).
    let huge = "x".repeat(15 << 20);
    let (status, _, r, len) = s.post(
        Some(&a),
        &msg(4, "tools/call", json!({"name": huge, "arguments": {}})),
    );
    assert_eq!(status, 200, "{}", s.log());
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(len < 2048, "a {len}-byte answer to an unknown tool: {r}");
    let grown = hwm_kib(pid).saturating_sub(before);
    eprintln!(
        "a 15 MiB tool name grew serve's peak RSS by {} MiB",
        grown / 1024
    );
    assert!(
        grown < 160 * 1024,
        "a 15 MiB tool name grew serve's peak RSS by {} MiB",
        grown / 1024
    );

    // The class: every place serve repeats what a client sent, with 1 MiB there.
    let mb = "y".repeat(1 << 20);
    let cases = [
        ("unknown tool", "tools/call", json!({"name": mb})),
        (
            "tool name not a string",
            "tools/call",
            json!({"name": [mb]}),
        ),
        (
            "unknown field",
            "tools/call",
            json!({"name": "big", "arguments": {mb.clone(): 1}}),
        ),
        (
            "enum value",
            "tools/call",
            json!({"name": "big", "arguments": {"mode": mb}}),
        ),
        (
            "wrong type",
            "tools/call",
            json!({"name": "big", "arguments": {"n": mb}}),
        ),
        ("unknown prompt", "prompts/get", json!({"name": mb})),
        (
            "unknown docs resource",
            "resources/read",
            json!({"uri": format!("toolbind://tools/{mb}")}),
        ),
        (
            "unknown spill resource",
            "resources/read",
            json!({"uri": format!("toolbind://spill/{mb}.txt")}),
        ),
        (
            "unknown resource",
            "resources/read",
            json!({"uri": format!("file:///{mb}")}),
        ),
        ("unknown task", "tasks/get", json!({"taskId": mb})),
        ("cursor", "tools/list", json!({"cursor": mb})),
        ("log level", "logging/setLevel", json!({"level": mb})),
        (
            "completion ref",
            "completion/complete",
            json!({"ref": {"type": mb}, "argument": {"name": "n", "value": "v"}}),
        ),
    ];
    for (what, method, params) in cases {
        let (_, _, r, len) = s.post(Some(&a), &msg(5, method, params));
        let text = r.to_string();
        assert!(
            len < 4096 && !text.contains(&"y".repeat(1000)),
            "{what}: a {len}-byte answer: {}…",
            &text[..text.len().min(600)]
        );
    }
    // Nor does stderr repeat them.
    let log = std::fs::metadata(&s.stderr).unwrap().len();
    assert!(log < 256 << 10, "serve's log grew to {log} bytes");
}
