//! MCP's tasks extension in `toolbind serve` (SEP-2663), spoken to over stdio line by line
//! on 2025-11-25 by a client that declares `io.modelcontextprotocol/tasks`: a task's
//! progress and result, cancellation, a crash, what a client without the extension gets,
//! unknown and expired ids, the TTL stopping a task, a burst of 10,000 task requests, and
//! a task's questions (asked only of a client that declared the capability).
//! The official conformance suite's tasks scenarios run in conformance.rs (2026-07-28).

use crate::common;

use std::ffi::OsStr;
use std::io::Write;
use std::time::{Duration, Instant};

use common::wire::{Wire, error_of};
use serde_json::{Value, json};

const TASKS: &str = "io.modelcontextprotocol/tasks";

fn takes_tasks() -> Value {
    json!({"extensions": {TASKS: {}}})
}

/// `serve` on the task fixtures with `extra`, as a 2025-11-25 client with `capabilities`.
fn serve(extra: &[&str], capabilities: Value) -> Wire {
    let tools = common::fixture("task_tools");
    let mut args: Vec<&OsStr> = vec![tools.as_os_str()];
    args.extend(extra.iter().map(OsStr::new));
    Wire::start(&args, "2025-11-25", capabilities)
}

fn call(w: &mut Wire, id: i64, tool: &str, args: Value) -> Value {
    w.request(id, "tools/call", json!({"name": tool, "arguments": args}))
}

/// Starts a task and returns its id, checking the flat `CreateTaskResult`.
fn start(w: &mut Wire, id: i64, tool: &str, args: Value) -> String {
    let created = call(w, id, tool, args);
    let r = &created["result"];
    assert_eq!(r["resultType"], "task", "{created}");
    assert_eq!(r["status"], "working", "{created}");
    assert!(
        r.get("content").is_none() && r.get("task").is_none(),
        "{created}"
    );
    assert!(r["pollIntervalMs"].as_u64().unwrap() > 0, "{created}");
    r["taskId"].as_str().unwrap().to_owned()
}

fn get(w: &mut Wire, id: i64, task: &str) -> Value {
    w.request(id, "tasks/get", json!({"taskId": task}))
}

/// Polls `tasks/get` until `done` holds for its answer (at most `secs`).
fn until(w: &mut Wire, task: &str, secs: u64, done: impl Fn(&Value) -> bool) -> Value {
    let end = Instant::now() + Duration::from_secs(secs);
    let mut id = 1000;
    loop {
        id += 1;
        let got = get(w, id, task);
        if done(&got) {
            return got;
        }
        assert!(Instant::now() < end, "task {task} never got there: {got}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn terminal(v: &Value) -> bool {
    matches!(
        v["result"]["status"].as_str(),
        Some("completed" | "failed" | "cancelled")
    )
}

#[test]
fn a_task_reports_its_progress_then_inlines_its_result() {
    let mut w = serve(&[], takes_tasks());
    let task = start(&mut w, 1, "job_py", json!({"seconds": 1}));
    // Durable at once: a tasks/get right after the answer finds it.
    let now = get(&mut w, 2, &task);
    assert_eq!(now["result"]["taskId"], task.as_str(), "{now}");
    let working = until(&mut w, &task, 20, |v| {
        v["result"]["statusMessage"] == "1/2 started" || terminal(v)
    });
    assert_eq!(working["result"]["status"], "working", "{working}");
    assert!(working["result"].get("result").is_none(), "{working}");
    let done = until(&mut w, &task, 20, terminal);
    let r = &done["result"];
    assert_eq!(r["status"], "completed", "{done}");
    assert_eq!(r["result"]["content"][0]["text"], "worked 1 s", "{done}");
    assert_eq!(r["result"]["isError"], false, "{done}");
    assert!(r.get("error").is_none(), "{done}");
    // Asked again, the same answer: a result is kept, not handed out once.
    assert_eq!(get(&mut w, 3, &task)["result"]["result"], r["result"]);
}

#[test]
fn a_client_without_the_extension_gets_plain_calls_or_minus_32021() {
    let mut w = serve(&[], json!({}));
    // `task: optional`: a plain call.
    let plain = call(&mut w, 1, "job_py", json!({"seconds": 0}));
    assert_eq!(
        plain["result"]["content"][0]["text"], "worked 0 s",
        "{plain}"
    );
    assert!(plain["result"].get("taskId").is_none(), "{plain}");
    // `task: required`: refused, saying what to declare.
    let refused = call(&mut w, 2, "job_sh", json!({"seconds": 0}));
    let (_, code, message) = error_of(&refused);
    assert_eq!(code, -32021, "{refused}");
    assert!(message.contains("task: required"), "{message}");
    assert!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"][TASKS].is_object(),
        "{refused}"
    );
    // The tasks methods are gated on the extension too.
    for (id, method) in [(3, "tasks/get"), (4, "tasks/cancel")] {
        let answer = w.request(id, method, json!({"taskId": "x"}));
        assert_eq!(error_of(&answer).1, -32021, "{method}: {answer}");
    }
}

#[test]
fn unknown_and_hostile_task_ids_are_invalid_params() {
    let mut w = serve(&[], takes_tasks());
    let long = "z".repeat(200_000);
    for (id, method, params) in [
        (1, "tasks/get", json!({"taskId": "no-such-task"})),
        (2, "tasks/cancel", json!({"taskId": "no-such-task"})),
        (
            3,
            "tasks/update",
            json!({"taskId": "no-such-task", "inputResponses": {}}),
        ),
        (4, "tasks/get", json!({"taskId": long})),
    ] {
        let answer = w.request(id, method, params);
        let (got, code, message) = error_of(&answer);
        assert_eq!((got, code), (json!(id), -32602), "{method}: {answer}");
        assert!(message.contains("unknown task"), "{message}");
        assert!(
            message.len() < 1000,
            "the id is echoed whole: {} bytes",
            message.len()
        );
    }
    for (id, method, params) in [
        (5, "tasks/get", json!({"taskId": 7})),
        (6, "tasks/cancel", json!({})),
        (
            7,
            "tasks/update",
            json!({"taskId": "x", "inputResponses": null}),
        ),
    ] {
        let answer = w.request(id, method, params);
        let (_, code, message) = error_of(&answer);
        assert_eq!(code, -32602, "{method}: {answer}");
        assert!(message.contains(method), "{message}");
    }
    // The removed v1 methods are not methods here.
    let answer = w.request(8, "tasks/result", json!({"taskId": "x"}));
    assert_eq!(error_of(&answer).1, -32601, "{answer}");
}

#[test]
fn a_cancelled_task_stops_its_tool_and_settles_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("job.pid");
    let mut w = serve(&["--sandbox", "off"], takes_tasks());
    let task = start(
        &mut w,
        1,
        "job_py",
        json!({"seconds": 30, "pidfile": pidfile}),
    );
    assert!(
        common::eventually(20.0, || pidfile.exists()),
        "the tool never started"
    );
    let asked = Instant::now();
    let ack = w.request(2, "tasks/cancel", json!({"taskId": task}));
    assert!(ack["result"].is_object(), "{ack}");
    assert!(ack["result"].get("taskId").is_none(), "{ack}");
    let done = until(&mut w, &task, 15, terminal);
    assert_eq!(done["result"]["status"], "cancelled", "{done}");
    assert!(done["result"].get("result").is_none(), "{done}");
    // The tool's abort signal fired (a kill after the grace period would leave no mark).
    assert!(
        dir.path().join("job.pid.aborted").exists(),
        "the tool never saw its abort signal ({:?} after the cancel)",
        asked.elapsed()
    );
    // Cancelling a finished task is the same empty answer.
    let again = w.request(3, "tasks/cancel", json!({"taskId": task}));
    assert!(again["result"].is_object(), "{again}");
    assert_eq!(get(&mut w, 4, &task)["result"]["status"], "cancelled");
}

#[test]
fn a_task_whose_tool_crashed_is_failed_with_an_error_and_no_result() {
    let mut w = serve(&[], takes_tasks());
    let task = start(&mut w, 1, "job_py", json!({"seconds": 0, "crash": true}));
    let done = until(&mut w, &task, 20, terminal);
    let r = &done["result"];
    assert_eq!(r["status"], "failed", "{done}");
    assert_eq!(r["error"]["code"], -32603, "{done}");
    assert_eq!(r["error"]["data"]["stop"], "crashed", "{done}");
    assert!(r["error"]["message"].as_str().unwrap().len() > 10, "{done}");
    assert!(r.get("result").is_none(), "{done}");
}

#[test]
fn a_result_fetched_after_its_ttl_has_expired_says_so() {
    let mut w = serve(&["--task-ttl", "1"], takes_tasks());
    let task = start(&mut w, 1, "quick_sh", json!({"text": "hi"}));
    let done = until(&mut w, &task, 20, terminal);
    assert_eq!(
        done["result"]["result"]["content"][0]["text"], "hi",
        "{done}"
    );
    // The TTL is --task-ttl, or the tool's timeout (3 s) and the grace period (2 s) when
    // longer: a task lives at least as long as its tool may run.
    assert_eq!(done["result"]["ttlMs"], 5000, "{done}");
    let end = Instant::now() + Duration::from_secs(20);
    let gone = loop {
        let answer = get(&mut w, 2, &task);
        if answer.get("error").is_some() {
            break answer;
        }
        assert!(
            Instant::now() < end,
            "the result was never dropped: {answer}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let (_, code, message) = error_of(&gone);
    assert_eq!(code, -32602, "{gone}");
    assert!(message.contains("expired"), "{message}");
}

#[test]
fn a_task_still_queued_when_its_ttl_passes_is_stopped_and_failed() {
    let mut w = serve(
        &["--task-ttl", "1", "--max-concurrent-calls", "1"],
        takes_tasks(),
    );
    // The one slot: taken for 15 s, once the long task has it.
    let long = start(&mut w, 1, "job_sh", json!({"seconds": 15}));
    until(&mut w, &long, 20, |v| {
        !v["result"]["statusMessage"]
            .as_str()
            .is_some_and(|m| m.starts_with("queued"))
    });
    let queued = start(&mut w, 2, "quick_sh", json!({"text": "late"}));
    let waiting = get(&mut w, 3, &queued);
    assert!(
        waiting["result"]["statusMessage"]
            .as_str()
            .is_some_and(|m| m.starts_with("queued")),
        "{waiting}"
    );
    let done = until(&mut w, &queued, 20, terminal);
    let r = &done["result"];
    assert_eq!(r["status"], "failed", "{done}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(message.contains("task expired"), "{message}");
    assert_eq!(r["error"]["data"]["stop"], "expired", "{done}");
    w.request(4, "tasks/cancel", json!({"taskId": long}));
    let done = until(&mut w, &long, 15, terminal);
    assert_eq!(done["result"]["status"], "cancelled", "{done}");
}

#[test]
fn ten_thousand_task_requests_in_a_burst_are_refused_or_queued_in_bounded_memory() {
    let mut w = serve(
        &["--max-tasks", "1000", "--max-concurrent-calls", "2"],
        takes_tasks(),
    );
    let pid = w.child.id();
    let before = common::hwm_kib(pid);
    let mut burst = Vec::new();
    for id in 1..=10_000 {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "job_sh", "arguments": {"seconds": 30}}});
        writeln!(burst, "{line}").unwrap();
    }
    // One write of 10,000 requests, the answers read as they come.
    w.send_raw(burst.trim_ascii_end());
    let (mut created, mut refused) = (Vec::new(), 0);
    for _ in 0..10_000 {
        let answer = w.answer();
        if let Some(task) = answer["result"]["taskId"].as_str() {
            created.push(task.to_owned());
        } else {
            let (_, code, message) = error_of(&answer);
            assert_eq!(code, -32000, "{answer}");
            assert!(message.contains("--max-tasks"), "{message}");
            refused += 1;
        }
    }
    assert_eq!((created.len(), refused), (1000, 9000));
    // Two run, the rest wait their turn.
    let queued = (0..20)
        .map(|i| get(&mut w, 20_000 + i, &created[999 - i as usize]))
        .filter(|g| {
            g["result"]["statusMessage"]
                .as_str()
                .is_some_and(|m| m.starts_with("queued"))
        })
        .count();
    assert_eq!(queued, 20);
    let grown = common::hwm_kib(pid).saturating_sub(before);
    assert!(
        grown < 100 * 1024,
        "10,000 task requests grew serve by {grown} KiB"
    );
    eprintln!("10,000 task requests grew serve's peak RSS by {grown} KiB");
}

#[test]
fn a_task_that_asks_waits_in_input_required_until_tasks_update_answers() {
    let mut w = serve(&[], json!({"elicitation": {}, "extensions": {TASKS: {}}}));
    let task = start(&mut w, 1, "ask_task", json!({}));
    let waiting = until(&mut w, &task, 20, |v| {
        v["result"]["status"] == "input_required" || terminal(v)
    });
    let r = &waiting["result"];
    assert_eq!(r["status"], "input_required", "{waiting}");
    let requests = r["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1, "{waiting}");
    let (key, request) = requests.iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create", "{waiting}");
    assert_eq!(request["params"]["message"], "Go on?", "{waiting}");
    // An answer to a key that is not open is ignored; the right one resumes the call.
    let ack = w.request(
        2,
        "tasks/update",
        json!({"taskId": task, "inputResponses": {"no-such-key": {}}}),
    );
    assert!(ack["result"].is_object(), "{ack}");
    assert_eq!(get(&mut w, 3, &task)["result"]["status"], "input_required");
    let ack = w.request(
        4,
        "tasks/update",
        json!({"taskId": task, "inputResponses": {key: {"action": "accept", "content": {"confirm": true}}}}),
    );
    assert!(ack["result"].is_object(), "{ack}");
    let done = until(&mut w, &task, 20, terminal);
    assert_eq!(
        done["result"]["result"]["content"][0]["text"], "told yes",
        "{done}"
    );
    // Cancelled while it waits: the question fails at once and the task ends.
    let task = start(&mut w, 5, "ask_task", json!({}));
    until(&mut w, &task, 20, |v| {
        v["result"]["status"] == "input_required"
    });
    w.request(6, "tasks/cancel", json!({"taskId": task}));
    let done = until(&mut w, &task, 20, terminal);
    assert!(
        done["result"]["status"] == "cancelled"
            || done["result"]["result"]["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("not told")),
        "{done}"
    );
}

/// A task's questions obey the rule of a plain call's: a client that did not declare
/// `elicitation` is not asked for an approval (or a confirmation) through `tasks/update`
/// either; the tool that needs one is denied, as its plain call would be.
#[test]
fn a_task_asks_its_client_only_what_the_client_declared() {
    let mut w = serve(&[], takes_tasks());
    let task = start(&mut w, 1, "approve_task", json!({}));
    let done = until(&mut w, &task, 20, |v| {
        v["result"]["status"] == "input_required" || terminal(v)
    });
    assert_eq!(done["result"]["status"], "completed", "{done}");
    let r = &done["result"]["result"];
    assert_eq!(r["isError"], true, "{done}");
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("needs approval") && text.contains("`elicitation`"),
        "{done}"
    );
    assert!(!text.contains("approved and ran"), "{done}");
    let task = start(&mut w, 2, "ask_task", json!({}));
    let done = until(&mut w, &task, 20, |v| {
        v["result"]["status"] == "input_required" || terminal(v)
    });
    let text = done["result"]["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.starts_with("not told") && text.contains("`elicitation`"),
        "{done}"
    );
    // A client that declared it is asked, and its yes runs the tool.
    let mut w = serve(&[], json!({"elicitation": {}, "extensions": {TASKS: {}}}));
    let task = start(&mut w, 1, "approve_task", json!({}));
    let waiting = until(&mut w, &task, 20, |v| {
        v["result"]["status"] == "input_required" || terminal(v)
    });
    assert_eq!(waiting["result"]["status"], "input_required", "{waiting}");
    let ack = w.request(
        2,
        "tasks/update",
        json!({"taskId": task, "inputResponses": {"approval": {"action": "accept", "content": {"approve": true}}}}),
    );
    assert!(ack["result"].is_object(), "{ack}");
    let done = until(&mut w, &task, 20, terminal);
    assert_eq!(
        done["result"]["result"]["content"][0]["text"]
            .as_str()
            .map(str::trim),
        Some("approved and ran"),
        "{done}"
    );
}
