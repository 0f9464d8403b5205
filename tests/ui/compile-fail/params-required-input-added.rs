// The caller of `params-survive-an-optional-input`, against the TOOL.md with a required
// input added: `new` takes it, so the caller must say what it is.
toolbind::tools!("../fixtures/params-required-added");

fn main() {
    let _ = search::Params::new("rust".to_owned()).with_limit(5);
}
