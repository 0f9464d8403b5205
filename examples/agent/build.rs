// The whole codegen setup of an agent: bindings and the system prompt from tools/.
fn main() -> Result<(), toolbind_codegen::Error> {
    toolbind_codegen::Config::new()
        .tools_dir("../../tools")
        .emit_prompt(true)
        .compile()
}
