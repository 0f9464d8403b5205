//! The trybuild suite's crate (`ui.rs`; see `tests/README.md`): it has no code of its own.
