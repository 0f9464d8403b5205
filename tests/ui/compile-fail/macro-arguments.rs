mod none {
    toolbind::tools!();
}

mod not_a_string {
    toolbind::tools!(tools);
}

mod two_tools {
    toolbind::tool!("../fixtures/agent/clock", "../fixtures/agent/web_search");
}

fn main() {}
