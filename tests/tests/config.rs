//! Every `Config` setter changes the output; `compile()` writes only what changed.

use std::path::{Path, PathBuf};

use toolbind_codegen::Config;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../codegen/tests/fixtures/valid")
}

fn base() -> Config {
    let mut c = Config::new();
    c.tools_dir(fixtures());
    c
}

fn files(c: &Config) -> Vec<String> {
    c.generate().unwrap().files.into_keys().collect()
}

#[test]
fn emitter_setters_choose_the_outputs() {
    assert_eq!(files(&base()), ["tools.rs"]);
    assert_eq!(files(base().emit_prompt(true)), ["prompt.md", "tools.rs"]);
    assert_eq!(files(base().emit_docs(true)), ["TOOLS.md", "tools.rs"]);
    assert_eq!(files(base().emit_rust(false).emit_docs(true)), ["TOOLS.md"]);
    let s = files(base().emit_schemas(true));
    // One file per dialect, and the Rust.
    assert_eq!(s.len(), 9);
    assert!(s.contains(&"schemas/openai-strict.json".to_owned()));
    assert!(s.contains(&"schemas/openai-responses.json".to_owned()));
    assert_eq!(files(base().out_file("agent_tools.rs")), ["agent_tools.rs"]);
}

#[test]
fn tools_dir_adds_folders_and_catches_duplicates_across_them() {
    let tmp = tempfile::tempdir().unwrap();
    let other = tmp.path().join("more");
    std::fs::create_dir_all(other.join("extra")).unwrap();
    std::fs::write(
        other.join("extra/TOOL.md"),
        "---\nname: extra\ndescription: An extra tool.\nlanguage: bash\n---\n",
    )
    .unwrap();
    std::fs::write(other.join("extra/index.sh"), "echo hi\n").unwrap();
    let g = base().tools_dir(&other).generate().unwrap();
    assert!(g.tools.iter().any(|t| t.name == "extra"));
    assert!(g.rust().unwrap().contains("pub mod extra"));

    let e = base().tools_dir(fixtures()).generate().unwrap_err();
    let d = e.diagnostics().unwrap();
    assert!(
        d.iter()
            .all(|d| d.message.starts_with("duplicate tool name")),
        "{d}"
    );
    assert_eq!(d.iter().next().unwrap().pos.line, 2, "points at `name:`");
}

#[test]
fn portable_names_setter_relaxes_the_rule() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("spaced");
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(t.join("TOOL.md"), "---\nname: spaced\ndescription: d\nlanguage: bash\ninputs:\n  x y:\n    type: string\n    description: d\n---\n").unwrap();
    std::fs::write(t.join("index.sh"), "cat\n").unwrap();
    let mut c = Config::new();
    c.tools_dir(tmp.path());
    assert!(c.generate().is_err());
    let g = c.portable_names(false).generate().unwrap();
    assert!(g.rust().unwrap().contains("a.put(\"x y\", &self.x_y);"));
}

#[test]
fn deny_warnings_setter_fails_on_warnings() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("tagged");
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(
        t.join("TOOL.md"),
        "---\nname: tagged\ndescription: d\nlanguage: bash\ntags: [a]\n---\n",
    )
    .unwrap();
    std::fs::write(t.join("index.sh"), "cat\n").unwrap();
    let mut c = Config::new();
    c.tools_dir(tmp.path());
    let g = c.generate().unwrap();
    assert_eq!(g.tools[0].warnings.len(), 1);
    let e = c.deny_warnings(true).generate().unwrap_err();
    let d: Vec<_> = e.diagnostics().unwrap().iter().collect();
    assert_eq!(d.len(), 1);
    assert!(d[0].is_error());
    assert!(
        d[0].message.contains("unknown key `tags` is ignored"),
        "{}",
        d[0]
    );
    assert!(
        d[0].hint.as_deref().unwrap().contains("deny_warnings"),
        "{}",
        d[0]
    );
}

#[test]
fn generator_setter_adds_include_tracking() {
    let build = base().generate().unwrap();
    let mac = base()
        .generator(toolbind_codegen::emit::Generator::Macro)
        .generate()
        .unwrap();
    assert!(!build.rust().unwrap().contains("include_bytes!"));
    assert!(mac.rust().unwrap().contains("include_bytes!"));
}

fn mtime(p: &Path) -> std::time::SystemTime {
    std::fs::metadata(p).unwrap().modified().unwrap()
}

#[test]
fn compile_writes_only_when_content_changes() {
    let out = tempfile::tempdir().unwrap();
    let mut c = base();
    c.out_dir(out.path()).emit_prompt(true);
    c.compile().unwrap();
    let rs = out.path().join("tools.rs");
    let first = mtime(&rs);
    std::thread::sleep(std::time::Duration::from_millis(20));
    c.compile().unwrap();
    assert_eq!(mtime(&rs), first, "a no-op compile must not touch the file");
    assert!(out.path().join("prompt.md").is_file());
    let header = std::fs::read_to_string(&rs).unwrap();
    assert!(header.starts_with("// @generated"));
}

#[test]
fn compile_reports_every_error_of_every_file() {
    let tmp = tempfile::tempdir().unwrap();
    for (dir, md) in [
        ("a", "---\nname: a\ndescripton: x\n---\n"),
        (
            "b",
            "---\nname: b\ndescription: d\ninputs:\n  q:\n    type: strin\n    description: d\n---\n",
        ),
    ] {
        std::fs::create_dir_all(tmp.path().join(dir)).unwrap();
        std::fs::write(tmp.path().join(dir).join("TOOL.md"), md).unwrap();
        std::fs::write(
            tmp.path().join(dir).join("index.ts"),
            "export async function execute() {}\n",
        )
        .unwrap();
    }
    let mut c = Config::new();
    c.tools_dir(tmp.path()).out_dir(tmp.path().join("out"));
    let e = c.compile().unwrap_err();
    let d = e.diagnostics().unwrap();
    let rendered = d.render(false);
    assert!(rendered.contains("a/TOOL.md:3:1"), "{rendered}");
    assert!(rendered.contains("b/TOOL.md:6:11"), "{rendered}");
    assert!(rendered.contains("did you mean `string`?"), "{rendered}");
    assert_eq!(format!("{e:?}"), "3 errors in 2 files");
    assert!(!tmp.path().join("out").exists(), "nothing written on error");
}

#[test]
fn a_missing_tools_folder_is_an_error() {
    let mut c = Config::new();
    c.tools_dir("/nonexistent/toolbind/tools");
    let e = c.generate().unwrap_err();
    assert!(
        e.diagnostics()
            .unwrap()
            .iter()
            .next()
            .unwrap()
            .message
            .contains("cannot read tools folder")
    );
}

#[test]
fn module_collisions_get_numbered_fallbacks() {
    let tmp = tempfile::tempdir().unwrap();
    for (dir, name) in [("a", "web-search"), ("b", "web_search")] {
        let t = tmp.path().join(dir);
        std::fs::create_dir_all(&t).unwrap();
        std::fs::write(
            t.join("TOOL.md"),
            format!("---\nname: {name}\ndescription: d\nlanguage: bash\n---\n"),
        )
        .unwrap();
        std::fs::write(t.join("index.sh"), "cat\n").unwrap();
    }
    let mut c = Config::new();
    c.tools_dir(tmp.path());
    let g = c.generate().unwrap();
    assert_eq!(g.tools[0].rust_module, "web_search");
    assert_eq!(g.tools[1].rust_module, "web_search_2");
    assert_eq!(g.tools[1].rust_type, "WebSearch2");
    let msgs: Vec<&str> = g.tools[1]
        .warnings
        .iter()
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(
        msgs,
        [
            "tool names `web-search` and `web_search` both map to the Rust `ToolCall` variant `WebSearch`: `web_search` gets `WebSearch2`",
            "tool names `web-search` and `web_search` both map to the Rust module `web_search`: `web_search` gets `web_search_2`",
        ]
    );
    assert_eq!(g.tools[1].warnings[0].pos.line, 2);
    let rust = g.rust().unwrap();
    assert!(rust.contains("pub mod web_search_2 {"), "{rust}");
    assert!(rust.contains("WebSearch2(web_search_2::Params)"), "{rust}");
}

#[test]
fn no_tools_dir_means_tools_beside_cargo_toml() {
    let c = Config::new();
    let expected = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tools");
    assert_eq!(c.tools_dirs(), vec![expected.clone()]);
    // This crate has no tools/ folder: the error names the resolved path.
    let e = c.generate().unwrap_err();
    let d = e.diagnostics().unwrap().iter().next().unwrap().clone();
    assert_eq!(d.file, expected);
}

#[test]
fn runtime_path_moves_code_paths_but_not_text() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("quoted");
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(
        t.join("TOOL.md"),
        "---\nname: quoted\ndescription: 'Mentions \"::toolbind::x\" and ::toolbind::y in text.'\nlanguage: bash\ninputs:\n  mode:\n    type: enum\n    values: a, b\n    description: 'Uses ::toolbind::z'\n---\n",
    )
    .unwrap();
    std::fs::write(t.join("index.sh"), "cat\n").unwrap();
    let mut c = Config::new();
    c.tools_dir(tmp.path()).runtime_path("::rt");
    let rust = c.generate().unwrap().rust().unwrap().to_owned();
    assert!(rust.contains("::rt::__bindings_version!(1);"), "{rust}");
    assert!(
        rust.contains("impl ::rt::__private::Tool for Tool"),
        "{rust}"
    );
    // Text keeps its words: doc comments and string literals are the author's.
    assert!(rust.contains("/// Uses ::toolbind::z"), "{rust}");
    assert!(
        rust.contains(r#"Mentions \"::toolbind::x\" and ::toolbind::y in text."#),
        "{rust}"
    );
    let code_paths = rust
        .lines()
        .filter(|l| !l.trim_start().starts_with("//") && l.contains("::toolbind::__private"))
        .count();
    assert_eq!(code_paths, 0, "{rust}");

    for bad in ["", "::", "rt::", "my-rt", "::rt::2x", "a b"] {
        let err = Config::new()
            .tools_dir(tmp.path())
            .runtime_path(bad)
            .generate()
            .unwrap_err();
        assert!(
            err.to_string().contains("is not a Rust path"),
            "{bad:?}: {err}"
        );
    }
}

#[test]
fn the_runtime_accepts_the_bindings_version_codegen_writes() {
    // `toolbind::__bindings_version!` accepts exactly this number (and the ui test
    // `bindings-version-mismatch` shows it refusing another): change both together.
    assert_eq!(toolbind_codegen::emit::BINDINGS_VERSION, 1);
    toolbind::__bindings_version!(1);
}
