toolbind::tools!("../fixtures/no-such-folder");

fn main() {
    assert!(TOOLS.is_empty());
}
