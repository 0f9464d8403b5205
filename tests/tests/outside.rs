//! The README, followed by a user outside this repository: a fresh crate whose
//! `Cargo.toml`, `build.rs` and `src/main.rs` are the README's blocks as written (the
//! dependency paths pointed at this clone), with one tool per language under a relative
//! `tools/` (the shipped `todo` in TypeScript, `roll_dice` in Python, `word_count` in bash,
//! from `tests/outside/`). It is built against this workspace's `Cargo.lock` and `target/`
//! (so it reuses the dependencies already built) and run: the README's `main.rs` (the
//! build.rs path, `todo`), `build_path` (the build.rs path, the Python and bash tools by
//! name) and `macro_path` (the README's `tools!` line, a typed call of each tool). Every
//! tool must run, jailed. `.ci/run` runs it again as an unprivileged user (`.ci/nonroot`),
//! who runs the binaries root built.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate has a parent folder")
        .to_path_buf()
}

/// The README's fenced blocks: `(info string, text)`.
fn readme_blocks() -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("read README.md");
    let mut blocks = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        if let Some(info) = line.strip_prefix("```") {
            let mut text = String::new();
            for body in lines.by_ref() {
                if body.starts_with("```") {
                    break;
                }
                text.push_str(body);
                text.push('\n');
            }
            blocks.push((info.trim().to_string(), text));
        }
    }
    blocks
}

/// The one README block of language `lang` (an info string starting with it) that holds
/// `marker`.
fn readme_block(lang: &str, marker: &str) -> String {
    let found: Vec<String> = readme_blocks()
        .into_iter()
        .filter(|(info, text)| info.starts_with(lang) && text.contains(marker))
        .map(|(_, text)| text)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "README.md has {} {lang} blocks holding {marker:?}",
        found.len()
    );
    found.into_iter().next().unwrap()
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

/// Runs `cmd` to its end or until `secs` have passed (then kills it: a hang fails the test
/// instead of hanging it); its status and its output (stdout and stderr, in one file).
fn run(mut cmd: Command, log: &Path, secs: u64) -> (bool, String) {
    let file = std::fs::File::create(log).unwrap();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .spawn()
        .unwrap_or_else(|e| panic!("start {cmd:?}: {e}"));
    let end = Instant::now() + Duration::from_secs(secs);
    let ok = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.success();
        }
        if Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            break false;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    (ok, std::fs::read_to_string(log).unwrap_or_default())
}

/// Where the workspace's build products are: where this test was built.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|p| if p.is_absolute() { p } else { root().join(p) })
        .unwrap_or_else(|| root().join("target"))
}

/// Makes the crate in `dir` from the README and `tests/outside/`.
fn make_crate(dir: &Path) {
    let clone = root();
    let manifest = readme_block("toml", "[build-dependencies]");
    assert!(
        manifest.contains("/path/to/toolbind/"),
        "the README's Cargo.toml no longer points at a clone:\n{manifest}"
    );
    let manifest = manifest.replace("/path/to/toolbind", clone.to_str().unwrap());
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"outside-agent\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\
             publish = false\n\n{manifest}\n\
             # Not in the README: the test's second entry point, the macro path.\n\
             [[bin]]\nname = \"macro_path\"\npath = \"src/macro_path.rs\"\n\n\
             # Its own workspace, whatever folder it is made in.\n[workspace]\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("build.rs"),
        readme_block("rust", "toolbind_codegen::Config::new()"),
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("src/bin")).unwrap();
    std::fs::write(
        dir.join("src/main.rs"),
        readme_block("rust", "toolbind::include_tools!();"),
    )
    .unwrap();
    // The macro path: the README's macro line, exactly as macro_path.rs uses it.
    let template = clone.join("tests/outside");
    let code = |l: &str| l.split("//").next().unwrap_or("").trim().to_string();
    let macro_line = code(
        readme_block("rust", "toolbind::tools!(\"../tools\");")
            .lines()
            .next()
            .unwrap(),
    );
    let macro_path = std::fs::read_to_string(template.join("src/macro_path.rs")).unwrap();
    assert!(
        macro_path.lines().any(|l| code(l) == macro_line),
        "tests/outside/src/macro_path.rs does not use the README's line {macro_line:?}"
    );
    std::fs::write(dir.join("src/macro_path.rs"), macro_path).unwrap();
    std::fs::copy(
        template.join("src/build_path.rs"),
        dir.join("src/bin/build_path.rs"),
    )
    .unwrap();
    copy_dir(&template.join("tools"), &dir.join("tools"));
    copy_dir(&clone.join("tools/todo"), &dir.join("tools/todo"));
    // The workspace's lock file: the same dependency versions, so built ones are reused.
    std::fs::copy(clone.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
}

#[test]
fn a_crate_made_from_the_readme_runs_every_tool_jailed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("outside-agent");
    std::fs::create_dir_all(&dir).unwrap();
    make_crate(&dir);

    let target = target_dir();
    let bin = |name: &str| target.join("debug").join(name);
    // As the unprivileged user of .ci/nonroot (after root's `cargo test --workspace`,
    // which built this crate): cargo and its registry are root's, so the binaries root
    // built are run, in a crate folder this user made.
    let nonroot = std::env::var("TOOLBIND_TEST_PHASE").is_ok_and(|p| p == "host-nonroot");
    if nonroot {
        for name in ["outside-agent", "build_path", "macro_path"] {
            assert!(
                bin(name).is_file(),
                "{} is missing: run this test as root first (it builds the crate)",
                bin(name).display()
            );
        }
    } else {
        let mut build = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        build
            .current_dir(&dir)
            .args(["build", "--offline", "--bins", "--config"])
            // The workspace's profiles (it is not this crate's workspace): the same
            // settings, so the dependencies built for the workspace are reused, not rebuilt.
            .arg(root().join(".cargo/config.toml"))
            .env("CARGO_TARGET_DIR", &target)
            .env_remove("RUSTFLAGS");
        // A first build compiles toolbind with the README's features; the rest is reused.
        let (ok, log) = run(build, &tmp.path().join("build.log"), 1800);
        assert!(ok, "the README's crate did not build:\n{log}");
    }

    let mut outputs = Vec::new();
    for name in ["outside-agent", "build_path", "macro_path"] {
        let mut cmd = Command::new(bin(name));
        cmd.current_dir(&dir).env_remove("PI_TOOLS_DIRS");
        let (ok, out) = run(cmd, &tmp.path().join(format!("{name}.log")), 300);
        outputs.push((name, ok, out));
    }
    let shown: String = outputs
        .iter()
        .map(|(name, ok, out)| format!("--- {name} (success: {ok})\n{out}\n"))
        .collect();

    // The README's main.rs: the TypeScript tool, typed and by name.
    let (_, ok, main) = &outputs[0];
    assert!(*ok, "{shown}");
    assert!(main.contains("installed todo (version 1)"), "{shown}");
    assert!(main.contains("Added: ship it"), "{shown}");
    assert!(main.contains("1. ship it"), "the list call: {shown}");

    // Both paths, every language, in the jail.
    for (name, ok, out) in &outputs[1..] {
        assert!(*ok, "{name}: {shown}");
        assert!(
            out.contains("sandbox: auto -> bubblewrap jail"),
            "{name} did not run its tools jailed: {shown}"
        );
        assert!(
            out.contains("roll_dice: Completed: rolled ") && out.contains(" of 6 faces (python)"),
            "{name}: the Python tool: {shown}"
        );
        assert!(
            out.contains("word_count: Completed: 3 words (bash)"),
            "{name}: the bash tool: {shown}"
        );
    }
    let (_, _, macro_out) = &outputs[2];
    assert!(
        macro_out.contains("todo: Completed: Added: from the macro"),
        "macro_path: the TypeScript tool: {shown}"
    );
}
