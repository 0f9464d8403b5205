//! A call the server runs as a task, as MCP 2025-11-25 has it (the flavour the TypeScript
//! SDK serves; `task.rs` has the 2026-07-28 extension): `tools/call` carries
//! `task: {ttl}`, the server answers with `{task: {taskId, status, pollInterval}}`,
//! toolbind polls `tasks/get` at that interval (each new `statusMessage` is the call's
//! progress), and once the task wants input or has ended it asks `tasks/result`, which the
//! server holds open while it sends the task's questions as requests of its own (answered
//! by the call's host: `questions.rs`) and then answers with the tool's result. The call's
//! cancel or timeout sends `tasks/cancel` (`legacy_follow.rs`).
//!
//! rmcp 3.11 models only the 2026-07-28 shapes: these requests go out as `CustomRequest`s
//! and their answers are read as JSON. It also drops a tool's `execution.taskSupport` from
//! `tools/list`, so toolbind cannot see which tools want a task before calling them: a
//! call is sent plainly, and when the server refuses it for want of a task (JSON-RPC
//! -32601, as the specification says, or an error in the SDK's words: "requires task
//! augmentation", "requires task mode") it is sent again once as a task, and that tool's
//! later calls on the connection ask for one at once. The SDK refuses before the tool
//! runs, so the retry does not run anything twice there; a server that ran the tool and
//! then refused in those words would. A tool whose support is `optional` is called
//! plainly (the server then runs it as it would any call).

use super::*;
use rmcp::model::CustomRequest;

/// The protocol revision whose tasks this file follows.
pub(super) const LEGACY_TASKS: &str = "2025-11-25";

/// The `_meta` key a server puts on the requests it makes for a task.
pub(super) const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// How long past the call's end the server is asked to keep the task, and the longest
/// time it is asked to keep one.
const TTL_MARGIN: Duration = Duration::from_secs(60);
const MAX_TTL: Duration = Duration::from_secs(24 * 3600);

/// A task as the server last described it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct LegacyTask {
    pub(super) id: String,
    pub(super) status: String,
    pub(super) message: Option<String>,
    pub(super) poll: Option<Duration>,
}

impl LegacyTask {
    /// A task from `{taskId, status, …}` (a `tasks/get` answer), or from the same nested
    /// under `task` (a `CreateTaskResult`).
    pub(super) fn of(v: &Value) -> Option<LegacyTask> {
        let t = match v.get("task") {
            Some(t) if t.is_object() => t,
            _ => v,
        };
        let id = t.get("taskId")?.as_str()?.to_owned();
        let status = t.get("status")?.as_str()?.to_owned();
        let poll = t
            .get("pollInterval")
            .or_else(|| t.get("pollIntervalMs"))
            .and_then(Value::as_u64)
            .map(Duration::from_millis);
        let message = t
            .get("statusMessage")
            .and_then(Value::as_str)
            .map(str::to_owned);
        Some(LegacyTask {
            id,
            status,
            message,
            poll,
        })
    }

    /// The task in a server's answer, whichever of rmcp's results it was decoded into
    /// (`tasks/get` for a working task fits rmcp's own `GetTaskResult`).
    pub(super) fn of_result(r: &ServerResult) -> Option<LegacyTask> {
        match r {
            ServerResult::CustomResult(c) => LegacyTask::of(&c.0),
            other => LegacyTask::of(&serde_json::to_value(other).ok()?),
        }
    }
}

/// Whether a server refused a plain `tools/call` because the tool runs only as a task:
/// -32601 (the specification's answer, which a server gives before running anything), or
/// another code with the words of a server that refuses for want of a task before the
/// tool runs (the TypeScript SDK's example: -32603 "Tool confirm_delete requires task
/// mode"). A tool's own failure that happens to mention a task is not taken for one.
pub(super) fn wants_task(e: &rmcp::model::ErrorData) -> bool {
    e.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND || says_task_required(&e.message)
}

/// Whether a tool's error result says the tool runs only as a task (the TypeScript SDK's
/// `McpServer` puts its -32601 in an `isError` result: "MCP error -32601: Tool slow
/// requires task augmentation"). Both the code and the words must be there: a tool whose
/// own error says "requires task …" ran, and is not sent again.
pub(super) fn result_wants_task(r: &CallToolResult) -> bool {
    r.is_error == Some(true)
        && r.content
            .first()
            .and_then(|c| c.as_text())
            .is_some_and(|t| t.text.contains("-32601") && says_task_required(&t.text))
}

/// The SDKs' words for "this tool runs only as a task": "requires task augmentation"
/// (`McpServer`), "requires task mode" (its example), "requires task-based execution" (its
/// client).
fn says_task_required(text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    [
        "requires task augmentation",
        "requires task mode",
        "requires task-based execution",
    ]
    .iter()
    .any(|w| text.contains(w))
}

/// `tools/call` `params` asked as a task the server keeps for `lasts` (the longest the
/// call may last: its timeout and the time it may stand still for questions) and a minute
/// after, at most a day.
pub(super) fn as_task(params: CallToolRequestParams, lasts: Duration) -> ClientRequest {
    let mut v = serde_json::to_value(params).unwrap_or_default();
    let ttl = lasts.saturating_add(TTL_MARGIN).min(MAX_TTL);
    let ttl = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
    v["task"] = serde_json::json!({ "ttl": ttl });
    ClientRequest::CustomRequest(CustomRequest::new("tools/call", Some(v)))
}

impl Live {
    /// Whether calls of `tool` go as tasks.
    pub(super) fn needs_task(&self, tool: &str) -> bool {
        self.protocol == LEGACY_TASKS && self.needs_task.locked().contains(tool)
    }

    /// Marks `tool` as run only as a task.
    pub(super) fn mark_needs_task(&self, tool: &str) {
        self.needs_task.locked().insert(tool.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_is_read_nested_or_flat_with_its_interval() {
        let created = serde_json::json!({"task": {"taskId": "t1", "status": "working",
            "ttl": 60000, "createdAt": "x", "lastUpdatedAt": "x", "pollInterval": 200}});
        let t = LegacyTask::of(&created).unwrap();
        assert_eq!(t.id, "t1");
        assert_eq!(t.status, "working");
        assert_eq!(t.poll, Some(Duration::from_millis(200)));
        let got = serde_json::json!({"taskId": "t1", "status": "input_required",
            "statusMessage": "step 1 of 3", "ttl": null});
        let t = LegacyTask::of(&got).unwrap();
        assert_eq!(t.message.as_deref(), Some("step 1 of 3"));
        assert_eq!(t.poll, None);
        // Not a task: no id, or a status that is not a string.
        assert!(LegacyTask::of(&serde_json::json!({"content": []})).is_none());
        assert!(LegacyTask::of(&serde_json::json!({"taskId": "t", "status": 3})).is_none());
    }

    #[test]
    fn refusals_for_want_of_a_task_are_told_from_other_errors() {
        use rmcp::model::{ErrorCode, ErrorData};
        let spec = ErrorData::new(ErrorCode::METHOD_NOT_FOUND, "Method not found", None);
        assert!(wants_task(&spec));
        let example = ErrorData::new(
            ErrorCode::INTERNAL_ERROR,
            "Tool confirm_delete requires task mode",
            None,
        );
        assert!(wants_task(&example));
        let other = ErrorData::new(ErrorCode::INTERNAL_ERROR, "disk full", None);
        assert!(!wants_task(&other));
        // A tool's own failure that mentions a task ran, and is not sent again.
        let ran = ErrorData::new(
            ErrorCode::INTERNAL_ERROR,
            "this step requires task owner approval",
            None,
        );
        assert!(!wants_task(&ran));
        let ts = CallToolResult::error(vec![rmcp::model::ContentBlock::text(
            "MCP error -32601: Tool slow requires task augmentation (taskSupport: 'required')",
        )]);
        assert!(result_wants_task(&ts));
        let own = CallToolResult::error(vec![rmcp::model::ContentBlock::text(
            "this step requires task id 7 to be closed first",
        )]);
        assert!(!result_wants_task(&own));
        let plain = CallToolResult::error(vec![rmcp::model::ContentBlock::text("no such file")]);
        assert!(!result_wants_task(&plain));
        let ok = CallToolResult::success(vec![rmcp::model::ContentBlock::text("requires task")]);
        assert!(!result_wants_task(&ok));
    }

    #[test]
    fn a_task_call_asks_the_server_to_keep_it_past_the_calls_timeout() {
        let params = CallToolRequestParams::new("slow");
        let ClientRequest::CustomRequest(r) = as_task(params, Duration::from_secs(30)) else {
            panic!("not a custom request");
        };
        assert_eq!(r.method, "tools/call");
        let p = r.params.unwrap();
        assert_eq!(p["name"], "slow");
        assert_eq!(p["task"]["ttl"], 90_000);
        let ClientRequest::CustomRequest(r) = as_task(
            CallToolRequestParams::new("slow"),
            Duration::from_secs(365 * 24 * 3600),
        ) else {
            panic!("not a custom request");
        };
        assert_eq!(r.params.unwrap()["task"]["ttl"], 24 * 3600 * 1000);
    }
}
