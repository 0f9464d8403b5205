//! An example agent on toolbind, end to end:
//!
//! 1. at startup, sync the seed tools (`tools/`) into a data folder by version;
//! 2. load the tools from the data folder (as `PI_TOOLS_DIRS` would point at it);
//! 3. print the system prompt generated at build time;
//! 4. play a scripted model turn: tool calls as a model emits them (a name and JSON
//!    arguments), parsed into the generated `ToolCall` and run by the runtime for real in
//!    node, python3 and bash — including a call with bad arguments, one cancelled
//!    mid-way, and two that replace a file and so wait for the user's approval (an
//!    approval policy with a scripted answer: one yes, one no).
//!
//! `cargo run -p toolbind-example-agent` (add `-- --data DIR` to choose the data folder).
//!
//! With `--model MODEL` (an OpenAI-compatible endpoint: `OPENAI_BASE_URL`, `OPENAI_API_KEY`)
//! or `--provider anthropic|gemini` (their API keys), step 4 talks to a real model instead
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

fn heading(title: &str) {
    println!(
        "\n=== {title} {}",
        "=".repeat(70usize.saturating_sub(title.len()))
    );
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()?;
    let seed = root.join("tools");
    let data = match std::env::args().skip_while(|a| a != "--data").nth(1) {
        Some(d) => PathBuf::from(d),
        None => root.join("target/agent-data"),
    };
    let tools_dir = data.join("tools");
    let args: Vec<String> = std::env::args().collect();
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

    heading("3. system prompt (generated at build time)");
    println!("{SYSTEM_PROMPT}");

    // The environment the tools may read: email_db declares `env: [EMAIL_DB_PATH]`.
    let workdir = data.join("work");
    std::fs::create_dir_all(&workdir)?;
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
            .cwd(workdir.clone())
            .sandbox(SandboxPolicy::new().allow_write(&workdir).allow_read(&db)),
    );
    // The user's say: a call that would replace a file (convert_audio_to_mp3 with
    // overwrite: true, `approval: when overwrite` in its TOOL.md) waits for this policy.
    // A real agent asks its user here; this one plays a scripted answer: yes for the
    // 128k MP3, no for anything else.
    let runtime = Runtime::builder()
        .registry(loaded.registry)
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
    // What the jail is and, limit by limit, whether it holds on this host (and if not,
    // why and how to get it): a limit printed is a limit enforced.
    if let Some(status) = runtime.sandbox_status() {
        println!("sandbox: {status}");
        for limit in &status.limits {
            println!("  - {limit}");
        }
    }

    if let Some(live) = &live {
        heading(&format!(
            "4. live model turn ({:?}, {})",
            live.provider, live.model
        ));
        let answer = live::run(&runtime, live, SYSTEM_PROMPT).await?;
        println!("\nmodel: {answer}");
        heading("done");
        return Ok(());
    }

    heading("4. scripted model turn");
    let mp3 = workdir.join("tone.mp3");
    let _ = std::fs::remove_file(&mp3);
    let script: Vec<(&str, Value)> = vec![
        (
            "todo",
            json!({"action": "add", "text": "Summarise unread email from Alice"}),
        ),
        (
            "todo",
            json!({"action": "add", "text": "Read the release notes"}),
        ),
        ("email_db", json!({"sender": "alice", "limit": 3})),
        (
            "web_fetch",
            json!({"url": format!("{server}/release-notes")}),
        ),
        (
            "convert_audio_to_mp3",
            json!({"input_path": wav.display().to_string(), "output_path": mp3.display().to_string(), "bitrate": "128k"}),
        ),
        // Replacing that MP3 needs the user's approval: given for 128k, refused for 320k.
        (
            "convert_audio_to_mp3",
            json!({"input_path": wav.display().to_string(), "output_path": mp3.display().to_string(), "bitrate": "128k", "overwrite": true}),
        ),
        (
            "convert_audio_to_mp3",
            json!({"input_path": wav.display().to_string(), "output_path": mp3.display().to_string(), "bitrate": "320k", "overwrite": true}),
        ),
        // A model sending "5" for a number and "true" for a boolean: tolerated.
        (
            "email_db",
            json!({"query": "budget", "limit": "2", "include_body": "false"}),
        ),
        // Bad arguments: an action that does not exist, and a misspelt field.
        (
            "todo",
            json!({"action": "finish", "txt": "Read the release notes"}),
        ),
        ("todo", json!({"action": "done", "text": "release notes"})),
        ("todo", json!({"action": "list"})),
    ];
    for (i, (name, args)) in script.into_iter().enumerate() {
        run(&runtime, &format!("call_{}", i + 1), name, args, None).await;
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
    run(&runtime, "call_cancel", "web_fetch", slow, Some(cancel)).await;

    heading("done");
    Ok(())
}

/// One model tool call: parsed into the generated `ToolCall` by the runtime's validator,
/// then run by the typed path.
async fn run(runtime: &Runtime, id: &str, name: &str, args: Value, cancel: Option<CancelToken>) {
    println!("\n> {id}: {name} {args}");
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
