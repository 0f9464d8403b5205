toolbind::tools!(
    "../fixtures/duplicate-tool-name/a",
    "../fixtures/duplicate-tool-name/b",
);

fn main() {}
