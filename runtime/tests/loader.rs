//! The loader: PI_TOOLS_DIRS, loud skips with reasons, duplicate names.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use toolbind::{LoadWarningKind, Loader, TOOLS_DIRS_ENV, parse_tools_dirs};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/core/loader")
}

fn first() -> PathBuf {
    fixtures().join("first")
}

fn second() -> PathBuf {
    fixtures().join("second")
}

#[test]
fn tools_dirs_split_on_colons_ignoring_empty_entries() {
    assert_eq!(parse_tools_dirs(""), Vec::<PathBuf>::new());
    assert_eq!(parse_tools_dirs(":::"), Vec::<PathBuf>::new());
    assert_eq!(
        parse_tools_dirs("/a::b/c:"),
        vec![PathBuf::from("/a"), PathBuf::from("b/c")]
    );
    assert_eq!(parse_tools_dirs(":/only"), vec![PathBuf::from("/only")]);
    assert_eq!(
        parse_tools_dirs("/with space:/x"),
        vec![PathBuf::from("/with space"), PathBuf::from("/x")]
    );
}

#[test]
fn pi_tools_dirs_come_after_explicit_dirs() {
    // The only test in this binary touching the variable.
    let value = format!(":{}::{}:", second().display(), "/no/such/tools/dir");
    unsafe { std::env::set_var(TOOLS_DIRS_ENV, &value) };
    let loader = Loader::new().dir(first()).env().quiet();
    assert_eq!(
        loader.tools_dirs(),
        vec![first(), second(), PathBuf::from("/no/such/tools/dir")]
    );
    let loaded = loader.load();
    unsafe { std::env::remove_var(TOOLS_DIRS_ENV) };

    let names: Vec<&str> = loaded.registry.names().collect();
    assert_eq!(names, ["alpha", "dup", "beta"]);
    // The env var's missing folder is reported, not fatal.
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.path == Path::new("/no/such/tools/dir")
                && matches!(&w.kind, LoadWarningKind::UnreadableDir { error }
                    if error.kind() == std::io::ErrorKind::NotFound)),
        "{:#?}",
        loaded.warnings
    );
    // Without `.env()` the variable is not read.
    assert_eq!(Loader::new().dir(first()).tools_dirs(), vec![first()]);
}

#[test]
fn bad_folders_are_skipped_with_their_reason() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let loaded = Loader::new()
        .dirs([first(), second()])
        .on_warning(move |w| sink.lock().unwrap().push(w.to_string()))
        .load();

    let names: Vec<&str> = loaded.registry.names().collect();
    assert_eq!(
        names,
        ["alpha", "dup", "beta"],
        "hidden folders and README files are not tools"
    );

    let texts: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        *seen.lock().unwrap(),
        texts,
        "the hook sees every warning, in order"
    );
    let skipped = loaded.warnings.iter().filter(|w| w.skipped()).count();
    assert_eq!(skipped, 4, "{texts:#?}");
    // `dup_a` and `dup_b` hold the tool `dup`: loud, not silent.
    let mismatched: Vec<&Path> = loaded
        .warnings
        .iter()
        .filter(|w| matches!(&w.kind, LoadWarningKind::NameMismatch { tool } if tool == "dup"))
        .map(|w| w.path.as_path())
        .collect();
    assert_eq!(mismatched, [first().join("dup_a"), second().join("dup_b")]);
    assert_eq!(texts.len(), 6, "{texts:#?}");

    let find = |folder: &str| {
        loaded
            .warnings
            .iter()
            .find(|w| w.path.file_name().unwrap() == folder)
            .unwrap_or_else(|| panic!("no warning for {folder}: {texts:#?}"))
    };

    let w = find("empty_folder");
    assert_eq!(w.kind, LoadWarningKind::NoToolFile);
    assert_eq!(
        w.to_string(),
        format!(
            "skipped {}: no TOOL.md in the folder",
            first().join("empty_folder").display()
        )
    );

    let w = find("no_entry");
    assert!(matches!(
        &w.kind,
        LoadWarningKind::NoEntryFile { tool, expected, .. } if tool == "no_entry" && *expected == ["index.py"]
    ));
    assert!(
        w.to_string()
            .ends_with("tool `no_entry` has no entry file (a python tool needs index.py)"),
        "{w}"
    );

    let w = find("broken");
    let LoadWarningKind::Malformed { diagnostics } = &w.kind else {
        panic!("{w}")
    };
    assert_eq!(diagnostics[0].pos.line, 6);
    let text = w.to_string();
    let tool_md = first().join("broken/TOOL.md");
    assert!(
        text.starts_with(&format!(
            "skipped {}: malformed TOOL.md\n  {}:6:",
            first().join("broken").display(),
            tool_md.display()
        )),
        "{text}"
    );
    assert!(
        text.contains("strin") && text.contains("did you mean `string`?"),
        "{text}"
    );

    let w = loaded
        .warnings
        .iter()
        .find(|w| w.path.ends_with("dup_b") && w.skipped())
        .unwrap();
    assert_eq!(
        w.kind,
        LoadWarningKind::Duplicate {
            name: "dup".into(),
            kept: first().join("dup_a"),
            why: "it loads first",
        }
    );
    assert!(
        w.to_string().contains("duplicate tool name `dup`; ")
            && w.to_string().ends_with("wins (it loads first)"),
        "{w}"
    );
}

#[test]
fn first_folder_wins_a_duplicate_name() {
    let loaded = Loader::new().dirs([second(), first()]).quiet().load();
    let dup = loaded.registry.get("dup").unwrap();
    assert_eq!(dup.dir, second().join("dup_b"));
    assert_eq!(dup.description, "Tool dup_b.");
    let w = loaded
        .warnings
        .iter()
        .find(|w| matches!(w.kind, LoadWarningKind::Duplicate { .. }))
        .unwrap();
    assert_eq!(w.path, first().join("dup_a"));
}

#[test]
fn registry_lookups() {
    let loaded = Loader::new().dir(first()).quiet().load();
    let r = &loaded.registry;
    assert_eq!(r.len(), 2);
    assert!(!r.is_empty());
    let alpha = r.get("alpha").unwrap();
    assert_eq!(alpha.entry.as_deref(), Some("index.sh"));
    assert_eq!(r.fingerprint("alpha"), Some(alpha.fingerprint()));
    assert!(r.get("broken").is_none());
    assert!(r.fingerprint("nope").is_none());
    let mut copy = r.clone();
    assert!(copy.insert(alpha.clone()).is_err(), "a name is taken once");
}

/// Helper run by `warnings_go_to_stderr_by_default` as a child process.
#[test]
#[ignore = "helper: run as a child process by warnings_go_to_stderr_by_default"]
fn loader_child() {
    if std::env::var_os("TOOLBIND_LOADER_CHILD").is_none() {
        return;
    }
    let loaded = toolbind::load(&[first()]);
    println!("loaded {}", loaded.registry.len());
}

#[test]
fn warnings_go_to_stderr_by_default() {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "loader_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("TOOLBIND_LOADER_CHILD", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("loaded 2"), "{stdout}");
    for folder in ["empty_folder", "no_entry", "broken"] {
        let needle = format!(
            "toolbind: warning: skipped {}",
            first().join(folder).display()
        );
        assert!(stderr.contains(&needle), "missing {needle:?} in:\n{stderr}");
    }
}

fn write_tool(root: &Path, folder: &str, name: &str, description: &str) {
    let dir = root.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("TOOL.md"),
        format!("---\nname: {name}\ndescription: {description}\nlanguage: bash\n---\n"),
    )
    .unwrap();
    std::fs::write(dir.join("index.sh"), "cat\n").unwrap();
}

#[test]
fn a_tool_is_never_shadowed_silently() {
    let tmp = tempfile::tempdir().unwrap();
    // `aaa` loads first and claims `shadowed`, the tool of the folder named after it.
    write_tool(tmp.path(), "aaa", "shadowed", "The impostor.");
    write_tool(tmp.path(), "shadowed", "shadowed", "The real one.");
    let loaded = Loader::new().dir(tmp.path()).quiet().load();
    let t = loaded.registry.get("shadowed").unwrap();
    assert_eq!(t.description, "The real one.");
    let texts: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    // Loud: the impostor's folder is named, and why the other one won.
    assert!(
        texts.iter().any(|w| w.starts_with(&format!(
            "skipped {}: duplicate tool name `shadowed`; {} wins (its folder is named after the tool)",
            tmp.path().join("aaa").display(),
            tmp.path().join("shadowed").display()
        ))),
        "{texts:#?}"
    );
    assert!(
        texts
            .iter()
            .any(|w| w.contains("holds the tool `shadowed`: the folder is named differently")),
        "{texts:#?}"
    );
    // The same the other way round, and across tools folders: still the owner.
    let other = tempfile::tempdir().unwrap();
    write_tool(other.path(), "zzz", "shadowed", "Another impostor.");
    let loaded = Loader::new()
        .dir(other.path())
        .dir(tmp.path())
        .quiet()
        .load();
    assert_eq!(
        loaded.registry.get("shadowed").unwrap().description,
        "The real one."
    );
}

#[test]
fn control_characters_in_folder_names_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    write_tool(tmp.path(), "evil\nloaded `fake`", "evil", "Forged.");
    let loaded = Loader::new().dir(tmp.path()).quiet().load();
    assert!(loaded.registry.get("evil").is_none());
    let w = &loaded.warnings[0];
    assert_eq!(w.kind, LoadWarningKind::BadFolderName);
    let text = w.to_string();
    assert!(!text.contains('\n'), "{text}");
    assert!(text.contains("evil\\nloaded"), "{text}");
}

#[test]
fn a_tool_folder_given_as_a_tools_folder_is_its_own_kind() {
    let tmp = tempfile::tempdir().unwrap();
    let tool = tmp.path().join("solo");
    std::fs::create_dir_all(&tool).unwrap();
    std::fs::write(
        tool.join("TOOL.md"),
        "---\nname: solo\ndescription: d\n---\n",
    )
    .unwrap();
    let loaded = Loader::new().dir(&tool).quiet().load();
    assert!(loaded.registry.is_empty());
    let [w] = &loaded.warnings[..] else {
        panic!("{:#?}", loaded.warnings)
    };
    let LoadWarningKind::NotAToolsFolder { diagnostic } = &w.kind else {
        panic!("{w:#?}")
    };
    assert!(
        diagnostic.message.contains("one tool's folder"),
        "{diagnostic:?}"
    );
    assert!(
        w.to_string()
            .contains("pass the folder that holds the tool folders"),
        "{w}"
    );
}
