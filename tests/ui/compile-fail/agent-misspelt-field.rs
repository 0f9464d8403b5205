toolbind::tools!("../fixtures/agent");

fn main() {
    let _ = web_search::Params {
        qeury: "rust trybuild".into(),
        limit: None,
        mode: web_search::Mode::Fast,
    };
}
