toolbind::tools!("../fixtures/tool-name-not-a-folder-name");

// The stand-ins emitted after an error keep this from adding "cannot find" errors.
fn main() {
    assert!(TOOLS.is_empty());
    let _: Option<ToolCall> = None;
}
