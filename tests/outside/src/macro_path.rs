//! The README's proc-macro path, in a crate outside the workspace
//! (tests/tests/outside.rs): its macro line as written, the README's startup lines (a
//! relative seed folder and data folder), then a typed call of each tool, one per language.

toolbind::tools!("../tools"); // the whole folder, as the README writes it

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
    let opts = toolbind::CallOptions::new;
    let dice = roll_dice::Params::new(6.0);
    let r = runtime.call_typed::<roll_dice::Tool>(dice, opts()).await;
    println!("roll_dice: {:?}: {}", r.stop, r.text_content());
    let words = word_count::Params::new("three small words".into());
    let r = runtime.call_typed::<word_count::Tool>(words, opts()).await;
    println!("word_count: {:?}: {}", r.stop, r.text_content());
    let todo = todo::Params::new(todo::Action::Add).with_text("from the macro".into());
    let r = runtime.call_typed::<todo::Tool>(todo, opts()).await;
    println!("todo: {:?}: {}", r.stop, r.text_content());
    Ok(())
}
