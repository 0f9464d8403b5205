toolbind::tools!("../fixtures/agent");

fn handle(call: ToolCall) -> String {
    // A new tool in the folder is a new variant: every dispatcher must handle it.
    match call {
        ToolCall::WebSearch(p) => p.query,
    }
}

fn main() {
    let _ = handle;
}
