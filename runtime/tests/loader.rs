//! The loader: PI_TOOLS_DIRS, loud skips with reasons, duplicate names.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use toolbind::Loader;
use toolbind::loader::{LoadWarningKind, TOOLS_DIRS_ENV, parse_tools_dirs};

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

/// The variable is set for a process of this test binary of its own
/// (`pi_tools_dirs_child`): a test must not change the environment every other test
/// runs in.
#[test]
fn pi_tools_dirs_come_after_explicit_dirs() {
    let value = format!(":{}::{}:", second().display(), "/no/such/tools/dir");
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "loader::pi_tools_dirs_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(TOOLS_DIRS_ENV, &value)
        .env("TOOLBIND_LOADER_ENV_CHILD", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(stdout.contains("1 passed"), "{stdout}");
}

#[test]
#[ignore = "helper: run as a child process by pi_tools_dirs_come_after_explicit_dirs"]
fn pi_tools_dirs_child() {
    if std::env::var_os("TOOLBIND_LOADER_ENV_CHILD").is_none() {
        return;
    }
    let loader = Loader::new().dir(first()).env().quiet();
    assert_eq!(
        loader.tools_dirs(),
        vec![first(), second(), PathBuf::from("/no/such/tools/dir")]
    );
    let loaded = loader.load();

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
    assert_eq!(dup.dir(), second().join("dup_b"));
    assert_eq!(dup.description(), "Tool dup_b.");
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
    assert_eq!(alpha.entry(), Some(alpha.dir().join("index.sh")));
    assert_eq!(alpha.fingerprint(), alpha.spec().fingerprint());
    assert!(r.get("broken").is_none());
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
    let loaded = toolbind::loader::load(&[first()]);
    println!("loaded {}", loaded.registry.len());
}

#[test]
fn warnings_go_to_stderr_by_default() {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "loader::loader_child",
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
    assert_eq!(t.description(), "The real one.");
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
        loaded.registry.get("shadowed").unwrap().description(),
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

/// A tool named `..` or `.` would get its state root (or the state folder
/// itself) as its state folder. The loader skips it, loudly, with the reason.
#[test]
fn a_tool_named_dot_dot_or_dot_is_skipped_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    write_tool(tmp.path(), "up", "'..'", "Reaches the state root.");
    write_tool(tmp.path(), "here", "'.'", "Replaces its siblings.");
    write_tool(tmp.path(), "hidden", "'.cache'", "Hides.");
    write_tool(tmp.path(), "fine", "fine", "Fine.");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let loaded = Loader::new()
        .dir(tmp.path())
        .on_warning(move |w| sink.lock().unwrap().push(w.to_string()))
        .load();
    let names: Vec<&str> = loaded.registry.names().collect();
    assert_eq!(names, ["fine"], "{:#?}", loaded.warnings);
    for (folder, name) in [("up", ".."), ("here", "."), ("hidden", ".cache")] {
        let w = loaded
            .warnings
            .iter()
            .find(|w| w.path == tmp.path().join(folder))
            .unwrap_or_else(|| panic!("{folder} not reported: {:#?}", loaded.warnings));
        assert!(w.skipped(), "{w}");
        let LoadWarningKind::Malformed { diagnostics } = &w.kind else {
            panic!("{w:#?}")
        };
        assert!(diagnostics[0].is_error(), "{w}");
        let text = w.to_string();
        assert!(
            text.contains(&format!("tool name `{name}` cannot be used")),
            "{text}"
        );
        assert!(text.contains("becomes a folder name"), "{text}");
        // The hook (and by default stderr) got it too: loud.
        assert!(seen.lock().unwrap().contains(&text));
    }
}

/// A TOOL.md that is a symlink out of its folder (to `/etc/shadow`, to
/// `/proc/self/environ`) is never read; the warning names the file and quotes nothing.
#[test]
fn a_tool_md_symlinked_out_of_the_folder_is_skipped_unread() {
    let tmp = tempfile::tempdir().unwrap();
    let secret = tmp.path().join("shadow");
    std::fs::write(&secret, "root:$6$SECRETHASH$x:19000::::::\n").unwrap();
    let tools = tmp.path().join("tools");
    for (folder, target) in [
        ("shadow", secret.clone()),
        ("environ", PathBuf::from("/proc/self/environ")),
    ] {
        let dir = tools.join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("index.sh"), "cat\n").unwrap();
        std::os::unix::fs::symlink(&target, dir.join("TOOL.md")).unwrap();
    }
    // An entry file leading out of the folder: never run.
    write_tool(&tools, "runner", "runner", "Runs a foreign script.");
    std::fs::write(tmp.path().join("foreign.sh"), "cat /etc/shadow\n").unwrap();
    std::fs::remove_file(tools.join("runner/index.sh")).unwrap();
    std::os::unix::fs::symlink("../../foreign.sh", tools.join("runner/index.sh")).unwrap();

    let loaded = Loader::new().dir(&tools).quiet().load();
    assert!(
        loaded.registry.is_empty(),
        "{:?}",
        loaded.registry.names().collect::<Vec<_>>()
    );
    for (folder, file) in [
        ("shadow", "TOOL.md"),
        ("environ", "TOOL.md"),
        ("runner", "index.sh"),
    ] {
        let w = loaded
            .warnings
            .iter()
            .find(|w| w.path == tools.join(folder))
            .unwrap_or_else(|| panic!("{folder}: {:#?}", loaded.warnings));
        let LoadWarningKind::Unreadable { diagnostic } = &w.kind else {
            panic!("{w:#?}")
        };
        assert_eq!(diagnostic.file, tools.join(folder).join(file));
        let text = w.to_string();
        assert!(
            text.contains(&format!("{file} is a symlink out of the tool folder")),
            "{text}"
        );
        for leak in ["root:", "SECRETHASH", "PATH=", "HOME=", "cat /etc/shadow"] {
            assert!(!text.contains(leak), "quoted `{leak}`: {text}");
        }
    }
}

/// A 200 MB TOOL.md is refused from its size, not read (reading it took 4 GB).
#[test]
fn a_huge_tool_md_is_refused_without_reading_it() {
    let tmp = tempfile::tempdir().unwrap();
    write_tool(tmp.path(), "huge", "huge", "Huge.");
    std::fs::File::options()
        .write(true)
        .open(tmp.path().join("huge/TOOL.md"))
        .unwrap()
        .set_len(200 << 20)
        .unwrap();
    let text = the_unreadable_warning(&Loader::new().dir(tmp.path()).quiet().load());
    assert!(
        text.contains("TOOL.md is 209715200 bytes, over the limit of 1048576 bytes (1 MiB)"),
        "{text}"
    );
}

/// The load's one warning, which must say a file was unreadable; its text.
#[track_caller]
fn the_unreadable_warning(loaded: &toolbind::loader::Loaded) -> String {
    let [w] = &loaded.warnings[..] else {
        panic!("{:#?}", loaded.warnings)
    };
    assert!(
        matches!(w.kind, LoadWarningKind::Unreadable { .. }),
        "{w:#?}"
    );
    w.to_string()
}

/// A FIFO entry file is reported as a FIFO, not as missing, and the
/// load does not block on it.
#[test]
fn a_fifo_entry_file_is_reported_as_a_fifo_without_blocking() {
    let tmp = tempfile::tempdir().unwrap();
    write_tool(tmp.path(), "piped", "piped", "Piped.");
    let entry = tmp.path().join("piped/index.sh");
    std::fs::remove_file(&entry).unwrap();
    let c = std::ffi::CString::new(entry.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { nix::libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let dir = tmp.path().to_path_buf();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(Loader::new().dir(dir).quiet().load());
    });
    let loaded = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the load blocked on the FIFO");
    let text = the_unreadable_warning(&loaded);
    assert!(
        text.contains("index.sh is a FIFO (named pipe), not a regular file"),
        "{text}"
    );
    assert!(!text.contains("no entry file"), "{text}");
}

/// `Registry::get` describes a loaded tool in the runtime's own terms: every getter reads
/// what TOOL.md says, and the schema is the portable one the generated `SCHEMA` carries.
#[test]
fn tool_info_describes_the_loaded_tool() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/core/tools");
    let loaded = Loader::new().dir(&dir).quiet().load();
    let search = loaded.registry.get("search").expect("search loads");
    assert_eq!(search.name(), "search");
    assert_eq!(search.label(), "Web Search");
    assert_eq!(
        search.description(),
        "Search the web and return the top results."
    );
    assert_eq!(search.version(), 2);
    assert_eq!(search.language(), toolbind::tool::Language::Python);
    assert_eq!(search.timeout(), Some(std::time::Duration::from_secs(30)));
    assert_eq!(search.dir(), dir.join("search"));
    assert_eq!(search.file(), dir.join("search/TOOL.md"));
    assert_eq!(search.entry(), Some(dir.join("search/index.py")));
    assert_eq!(search.prompt_line(), search.description());
    assert!(
        search.output_schema().is_none(),
        "search declares no outputs"
    );
    let schema = search.input_schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], serde_json::json!(["query"]));
    assert_eq!(
        schema["properties"]["mode"]["enum"],
        serde_json::json!(["web", "news", "images"])
    );
    assert_eq!(
        *schema,
        toolbind_codegen::schema::portable(search.spec()),
        "the one portable schema"
    );
    assert_eq!(search.fingerprint(), search.spec().fingerprint());
    assert_eq!(search.annotations(), toolbind::tool::Annotations::default());
    // Iteration hands out the same descriptions, in load order.
    let names: Vec<&str> = loaded.registry.iter().map(|t| t.name()).collect();
    assert_eq!(names, loaded.registry.names().collect::<Vec<_>>());
}
