//! `Runtime::start`: a call that runs on while the caller goes on — polled, awaited,
//! cancelled, its progress on the handle, and a dropped handle that stops nothing unless
//! asked.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::sync::Notify;
use toolbind::exec::{ExecCall, ExecFuture, Executor};
use toolbind::{CallOptions, Loader, Progress, Runtime, StopReason, ToolResult};

/// Hang guard of each test.
const GUARD: Duration = Duration::from_secs(30);

/// Sends one progress update, then waits for `release` (answers "done") or for the
/// call's cancellation (answers cancelled), saying which in `ended`.
#[derive(Default)]
struct Gate {
    release: Notify,
    ended: Mutex<Option<&'static str>>,
    started: Notify,
    running: AtomicBool,
}

impl Executor for Gate {
    fn execute<'a>(&'a self, call: ExecCall<'a>) -> ExecFuture<'a> {
        Box::pin(async move {
            if let Some(p) = &call.progress {
                p(Progress::text("halfway").at(1.0, Some(2.0)));
            }
            self.running.store(true, Ordering::SeqCst);
            self.started.notify_one();
            let how = tokio::select! {
                _ = self.release.notified() => "done",
                _ = call.cancel.cancelled() => "cancelled",
            };
            *self.ended.lock().unwrap() = Some(how);
            match how {
                "done" => ToolResult::text("done"),
                _ => ToolResult::stopped(StopReason::Cancelled, "cancelled"),
            }
        })
    }
}

fn runtime(gate: Arc<Gate>) -> Arc<Runtime> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/core/tools");
    let loaded = Loader::new().dir(dir).quiet().load();
    Arc::new(
        Runtime::builder()
            .registry(loaded.registry)
            .executor(gate)
            .build(),
    )
}

async fn started(gate: &Gate) {
    while !gate.running.load(Ordering::SeqCst) {
        gate.started.notified().await;
    }
}

#[tokio::test]
async fn a_started_call_is_polled_its_progress_read_and_its_result_awaited() {
    tokio::time::timeout(GUARD, async {
        let gate = Arc::new(Gate::default());
        let rt = runtime(gate.clone());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let mut h = rt.start(
            "search",
            json!({"query": "rust"}),
            CallOptions::new()
                .id("call_9")
                .progress(move |p| sink.lock().unwrap().push(p.text_content())),
        );
        assert_eq!((h.id(), h.tool()), ("call_9", "search"));
        let p = h.next_progress().await.expect("an update");
        assert_eq!(p.text_content(), "halfway");
        assert_eq!(h.progress().map(|p| p.progress), Some(Some(1.0)));
        // The caller's own sink got it too.
        assert_eq!(*seen.lock().unwrap(), ["halfway"]);
        started(&gate).await;
        assert!(!h.is_done() && h.try_result().is_none());
        gate.release.notify_one();
        let r = h.result().await;
        assert_eq!(r.text_content(), "done");
        assert!(h.is_done());
        assert_eq!(h.try_result(), Some(r.clone()));
        assert_eq!(h.result().await, r, "the result again");
        assert_eq!(h.next_progress().await, None, "no update after the end");
    })
    .await
    .expect("hung");
}

#[tokio::test]
async fn cancel_stops_the_call_and_a_dropped_handle_stops_nothing_unless_asked() {
    tokio::time::timeout(GUARD, async {
        // cancel()
        let gate = Arc::new(Gate::default());
        let h = runtime(gate.clone()).start("search", json!({"query": "a"}), CallOptions::new());
        started(&gate).await;
        h.cancel();
        assert_eq!(h.result().await.stop, StopReason::Cancelled);
        assert_eq!(*gate.ended.lock().unwrap(), Some("cancelled"));

        // Dropped: the call runs on to its end.
        let gate = Arc::new(Gate::default());
        let h = runtime(gate.clone()).start("search", json!({"query": "b"}), CallOptions::new());
        started(&gate).await;
        drop(h);
        gate.release.notify_one();
        while gate.ended.lock().unwrap().is_none() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(*gate.ended.lock().unwrap(), Some("done"));

        // Dropped with cancel_on_drop: cancelled.
        let gate = Arc::new(Gate::default());
        let h = runtime(gate.clone())
            .start("search", json!({"query": "c"}), CallOptions::new())
            .cancel_on_drop(true);
        started(&gate).await;
        drop(h);
        while gate.ended.lock().unwrap().is_none() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(*gate.ended.lock().unwrap(), Some("cancelled"));
    })
    .await
    .expect("hung");
}

#[test]
fn outside_a_tokio_runtime_the_handle_says_why_nothing_ran() {
    let gate = Arc::new(Gate::default());
    let h = runtime(gate.clone()).start("search", json!({"query": "x"}), CallOptions::new());
    let r = h.try_result().expect("done at once");
    assert_eq!(r.stop, StopReason::Crashed);
    assert!(r.text_content().contains("needs a tokio runtime"), "{r:?}");
    assert!(!gate.running.load(Ordering::SeqCst));
}

#[tokio::test]
async fn bad_arguments_end_the_started_call_with_the_usual_result() {
    let gate = Arc::new(Gate::default());
    let h = runtime(gate.clone()).start("search", json!({}), CallOptions::new());
    let r = tokio::time::timeout(GUARD, h.result()).await.expect("hung");
    assert_eq!(r.stop, StopReason::BadArguments);
    assert!(!gate.running.load(Ordering::SeqCst), "nothing ran");
}
