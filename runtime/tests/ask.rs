//! Tools that ask during their call (`execute`'s fifth argument `ctx`), real node and
//! python tools on the real executor: confirm, elicit (checked against its flat form, a
//! nested form refused, an answer that breaks the form refused), sample, roots, notify;
//! no host, a host that does not answer a kind, one that never answers (the ask timeout),
//! a wait that does not count against the call's timeout, a call cancelled while it
//! waits, the ninth open question, and a flood of notices that must not outrun the call's
//! timeout or its cancellation.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolbind::host::{
    Answer, ApprovalRequest, Asker, ConfirmRequest, Decision, ElicitAction, ElicitRequest,
    Elicited, Host, Notice, Refusal, Root, SampleRequest,
};
use toolbind::runtime::RuntimeConfig;
use toolbind::{CallOptions, CancelToken, Loader, Runtime, StopReason, ToolResult};

const GUARD: Duration = Duration::from_secs(60);

/// Answers from a script keyed by the question's message, and records notices.
#[derive(Default)]
struct Scripted {
    notices: Mutex<Vec<(String, String)>>,
}

impl Host for Scripted {
    fn approve(&self, _request: ApprovalRequest) -> Answer<Decision> {
        Box::pin(async { Decision::Approve })
    }

    fn confirm(&self, request: ConfirmRequest) -> Answer<Result<bool, Refusal>> {
        Box::pin(async move {
            match request.message.as_str() {
                "never" => std::future::pending().await,
                "late" => {
                    tokio::time::sleep(Duration::from_millis(1500)).await;
                    Ok(true)
                }
                "no" => Ok(false),
                "refuse" => Err("the user is away".into()),
                _ => Ok(true),
            }
        })
    }

    fn elicit(&self, request: ElicitRequest) -> Answer<Result<Elicited, Refusal>> {
        Box::pin(async move {
            let mut content = serde_json::Map::new();
            match request.message.as_str() {
                "decline" => return Ok(Elicited::without_content(ElicitAction::Decline)),
                "bad" => {
                    content.insert("name".into(), json!(42));
                }
                _ => {
                    content.insert("name".into(), json!("Ada"));
                }
            }
            Ok(Elicited::accept(content))
        })
    }

    fn sample(&self, request: SampleRequest) -> Answer<Result<Value, Refusal>> {
        Box::pin(async move {
            let asked = request.params["messages"][0]["content"]["text"].clone();
            Ok(
                json!({"role": "assistant", "content": {"type": "text", "text": format!("you said {asked}")}, "model": "scripted"}),
            )
        })
    }

    fn roots(&self, _asker: Asker) -> Answer<Result<Vec<Root>, Refusal>> {
        Box::pin(async { Ok(vec![Root::new("file:///work", Some("work".into()))]) })
    }

    fn notify(&self, notice: Notice) {
        self.notices
            .lock()
            .unwrap()
            .push((notice.level, notice.text));
    }
}

/// A host that implements nothing but approval.
struct Minimal;

impl Host for Minimal {
    fn approve(&self, _request: ApprovalRequest) -> Answer<Decision> {
        Box::pin(async { Decision::Approve })
    }
}

fn registry() -> toolbind::Registry {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ask/tools");
    let loaded = Loader::new().dir(dir).quiet().load();
    assert_eq!(loaded.registry.len(), 2, "{:?}", loaded.warnings);
    loaded.registry
}

fn runtime(host: Option<Arc<Scripted>>, ask_timeout: Duration) -> Runtime {
    let mut b = Runtime::builder()
        .registry(registry())
        .config(RuntimeConfig::default().ask_timeout(ask_timeout));
    if let Some(h) = host {
        b = b.host(Shared(h));
    }
    b.build()
}

/// An `Arc<Scripted>` as a host, so the test keeps a handle on it.
struct Shared(Arc<Scripted>);

impl Host for Shared {
    fn approve(&self, r: ApprovalRequest) -> Answer<Decision> {
        self.0.approve(r)
    }
    fn confirm(&self, r: ConfirmRequest) -> Answer<Result<bool, Refusal>> {
        self.0.confirm(r)
    }
    fn elicit(&self, r: ElicitRequest) -> Answer<Result<Elicited, Refusal>> {
        self.0.elicit(r)
    }
    fn sample(&self, r: SampleRequest) -> Answer<Result<Value, Refusal>> {
        self.0.sample(r)
    }
    fn roots(&self, a: Asker) -> Answer<Result<Vec<Root>, Refusal>> {
        self.0.roots(a)
    }
    fn notify(&self, n: Notice) {
        self.0.notify(n)
    }
}

async fn ask(rt: &Runtime, tool: &str, what: &str, message: Option<&str>) -> ToolResult {
    let mut args = json!({"what": what});
    if let Some(m) = message {
        args["message"] = json!(m);
    }
    tokio::time::timeout(GUARD, rt.call(tool, args, CallOptions::new()))
        .await
        .expect("the call hung")
}

fn text(r: &ToolResult) -> String {
    assert_eq!(r.stop, StopReason::Completed, "{r:?}");
    r.text_content()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_tool_asks_and_gets_answers() {
    let host = Arc::new(Scripted::default());
    let rt = runtime(Some(host.clone()), Duration::from_secs(10));
    assert_eq!(
        text(&ask(&rt, "ask_ts", "confirm", Some("yes")).await),
        "true"
    );
    assert_eq!(
        text(&ask(&rt, "ask_ts", "confirm", Some("no")).await),
        "false"
    );
    assert_eq!(
        text(&ask(&rt, "ask_ts", "confirm", Some("refuse")).await),
        "rejected: the user is away"
    );
    assert_eq!(
        text(&ask(&rt, "ask_ts", "elicit", Some("who?")).await),
        r#"{"action":"accept","content":{"name":"Ada"}}"#
    );
    assert_eq!(
        text(&ask(&rt, "ask_ts", "elicit", Some("decline")).await),
        r#"{"action":"decline"}"#
    );
    let bad = text(&ask(&rt, "ask_ts", "elicit", Some("bad")).await);
    assert!(
        bad.contains("does not fit the form: `name` must be a \"string\""),
        "{bad}"
    );
    let nested = text(&ask(&rt, "ask_ts", "nested", None).await);
    assert!(nested.contains("flat object"), "{nested}");
    let sampled = text(&ask(&rt, "ask_ts", "sample", Some("hi")).await);
    assert!(sampled.contains(r#""text":"you said \"hi\"""#), "{sampled}");
    assert_eq!(
        text(&ask(&rt, "ask_ts", "roots", None).await),
        r#"[{"uri":"file:///work","name":"work"}]"#
    );
    assert_eq!(
        text(&ask(&rt, "ask_ts", "notify", Some("careful")).await),
        r#""notified""#
    );
    assert_eq!(
        host.notices.lock().unwrap().clone(),
        vec![("warning".to_owned(), "careful".to_owned())]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_python_execute_waits_for_its_answers() {
    let host = Arc::new(Scripted::default());
    let rt = runtime(Some(host.clone()), Duration::from_secs(10));
    assert_eq!(text(&ask(&rt, "ask_py", "confirm", None).await), "true");
    assert_eq!(
        text(&ask(&rt, "ask_py", "elicit", None).await),
        r#"{"action": "accept", "content": {"name": "Ada"}}"#
    );
    assert_eq!(
        host.notices.lock().unwrap().last().cloned(),
        Some(("info".to_owned(), "asked from python".to_owned()))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_answer_the_tool_is_told_why() {
    // No host at all.
    let rt = runtime(None, Duration::from_secs(10));
    let r = text(&ask(&rt, "ask_ts", "confirm", None).await);
    assert!(r.contains("no one to ask"), "{r}");
    // A host that answers approvals only.
    let rt = Runtime::builder()
        .registry(registry())
        .host(Minimal)
        .build();
    let r = text(&ask(&rt, "ask_ts", "roots", None).await);
    assert!(r.contains("does not answer `ctx.roots`"), "{r}");
    // A host that never answers: the ask timeout.
    let host = Arc::new(Scripted::default());
    let rt = runtime(Some(host), Duration::from_millis(300));
    let r = text(&ask(&rt, "ask_ts", "confirm", Some("never")).await);
    assert!(r.contains("got no answer within 0.3 s"), "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wait_for_an_answer_does_not_count_against_the_timeout() {
    // ask_ts has a 1-second timeout; the answer takes 1.5 s, then the tool works 0.5 s.
    let rt = runtime(Some(Arc::default()), Duration::from_secs(10));
    assert_eq!(
        text(&ask(&rt, "ask_ts", "slow", Some("late")).await),
        "true"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_cancelled_while_it_waits_is_cancelled() {
    let rt = runtime(Some(Arc::default()), Duration::from_secs(30));
    let cancel = CancelToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        stop.cancel();
    });
    let r = tokio::time::timeout(
        GUARD,
        rt.call(
            "ask_ts",
            json!({"what": "confirm", "message": "never"}),
            CallOptions::new().cancel(cancel),
        ),
    )
    .await
    .unwrap();
    // The abort rejected the open question at once; this tool catches it and says so (a
    // tool that lets it throw ends cancelled).
    assert_eq!(
        r.text_content(),
        "rejected: the call was cancelled",
        "{r:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_most_eight_questions_are_open_at_once() {
    let rt = runtime(Some(Arc::default()), Duration::from_secs(10));
    let r = text(&ask(&rt, "ask_ts", "many", None).await);
    let answers: Vec<String> = serde_json::from_str(&r).unwrap();
    assert_eq!(answers.iter().filter(|a| *a == "ok").count(), 8, "{r}");
    assert!(
        answers
            .iter()
            .any(|a| a.contains("at most 8 questions may be open at once")),
        "{r}"
    );
}

/// A host whose notices take a while, as a terminal that shows each does.
struct SlowNotices;

impl Host for SlowNotices {
    fn approve(&self, _request: ApprovalRequest) -> Answer<Decision> {
        Box::pin(async { Decision::Approve })
    }
    fn notify(&self, _n: Notice) {
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_flooding_notices_still_times_out() {
    // The tool writes notices faster than the host takes them, so one is always waiting
    // for the call: its timeout must still come.
    let rt = Runtime::builder()
        .registry(registry())
        .host(SlowNotices)
        .build();
    let opts = CallOptions::new().timeout(Duration::from_secs(1));
    let r = tokio::time::timeout(GUARD, rt.call("ask_py", json!({"what": "flood"}), opts))
        .await
        .expect("a flood of notices outran the call's timeout");
    assert!(matches!(r.stop, StopReason::Timeout { .. }), "{r:?}");

    // And its cancellation.
    let cancel = CancelToken::new();
    let opts = CallOptions::new()
        .timeout(Duration::from_secs(30))
        .cancel(cancel.clone());
    let stop = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        stop.cancel();
    });
    let r = tokio::time::timeout(GUARD, rt.call("ask_py", json!({"what": "flood"}), opts))
        .await
        .expect("a flood of notices outran the call's cancellation");
    assert_eq!(r.stop, StopReason::Cancelled, "{r:?}");
}
