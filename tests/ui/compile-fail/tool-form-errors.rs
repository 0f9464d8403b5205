// The single-tool form reports the same diagnostics as `tools!`.
toolbind::tool!("../fixtures/unknown-type/fetch_page");

fn main() {}
