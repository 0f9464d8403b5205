//! Runs the built example agent end to end, as the README's main command does, and checks
//! that its output shows every step: the sync report, the jail, the system prompt (folded
//! unless `--show-prompt`), each tool's real result under a label saying what it shows, the
//! model-readable error for the bad call and the cancelled call.

use std::path::Path;
use std::process::{Command, Output};

fn run_agent(data: &Path) -> (String, String) {
    run_agent_with(data, &[], &[])
}

fn run_agent_with(data: &Path, args: &[&str], env: &[(&str, &Path)]) -> (String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent"));
    cmd.arg("--data")
        .arg(data)
        .args(args)
        .env_remove("TOOLBIND_SEED");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.output().expect("run the agent binary");
    let stdout = String::from_utf8_lossy(&stdout).into_owned();
    let stderr = String::from_utf8_lossy(&stderr).into_owned();
    assert!(
        status.success(),
        "agent exited with {status}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    (stdout, stderr)
}

#[track_caller]
fn has(out: &str, needle: &str) {
    assert!(
        out.contains(needle),
        "agent output lacks {needle:?}\n--- output\n{out}"
    );
}

/// The text between `> {id}:` and the next call (or the end).
fn call_section<'a>(out: &'a str, id: &str) -> &'a str {
    let marker = format!("\n> {id}: ");
    let start = out
        .find(&marker)
        .unwrap_or_else(|| panic!("no {id} in the agent output\n{out}"));
    let rest = &out[start + 1..];
    let end = rest[1..]
        .find("\n> ")
        .map(|i| i + 1)
        .or_else(|| rest.find("\n=== done"))
        .unwrap_or(rest.len());
    &rest[..end]
}

#[test]
fn agent_runs_the_whole_scripted_turn() {
    let data = tempfile::tempdir().unwrap();
    let (out, stderr) = run_agent_with(data.path(), &["--show-prompt"], &[]);

    // 1. Sync report: all four shipped tools installed into the fresh data folder.
    for tool in ["convert_audio_to_mp3", "email_db", "todo", "web_fetch"] {
        has(
            &out,
            &format!("installed {tool} (version {})", version(tool)),
        );
    }
    has(&out, "4 installed, 0 updated, 0 unchanged, 0 skipped");

    // 2. Loaded from the data folder, not from tools/.
    let tools_dir = data.path().join("tools");
    for (tool, lang) in [
        ("convert_audio_to_mp3", "bash"),
        ("email_db", "python"),
        ("todo", "typescript"),
        ("web_fetch", "typescript"),
    ] {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("{tool} ")))
            .unwrap_or_else(|| panic!("no load line for {tool}\n{out}"));
        assert!(line.contains(lang), "{line}");
        assert!(
            line.contains(&tools_dir.join(tool).display().to_string()),
            "{line}"
        );
    }
    assert!(!out.contains("skipped:"), "a tool was skipped:\n{out}");
    // The tools ran in the jail (CI installs bubblewrap; `auto` would fall back without).
    has(
        &out,
        "sandbox: auto -> bubblewrap jail: bwrap works here with",
    );
    // Then each limit on its own line, enforced or not (and then why).
    has(&out, "  - memory per process bounded by RLIMIT_DATA");
    has(&out, "  - CPU time per call bounded by RLIMIT_CPU");
    for limit in ["  - memory per call ", "  - processes "] {
        has(&out, limit);
    }

    // 3. The jail under its own heading, with the grants.
    let jail = &out[out.find("=== 3. the jail").expect("a jail heading")..];
    let jail = &jail[..jail.find("=== 4.").expect("a heading after the jail")];
    has(jail, "grants: ");
    has(jail, "sandbox: ");

    // 4. The system prompt (whole, with --show-prompt) with every tool's line.
    assert!(
        !out.contains("`--show-prompt` prints them"),
        "folded:\n{out}"
    );
    has(&out, "## Available tools");
    has(
        &out,
        "- convert_audio_to_mp3: Convert a local audio file to MP3 with ffmpeg (bitrate 64k-320k)",
    );
    has(
        &out,
        "- email_db: Search the synced email archive by sender, text, label, thread or date range (read-only)",
    );
    has(
        &out,
        "- todo: Manage project todos: list lists, add adds, done completes",
    );
    has(
        &out,
        "- web_fetch: Fetch a URL and return readable text (HTML converted to text with links kept)",
    );
    has(&out, "## Guidelines");

    // 5. Each call is labelled with what it shows, then its real result.
    for line in out.lines().filter(|l| l.starts_with("> call_")) {
        let next = out[out.find(line).unwrap() + line.len() + 1..]
            .lines()
            .next()
            .unwrap_or("");
        assert!(
            next.starts_with("  shows: "),
            "{line} has no label: {next:?}"
        );
    }
    has(
        call_section(&out, "call_8"),
        "shows: a model's quirks tolerated",
    );
    let c1 = call_section(&out, "call_1");
    has(c1, "progress: Processing: add");
    has(
        c1,
        "Added: Summarise unread email from Alice (total 1 item(s))",
    );
    let c2 = call_section(&out, "call_2");
    has(c2, "Added: Read the release notes (total 2 item(s))");

    let c3 = call_section(&out, "call_3");
    has(c3, "  result:");
    has(
        c3,
        "4 message(s) matching sender='alice'; showing the 3 most recent, newest first.",
    );
    has(c3, "From: Alice Chen <alice.chen@northwind.example.com>");
    has(
        c3,
        "Subject: Re: Fwd: Your CloudHost invoice for March 2024",
    );

    let c4 = call_section(&out, "call_4");
    has(c4, "  result:");
    has(c4, "Status: 200 OK");
    has(c4, "Title: Release notes");
    has(c4, "# toolbind 0.1 release notes");
    has(
        c4,
        "TOOL.md folders become typed Rust, JSON Schemas and prompts.",
    );
    has(c4, "- Runs tools in node, python3 and bash");
    // The relative link is kept, resolved against the page's URL.
    assert!(
        c4.lines()
            .any(|l| l.contains("- See the [docs](http://127.0.0.1:")
                && l.trim_end().ends_with("/docs)")),
        "link not kept:\n{c4}"
    );
    assert!(!c4.contains("alert("), "script not dropped:\n{c4}");
    assert!(!c4.contains("color:red"), "style not dropped:\n{c4}");

    let c5 = call_section(&out, "call_5");
    has(c5, "progress: Converting: 100%");
    has(c5, "  result:");
    let mp3 = data.path().join("work/tone.mp3");
    has(
        c5,
        &format!(
            "Converted {} -> {}",
            data.path().join("work/tone.wav").display(),
            mp3.display()
        ),
    );
    has(c5, "Bitrate: 128k, size: ");
    has(c5, "duration: 1.5 s");
    let bytes = std::fs::read(&mp3).expect("the agent wrote tone.mp3");
    assert!(bytes.len() > 1000, "mp3 is only {} bytes", bytes.len());
    assert!(
        bytes.starts_with(b"ID3") || (bytes[0] == 0xFF && bytes[1] & 0xE0 == 0xE0),
        "tone.mp3 starts with neither an ID3 tag nor an MPEG frame: {:02x?}",
        &bytes[..4]
    );

    // Replacing the MP3 waits for the user's approval (`approval: when overwrite`): the
    // scripted policy says yes for 128k, no for 320k, and the denied call never runs.
    let c6 = call_section(&out, "call_6");
    has(c6, "? approve `convert_audio_to_mp3` replacing");
    has(c6, "(scripted answer: yes)");
    has(c6, "progress: Converting: 100%");
    has(c6, "Bitrate: 128k, size: ");
    let c7 = call_section(&out, "call_7");
    has(c7, "(scripted answer: no)");
    has(c7, "error result (isError: true)");
    has(
        c7,
        "tool `convert_audio_to_mp3` did not run: the call was denied: the user keeps the existing file",
    );
    assert!(
        !c7.contains("progress:"),
        "the denied call ran:
{c7}"
    );

    // Quirks tolerated: "2" for a number, "false" for a boolean.
    let c8 = call_section(&out, "call_8");
    has(c8, "  result:");
    has(c8, "1 message(s) matching query='budget'");

    // 5. The bad call: a model-readable error naming the field, the expectation and what
    // was received, with a suggestion for the misspelt field.
    let c9 = call_section(&out, "call_9");
    has(c9, "error result (isError: true)");
    has(c9, "invalid arguments for tool `todo`");
    has(
        c9,
        "`action`: expected one of \"list\", \"add\", \"done\", received the string \"finish\"",
    );
    has(c9, "`txt`: unknown field (did you mean `text`?)");
    has(c9, "Fix the arguments and call `todo` again.");
    assert!(
        !c9.contains("progress:"),
        "the bad call reached the tool:\n{c9}"
    );

    // The warm worker kept the list across calls.
    let c10 = call_section(&out, "call_10");
    has(
        c10,
        "Completed: Read the release notes (remaining 1 item(s))",
    );
    let c11 = call_section(&out, "call_11");
    has(c11, "1. Summarise unread email from Alice");
    assert!(!c11.contains("2. "), "{c11}");

    // 6. The cancelled call.
    let cancel = call_section(&out, "call_cancel");
    has(cancel, "progress: Fetching http://127.0.0.1:");
    has(cancel, "! user cancelled");
    has(cancel, "error result (isError: true)");
    has(cancel, "/slow was cancelled");

    has(&out, "=== done");
    assert!(
        !stderr.contains("panicked"),
        "agent stderr shows a panic:\n{stderr}"
    );
}

#[test]
fn second_run_in_the_same_data_folder_leaves_tools_unchanged() {
    let data = tempfile::tempdir().unwrap();
    let (first, _) = run_agent(data.path());
    has(&first, "4 installed, 0 updated, 0 unchanged, 0 skipped");
    // Without --show-prompt the prompt is folded to its first lines, so everything before
    // the scripted turn fits one screen.
    has(&first, "more lines; `--show-prompt` prints them)");
    assert!(
        !first.contains("## Guidelines"),
        "the prompt was not folded:\n{first}"
    );
    let before = &first[..first
        .find("=== 5. scripted model turn")
        .expect("a turn heading")];
    let lines = before.lines().count();
    assert!(
        lines <= 50,
        "{lines} lines before the scripted turn:\n{before}"
    );

    let (second, _) = run_agent(data.path());
    for tool in ["convert_audio_to_mp3", "email_db", "todo", "web_fetch"] {
        has(
            &second,
            &format!("unchanged {tool} (version {})", version(tool)),
        );
    }
    has(&second, "0 installed, 0 updated, 4 unchanged, 0 skipped");
    // Still a complete run: the todo list starts empty again (a fresh worker), the MP3 is
    // converted again, the cancelled call is cancelled.
    has(
        call_section(&second, "call_1"),
        "Added: Summarise unread email from Alice (total 1 item(s))",
    );
    has(call_section(&second, "call_5"), "Bitrate: 128k, size: ");
    has(call_section(&second, "call_cancel"), "was cancelled");
}

#[test]
fn the_seed_folder_is_chosen_at_run_time() {
    // A copy of the shipped tools elsewhere, named by TOOLBIND_SEED: the agent syncs from
    // it, not from the folder it was built from.
    let seed = tempfile::tempdir().unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools");
    for tool in ["convert_audio_to_mp3", "email_db", "todo", "web_fetch"] {
        copy_dir(&shipped.join(tool), &seed.path().join(tool));
    }
    let data = tempfile::tempdir().unwrap();
    let (out, _) = run_agent_with(data.path(), &[], &[("TOOLBIND_SEED", seed.path())]);
    has(&out, &format!("=== 1. sync {} -> ", seed.path().display()));
    has(&out, "4 installed, 0 updated, 0 unchanged, 0 skipped");
    has(&out, "=== done");
    // --seed wins over the variable.
    let data = tempfile::tempdir().unwrap();
    let seed_arg = seed.path().to_str().unwrap();
    let (out, _) = run_agent_with(
        data.path(),
        &["--seed", seed_arg],
        &[("TOOLBIND_SEED", Path::new("/nonexistent"))],
    );
    has(&out, &format!("=== 1. sync {seed_arg} -> "));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The `version:` of a shipped tool's TOOL.md, as the sync report prints it.
fn version(tool: &str) -> u64 {
    let md = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../../tools/{tool}/TOOL.md")),
    )
    .unwrap();
    md.lines()
        .find_map(|l| l.strip_prefix("version:"))
        .map_or(0, |v| v.trim().parse().unwrap())
}
