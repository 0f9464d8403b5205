//! The compatibility corpus (`compat/`, see its README): TOOL.md files the platform loads.
//! Every one loads in the runtime, passes `toolbind check` with warnings (never errors),
//! compiles through build.rs and the macro (`toolbind_tests::{compat, compat_macro}`),
//! and behaves as written when called. Goldens pin the warnings and the generated Rust,
//! fallback identifiers included: `UPDATE_EXPECT=1 cargo test -p toolbind-tests --test
//! compat` rewrites them.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolbind::Loader;
use toolbind::loader::LoadWarningKind;
use toolbind::{CallOptions, Runtime};
use toolbind_codegen::schema::{self, Dialect};
use toolbind_codegen::{Config, Options, load_tools, prompt};
use toolbind_tests::{compat, compat_macro};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("compat")
}

fn folders() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(corpus())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Compares `actual` with the golden file, or rewrites it under `UPDATE_EXPECT=1`.
fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("golden")
        .join(name);
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_EXPECT=1 writes it)", path.display()));
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .map_or(expected.lines().count().min(actual.lines().count()), |i| i);
        panic!(
            "{} differs from the output at line {} (UPDATE_EXPECT=1 rewrites it; review the diff)",
            path.display(),
            line + 1
        );
    }
}

#[test]
fn the_runtime_loads_every_tool_and_skips_none() {
    let loaded = Loader::new().dir(corpus()).quiet().load();
    let mut names: Vec<&str> = loaded.registry.names().collect();
    names.sort();
    assert_eq!(names, folders(), "{:#?}", loaded.warnings);
    assert!(
        loaded.warnings.iter().all(|w| !w.skipped()),
        "{:#?}",
        loaded.warnings
    );
    // The warnings are reported, per tool, and each is a warning.
    let with_warnings = loaded
        .warnings
        .iter()
        .filter_map(|w| match &w.kind {
            LoadWarningKind::Warnings { tool, diagnostics } => {
                assert!(diagnostics.iter().all(|d| !d.is_error()), "{w}");
                Some(tool.as_str())
            }
            _ => None,
        })
        .count();
    assert_eq!(with_warnings, folders().len() - 3, "{:#?}", loaded.warnings);
    // The extra keys are metadata a program can read.
    let m = loaded.registry.get("metadata_keys").unwrap();
    assert_eq!(m.metadata()["tags"], json!(["search", "web"]));
    assert_eq!(m.metadata()["metadata"]["stars"], json!(12));
    assert_eq!(m.spec().inputs[0].metadata["example"], json!("rust agents"));
}

#[test]
fn check_accepts_the_corpus_with_the_expected_warnings() {
    let tools = load_tools(&[corpus()], &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let warnings = toolbind_codegen::warnings(&tools);
    assert!(!warnings.has_errors());
    let root = corpus().parent().unwrap().to_path_buf();
    let lines: Vec<String> = warnings
        .iter()
        .map(|d| {
            let mut d = d.clone();
            d.file = d.file.strip_prefix(&root).unwrap().to_path_buf();
            d.plain()
        })
        .collect();
    golden("compat-warnings.txt", &(lines.join("\n") + "\n"));
    // With the deny switch, the same set fails.
    let denied = Config::new()
        .tools_dir(corpus())
        .deny_warnings(true)
        .generate()
        .unwrap_err();
    assert_eq!(denied.diagnostics().unwrap().len(), warnings.len());
}

#[test]
fn generated_rust_pins_the_fallback_identifiers() {
    let g = Config::new().tools_dir(corpus()).generate().unwrap();
    golden("compat.rs", g.rust().unwrap());
    // The macro and build.rs compiled the same set.
    assert_eq!(compat::ToolCall::NAMES, compat_macro::ToolCall::NAMES);
    assert_eq!(compat::TOOLS.len(), folders().len());
}

#[test]
fn each_dialect_leaves_out_only_the_tools_its_provider_rejects() {
    let tools = load_tools(&[corpus()], &Options::default()).unwrap();
    let names = |d: Dialect| -> Vec<String> {
        let defs = schema::definitions(&tools, d);
        let list = if d == Dialect::Gemini {
            defs["functionDeclarations"].clone()
        } else {
            defs
        };
        list.as_array()
            .unwrap()
            .iter()
            .map(|t| {
                t.get("name")
                    .or_else(|| t["function"].get("name"))
                    .and_then(Value::as_str)
                    .unwrap()
                    .to_owned()
            })
            .collect()
    };
    let all = tools.len();
    assert_eq!(names(Dialect::Portable).len(), all);
    assert_eq!(names(Dialect::Mcp).len(), all);
    assert_eq!(names(Dialect::Anthropic).len(), all);
    let gemini = names(Dialect::Gemini);
    assert_eq!(gemini.len(), all - 1);
    assert!(!gemini.contains(&"3d_render".to_owned()));
    for d in [
        Dialect::OpenAi,
        Dialect::OpenAiStrict,
        Dialect::OpenAiResponses,
        Dialect::OpenAiResponsesStrict,
    ] {
        let openai = names(d);
        assert_eq!(openai.len(), all - 1, "{d}");
        assert!(!openai.contains(&"dotted_params".to_owned()), "{d}");
    }
    // What is left is valid for the provider: every name matches its rule.
    for d in Dialect::PROVIDERS {
        for n in names(d) {
            assert!(d.accepts_tool_name(&n), "{d}: {n}");
        }
    }
}

#[test]
fn a_sensitive_default_is_applied_at_run_time_but_never_written_down() {
    const SECRET: &str = "compat-default-secret";
    let tools = load_tools(&[corpus()], &Options::default()).unwrap();
    let mut written = vec![
        Config::new()
            .tools_dir(corpus())
            .generate()
            .unwrap()
            .rust()
            .unwrap()
            .to_owned(),
        prompt::system_prompt(&tools),
        prompt::docs(&tools),
    ];
    written.extend(Dialect::ALL.map(|d| schema::definitions_json(&tools, d)));
    written.extend(compat::TOOLS.iter().map(|t| t.schema.to_owned()));
    for text in &written {
        assert!(!text.contains(SECRET), "the secret default leaked:\n{text}");
    }
    // The runtime fills it in.
    let runtime = Runtime::builder()
        .registry(Loader::new().dir(corpus()).quiet().load().registry)
        .build();
    let valid = runtime.check("lossless_defaults", json!({})).unwrap();
    let p = valid.params();
    assert_eq!(p["token"], json!(SECRET));
    assert_eq!(p["zip"], json!("12345"));
    assert_eq!(p["agent_id"], json!("007"));
    assert_eq!(p["retries"], json!(5));
    assert_eq!(p["verbose"], json!(true));
    assert_eq!(p["level"], json!("high"));
    assert!(p.get("note").is_none(), "`default: null` is no default");
    // `values:` on a string input is ignored: any string is accepted.
    assert!(
        runtime
            .check("lossless_defaults", json!({"format": "yaml"}))
            .is_ok()
    );
}

#[tokio::test]
async fn the_tools_run_as_written() {
    let runtime = Runtime::builder()
        .registry(Loader::new().dir(corpus()).quiet().load().registry)
        .build();
    let text = |r: toolbind::ToolResult| {
        assert!(!r.is_error, "{r:?}");
        match &r.content[0] {
            toolbind::Content::Text { text } => serde_json::from_str::<Value>(text).unwrap(),
            other => panic!("{other:?}"),
        }
    };
    // Punctuation and case-colliding enum values travel exactly as written.
    for op in ["+", "-", "*", "/"] {
        let r = runtime
            .call(
                "calculator",
                json!({"op": op, "unit": "mb"}),
                CallOptions::new(),
            )
            .await;
        assert_eq!(text(r), json!({"op": op, "unit": "mb"}));
    }
    // The typed path maps the fallback variants back to the wire values.
    let call =
        compat::ToolCall::from_call("calculator", json!({"op": "/", "mime": "image-png"})).unwrap();
    let compat::ToolCall::Calculator(p) = &call else {
        panic!("{call:?}")
    };
    assert_eq!(p.op, compat::calculator::Op::Slash);
    assert_eq!(p.unit, compat::calculator::Unit::Mb2, "the default `MB`");
    assert_eq!(p.mime, Some(compat::calculator::Mime::ImagePng2));
    let r = runtime
        .call_typed::<compat::calculator::Tool>(p.clone(), CallOptions::new())
        .await;
    assert_eq!(
        text(r),
        json!({"op": "/", "unit": "MB", "mime": "image-png"})
    );
    // Old and new names side by side (the Pi tool API's alias pattern).
    let r = runtime
        .call(
            "aliases",
            json!({"maxResults": 3, "max_results": 4, "Self": "a", "self": "d"}),
            CallOptions::new(),
        )
        .await;
    assert_eq!(
        text(r),
        json!({"maxResults": 3, "max_results": 4, "Self": "a", "self": "d"})
    );
    // Names that are not snake_case, and names like crates and keywords.
    for name in ["web-search", "webSearch", "Gmail", "3d_render"] {
        let r = runtime
            .call(name, json!({"q": name}), CallOptions::new())
            .await;
        assert_eq!(text(r), json!({"q": name}), "{name}");
    }
    for name in ["std", "core", "toolbind", "self", "crate"] {
        let r = runtime.call(name, json!({}), CallOptions::new()).await;
        assert_eq!(text(r), json!({}), "{name}");
    }
    let r = runtime
        .call(
            "dotted_params",
            json!({"x-api-version": "2024-01", "page.size": 5}),
            CallOptions::new(),
        )
        .await;
    assert_eq!(text(r), json!({"x-api-version": "2024-01", "page.size": 5}));
}
