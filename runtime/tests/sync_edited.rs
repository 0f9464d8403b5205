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

/// `sync(seed, data)` on another thread, bounded: a comparison that blocked (a FIFO
/// opened for reading) fails the test instead of hanging it.
fn sync_within(seed: &Path, data: &Path) -> toolbind::syncing::SyncReport {
    let (seed, data) = (seed.to_path_buf(), data.to_path_buf());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(sync(&seed, &data));
    });
    rx.recv_timeout(std::time::Duration::from_secs(120))
        .expect("sync did not finish: the comparison blocked")
        .unwrap()
}

/// At the same version the two copies are compared: what an attacker (or an accident)
/// puts in a seed folder is taken as `copy_tree` takes it. A FIFO is never opened, a
/// symlink out of the seed folder never followed, and a 200 MB file is compared by size
/// before its bytes.
#[test]
fn the_comparison_opens_no_fifo_follows_no_link_out_and_reads_a_large_file() {
    let tmp = tempfile::tempdir().unwrap();
    let (seed, data) = (tmp.path().join("seed"), tmp.path().join("data"));
    tool(&seed, "big", 1, "echo big\n");
    let blob = seed.join("big/data.bin");
    fs::File::create(&blob)
        .unwrap()
        .set_len(200 * 1024 * 1024)
        .unwrap();
    sync_within(&seed, &data);

    // Special files and a link out, added to the seed after the install.
    nix::unistd::mkfifo(
        &seed.join("big/pipe"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    let outside = tmp.path().join("outside.txt");
    fs::write(&outside, "not the tool's").unwrap();
    std::os::unix::fs::symlink(&outside, seed.join("big/link")).unwrap();
    let report = sync_within(&seed, &data);
    assert!(
        matches!(report.get("big"), Some(SyncOutcome::Unchanged { .. })),
        "{report}"
    );
    assert!(!data.join("big/pipe").exists() && !data.join("big/link").exists());

    // One byte at the end of the 200 MB file: an edit, told apart.
    use std::io::{Seek, SeekFrom, Write};
    let mut f = fs::OpenOptions::new().write(true).open(&blob).unwrap();
    f.seek(SeekFrom::End(-1)).unwrap();
    f.write_all(b"x").unwrap();
    drop(f);
    let report = sync_within(&seed, &data);
    assert!(
        matches!(
            report.get("big"),
            Some(SyncOutcome::NotBumped { version: 1, .. })
        ),
        "{report}"
    );
}
