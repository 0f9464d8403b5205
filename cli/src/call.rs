//! `toolbind call`: validate and run one tool, with live progress and Ctrl-C cancellation.

use crate::lock::Locked;
use std::io::{IsTerminal, Read, Write};
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Map, Value, json};
use tokio::signal::unix::{SignalKind, signal};
use toolbind::exec::{ExecConfig, SubprocessExecutor};
use toolbind::host::{
    Answer, ApprovalRequest, Asker as Who, ConfirmRequest, Decision, ElicitAction, ElicitRequest,
    Elicited, Host, Notice, Refusal, Root,
};
use toolbind::result::Limit;
use toolbind::sandbox::SandboxLimits;
use toolbind::{CallOptions, CancelToken, Content, Progress, Runtime, StopReason, ToolResult};
use toolbind_codegen::model::WorkerMode;

use crate::args::CallArgs;
use crate::exit::{Code, Failure, Outcome};
use crate::tools;

pub fn run(args: CallArgs) -> Outcome {
    args.sandbox.check()?;
    let call_args = parse_args(args.args.as_deref())?;
    let dirs = tools::absolute(tools::dirs_beside(&args.dirs, &args.mcp))?;
    let loaded = tools::load(&dirs);
    if loaded.registry.get(&args.name).is_none() {
        // A skipped folder may be the tool the user meant: say why it was skipped.
        for w in &loaded.warnings {
            eprintln!("warning: {}", printable(&w.to_string()));
        }
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::failed(format!("cannot start the async runtime: {e}")))?;
    let outcome = rt.block_on(call(args, call_args, loaded.registry));
    // A killed tool may leave a blocked reader behind; do not wait for it.
    rt.shutdown_timeout(Duration::from_millis(500));
    outcome
}

/// `--args`: JSON text, `-` for stdin, absent for `{}`.
fn parse_args(args: Option<&str>) -> Result<Value, Failure> {
    let (text, source) = match args {
        None => return Ok(Value::Object(Default::default())),
        Some("-") => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| Failure::usage(format!("cannot read --args from stdin: {e}")))?;
            (s, "the JSON on stdin (--args -)")
        }
        Some(s) => (s.to_owned(), "--args"),
    };
    serde_json::from_str(&text).map_err(|e| {
        Failure::usage(format!(
            "{source} is not valid JSON: {e}; pass an object such as --args '{{\"url\": \"https://example.com\"}}'"
        ))
    })
}

/// The runtime a `toolbind call` runs in: a one-shot executor (one call per process:
/// nothing to keep warm for), and the `--mcp-config` servers, connected first.
async fn runtime_for(
    args: &CallArgs,
    registry: toolbind::Registry,
) -> Result<(Arc<SubprocessExecutor>, Runtime), Failure> {
    let executor = Arc::new(SubprocessExecutor::new(
        ExecConfig::default()
            .worker_mode(WorkerMode::OneShot)
            .sandbox(args.sandbox.policy())
            .spill_dir(args.spill.dir()),
    ));
    let mut builder = Runtime::builder()
        .registry(registry)
        .executor(executor.clone())
        .spill_dir(args.spill.dir());
    if let Some(t) = args.ask_timeout {
        builder = builder.ask_timeout(t);
    }
    for server in crate::tools::mcp_servers(&args.mcp, &args.sandbox)? {
        builder = builder.mcp_server(server);
    }
    let runtime = if args.mcp.file.is_some() {
        // The call waits for the server of its tool, not for the others.
        builder
            .mcp_wait_for_tool(&args.name)
            .mcp_start_wait(args.mcp.start_wait())
            .connect()
            .await
            .map_err(|e| Failure::failed(e.to_string()))?
    } else {
        builder.build()
    };
    Ok((executor, runtime))
}

async fn call(args: CallArgs, call_args: Value, registry: toolbind::Registry) -> Outcome {
    let (executor, runtime) = runtime_for(&args, registry).await?;
    warn_secrets_in_argv(&args, &call_args, runtime.registry());
    if let Some(tool) = runtime.registry().get(&args.name)
        && tool.spec().asks.contains(&toolbind_codegen::Ask::Sampling)
    {
        return Err(Failure::failed(format!(
            "`{}` cannot do without asking a model (its TOOL.md says `asks: [sampling]`), and toolbind call has none to ask; nothing ran. Call it from an agent whose host samples (toolbind::host::Host::sample) or from an MCP client with sampling (toolbind serve)",
            args.name
        )));
    }

    let mut sigint = signal(SignalKind::interrupt())
        .map_err(|e| Failure::failed(format!("cannot handle Ctrl-C: {e}")))?;
    let mut sigterm = signal(SignalKind::terminate())
        .map_err(|e| Failure::failed(format!("cannot handle SIGTERM: {e}")))?;
    let display = Display::new(&args.name);
    let cancel = CancelToken::new();
    let mut opts = CallOptions::new()
        .cancel(cancel.clone())
        .progress({
            let display = display.clone();
            move |p| display.update(&p)
        })
        .host(Asker {
            yes: args.yes,
            display: display.clone(),
        });
    if let Some(t) = args.timeout {
        opts = opts.timeout(t);
    }
    // The runtime's own pipeline (prepareArguments, validation, the run); its typed stop
    // reason tells a usage error from the tool's failure.
    let mut running = Box::pin(runtime.call(&args.name, call_args, opts));
    let mut interrupts = 0;
    let mut terminated = false;
    let result = loop {
        tokio::select! {
            r = &mut running => break Some(r),
            _ = sigint.recv() => interrupts += 1,
            _ = sigterm.recv() => {
                interrupts += 1;
                terminated = true;
            }
        }
        if interrupts == 1 {
            cancel.cancel();
            display.note(&format!(
                "cancelling `{}` (press Ctrl-C again to kill it)",
                args.name
            ));
        } else {
            break None;
        }
    };
    drop(running);
    // Kills whatever is left of the tool: its process group, a warm worker.
    executor.shutdown();
    display.finish();

    // The shell conventions: 130 after Ctrl-C, 143 after SIGTERM.
    let stopped = if terminated {
        Code::Terminated
    } else {
        Code::Interrupted
    };
    let Some(result) = result else {
        eprintln!("killed `{}` and its processes", args.name);
        return Ok(stopped);
    };
    let limits = executor.config().get_sandbox().get_limits();
    if matches!(
        result.stop,
        StopReason::BadArguments | StopReason::UnknownTool
    ) {
        if args.json {
            print_json(&result, limits)?;
        }
        return Err(nothing_ran(&result, &runtime));
    }
    if args.json {
        print_json(&result, limits)?;
    } else {
        print_text(&result)?;
    }
    if interrupts > 0 {
        eprintln!("cancelled `{}`", args.name);
        Ok(stopped)
    } else if result.is_error {
        Ok(Code::Failed)
    } else {
        Ok(Code::Ok)
    }
}

/// Nothing ran: the command line asked for something impossible (exit 2), or the tool is
/// not in this runtime while an MCP server is not up — the tool may be one of its (exit 1:
/// a failure, not a mistyped name).
fn nothing_ran(result: &ToolResult, runtime: &Runtime) -> Failure {
    let down = runtime
        .mcp_servers()
        .iter()
        .any(|(_, s)| *s != toolbind::mcp::McpServerState::Ready);
    if result.stop == StopReason::UnknownTool && down {
        Failure::failed(result.text_content())
    } else {
        Failure::usage(result.text_content())
    }
}

/// The result object, plus `stop`: why the call ended (see [`stop_json`]).
fn print_json(result: &ToolResult, limits: &SandboxLimits) -> Result<(), Failure> {
    let serialise =
        |e: serde_json::Error| Failure::failed(format!("cannot serialise the result: {e}"));
    let mut value = serde_json::to_value(result).map_err(serialise)?;
    if let Value::Object(obj) = &mut value {
        obj.insert("stop".into(), stop_json(&result.stop, limits));
    }
    let text = serde_json::to_string_pretty(&value).map_err(serialise)?;
    write_stdout(&format!("{text}\n"))
}

/// `stop` in `--json`: `{kind}`, the [`StopReason::kind`] name, with `timeout_ms` for a
/// timeout, and for a limit its [`Limit::kind`] name and the value in force, as the flag
/// that sets it counts (`null`: unlimited): `memory_mib` and `call_memory_mib` (either can
/// end a call), `cpu_secs`, `max_file_size_mib`, `max_processes`.
fn stop_json(stop: &StopReason, limits: &SandboxLimits) -> Value {
    let mut out = Map::new();
    out.insert("kind".into(), stop.kind().into());
    let mib = |bytes: Option<u64>| json!(bytes.map(|b| b >> 20));
    match stop {
        StopReason::Timeout { after } => {
            out.insert(
                "timeout_ms".into(),
                json!(u64::try_from(after.as_millis()).unwrap_or(u64::MAX)),
            );
        }
        StopReason::LimitExceeded { limit } => {
            out.insert("limit".into(), limit.kind().into());
            let values = match limit {
                Limit::Memory => vec![
                    ("memory_mib", mib(limits.get_memory())),
                    ("call_memory_mib", mib(limits.get_call_memory())),
                ],
                Limit::CpuTime => vec![("cpu_secs", json!(limits.get_cpu().map(|d| d.as_secs())))],
                Limit::FileSize => vec![("max_file_size_mib", mib(limits.get_file_size()))],
                Limit::Processes => vec![("max_processes", json!(limits.get_processes()))],
                _ => Vec::new(),
            };
            for (k, v) in values {
                out.insert(k.into(), v);
            }
        }
        _ => {}
    }
    Value::Object(out)
}

/// Success text to stdout; an error result's text to stderr.
fn print_text(result: &ToolResult) -> Result<(), Failure> {
    let mut text = result.text_content();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    if result.is_error {
        eprint!("error: {}", printable(&text));
    } else if std::io::stdout().is_terminal() {
        // The tool's text, escaped where a terminal shows it; piped, it stays as it is.
        write_stdout(&printable(&text))?;
    } else {
        write_stdout(&text)?;
    }
    // The tool's strings, escaped: a MIME type or URI with a newline or a terminal escape
    // cannot forge a line on stderr.
    for c in &result.content {
        let what = match c {
            Content::Image { data, mime_type } => {
                let m = mime_type.escape_debug();
                format!("a {m} image ({} bytes of base64)", data.len())
            }
            Content::Audio { data, mime_type } => {
                let m = mime_type.escape_debug();
                format!("{m} audio ({} bytes of base64)", data.len())
            }
            Content::Resource { resource } => format!(
                "the resource {} ({}, {} bytes)",
                resource.uri.escape_debug(),
                resource
                    .mime_type
                    .as_deref()
                    .unwrap_or("no MIME type")
                    .escape_debug(),
                resource.contents.len()
            ),
            Content::ResourceLink(l) => {
                format!("a link to the resource {}", l.uri.escape_debug())
            }
            _ => continue,
        };
        eprintln!("note: the result has {what}; --json prints it");
    }
    Ok(())
}

fn write_stdout(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::failed(format!("cannot write to stdout: {e}"))),
    }
}

/// Progress on stderr: a spinner showing the latest update on a terminal, plain
/// `progress: ...` lines otherwise (logs, CI, pipes).
#[derive(Clone)]
enum Display {
    Spinner(ProgressBar),
    Plain,
}

impl Display {
    fn new(tool: &str) -> Self {
        if !std::io::stderr().is_terminal() {
            return Display::Plain;
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template("{spinner} {prefix} {elapsed} {wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        bar.set_style(style);
        bar.set_prefix(tool.to_owned());
        bar.set_message("starting");
        bar.enable_steady_tick(Duration::from_millis(100));
        Display::Spinner(bar)
    }

    fn update(&self, p: &Progress) {
        let texts: Vec<&str> = p.content.iter().filter_map(Content::as_text).collect();
        let text = texts.join("\n");
        match self {
            // The tool's text, escaped: a progress line cannot retitle the window, write
            // the clipboard or reorder what the person reads.
            Display::Spinner(bar) => {
                let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
                bar.set_message(printable(&line));
            }
            Display::Plain => {
                let mut err = std::io::stderr().lock();
                for line in text.lines() {
                    let _ = writeln!(err, "progress: {}", printable(line));
                }
            }
        }
    }

    /// Runs `f` with the spinner hidden (a prompt on the terminal).
    ///
    /// Not indicatif's `suspend`, which holds the bar's lock while `f` runs: progress or a
    /// notice arriving during a prompt would block the call until the person answers. The
    /// bar is hidden instead, and one prompt runs at a time.
    fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        static ONE_PROMPT: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one = ONE_PROMPT.locked();
        match self {
            Display::Spinner(bar) => {
                bar.set_draw_target(ProgressDrawTarget::hidden());
                let r = f();
                bar.set_draw_target(ProgressDrawTarget::stderr());
                r
            }
            Display::Plain => f(),
        }
    }

    /// A line that stays above the spinner (escaped: it may quote a tool).
    fn note(&self, msg: &str) {
        let msg = &printable(msg);
        match self {
            Display::Spinner(bar) if !bar.is_hidden() => bar.println(msg),
            _ => eprintln!("{msg}"),
        }
    }

    fn finish(&self) {
        if let Display::Spinner(bar) = self {
            bar.finish_and_clear();
        }
    }
}

/// Who answers for the person running `toolbind call`: approvals (TOOL.md `approval:
/// always`) and `ctx.confirm` are `--yes`, else the terminal (`/dev/tty`, so `--args -` on
/// stdin does not get in the way), else refused saying how to allow them; `ctx.elicit`
/// fills its form on the terminal; `ctx.roots` is the working directory; `ctx.sample` is
/// refused (there is no model here); `ctx.notify` goes to stderr.
struct Asker {
    yes: bool,
    display: Display,
}

/// Cancelled once the runtime no longer waits for a question's answer (its ask timeout,
/// the call's cancel): a prompt still on the terminal gives up, so that it neither holds
/// the terminal nor takes the line typed for the next question.
type Withdrawn = CancelToken;

/// Withdraws its question when dropped: with the answer's future, when nobody waits for it
/// any more.
struct WithdrawOnDrop(Withdrawn);

impl Drop for WithdrawOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

impl Asker {
    /// `ask` on a thread of its own (the terminal blocks), withdrawn when its answer is no
    /// longer awaited; `failed` turns a thread that died into the answer.
    fn on_a_thread<T: Send + 'static>(
        &self,
        ask: impl FnOnce(&Display, &Withdrawn) -> T + Send + 'static,
        failed: impl FnOnce(String) -> T + Send + 'static,
    ) -> Answer<T> {
        let display = self.display.clone();
        let withdrawn = Withdrawn::new();
        let guard = WithdrawOnDrop(withdrawn.clone());
        Box::pin(async move {
            let _guard = guard;
            tokio::task::spawn_blocking(move || ask(&display, &withdrawn))
                .await
                .unwrap_or_else(|e| failed(format!("asking on the terminal failed: {e}")))
        })
    }
}

impl Host for Asker {
    fn approve(&self, request: ApprovalRequest) -> Answer<Decision> {
        if self.yes {
            return Box::pin(std::future::ready(Decision::Approve));
        }
        self.on_a_thread(
            move |display, withdrawn| ask_on_terminal(display, &request, withdrawn),
            Decision::deny,
        )
    }

    fn confirm(&self, request: ConfirmRequest) -> Answer<Result<bool, Refusal>> {
        if self.yes {
            return Box::pin(std::future::ready(Ok(true)));
        }
        self.on_a_thread(
            move |display, withdrawn| {
                let question = format!(
                    "`{}` asks: {}\n[y/N] ",
                    request.asker.tool.name(),
                    printable(&request.message)
                );
                let answer = on_terminal(display, &question, withdrawn)?.to_ascii_lowercase();
                Ok(matches!(answer.as_str(), "y" | "yes"))
            },
            |why| Err(why.into()),
        )
    }

    fn elicit(&self, request: ElicitRequest) -> Answer<Result<Elicited, Refusal>> {
        self.on_a_thread(
            move |display, withdrawn| fill_form(display, &request, withdrawn),
            |why| Err(why.into()),
        )
    }

    fn roots(&self, _asker: Who) -> Answer<Result<Vec<Root>, Refusal>> {
        let root = std::env::current_dir()
            .map(|d| vec![Root::new(format!("file://{}", d.display()), None)])
            .map_err(|e| format!("the working directory is unknown: {e}").into());
        Box::pin(std::future::ready(root))
    }

    fn sample(&self, _request: toolbind::host::SampleRequest) -> Answer<Result<Value, Refusal>> {
        Box::pin(std::future::ready(Err(
            "`toolbind call` has no model to sample: run the tool from an agent (or `toolbind serve` for an MCP client) for ctx.sample".into(),
        )))
    }

    fn notify(&self, notice: Notice) {
        self.display.note(&format!(
            "{} [{}]: {}",
            notice.asker.tool.name(),
            notice.level,
            printable(&notice.text)
        ));
    }
}

/// A tool's text as the terminal shows it: control characters (ANSI and OSC escape
/// sequences among them: a tool must not fake a prompt, hide one or set the clipboard)
/// and bidi controls escaped, line breaks and tabs kept (`toolbind::untrusted::terminal`,
/// which every printer of outside text shares).
fn printable(text: &str) -> String {
    toolbind::untrusted::terminal(text).into_owned()
}

/// One line typed at the terminal after `question` (trimmed), or why there is none.
fn on_terminal(
    display: &Display,
    question: &str,
    withdrawn: &Withdrawn,
) -> Result<String, Refusal> {
    match read_on_terminal(display, question, withdrawn) {
        Ok(answer) => Ok(answer),
        Err(Unasked::NoTerminal) => Err(
            "there is no terminal to ask on (toolbind call --yes answers yes to confirmations)"
                .into(),
        ),
        Err(Unasked::Unread(why)) => Err(why.into()),
    }
}

/// Why nobody answered on the terminal.
enum Unasked {
    /// This process has no controlling terminal.
    NoTerminal,
    /// The answer could not be read.
    Unread(String),
}

/// Writes `question` to the controlling terminal and reads one line (trimmed). A question
/// withdrawn meanwhile stops waiting for it (within [`WITHDRAWN_CHECK_MS`]), saying so on the
/// terminal; one withdrawn before its turn is never shown.
fn read_on_terminal(
    display: &Display,
    question: &str,
    withdrawn: &Withdrawn,
) -> Result<String, Unasked> {
    use nix::errno::Errno;
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use nix::sys::termios;
    use std::os::fd::AsFd;
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .map_err(|_| Unasked::NoTerminal)?;
    let unread =
        |why: String| Unasked::Unread(format!("no answer could be read from the terminal: {why}"));
    let gone = || {
        Unasked::Unread("the question was withdrawn (its ask timeout, or the call's end)".into())
    };
    display.suspend(|| {
        if withdrawn.is_cancelled() {
            return Err(gone());
        }
        let mut out = &tty;
        let _ = write!(out, "{}", printable(question));
        let _ = out.flush();
        // The terminal is in line mode: a read gives one typed line at most (or what was
        // typed before Ctrl-D).
        let mut line = Vec::new();
        while !line.ends_with(b"\n") {
            if withdrawn.is_cancelled() {
                // What was typed for this prompt (a line, half a line) must not become
                // the answer to the next: it could be an approval.
                let _ = termios::tcflush(&tty, termios::FlushArg::TCIFLUSH);
                let _ = writeln!(out, "\n(no longer asked)");
                return Err(gone());
            }
            let mut fds = [PollFd::new(tty.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fds, PollTimeout::from(WITHDRAWN_CHECK_MS)) {
                Ok(0) | Err(Errno::EINTR) => continue,
                Ok(_) => {}
                Err(e) => return Err(unread(e.to_string())),
            }
            let hung_up = fds[0]
                .revents()
                .is_some_and(|r| r.contains(PollFlags::POLLHUP));
            let mut buf = [0u8; 4096];
            match (&tty).read(&mut buf) {
                Ok(0) if hung_up => return Err(unread("the terminal hung up".into())),
                // Ctrl-D: what was typed so far (maybe nothing) is the answer.
                Ok(0) => break,
                Ok(n) => line.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(unread(e.to_string())),
            }
        }
        Ok(String::from_utf8_lossy(&line).trim().to_owned())
    })
}

/// How often a prompt waiting on the terminal looks whether its question was withdrawn.
const WITHDRAWN_CHECK_MS: u16 = 100;

/// `ctx.elicit` on the terminal: one line per field (an empty line skips an optional one;
/// `!cancel` cancels, `!decline` declines), read as the field's type.
fn fill_form(
    display: &Display,
    request: &ElicitRequest,
    withdrawn: &Withdrawn,
) -> Result<Elicited, Refusal> {
    let name = request.asker.tool.name();
    let required: Vec<&str> = request.schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut content = Map::new();
    let fields = request.schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut intro = format!(
        "`{name}` asks: {}\n(type !decline to say no, !cancel to leave it)\n",
        printable(&request.message)
    );
    for (field, spec) in &fields {
        let kind = spec["type"].as_str().unwrap_or("string");
        let (hint, choices) = field_hint(kind, spec);
        let optional = !required.contains(&field.as_str());
        let question = format!(
            "{intro}{} ({hint}{}){}: ",
            printable(field),
            if optional { ", optional" } else { "" },
            spec["description"]
                .as_str()
                .map(|d| format!(" - {}", printable(d)))
                .unwrap_or_default()
        );
        intro.clear();
        loop {
            let line = on_terminal(display, &question, withdrawn)?;
            match line.as_str() {
                "!cancel" => return Ok(Elicited::without_content(ElicitAction::Cancel)),
                "!decline" => return Ok(Elicited::without_content(ElicitAction::Decline)),
                "" if optional => break,
                _ => {}
            }
            let value = typed_value(kind, &line);
            let allowed = choices
                .as_ref()
                .is_none_or(|values| value.as_ref().is_some_and(|v| values.contains(v)));
            match value {
                Some(v) if allowed => match toolbind::host::field_fits(field, spec, &v) {
                    Ok(()) => {
                        content.insert(field.clone(), v);
                        break;
                    }
                    // Its bounds or format: say which, and ask again.
                    Err(why) => display.note(&format!("{}; again:", printable(&why.to_string()))),
                },
                _ => {
                    display.note(&format!("`{line}` is not {hint}; again:"));
                }
            }
        }
    }
    Ok(Elicited::accept(content))
}

/// How a form field of JSON type `kind` is described in its prompt (its type and format,
/// its choices, or "a list"), and its choices (`enum`, or `oneOf`'s `const`s) if it has
/// any.
fn field_hint(kind: &str, spec: &Value) -> (String, Option<Vec<Value>>) {
    let mut hint = match spec["format"].as_str() {
        Some(format) => format!("{}, {}", printable(kind), printable(format)),
        None => printable(kind),
    };
    let choices: Option<Vec<Value>> = spec["enum"].as_array().cloned().or_else(|| {
        spec["oneOf"]
            .as_array()
            .map(|o| o.iter().map(|c| c["const"].clone()).collect())
    });
    if let Some(values) = &choices {
        let v: Vec<String> = values
            .iter()
            .filter_map(Value::as_str)
            .map(printable)
            .collect();
        hint = format!("one of {}", v.join(", "));
    }
    if kind == "array" {
        hint = "a list, comma-separated".into();
    }
    (hint, choices)
}

/// A line typed for a form field, read as the field's JSON type `kind`; `None` when it
/// is not one (the field is asked again).
fn typed_value(kind: &str, line: &str) -> Option<Value> {
    match kind {
        "boolean" => match line.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Some(Value::Bool(true)),
            "n" | "no" | "false" => Some(Value::Bool(false)),
            _ => None,
        },
        "integer" => line.parse::<i64>().ok().map(Value::from),
        "number" => line
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number),
        "array" => Some(Value::Array(
            line.split(',')
                .map(|s| Value::String(s.trim().to_owned()))
                .filter(|s| s != "")
                .collect(),
        )),
        _ => Some(Value::String(line.to_owned())),
    }
}

/// Asks on the controlling terminal: `y` or `yes` approves, anything else denies.
fn ask_on_terminal(
    display: &Display,
    request: &ApprovalRequest,
    withdrawn: &Withdrawn,
) -> Decision {
    let name = request.tool.name();
    let args = serde_json::to_string_pretty(&request.shown_args()).unwrap_or_default();
    let question = format!("`{name}` needs your approval to run with:\n{args}\nRun it? [y/N] ");
    match read_on_terminal(display, &question, withdrawn) {
        Err(Unasked::NoTerminal) => Decision::deny(format!(
            "it needs approval and there is no terminal to ask on; run `toolbind call {name} --yes` to approve it"
        )),
        Err(Unasked::Unread(_)) => Decision::deny("no answer could be read from the terminal"),
        Ok(answer) => match answer.to_ascii_lowercase().as_str() {
            "y" | "yes" => Decision::Approve,
            "" => Decision::deny("not approved at the terminal (the default is no)"),
            _ => Decision::deny("not approved at the terminal"),
        },
    }
}

/// A sensitive value given with `--args JSON` sits in this process's argv, where `ps` and
/// /proc show it; the tool itself never sees it there. Say so, and how to avoid it.
fn warn_secrets_in_argv(args: &CallArgs, call_args: &Value, registry: &toolbind::Registry) {
    if args.args.as_deref() == Some("-") {
        return;
    }
    let Some(spec) = registry.get(&args.name) else {
        return;
    };
    for input in spec.spec().inputs.iter().filter(|i| i.sensitive) {
        if call_args.get(&input.name).is_some_and(|v| !v.is_null()) {
            eprintln!(
                "warning: `{}` is sensitive, and --args put it on this command line where other users can see it; pass the arguments with `--args -` on stdin instead",
                input.name
            );
        }
    }
}
