// The build.rs path end to end: the shipped tools/ folder becomes `toolbind_tests::shipped`,
// and the compatibility corpus (compat/, warnings and all) `toolbind_tests::compat`.
fn main() -> Result<(), toolbind_codegen::Error> {
    toolbind_codegen::Config::new()
        .tools_dir("../tools")
        .emit_schemas(true)
        .emit_prompt(true)
        .emit_docs(true)
        .compile()?;
    // The shipped tools again, reaching the runtime through a re-export
    // (`Config::runtime_path`), as a crate with a renamed dependency would.
    toolbind_codegen::Config::new()
        .tools_dir("../tools")
        .out_file("relocated.rs")
        .runtime_path("crate::relocated::runtime")
        .compile()?;
    // Hostile texts (hostile/): a TOOL.md and an MCP snapshot whose descriptions, names and
    // values hold code blocks, HTML and bidi controls. `cargo test`'s doctests of this
    // crate would run any code block they became in the generated docs (each fails), and
    // rustc refuses a bidi control in a comment. Their warnings (untyped fields, dropped
    // defaults) are the point, not news.
    toolbind_codegen::Config::new()
        .tools_dir("hostile/tools")
        .mcp_snapshot("hostile/injected.json")
        .out_file("hostile.rs")
        .print_warnings(false)
        .compile()?;
    // Bindings of MCP snapshots alone (no tools folder): the `ToolCall` over no local tools
    // must not warn (unused arguments) in a `#![deny(warnings)]` crate (src/lib.rs
    // `mcp_only`; `shipped` is the local-only shape, `hostile` the mixed one).
    toolbind_codegen::Config::new()
        .mcp_snapshot("ui/fixtures/mcp/filesystem.json")
        .mcp_snapshot("ui/fixtures/mcp/memory.json")
        .out_file("mcp_only.rs")
        // filesystem's `read_media_file` output is untyped: a warning that is not news.
        .print_warnings(false)
        .compile()?;
    // The proc-macro's stand-in after an error (src/lib.rs `stand_in`), under the same
    // `#![deny(warnings)]` as real bindings.
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(
        out.join("toolbind/stand_in.rs"),
        toolbind_codegen::emit::stand_in(),
    )
    .expect("OUT_DIR/toolbind is writable");
    toolbind_codegen::Config::new()
        .tools_dir("compat")
        .out_file("compat.rs")
        // 37 warnings on every workspace build would bury real ones; tests/compat.rs
        // checks them instead.
        .print_warnings(false)
        .compile()
}
