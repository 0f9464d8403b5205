//! The shipped tools in `tools/`, run for real through `toolbind::Runtime` — node, python3,
//! bash and ffmpeg — beyond the example agent's happy path: their documented error paths,
//! limits, cancellation and timeouts.
//!
//! No outside network exists here: web_fetch talks to a loopback server the test starts.
//! ffmpeg must be installed (CI installs it from the Debian packages).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolbind::Loader;
use toolbind::exec::{ExecConfig, SubprocessExecutor};
use toolbind::sandbox::{SandboxMode, SandboxPolicy};
use toolbind::{CallOptions, CancelToken, Runtime, ToolResult};

// ---- helpers ------------------------------------------------------------------------------

fn tools_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools")
}

/// A runtime over the shipped `tools/` folder with `config`'s executor, always in the
/// jail (`required`): the shipped tools must work sandboxed, with only the grants each
/// test gives (the grants docs/sandbox.md gives each tool).
fn runtime(config: ExecConfig) -> Runtime {
    let sandbox = config.get_sandbox().clone().mode(SandboxMode::Required);
    let config = config.sandbox(sandbox);
    let loaded = Loader::new().dir(tools_dir()).load();
    assert!(
        loaded.warnings.is_empty(),
        "tools/ loads with warnings: {:?}",
        loaded.warnings
    );
    Runtime::builder()
        .registry(loaded.registry)
        .executor(Arc::new(SubprocessExecutor::new(config)))
        .build()
}

/// convert_audio_to_mp3's grant: its input and output folder, read-write.
fn writable(dir: &Path) -> SandboxPolicy {
    SandboxPolicy::new().allow_write(dir)
}

/// Calls `name` with `args`, collecting progress texts.
async fn call(rt: &Runtime, name: &str, args: Value) -> (ToolResult, Vec<String>) {
    call_with(rt, name, args, CallOptions::new()).await
}

async fn call_with(
    rt: &Runtime,
    name: &str,
    args: Value,
    opts: CallOptions,
) -> (ToolResult, Vec<String>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let opts = opts.progress(move |p| {
        let text = p.text_content();
        sink.lock().unwrap().push(text);
    });
    let result = rt.call(name, args, opts).await;
    let progress = seen.lock().unwrap().clone();
    (result, progress)
}

#[track_caller]
fn ok(r: &ToolResult) -> String {
    let text = r.text_content();
    assert!(
        !r.is_error,
        "expected a result, got an error result:\n{text}"
    );
    // web_fetch and email_db declare their details in TOOL.md `outputs:`: every
    // successful result must keep that contract.
    assert_ne!(
        r.output_check,
        toolbind::output::OutputCheck::Broken,
        "the details break the tool's declared outputs (see the warning above):\n{:#?}",
        r.details
    );
    text
}

#[track_caller]
fn err(r: &ToolResult) -> String {
    let text = r.text_content();
    assert!(r.is_error, "expected an error result, got:\n{text}");
    text
}

#[track_caller]
fn contains(text: &str, needle: &str) {
    assert!(text.contains(needle), "{needle:?} not in:\n{text}");
}

fn details(r: &ToolResult) -> &Value {
    r.details.as_ref().expect("the result carries details")
}

// ---- web_fetch ----------------------------------------------------------------------------

const PAGE: &str = "<!DOCTYPE html><html><head><title>Fish &amp; Chips</title>\
<style>body { color: red }</style><script>var leaked = 'SCRIPT-TEXT';</script></head>\
<body><h1>Menu</h1><h2>Starters</h2><p>Fresh <b>cod</b> &mdash; caught today.</p>\
<ul><li><a href=\"/prices?x=1&amp;y=2\">Prices</a></li>\
<li><a href=\"https://example.org/about\">About us</a></li>\
<li><a href=\"javascript:void(0)\">Click me</a></li></ul>\
<script type=\"module\">console.log('SCRIPT-TWO')</script><noscript>enable js</noscript>\
<p>Caf&eacute; open 9&#8211;5</p></body></html>";

const JSON_BODY: &str = "{\"name\": \"toolbind\",\n  \"tags\": [\"a\", \"<b>\"], \"n\": 1}";

/// A loopback HTTP/1.1 server, one request per connection:
///
/// - `/page` — an HTML page with scripts, a style, relative and absolute links;
/// - `/data.json` — JSON;
/// - `/big` — 200,000 bytes of plain text;
/// - `/slow` — headers, then a trickle of body for 30 s;
/// - `/hang` — reads the request and never answers (for 10 s);
/// - anything else — 404 with a short body.
fn serve() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || handle(stream));
        }
    });
    base
}

fn handle(mut stream: TcpStream) {
    let mut req = Vec::new();
    let mut buf = [0u8; 4096];
    while !req.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => req.extend_from_slice(&buf[..n]),
        }
    }
    let req = String::from_utf8_lossy(&req);
    let path = req.split_whitespace().nth(1).unwrap_or("/").to_string();
    let respond = |stream: &mut TcpStream, status: &str, ctype: &str, body: &[u8]| {
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let _ = stream.write_all(head.as_bytes());
        let _ = stream.write_all(body);
    };
    match path.as_str() {
        "/page" => respond(
            &mut stream,
            "200 OK",
            "text/html; charset=utf-8",
            PAGE.as_bytes(),
        ),
        "/data.json" => respond(
            &mut stream,
            "200 OK",
            "application/json",
            JSON_BODY.as_bytes(),
        ),
        "/big" => respond(
            &mut stream,
            "200 OK",
            "text/plain",
            &b"0123456789".repeat(20_000),
        ),
        "/slow" => {
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n<html><body>",
            );
            for _ in 0..300 {
                if stream.write_all(b"<p>still loading</p>").is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        "/hang" => std::thread::sleep(Duration::from_secs(10)),
        _ => respond(
            &mut stream,
            "404 Not Found",
            "text/plain",
            b"no such page here",
        ),
    }
}

#[tokio::test]
async fn web_fetch_turns_html_into_text_with_links_and_without_scripts() {
    let base = serve();
    let rt = runtime(ExecConfig::default());
    let (r, progress) = call(&rt, "web_fetch", json!({"url": format!("{base}/page")})).await;
    let text = ok(&r);

    contains(&text, &format!("URL: {base}/page"));
    contains(&text, "Status: 200 OK");
    contains(&text, "Content-Type: text/html; charset=utf-8");
    contains(&text, "Title: Fish & Chips");
    contains(&text, "# Menu");
    contains(&text, "## Starters");
    contains(&text, "Fresh cod — caught today.");
    contains(&text, "Café open 9–5");
    // Links kept: relative ones resolved against the page, entities in them decoded;
    // javascript: links keep only their text.
    contains(&text, &format!("- [Prices]({base}/prices?x=1&y=2)"));
    contains(&text, "- [About us](https://example.org/about)");
    contains(&text, "Click me");
    assert!(!text.contains("javascript:"), "{text}");
    // Scripts, styles and the head dropped.
    for gone in ["SCRIPT-TEXT", "SCRIPT-TWO", "color: red", "<p>", "<b>"] {
        assert!(!text.contains(gone), "{gone:?} leaked into:\n{text}");
    }
    assert!(!text.contains("Note: download stopped"), "{text}");

    let d = details(&r);
    assert_eq!(d["status"], 200);
    assert_eq!(d["truncated"], false);
    assert_eq!(d["bytes"], PAGE.len());
    assert_eq!(d["title"], "Fish & Chips");
    assert_eq!(d["format"], "text");
    // Typed: web_fetch's TOOL.md `outputs:` as the generated `Output`.
    use toolbind_tests::shipped::web_fetch;
    assert_eq!(r.output_check, toolbind::output::OutputCheck::Held);
    let out = rt.output::<web_fetch::Tool>(&r).unwrap();
    assert_eq!(out.status, 200.0);
    assert_eq!(out.final_url, format!("{base}/page"));
    assert_eq!(out.format, web_fetch::output::Format::Text);
    assert_eq!(out.title.as_deref(), Some("Fish & Chips"));
    assert_eq!(out.output_path, None);

    assert_eq!(
        progress.first().unwrap(),
        &format!("Fetching {base}/page...")
    );
    assert!(
        progress.iter().any(|p| p == "Converting HTML to text..."),
        "{progress:?}"
    );

    // format: html returns the markup itself.
    let (r, _) = call(
        &rt,
        "web_fetch",
        json!({"url": format!("{base}/page"), "format": "html"}),
    )
    .await;
    let text = ok(&r);
    contains(&text, "<script>var leaked = 'SCRIPT-TEXT';</script>");
}

#[tokio::test]
async fn web_fetch_writes_output_path_only_inside_a_granted_folder() {
    let base = serve();
    let out = tempfile::tempdir().unwrap();
    let target = out.path().join("data.json");
    let args =
        json!({"url": format!("{base}/data.json"), "output_path": target.display().to_string()});
    let rt = runtime(ExecConfig::default());
    // Ungranted, the folder does not exist for the tool; under /tmp it even lands in the
    // jail's private /tmp, which goes with the call. Either way the host file is not written.
    let _ = call(&rt, "web_fetch", args.clone()).await;
    assert!(!target.exists(), "wrote outside its grants");

    let rt = runtime(ExecConfig::default().sandbox(writable(out.path())));
    let (r, _) = call(&rt, "web_fetch", args).await;
    ok(&r);
    assert!(
        std::fs::read_to_string(&target)
            .unwrap()
            .contains("\"toolbind\"")
    );
}

#[tokio::test]
async fn web_fetch_returns_json_unchanged() {
    let base = serve();
    let rt = runtime(ExecConfig::default());
    let (r, _) = call(
        &rt,
        "web_fetch",
        json!({"url": format!("{base}/data.json")}),
    )
    .await;
    let text = ok(&r);
    contains(&text, "Content-Type: application/json");
    let (_, body) = text
        .split_once("\n\n")
        .expect("a header, a blank line, the body");
    assert_eq!(body, JSON_BODY);
    assert!(details(&r).get("title").is_none());
}

#[tokio::test]
async fn web_fetch_reports_the_max_bytes_cap() {
    let base = serve();
    let rt = runtime(ExecConfig::default());
    let (r, _) = call(
        &rt,
        "web_fetch",
        json!({"url": format!("{base}/big"), "max_bytes": 1000}),
    )
    .await;
    let text = ok(&r);
    contains(
        &text,
        "Note: download stopped at max_bytes=1000; the content below is incomplete.",
    );
    let (_, body) = text.split_once("\n\n").unwrap();
    assert_eq!(body.len(), 1000, "{body}");
    let d = details(&r);
    assert_eq!(d["truncated"], true);
    assert_eq!(d["bytes"], 1000);

    // Under the cap: the whole body and no note. (A model sending the number as a string
    // is tolerated.)
    let (r, _) = call(
        &rt,
        "web_fetch",
        json!({"url": format!("{base}/big"), "max_bytes": "300000"}),
    )
    .await;
    let text = ok(&r);
    assert!(!text.contains("Note:"));
    assert_eq!(details(&r)["bytes"], 200_000);
}

#[tokio::test]
async fn web_fetch_http_and_network_failures_are_error_results() {
    let base = serve();
    let rt = runtime(ExecConfig::default());

    let (r, _) = call(&rt, "web_fetch", json!({"url": format!("{base}/missing")})).await;
    let text = err(&r);
    contains(
        &text,
        &format!("HTTP 404 Not Found for {base}/missing: no such page here"),
    );

    // A port nobody listens on: bound, then released.
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/");
    let (r, _) = call(&rt, "web_fetch", json!({ "url": url })).await;
    let text = err(&r);
    contains(&text, &format!("Could not fetch {url}: "));
    contains(&text, "ECONNREFUSED");

    let (r, _) = call(&rt, "web_fetch", json!({"url": "ftp://example.org/file"})).await;
    contains(
        &err(&r),
        "only http:// and https:// URLs are supported, got ftp:",
    );
    let (r, _) = call(&rt, "web_fetch", json!({"url": "example.org/page"})).await;
    contains(&err(&r), "url is not a valid absolute URL");
}

#[tokio::test]
async fn web_fetch_times_out_after_timeout_ms() {
    let base = serve();
    let rt = runtime(ExecConfig::default());
    let start = Instant::now();
    let (r, _) = call(
        &rt,
        "web_fetch",
        json!({"url": format!("{base}/hang"), "timeout_ms": 500}),
    )
    .await;
    let elapsed = start.elapsed();
    contains(
        &err(&r),
        &format!("Timed out after 500 ms fetching {base}/hang"),
    );
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");

    // A body that trickles for longer than timeout_ms times out too.
    let (r, _) = call(
        &rt,
        "web_fetch",
        json!({"url": format!("{base}/slow"), "timeout_ms": 700}),
    )
    .await;
    contains(
        &err(&r),
        &format!("Timed out after 700 ms fetching {base}/slow"),
    );
}

#[tokio::test]
async fn web_fetch_cancelled_mid_download_returns_promptly() {
    let base = serve();
    let rt = runtime(ExecConfig::default());
    let cancel = CancelToken::new();
    let trigger = cancel.clone();
    let cancelled_at = Arc::new(Mutex::new(None));
    let mark = cancelled_at.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(800)).await;
        *mark.lock().unwrap() = Some(Instant::now());
        trigger.cancel();
    });
    let (r, progress) = call_with(
        &rt,
        "web_fetch",
        json!({"url": format!("{base}/slow")}),
        CallOptions::new().id("call_slow").cancel(cancel),
    )
    .await;
    let done = Instant::now();
    contains(&err(&r), &format!("Fetch of {base}/slow was cancelled"));
    let since_cancel = done - cancelled_at.lock().unwrap().expect("cancel fired");
    // Well inside the executor's 2 s grace: the tool's AbortSignal stopped the fetch.
    assert!(
        since_cancel < Duration::from_millis(1500),
        "returned {since_cancel:?} after the cancel"
    );
    assert!(
        progress.iter().any(|p| p.starts_with("Response 200 OK")),
        "the download had started: {progress:?}"
    );
}

// ---- email_db ------------------------------------------------------------------------------

struct EmailDb {
    _dir: tempfile::TempDir,
    db: PathBuf,
}

fn sample_db() -> EmailDb {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("emails.db");
    let out = Command::new("python3")
        .arg(tools_dir().join("email_db/make_sample_db.py"))
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "make_sample_db.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    EmailDb { _dir: dir, db }
}

fn email_runtime(db: &Path) -> Runtime {
    runtime(
        ExecConfig::default()
            // Its database, read-only (the folder: the tests also point it at missing files).
            .sandbox(SandboxPolicy::new().allow_read(db.parent().unwrap()))
            .env_set([("EMAIL_DB_PATH", db.display().to_string())]),
    )
}

/// An independent count with python3's sqlite3, to check the tool's totals against.
fn sql_count(db: &Path, where_sql: &str) -> u64 {
    let script = format!(
        "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); \
         print(c.execute(\"SELECT COUNT(*) FROM messages WHERE {where_sql}\").fetchone()[0])"
    );
    let out = Command::new("python3")
        .args(["-c", &script])
        .arg(db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

fn messages(r: &ToolResult) -> &Vec<Value> {
    details(r)["messages"].as_array().expect("details.messages")
}

#[tokio::test]
async fn email_db_filters_by_sender_text_and_date() {
    let EmailDb { db, .. } = &sample_db();
    let rt = email_runtime(db);

    // By sender.
    let (r, progress) = call(&rt, "email_db", json!({"sender": "alice"})).await;
    let text = ok(&r);
    let expected = sql_count(db, "sender LIKE '%alice%'");
    assert!(expected > 1);
    contains(
        &text,
        &format!("{expected} message(s) matching sender='alice'"),
    );
    assert_eq!(details(&r)["total"], expected);
    assert_eq!(messages(&r).len() as u64, expected);
    // The same details through the generated, typed `Output`.
    let typed = rt
        .output::<toolbind_tests::shipped::email_db::Tool>(&r)
        .unwrap();
    assert_eq!(typed.total, expected as f64);
    assert_eq!(typed.messages.len() as u64, expected);
    assert!(
        typed
            .messages
            .iter()
            .all(|m| m.sender.to_lowercase().contains("alice")
                && m.snippet.is_some()
                && m.body.is_none())
    );
    for m in messages(&r) {
        let sender = m["sender"].as_str().unwrap();
        assert!(sender.to_lowercase().contains("alice"), "{sender}");
        assert!(m["snippet"].is_string() && m.get("body").is_none(), "{m}");
    }
    assert_eq!(
        progress,
        [
            "Opening email database...",
            "Searching messages (sender='alice')..."
        ]
    );
    // Newest first.
    let dates: Vec<&str> = messages(&r)
        .iter()
        .map(|m| m["date"].as_str().unwrap())
        .collect();
    let mut sorted = dates.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(dates, sorted);

    // By text: every word, in any order, case-insensitively, in the subject or body.
    let (r, _) = call(&rt, "email_db", json!({"query": "INVOICE cloudhost"})).await;
    let text = ok(&r);
    let expected = sql_count(
        db,
        "(subject LIKE '%invoice%' OR body LIKE '%invoice%') \
         AND (subject LIKE '%cloudhost%' OR body LIKE '%cloudhost%')",
    );
    assert!(expected > 0);
    contains(
        &text,
        &format!("{expected} message(s) matching query='INVOICE cloudhost'"),
    );
    assert_eq!(details(&r)["total"], expected);

    // By date range: whole days, both ends included.
    let (r, _) = call(
        &rt,
        "email_db",
        json!({"since": "2024-03-10", "until": "2024-03-20", "limit": 200}),
    )
    .await;
    ok(&r);
    let expected = sql_count(db, "date >= '2024-03-10' AND date < '2024-03-21'");
    assert!(expected > 0);
    assert_eq!(details(&r)["total"], expected);
    for m in messages(&r) {
        let date = m["date"].as_str().unwrap();
        assert!(
            ("2024-03-10".."2024-03-21").contains(&date),
            "{date} outside the range"
        );
    }

    // include_body returns full bodies.
    let (r, _) = call(
        &rt,
        "email_db",
        json!({"sender": "alice", "limit": 1, "include_body": true}),
    )
    .await;
    ok(&r);
    assert!(messages(&r)[0]["body"].is_string());

    // Nothing matching is a normal result.
    let (r, _) = call(&rt, "email_db", json!({"sender": "nobody-at-all"})).await;
    assert_eq!(ok(&r), "No messages matching sender='nobody-at-all'.");
    assert_eq!(details(&r)["total"], 0);
}

#[tokio::test]
async fn email_db_honours_limit() {
    let EmailDb { db, .. } = &sample_db();
    let rt = email_runtime(db);
    let total = sql_count(db, "1");
    assert!(total > 20, "the sample has {total} messages");

    // limit arriving as an int, as the schema's `number` sends it.
    let (r, _) = call(&rt, "email_db", json!({"limit": 2})).await;
    let text = ok(&r);
    assert_eq!(messages(&r).len(), 2);
    assert_eq!(details(&r)["returned"], 2);
    assert_eq!(details(&r)["limit"], 2);
    assert_eq!(details(&r)["total"], total);
    contains(
        &text,
        &format!("{total} message(s); showing the 2 most recent, newest first."),
    );
    contains(&text, "raise limit, currently 2");

    // As a float, and as a string (a model quirk the runtime tolerates).
    for limit in [json!(3.0), json!("3")] {
        let (r, _) = call(&rt, "email_db", json!({ "limit": limit })).await;
        ok(&r);
        assert_eq!(messages(&r).len(), 3, "limit {limit}");
    }

    // The default is 20; at most 200.
    let (r, _) = call(&rt, "email_db", json!({})).await;
    assert_eq!(messages(&r).len(), 20);
    let (r, _) = call(&rt, "email_db", json!({"limit": 100000})).await;
    assert_eq!(details(&r)["limit"], 200);
    assert_eq!(messages(&r).len() as u64, total.min(200));

    for bad in [json!(0), json!(2.5), json!(-1)] {
        let (r, _) = call(&rt, "email_db", json!({ "limit": bad })).await;
        contains(&err(&r), "limit must be a whole number of at least 1");
    }
}

#[tokio::test]
async fn email_db_bad_dates_are_error_results() {
    let EmailDb { db, .. } = &sample_db();
    let rt = email_runtime(db);
    let (r, _) = call(&rt, "email_db", json!({"since": "last week"})).await;
    contains(&err(&r), "since must be an ISO 8601 date");
    let (r, _) = call(
        &rt,
        "email_db",
        json!({"since": "2024-04-01", "until": "2024-03-01"}),
    )
    .await;
    contains(&err(&r), "since (2024-04-01) is after until (2024-03-01)");
}

#[tokio::test]
async fn email_db_model_input_cannot_inject_sql() {
    let EmailDb { db, .. } = &sample_db();
    let before = std::fs::read(db).unwrap();
    let rows = sql_count(db, "1");
    let rt = email_runtime(db);

    let attempts = [
        json!({"query": "' OR 1=1 --"}),
        json!({"query": "x') OR ('1'='1"}),
        json!({"sender": "x' OR '1'='1"}),
        json!({"sender": "'; DROP TABLE messages; --"}),
        json!({"sender": "alice%' UNION SELECT 1,2,3,4,5,6,7,8 --"}),
        json!({"label": "inbox' OR 1=1 --"}),
        json!({"thread_id": "t-offsite' OR '1'='1"}),
        json!({"recipient": "\"; DELETE FROM messages; --"}),
        // LIKE wildcards are matched literally.
        json!({"sender": "%"}),
        json!({"sender": "_"}),
        json!({"query": "%%"}),
    ];
    for args in attempts {
        let (r, _) = call(&rt, "email_db", args.clone()).await;
        let text = ok(&r);
        assert!(text.starts_with("No messages matching"), "{args}: {text}");
        assert_eq!(details(&r)["total"], 0, "{args}");
    }
    // Still intact, byte for byte.
    assert_eq!(sql_count(db, "1"), rows);
    assert!(std::fs::read(db).unwrap() == before, "the database changed");
    let (r, _) = call(&rt, "email_db", json!({"limit": 1})).await;
    assert_eq!(details(&r)["total"], rows);
}

#[tokio::test]
async fn email_db_without_a_database_is_a_clear_error() {
    // The tool declares `env: [EMAIL_DB_PATH]`, so it would inherit the agent's value.
    if std::env::var_os("EMAIL_DB_PATH").is_some() {
        eprintln!("EMAIL_DB_PATH is set in the test environment; only the empty case runs");
    } else {
        let rt = runtime(ExecConfig::default());
        let (r, _) = call(&rt, "email_db", json!({"sender": "alice"})).await;
        let text = err(&r);
        contains(&text, "EMAIL_DB_PATH is not set");
        contains(&text, "make_sample_db.py");
    }

    let rt = runtime(ExecConfig::default().env_set(vec![("EMAIL_DB_PATH", "")]));
    let (r, _) = call(&rt, "email_db", json!({})).await;
    contains(&err(&r), "EMAIL_DB_PATH is not set");

    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.db");
    let rt = email_runtime(&missing);
    let (r, _) = call(&rt, "email_db", json!({})).await;
    contains(
        &err(&r),
        &format!(
            "email database not found: EMAIL_DB_PATH={} does not exist",
            missing.display()
        ),
    );

    // A file that is not an email database.
    let other = dir.path().join("other.db");
    std::fs::write(&other, b"just some text, not SQLite at all").unwrap();
    let rt = email_runtime(&other);
    let (r, _) = call(&rt, "email_db", json!({})).await;
    contains(&err(&r), "is not a readable SQLite database");
}

// ---- convert_audio_to_mp3 -----------------------------------------------------------------

/// A mono 16-bit PCM sine wave at 16 kHz.
fn write_wav(path: &Path, secs: f64) {
    write_wav_at(path, secs, 16_000);
}

fn write_wav_at(path: &Path, secs: f64, rate: u32) {
    let n = (f64::from(rate) * secs) as u32;
    let mut b = Vec::with_capacity(44 + n as usize * 2);
    b.extend_from_slice(b"RIFF");
    b.extend_from_slice(&(36 + n * 2).to_le_bytes());
    b.extend_from_slice(b"WAVEfmt ");
    b.extend_from_slice(&16u32.to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes()); // PCM
    b.extend_from_slice(&1u16.to_le_bytes()); // mono
    b.extend_from_slice(&rate.to_le_bytes());
    b.extend_from_slice(&(rate * 2).to_le_bytes());
    b.extend_from_slice(&2u16.to_le_bytes());
    b.extend_from_slice(&16u16.to_le_bytes());
    b.extend_from_slice(b"data");
    b.extend_from_slice(&(n * 2).to_le_bytes());
    for i in 0..n {
        let t = f64::from(i) / f64::from(rate);
        let v = ((t * 440.0 * std::f64::consts::TAU).sin() * 12_000.0) as i16;
        b.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(path, b).unwrap();
}

fn is_mp3(bytes: &[u8]) -> bool {
    bytes.starts_with(b"ID3") || (bytes.len() > 1 && bytes[0] == 0xFF && bytes[1] & 0xE0 == 0xE0)
}

/// `codec_name` and `bit_rate` of the first audio stream, when ffprobe is installed.
fn ffprobe(path: &Path) -> Option<(String, u64)> {
    let out = Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-select_streams",
            "a:0",
            "-show_entries",
            "stream=codec_name,bit_rate",
            "-of",
            "default=noprint_wrappers=1",
        ])
        .arg(path)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .map(str::to_string)
    };
    Some((field("codec_name")?, field("bit_rate")?.parse().ok()?))
}

#[tokio::test]
async fn convert_audio_to_mp3_encodes_at_the_chosen_bitrate_with_progress() {
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("tone.wav");
    write_wav(&wav, 2.0);
    let rt = runtime(ExecConfig::default().sandbox(writable(dir.path())));

    // Default output path: next to the input.
    let (r, progress) = call(
        &rt,
        "convert_audio_to_mp3",
        json!({"input_path": wav.display().to_string(), "bitrate": "64k"}),
    )
    .await;
    let text = ok(&r);
    let mp3 = dir.path().join("tone.mp3");
    contains(
        &text,
        &format!("Converted {} -> {}", wav.display(), mp3.display()),
    );
    contains(&text, "Bitrate: 64k, size: ");
    contains(&text, "duration: 2.0 s");
    let bytes = std::fs::read(&mp3).unwrap();
    assert!(is_mp3(&bytes), "not an MP3: {:02x?}", &bytes[..4]);
    contains(&text, &format!("size: {} bytes", bytes.len()));
    // A link to the MP3 beside the text (`output: json`).
    let Some(toolbind::Content::ResourceLink(link)) = r.content.get(1) else {
        panic!("no resource link: {:?}", r.content)
    };
    assert_eq!(link.uri, format!("file://{}", mp3.display()));
    assert_eq!(
        (link.name.as_str(), link.mime_type.as_deref(), link.size),
        ("tone.mp3", Some("audio/mpeg"), Some(bytes.len() as u64))
    );
    if let Some((codec, bit_rate)) = ffprobe(&mp3) {
        assert_eq!(codec, "mp3");
        assert_eq!(bit_rate, 64_000);
    }

    assert_eq!(
        progress.first().unwrap(),
        &format!("Converting {} to MP3 at 64k...", wav.display())
    );
    // Progress is rate-limited (updates within 50 ms coalesce, the latest always
    // arrives): the percentages that arrive are in order.
    let percents: Vec<u32> = progress
        .iter()
        .filter_map(|p| {
            p.strip_prefix("Converting: ")?
                .strip_suffix('%')?
                .parse()
                .ok()
        })
        .collect();
    assert!(percents.windows(2).all(|w| w[0] <= w[1]), "{progress:?}");
    assert_eq!(progress.last().unwrap(), "Done");
    // No temporary file left behind.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["tone.mp3", "tone.wav"]);

    // An explicit output path, another bitrate; `.mp3` is appended when missing. (44.1 kHz:
    // MP3 at 16 kHz tops out at 160 kbit/s.)
    let cd = dir.path().join("cd.wav");
    write_wav_at(&cd, 1.0, 44_100);
    // Each percentage update also carries its position, N of 100, so a client can show a
    // progress bar, not only the text.
    let positions = Arc::new(Mutex::new(Vec::new()));
    let sink = positions.clone();
    let r = rt
        .call(
            "convert_audio_to_mp3",
            json!({
                "input_path": cd.display().to_string(),
                "output_path": dir.path().join("hq").display().to_string(),
                "bitrate": "320k",
            }),
            CallOptions::new().progress(move |p| {
                sink.lock()
                    .unwrap()
                    .push((p.text_content(), p.progress, p.total));
            }),
        )
        .await;
    contains(&ok(&r), "Bitrate: 320k");
    let positions = positions.lock().unwrap().clone();
    assert_eq!(positions.first().unwrap().1, Some(0.0), "{positions:?}");
    let mut reported = 0;
    for (text, progress, total) in &positions {
        if let Some(pct) = text
            .strip_prefix("Converting: ")
            .and_then(|t| t.strip_suffix('%'))
        {
            assert_eq!(
                *progress,
                Some(pct.parse::<f64>().unwrap()),
                "{positions:?}"
            );
            assert_eq!(*total, Some(100.0), "{positions:?}");
            reported += 1;
        }
    }
    assert!(reported > 0, "{positions:?}");
    assert_eq!(positions.last().unwrap().1, None, "`Done` is plain text");
    let hq = dir.path().join("hq.mp3");
    assert!(is_mp3(&std::fs::read(&hq).unwrap()));
    if let Some((_, bit_rate)) = ffprobe(&hq) {
        assert_eq!(bit_rate, 320_000);
    }

    // 16 kHz input at 320k: MP3 below 32 kHz cannot go above 160 kbit/s, so the tool
    // resamples rather than quietly delivering less than it reports.
    let (r, _) = call(
        &rt,
        "convert_audio_to_mp3",
        json!({
            "input_path": wav.display().to_string(),
            "output_path": dir.path().join("low-rate-hq.mp3").display().to_string(),
            "bitrate": "320k",
        }),
    )
    .await;
    contains(&ok(&r), "Bitrate: 320k");
    let out = Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-show_entries",
            "stream=bit_rate",
            "-of",
            "csv=p=0",
        ])
        .arg(dir.path().join("low-rate-hq.mp3"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "320000");

    // A bitrate outside the enum never reaches the tool.
    let (r, _) = call(
        &rt,
        "convert_audio_to_mp3",
        json!({"input_path": wav.display().to_string(), "bitrate": "100k"}),
    )
    .await;
    contains(&err(&r), "`bitrate`");
}

#[tokio::test]
async fn convert_audio_to_mp3_refuses_to_overwrite_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("in.wav");
    write_wav(&wav, 0.5);
    let out = dir.path().join("out.mp3");
    std::fs::write(&out, b"an earlier result").unwrap();
    let rt = runtime(ExecConfig::default().sandbox(writable(dir.path())));
    let args = json!({
        "input_path": wav.display().to_string(),
        "output_path": out.display().to_string(),
    });

    let (r, _) = call(&rt, "convert_audio_to_mp3", args.clone()).await;
    contains(
        &err(&r),
        &format!(
            "output file already exists: {} (set overwrite to true to replace it)",
            out.display()
        ),
    );
    assert_eq!(std::fs::read(&out).unwrap(), b"an earlier result");

    let mut args = args;
    args["overwrite"] = json!(true);
    // `approval: when overwrite`: without anyone to approve, replacing is denied and the
    // file kept; a user's yes (CallOptions::host) lets it run.
    let (r, _) = call(&rt, "convert_audio_to_mp3", args.clone()).await;
    assert_eq!(r.stop, toolbind::StopReason::Denied, "{r:?}");
    contains(&r.text_content(), "`approval: when overwrite`");
    assert_eq!(std::fs::read(&out).unwrap(), b"an earlier result");
    let yes = || {
        CallOptions::new().host(toolbind::host::policy(|_| async {
            toolbind::host::Decision::Approve
        }))
    };
    let (r, _) = call_with(&rt, "convert_audio_to_mp3", args, yes()).await;
    contains(&ok(&r), "Bitrate: 192k");
    assert!(is_mp3(&std::fs::read(&out).unwrap()));

    // The input itself is never the output.
    let mp3_in = dir.path().join("out.mp3");
    let (r, _) = call_with(
        &rt,
        "convert_audio_to_mp3",
        json!({"input_path": mp3_in.display().to_string(), "overwrite": true}),
        yes(),
    )
    .await;
    contains(&err(&r), "output would overwrite the input");
}

#[tokio::test]
async fn convert_audio_to_mp3_input_errors_are_error_results() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(ExecConfig::default().sandbox(writable(dir.path())));

    let missing = dir.path().join("missing.wav");
    let (r, _) = call(
        &rt,
        "convert_audio_to_mp3",
        json!({"input_path": missing.display().to_string()}),
    )
    .await;
    contains(
        &err(&r),
        &format!("input file not found: {}", missing.display()),
    );

    let (r, _) = call(
        &rt,
        "convert_audio_to_mp3",
        json!({"input_path": dir.path().display().to_string()}),
    )
    .await;
    contains(&err(&r), "input is not a regular file");

    // Not audio: ffmpeg's own message, then the tool's, and no MP3 left behind.
    let junk = dir.path().join("junk.wav");
    std::fs::write(&junk, b"this is not a wave file").unwrap();
    let (r, _) = call(
        &rt,
        "convert_audio_to_mp3",
        json!({"input_path": junk.display().to_string()}),
    )
    .await;
    contains(
        &err(&r),
        &format!("ffmpeg could not convert {}", junk.display()),
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["junk.wav"]);

    let wav = dir.path().join("in.wav");
    write_wav(&wav, 0.2);
    let (r, _) = call(
        &rt,
        "convert_audio_to_mp3",
        json!({
            "input_path": wav.display().to_string(),
            "output_path": dir.path().join("no/such/folder/out.mp3").display().to_string(),
        }),
    )
    .await;
    contains(&err(&r), "output folder does not exist");
}

/// The absolute path of `program` as the test process finds it (following pyenv-style
/// shims to the real interpreter for python3).
fn real_program(program: &str) -> PathBuf {
    if program == "python3" {
        let out = Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .unwrap();
        return PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    }
    let out = Command::new("bash")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .unwrap();
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

#[tokio::test]
async fn convert_audio_to_mp3_without_ffmpeg_says_so() {
    // A PATH holding only what index.sh needs before it looks for ffmpeg.
    let bin = tempfile::tempdir().unwrap();
    for program in ["bash", "python3", "cat"] {
        std::os::unix::fs::symlink(real_program(program), bin.path().join(program)).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("in.wav");
    write_wav(&wav, 0.2);
    let rt = runtime(
        ExecConfig::default()
            .sandbox(writable(dir.path()).allow_read(bin.path()))
            .env_set(vec![("PATH", bin.path().display().to_string())])
            .bash(bin.path().join("bash").display().to_string()),
    );
    let (r, _) = call(
        &rt,
        "convert_audio_to_mp3",
        json!({"input_path": wav.display().to_string()}),
    )
    .await;
    let text = err(&r);
    contains(
        &text,
        "ffmpeg not found on PATH; install it (apt-get install ffmpeg)",
    );
    assert!(!dir.path().join("in.mp3").exists());
}

// ---- todo ---------------------------------------------------------------------------------

fn todos(r: &ToolResult) -> Vec<String> {
    serde_json::from_value(details(r)["todos"].clone()).expect("details.todos: [string]")
}

#[tokio::test]
async fn todo_keeps_its_list_across_calls_in_the_warm_worker() {
    let rt = runtime(ExecConfig::default());

    let (r, _) = call(&rt, "todo", json!({"action": "list"})).await;
    assert_eq!(ok(&r), "Todo list is empty");
    assert!(todos(&r).is_empty());

    let (r, progress) = call(
        &rt,
        "todo",
        json!({"action": "add", "text": "  Write the weekly report "}),
    )
    .await;
    assert_eq!(ok(&r), "Added: Write the weekly report (total 1 item(s))");
    assert_eq!(todos(&r), ["Write the weekly report"]);
    assert_eq!(progress, ["Processing: add"]);

    for item in ["Email the report to the team", "Book the offsite room"] {
        let (r, _) = call(&rt, "todo", json!({"action": "add", "text": item})).await;
        ok(&r);
    }
    let (r, _) = call(&rt, "todo", json!({"action": "list"})).await;
    assert_eq!(
        ok(&r),
        "1. Write the weekly report\n2. Email the report to the team\n3. Book the offsite room"
    );

    // Done by number, by "#number", by part of the text (case-insensitive).
    let (r, _) = call(&rt, "todo", json!({"action": "done", "text": "2"})).await;
    assert_eq!(
        ok(&r),
        "Completed: Email the report to the team (remaining 2 item(s))"
    );
    assert_eq!(
        todos(&r),
        ["Write the weekly report", "Book the offsite room"]
    );
    let (r, _) = call(&rt, "todo", json!({"action": "done", "text": "OFFSITE"})).await;
    assert_eq!(
        ok(&r),
        "Completed: Book the offsite room (remaining 1 item(s))"
    );

    // No match is not an error; it shows the list.
    let (r, _) = call(&rt, "todo", json!({"action": "done", "text": "#7"})).await;
    assert_eq!(
        ok(&r),
        "No matching item found: #7\nCurrent items:\n1. Write the weekly report"
    );

    let (r, _) = call(&rt, "todo", json!({"action": "done", "text": "#1"})).await;
    ok(&r);
    let (r, _) = call(&rt, "todo", json!({"action": "list"})).await;
    assert_eq!(ok(&r), "Todo list is empty");
    assert!(todos(&r).is_empty());

    // Several at once (a nested input: an array of strings), also sent as a JSON string.
    let (r, _) = call(
        &rt,
        "todo",
        json!({"action": "add", "items": ["Book the room", " Send the invite "]}),
    )
    .await;
    assert_eq!(ok(&r), "Added 2 items (total 2 item(s))");
    let (r, _) = call(
        &rt,
        "todo",
        json!({"action": "add", "items": "[\"Order food\"]"}),
    )
    .await;
    assert_eq!(ok(&r), "Added 1 items (total 3 item(s))");
    assert_eq!(
        todos(&r),
        ["Book the room", "Send the invite", "Order food"]
    );
    // The bounds are the validator's: no call with an empty list reaches the tool.
    let (r, progress) = call(&rt, "todo", json!({"action": "add", "items": []})).await;
    contains(
        &err(&r),
        "`items`: expected an array of strings (1\u{2013}50 items), received an array of 0 items",
    );
    assert!(progress.is_empty(), "{progress:?}");
}

#[tokio::test]
async fn todo_errors_are_error_results_and_keep_the_list() {
    let rt = runtime(ExecConfig::default());
    let (r, _) = call(&rt, "todo", json!({"action": "add", "text": "keep me"})).await;
    ok(&r);

    for args in [
        json!({"action": "add"}),
        json!({"action": "add", "text": "   "}),
    ] {
        let (r, _) = call(&rt, "todo", args.clone()).await;
        contains(
            &err(&r),
            "The add action requires a text parameter (the item to add) or items",
        );
    }
    let (r, _) = call(&rt, "todo", json!({"action": "done"})).await;
    contains(&err(&r), "The done action requires a text parameter");

    // Rejected by validation before the tool runs: no progress from the tool.
    let (r, progress) = call(&rt, "todo", json!({"action": "remove", "text": "x"})).await;
    contains(
        &err(&r),
        "`action`: expected one of \"list\", \"add\", \"done\"",
    );
    assert!(progress.is_empty(), "{progress:?}");
    let (r, _) = call(&rt, "todo", json!({"text": "x"})).await;
    contains(&err(&r), "`action`");

    // A thrown error did not cost the worker its state.
    let (r, _) = call(&rt, "todo", json!({"action": "list"})).await;
    assert_eq!(ok(&r), "1. keep me");
    assert_eq!(todos(&r), ["keep me"]);
}

#[tokio::test]
async fn todo_lists_are_per_runtime() {
    // Two runtimes (two executors) have two workers, so two lists.
    let a = runtime(ExecConfig::default());
    let b = runtime(ExecConfig::default());
    let (r, _) = call(&a, "todo", json!({"action": "add", "text": "only in a"})).await;
    ok(&r);
    let (r, _) = call(&b, "todo", json!({"action": "list"})).await;
    assert_eq!(ok(&r), "Todo list is empty");
}
