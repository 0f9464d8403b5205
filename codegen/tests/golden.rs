//! Golden files for every emitter over `fixtures/valid`, compared exactly.
//! `UPDATE_EXPECT=1 cargo test -p toolbind-codegen --test it golden::` rewrites them.

use std::path::{Path, PathBuf};

use toolbind_codegen::Config;
use toolbind_codegen::schema::Dialect;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests")
}

fn check(path: &Path, actual: &str) -> Result<(), String> {
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, actual).unwrap();
        return Ok(());
    }
    let expected = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "{}: {e} (run with UPDATE_EXPECT=1 to create it)",
            path.display()
        )
    })?;
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .map_or(
                expected.lines().count().min(actual.lines().count()) + 1,
                |i| i + 1,
            );
        return Err(format!(
            "{} differs from the generated output at line {line} (UPDATE_EXPECT=1 rewrites it after review)",
            path.display()
        ));
    }
    Ok(())
}

#[test]
fn every_emitter_matches_its_golden() {
    let generated = Config::new()
        .tools_dir(root().join("fixtures/valid"))
        .emit_schemas(true)
        .emit_prompt(true)
        .emit_docs(true)
        .generate()
        .unwrap_or_else(|e| {
            panic!(
                "{}",
                e.diagnostics()
                    .map(|d| d.render(false))
                    .unwrap_or(e.to_string())
            )
        });
    assert_eq!(generated.files.len(), 1 + Dialect::ALL.len() + 2);
    let errors: Vec<String> = generated
        .files
        .iter()
        .filter_map(|(name, content)| check(&root().join("golden").join(name), content).err())
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn generation_is_deterministic() {
    let gen_once = || {
        Config::new()
            .tools_dir(root().join("fixtures/valid"))
            .emit_schemas(true)
            .generate()
            .unwrap()
            .files
    };
    assert_eq!(gen_once(), gen_once());
}
