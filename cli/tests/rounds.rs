//! MCP 2026-07-28's `InputRequiredResult` in `toolbind serve` (SEP-2322), spoken to over
//! stdio line by line, each request carrying its own `_meta`: a tool that asks is answered
//! with its questions and waits, alive, for the client's retry; the sealed `requestState`
//! is good for one retry of that call, with those arguments, on that replica; what a
//! retry may carry is checked; calls whose clients never come back are bounded in number
//! and time. The official conformance suite's `input-required-result-*` scenarios run in
//! conformance.rs.

use crate::common;

use std::ffi::OsStr;
use std::time::{Duration, Instant};

use common::wire::{Wire, error_of};
use serde_json::{Value, json};

/// `serve` on the ask fixtures with `extra`.
fn serve(extra: &[&str]) -> Wire {
    let tools = common::fixture("ask_tools");
    let mut args: Vec<&OsStr> = vec![tools.as_os_str()];
    args.extend(extra.iter().map(OsStr::new));
    Wire::stateless(&args)
}

/// A 2026-07-28 request's `_meta`: a client that can be asked anything.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "rounds-test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities":
            {"elicitation": {"form": {}}, "sampling": {}, "roots": {}},
    })
}

/// `tools/call` of `tool` with `args`, and `extra` params (`inputResponses`,
/// `requestState`).
fn call(w: &mut Wire, id: i64, tool: &str, args: Value, extra: Value) -> Value {
    let mut params = json!({"name": tool, "arguments": args, "_meta": meta()});
    if let Value::Object(extra) = extra {
        params.as_object_mut().unwrap().extend(extra);
    }
    w.request(id, "tools/call", params)
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

/// An `InputRequiredResult`'s keys and state.
fn asked(answer: &Value) -> (Vec<String>, String) {
    let r = &answer["result"];
    assert_eq!(r["resultType"], "input_required", "{answer}");
    let keys = r["inputRequests"]
        .as_object()
        .unwrap_or_else(|| panic!("no inputRequests: {answer}"))
        .keys()
        .cloned()
        .collect();
    (keys, r["requestState"].as_str().unwrap().to_owned())
}

fn text(answer: &Value) -> String {
    assert!(
        answer["result"]["resultType"] != "input_required",
        "{answer}"
    );
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {answer}"))
        .to_owned()
}

#[test]
fn a_tool_asks_round_by_round_and_each_state_is_good_for_one_retry() {
    let mut w = serve(&[]);
    let args = json!({"greeting": "Hello"});
    let first = call(&mut w, 1, "two_steps", args.clone(), json!({}));
    let (keys, s1) = asked(&first);
    assert_eq!(keys, ["name"]);
    let form = &first["result"]["inputRequests"]["name"];
    assert_eq!(form["method"], "elicitation/create", "{first}");
    assert_eq!(form["params"]["message"], "Your name?", "{first}");

    // Answered: the tool, alive since, asks its second question.
    let second = call(
        &mut w,
        2,
        "two_steps",
        args.clone(),
        json!({"inputResponses": {"name": accept(json!({"name": "Ada"}))}, "requestState": s1}),
    );
    let (keys, s2) = asked(&second);
    assert_eq!(keys, ["color"]);
    assert_ne!(s1, s2);

    // The first state again: used.
    let replayed = call(
        &mut w,
        3,
        "two_steps",
        args.clone(),
        json!({"inputResponses": {"name": accept(json!({"name": "Eve"}))}, "requestState": s1}),
    );
    let (_, code, msg) = error_of(&replayed);
    assert_eq!(code, -32602, "{replayed}");
    assert!(msg.contains("already used"), "{msg}");

    // The latest state with other arguments, or changed: refused, and not used up.
    let other = call(
        &mut w,
        4,
        "two_steps",
        json!({"greeting": "Goodbye"}),
        json!({"inputResponses": {"color": accept(json!({"color": "red"}))}, "requestState": s2}),
    );
    let (_, code, msg) = error_of(&other);
    assert_eq!(code, -32602, "{other}");
    assert!(msg.contains("another call"), "{msg}");
    let mut changed = s2.clone().into_bytes();
    let mid = changed.len() / 2;
    changed[mid] = if changed[mid] == b'A' { b'B' } else { b'A' };
    let forged = call(
        &mut w,
        5,
        "two_steps",
        args.clone(),
        json!({"requestState": String::from_utf8(changed).unwrap()}),
    );
    let (_, code, msg) = error_of(&forged);
    assert_eq!(code, -32602, "{forged}");
    assert!(msg.contains("not valid"), "{msg}");

    // An answer that is not the result of its request: refused, the state not used up.
    let bad = call(
        &mut w,
        6,
        "two_steps",
        args.clone(),
        json!({"inputResponses": {"color": {"content": {"color": "red"}}}, "requestState": s2}),
    );
    let (_, code, msg) = error_of(&bad);
    assert_eq!(code, -32602, "{bad}");
    assert!(msg.contains("inputResponses.color"), "{msg}");

    // The right retry ends the call; extra keys are ignored.
    let done = call(
        &mut w,
        7,
        "two_steps",
        args.clone(),
        json!({"inputResponses": {"color": accept(json!({"color": "blue"})), "stray": {}},
            "requestState": s2}),
    );
    assert_eq!(text(&done), "Hello, Ada who likes blue");

    // Replayed after the call ended: its call has ended.
    let late = call(
        &mut w,
        8,
        "two_steps",
        args,
        json!({"inputResponses": {"color": accept(json!({"color": "red"}))}, "requestState": s2}),
    );
    let (_, code, msg) = error_of(&late);
    assert_eq!(code, -32602, "{late}");
    assert!(msg.contains("its call has ended"), "{msg}");
}

#[test]
fn answers_may_come_with_the_first_request_and_bad_ones_are_refused() {
    let mut w = serve(&[]);
    let args = json!({"greeting": "Hi"});
    // Both answers up front: no round trip at all.
    let done = call(
        &mut w,
        1,
        "two_steps",
        args.clone(),
        json!({"inputResponses": {"name": accept(json!({"name": "Bo"})),
            "color": accept(json!({"color": "green"}))}}),
    );
    assert_eq!(text(&done), "Hi, Bo who likes green");

    // One that is not an object, or null responses: a protocol error, or asked again.
    let bad = call(
        &mut w,
        2,
        "two_steps",
        args.clone(),
        json!({"inputResponses": {"name": 12345}}),
    );
    let (_, code, msg) = error_of(&bad);
    assert_eq!(code, -32602, "{bad}");
    assert!(msg.contains("must be an object"), "{msg}");
    // Up front, an answer that does not read as its request's result is asked again.
    let again = call(
        &mut w,
        3,
        "two_steps",
        args.clone(),
        json!({"inputResponses": {"name": {"nothing": true}}}),
    );
    assert_eq!(asked(&again).0, ["name"]);

    // A state that is not one at all.
    for (id, state) in [
        (4, json!("")),
        (5, json!("rs2.x.y")),
        (6, json!("a".repeat(100_000))),
    ] {
        let r = call(
            &mut w,
            id,
            "two_steps",
            args.clone(),
            json!({"requestState": state}),
        );
        let (_, code, msg) = error_of(&r);
        assert_eq!(code, -32602, "{r}");
        assert!(msg.contains("not valid"), "{msg}");
    }

    // A key the tool gives that is not a key: refused in the tool.
    let refused = call(
        &mut w,
        7,
        "two_steps",
        json!({"greeting": "Hi", "key": "not a key!"}),
        json!({}),
    );
    assert!(
        text(&refused).contains("refused: ctx.elicit: key must be 1 to 64"),
        "{refused}"
    );
}

#[test]
fn questions_asked_at_once_go_out_in_one_round() {
    let mut w = serve(&[]);
    // python's asyncio.gather: both in the first round.
    let first = call(&mut w, 1, "two_at_once", json!({}), json!({}));
    let (keys, state) = asked(&first);
    assert_eq!(keys, ["first", "second"]);
    let done = call(
        &mut w,
        2,
        "two_at_once",
        json!({}),
        json!({"inputResponses": {"first": accept(json!({"x": "one"})),
            "second": accept(json!({"x": "two"}))}, "requestState": state}),
    );
    assert_eq!(text(&done), "one and two");
}

/// A progress notification's token, value and message.
type ProgressSeen = (Value, f64, String);
/// A log message's logger and data.
type LogSeen = (String, String);

/// The notifications `w` read before the answers it took, and after a `ping` too when
/// `ping` is given (whatever the server queued by then has gone out).
fn notifications(w: &mut Wire, ping: Option<i64>) -> (Vec<ProgressSeen>, Vec<LogSeen>) {
    if let Some(id) = ping {
        w.request(id, "ping", json!({"_meta": meta()}));
    }
    let (mut progress, mut logs) = (Vec::new(), Vec::new());
    for m in w.take_held() {
        match m["method"].as_str() {
            Some("notifications/progress") => progress.push((
                m["params"]["progressToken"].clone(),
                m["params"]["progress"].as_f64().unwrap(),
                m["params"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )),
            Some("notifications/message") => logs.push((
                m["params"]["logger"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                m["params"]["data"].as_str().unwrap_or_default().to_owned(),
            )),
            _ => {}
        }
    }
    logs.sort();
    (progress, logs)
}

#[test]
fn progress_and_logs_go_to_the_request_of_the_round_at_hand() {
    let mut w = serve(&[]);
    // Each request of the call names its own progress token and log level.
    let request =
        |w: &mut Wire, id: i64, token: Option<&str>, level: Option<&str>, extra: Value| {
            let mut m = meta();
            if let Some(t) = token {
                m["progressToken"] = json!(t);
            }
            if let Some(l) = level {
                m["io.modelcontextprotocol/logLevel"] = json!(l);
            }
            let mut params = json!({"name": "reports", "arguments": {}, "_meta": m});
            if let Value::Object(extra) = extra {
                params.as_object_mut().unwrap().extend(extra);
            }
            w.request(id, "tools/call", params)
        };
    let go = |state: &str| json!({"inputResponses": {"go": accept(json!({"confirm": true}))}, "requestState": state});
    let line = |data: &str| ("reports".to_owned(), data.to_owned());

    // What the tool reported before it asked reaches the first request before its
    // answer: the last of three quick updates, its stderr line, its notice.
    let first = request(&mut w, 1, Some("p1"), Some("info"), json!({}));
    let (keys, state) = asked(&first);
    assert_eq!(keys, ["go"]);
    let (progress, logs) = notifications(&mut w, None);
    assert!(progress.iter().all(|(t, _, _)| t == "p1"), "{progress:?}");
    let (_, last, said) = progress.last().expect("no progress before the questions");
    assert_eq!(said, "3 before asking", "{progress:?}");
    assert_eq!(
        logs,
        [line("notice before asking"), line("stderr before asking")]
    );

    // The retry takes what the tool reports once answered, under its own token, before
    // its answer; the values go on increasing over the call.
    let done = request(&mut w, 3, Some("p2"), Some("info"), go(&state));
    assert_eq!(text(&done), "went on");
    let (progress, logs) = notifications(&mut w, None);
    assert_eq!(progress.len(), 1, "{progress:?}");
    let (token, value, said) = &progress[0];
    assert_eq!((token, said.as_str()), (&json!("p2"), "after the answer"));
    assert!(value > last, "{value} after {last}");
    assert_eq!(
        logs,
        [
            line("notice after the answer"),
            line("stderr after the answer")
        ]
    );
    let (progress, logs) = notifications(&mut w, Some(4));
    assert!(
        progress.is_empty() && logs.is_empty(),
        "late: {progress:?} {logs:?}"
    );

    // A retry that names no token and no level gets neither (2026-07-28: no level, no
    // messages), though the first request asked for both.
    let first = request(&mut w, 5, Some("p3"), Some("info"), json!({}));
    let (_, state) = asked(&first);
    let _ = notifications(&mut w, Some(6));
    let done = request(&mut w, 7, None, None, go(&state));
    assert_eq!(text(&done), "went on");
    let (progress, logs) = notifications(&mut w, Some(8));
    assert!(progress.is_empty(), "{progress:?}");
    assert!(logs.is_empty(), "{logs:?}");
}

#[test]
fn an_approval_goes_out_as_a_question_and_a_no_denies() {
    let mut w = serve(&[]);
    let args = json!({"path": "notes/a.txt", "token": "s3cret-value"});
    let first = call(&mut w, 1, "remove_note", args.clone(), json!({}));
    let (keys, state) = asked(&first);
    assert_eq!(keys, ["approval"]);
    let message = first["result"]["inputRequests"]["approval"]["params"]["message"]
        .as_str()
        .unwrap();
    assert!(
        message.contains("remove_note") && message.contains("notes/a.txt"),
        "{message}"
    );
    assert!(
        !message.contains("s3cret-value"),
        "a sensitive input was shown: {message}"
    );
    let no = call(
        &mut w,
        2,
        "remove_note",
        args.clone(),
        json!({"inputResponses": {"approval": accept(json!({"approve": false}))},
            "requestState": state}),
    );
    assert_eq!(no["result"]["isError"], true, "{no}");
    assert!(text(&no).contains("denied"), "{no}");

    let first = call(&mut w, 3, "remove_note", args.clone(), json!({}));
    let (_, state) = asked(&first);
    let yes = call(
        &mut w,
        4,
        "remove_note",
        args,
        json!({"inputResponses": {"approval": accept(json!({"approve": true}))},
            "requestState": state}),
    );
    assert_eq!(text(&yes), "removed notes/a.txt");
}

#[test]
fn a_state_is_read_only_by_its_replica() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key");
    std::fs::write(&key, "0123456789abcdef0123456789abcdef-shared\n").unwrap();
    let key_arg = key.display().to_string();
    let with_key = ["--request-state-key-file", key_arg.as_str()];
    let mut a = serve(&with_key);
    let mut b = serve(&with_key);
    let mut c = serve(&[]);
    let args = json!({"greeting": "Hey"});
    let (_, state) = asked(&call(&mut a, 1, "two_steps", args.clone(), json!({})));
    // Same key: B reads the state and says whose it is.
    let on_b = call(
        &mut b,
        1,
        "two_steps",
        args.clone(),
        json!({"requestState": state}),
    );
    let (_, code, msg) = error_of(&on_b);
    assert_eq!(code, -32602, "{on_b}");
    assert!(msg.contains("belongs to another replica"), "{msg}");
    // Another key: C cannot read it.
    let on_c = call(
        &mut c,
        1,
        "two_steps",
        args.clone(),
        json!({"requestState": state}),
    );
    let (_, code, msg) = error_of(&on_c);
    assert_eq!(code, -32602, "{on_c}");
    assert!(
        msg.contains("not valid") && msg.contains("another key"),
        "{msg}"
    );
    // A still has the call.
    let (keys, _) = asked(&call(
        &mut a,
        2,
        "two_steps",
        args,
        json!({"inputResponses": {"name": accept(json!({"name": "Al"}))}, "requestState": state}),
    ));
    assert_eq!(keys, ["color"]);

    // A key too short to seal with is refused at start, saying how to make one.
    std::fs::write(&key, "short\n").unwrap();
    let out = common::run(&[
        "serve",
        common::fixture("ask_tools").to_str().unwrap(),
        "--request-state-key-file",
        &key_arg,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", common::stderr(&out));
    assert!(
        common::stderr(&out).contains("needs at least 32"),
        "{}",
        common::stderr(&out)
    );
}

#[test]
fn clients_that_never_come_back_are_bounded_in_number_and_time() {
    let mut w = serve(&[
        "--max-pending-calls",
        "4",
        "--pending-ttl",
        "2",
        "--max-concurrent-calls",
        "8",
    ]);
    // 1,000 first requests in one write, no retry ever.
    let mut burst = Vec::new();
    for id in 1..=1000 {
        let params = json!({"name": "two_steps", "arguments": {"greeting": "Yo"}, "_meta": meta()});
        burst.extend(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
                .to_string()
                .into_bytes(),
        );
        burst.push(b'\n');
    }
    let sent = Instant::now();
    w.send_raw(&burst[..burst.len() - 1]);
    let (mut waiting, mut refused, mut states) = (0, 0, Vec::new());
    for id in 1..=1000 {
        let answer = w.answer_to(id);
        if answer["result"]["resultType"] == "input_required" {
            waiting += 1;
            states.push(asked(&answer).1);
        } else {
            let (_, code, msg) = error_of(&answer);
            assert_eq!(code, -32000, "{answer}");
            assert!(msg.contains("--max-pending-calls"), "{msg}");
            refused += 1;
        }
    }
    // At most 4 wait at once: 4 per --pending-ttl while the burst is being answered.
    let periods = sent.elapsed().as_secs_f64() / 2.0;
    assert_eq!(waiting + refused, 1000);
    assert!(
        waiting >= 4 && waiting as f64 <= 4.0 * (periods.floor() + 1.0),
        "{waiting} waited in {periods:.1} TTLs"
    );

    // Past --pending-ttl the waiting calls are stopped and forgotten: their states lead
    // nowhere, and four new calls may wait again (a fifth may not).
    std::thread::sleep(Duration::from_millis(2500));
    for (i, state) in states.iter().enumerate() {
        let late = call(
            &mut w,
            2000 + i as i64,
            "two_steps",
            json!({"greeting": "Yo"}),
            json!({"requestState": state}),
        );
        let (_, code, msg) = error_of(&late);
        assert_eq!(code, -32602, "{late}");
        assert!(msg.contains("expired"), "{msg}");
    }
    let end = Instant::now() + Duration::from_secs(20);
    let mut id = 3000;
    let mut again = 0;
    while again < 4 {
        id += 1;
        let answer = call(
            &mut w,
            id,
            "two_steps",
            json!({"greeting": "Yo"}),
            json!({}),
        );
        if answer["result"]["resultType"] == "input_required" {
            again += 1;
        } else {
            // The stopped calls' slots are freed as their tools end.
            assert!(
                Instant::now() < end,
                "the expired calls still hold their places: {answer}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let fifth = call(
        &mut w,
        9999,
        "two_steps",
        json!({"greeting": "Yo"}),
        json!({}),
    );
    assert_eq!(error_of(&fifth).1, -32000, "{fifth}");
}

#[test]
fn a_key_file_that_is_not_a_small_regular_file_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let serve_with = |key: &std::path::Path| {
        let mut cmd = common::toolbind();
        cmd.args(["serve"])
            .arg(common::fixture("ask_tools"))
            .arg("--request-state-key-file")
            .arg(key)
            .stdin(std::process::Stdio::null());
        // Bounded: a FIFO must not block the start.
        let mut child = cmd
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let end = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                let mut err = String::new();
                std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
                return (status.code(), err);
            }
            if Instant::now() > end {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "serve blocked on --request-state-key-file {}",
                    key.display()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    // A FIFO: refused, not opened for a read that would never end.
    let fifo = dir.path().join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let (code, err) = serve_with(&fifo);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--request-state-key-file")
            && err.contains("is a FIFO (named pipe), not a regular file"),
        "{err}"
    );
    // A folder.
    let (code, err) = serve_with(dir.path());
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("is a folder, not a regular file"), "{err}");
    // 200 MB (sparse): refused from its size, never read.
    let big = dir.path().join("big");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(200 * 1024 * 1024)
        .unwrap();
    let (code, err) = serve_with(&big);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("is not a key"), "{err}");
    // A symlink to a good key is followed (the operator's choice, as for a token file).
    let key = dir.path().join("key");
    std::fs::write(&key, "0123456789abcdef0123456789abcdef\n").unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&key, &link).unwrap();
    let args = [
        common::fixture("ask_tools").into_os_string(),
        "--request-state-key-file".into(),
        link.into_os_string(),
    ];
    let args: Vec<&OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let mut w = Wire::stateless(&args);
    let (keys, _) = asked(&call(
        &mut w,
        1,
        "two_steps",
        json!({"greeting": "Hi"}),
        json!({}),
    ));
    assert_eq!(keys, ["name"]);
}

#[test]
fn ask_timeout_bounds_a_question_and_a_longer_pending_ttl_is_warned_of() {
    // A question nobody answers fails in the tool after --ask-timeout (a 2025-11-25
    // client is sent it, and never answers).
    let tools = common::fixture("ask_tools");
    let args = [
        tools.as_os_str(),
        OsStr::new("--ask-timeout"),
        OsStr::new("1"),
    ];
    let mut w = Wire::start(&args, "2025-11-25", json!({"elicitation": {"form": {}}}));
    let answer = w.request(
        1,
        "tools/call",
        json!({"name": "two_steps", "arguments": {"greeting": "Hi"}}),
    );
    let said = text(&answer);
    assert!(
        said.starts_with("refused:") && said.contains("got no answer within 1 s"),
        "{said}"
    );
    let asked: Vec<Value> = w.take_held();
    assert!(
        asked.iter().any(|m| m["method"] == "elicitation/create"),
        "the client was not asked: {asked:?}"
    );

    // serve says when --pending-ttl outlasts the questions it waits for.
    let started = |extra: &[&str]| {
        let out = common::toolbind()
            .arg("serve")
            .arg(&tools)
            .args(extra)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        common::stderr(&out)
    };
    let log = started(&["--pending-ttl", "600"]);
    assert!(
        log.contains("warning: --pending-ttl (600 s) is longer than --ask-timeout (300 s)"),
        "{log}"
    );
    let log = started(&["--pending-ttl", "600", "--ask-timeout", "900"]);
    assert!(!log.contains("--pending-ttl"), "{log}");
}
