//! `toolbind call` saves the full text of a truncated result to a private spill folder by
//! default (`--spill-dir` to choose), names the file in the note, and prunes old spills.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

use common::{stdout, toolbind};

fn big_tool(tools: &Path) {
    let dir = tools.join("big");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("TOOL.md"),
        "---\nname: big\ndescription: Prints a lot.\nlanguage: bash\n---\nPrints a lot.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("index.sh"),
        "cat >/dev/null\nfor i in $(seq 1 20000); do echo \"line $i\"; done\n",
    )
    .unwrap();
}

fn saved_path(out: &str) -> &str {
    let at = out.find("Full output saved to: ").unwrap_or_else(|| {
        panic!(
            "no spill path in the note: {}",
            &out[out.len().saturating_sub(300)..]
        )
    });
    let rest = &out[at + "Full output saved to: ".len()..];
    &rest[..rest.find(']').unwrap()]
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_truncated_result_is_saved_whole_to_a_private_spill_folder_by_default() {
    let tmp = tempfile::tempdir().unwrap();
    let tools = tmp.path().join("tools");
    big_tool(&tools);
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let o = toolbind()
        .args(["call", "big", "--dir"])
        .arg(&tools)
        .env("HOME", &home)
        .env_remove("XDG_STATE_HOME")
        .env_remove("XDG_CACHE_HOME")
        .output()
        .unwrap();
    let out = stdout(&o);
    assert!(o.status.success(), "{out}");
    let path = Path::new(saved_path(&out));
    let spill = home.join(".local/state/toolbind/spill");
    assert_eq!(path.parent(), Some(spill.as_path()));
    assert_eq!(mode(&spill), 0o700);
    assert_eq!(mode(path), 0o600);
    let full = std::fs::read_to_string(path).unwrap();
    assert_eq!(full.lines().count(), 20000);
    assert!(full.ends_with("line 20000"));
}

#[test]
fn spill_dir_chooses_the_folder_and_old_spills_are_pruned() {
    let tmp = tempfile::tempdir().unwrap();
    let tools = tmp.path().join("tools");
    big_tool(&tools);
    let spill = tmp.path().join("spill");
    std::fs::create_dir_all(&spill).unwrap();
    std::fs::set_permissions(&spill, std::fs::Permissions::from_mode(0o700)).unwrap();
    let old = spill.join("big-old-0-1-0.txt");
    std::fs::write(&old, "old output").unwrap();
    let f = std::fs::File::options().write(true).open(&old).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(8 * 24 * 3600))
        .unwrap();
    drop(f);
    let other = spill.join("README.md");
    std::fs::write(&other, "not a spill").unwrap();
    let o = toolbind()
        .args(["call", "big", "--dir"])
        .arg(&tools)
        .arg("--spill-dir")
        .arg(&spill)
        .output()
        .unwrap();
    let out = stdout(&o);
    assert!(o.status.success(), "{out}");
    assert_eq!(Path::new(saved_path(&out)).parent(), Some(spill.as_path()));
    assert!(!old.exists(), "a spill older than 7 days was kept");
    assert!(other.exists(), "a file that is not a spill was removed");
}
