//! The trybuild suite (see `tests/README.md`): `compile-fail` holds one case per TOOL.md
//! error and per kind of wrong agent code, each with its reviewed `.stderr`; `pass` holds
//! folders that must compile (and whose `main` must run) cleanly.
//!
//! Rewrite the `.stderr` files with `TRYBUILD=overwrite cargo test -p toolbind-ui-tests`,
//! then read every diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("pass/*.rs");
    t.compile_fail("compile-fail/*.rs");
}
