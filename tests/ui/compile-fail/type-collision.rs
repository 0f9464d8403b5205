toolbind::tools!("../fixtures/type-collision");

// The stand-ins emitted after an error keep this from adding "cannot find" errors.
fn main() {
    assert!(TOOLS.is_empty());
    let _: Option<ToolCall> = None;
    if let Ok(call) = ToolCall::from_call("web_search2", Default::default()) {
        println!("{} {}", call.name(), call.to_args());
    }
}
