//! Replays the checked-in fuzz inputs through the fuzz targets' own checks
//! (`toolbind_tests::fuzzing`), so what the fuzzers found stays fixed without a fuzzer:
//!
//! - `fuzz/seeds/<target>/`: the starting corpus (the shipped tools, the codegen fixtures,
//!   typical and quirky model arguments);
//! - `fuzz/regressions/<target>/`: every input that once broke an invariant, named after
//!   what it broke.

use std::path::{Path, PathBuf};

fn inputs(kind: &str, target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz")
        .join(kind)
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no inputs in {}", dir.display());
    files
}

/// Runs `check` on every input of `target`, naming the file of the first that fails.
fn replay(target: &str, check: fn(&[u8])) {
    for kind in ["seeds", "regressions"] {
        for file in inputs(kind, target) {
            let bytes = std::fs::read(&file).unwrap();
            if std::panic::catch_unwind(|| check(&bytes)).is_err() {
                panic!(
                    "fuzz input {} breaks an invariant (see above)",
                    file.display()
                );
            }
        }
    }
}

#[test]
fn front_end_inputs_hold_the_invariants() {
    replay("front_end", |b| {
        toolbind_tests::fuzzing::front_end(b);
    });
}

#[test]
fn argument_inputs_hold_the_invariants() {
    replay("arguments", toolbind_tests::fuzzing::arguments);
}

/// The seeds are valid tools: the front end accepts every one (a seed that stops parsing
/// would quietly weaken the fuzzer's start).
#[test]
fn front_end_seeds_are_valid_tools() {
    for file in inputs("seeds", "front_end") {
        let bytes = std::fs::read(&file).unwrap();
        assert!(
            toolbind_tests::fuzzing::front_end(&bytes).is_some(),
            "{} no longer parses",
            file.display()
        );
    }
}
