//! An example agent on toolbind, end to end:
//!
//! 1. at startup, sync the seed tools (`tools/`) into a data folder by version;
//! 2. load the tools from the data folder (as `PI_TOOLS_DIRS` would point at it);
//! 3. set up the jail the tools run in, and say what it holds on this host;
//! 4. show the system prompt generated at build time (its first lines; `--show-prompt`
//!    prints it whole);
//! 5. play a scripted model turn: tool calls as a model emits them (a name and JSON
//!    arguments), parsed into the generated `ToolCall` and run by the runtime for real in
//!    node, python3 and bash — including a call with bad arguments, one cancelled
//!    mid-way, and two that replace a file and so wait for the user's approval (an
//!    approval policy with a scripted answer: one yes, one no). Each call is labelled
//!    with what it shows.
//!
//! `cargo run -p toolbind-example-agent`; after `--`: `--data DIR` chooses the data folder
//! (default `target/agent-data`), `--seed DIR` the seed folder (default: the repository's
//! `tools/`, or `$TOOLBIND_SEED`), `--show-prompt` prints the whole system prompt.
//!
//! With `--model MODEL` (an OpenAI-compatible endpoint: `OPENAI_BASE_URL`, `OPENAI_API_KEY`)
//! or `--provider anthropic|gemini` (their API keys), step 5 talks to a real model instead
//! (`--prompt TEXT`, `--max-turns N`): see `live.rs`. Without those flags it plays the
//! scripted turn, whatever keys the environment holds.

mod fixtures;
mod live;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use toolbind::Loader;
use toolbind::exec::{ExecConfig, SubprocessExecutor};
use toolbind::host::{Decision, policy};
use toolbind::sandbox::SandboxPolicy;
use toolbind::{CallOptions, CancelToken, Runtime, ToolResult};

toolbind::include_tools!();

/// The system prompt build.rs generated from the same TOOL.md files.
const SYSTEM_PROMPT: &str = include_str!(concat!(env!("OUT_DIR"), "/toolbind/prompt.md"));

/// At most how many lines of the system prompt are shown without `--show-prompt`: its
/// first section (the tool list), so that everything before the scripted turn fits one
/// screen.
const PROMPT_LINES: usize = 12;

fn heading(title: &str) {
    println!(
        "\n=== {title} {}",
        "=".repeat(70usize.saturating_sub(title.len()))
    );
}

/// The value after `name` on the command line.
fn flag(args: &[String], name: &str) -> Option<String> {
    args.iter().skip_while(|a| *a != name).nth(1).cloned()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()?;
    let args: Vec<String> = std::env::args().collect();
    // The seed folder is read at run time: the bindings were generated from the
    // repository's tools/ at build time, and a call whose TOOL.md no longer matches them
    // is refused as contract drift.
    let seed = flag(&args, "--seed")
        .or_else(|| {
            std::env::var("TOOLBIND_SEED")
                .ok()
                .filter(|s| !s.is_empty())
        })
        .map_or_else(|| root.join("tools"), PathBuf::from);
    let data = flag(&args, "--data").map_or_else(|| root.join("target/agent-data"), PathBuf::from);
    let tools_dir = data.join("tools");
    let live = live::Live::from_args(&args, |name| std::env::var(name).ok())?;

    heading(&format!(
        "1. sync {} -> {}",
        seed.display(),
        tools_dir.display()
    ));
    let report = toolbind::sync(&seed, &tools_dir)?;
    println!("{report}");

    heading("2. load");
    let loaded = Loader::new().dir(&tools_dir).load();
    for w in &loaded.warnings {
        println!("skipped: {w}");
    }
    for t in loaded.registry.iter() {
        println!(
            "{:<22} v{:<3} {:<11} {}",
            t.name(),
            t.version(),
            t.language(),
            t.dir().display()
        );
    }

    heading("3. the jail");
    let workdir = data.join("work");
    let (runtime, paths) = build_runtime(loaded.registry, &tools_dir, &workdir)?;

    heading("4. system prompt (generated at build time)");
    print_prompt(args.iter().any(|a| a == "--show-prompt"));

    if let Some(live) = &live {
        heading(&format!(
            "5. live model turn ({:?}, {})",
            live.provider, live.model
        ));
        let answer = live::run(&runtime, live, SYSTEM_PROMPT).await?;
        println!("\nmodel: {answer}");
        heading("done");
        return Ok(());
    }

    heading("5. scripted model turn");
    scripted_turn(&runtime, &paths).await;
    heading("done");
    Ok(())
}

/// The system prompt, folded to its first section unless asked for whole.
fn print_prompt(whole: bool) {
    let lines: Vec<&str> = SYSTEM_PROMPT.lines().collect();
    let first_section = lines
        .iter()
        .skip(1)
        .position(|l| l.starts_with("## "))
        .map_or(lines.len(), |i| i + 1)
        .min(PROMPT_LINES);
    if whole || first_section == lines.len() {
        println!("{SYSTEM_PROMPT}");
        return;
    }
    for line in lines[..first_section]
        .iter()
        .rev()
        .skip_while(|l| l.is_empty())
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
    {
        println!("{line}");
    }
    println!(
        "… ({} more lines; `--show-prompt` prints them)",
        lines.len() - first_section
    );
}

/// What the scripted calls work on: the sample files and the local web server.
struct Paths {
    workdir: PathBuf,
    wav: PathBuf,
    server: String,
}

/// The runtime: the tools' environment, the jail's grants and the user's approvals; prints
/// what the jail holds on this host.
fn build_runtime(
    registry: toolbind::Registry,
    tools_dir: &std::path::Path,
    workdir: &std::path::Path,
) -> Result<(Runtime, Paths), Box<dyn std::error::Error>> {
    // The environment the tools may read: email_db declares `env: [EMAIL_DB_PATH]`.
    std::fs::create_dir_all(workdir)?;
    let db = workdir.join("emails.db");
    fixtures::sample_email_db(&tools_dir.join("email_db/make_sample_db.py"), &db)?;
    let wav = workdir.join("tone.wav");
    fixtures::write_wav(&wav, 440.0, 1.5)?;
    let server = fixtures::serve_http()?;

    // The jail (auto: bubblewrap when it works here) sees only what is granted:
    // convert_audio_to_mp3 reads and writes the work folder, email_db reads its database
    // (read-only, although it lies inside the work folder), web_fetch has the network.
    let executor = SubprocessExecutor::new(
        ExecConfig::default()
            .env_set([("EMAIL_DB_PATH", db.display().to_string())])
            .cwd(workdir.to_path_buf())
            .sandbox(SandboxPolicy::new().allow_write(workdir).allow_read(&db)),
    );
    // The user's say: a call that would replace a file (convert_audio_to_mp3 with
    // overwrite: true, `approval: when overwrite` in its TOOL.md) waits for this policy.
    // A real agent asks its user here; this one plays a scripted answer: yes for the
    // 128k MP3, no for anything else.
    let runtime = Runtime::builder()
        .registry(registry)
        .executor(std::sync::Arc::new(executor))
        .spill_dir(workdir.join("spill"))
        .host(policy(|request| async move {
            let yes = request.args["bitrate"] == "128k";
            println!(
                "  ? approve `{}` replacing {}? (scripted answer: {})",
                request.tool.name(),
                request.args["output_path"].as_str().unwrap_or("its output"),
                if yes { "yes" } else { "no" }
            );
            if yes {
                Decision::Approve
            } else {
                Decision::deny("the user keeps the existing file")
            }
        }))
        .build();
    println!(
        "grants: {} (read and write), {} (read only); network: on (the default)",
        workdir.display(),
        db.display()
    );
    // What the jail is and, limit by limit, whether it holds on this host (and if not,
    // why and how to get it): a limit printed is a limit enforced.
    if let Some(status) = runtime.sandbox_status() {
        println!("sandbox: {status}");
        for limit in &status.limits {
            println!("  - {limit}");
        }
    }
    let paths = Paths {
        workdir: workdir.to_path_buf(),
        wav,
        server,
    };
    Ok((runtime, paths))
}

/// The scripted model turn: each call with what it shows.
async fn scripted_turn(runtime: &Runtime, paths: &Paths) {
    let Paths {
        workdir,
        wav,
        server,
    } = paths;
    let mp3 = workdir.join("tone.mp3");
    let _ = std::fs::remove_file(&mp3);
    let (wav, mp3) = (wav.display().to_string(), mp3.display().to_string());
    let script: Vec<(&str, &str, Value)> = vec![
        (
            "a TypeScript tool in a warm worker, with progress",
            "todo",
            json!({"action": "add", "text": "Summarise unread email from Alice"}),
        ),
        (
            "the same worker again: it keeps the list",
            "todo",
            json!({"action": "add", "text": "Read the release notes"}),
        ),
        (
            "a Python tool reading a database the jail shows read-only",
            "email_db",
            json!({"sender": "alice", "limit": 3}),
        ),
        (
            "a TypeScript tool on the network: HTML to text, links kept",
            "web_fetch",
            json!({"url": format!("{server}/release-notes")}),
        ),
        (
            "a bash tool running ffmpeg in the granted work folder",
            "convert_audio_to_mp3",
            json!({"input_path": wav, "output_path": mp3, "bitrate": "128k"}),
        ),
        (
            "replacing a file waits for the user's approval: given",
            "convert_audio_to_mp3",
            json!({"input_path": wav, "output_path": mp3, "bitrate": "128k", "overwrite": true}),
        ),
        (
            "the same, refused: the tool never runs",
            "convert_audio_to_mp3",
            json!({"input_path": wav, "output_path": mp3, "bitrate": "320k", "overwrite": true}),
        ),
        (
            "a model's quirks tolerated: \"2\" for a number, \"false\" for a boolean",
            "email_db",
            json!({"query": "budget", "limit": "2", "include_body": "false"}),
        ),
        (
            "bad arguments: the error the model reads (an unknown action, a misspelt field)",
            "todo",
            json!({"action": "finish", "txt": "Read the release notes"}),
        ),
        (
            "completing an item by part of its text",
            "todo",
            json!({"action": "done", "text": "release notes"}),
        ),
        ("what is left", "todo", json!({"action": "list"})),
    ];
    for (i, (shows, name, args)) in script.into_iter().enumerate() {
        run(runtime, &format!("call_{}", i + 1), shows, name, args, None).await;
    }

    // A call cancelled mid-way: the page drips slowly; the user presses Escape after 1 s.
    let cancel = CancelToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1000)).await;
        println!("  ! user cancelled");
        trigger.cancel();
    });
    let slow = json!({"url": format!("{server}/slow")});
    let shows = "cancelled mid-way: the tool gets the abort signal";
    run(
        runtime,
        "call_cancel",
        shows,
        "web_fetch",
        slow,
        Some(cancel),
    )
    .await;
}

/// One model tool call: parsed into the generated `ToolCall` by the runtime's validator,
/// then run by the typed path.
async fn run(
    runtime: &Runtime,
    id: &str,
    shows: &str,
    name: &str,
    args: Value,
    cancel: Option<CancelToken>,
) {
    println!("\n> {id}: {name} {args}");
    println!("  shows: {shows}");
    let mut opts = CallOptions::new()
        .id(id)
        .progress(|p| println!("  progress: {}", p.text_content()));
    if let Some(c) = cancel {
        opts = opts.cancel(c);
    }
    // One validator for both paths: `ToolCall::parse` checks the call with the runtime's
    // validator (the model quirks such as "5" for a number are tolerated) and answers an
    // unknown tool or bad arguments with the same error result `Runtime::call` would: every
    // wrong field, what was expected, what was received, the valid values. A parsed call
    // runs by the typed path, with a drift check against the TOOL.md the runtime loaded
    // and no second validation.
    let result = match ToolCall::parse(runtime, name, args) {
        Ok(call) => call.call(runtime, opts).await,
        Err(error) => error,
    };
    print_result(&result);
}

fn print_result(r: &ToolResult) {
    let label = if r.is_error {
        "error result (isError: true)"
    } else {
        "result"
    };
    println!("  {label}:");
    for line in r.text_content().lines().take(14) {
        println!("    {line}");
    }
    let n = r.text_content().lines().count();
    if n > 14 {
        println!("    … ({} more lines)", n - 14);
    }
}
