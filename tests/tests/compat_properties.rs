//! Property: any tool set the runtime loader accepts, codegen accepts too (warnings
//! allowed), and the generated Rust compiles under `#![deny(warnings)]`.
//!
//! The generated shapes are the compatibility corpus's (see `compat/README.md`), drawn at
//! random and combined: names providers accept but that are not snake_case, names that
//! collide in Rust or shadow a crate, punctuation-only enum values, case-only differences,
//! duplicate and empty enum values, defaults in another YAML type, sensitive defaults,
//! extra metadata keys. Every case is loaded and generated in-process; then all of them are
//! compiled at once, as modules of one scratch crate, by a real `cargo check` (rustc is the
//! judge of "compiles", not syn). `PROPTEST_CASES` sets the number of tool sets (default 48).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config as RunnerConfig, RngAlgorithm, TestRng, TestRunner};
use toolbind::Loader;
use toolbind_codegen::{Config, load_tools};

fn tool_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-z][a-z0-9]{0,6}",
        1 => "[a-z]{1,4}-[a-z]{1,4}",
        1 => "[a-z]{1,4}[A-Z][a-z]{1,4}",
        1 => "[A-Z][a-z]{1,6}",
        1 => "[0-9][a-z_]{1,5}",
        1 => "[a-z]{1,3}\\.[a-z]{1,3}",
        1 => prop::sample::select(vec![
            "std", "core", "alloc", "toolbind", "self", "Self", "crate", "super", "type", "--",
            "_-", "Tool", "ToolCall", "TOOLS",
        ])
        .prop_map(str::to_owned),
    ]
}

fn param_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-z][a-z0-9]{0,5}(_[a-z]{1,3})?",
        2 => prop::sample::select(vec![
            "maxResults", "max_results", "MaxResults", "max-results", "max.results", "Self",
            "self", "type", "r#x", "--", "-", ".", "_", "x-y", "x.y", "2fa", "params", "Params",
            "tool", "f",
        ])
        .prop_map(str::to_owned),
    ]
}

fn enum_value() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => "[a-z]{1,4}",
        2 => prop::sample::select(vec![
            "+", "-", "*", "/", "<=", "!", "%", "mb", "MB", "Mb", "image/png", "image-png", "1",
            "-1", "1.5", "Self", "self", "V1", "v1", "°C", "x y",
        ])
        .prop_map(str::to_owned),
    ]
}

#[derive(Debug, Clone)]
struct GenInput {
    name: String,
    /// 0 string, 1 number, 2 boolean, 3 enum.
    ty: u8,
    optional: bool,
    sensitive: bool,
    values: Vec<String>,
    trailing_comma: bool,
    /// 0 none, 1 natural, 2 written in another YAML type, 3 `null`.
    default: u8,
    extra_key: bool,
}

fn input() -> impl Strategy<Value = GenInput> {
    (
        param_name(),
        0u8..4,
        any::<(bool, bool, bool, bool)>(),
        prop::collection::vec(enum_value(), 1..5),
        0u8..4,
    )
        .prop_map(
            |(name, ty, (optional, sensitive, trailing_comma, extra_key), values, default)| {
                GenInput {
                    name,
                    ty,
                    optional,
                    sensitive,
                    values,
                    trailing_comma,
                    default,
                    extra_key,
                }
            },
        )
}

fn yaml_str(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

impl GenInput {
    fn render(&self, out: &mut String) {
        let ty = ["string", "number", "boolean", "enum"][usize::from(self.ty)];
        let _ = writeln!(out, "  {}:", yaml_str(&self.name));
        let _ = writeln!(out, "    type: {ty}");
        out.push_str("    description: d\n");
        if self.optional {
            out.push_str("    optional: true\n");
        }
        if self.sensitive {
            out.push_str("    sensitive: true\n");
        }
        if self.ty == 3 {
            let mut list = self.values.join(",");
            if self.trailing_comma {
                list.push(',');
            }
            let _ = writeln!(out, "    values: {}", yaml_str(&list));
        }
        let default = match (self.default, self.ty) {
            (0, _) => None,
            (3, _) => Some("null".to_owned()),
            (1, 0) => Some("\"text\"".to_owned()),
            (2, 0) => Some("12345".to_owned()),
            (1, 1) => Some("5".to_owned()),
            (2, 1) => Some("\"5\"".to_owned()),
            (1, 2) => Some("true".to_owned()),
            (2, 2) => Some("\"false\"".to_owned()),
            (_, _) => Some(yaml_str(self.values[0].trim())),
        };
        if let Some(d) = default {
            let _ = writeln!(out, "    default: {d}");
        }
        if self.extra_key {
            out.push_str("    example: something\n");
        }
    }
}

fn tool_set() -> impl Strategy<Value = Vec<(String, Vec<GenInput>, bool)>> {
    prop::collection::vec(
        (
            tool_name(),
            prop::collection::vec(input(), 0..5),
            any::<bool>(),
        ),
        1..4,
    )
}

/// Writes a tool set as folders of `dir`; a name already used in the set is skipped (two
/// folders claiming one name is a load-order question, not a shape).
fn write_set(dir: &Path, set: &[(String, Vec<GenInput>, bool)]) -> usize {
    let mut seen: Vec<&str> = Vec::new();
    for (i, (name, inputs, metadata)) in set.iter().enumerate() {
        if seen.contains(&name.as_str()) {
            continue;
        }
        seen.push(name);
        let folder = dir.join(format!("t{i}"));
        std::fs::create_dir_all(&folder).unwrap();
        let mut md = format!(
            "---\nname: {}\ndescription: d\nlanguage: bash\n",
            yaml_str(name)
        );
        if *metadata {
            md.push_str("category: misc\ntags: [a, b]\nversion: \"3\"\n");
        }
        let mut seen_inputs: Vec<&str> = Vec::new();
        let mut body = String::new();
        for input in inputs {
            // A YAML mapping cannot hold one key twice.
            if !seen_inputs.contains(&input.name.as_str()) {
                seen_inputs.push(&input.name);
                input.render(&mut body);
            }
        }
        if !body.is_empty() {
            md.push_str("inputs:\n");
            md.push_str(&body);
        }
        md.push_str("---\n");
        std::fs::write(folder.join("TOOL.md"), md).unwrap();
        std::fs::write(folder.join("index.sh"), "cat\n").unwrap();
    }
    seen.len()
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

#[test]
fn what_the_loader_accepts_codegen_accepts_and_rustc_compiles() {
    let cases: u32 = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48);
    let mut runner = TestRunner::new_with_rng(
        RunnerConfig::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    let tmp = tempfile::tempdir().unwrap();
    let mut modules = String::new();
    let (mut loaded_sets, mut tools_total, mut warnings_total) = (0, 0, 0);
    for case in 0..cases {
        let set = tool_set().new_tree(&mut runner).unwrap().current();
        let dir = tmp.path().join(format!("case{case}"));
        std::fs::create_dir_all(&dir).unwrap();
        let written = write_set(&dir, &set);
        let loaded = Loader::new().dir(&dir).quiet().load();
        if loaded.registry.len() < written {
            // A file with an error (a name no provider accepts, an enum whose values are
            // all empty...) is skipped by the loader and refused by codegen: both agree.
            let e = load_tools(std::slice::from_ref(&dir), &Default::default());
            assert!(
                e.is_err(),
                "codegen accepted what the loader skipped: {set:#?}"
            );
            continue;
        }
        loaded_sets += 1;
        tools_total += loaded.registry.len();
        let generated = Config::new()
            .tools_dir(&dir)
            .generate()
            .unwrap_or_else(|e| panic!("the loader accepted it, codegen did not: {e}\n{set:#?}"));
        warnings_total += toolbind_codegen::warnings(&generated.tools).len();
        let file = tmp.path().join(format!("case{case}.rs"));
        std::fs::write(&file, generated.rust().unwrap()).unwrap();
        let _ = writeln!(
            modules,
            "#[allow(dead_code)]\npub mod case{case} {{\n    include!({:?});\n}}",
            file.display().to_string()
        );
    }
    assert!(
        loaded_sets * 2 >= cases as usize,
        "too few loadable sets ({loaded_sets} of {cases}): the generator drifted"
    );
    assert!(warnings_total > 0);
    eprintln!(
        "{loaded_sets} of {cases} sets loaded: {tools_total} tools, {warnings_total} warnings"
    );

    // One scratch crate holds every case; rustc checks them all in one run.
    let krate = tmp.path().join("scratch");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    std::fs::write(
        krate.join("Cargo.toml"),
        format!(
            "[package]\nname = \"compat-scratch\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n[dependencies]\ntoolbind = {{ path = {:?}, default-features = false }}\nserde_json = \"1\"\n\n[workspace]\n",
            workspace().join("runtime").display().to_string()
        ),
    )
    .unwrap();
    std::fs::copy(workspace().join("Cargo.lock"), krate.join("Cargo.lock")).unwrap();
    std::fs::write(
        krate.join("src/lib.rs"),
        format!("#![deny(warnings)]\n{modules}"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO"))
        .args(["check", "--offline", "--quiet"])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", workspace().join("target/compat-check"))
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "generated code of {tools_total} tools in {loaded_sets} sets does not compile:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
