toolbind::tools!("../fixtures/nested-errors");

fn main() {}
