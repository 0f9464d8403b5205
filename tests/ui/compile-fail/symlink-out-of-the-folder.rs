toolbind::tools!("../fixtures/symlink-out-of-the-folder");

// The stand-ins emitted after an error keep this from adding "cannot find" errors.
fn main() {
    assert!(TOOLS.is_empty());
    let _: Option<ToolCall> = None;
}
