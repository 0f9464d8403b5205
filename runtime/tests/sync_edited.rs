//! A seed tool edited without bumping its `version:`: told apart from an unchanged one,
//! reported with the fix, and still not installed (an installed copy is never replaced at
//! the same version).

use std::fs;
use std::path::Path;

use toolbind::sync;
use toolbind::syncing::SyncOutcome;

fn tool(dir: &Path, name: &str, version: u64, script: &str) {
    let t = dir.join(name);
    fs::create_dir_all(t.join("lib")).unwrap();
    fs::write(
        t.join("TOOL.md"),
        format!("---\nname: {name}\ndescription: Tool {name}.\nversion: {version}\nlanguage: bash\n---\n"),
    )
    .unwrap();
    fs::write(t.join("index.sh"), script).unwrap();
    fs::write(t.join("lib/helper.sh"), "true\n").unwrap();
}

#[test]
fn an_edit_without_a_version_bump_is_reported_with_the_fix_and_not_installed() {
    let tmp = tempfile::tempdir().unwrap();
    let (seed, data) = (tmp.path().join("seed"), tmp.path().join("data"));
    tool(&seed, "dice", 1, "echo 4\n");
    tool(&seed, "coin", 1, "echo heads\n");
    sync(&seed, &data).unwrap();

    // The seed's script changes; its version does not. `coin` is left as it was.
    fs::write(seed.join("dice/index.sh"), "echo $((RANDOM % 6 + 1))\n").unwrap();
    let report = sync(&seed, &data).unwrap();
    let file = seed.join("dice/TOOL.md");
    assert_eq!(
        report.get("dice"),
        Some(&SyncOutcome::NotBumped {
            version: 1,
            file: file.clone()
        })
    );
    assert_eq!(
        report.get("coin"),
        Some(&SyncOutcome::Unchanged {
            installed: 1,
            seed: 1
        })
    );
    assert_eq!(
        fs::read_to_string(data.join("dice/index.sh")).unwrap(),
        "echo 4\n",
        "the installed copy is not replaced at the same version"
    );
    let text = report.to_string();
    assert!(
        text.contains(&format!(
            "not installed dice: the seed differs from the installed copy, but both are version 1; bump `version:` to 2 in {} to install it",
            file.display()
        )),
        "{text}"
    );
    assert!(
        text.ends_with(
            "0 installed, 0 updated, 1 unchanged, 0 skipped, 1 edited without a version bump"
        ),
        "{text}"
    );
    assert_eq!(report.counts().not_bumped, 1);

    // A file in a sub-folder, and a file only one side has, count as edits too.
    fs::write(seed.join("dice/index.sh"), "echo 4\n").unwrap();
    assert!(matches!(
        sync(&seed, &data).unwrap().get("dice"),
        Some(SyncOutcome::Unchanged { .. })
    ));
    fs::write(seed.join("coin/lib/helper.sh"), "false\n").unwrap();
    fs::write(seed.join("dice/NOTES.md"), "new\n").unwrap();
    let report = sync(&seed, &data).unwrap();
    assert!(matches!(
        report.get("coin"),
        Some(SyncOutcome::NotBumped { .. })
    ));
    assert!(matches!(
        report.get("dice"),
        Some(SyncOutcome::NotBumped { .. })
    ));

    // Bumped: installed.
    tool(&seed, "dice", 2, "echo 6\n");
    assert_eq!(
        sync(&seed, &data).unwrap().get("dice"),
        Some(&SyncOutcome::Updated { from: 1, to: 2 })
    );
    assert_eq!(
        fs::read_to_string(data.join("dice/index.sh")).unwrap(),
        "echo 6\n"
    );
}
