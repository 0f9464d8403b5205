//! Played as the attacker who publishes a tool: a tool name that is a path
//! (`..`, `.`), a TOOL.md that is a symlink to a secret, a 200 MB TOOL.md, a FIFO entry
//! file. Each is refused with a message naming the file, fast, and quoting nothing.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use toolbind_codegen::model::Pos;
use toolbind_codegen::{
    Diagnostic, MAX_TOOL_FILE_BYTES, Options, Severity, parse_tool_dir, parse_tool_md,
};

/// A scratch folder removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Self {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p =
            std::env::temp_dir().join(format!("toolbind-hostile-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Scratch(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `f` on another thread and fails the test if it takes longer than `secs`: a read
/// that blocks on a FIFO, or reads 200 MB, shows up as a timeout instead of a hang.
fn bounded<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(secs))
        .unwrap_or_else(|_| panic!("did not finish within {secs} s"))
}

fn errors_of(dir: &Path) -> Vec<Diagnostic> {
    let dir = dir.to_path_buf();
    bounded(20, move || {
        match parse_tool_dir(&dir, &Options::default()) {
            Ok(t) => panic!("expected errors, got the tool `{}`", t.name),
            Err(d) => d,
        }
    })
}

fn bash_tool(dir: &Path, tool_md: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("TOOL.md"), tool_md).unwrap();
    std::fs::write(dir.join("index.sh"), "cat\n").unwrap();
}

#[test]
fn a_tool_name_that_is_not_one_folder_name_is_an_error_always() {
    for portable_names in [true, false] {
        let opts = Options::default()
            .portable_names(portable_names)
            .require_entry(false);
        for (name, why) in [
            ("'..'", "`..` names a folder itself or its parent"),
            ("'.'", "`.` names a folder itself or its parent"),
            ("'.hidden'", "starts with `.`"),
            ("'a/b'", "path separator"),
            ("'a\\b'", "path separator"),
            ("\"a\\nb\"", "control character"),
        ] {
            let src = format!("---\nname: {name}\ndescription: d\n---\n");
            let e = parse_tool_md(
                Path::new("t/TOOL.md"),
                Path::new("t"),
                src.as_bytes(),
                &opts,
            )
            .expect_err(name);
            assert_eq!(e.len(), 1, "{name}: {e:#?}");
            let d = &e[0];
            assert_eq!(d.severity, Severity::Error, "{name}: {}", d.plain());
            assert_eq!(d.pos, Pos::new(2, 7), "{}", d.plain());
            assert!(d.message.contains("cannot be used"), "{}", d.plain());
            assert!(d.message.contains(why), "{name}: {}", d.plain());
            assert!(
                d.message.contains(
                    "a tool name becomes a folder name (its state folder, its synced folder)"
                ),
                "{}",
                d.plain()
            );
            assert!(
                d.hint.as_deref().is_some_and(|h| h.contains("e.g. `")),
                "{}",
                d.plain()
            );
            // One line, whatever the name holds.
            assert!(!d.plain().contains('\n'), "{:?}", d.plain());
        }
    }
    let long = "a".repeat(129);
    let src = format!("---\nname: {long}\ndescription: d\n---\n");
    let opts = Options::default()
        .portable_names(false)
        .require_entry(false);
    let e = parse_tool_md(
        Path::new("t/TOOL.md"),
        Path::new("t"),
        src.as_bytes(),
        &opts,
    )
    .unwrap_err();
    assert!(e[0].message.contains("longer than 128 bytes"), "{e:#?}");
}

#[test]
fn a_tool_md_symlinked_out_of_its_folder_is_named_never_quoted() {
    let s = Scratch::new("symlink");
    // A secret first line: a "missing frontmatter" error would quote it.
    let secret = s.0.join("shadow");
    std::fs::write(
        &secret,
        "root:$6$SECRETHASH$abc:19000:0:99999:7:::\nTOKEN=ci-secret-value\n",
    )
    .unwrap();
    let tools = s.0.join("tools");
    let tool = tools.join("evil");
    std::fs::create_dir_all(&tool).unwrap();
    std::fs::write(tool.join("index.sh"), "cat\n").unwrap();
    symlink(&secret, tool.join("TOOL.md")).unwrap();
    // The real attack: /proc/self/environ holds the checker's environment.
    let env_tool = tools.join("environ");
    std::fs::create_dir_all(&env_tool).unwrap();
    symlink("/proc/self/environ", env_tool.join("TOOL.md")).unwrap();
    // A relative link climbing out, and one to nothing.
    let up = tools.join("up");
    std::fs::create_dir_all(&up).unwrap();
    symlink("../../shadow", up.join("TOOL.md")).unwrap();
    let dangling = tools.join("dangling");
    std::fs::create_dir_all(&dangling).unwrap();
    symlink("nowhere.md", dangling.join("TOOL.md")).unwrap();

    for dir in [&tool, &env_tool, &up, &dangling] {
        let e = errors_of(dir);
        assert_eq!(e.len(), 1, "{e:#?}");
        let text = format!("{}\n{}", e[0].plain(), e[0].render(false));
        assert_eq!(e[0].file, dir.join("TOOL.md"), "names the file: {text}");
        assert!(
            e[0].message
                .contains("TOOL.md is a symlink out of the tool folder"),
            "{text}"
        );
        for leak in ["root:", "SECRETHASH", "TOKEN", "ci-secret-value", "PATH="] {
            assert!(!text.contains(leak), "quoted `{leak}`: {text}");
        }
        assert!(
            !text.contains("missing frontmatter"),
            "the target was read: {text}"
        );
    }
    // The same rule through the whole-folder loader (`check`, build.rs, the macro).
    let all = toolbind_codegen::load_tools(std::slice::from_ref(&tools), &Options::default())
        .unwrap_err();
    let text = all.render(false);
    assert!(
        !text.contains("SECRETHASH") && !text.contains("PATH="),
        "{text}"
    );
    assert_eq!(all.errors().count(), 4, "{text}");
}

#[test]
fn a_symlink_inside_the_folder_is_still_followed() {
    let s = Scratch::new("inside");
    let tool = s.0.join("docs_tool");
    std::fs::create_dir_all(tool.join("docs")).unwrap();
    std::fs::write(
        tool.join("docs/real.md"),
        "---\nname: docs_tool\ndescription: d\nlanguage: bash\n---\n",
    )
    .unwrap();
    symlink("docs/real.md", tool.join("TOOL.md")).unwrap();
    std::fs::write(tool.join("run.sh"), "cat\n").unwrap();
    symlink("run.sh", tool.join("index.sh")).unwrap();
    let t = parse_tool_dir(&tool, &Options::default()).unwrap();
    assert_eq!(t.name, "docs_tool");
    assert_eq!(t.entry.as_deref(), Some("index.sh"));
}

#[test]
fn a_200_mb_tool_md_is_refused_from_its_size_without_being_read() {
    let s = Scratch::new("huge");
    let tool = s.0.join("huge");
    bash_tool(&tool, "");
    let size = 200u64 << 20;
    // Sparse: costs no disk and no time to make, but reading it would cost 200 MB.
    std::fs::File::options()
        .write(true)
        .open(tool.join("TOOL.md"))
        .unwrap()
        .set_len(size)
        .unwrap();
    // Refused from its metadata: the error is the size, never what parsing it would say.
    let e = errors_of(&tool);
    assert_eq!(e.len(), 1, "{e:#?}");
    let msg = e[0].plain();
    assert_eq!(e[0].file, tool.join("TOOL.md"), "{msg}");
    assert!(msg.contains(&size.to_string()), "the actual size: {msg}");
    assert!(
        msg.contains(&MAX_TOOL_FILE_BYTES.to_string()) && msg.contains("1 MiB"),
        "the limit: {msg}"
    );
    assert!(
        !msg.contains("missing frontmatter") && !msg.contains("UTF-8"),
        "it was read and parsed: {msg}"
    );

    // At the limit it is read (and judged on its content); one byte over it is not.
    std::fs::write(tool.join("TOOL.md"), "").unwrap();
    let f = std::fs::File::options()
        .write(true)
        .open(tool.join("TOOL.md"))
        .unwrap();
    f.set_len(MAX_TOOL_FILE_BYTES).unwrap();
    let e = errors_of(&tool);
    assert!(!e[0].message.contains("over the limit"), "{e:#?}");
    f.set_len(MAX_TOOL_FILE_BYTES + 1).unwrap();
    let e = errors_of(&tool);
    assert!(e[0].message.contains("over the limit"), "{e:#?}");
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

#[test]
fn an_entry_file_that_is_a_fifo_is_reported_as_one_without_blocking() {
    let s = Scratch::new("fifo");
    for (language, entry) in [
        ("bash", "index.sh"),
        ("python", "index.py"),
        ("typescript", "index.ts"),
    ] {
        let tool = s.0.join(language);
        std::fs::create_dir_all(&tool).unwrap();
        std::fs::write(
            tool.join("TOOL.md"),
            format!("---\nname: t\ndescription: d\nlanguage: {language}\n---\n"),
        )
        .unwrap();
        mkfifo(&tool.join(entry));
        let e = errors_of(&tool);
        assert_eq!(e.len(), 1, "{e:#?}");
        let msg = e[0].plain();
        assert!(
            msg.contains(&format!(
                "{entry} is a FIFO (named pipe), not a regular file"
            )),
            "{msg}"
        );
        assert!(!msg.contains("missing entry file"), "{msg}");
        assert_eq!(e[0].pos, Pos::new(4, 11), "at `language:`: {msg}");
    }
}

#[test]
fn an_entry_file_symlinked_out_of_the_folder_is_refused() {
    let s = Scratch::new("entry-out");
    std::fs::write(s.0.join("elsewhere.sh"), "cat /etc/shadow\n").unwrap();
    let tool = s.0.join("t");
    std::fs::create_dir_all(&tool).unwrap();
    std::fs::write(
        tool.join("TOOL.md"),
        "---\nname: t\ndescription: d\nlanguage: bash\n---\n",
    )
    .unwrap();
    symlink("../elsewhere.sh", tool.join("index.sh")).unwrap();
    let e = errors_of(&tool);
    assert_eq!(e.len(), 1, "{e:#?}");
    let msg = e[0].plain();
    assert!(
        msg.contains("index.sh is a symlink out of the tool folder"),
        "{msg}"
    );
    assert!(!msg.contains("cat /etc/shadow"), "{msg}");
    // Without `require_entry` the TOOL.md alone is fine: the entry is just not there.
    let opts = Options::default().require_entry(false);
    let t = parse_tool_dir(&tool, &opts).unwrap();
    assert_eq!(t.entry, None);
    // The shared rule, for the loader to say why it skips the tool.
    let err = toolbind_codegen::find_entry(&tool, &["index.sh"]).unwrap_err();
    assert!(matches!(
        err.kind,
        toolbind_codegen::FolderFileErrorKind::SymlinkOutside
    ));
}

#[test]
fn the_human_and_json_diagnostics_of_a_non_utf8_byte_agree() {
    let e = parse_tool_md(
        Path::new("t/TOOL.md"),
        Path::new("t"),
        b"---\nname: t\ndescription: caf\xe9\n---\n",
        &Options::default(),
    )
    .unwrap_err();
    let d = &e[0];
    let json = d.to_json();
    let (line, col) = (
        json["line"].as_u64().unwrap(),
        json["column"].as_u64().unwrap(),
    );
    assert_eq!((line, col), (3, 17));
    let human = d.render(false);
    assert!(
        human.contains(&format!("t/TOOL.md:{line}:{col}")),
        "human {human:?} vs JSON {line}:{col}"
    );
    assert!(d.plain().starts_with(&format!("t/TOOL.md:{line}:{col}: ")));
}

#[test]
fn a_folder_named_differently_from_its_tool_gets_a_warning() {
    let s = Scratch::new("renamed");
    bash_tool(
        &s.0.join("renamed"),
        "---\nname: other_name\ndescription: d\nlanguage: bash\n---\n",
    );
    bash_tool(
        &s.0.join("same"),
        "---\nname: same\ndescription: d\nlanguage: bash\n---\n",
    );
    let tools =
        toolbind_codegen::load_tools(std::slice::from_ref(&s.0), &Options::default()).unwrap();
    let w = toolbind_codegen::folder_name_warnings(&tools);
    assert_eq!(w.len(), 1, "{w:#?}");
    assert_eq!(w[0].severity, Severity::Warning);
    assert_eq!(w[0].pos, Pos::new(2, 7));
    assert!(
        w[0].message
            .contains("holds the tool `other_name`: the folder is named differently from the tool"),
        "{}",
        w[0].plain()
    );
    assert!(
        w[0].hint
            .as_deref()
            .unwrap()
            .contains("rename the folder to `other_name`")
    );
}
