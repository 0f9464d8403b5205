//! The emitter writes text directly, in prettyplease's layout. These tests hold it to that:
//! for the fixtures and for a stress folder of long and odd names, formatting the output
//! with prettyplease changes nothing.

use std::path::{Path, PathBuf};

use toolbind_codegen::emit::{Generator, rust};
use toolbind_codegen::{Options, load_tools};

#[track_caller]
fn assert_prettyplease_stable(src: &str) {
    let file =
        syn::parse_file(src).unwrap_or_else(|e| panic!("generated code does not parse: {e}"));
    let pretty = format!(
        "{}\n{}",
        toolbind_codegen::emit::HEADER,
        prettyplease::unparse(&file)
    );
    if pretty != src {
        let (n, (ours, theirs)) = src
            .lines()
            .zip(pretty.lines())
            .enumerate()
            .find(|(_, (a, b))| a != b)
            .expect("outputs differ only in length");
        let start = n.saturating_sub(3);
        let context: Vec<&str> = pretty.lines().skip(start).take(8).collect();
        panic!(
            "line {}: emitter wrote\n{ours}\nprettyplease writes\n{theirs}\n--- prettyplease around it ---\n{}",
            n + 1,
            context.join("\n")
        );
    }
}

#[test]
fn fixtures_are_prettyplease_formatted() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/valid");
    let tools = load_tools(&[dir], &Options::default()).unwrap();
    assert_prettyplease_stable(&rust(&tools, Generator::Build));
    assert_prettyplease_stable(&rust(&[], Generator::Build));
    assert_prettyplease_stable(&rust(&tools[..1], Generator::Build));
}

/// The runtime path is written as the code is emitted, not patched in afterwards: lines
/// are measured with the path they hold (`Config::runtime_path`): with a shorter path, a
/// line broken for `::toolbind` fits on one. (A path longer than `::toolbind` meets the
/// `fn serialize`/`fn deserialize` headers, which the emitter always breaks the same way:
/// not covered.)
#[test]
fn a_relocated_runtime_is_prettyplease_formatted() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/valid");
    let tools = load_tools(&[dir], &Options::default()).unwrap();
    let src = toolbind_codegen::emit::rust_at(&tools, Generator::Build, "::rt");
    assert!(src.contains("impl ::rt::__private::Tool for Tool"));
    assert_prettyplease_stable(&src);
}

/// The macro's stand-in comes from the same `ToolCall` emitter as the real bindings.
#[test]
fn the_stand_in_is_the_tool_call_over_no_tools() {
    let stand_in = toolbind_codegen::emit::stand_in();
    assert_prettyplease_stable(&format!("{}\n{stand_in}", toolbind_codegen::emit::HEADER));
    let empty = rust(&[], Generator::Build);
    for item in [
        "pub enum ToolCall {}",
        "pub const NAMES: &'static [&'static str] = &[];",
        "pub fn from_call(",
        "pub fn parse(",
        "pub fn call<'a>(",
        "pub fn to_args(&self)",
        "pub static TOOLS: &[::toolbind::__private::CompiledTool] = &[];",
    ] {
        assert!(stand_in.contains(item), "{item}\n{stand_in}");
        assert!(empty.contains(item), "{item}\n{empty}");
    }
}

fn tool(dir: &Path, name: &str, inputs: &str) {
    let t = dir.join(name);
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(
        t.join("TOOL.md"),
        format!("---\nname: {name}\ndescription: A tool with a long name, {name}, to push lines past the margin.\nlanguage: bash\ninputs:\n{inputs}---\n# T\n"),
    )
    .unwrap();
    std::fs::write(t.join("index.sh"), "cat\n").unwrap();
}

#[test]
fn long_and_odd_names_are_prettyplease_formatted() {
    let tmp = std::env::temp_dir().join(format!("toolbind-format-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let long = "a_really_quite_long_parameter_name_that_goes_on_and_on_for_a_while";
    let long = &long[..64];
    for (i, name) in [
        "x",
        "web_fetch",
        "an_extremely_descriptive_tool_name_for_fetching_web_pages",
        &"t".repeat(64),
    ]
    .iter()
    .enumerate()
    {
        let inputs = format!(
            "  {long}:\n    type: string\n    description: d\n    optional: true\n    sensitive: true\n  maxResultsPerPageOfTheSearchEngineResultsForTheQuery{i}:\n    type: number\n    description: d\n    optional: true\n  greeting_{i}:\n    type: string\n    description: d\n    default: \"{}\"\n  short:\n    type: string\n    description: d\n    default: hi\n  mode_with_a_long_name_{i}:\n    type: enum\n    description: d\n    values: first-value-with-a-long-spelling, second.value.with.dots, {}\n    default: second.value.with.dots\n  m:\n    type: enum\n    description: d\n    values: a, b\n  flag:\n    type: boolean\n    description: d\n    default: false\n",
            "a long default greeting that certainly does not fit on the line ".repeat(2),
            "v".repeat(70),
        );
        tool(&tmp, name, &inputs);
    }
    let tools = load_tools(std::slice::from_ref(&tmp), &Options::default()).unwrap();
    let src = rust(&tools, Generator::Build);
    std::fs::remove_dir_all(&tmp).unwrap();
    assert_prettyplease_stable(&src);
}

/// Found by fuzzing: an enum type named after a 64-character input overflows its `impl ...
/// for Type {` headers, which prettyplease breaks before `for`; a variant named after a
/// tool name past the margin breaks its match-arm patterns.
#[test]
fn longest_portable_names_are_prettyplease_formatted() {
    let tmp = std::env::temp_dir().join(format!("toolbind-format-long-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let long = "e".repeat(64);
    let inputs = format!("  {long}:\n    type: enum\n    description: d\n    values: a, b\n");
    tool(&tmp, &"n".repeat(64), &inputs);
    let tools = load_tools(std::slice::from_ref(&tmp), &Options::default()).unwrap();
    let src = rust(&tools, Generator::Build);
    std::fs::remove_dir_all(&tmp).unwrap();
    assert!(src.contains("    for Eeee"), "{src}");
    assert_prettyplease_stable(&src);
}

#[test]
fn mcp_server_modules_are_prettyplease_formatted() {
    use toolbind_codegen::emit::{McpServerCode, rust_with_mcp};
    use toolbind_codegen::mcp::{Snapshot, tool_specs};
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/ui/fixtures/mcp");
    let servers: Vec<McpServerCode> = ["everything", "filesystem", "memory"]
        .iter()
        .map(|name| {
            let file = dir.join(format!("{name}.json"));
            let (snapshot, _) = Snapshot::read(&file).unwrap_or_else(|e| panic!("{e:?}"));
            McpServerCode::new(
                (*name).to_owned(),
                snapshot.name.clone(),
                format!("{} {}", snapshot.server.name, snapshot.server.version),
                file.display().to_string(),
                tool_specs(&snapshot, ""),
            )
            .with_snapshot(snapshot.to_json())
        })
        .collect();
    let local = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/valid");
    let tools = load_tools(&[local], &Options::default()).unwrap();
    for generator in [Generator::Build, Generator::Macro] {
        assert_prettyplease_stable(&rust_with_mcp(&[], &servers, generator, "::toolbind"));
        assert_prettyplease_stable(&rust_with_mcp(&tools, &servers, generator, "::toolbind"));
    }
}
