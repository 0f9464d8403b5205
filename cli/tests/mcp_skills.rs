//! `toolbind mcp skills`: the MCP client reading a server's skills (SEP-2640,
//! `Runtime::mcp_skills`, `Runtime::mcp_skill_file`) — against `toolbind serve --skills`
//! (a real server of the extension), and against a server that lies about its files
//! (fixtures/mcp_servers/skills_hostile.py): a wrong digest or size is an error and the
//! bytes are never printed; listing reads no file; a page loop and a bad entry are
//! refused; a skills-only server (no tools) is read.

use crate::common;

use std::process::Output;

use common::{assert_code, bin, fixture, stderr, stdout, toolbind};

fn hostile(mode: &str, extra: &[&str], log: &std::path::Path) -> Output {
    let script = fixture("mcp_servers/skills_hostile.py");
    toolbind()
        .args(["mcp", "skills", "--name", "h", "--sandbox", "off"])
        .args(extra)
        .arg("--")
        .arg("env")
        .arg(format!("SKILLS_LOG={}", log.display()))
        .arg("python3")
        .arg(&script)
        .arg(mode)
        .output()
        .unwrap()
}

fn methods(log: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_servers_skills_are_listed_read_and_checked() {
    let empty = tempfile::tempdir().unwrap();
    let skills = fixture("skills");
    let serve = |extra: &[&str]| {
        toolbind()
            .args(["mcp", "skills", "--name", "s", "--sandbox", "off"])
            .args(extra)
            .arg("--")
            .arg(bin())
            .args(["serve", "--skills"])
            .arg(&skills)
            .arg("--dir")
            .arg(empty.path())
            .output()
            .unwrap()
    };
    let out = serve(&["--json"]);
    assert_code(&out, 0);
    let listed: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(listed[0]["name"], "pdf-processing", "{listed}");
    assert_eq!(listed[0]["files"].as_array().unwrap().len(), 3, "{listed}");
    assert_eq!(listed[0]["frontmatter"]["license"], "Apache-2.0");

    let out = serve(&["--get", "pdf-processing"]);
    assert_code(&out, 0);
    assert!(
        stdout(&out).starts_with("---\nname: pdf-processing\n"),
        "{}",
        stdout(&out)
    );

    let out = serve(&["--verify"]);
    assert_code(&out, 0);
    assert!(
        stderr(&out).contains("3 of 3 files hold their digest"),
        "{}",
        stderr(&out)
    );

    let out = serve(&["--get", "nope"]);
    assert_code(&out, 1);
    assert!(
        stderr(&out).contains("serves no skill `nope`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn listing_reads_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let out = hostile("good", &[], &log);
    assert_code(&out, 0);
    assert!(
        stdout(&out).contains("notes  Keep short notes.  (2 files"),
        "{}",
        stdout(&out)
    );
    let asked = methods(&log);
    assert!(asked.contains(&"skills/list".to_owned()), "{asked:?}");
    assert!(
        !asked.contains(&"resources/read".to_owned()),
        "read while listing: {asked:?}"
    );
}

#[test]
fn a_file_that_is_not_what_its_digest_says_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = hostile("baddigest", &["--verify"], &dir.path().join("a"));
    assert_code(&out, 1);
    let err = stderr(&out);
    assert!(err.contains("skill://notes/refs/a.md"), "{err}");
    assert!(err.contains("1 of 2 files hold their digest"), "{err}");
    assert!(!stdout(&out).contains("Something else"), "{}", stdout(&out));

    // The file's digest holds, but it says something else than its listing.
    let out = hostile("liar", &["--get", "notes"], &dir.path().join("l"));
    assert_code(&out, 1);
    assert!(stdout(&out).is_empty(), "printed: {}", stdout(&out));
    assert!(
        stderr(&out).contains(
            "its frontmatter is not the one skills/list gave (it differs in description)"
        ),
        "{}",
        stderr(&out)
    );
    let out = hostile("liar", &["--verify"], &dir.path().join("m"));
    assert_code(&out, 1);

    let out = hostile("badsize", &["--get", "notes"], &dir.path().join("b"));
    assert_code(&out, 1);
    assert!(stdout(&out).is_empty(), "printed: {}", stdout(&out));
    assert!(
        stderr(&out).contains("skill://notes/SKILL.md"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_page_loop_a_bad_entry_and_a_skills_only_server() {
    let dir = tempfile::tempdir().unwrap();
    let out = hostile("loop", &[], &dir.path().join("a"));
    assert_code(&out, 1);
    assert!(
        stderr(&out).contains("a cursor it gave before"),
        "{}",
        stderr(&out)
    );

    let out = hostile("badname", &[], &dir.path().join("b"));
    assert_code(&out, 1);
    assert!(stderr(&out).contains("a skill entry"), "{}", stderr(&out));

    let out = hostile("notools", &["--verify"], &dir.path().join("c"));
    assert_code(&out, 0);
    assert!(
        stderr(&out).contains("2 of 2 files hold their digest"),
        "{}",
        stderr(&out)
    );
}
