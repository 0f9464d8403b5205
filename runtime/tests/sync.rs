//! Sync-by-version: install, upgrade, no downgrade, malformed seeds, path escapes, symlinks,
//! recovery, and real SIGKILLs and concurrent processes.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use toolbind::sync;
use toolbind::syncing::{LOCK_FILE, SkipReason, SyncOptions, SyncOutcome, sync_with};

/// Writes a small valid bash tool `dir/<folder>` at `version`, with one extra file.
fn small_tool(dir: &Path, folder: &str, version: u64, extra: &str) {
    let t = dir.join(folder);
    fs::create_dir_all(&t).unwrap();
    fs::write(
        t.join("TOOL.md"),
        format!("---\nname: {folder}\ndescription: Tool {folder}.\nversion: {version}\nlanguage: bash\n---\n# {folder}\n"),
    )
    .unwrap();
    fs::write(t.join("index.sh"), "#!/usr/bin/env bash\necho hi\n").unwrap();
    fs::set_permissions(t.join("index.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::write(t.join(extra), format!("{folder} v{version}")).unwrap();
}

/// Every file under `dir` (relative path -> bytes); symlinks are listed as `-> target`.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            let ft = e.file_type().unwrap();
            if ft.is_symlink() {
                let target = fs::read_link(&p).unwrap();
                out.insert(rel, format!("-> {}", target.display()).into_bytes());
            } else if ft.is_dir() {
                walk(root, &p, out);
            } else {
                out.insert(rel, fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// [`tree`] without the sync's own dot-files at the top.
fn tools_tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut t = tree(dir);
    t.retain(|p, _| !p.to_string_lossy().starts_with('.'));
    t
}

/// Names in `data` that are not tools: the lock file, stale staging/old folders.
fn hidden(data: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    v.sort();
    v
}

#[test]
fn fresh_install_copies_everything() {
    let tmp = tempfile::tempdir().unwrap();
    let (seed, data) = (tmp.path().join("seed"), tmp.path().join("data/tools"));
    small_tool(&seed, "alpha", 3, "a.txt");
    small_tool(&seed, "beta", 0, "b.txt");
    fs::create_dir_all(seed.join("alpha/lib/deep")).unwrap();
    fs::write(seed.join("alpha/lib/deep/x.js"), "x").unwrap();
    fs::write(seed.join("README.md"), "not a tool").unwrap();

    let report = sync(&seed, &data).unwrap();
    assert_eq!(
        report.get("alpha"),
        Some(&SyncOutcome::Installed { version: 3 })
    );
    assert_eq!(
        report.get("beta"),
        Some(&SyncOutcome::Installed { version: 0 })
    );
    assert_eq!(report.tools.len(), 2, "{report}");
    assert_eq!(tree(&data.join("alpha")), tree(&seed.join("alpha")));
    assert_eq!(tree(&data.join("beta")), tree(&seed.join("beta")));
    let mode = fs::metadata(data.join("alpha/index.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755, "permissions are kept");
    assert_eq!(
        hidden(&data),
        [LOCK_FILE],
        "nothing but the lock file is left behind"
    );
    assert!(
        report
            .to_string()
            .ends_with("2 installed, 0 updated, 0 unchanged, 0 skipped")
    );
    assert!(
        report.to_string().contains("installed alpha (version 3)"),
        "{report}"
    );
}

#[test]
fn upgrade_replaces_the_whole_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let (seed, data) = (tmp.path().join("seed"), tmp.path().join("data"));
    small_tool(&data, "alpha", 1, "old-only.txt");
    small_tool(&seed, "alpha", 2, "new-only.txt");
    for exchange in [true, false] {
        let report = sync_with(
            &seed,
            &data,
            &SyncOptions::default().atomic_exchange(exchange),
        )
        .unwrap();
        if exchange {
            assert_eq!(
                report.get("alpha"),
                Some(&SyncOutcome::Updated { from: 1, to: 2 })
            );
            assert_eq!(
                report.to_string().lines().next(),
                Some("updated alpha 1 -> 2")
            );
        } else {
            assert_eq!(
                report.get("alpha"),
                Some(&SyncOutcome::Unchanged {
                    installed: 2,
                    seed: 2
                })
            );
        }
        assert_eq!(tree(&data.join("alpha")), tree(&seed.join("alpha")));
        assert!(!data.join("alpha/old-only.txt").exists());
        assert_eq!(hidden(&data), [LOCK_FILE]);
    }
    // The two-rename path does the same.
    small_tool(&seed, "alpha", 3, "third.txt");
    fs::remove_file(seed.join("alpha/new-only.txt")).unwrap();
    let opts = SyncOptions::default().atomic_exchange(false);
    let report = sync_with(&seed, &data, &opts).unwrap();
    assert_eq!(
        report.get("alpha"),
        Some(&SyncOutcome::Updated { from: 2, to: 3 })
    );
    assert_eq!(tree(&data.join("alpha")), tree(&seed.join("alpha")));
    assert_eq!(hidden(&data), [LOCK_FILE]);
}

#[test]
fn never_downgrades_and_unchanged_copies_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (seed, data) = (tmp.path().join("seed"), tmp.path().join("data"));
    small_tool(&data, "newer", 5, "mine.txt");
    small_tool(&seed, "newer", 4, "seed.txt");
    // The same files at the same version (an edited seed is `NotBumped`: sync_edited.rs).
    small_tool(&data, "same", 2, "same.txt");
    small_tool(&seed, "same", 2, "same.txt");
    let before = tools_tree(&data);
    let report = sync(&seed, &data).unwrap();
    assert_eq!(
        report.get("newer"),
        Some(&SyncOutcome::Unchanged {
            installed: 5,
            seed: 4
        })
    );
    assert_eq!(
        report.get("same"),
        Some(&SyncOutcome::Unchanged {
            installed: 2,
            seed: 2
        })
    );
    assert_eq!(tools_tree(&data), before, "nothing was copied");
    let text = report.to_string();
    assert!(
        text.contains("unchanged newer (version 5; seed has older 4, never downgraded)"),
        "{text}"
    );
    assert!(text.contains("unchanged same (version 2)"), "{text}");
}

#[test]
fn a_malformed_seed_never_replaces_a_good_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let (seed, data) = (tmp.path().join("seed"), tmp.path().join("data"));
    small_tool(&data, "alpha", 1, "good.txt");
    small_tool(&seed, "alpha", 2, "bad.txt");
    // Version 2 that reads fine, but an input type that does not exist.
    fs::write(
        seed.join("alpha/TOOL.md"),
        "---\nname: alpha\ndescription: A.\nversion: 2\nlanguage: bash\ninputs:\n  q:\n    type: strin\n    description: Q.\n---\n",
    )
    .unwrap();
    // No entry file for its language.
    small_tool(&seed, "noentry", 1, "x.txt");
    fs::remove_file(seed.join("noentry/index.sh")).unwrap();
    // Unreadable version and no name.
    small_tool(&seed, "garbled", 1, "x.txt");
    fs::write(seed.join("garbled/TOOL.md"), "---\nversion: many\n---\n").unwrap();
    // No TOOL.md at all.
    fs::create_dir_all(seed.join("empty")).unwrap();

    let before = tools_tree(&data);
    let report = sync(&seed, &data).unwrap();
    let Some(SyncOutcome::Skipped(SkipReason::Malformed(diags))) = report.get("alpha") else {
        panic!("{report}")
    };
    assert_eq!(diags[0].pos.line, 8);
    assert!(diags[0].message.contains("strin"), "{:?}", diags[0]);
    assert_eq!(tools_tree(&data), before, "the installed copy is untouched");
    let text = report.to_string();
    assert!(
        text.contains(&format!(
            "skipped alpha: malformed TOOL.md; the data folder is unchanged\n  {}:8:",
            seed.join("alpha/TOOL.md").display()
        )),
        "{text}"
    );

    let Some(SyncOutcome::Skipped(SkipReason::Malformed(d))) = report.get("noentry") else {
        panic!("{report}")
    };
    assert!(d[0].message.contains("missing entry file"), "{d:?}");
    assert!(matches!(
        report.get("garbled"),
        Some(SyncOutcome::Skipped(SkipReason::Malformed(_)))
    ));
    assert_eq!(
        report.get("empty"),
        Some(&SyncOutcome::Skipped(SkipReason::NoToolFile))
    );
    assert!(!data.join("noentry").exists() && !data.join("garbled").exists());
    assert_eq!(
        hidden(&data),
        [LOCK_FILE],
        "no staging left from skipped tools"
    );
}

#[test]
fn names_escaping_the_data_folder_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (seed, data) = (tmp.path().join("seed"), tmp.path().join("data"));
    small_tool(&seed, "ok", 1, "x.txt");
    small_tool(tmp.path(), "evil", 9, "x.txt"); // beside the seed folder
    let names = [
        "../evil",
        "/abs",
        "a/b",
        "..",
        ".",
        "",
        ".hidden",
        "ok\\..\\x",
        "ok",
    ];
    let opts = SyncOptions::default().only(names);
    let report = sync_with(&seed, &data, &opts).unwrap();
    for name in &names[..names.len() - 1] {
        assert!(
            matches!(
                report.get(name),
                Some(SyncOutcome::Skipped(SkipReason::InvalidName(_)))
            ),
            "{name:?}: {report}"
        );
    }
    assert_eq!(
        report.get("ok"),
        Some(&SyncOutcome::Installed { version: 1 })
    );
    let mut outside: Vec<String> = fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    outside.sort();
    assert_eq!(
        outside,
        ["data", "evil", "seed"],
        "nothing written beside the data folder"
    );
    assert_eq!(
        fs::read_dir(&data).unwrap().count(),
        2,
        "ok + the lock file"
    );

    let only_missing = SyncOptions::default().only(["nope"]);
    let report = sync_with(&seed, &data, &only_missing).unwrap();
    assert_eq!(
        report.get("nope"),
        Some(&SyncOutcome::Skipped(SkipReason::NotInSeed))
    );
}

#[test]
fn an_installed_symlink_is_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let (seed, data) = (tmp.path().join("seed"), tmp.path().join("data"));
    small_tool(&seed, "alpha", 5, "x.txt");
    small_tool(tmp.path(), "elsewhere", 1, "mine.txt");
    fs::create_dir_all(&data).unwrap();
    symlink(tmp.path().join("elsewhere"), data.join("alpha")).unwrap();
    let before = tree(&tmp.path().join("elsewhere"));
    let report = sync(&seed, &data).unwrap();
    assert!(matches!(
        report.get("alpha"),
        Some(SyncOutcome::Skipped(SkipReason::TargetNotAFolder(_)))
    ));
    assert!(
        fs::symlink_metadata(data.join("alpha"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(tree(&tmp.path().join("elsewhere")), before);
}

#[test]
fn symlinks_never_lead_out_of_the_seed_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let (seed, data) = (tmp.path().join("seed"), tmp.path().join("data"));
    let outside = tmp.path().join("outside");
    fs::create_dir_all(outside.join("dir")).unwrap();
    fs::write(outside.join("passwd"), "root:x:0:0").unwrap();
    fs::write(outside.join("dir/secret.txt"), "s3cr3t").unwrap();
    small_tool(&outside, "foreign", 1, "x.txt");

    small_tool(&seed, "alpha", 1, "real.txt");
    let a = seed.join("alpha");
    symlink(outside.join("passwd"), a.join("passwd")).unwrap();
    symlink("../../outside/passwd", a.join("relative_passwd")).unwrap();
    symlink(outside.join("dir"), a.join("dir_out")).unwrap();
    symlink("real.txt", a.join("alias.txt")).unwrap();
    fs::create_dir(a.join("sub")).unwrap();
    symlink("../real.txt", a.join("sub/up.txt")).unwrap();
    symlink(a.join("sub"), a.join("sub_link")).unwrap();
    symlink("missing", a.join("dangling")).unwrap();
    // A seed tool folder that is a symlink out of the seed folder.
    symlink(outside.join("foreign"), seed.join("foreign")).unwrap();
    // A seed tool folder that is a symlink inside the seed folder: allowed.
    small_tool(&seed.join(".store"), "delta", 1, "d.txt");
    symlink(seed.join(".store/delta"), seed.join("delta")).unwrap();
    // One that is a symlink to another seed tool is followed too, but it is a second
    // folder claiming that tool's name: only the folder named after the tool is synced.
    small_tool(&seed, "gamma", 1, "g.txt");
    symlink(seed.join("gamma"), seed.join("gamma_alias")).unwrap();
    // TOOL.md itself pointing out of the tool.
    fs::create_dir_all(seed.join("sneaky")).unwrap();
    fs::write(seed.join("sneaky/index.sh"), "echo").unwrap();
    symlink(outside.join("foreign/TOOL.md"), seed.join("sneaky/TOOL.md")).unwrap();

    let report = sync(&seed, &data).unwrap();
    assert_eq!(
        report.get("alpha"),
        Some(&SyncOutcome::Installed { version: 1 }),
        "{report}"
    );
    let got = tree(&data.join("alpha"));
    let names: Vec<String> = got.keys().map(|p| p.display().to_string()).collect();
    assert_eq!(
        names,
        ["TOOL.md", "alias.txt", "index.sh", "real.txt", "sub/up.txt"],
        "{report}"
    );
    assert_eq!(
        got[Path::new("alias.txt")],
        b"alpha v1",
        "copied as a regular file"
    );
    assert!(
        !fs::symlink_metadata(data.join("alpha/alias.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let ignored: Vec<&Path> = report.ignored.iter().map(|i| i.path.as_path()).collect();
    for p in [
        "passwd",
        "relative_passwd",
        "dir_out",
        "sub_link",
        "dangling",
    ] {
        assert!(
            ignored.contains(&a.join(p).as_path()),
            "{p} not reported: {report}"
        );
    }
    assert!(
        report
            .to_string()
            .contains("symlink resolves outside the seed tool's folder")
    );

    assert_eq!(
        report.get("foreign"),
        Some(&SyncOutcome::Skipped(SkipReason::SymlinkOutside(
            seed.join("foreign")
        )))
    );
    assert_eq!(
        report.get("sneaky"),
        Some(&SyncOutcome::Skipped(SkipReason::SymlinkOutside(
            seed.join("sneaky/TOOL.md")
        )))
    );
    assert_eq!(
        report.get("delta"),
        Some(&SyncOutcome::Installed { version: 1 })
    );
    assert!(data.join("delta/d.txt").is_file());
    assert_eq!(
        report.get("gamma"),
        Some(&SyncOutcome::Installed { version: 1 })
    );
    assert_eq!(
        report.get("gamma_alias"),
        Some(&SyncOutcome::Skipped(SkipReason::Duplicate {
            name: "gamma".into(),
            kept: "gamma".into(),
            why: "its folder is named after the tool",
        }))
    );
    assert!(!data.join("foreign").exists() && !data.join("sneaky").exists());
    let all = tree(&data);
    assert!(!all.values().any(|v| v == b"root:x:0:0" || v == b"s3cr3t"));
}

#[test]
fn tools_without_a_seed_are_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let (seed, data) = (tmp.path().join("seed"), tmp.path().join("data"));
    small_tool(&data, "user_tool", 1, "mine.txt");
    small_tool(&seed, "alpha", 1, "a.txt");
    let before = tree(&data.join("user_tool"));
    let report = sync(&seed, &data).unwrap();
    assert!(report.get("user_tool").is_none());
    assert_eq!(tree(&data.join("user_tool")), before);
}

#[test]
fn a_missing_seed_folder_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let err = sync(tmp.path().join("nope"), tmp.path().join("data")).unwrap_err();
    assert!(err.to_string().starts_with("sync failed: "), "{err}");
    assert!(
        err.to_string().contains("cannot read the seed folder"),
        "{err}"
    );
    // Typed: the operating system's error itself, not a string to parse.
    assert_eq!(err.action, "cannot read the seed folder");
    assert_eq!(err.error.kind(), std::io::ErrorKind::NotFound);
    let source = std::error::Error::source(&err).expect("the io::Error is the source");
    assert!(source.downcast_ref::<std::io::Error>().is_some());
}

#[test]
fn leftovers_of_a_killed_sync_are_recovered() {
    let tmp = tempfile::tempdir().unwrap();
    let (seed, data) = (tmp.path().join("seed"), tmp.path().join("data"));
    // Killed between the two renames: `my-tool` moved away, the staged copy not yet in.
    small_tool(&data, ".old-my-tool-4242-7", 1, "old.txt");
    small_tool(&data, ".staging-my-tool-4242-7", 2, "new.txt");
    // Killed while removing the old folder of another tool after its swap.
    small_tool(&data, "beta", 2, "b.txt");
    small_tool(&data, ".old-beta-4242-3", 1, "half.txt");
    small_tool(&seed, "beta", 2, "b.txt");
    let report = sync(&seed, &data).unwrap();
    assert_eq!(report.recovered, ["my-tool"]);
    assert!(
        report
            .to_string()
            .starts_with("recovered my-tool from an interrupted sync")
    );
    let t = tree(&data.join("my-tool"));
    assert!(t.contains_key(Path::new("old.txt")), "wholly old: {t:?}");
    assert_eq!(hidden(&data), [LOCK_FILE]);
    assert!(data.join("beta/b.txt").exists());
}

// --- Real processes -----------------------------------------------------------------------

const CHILD_ENV: &str = "TOOLBIND_SYNC_CHILD";

/// Runs one sync and prints its counts; started by the tests below as a child process.
#[test]
#[ignore = "helper: run as a child process by the kill and concurrency tests"]
fn sync_child() {
    let Some(dirs) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let dirs = dirs.to_string_lossy().into_owned();
    let (seed, rest) = dirs.split_once('\n').unwrap();
    let (data, exchange) = rest.split_once('\n').unwrap();
    let opts = SyncOptions::default().atomic_exchange(exchange == "exchange");
    let report = sync_with(Path::new(seed), Path::new(data), &opts).unwrap();
    let c = report.counts();
    println!(
        "COUNTS installed={} updated={} unchanged={} skipped={}",
        c.installed, c.updated, c.unchanged, c.skipped
    );
}

fn spawn_sync(seed: &Path, data: &Path, exchange: bool) -> Child {
    let mode = if exchange { "exchange" } else { "renames" };
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "sync::sync_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(
            CHILD_ENV,
            format!("{}\n{}\n{mode}", seed.display(), data.display()),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

const TOOLS: [&str; 3] = ["big-a", "big_b", "big-c"];

/// The exact files of `tool` at `version`: the file set and every content depend on both.
fn expected(tool: &str, version: u64) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    files.insert(
        PathBuf::from("TOOL.md"),
        format!("---\nname: {}\ndescription: Big tool.\nversion: {version}\nlanguage: bash\n---\n# Big\n", tool.replace('-', "_")).into_bytes(),
    );
    files.insert(
        PathBuf::from("index.sh"),
        format!("echo {tool} {version}\n").into_bytes(),
    );
    let n = 40 + (version % 4) * 5;
    for i in 0..n {
        let line = format!("{tool} version {version} file {i}\n");
        let body = line.repeat(24 * 1024 / line.len());
        files.insert(
            PathBuf::from(format!("data/{}/f{i}.txt", i % 3)),
            body.into_bytes(),
        );
    }
    files
}

fn write_seed(seed: &Path, version: u64) {
    if seed.exists() {
        fs::remove_dir_all(seed).unwrap();
    }
    for tool in TOOLS {
        for (rel, bytes) in expected(tool, version) {
            let p = seed.join(tool).join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, bytes).unwrap();
        }
    }
}

/// The version `data/<tool>` wholly is; panics if it is a mix or anything else.
fn whole_version(data: &Path, tool: &str, allowed: &[u64], ctx: &str) -> u64 {
    let got = tree(&data.join(tool));
    for v in allowed {
        if got == expected(tool, *v) {
            return *v;
        }
    }
    let version = got
        .get(Path::new("TOOL.md"))
        .map(|b| String::from_utf8_lossy(b).into_owned());
    panic!(
        "{ctx}: {tool} is not wholly one of versions {allowed:?} ({} files, TOOL.md {version:?})",
        got.len()
    );
}

/// A tiny xorshift: reproducible delays without a dependency; the seed is printed on failure.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn a_sync_killed_at_random_points_leaves_no_half_copied_tool() {
    let tmp = tempfile::tempdir().unwrap();
    let (seed, data) = (tmp.path().join("seed"), tmp.path().join("data"));
    write_seed(&seed, 1);
    let out = spawn_sync(&seed, &data, true).wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("COUNTS installed=3"));
    // Calibrate: how long a whole child run (start-up + updating ~3 MB) takes here.
    write_seed(&seed, 2);
    let started = Instant::now();
    let out = spawn_sync(&seed, &data, true).wait_with_output().unwrap();
    let full = started.elapsed();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("COUNTS installed=0 updated=3"));
    let mut state: BTreeMap<&str, u64> = TOOLS.iter().map(|t| (*t, 2)).collect();

    let rng_seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut rng = Rng(rng_seed);
    let (mut interrupted, mut completed, mut partial) = (0, 0, 0);
    let iterations = 30;
    for i in 0..iterations {
        let version = i + 3;
        write_seed(&seed, version);
        let exchange = i % 2 == 0;
        let mut child = spawn_sync(&seed, &data, exchange);
        let delay = Duration::from_micros(rng.next() % (full.as_micros() as u64 * 13 / 10).max(1));
        std::thread::sleep(delay);
        child.kill().unwrap(); // SIGKILL
        let status = child.wait().unwrap();
        if status.success() {
            completed += 1;
        }
        let ctx = format!(
            "iteration {i} (rng seed {rng_seed}, delay {delay:?}, exchange {exchange}, full run {full:?})"
        );

        let leftovers = hidden(&data);
        if leftovers.len() > 1 {
            interrupted += 1;
        }
        let mut seen = Vec::new();
        for tool in TOOLS {
            let old = state[tool];
            if !data.join(tool).exists() {
                // Only possible between the two renames of the fallback path; the old
                // folder must be whole beside it, and the next sync restores it.
                assert!(
                    !exchange,
                    "{ctx}: {tool} missing after an exchange-mode kill"
                );
                let stash = leftovers
                    .iter()
                    .find(|n| n.starts_with(&format!(".old-{tool}-")))
                    .unwrap_or_else(|| {
                        panic!("{ctx}: {tool} missing and no .old- folder: {leftovers:?}")
                    });
                assert_eq!(tree(&data.join(stash)), expected(tool, old), "{ctx}");
                continue;
            }
            let v = whole_version(&data, tool, &[old, version], &ctx);
            state.insert(tool, v);
            seen.push(v);
        }
        let updated = seen.iter().filter(|v| **v == version).count();
        if updated > 0 && updated < TOOLS.len() {
            partial += 1; // killed between two tools
        }
    }
    eprintln!(
        "{iterations} kills (full run {full:?}): {interrupted} left staging/old folders, {partial} landed between tools, {completed} completed first"
    );
    assert!(
        interrupted + partial > 0,
        "no kill landed mid-sync in {iterations} tries (full run {full:?}); the test proved nothing"
    );

    // A sync after all that completes and leaves everything at the seed's version.
    let final_version = iterations + 2;
    let report = sync(&seed, &data).unwrap();
    for tool in TOOLS {
        assert_eq!(
            whole_version(&data, tool, &[final_version], "final sync"),
            final_version
        );
        assert!(
            matches!(
                report.get(tool),
                Some(SyncOutcome::Updated { to, .. } | SyncOutcome::Unchanged { installed: to, .. }) if *to == final_version
            ),
            "{report}"
        );
    }
    assert_eq!(hidden(&data), [LOCK_FILE]);
}

#[test]
fn two_concurrent_syncs_corrupt_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (seed, data) = (tmp.path().join("seed"), tmp.path().join("data"));
    for round in 1..=3u64 {
        write_seed(&seed, round);
        let exchange = round != 2;
        let a = spawn_sync(&seed, &data, exchange);
        let b = spawn_sync(&seed, &data, exchange);
        let outs = [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()];
        let mut counts: Vec<String> = outs
            .iter()
            .map(|o| {
                assert!(o.status.success(), "{o:?}");
                let s = String::from_utf8_lossy(&o.stdout);
                s.lines()
                    .find_map(|l| l.split_once("COUNTS ").map(|(_, c)| c))
                    .unwrap_or_else(|| panic!("no counts in {s}"))
                    .to_owned()
            })
            .collect();
        counts.sort();
        // The lock makes them take turns: one does the work, the other finds it done.
        let did = if round == 1 {
            "installed=3 updated=0"
        } else {
            "installed=0 updated=3"
        };
        assert_eq!(
            counts,
            [
                "installed=0 updated=0 unchanged=3 skipped=0".to_owned(),
                format!("{did} unchanged=0 skipped=0")
            ],
            "round {round}"
        );
        for tool in TOOLS {
            whole_version(&data, tool, &[round], &format!("round {round}"));
        }
        assert_eq!(hidden(&data), [LOCK_FILE]);
    }
}

const FSIZE_CHILD_ENV: &str = "TOOLBIND_SYNC_FSIZE_CHILD";

/// Runs one sync with writes past 64 KiB failing (EFBIG, as on a full disk) and prints its
/// report; started as a child process by the test below.
#[test]
#[ignore = "helper: run as a child process by failures_are_reported_apart_from_skips"]
fn sync_child_with_a_full_disk() {
    let Some(dirs) = std::env::var_os(FSIZE_CHILD_ENV) else {
        return;
    };
    let dirs = dirs.to_string_lossy().into_owned();
    let (seed, data) = dirs.split_once('\n').unwrap();
    // SAFETY: ignoring SIGXFSZ makes an over-limit write fail with EFBIG instead.
    unsafe {
        nix::sys::signal::signal(
            nix::sys::signal::Signal::SIGXFSZ,
            nix::sys::signal::SigHandler::SigIgn,
        )
        .unwrap();
    }
    nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_FSIZE, 65536, 65536)
        .unwrap();
    let report = sync(Path::new(seed), Path::new(data)).unwrap();
    let c = report.counts();
    let failed: Vec<_> = report.failures().map(|t| t.name.clone()).collect();
    println!(
        "COUNTS installed={} skipped={} failed={} failures={}",
        c.installed,
        c.skipped,
        c.failed,
        failed.join(",")
    );
    println!("REPORT {}", report.to_string().replace('\n', " | "));
}

/// A failure by error is `Failed`, counted apart from `skipped`, and
/// `sync` still returns the report so an agent can start with what did install.
#[test]
fn failures_are_reported_apart_from_skips() {
    let tmp = tempfile::tempdir().unwrap();
    let seed = tmp.path().join("seed");
    for (name, bytes) in [("good", 10), ("huge", 256 * 1024)] {
        let dir = seed.join(name);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("index.sh"), "echo hi\n").unwrap();
        fs::write(dir.join("data.bin"), vec![b'x'; bytes]).unwrap();
        fs::write(
            dir.join("TOOL.md"),
            format!("---\nname: {name}\ndescription: d\nlanguage: bash\n---\n"),
        )
        .unwrap();
    }
    let data = tmp.path().join("data");
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "sync::sync_child_with_a_full_disk",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(
            FSIZE_CHILD_ENV,
            format!("{}\n{}", seed.display(), data.display()),
        )
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("COUNTS installed=1 skipped=0 failed=1 failures=huge"),
        "{text}"
    );
    assert!(text.contains("failed huge: "), "{text}");
    assert!(text.contains("0 skipped, 1 failed"), "{text}");
    assert!(data.join("good/index.sh").is_file());
    assert!(!data.join("huge").exists());
}

#[test]
fn folder_names_with_control_characters_and_mismatched_names_are_reported() {
    let seed = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    for (folder, name) in [
        ("evil\ninstalled fake (version 9)", "evil"),
        ("renamed", "other_name"),
    ] {
        let dir = seed.path().join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("TOOL.md"),
            format!(
                "---\nname: {name}\ndescription: d\nlanguage: bash\nversion: 1\ntags: [x]\n---\n"
            ),
        )
        .unwrap();
        std::fs::write(dir.join("index.sh"), "cat\n").unwrap();
    }
    let report = toolbind::sync(seed.path(), data.path()).unwrap();
    let text = report.to_string();
    // No forged line: the name is escaped and the tool skipped.
    assert!(
        !text.lines().any(|l| l.starts_with("installed fake")),
        "{text}"
    );
    assert!(
        text.contains("skipped evil\\ninstalled fake (version 9): invalid tool name:"),
        "{text}"
    );
    assert!(
        !data
            .path()
            .join("evil\ninstalled fake (version 9)")
            .exists()
    );
    // A folder named differently from its tool installs, with a warning; so do the
    // TOOL.md's own warnings.
    let renamed = report.tools.iter().find(|t| t.name == "renamed").unwrap();
    assert!(matches!(
        renamed.outcome,
        toolbind::syncing::SyncOutcome::Installed { version: 1 }
    ));
    assert!(
        renamed.warnings[0].contains("the folder `renamed` holds the tool `other_name`"),
        "{:?}",
        renamed.warnings
    );
    assert!(
        text.contains("\n  warning: ") && text.contains("unknown key `tags` is ignored"),
        "{text}"
    );
}

/// Writes a bash seed tool in `seed/<folder>` whose TOOL.md declares `name`.
fn claiming_tool(seed: &Path, folder: &str, name: &str, description: &str) {
    let t = seed.join(folder);
    fs::create_dir_all(&t).unwrap();
    fs::write(
        t.join("TOOL.md"),
        format!("---\nname: {name}\ndescription: {description}\nversion: 1\nlanguage: bash\n---\n"),
    )
    .unwrap();
    fs::write(t.join("index.sh"), format!("echo {description}\n")).unwrap();
}

/// Two seed folders claiming one tool name are never both installed;
/// the loader's rule picks the one synced, and the report names the other.
#[test]
fn two_seed_folders_claiming_one_name_are_never_both_installed() {
    let tmp = tempfile::tempdir().unwrap();
    let (seed, data) = (tmp.path().join("seed"), tmp.path().join("data"));
    // `aaa` sorts first and claims `web_fetch`, the tool of the folder named after it.
    claiming_tool(&seed, "aaa", "web_fetch", "impostor");
    claiming_tool(&seed, "web_fetch", "web_fetch", "owner");
    // Neither named after the tool: the first in order wins, as in the loader.
    claiming_tool(&seed, "m_one", "mailer", "first");
    claiming_tool(&seed, "m_two", "mailer", "second");

    let report = sync(&seed, &data).unwrap();
    let text = report.to_string();
    assert_eq!(
        report.get("web_fetch"),
        Some(&SyncOutcome::Installed { version: 1 }),
        "{text}"
    );
    assert_eq!(
        report.get("aaa"),
        Some(&SyncOutcome::Skipped(SkipReason::Duplicate {
            name: "web_fetch".into(),
            kept: "web_fetch".into(),
            why: "its folder is named after the tool",
        })),
        "{text}"
    );
    assert!(
        text.contains(
            "skipped aaa: duplicate tool name `web_fetch`: the seed folder `web_fetch` declares it too and wins (its folder is named after the tool); not synced"
        ),
        "{text}"
    );
    assert_eq!(
        report.get("m_one"),
        Some(&SyncOutcome::Installed { version: 1 }),
        "{text}"
    );
    assert!(
        matches!(
            report.get("m_two"),
            Some(SyncOutcome::Skipped(SkipReason::Duplicate { kept, .. })) if kept == "m_one"
        ),
        "{text}"
    );
    assert!(
        text.contains("skipped m_two: duplicate tool name `mailer`: the seed folder `m_one`"),
        "{text}"
    );
    assert!(
        text.ends_with("2 installed, 0 updated, 0 unchanged, 2 skipped"),
        "{text}"
    );
    assert!(!data.join("aaa").exists() && !data.join("m_two").exists());

    // What the loader then finds: one tool per name, the owner's, and no duplicate.
    let loaded = toolbind::Loader::new().dir(&data).quiet().load();
    assert_eq!(
        loaded.registry.get("web_fetch").unwrap().description(),
        "owner"
    );
    assert_eq!(
        loaded.registry.get("mailer").unwrap().description(),
        "first"
    );
    assert!(
        !loaded
            .warnings
            .iter()
            .any(|w| matches!(w.kind, toolbind::loader::LoadWarningKind::Duplicate { .. })),
        "{:#?}",
        loaded.warnings
    );

    // Asking for the impostor alone does not sneak it in either.
    let only = SyncOptions::default().only(["aaa"]);
    let report = sync_with(&seed, tmp.path().join("data2"), &only).unwrap();
    assert!(
        matches!(
            report.get("aaa"),
            Some(SyncOutcome::Skipped(SkipReason::Duplicate { kept, .. })) if kept == "web_fetch"
        ),
        "{report}"
    );
    assert!(!tmp.path().join("data2/aaa").exists());
}

/// A seed folder never lands beside a tool of the data folder that
/// already declares its name, where it could shadow the installed one.
#[test]
fn a_seed_never_shadows_a_tool_already_installed_under_another_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let (seed, data) = (tmp.path().join("seed"), tmp.path().join("data"));
    claiming_tool(&data, "my_fetch", "web_fetch", "installed");
    claiming_tool(&seed, "aaa", "web_fetch", "impostor");
    let report = sync(&seed, &data).unwrap();
    assert_eq!(
        report.get("aaa"),
        Some(&SyncOutcome::Skipped(SkipReason::AlreadyInstalled {
            name: "web_fetch".into(),
            folder: "my_fetch".into(),
        })),
        "{report}"
    );
    assert!(
        report
            .to_string()
            .contains("already installed as the folder `my_fetch`")
    );
    assert!(!data.join("aaa").exists());
    let loaded = toolbind::Loader::new().dir(&data).quiet().load();
    assert_eq!(
        loaded.registry.get("web_fetch").unwrap().description(),
        "installed"
    );
    // Its own folder is updated as ever.
    claiming_tool(&seed, "my_fetch", "web_fetch", "seeded");
    let report = sync(&seed, &data).unwrap();
    assert!(
        !matches!(
            report.get("my_fetch"),
            Some(SyncOutcome::Skipped(SkipReason::AlreadyInstalled { .. }))
        ),
        "{report}"
    );
}

/// A seed TOOL.md over 1 MiB is refused from its size, unread; a seed TOOL.md
/// symlinked to a secret out of the folder is never read, and the report quotes nothing.
#[test]
fn a_huge_or_symlinked_seed_tool_md_is_never_read() {
    let tmp = tempfile::tempdir().unwrap();
    let (seed, data) = (tmp.path().join("seed"), tmp.path().join("data"));
    small_tool(&seed, "huge", 1, "x.txt");
    fs::File::options()
        .write(true)
        .open(seed.join("huge/TOOL.md"))
        .unwrap()
        .set_len(200 << 20)
        .unwrap();
    fs::write(tmp.path().join("shadow"), "root:$6$SECRETHASH$x:1::::::\n").unwrap();
    small_tool(&seed, "leaky", 1, "x.txt");
    fs::remove_file(seed.join("leaky/TOOL.md")).unwrap();
    symlink(tmp.path().join("shadow"), seed.join("leaky/TOOL.md")).unwrap();

    let report = sync(&seed, &data).unwrap();
    let text = report.to_string();
    let Some(SyncOutcome::Skipped(SkipReason::Malformed(d))) = report.get("huge") else {
        panic!("{text}")
    };
    assert!(
        d[0].message
            .contains("TOOL.md is 209715200 bytes, over the limit of 1048576 bytes (1 MiB)"),
        "{text}"
    );
    assert_eq!(
        report.get("leaky"),
        Some(&SyncOutcome::Skipped(SkipReason::SymlinkOutside(
            seed.join("leaky/TOOL.md")
        )))
    );
    assert!(
        !text.contains("SECRETHASH") && !text.contains("root:"),
        "{text}"
    );
    assert!(!data.join("huge").exists() && !data.join("leaky").exists());
}
