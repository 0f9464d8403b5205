toolbind::tools!("../fixtures/output-errors");

// The stand-ins emitted after an error keep this from adding "cannot find" errors.
fn main() {
    assert!(TOOLS.is_empty());
    let _: Option<ToolCall> = None;
}
