//! The transpile cache runs code as the agent's user: it must be private and its entries
//! verified against their source before use.

use crate::exec_common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use exec_common::*;
use serde_json::json;
use toolbind::exec::{ExecConfig, SubprocessExecutor};
use toolbind_codegen::model::Language;

fn ts() -> toolbind::ToolInfo {
    spec("seed_example", Language::TypeScript, "index.ts")
}

fn with_cache(dir: &Path) -> SubprocessExecutor {
    SubprocessExecutor::new(ExecConfig::default().cache_dir(dir.to_path_buf()))
}

fn mirrors(cache: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(cache.join("ts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect()
}

#[tokio::test]
async fn a_tampered_cache_entry_is_rebuilt_not_run() {
    let t = tempfile::tempdir().unwrap();
    let cache = t.path().join("cache");
    let p = json!({"param_name": "hi"});
    let first = call(&with_cache(&cache), &ts(), p.clone()).await;
    assert!(!first.is_error, "{first:?}");
    let found = mirrors(&cache);
    assert_eq!(found.len(), 1, "{found:?}");
    // What a planted entry would hold: valid JS that is not the tool's code.
    std::fs::write(
        found[0].join("index.mjs"),
        "export async function execute() { return 'pwned'; }\n",
    )
    .unwrap();
    let again = call(&with_cache(&cache), &ts(), p).await;
    assert!(!again.is_error, "{again:?}");
    assert_ne!(again.text_content(), "pwned", "a tampered entry was run");
    assert_eq!(again.text_content(), first.text_content());
    assert_eq!(
        std::fs::metadata(&cache).unwrap().mode() & 0o777,
        0o700,
        "the cache is created private"
    );
}

#[tokio::test]
async fn a_cache_that_is_a_symlink_or_not_ours_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let real = t.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).unwrap();
    let link = t.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let r = call(&with_cache(&link), &ts(), json!({"param_name": "x"})).await;
    assert!(r.is_error, "{r:?}");
    assert!(r.text_content().contains("symlink"), "{r:?}");

    // Only root can hand a folder to another user.
    if nix::unistd::geteuid().is_root() {
        let theirs = t.path().join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        let r = call(&with_cache(&theirs), &ts(), json!({"param_name": "x"})).await;
        assert!(r.is_error, "{r:?}");
        assert!(r.text_content().contains("owned by uid 65534"), "{r:?}");
    }
}
