toolbind::tools!("../fixtures/tool-name-not-snake-case");

fn main() {}
