//! Cargo reruns build.rs when a TOOL.md changes or a tool folder is added, and not on a
//! no-op rebuild. A real `cargo build` of a scratch crate, so it tests cargo's behaviour
//! with the `cargo::rerun-if-changed=<dir>` that `Config::compile` prints.

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

/// Builds the scratch crate; true when its build script ran.
fn build(dir: &Path) -> bool {
    let stderr = build_log(dir);
    stderr.lines().any(|l| {
        l.contains("Running") && l.contains("rebuild-scratch") && l.contains("build-script-build")
    })
}

/// Builds the scratch crate and returns cargo's stderr.
fn build_log(dir: &Path) -> String {
    let out = Command::new(env!("CARGO"))
        .args(["build", "--offline", "-v"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", workspace().join("target/rebuild-check"))
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    stderr
}

fn tool(dir: &Path, name: &str, description: &str) {
    std::fs::create_dir_all(dir.join(name)).unwrap();
    std::fs::write(
        dir.join(name).join("TOOL.md"),
        format!("---\nname: {name}\ndescription: {description}\nlanguage: bash\n---\n"),
    )
    .unwrap();
    std::fs::write(dir.join(name).join("index.sh"), "cat\n").unwrap();
}

#[test]
fn build_script_reruns_on_change_and_new_tool_only() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let codegen = workspace().join("codegen");
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"rebuild-scratch\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n[build-dependencies]\ntoolbind-codegen = {{ path = {:?} }}\n\n[workspace]\n",
            codegen.display().to_string()
        ),
    )
    .unwrap();
    std::fs::copy(workspace().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::write(
        dir.join("build.rs"),
        "fn main() -> Result<(), toolbind_codegen::Error> {\n    toolbind_codegen::Config::new().tools_dir(\"tools\").compile()\n}\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        "pub const N: usize = include_str!(concat!(env!(\"OUT_DIR\"), \"/toolbind/tools.rs\")).len();\n",
    )
    .unwrap();
    tool(&dir.join("tools"), "alpha", "First.");

    assert!(build(dir), "first build runs the build script");
    assert!(!build(dir), "a no-op rebuild must not rerun generation");

    std::thread::sleep(std::time::Duration::from_millis(1100));
    tool(&dir.join("tools"), "alpha", "First, edited.");
    assert!(build(dir), "editing a TOOL.md reruns generation");
    assert!(!build(dir));

    std::thread::sleep(std::time::Duration::from_millis(1100));
    tool(&dir.join("tools"), "beta", "A new tool folder.");
    assert!(build(dir), "a new tool folder reruns generation");

    // A warning shows as cargo's own warning and does not fail the build...
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let md = dir.join("tools/beta/TOOL.md");
    let text = std::fs::read_to_string(&md).unwrap();
    std::fs::write(
        &md,
        text.replace("language: bash\n", "language: bash\ntags: [x]\n"),
    )
    .unwrap();
    let log = build_log(dir);
    assert!(
        log.lines()
            .any(|l| l.starts_with("warning: rebuild-scratch@0.0.0: ")
                && l.contains("beta/TOOL.md:5:1: warning: unknown key `tags` is ignored")),
        "{log}"
    );
    // ...and `print_warnings(false)` silences it.
    std::fs::write(
        dir.join("build.rs"),
        "fn main() -> Result<(), toolbind_codegen::Error> {\n    toolbind_codegen::Config::new().tools_dir(\"tools\").print_warnings(false).compile()\n}\n",
    )
    .unwrap();
    let log = build_log(dir);
    assert!(!log.contains("unknown key"), "{log}");
}
