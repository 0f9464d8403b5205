//! The span tree a set of real calls makes, every span and event with its parent and
//! fields, against the one recorded before the call's span stopped being entered across
//! a warm call's awaits (issue 58: `tests/fixtures/telemetry/span-tree.txt`, written at
//! 667faeb). What an exporter sees of a call must not change with how cheaply it is had.
//!
//! `UPDATE_EXPECT=1 cargo test -p toolbind --test telemetry span_tree` writes the file
//! anew; a diff in it is a change of what users' traces show.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolbind::exec::{ExecCall, ExecConfig, ExecFuture, Executor, SubprocessExecutor};
use toolbind::host::{Answer, ApprovalRequest, Decision, Host, Notice};
use toolbind::sandbox::SandboxPolicy;
use toolbind::{CallOptions, Loader, Runtime, ToolResult};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// One line per span (at its creation, its fields completed at its close) and per event,
/// indented by depth, in the order they happened; and for each `execute_tool` span, how
/// long before its close it was last left.
#[derive(Clone, Default)]
struct Tree(Arc<Mutex<Vec<Node>>>, Arc<Mutex<Exits>>);

/// When each span was last left, and for each `execute_tool` span closed after being
/// entered: its call id and the time from its last exit to its close.
#[derive(Default)]
struct Exits {
    last: std::collections::HashMap<u64, std::time::Instant>,
    gaps: Vec<(String, std::time::Duration)>,
}

struct Node {
    /// The span's id (`None`: an event).
    id: Option<u64>,
    depth: usize,
    text: String,
    fields: Vec<(String, String)>,
}

#[derive(Default)]
struct Fields(Vec<(String, String)>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.set(field.name(), value.to_owned());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.set(field.name(), format!("{value:?}"));
    }
}

impl Fields {
    fn set(&mut self, name: &str, value: String) {
        // A tool's description is long and says nothing of the tree.
        let value = if name == "gen_ai.tool.description" {
            format!("<{} chars>", value.chars().count())
        } else {
            value
        };
        // A field recorded again keeps its history: an exporter sends each recording.
        match self.0.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => {
                slot.1.push_str(" then ");
                slot.1.push_str(&value);
            }
            None => self.0.push((name.to_owned(), value)),
        }
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Tree {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let depth = ctx.span(id).map_or(0, |s| s.scope().skip(1).count());
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        let meta = attrs.metadata();
        self.0.lock().unwrap().push(Node {
            id: Some(id.into_u64()),
            depth,
            text: format!("span {} [{} {}]", meta.name(), meta.level(), meta.target()),
            fields: fields.0,
        });
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        let mut nodes = self.0.lock().unwrap();
        if let Some(node) = nodes.iter_mut().rev().find(|n| n.id == Some(id.into_u64())) {
            let mut fields = Fields(std::mem::take(&mut node.fields));
            values.record(&mut fields);
            node.fields = fields.0;
        }
    }

    fn on_exit(&self, id: &Id, _: Context<'_, S>) {
        let mut exits = self.1.lock().unwrap();
        exits.last.insert(id.into_u64(), std::time::Instant::now());
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let mut exits = self.1.lock().unwrap();
        let Some(left) = exits.last.remove(&id.into_u64()) else {
            return;
        };
        if ctx.span(&id).is_some_and(|s| s.name() == "execute_tool") {
            let nodes = self.0.lock().unwrap();
            let call = nodes
                .iter()
                .rev()
                .find(|n| n.id == Some(id.into_u64()))
                .and_then(|n| n.fields.iter().find(|(k, _)| k == "gen_ai.tool.call.id"))
                .map_or_else(String::new, |(_, v)| v.clone());
            exits.gaps.push((call, left.elapsed()));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let depth = ctx.event_scope(event).map_or(0, |s| s.count());
        let mut fields = Fields::default();
        event.record(&mut fields);
        let meta = event.metadata();
        self.0.lock().unwrap().push(Node {
            id: None,
            depth,
            text: format!("event [{} {}]", meta.level(), meta.target()),
            fields: fields.0,
        });
    }
}

impl Tree {
    fn render(&self) -> String {
        let mut out = String::new();
        for node in self.0.lock().unwrap().iter() {
            let _ = write!(out, "{}{}", "  ".repeat(node.depth), node.text);
            let mut fields: Vec<_> = node.fields.iter().collect();
            fields.sort();
            for (name, value) in fields {
                let _ = write!(out, " {name}={value}");
            }
            out.push('\n');
        }
        out
    }
}

/// Approves every call, and says so in a span and an event of its own, as a host that
/// traces its prompts does; logs each notice.
struct TracingHost;

impl Host for TracingHost {
    fn approve(&self, request: ApprovalRequest) -> Answer<Decision> {
        let span = tracing::info_span!(target: "host", "host_approve", tool = request.tool.name());
        let _in = span.enter();
        tracing::info!(target: "host", "approved");
        Box::pin(std::future::ready(Decision::Approve))
    }

    fn notify(&self, notice: Notice) {
        tracing::info!(target: "host", text = notice.text.as_str(), "notice");
    }
}

/// Answers every call in-process, in a span of its own with an event, after one yield (an
/// executor of a user's, whose spans are the call's children).
struct SpanningExecutor;

impl Executor for SpanningExecutor {
    fn execute<'a>(&'a self, call: ExecCall<'a>) -> ExecFuture<'a> {
        tracing::info!(target: "custom", "execute called");
        Box::pin(async move {
            tokio::task::yield_now().await;
            let span = tracing::info_span!(target: "custom", "custom_exec");
            let _in = span.enter();
            tracing::info!(target: "custom", tool = call.tool.name(), "ran");
            ToolResult::text("done")
        })
    }
}

const TOOLS: &[(&str, &str, &str, &str)] = &[
    (
        "echo_node",
        "typescript",
        "index.ts",
        "export async function execute(id: string, params: any, signal: any, onUpdate: any, ctx: any) {\n  ctx.notify(\"hello from node\");\n  onUpdate(\"half way\");\n  return { content: [{ type: \"text\", text: JSON.stringify(params) }] };\n}\n",
    ),
    (
        "echo_py",
        "python",
        "index.py",
        "import json, time\n\ndef execute(tool_call_id, params, signal, on_update):\n    on_update(\"half way\")\n    time.sleep(0.1)\n    return json.dumps(params)\n",
    ),
    (
        "echo_sh",
        "bash",
        "index.sh",
        "params=$(cat)\necho \"step\" >&3\nprintf 'got %s\\n' \"$params\"\n",
    ),
    (
        "shaped",
        "typescript",
        "index.ts",
        "export function prepareArguments(args: any) {\n  return args && args.q !== undefined ? { text: args.q } : args;\n}\nexport async function execute(id: string, params: any) {\n  return { content: [{ type: \"text\", text: params.text }] };\n}\n",
    ),
];

fn tool_md(name: &str, language: &str, extra: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: A fixture of the span-tree test ({language}).\nversion: 1\nlanguage: {language}\n{extra}inputs:\n  text:\n    type: string\n    description: Any text.\n    optional: true\n---\n# {name}\n"
    )
}

fn tools(root: &Path) -> toolbind::Registry {
    for (name, language, entry, body) in TOOLS {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("TOOL.md"), tool_md(name, language, "")).unwrap();
        std::fs::write(dir.join(entry), body).unwrap();
    }
    let dir = root.join("guarded");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("TOOL.md"),
        tool_md("guarded", "bash", "approval: always\n"),
    )
    .unwrap();
    std::fs::write(dir.join("index.sh"), "sleep 0.1\ncat\n").unwrap();
    let loaded = Loader::new().dir(root).quiet().load();
    assert_eq!(loaded.registry.len(), 5, "{:?}", loaded.warnings);
    loaded.registry
}

/// The calls, one after another, each with its id, a progress sink and a log sink that
/// log what they get.
async fn calls(runtime: &Runtime, calls: &[(&str, Value)]) {
    for (i, (name, args)) in calls.iter().enumerate() {
        let opts = CallOptions::new()
            .id(format!("id-{i}-{name}"))
            .progress(|_| tracing::info!(target: "sink", "progress"))
            .log(|_| tracing::info!(target: "sink", "log line"));
        let r = tokio::time::timeout(
            std::time::Duration::from_secs(60),
            runtime.call(name, args.clone(), opts),
        )
        .await
        .expect("the call hung");
        tracing::info!(target: "test", tool = *name, is_error = r.is_error, "returned");
    }
}

#[test]
fn the_span_tree_of_real_calls_is_the_one_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let registry = tools(&tmp.path().join("tools"));
    let tree = Tree::default();
    let subscriber = tracing_subscriber::registry().with(tree.clone());
    tracing::subscriber::with_default(subscriber, || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let exec = SubprocessExecutor::new(
                ExecConfig::default()
                    .sandbox(SandboxPolicy::off())
                    .cache_dir(tmp.path().join("cache")),
            );
            let runtime = Arc::new(
                Runtime::builder()
                    .registry(registry.clone())
                    .executor(Arc::new(exec))
                    .host(TracingHost)
                    .build(),
            );
            let outer = tracing::info_span!(target: "test", "agent_turn");
            let turn = async {
                calls(
                    &runtime,
                    &[
                        ("echo_node", json!({"text": "a"})),
                        ("echo_node", json!({"text": "b"})),
                        ("echo_py", json!({"text": "c"})),
                        ("echo_sh", json!({"text": "d"})),
                        ("shaped", json!({"q": "old shape"})),
                        ("guarded", json!({"text": "e"})),
                        ("echo_py", json!({"text": 7})),
                        ("nope", json!({})),
                    ],
                )
                .await;
                // A call started in the background is still the turn's.
                let handle = runtime.start(
                    "echo_py",
                    json!({"text": "f"}),
                    CallOptions::new().id("id-started"),
                );
                let r = handle.result().await;
                tracing::info!(target: "test", is_error = r.is_error, "started call returned");
            };
            tracing::Instrument::instrument(turn, outer).await;
            // An executor of the user's: its spans and events stay the call's.
            let custom = Runtime::builder()
                .registry(registry)
                .executor(Arc::new(SpanningExecutor))
                .build();
            calls(&custom, &[("echo_py", json!({"text": "g"}))]).await;
        });
    });
    // An OpenTelemetry layer ends a span at its last exit: every call's span is left last
    // as the call ends, not when its progress or its approval was told (the python tool and
    // the approved bash tool work 100 ms after those).
    let exits = tree.1.lock().unwrap();
    assert!(exits.gaps.len() >= 10, "{:?}", exits.gaps);
    for (call, gap) in &exits.gaps {
        assert!(
            *gap < std::time::Duration::from_millis(50),
            "the span of call `{call}` was last left {gap:?} before it closed: an exporter would end it early"
        );
    }
    drop(exits);
    let got = tree.render();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/telemetry/span-tree.txt");
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).expect("the recorded tree");
    if got != want {
        let diff: Vec<String> = want
            .lines()
            .zip(got.lines())
            .enumerate()
            .filter(|(_, (w, g))| w != g)
            .take(5)
            .map(|(i, (w, g))| format!("line {}:\n  recorded: {w}\n  now:      {g}", i + 1))
            .collect();
        panic!(
            "the span tree changed ({} lines recorded, {} now):\n{}\n\nnow:\n{got}",
            want.lines().count(),
            got.lines().count(),
            diff.join("\n")
        );
    }
}
