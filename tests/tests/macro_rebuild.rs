//! Rebuild tracking of `toolbind::tools!`: editing a TOOL.md recompiles the crate (the
//! expansion `include_bytes!`s it), and a new tool folder does too once the documented
//! one-line build.rs (`cargo::rerun-if-changed=tools`) is present. A real `cargo check` of
//! a scratch crate, so it tests cargo's and rustc's behaviour, not ours.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

/// Checks the scratch crate: `Ok(true)` when it was compiled, `Ok(false)` when fresh,
/// `Err(stderr)` when it failed.
fn check(dir: &Path) -> Result<bool, String> {
    let out = Command::new(env!("CARGO"))
        .args(["check", "--offline", "-v"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", workspace().join("target/rebuild-check"))
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        return Err(stderr);
    }
    Ok(stderr
        .lines()
        .any(|l| l.contains("Running") && l.contains("--crate-name macro_rebuild_scratch")))
}

fn tool(tools: &Path, name: &str, frontmatter: &str) {
    std::fs::create_dir_all(tools.join(name)).unwrap();
    std::fs::write(
        tools.join(name).join("TOOL.md"),
        format!("---\nname: {name}\nlanguage: bash\n{frontmatter}---\n"),
    )
    .unwrap();
    std::fs::write(tools.join(name).join("index.sh"), "cat\n").unwrap();
}

/// Cargo compares mtimes; give each step its own second.
fn tick() {
    std::thread::sleep(Duration::from_millis(1100));
}

#[test]
fn edits_and_new_tool_folders_recompile_the_crate() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"macro-rebuild-scratch\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n[dependencies]\ntoolbind = {{ path = {:?}, default-features = false, features = [\"macros\"] }}\n\n[workspace]\n",
            workspace().join("runtime").display().to_string()
        ),
    )
    .unwrap();
    std::fs::copy(workspace().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), "toolbind::tools!(\"../tools\");\n").unwrap();
    let tools = dir.join("tools");
    tool(&tools, "alpha", "description: First.\n");

    assert_eq!(check(dir), Ok(true), "first build");
    assert_eq!(check(dir), Ok(false), "a no-op rebuild must not recompile");

    tick();
    tool(&tools, "alpha", "description: First.\ndescripton: typo\n");
    let err = check(dir).expect_err("an edited TOOL.md is re-read");
    assert!(
        err.contains("unknown key `descripton`"),
        "the macro saw the edit: {err}"
    );

    tick();
    tool(&tools, "alpha", "description: First, fixed.\n");
    assert_eq!(check(dir), Ok(true), "fixing the TOOL.md recompiles");
    assert_eq!(check(dir), Ok(false));

    // A malformed new folder proves the macro re-ran and read it. Without a build script
    // nothing tells cargo about it...
    tick();
    tool(&tools, "beta", "description: A new tool.\nversion: -1\n");
    assert_eq!(
        check(dir),
        Ok(false),
        "no build.rs: a new folder goes unseen"
    );

    // ...with the documented line, it is seen.
    std::fs::write(
        dir.join("build.rs"),
        "fn main() {\n    println!(\"cargo::rerun-if-changed=tools\");\n}\n",
    )
    .unwrap();
    let err = check(dir).expect_err("beta is read");
    assert!(
        err.contains("../tools/beta/TOOL.md:5:10: `version` must be a non-negative integer"),
        "{err}"
    );
    tick();
    tool(&tools, "beta", "description: A new tool.\n");
    assert_eq!(check(dir), Ok(true));
    assert_eq!(check(dir), Ok(false));

    tick();
    tool(&tools, "gamma", "description: Another.\nversion: x\n");
    let err = check(dir).expect_err("a new tool folder is read");
    assert!(
        err.contains("../tools/gamma/TOOL.md:5:10: `version`"),
        "{err}"
    );
}
