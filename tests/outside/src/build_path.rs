//! The README's build.rs path for the Python and bash tools, in a crate outside the
//! workspace (tests/tests/outside.rs): the README's startup lines as written (a relative
//! seed folder and data folder), then each tool called as a model calls it, by name and
//! JSON. `src/main.rs` is the README's own `main.rs`, which calls `todo`.

toolbind::include_tools!();

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let report = toolbind::sync("tools", "data/tools")?;
    println!("{report}");
    let loaded = toolbind::Loader::new().dir("data/tools").env().load();
    let runtime = toolbind::Runtime::builder()
        .registry(loaded.registry)
        .build();
    if let Some(status) = runtime.sandbox_status() {
        println!("sandbox: {status}");
    }
    for (name, args) in [
        ("roll_dice", serde_json::json!({"sides": 6})),
        ("word_count", serde_json::json!({"text": "three small words"})),
    ] {
        let r = runtime
            .call(name, args, toolbind::CallOptions::new())
            .await;
        println!("{name}: {:?}: {}", r.stop, r.text_content());
    }
    // The generated list of every tool: all three are compiled in.
    let names: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
    println!("compiled: {names:?}");
    Ok(())
}
