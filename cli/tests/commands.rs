//! `check`, `gen`, `schema`, `prompt`, `docs`, `sync`, `list`: output and exit codes of the
//! built binary.

use crate::common;

use std::path::Path;

use common::{assert_code, fixture, run, shipped_tools, stderr, stdout, toolbind};
use serde_json::Value;
use toolbind_codegen::schema::{Dialect, embedded_schemas};
use toolbind_codegen::{Config, Options, load_tools, prompt};

/// Every error of the malformed fixture folder, as `file:line:col`, with a word of its message.
const MALFORMED: [(&str, &str); 8] = [
    (
        "malformed/bad_default/TOOL.md:9:14",
        "default `medium` of enum `mode`",
    ),
    (
        "malformed/bad_name/TOOL.md:2:7",
        "invalid tool name `bad name`",
    ),
    (
        "malformed/bad_name/TOOL.md:4:10",
        "`version` must be a non-negative integer",
    ),
    (
        "malformed/bad_type/TOOL.md:6:11",
        "unknown input type `strin`",
    ),
    (
        "malformed/misspelt_key/TOOL.md:1:1",
        "missing required key `description`",
    ),
    (
        "malformed/misspelt_key/TOOL.md:3:1",
        "unknown key `descripton`",
    ),
    (
        "malformed/misspelt_key/TOOL.md:8:5",
        "unknown key in input `limit`: `optinal`",
    ),
    ("malformed/no_entry/TOOL.md:4:11", "missing entry file"),
];

#[test]
fn check_reports_every_error_with_its_location() {
    let o = toolbind()
        .current_dir(fixture(""))
        .args(["check", "malformed"])
        .output()
        .unwrap();
    assert_code(&o, 1);
    let err = stderr(&o);
    for (loc, msg) in MALFORMED {
        assert!(
            err.contains(&format!("--> {loc}\n")),
            "{loc} missing:\n{err}"
        );
        assert!(err.contains(msg), "`{msg}` missing:\n{err}");
    }
    // The folder without TOOL.md, the suggestions, the snippet and the summary.
    assert!(err.contains("error: tool folder has no TOOL.md\n--> malformed/no_tool_md"));
    assert!(err.contains("help: did you mean `string`?"), "{err}");
    assert!(err.contains("help: did you mean `description`?"), "{err}");
    assert!(
        err.contains("6 |     type: strin\n  |           ^^^^^"),
        "{err}"
    );
    assert!(err.ends_with("error: 9 errors in 6 files\n"), "{err}");
    assert!(
        !err.contains('\x1b'),
        "no colour when stderr is not a terminal"
    );
    assert_eq!(stdout(&o), "");
}

#[test]
fn check_json_lists_every_error() {
    let o = toolbind()
        .current_dir(fixture(""))
        .args(["check", "--format", "json", "malformed"])
        .output()
        .unwrap();
    assert_code(&o, 1);
    let diags: Vec<Value> = serde_json::from_slice(&o.stdout).expect("a JSON array");
    let locs: Vec<String> = diags
        .iter()
        // A folder-level error (no TOOL.md) has no position: null line and column.
        .filter(|d| !d["line"].is_null())
        .map(|d| {
            format!(
                "{}:{}:{}",
                d["file"].as_str().unwrap(),
                d["line"],
                d["column"]
            )
        })
        .collect();
    assert_eq!(locs, MALFORMED.map(|(l, _)| l.to_owned()));
    for d in &diags {
        assert_eq!(d["severity"], "error");
        assert!(d["message"].as_str().is_some_and(|m| !m.is_empty()), "{d}");
        assert!(d.get("hint").is_some(), "{d}");
    }
    let folder = diags.iter().find(|d| d["line"].is_null()).unwrap();
    assert!(folder["column"].is_null(), "{folder}");
    assert_eq!(folder["file"], "malformed/no_tool_md");
    let typo = diags.iter().find(|d| d["line"] == 6).unwrap();
    assert_eq!(typo["hint"], "did you mean `string`?");
    assert_eq!(diags.len(), 9);
}

#[test]
fn check_clean_folders() {
    let o = run(&[
        "check",
        shipped_tools().to_str().unwrap(),
        fixture("tools").to_str().unwrap(),
    ]);
    assert_code(&o, 0);
    assert!(stderr(&o).starts_with("ok: 10 tools in "), "{}", stderr(&o));
    let o = run(&[
        "check",
        "--format",
        "json",
        fixture("tools").to_str().unwrap(),
    ]);
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "[]\n");
}

/// The compatibility corpus of the workspace tests: files the platform loads.
fn compat() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/compat")
}

#[test]
fn check_passes_with_warnings_and_fails_on_them_when_denied() {
    let dir = compat();
    let o = run(&["check", dir.to_str().unwrap()]);
    assert_code(&o, 0);
    let err = stderr(&o);
    assert!(
        err.contains("warning: unknown key `tags` is ignored\n"),
        "{err}"
    );
    assert!(err.contains("warning: 37 warnings in 12 files"), "{err}");
    assert!(err.contains("\nok: 15 tools in "), "{err}");
    assert!(err.trim_end().ends_with("(37 warnings)"), "{err}");
    assert!(!err.contains("error"), "{err}");

    let o = run(&["check", "--format", "json", dir.to_str().unwrap()]);
    assert_code(&o, 0);
    let diags: Vec<Value> = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(diags.len(), 37);
    assert!(
        diags.iter().all(|d| d["severity"] == "warning"),
        "{diags:#?}"
    );

    let o = run(&["check", "--deny-warnings", dir.to_str().unwrap()]);
    assert_code(&o, 1);
    assert!(
        stderr(&o).contains("(warnings denied by --deny-warnings)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn errors_and_warnings_are_reported_together() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, extra) in [("good", "tags: [a]\n"), ("bad", "descripton: x\n")] {
        let t = tmp.path().join(name);
        std::fs::create_dir_all(&t).unwrap();
        std::fs::write(
            t.join("TOOL.md"),
            format!("---\nname: {name}\ndescription: d\nlanguage: bash\n{extra}---\n"),
        )
        .unwrap();
        std::fs::write(t.join("index.sh"), "cat\n").unwrap();
    }
    let o = run(&["check", tmp.path().to_str().unwrap()]);
    assert_code(&o, 1);
    let err = stderr(&o);
    assert!(err.contains("error: unknown key `descripton`"), "{err}");
    assert!(
        err.contains("warning: unknown key `tags` is ignored"),
        "{err}"
    );
    assert!(
        err.trim_end()
            .ends_with("error: 1 error and 1 warning in 2 files"),
        "{err}"
    );
}

#[test]
fn schema_leaves_out_a_tool_its_provider_rejects_and_says_so() {
    let o = run(&["schema", "--dialect", "gemini", compat().to_str().unwrap()]);
    assert_code(&o, 0);
    let defs: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let names: Vec<&str> = defs["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&"3d_render"), "{names:?}");
    assert!(names.contains(&"dotted_params"), "{names:?}");
    assert!(
        stderr(&o).contains("tool name `3d_render` is rejected by gemini"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn list_loads_tools_with_warnings_and_shows_them() {
    let o = run(&["list", "--dir", compat().to_str().unwrap()]);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("\n15 tools from "), "{out}");
    assert!(out.contains("\nwarnings (the tools load):\n"), "{out}");
    assert!(out.contains("loaded `calculator` from "), "{out}");
    assert!(!out.contains("skipped"), "{out}");
}

#[test]
fn every_command_takes_tools_folders_the_same_way() {
    let a = fixture("tools");
    let b = shipped_tools();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    for cmd in ["check", "gen", "schema", "prompt", "docs", "list"] {
        let positional = run(&[cmd, a, b]);
        let flags = run(&[cmd, "--dir", a, "--dir", b]);
        let mixed = run(&[cmd, "--dir", a, b]);
        assert_code(&positional, 0);
        assert_eq!(stdout(&positional), stdout(&flags), "{cmd}");
        assert_eq!(stdout(&positional), stdout(&mixed), "{cmd}");
        // PI_TOOLS_DIRS, when no folder is given.
        let env = toolbind()
            .arg(cmd)
            .env("PI_TOOLS_DIRS", format!("{a}:{b}"))
            .output()
            .unwrap();
        assert_eq!(stdout(&positional), stdout(&env), "{cmd}");
    }
    // Both folders' tools are there (gen takes several folders, as Config does).
    let o = run(&["gen", a, b]);
    assert!(stdout(&o).contains("pub mod hello_sh {"), "{}", stdout(&o));
    assert!(stdout(&o).contains("pub mod web_fetch {"), "{}", stdout(&o));
}

#[test]
fn list_json_is_machine_readable() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("tagged");
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(
        t.join("TOOL.md"),
        "---\nname: tagged\ndescription: d\nlanguage: bash\ntags: [a]\n---\n",
    )
    .unwrap();
    std::fs::write(t.join("index.sh"), "cat\n").unwrap();
    std::fs::create_dir_all(tmp.path().join("empty")).unwrap();
    let o = run(&["list", "--json", tmp.path().to_str().unwrap()]);
    assert_code(&o, 0);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["tools"][0]["name"], "tagged");
    assert_eq!(v["tools"][0]["language"], "bash");
    assert_eq!(v["tools"][0]["warnings"][0]["severity"], "warning");
    assert!(
        v["skipped"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("no TOOL.md"),
        "{v}"
    );
    assert_eq!(v["notes"], serde_json::json!([]));
}

#[test]
fn color_is_chosen_by_the_flag() {
    let dir = fixture("malformed");
    let dir = dir.to_str().unwrap();
    // NO_COLOR is set by the helper and stderr is a pipe: `auto` means no colour.
    assert!(!stderr(&run(&["check", dir])).contains('\x1b'));
    assert!(stderr(&run(&["--color", "always", "check", dir])).contains("\x1b["));
    assert!(stderr(&run(&["check", dir, "--color=always"])).contains("\x1b["));
    assert!(!stderr(&run(&["check", dir, "--color", "never"])).contains('\x1b'));
}

#[test]
fn completions_for_each_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = run(&["completions", shell]);
        assert_code(&o, 0);
        let script = stdout(&o);
        assert!(script.contains("toolbind"), "{shell}");
        assert!(script.contains("deny-warnings"), "{shell}: {script}");
    }
    assert_code(&run(&["completions", "tcsh"]), 2);
}

#[test]
fn check_defaults_to_the_tools_folder() {
    let o = toolbind()
        .current_dir(shipped_tools().join(".."))
        .arg("check")
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert_eq!(stderr(&o), "ok: 4 tools in tools\n");
    // No ./tools here: an error naming the folder.
    let empty = tempfile::tempdir().unwrap();
    let o = toolbind()
        .current_dir(empty.path())
        .arg("check")
        .output()
        .unwrap();
    assert_code(&o, 1);
    let err = stderr(&o);
    assert!(
        err.contains("error: cannot read tools folder: No such file"),
        "{err}"
    );
    assert!(err.contains("--> tools\n"), "{err}");
}

fn config_output(dir: &Path) -> String {
    Config::new()
        .tools_dir(dir.canonicalize().unwrap())
        .generate()
        .unwrap()
        .rust()
        .unwrap()
        .to_owned()
}

#[test]
fn gen_is_byte_identical_to_config_generate() {
    for dir in [shipped_tools(), fixture("tools")] {
        let o = run(&["gen", dir.to_str().unwrap()]);
        assert_code(&o, 0);
        assert!(stdout(&o).starts_with("// @generated"));
        assert!(
            stdout(&o) == config_output(&dir),
            "gen differs for {}",
            dir.display()
        );
    }
}

#[test]
fn gen_resolves_a_relative_folder_against_the_current_one() {
    // Config::tools_dir resolves relative paths against CARGO_MANIFEST_DIR (set by
    // `cargo run`); the CLI must not.
    let o = toolbind()
        .current_dir(shipped_tools().join(".."))
        .env("CARGO_MANIFEST_DIR", fixture("tools"))
        .args(["gen", "tools"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(stdout(&o) == config_output(&shipped_tools()));
}

#[test]
fn gen_writes_a_file_only_when_it_changes() {
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("tools.rs");
    let dir = fixture("tools");
    let args = ["gen", dir.to_str().unwrap(), "-o", file.to_str().unwrap()];
    let o = run(&args);
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "");
    assert!(stderr(&o).starts_with("wrote "), "{}", stderr(&o));
    assert!(std::fs::read_to_string(&file).unwrap() == config_output(&dir));
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    let o = run(&args);
    assert_code(&o, 0);
    assert!(stderr(&o).ends_with("is up to date\n"), "{}", stderr(&o));
    assert_eq!(std::fs::metadata(&file).unwrap().modified().unwrap(), mtime);
}

#[test]
fn gen_schema_prompt_docs_fail_on_malformed_tools() {
    for cmd in ["gen", "schema", "prompt", "docs"] {
        let o = toolbind()
            .current_dir(fixture(""))
            .args([cmd, "malformed"])
            .output()
            .unwrap();
        assert_code(&o, 1);
        assert_eq!(stdout(&o), "", "{cmd}");
        let err = stderr(&o);
        // Paths as typed, not absolute, even though `gen` goes through absolute paths.
        assert!(
            err.contains("--> malformed/bad_type/TOOL.md:6:11"),
            "{cmd}:\n{err}"
        );
        assert!(
            err.ends_with("error: 9 errors in 6 files\n"),
            "{cmd}:\n{err}"
        );
    }
}

#[test]
fn schema_of_every_dialect_is_valid_json_schema_2020_12() {
    // The validator does reject a bad schema (so the loop below can fail).
    assert!(jsonschema::draft202012::meta::validate(&serde_json::json!({"type": 5})).is_err());
    let dirs = [shipped_tools(), fixture("tools")];
    for dialect in Dialect::ALL {
        for dir in &dirs {
            let tools = load_tools(std::slice::from_ref(dir), &Options::default()).unwrap();
            let o = run(&[
                "schema",
                dir.to_str().unwrap(),
                "--dialect",
                dialect.as_str(),
            ]);
            assert_code(&o, 0);
            let defs: Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(
                defs,
                toolbind_codegen::schema::definitions(&tools, dialect),
                "{dialect}"
            );
            let schemas = embedded_schemas(&defs, dialect);
            assert_eq!(schemas.len(), tools.len(), "{dialect}: {defs}");
            for s in schemas {
                if let Err(e) = jsonschema::draft202012::meta::validate(s) {
                    panic!("{dialect} {}: {e}\n{s:#}", dir.display());
                }
                assert_eq!(s["type"], "object", "{dialect}");
            }
        }
    }
}

#[test]
fn schema_defaults_to_portable_and_rejects_unknown_dialects() {
    let dir = fixture("tools");
    let plain = run(&["schema", dir.to_str().unwrap()]);
    let portable = run(&["schema", dir.to_str().unwrap(), "--dialect", "portable"]);
    assert_code(&plain, 0);
    assert_eq!(plain.stdout, portable.stdout);
    let o = run(&["schema", dir.to_str().unwrap(), "--dialect", "openia"]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("invalid value 'openia' for '--dialect <DIALECT>'"));
    assert!(stderr(&o).contains("openai"), "{}", stderr(&o));
}

#[test]
fn prompt_and_docs_print_the_codegen_text() {
    let dir = shipped_tools();
    let tools = load_tools(std::slice::from_ref(&dir), &Options::default()).unwrap();
    let o = run(&["prompt", dir.to_str().unwrap()]);
    assert_code(&o, 0);
    assert_eq!(stdout(&o), prompt::system_prompt(&tools));
    assert!(stdout(&o).starts_with("## Available tools\n"));
    assert!(stdout(&o).contains("## Guidelines"));
    let o = run(&["docs", dir.to_str().unwrap()]);
    assert_code(&o, 0);
    assert_eq!(stdout(&o), prompt::docs(&tools));
    assert!(stdout(&o).contains("| `todo` |"));
}

#[test]
fn sync_reports_installed_then_unchanged() {
    let data = tempfile::tempdir().unwrap();
    let seed = fixture("tools");
    let args = [
        "sync",
        "--seed",
        seed.to_str().unwrap(),
        "--data",
        data.path().to_str().unwrap(),
    ];
    let o = run(&args);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("installed hello_ts (version 1)\n"), "{out}");
    assert!(
        out.ends_with("6 installed, 0 updated, 0 unchanged, 0 skipped\n"),
        "{out}"
    );
    assert!(data.path().join("wait_sh/index.sh").is_file());
    let o = run(&args);
    assert_code(&o, 0);
    assert!(stdout(&o).ends_with("0 installed, 0 updated, 6 unchanged, 0 skipped\n"));

    let o = run(&[
        "sync",
        "--seed",
        "/no/such/seed",
        "--data",
        data.path().to_str().unwrap(),
    ]);
    assert_code(&o, 1);
    assert!(
        stderr(&o).starts_with("error: sync failed: /no/such/seed"),
        "{}",
        stderr(&o)
    );
    let o = run(&["sync", "--seed", seed.to_str().unwrap()]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("--data <DIR>"), "{}", stderr(&o));
}

#[test]
fn list_reads_pi_tools_dirs_and_explains_skipped_folders() {
    let env = format!(
        "{}:{}",
        fixture("tools").display(),
        fixture("malformed").display()
    );
    let o = toolbind()
        .env("PI_TOOLS_DIRS", &env)
        .arg("list")
        .output()
        .unwrap();
    assert_code(&o, 0);
    let out = stdout(&o);
    let header = out.lines().next().unwrap();
    assert_eq!(header, "NAME      VERSION  LANGUAGE    FOLDER");
    for (name, lang) in [
        ("hello_py", "python"),
        ("hello_sh", "bash"),
        ("wait_ts", "typescript"),
    ] {
        let line = out
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{out}"));
        assert!(line.contains(&format!(" 1        {lang} ")), "{line}");
        assert!(line.ends_with(&format!("fixtures/tools/{name}")), "{line}");
    }
    assert!(out.contains("\n6 tools from "), "{out}");
    assert!(out.contains("\nskipped 6 folders:\n"), "{out}");
    assert!(
        out.contains("no_tool_md: no TOOL.md in the folder"),
        "{out}"
    );
    assert!(
        out.contains("no_entry: tool `no_entry` has no entry file (a bash tool needs index.sh)"),
        "{out}"
    );
    assert!(out.contains("bad_type: malformed TOOL.md\n    "), "{out}");
    assert!(
        out.contains("bad_type/TOOL.md:6:11: unknown input type `strin`"),
        "{out}"
    );

    // --dir wins over PI_TOOLS_DIRS.
    let o = toolbind()
        .env("PI_TOOLS_DIRS", &env)
        .args(["list", "--dir", shipped_tools().to_str().unwrap()])
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(stdout(&o).contains("\n4 tools from "), "{}", stdout(&o));
    assert!(!stdout(&o).contains("skipped"));
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &[][..],
        &["frobnicate"],
        &["check", "--format", "xml"],
        &["call"],
    ] {
        let o = run(args);
        assert_code(&o, 2);
        let err = stderr(&o);
        assert!(
            err.contains("Usage: toolbind") || err.contains("try '--help'"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn list_fails_when_a_tools_folder_cannot_be_read() {
    let o = toolbind()
        .args(["list", "--dir", "/nonexistent/toolbind/tools"])
        .output()
        .unwrap();
    assert_code(&o, 1);
    assert!(
        stdout(&o).contains("cannot read tools folder /nonexistent/toolbind/tools"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_tool_folder_given_as_a_tools_folder_is_an_error_not_zero_tools() {
    let tool = fixture("tools").join("hello_sh");
    let o = run(&["check", tool.to_str().unwrap()]);
    assert_code(&o, 1);
    assert!(
        stderr(&o).contains("it is one tool's folder (it holds a TOOL.md)"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("fixtures/tools`"), "{}", stderr(&o));
    assert_code(&run(&["list", tool.to_str().unwrap()]), 1);
}
