// The build.rs path end to end: the shipped tools/ folder becomes `toolbind_tests::shipped`.
fn main() -> Result<(), toolbind_codegen::Error> {
    toolbind_codegen::Config::new()
        .tools_dir("../tools")
        .emit_schemas(true)
        .emit_prompt(true)
        .emit_docs(true)
        .compile()
}
