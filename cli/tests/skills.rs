//! MCP's skills extension in `toolbind serve` (SEP-2640, cli/src/serve/skills.rs), spoken
//! to line by line: `--skills` folders served as they are (links, hidden and special
//! files left out; a bad name, a missing SKILL.md, too many files or bytes: not served),
//! tools as skills (`--tool-skills`, the name mapping and its collision rule), every
//! file's digest checked against what `resources/read` serves, `resources/directory/read`,
//! and a changed folder served anew. The conformance suite's skills scenarios run in
//! conformance.rs.

use crate::common;

use std::ffi::OsStr;
use std::path::Path;

use common::wire::{Wire, error_of};
use common::{copy_dir, fixture, shipped_tools};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const SKILLS: &str = "io.modelcontextprotocol/skills";

struct Setup {
    skills: tempfile::TempDir,
    tools: tempfile::TempDir,
}

/// The fixture skills plus hostile entries, and the shipped tools plus a tool whose skill
/// name is the fixture skill's.
fn setup() -> Setup {
    let skills = tempfile::tempdir().unwrap();
    copy_dir(&fixture("skills"), skills.path());
    let pdf = skills.path().join("pdf-processing");
    std::os::unix::fs::symlink("/etc/passwd", pdf.join("leak.md")).unwrap();
    std::os::unix::fs::symlink("/etc", pdf.join("etc")).unwrap();
    std::fs::write(pdf.join(".secret"), "hidden").unwrap();
    std::fs::write(pdf.join("scripts/blob.bin"), [0xff, 0xfe, 0x00, 0x01]).unwrap();
    nix::unistd::mkfifo(&pdf.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    // A skill whose name is not its folder's.
    let other = skills.path().join("renamed");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(
        other.join("SKILL.md"),
        "---\nname: original\ndescription: d\n---\n",
    )
    .unwrap();
    let tools = tempfile::tempdir().unwrap();
    copy_dir(&shipped_tools(), tools.path());
    let clash = tools.path().join("pdf_processing");
    std::fs::create_dir(&clash).unwrap();
    std::fs::write(
        clash.join("TOOL.md"),
        "---\nname: pdf_processing\ndescription: \"A tool: with YAML's special # characters\"\nlanguage: bash\n---\nbody\n",
    )
    .unwrap();
    std::fs::write(clash.join("index.sh"), "echo ok\n").unwrap();
    Setup { skills, tools }
}

fn serve(s: &Setup) -> (Wire, Value) {
    let args: Vec<&OsStr> = vec![
        "--skills".as_ref(),
        s.skills.path().as_os_str(),
        "--tool-skills".as_ref(),
        "--dir".as_ref(),
        s.tools.path().as_os_str(),
    ];
    let mut w = Wire::stateless(&args);
    let init = w.request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "skills-test", "version": "0"}}),
    );
    w.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    (w, init)
}

/// The bytes `resources/read` serves at `uri` (text, or base64 blob decoded).
fn read(w: &mut Wire, id: i64, uri: &str) -> Vec<u8> {
    let got = w.request(id, "resources/read", json!({"uri": uri}));
    let c = &got["result"]["contents"][0];
    if let Some(text) = c["text"].as_str() {
        return text.as_bytes().to_vec();
    }
    let blob = c["blob"].as_str().unwrap_or_else(|| panic!("{got}"));
    decode64(blob)
}

fn decode64(s: &str) -> Vec<u8> {
    let abc = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut n = 0;
    let mut out = Vec::new();
    for c in s.bytes().filter(|&c| c != b'=') {
        bits = bits << 6 | abc.iter().position(|&a| a == c).unwrap() as u32;
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
        }
    }
    out
}

fn digest(bytes: &[u8]) -> String {
    let hex: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

fn names(list: &Value) -> Vec<&str> {
    list["result"]["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["frontmatter"]["name"].as_str().unwrap())
        .collect()
}

#[test]
fn skills_are_served_with_digests_that_hold_and_nothing_else() {
    let s = setup();
    let (mut w, init) = serve(&s);
    assert_eq!(
        init["result"]["capabilities"]["extensions"][SKILLS],
        json!({"directoryRead": true}),
        "{init}"
    );
    let list = w.request(1, "skills/list", json!({}));
    // The folder's skills first, then the tools'; `pdf_processing`'s name was taken.
    assert_eq!(
        names(&list),
        [
            "pdf-processing",
            "convert-audio-to-mp3",
            "email-db",
            "pdf-processing-2",
            "todo",
            "web-fetch"
        ],
        "{list}"
    );
    let mut id = 10;
    for skill in list["result"]["skills"].as_array().unwrap() {
        for file in skill["resources"].as_array().unwrap() {
            id += 1;
            let uri = file["uri"].as_str().unwrap();
            let bytes = read(&mut w, id, uri);
            assert_eq!(file["digest"], digest(&bytes), "{uri}");
            assert_eq!(file["size"], bytes.len(), "{uri}");
        }
    }
    let pdf = &list["result"]["skills"][0];
    let files: Vec<&str> = pdf["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            "skill://pdf-processing/SKILL.md",
            "skill://pdf-processing/references/FORMS.md",
            "skill://pdf-processing/scripts/blob.bin",
            "skill://pdf-processing/scripts/fill.py",
        ],
        "links, hidden files and the FIFO are no skill's files"
    );
    assert_eq!(
        pdf["frontmatter"],
        json!({"name": "pdf-processing",
            "description": "Extract text and tables from PDF files, fill PDF forms, and merge documents. Use when the user works with PDF files or asks about forms.",
            "license": "Apache-2.0", "metadata": {"author": "toolbind tests", "version": "1.0"}})
    );
    // A generated SKILL.md's frontmatter reads back as its entry's.
    let generated = &list["result"]["skills"][3];
    let text = String::from_utf8(read(&mut w, 90, generated["uri"].as_str().unwrap())).unwrap();
    let yaml = text
        .strip_prefix("---\n")
        .unwrap()
        .split("\n---\n")
        .next()
        .unwrap();
    let parsed: Value = serde_saphyr::from_str(yaml).unwrap();
    assert_eq!(parsed, generated["frontmatter"], "{text}");
    assert_eq!(parsed["metadata"]["tool"], "pdf_processing");
    assert!(text.contains("`pdf_processing`"), "{text}");

    // skills/get: a listed skill; anything else is -32602.
    let got = w.request(91, "skills/get", json!({"uri": "skill://todo/SKILL.md"}));
    assert_eq!(
        got["result"]["skill"]["frontmatter"]["name"], "todo",
        "{got}"
    );
    for uri in [
        "skill://renamed/SKILL.md",
        "skill://original/SKILL.md",
        "skill://Bad_Name/SKILL.md",
        "file:///etc/passwd",
    ] {
        let e = w.request(92, "skills/get", json!({"uri": uri}));
        assert_eq!(error_of(&e).1, -32602, "{uri}: {e}");
    }
    // No read outside what the manifest lists.
    for uri in [
        "skill://pdf-processing/leak.md",
        "skill://pdf-processing/.secret",
        "skill://pdf-processing/etc/passwd",
        "skill://pdf-processing/../../etc/passwd",
        "skill://pdf-processing/pipe",
    ] {
        let e = w.request(93, "resources/read", json!({"uri": uri}));
        assert!(e.get("error").is_some(), "{uri}: {e}");
    }
    // The folder, and a folder below it.
    let dir = w.request(
        94,
        "resources/directory/read",
        json!({"uri": "skill://pdf-processing"}),
    );
    let children: Vec<(&str, &str)> = dir["result"]["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("{dir}"))
        .iter()
        .map(|r| (r["uri"].as_str().unwrap(), r["mimeType"].as_str().unwrap()))
        .collect();
    assert_eq!(
        children,
        [
            ("skill://pdf-processing/SKILL.md", "text/markdown"),
            ("skill://pdf-processing/references", "inode/directory"),
            ("skill://pdf-processing/scripts", "inode/directory"),
        ]
    );
    let not_dir = w.request(
        95,
        "resources/directory/read",
        json!({"uri": "skill://pdf-processing/SKILL.md"}),
    );
    assert_eq!(error_of(&not_dir).1, -32602, "{not_dir}");
    // resources/list: each SKILL.md beside the tools' docs.
    let resources = w.request(96, "resources/list", json!({}));
    let uris: Vec<&str> = resources["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert!(
        uris.contains(&"skill://pdf-processing/SKILL.md")
            && uris.contains(&"toolbind://tools/todo"),
        "{uris:?}"
    );
}

#[test]
fn a_skill_over_the_limits_is_not_served() {
    let dir = tempfile::tempdir().unwrap();
    let write_skill = |name: &str, files: &[(&str, Vec<u8>)]| {
        let d = dir.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: d\n---\n"),
        )
        .unwrap();
        for (f, bytes) in files {
            std::fs::write(d.join(f), bytes).unwrap();
        }
    };
    write_skill("small", &[("a.txt", b"a".to_vec())]);
    let many: Vec<(String, Vec<u8>)> = (0..600)
        .map(|i| (format!("f{i}.txt"), b"x".to_vec()))
        .collect();
    let many: Vec<(&str, Vec<u8>)> = many.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    write_skill("many-files", &many);
    write_skill("big", &[("big.bin", vec![7u8; 17 << 20])]);
    write_skill("no-frontmatter", &[]);
    std::fs::write(
        dir.path().join("no-frontmatter/SKILL.md"),
        "# just a title\n",
    )
    .unwrap();
    let empty = tempfile::tempdir().unwrap();
    let args: Vec<&OsStr> = vec![
        "--skills".as_ref(),
        dir.path().as_os_str(),
        "--dir".as_ref(),
        empty.path().as_os_str(),
    ];
    let mut w = Wire::start(&args, "2025-11-25", json!({}));
    let list = w.request(1, "skills/list", json!({}));
    assert_eq!(names(&list), ["small"], "{list}");
}

#[test]
fn a_changed_skill_is_served_anew() {
    let s = setup();
    let (mut w, _) = serve(&s);
    let skill_md = s.skills.path().join("pdf-processing/SKILL.md");
    let text = std::fs::read_to_string(&skill_md).unwrap();
    std::fs::write(
        &skill_md,
        text.replace("merge documents", "split documents"),
    )
    .unwrap();
    let mut id = 100;
    let changed = common::eventually(20.0, || {
        id += 1;
        let got = w.request(
            id,
            "skills/get",
            json!({"uri": "skill://pdf-processing/SKILL.md"}),
        );
        got["result"]["skill"]["frontmatter"]["description"]
            .as_str()
            .is_some_and(|d| d.contains("split documents"))
    });
    assert!(changed, "the changed SKILL.md was never served");
    let bytes = read(&mut w, 999, "skill://pdf-processing/SKILL.md");
    let got = w.request(
        1000,
        "skills/get",
        json!({"uri": "skill://pdf-processing/SKILL.md"}),
    );
    assert_eq!(
        got["result"]["skill"]["resources"][0]["digest"],
        digest(&bytes)
    );
    assert!(Path::new(&skill_md).exists());
}

#[test]
fn a_skill_folder_read_as_hosts_read_it_and_nothing_it_does_not_hold() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let skill = |name: &str, front: &str| {
        let d = dir.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: d\n{front}---\nbody\n"),
        )
        .unwrap();
        d
    };
    // YAML 1.2: `yes` is a string, as the suite and hosts read it.
    skill("yes-string", "approved: yes\n");
    // A merge key is refused.
    skill("merged", "base: {a: 1}\nmore:\n  <<: {b: 2}\n");
    // A sparse 100 GB file: refused by its size, before a byte is read.
    let big = skill("sparse", "");
    std::fs::File::create(big.join("huge.bin"))
        .unwrap()
        .set_len(100 << 30)
        .unwrap();
    // A file name that is not UTF-8 cannot be a URI of its own.
    let odd = skill("odd-name", "");
    std::fs::write(
        odd.join(std::ffi::OsStr::from_bytes(b"bad\xffname.txt")),
        "x",
    )
    .unwrap();
    // A skill folder that is a link to one elsewhere.
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("linked");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(
        target.join("SKILL.md"),
        "---\nname: linked\ndescription: d\n---\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(&target, dir.path().join("linked")).unwrap();
    let empty = tempfile::tempdir().unwrap();
    let args: Vec<&OsStr> = vec![
        "--skills".as_ref(),
        dir.path().as_os_str(),
        "--dir".as_ref(),
        empty.path().as_os_str(),
    ];
    let mut w = Wire::start(&args, "2025-11-25", json!({}));
    let list = w.request(1, "skills/list", json!({}));
    assert_eq!(names(&list), ["yes-string"], "{list}");
    assert_eq!(
        list["result"]["skills"][0]["frontmatter"]["approved"], "yes",
        "{list}"
    );
}
