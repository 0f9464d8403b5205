//! `toolbind call` and a tool that needs approval (TOOL.md `approval: always`): asked on a
//! real terminal (a pty, from `script`), approved with `--yes`, and denied, saying how to
//! allow it, when there is no terminal (`setsid`: no controlling terminal).

use crate::common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use common::{bin, fixture};

const ARGS: &str = r#"{"path": "a.txt", "token": "s3cret-value"}"#;

fn base() -> Vec<String> {
    vec![
        "call".into(),
        "remove_note".into(),
        "--dir".into(),
        fixture("ask_tools").display().to_string(),
        "--args".into(),
        ARGS.into(),
    ]
}

/// `toolbind call ...` run by `script` on a pty of its own, typing `typed` on it.
fn on_a_terminal(typed: &str) -> Output {
    on_a_terminal_with(base(), typed)
}

/// `toolbind ARGS` run by `script` on a pty of its own, its input and output piped.
fn script(args: Vec<String>) -> std::process::Child {
    let quoted: Vec<String> = std::iter::once(bin().to_owned())
        .chain(args)
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect();
    Command::new("script")
        .args(["-qec", &quoted.join(" "), "/dev/null"])
        .env_remove("PI_TOOLS_DIRS")
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script (bsdutils) runs")
}

fn on_a_terminal_with(args: Vec<String>, typed: &str) -> Output {
    let mut child = script(args);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(typed.as_bytes()).unwrap();
    // stdin stays open until the end: its end would reach the terminal as end of input.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("toolbind call on a terminal did not end within 60 s")
        .unwrap();
    drop(stdin);
    out
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn the_terminal_asks_and_yes_runs_the_tool() {
    let o = on_a_terminal("y\n");
    let t = text(&o);
    assert!(
        t.contains("`remove_note` needs your approval to run with:"),
        "{t}"
    );
    assert!(t.contains("\"path\": \"a.txt\""), "{t}");
    // The credential is not shown; the person approves what they can see.
    assert!(
        t.contains("[sensitive]") && !t.contains("s3cret-value"),
        "{t}"
    );
    assert!(t.contains("removed a.txt"), "{t}");
    assert_eq!(o.status.code(), Some(0), "{t}");
}

#[test]
fn the_terminal_asks_and_no_denies() {
    let o = on_a_terminal("n\n");
    let t = text(&o);
    assert!(t.contains("Run it? [y/N]"), "{t}");
    assert!(t.contains("denied: not approved at the terminal"), "{t}");
    assert!(!t.contains("removed a.txt"), "{t}");
    assert_eq!(o.status.code(), Some(1), "{t}");
}

#[test]
fn without_a_terminal_the_call_is_denied_and_yes_approves_it() {
    let o = Command::new("setsid")
        .arg("-w")
        .arg(bin())
        .args(base())
        .arg("--json")
        .env_remove("PI_TOOLS_DIRS")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("{out}"));
    assert_eq!(v["stop"]["kind"], "denied", "{v}");
    let said = v["content"][0]["text"].as_str().unwrap();
    assert!(said.contains("no terminal to ask on"), "{said}");
    assert!(said.contains("--yes"), "{said}");
    assert_eq!(o.status.code(), Some(1));
    let o = Command::new("setsid")
        .arg("-w")
        .arg(bin())
        .args(base())
        .arg("--yes")
        .env_remove("PI_TOOLS_DIRS")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("removed a.txt"));
}

fn copies() -> Vec<String> {
    vec![
        "call".into(),
        "make_copies".into(),
        "--dir".into(),
        fixture("ask_tools").display().to_string(),
    ]
}

#[test]
fn a_tool_fills_its_form_and_confirms_on_the_terminal() {
    // name, copies (below its minimum first), paper (not a choice first, then one),
    // contact (not an email first), then the confirmation.
    let o = on_a_terminal_with(copies(), "Ada\n0\n3\nfolio\na4\nada\nada@example.org\ny\n");
    let t = text(&o);
    assert!(
        t.contains("`make_copies` asks: Who are the copies for?"),
        "{t}"
    );
    assert!(t.contains("name (string) - their name:"), "{t}");
    assert!(t.contains("paper (one of a4, letter, optional)"), "{t}");
    assert!(
        t.contains("`folio` is not one of a4, letter; again:"),
        "{t}"
    );
    assert!(t.contains("`copies` is below its minimum 1; again:"), "{t}");
    assert!(t.contains("contact (string, email, optional)"), "{t}");
    assert!(t.contains("`contact` is not a valid email; again:"), "{t}");
    assert!(
        t.contains("`make_copies` asks: Make 3 copies for Ada?"),
        "{t}"
    );
    assert!(t.contains("make_copies [notice]: making 3 copies"), "{t}");
    let cwd = std::env::current_dir().unwrap();
    assert!(
        t.contains(&format!(
            "made 3 copies for Ada in file://{}",
            cwd.display()
        )),
        "{t}"
    );
    assert_eq!(o.status.code(), Some(0), "{t}");
    // Declined at the first field.
    let t = text(&on_a_terminal_with(copies(), "!decline\n"));
    assert!(t.contains("no copies (decline)"), "{t}");
}

#[test]
fn without_a_terminal_a_question_is_refused_and_the_tool_is_told() {
    let o = Command::new("setsid")
        .arg("-w")
        .arg(bin())
        .args(copies())
        .env_remove("PI_TOOLS_DIRS")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let t = text(&o);
    assert!(t.contains("there is no terminal to ask on"), "{t}");
    assert_eq!(o.status.code(), Some(1), "{t}");
}

#[test]
fn a_tool_cannot_send_escape_sequences_to_the_terminal() {
    let args = vec![
        "call".into(),
        "sneaky_confirm".into(),
        "--dir".into(),
        fixture("ask_tools").display().to_string(),
    ];
    let o = on_a_terminal_with(args, "y\n");
    let t = text(&o);
    // The OSC 52 (clipboard) and OSC 0 (title) sequences and the screen clear arrive as
    // text, not as escapes.
    assert!(
        !t.contains("\u{1b}]52"),
        "a raw escape reached the terminal: {t:?}"
    );
    assert!(
        !t.contains("\u{1b}[2J"),
        "a raw escape reached the terminal: {t:?}"
    );
    assert!(t.contains(r"\u{1b}]52;c;ZXZpbA==\u{7}"), "{t:?}");
    assert!(t.contains(r"\u{1b}[2Jcleared?"), "{t:?}");
    assert!(t.contains("went on"), "{t:?}");
}

#[test]
fn a_tool_that_cannot_do_without_a_model_is_refused_before_it_runs() {
    let out = common::run(&[
        "call",
        "summarize",
        "--dir",
        fixture("ask_tools").to_str().unwrap(),
        "--args",
        r#"{"text": "a long story"}"#,
    ]);
    common::assert_code(&out, 1);
    let err = common::stderr(&out);
    assert!(
        err.contains("asks: [sampling]") && err.contains("nothing ran"),
        "{err}"
    );
}

#[test]
fn a_question_nobody_answers_on_the_terminal_fails_after_ask_timeout() {
    let mut args = copies();
    args.extend(["--ask-timeout".into(), "1".into()]);
    let o = on_a_terminal_with(args, "");
    let t = text(&o);
    assert!(
        t.contains("`make_copies` asks: Who are the copies for?"),
        "{t}"
    );
    assert!(t.contains("`ctx.elicit` got no answer within 1 s"), "{t}");
    assert_eq!(o.status.code(), Some(1), "{t}");
}

#[test]
fn a_question_that_timed_out_leaves_the_terminal_to_the_next() {
    // The first question runs out (--ask-timeout 2) with half a line typed; the line
    // typed once the second is shown must reach the second, not a prompt nobody awaits,
    // and what was typed for the first must not join it.
    let mut child = script(vec![
        "call".into(),
        "ask_twice".into(),
        "--dir".into(),
        fixture("ask_tools").display().to_string(),
        "--ask-timeout".into(),
        "2".into(),
    ]);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = std::io::Read::read(&mut stdout, &mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut seen = String::new();
    let mut read_until = |what: &str| {
        let end = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !seen.contains(what) {
            let left = end.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left) {
                Ok(bytes) => seen.push_str(&String::from_utf8_lossy(&bytes)),
                Err(_) => {
                    panic!("no {what:?} on the terminal (it closed, or 30 s passed):\n{seen}")
                }
            }
        }
        seen.clone()
    };
    read_until("asks: First?");
    stdin.write_all(b"ye").unwrap();
    read_until("asks: Second?");
    stdin.write_all(b"y\n").unwrap();
    let t = read_until("first: ");
    let t = if t.contains("second: ") {
        t
    } else {
        read_until("second: ")
    };
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    assert!(t.contains("(no longer asked)"), "{t}");
    assert!(t.contains("first: unanswered, second: yes"), "{t}");
}
