//! What a newcomer pastes or reads first holds: one dependency line everywhere (a path to
//! the clone while the crates are unpublished), the crate root lists every feature of
//! `runtime/Cargo.toml`, and the README shows its first example before the words only the
//! glossary defines, keeping the HTTP server's internals (sealed request states, replicas)
//! in docs/http.md.

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate has a parent folder")
        .to_path_buf()
}

fn read(rel: &str) -> String {
    fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("cannot read {rel}: {e}"))
}

/// The pages a user copies a dependency line from.
fn pages_with_dependency_lines() -> Vec<String> {
    let mut pages = vec![
        "README.md".to_string(),
        "runtime/README.md".to_string(),
        "codegen/README.md".to_string(),
        "macros/README.md".to_string(),
    ];
    let mut docs: Vec<String> = fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("a docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| format!("docs/{}", p.file_name().unwrap().to_string_lossy()))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages.retain(|p| root().join(p).exists());
    pages
}

/// Each `toolbind = { ... }`-style dependency (of toolbind, toolbind-codegen or
/// toolbind-macros) on a line, as written: `(crate, what follows the '=')`.
fn dependencies(line: &str) -> Vec<(&str, &str)> {
    let mut found = Vec::new();
    for krate in ["toolbind-codegen", "toolbind-macros", "toolbind"] {
        let mut from = 0;
        while let Some(at) = line[from..].find(krate) {
            let start = from + at;
            from = start + krate.len();
            // `toolbind` inside `toolbind-codegen`, or a longer name.
            let before_ok = start == 0 || !line[..start].ends_with(['-', '_']);
            let rest = &line[from..];
            let after = rest.trim_start();
            if !before_ok || rest.starts_with(['-', '_']) || !after.starts_with('=') {
                continue;
            }
            found.push((krate, after[1..].trim_start()));
        }
    }
    found
}

#[test]
fn one_dependency_line_everywhere() {
    // The crates are packaged, not published: `version = "0.1"` does not resolve (or finds
    // someone else's crate), and `path = "runtime"` works only inside this repository. What a
    // user pastes is a path to their clone; `toolbind = "0.1"` may appear only in the sentence
    // saying what replaces it once published, never as a manifest line.
    let mut bad = Vec::new();
    for page in pages_with_dependency_lines() {
        for (n, line) in read(&page).lines().enumerate() {
            let manifest_line = {
                let t = line.trim_start().trim_start_matches('#').trim_start();
                t.starts_with("toolbind")
            };
            for (krate, value) in dependencies(line) {
                let ok = if value.starts_with('{') {
                    value.contains("path = \"/path/to/toolbind/") && !value.contains("version")
                } else {
                    // A bare version: only in prose, never as a line of a manifest.
                    !manifest_line
                };
                if !ok {
                    bad.push(format!("{page}:{}: {krate} = {value}", n + 1));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "dependency lines that a user outside the repository cannot paste (use \
         `{{ path = \"/path/to/toolbind/<crate>\", ... }}`):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_crate_root_lists_every_feature() {
    // The crate root's docs are runtime/README.md (lib.rs includes it): its feature list
    // must name every feature of the manifest, so `cargo doc` shows what each adds.
    let manifest = read("runtime/Cargo.toml");
    let section = manifest
        .split("\n[features]\n")
        .nth(1)
        .expect("runtime/Cargo.toml has [features]");
    let section = section.split("\n[").next().unwrap();
    let features: Vec<&str> = section
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with(' ') && l.contains(" = "))
        .map(|l| l.split(" = ").next().unwrap().trim())
        .filter(|f| *f != "default")
        .collect();
    assert!(features.len() >= 6, "features read: {features:?}");
    let docs = read("runtime/README.md");
    let list = docs
        .split("## Features and platforms")
        .nth(1)
        .expect("runtime/README.md has a Features section");
    let missing: Vec<&&str> = features
        .iter()
        .filter(|f| !list.contains(&format!("- `{f}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "runtime/README.md (the crate root's docs) does not list features {missing:?}"
    );
}

#[test]
fn the_readme_shows_before_it_names() {
    let readme = read("README.md");
    let first_block = readme.find("```").expect("the README has a code block");
    for term in ["the platform", "Pi tool API", "seed tools", "seed tool"] {
        if let Some(at) = readme.to_lowercase().find(&term.to_lowercase()) {
            assert!(
                at > first_block,
                "the README names {term:?} (byte {at}) before its first example (byte \
                 {first_block}): show the example first, or define the term where it is used"
            );
        }
    }
    // A newcomer is told that the first build is slow before starting it.
    let quick = &readme[..first_block];
    assert!(
        quick.contains("first build"),
        "the README does not say, before its first command, that a first build takes minutes"
    );
    // The HTTP server's internals are docs/http.md's.
    for detail in [
        "HMAC",
        "requestState",
        "--request-state-key-file",
        "affinity",
    ] {
        assert!(
            !readme.contains(detail),
            "the README's overview goes into {detail:?}: that belongs in docs/http.md"
        );
    }
}
