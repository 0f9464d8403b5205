//! Binary blocks are bounded apart from text: long base64 strings stream from the node and
//! python harnesses past the protocol's line limit, are kept in memory within
//! `ExecConfig::max_binary_bytes`, and past it are decoded into the spill folder while they
//! arrive and replaced by a `resource_link` to the file; bad data is refused with a reason
//! and leaves no file.

use crate::exec_common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use exec_common::*;
use serde_json::json;
use toolbind::Content;
use toolbind::result::ResourceContents;
use toolbind_codegen::model::Language;

fn js() -> toolbind::ToolInfo {
    spec("blob_js", Language::TypeScript, "index.mjs")
}

fn py() -> toolbind::ToolInfo {
    spec("blob_py", Language::Python, "index.py")
}

fn bytes(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}

fn b64(n: usize) -> String {
    toolbind::spill::base64_encode(&bytes(n))
}

/// The files in the spill folder, by name.
fn spilled(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The file a spilled block's link points at, checked to be a private file of `len` bytes.
fn linked_file(block: &Content, dir: &Path, len: u64, mime: &str) -> Vec<u8> {
    let Content::ResourceLink(link) = block else {
        panic!("expected a resource_link, got {block:?}")
    };
    assert_eq!(link.size, Some(len), "{link:?}");
    assert_eq!(link.mime_type.as_deref(), Some(mime), "{link:?}");
    assert!(
        link.description
            .as_deref()
            .is_some_and(|d| d.contains("saved to the spill folder")),
        "{link:?}"
    );
    let name = toolbind::spill::spill_name(dir, &link.uri)
        .unwrap_or_else(|| panic!("{} is not a link into {}", link.uri, dir.display()));
    assert_eq!(name, link.name);
    let path = dir.join(name);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{}", path.display());
    std::fs::read(path).unwrap()
}

#[tokio::test]
async fn long_base64_streams_past_the_line_limit_and_stays_whole_within_the_bound() {
    // Lines of at most 256 KiB; 3 MiB of data is 4 MiB of base64, sent in pieces.
    let (exec, _cache) = executor(|c| c.max_line_bytes(256 << 10));
    let n = 3 << 20;
    let r = call(&exec, &js(), json!({"kind": "image", "bytes": n})).await;
    assert!(!r.is_error, "{}", r.text_content());
    assert_eq!(r.content[0].as_text(), Some("here"));
    assert_eq!(
        r.content[1],
        Content::Image {
            data: b64(n),
            mime_type: "image/png".into()
        }
    );
    let r = call(&exec, &py(), json!({"bytes": n})).await;
    assert!(!r.is_error, "{}", r.text_content());
    let Content::Resource { resource } = &r.content[1] else {
        panic!("{:?}", r.content)
    };
    assert_eq!(resource.uri, "file:///report.pdf");
    assert_eq!(
        resource.contents,
        ResourceContents::Blob { blob: b64(n) },
        "the blob arrives whole"
    );
}

#[tokio::test]
async fn a_block_over_the_bound_is_decoded_into_the_spill_folder_and_linked() {
    let spill = tempfile::tempdir().unwrap();
    let dir = spill.path().join("spill");
    let (exec, _cache) = executor(|c| {
        c.max_binary_bytes(1 << 20)
            .max_line_bytes(256 << 10)
            .spill_dir(&dir)
    });
    let n = 5 << 20;
    let r = call(&exec, &js(), json!({"kind": "image", "bytes": n})).await;
    assert!(!r.is_error, "{}", r.text_content());
    assert_eq!(r.content[0].as_text(), Some("here"));
    assert_eq!(
        linked_file(&r.content[1], &dir, n as u64, "image/png"),
        bytes(n)
    );
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);

    // Python, an embedded resource: its URI is named in the link's description.
    let r = call(&exec, &py(), json!({"bytes": n})).await;
    assert!(!r.is_error, "{}", r.text_content());
    assert_eq!(
        linked_file(&r.content[1], &dir, n as u64, "application/pdf"),
        bytes(n)
    );
    let Content::ResourceLink(link) = &r.content[1] else {
        unreachable!()
    };
    assert!(link.name.ends_with(".pdf"), "{link:?}");
    assert!(
        link.description
            .as_deref()
            .unwrap()
            .contains("file:///report.pdf")
    );

    // The bound is the result's: the first block fits (700 KB as base64), the second, which
    // would go past 1 MiB in all, is saved.
    let n = 700_000 * 3 / 4;
    let r = call(&exec, &js(), json!({"kind": "two", "bytes": n})).await;
    assert!(
        matches!(r.content[0], Content::Image { .. }),
        "{:?}",
        r.content[0]
    );
    assert_eq!(
        linked_file(&r.content[1], &dir, n as u64, "audio/wav"),
        bytes(n)
    );

    // A data: URL in the URL-safe alphabet without padding is repaired while it streams,
    // and typed by its prefix.
    let n = (2 << 20) + 1;
    let r = call(&exec, &js(), json!({"kind": "urlsafe", "bytes": n})).await;
    assert_eq!(
        linked_file(&r.content[0], &dir, n as u64, "image/webp"),
        bytes(n)
    );

    // Every file is whole: nothing is left half-written.
    let names = spilled(&dir);
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(names.iter().all(|n| !n.ends_with(".part")), "{names:?}");
}

#[tokio::test]
async fn bad_or_unkeepable_binary_data_is_refused_with_a_reason_and_leaves_no_file() {
    let spill = tempfile::tempdir().unwrap();
    let dir = spill.path().join("spill");
    let (exec, _cache) = executor(|c| c.max_binary_bytes(1 << 20).spill_dir(&dir));
    // A byte that is not base64, 2 MB into a block being saved.
    let r = call(&exec, &js(), json!({"kind": "bad", "bytes": 3 << 20})).await;
    let t = r.content[0].as_text().unwrap_or_default();
    assert!(
        t.starts_with(
            "[toolbind: an image block whose `data` is not base64: byte 2000000 is \"*\""
        ),
        "{}",
        &t[..t.len().min(300)]
    );
    assert_eq!(
        spilled(&dir),
        Vec::<String>::new(),
        "the half-written file is removed"
    );

    // No MIME type: refused, and the saved data is not lost — the note names its file.
    let r = call(&exec, &js(), json!({"kind": "nomime", "bytes": 2 << 20})).await;
    let t = r.content[0].as_text().unwrap_or_default();
    assert!(
        t.contains("an image block without `mimeType` (e.g. \"image/png\"); its data is saved to "),
        "{}",
        &t[..t.len().min(300)]
    );
    assert_eq!(spilled(&dir).len(), 1);

    // Without a spill folder, a block over the bound cannot be kept: a clear text block.
    let (exec, _cache) = executor(|c| c.max_binary_bytes(1 << 20));
    let r = call(&exec, &js(), json!({"kind": "image", "bytes": 2 << 20})).await;
    assert!(!r.is_error);
    let t = r.content[1].as_text().unwrap_or_default();
    assert!(
        t.contains("an image block whose `data` is over the 1048576-byte bound for binary data a result holds (ExecConfig::max_binary_bytes), and no spill folder is set"),
        "{}",
        &t[..t.len().min(400)]
    );
    // Within the bound, with no folder, nothing changes.
    let r = call(&exec, &js(), json!({"kind": "image", "bytes": 1000})).await;
    assert!(matches!(r.content[1], Content::Image { .. }));
}

/// A bash tool's `output: json` result is one inline JSON object: its binary data is
/// bounded the same way.
#[tokio::test]
async fn bash_output_json_binary_data_over_the_bound_is_saved_too() {
    let spill = tempfile::tempdir().unwrap();
    let dir = spill.path().join("spill");
    let (exec, _cache) = executor(|c| c.max_binary_bytes(1 << 20).spill_dir(&dir));
    let fixture_dir = fixture("sh_json");
    let md = "---\nname: sh_json\ndescription: d\nlanguage: bash\noutput: json\ninputs:\n  mode:\n    type: string\n    description: d\n---\n";
    let mut spec = toolbind_codegen::parse_tool_md(
        &fixture_dir.join("TOOL.md"),
        &fixture_dir,
        md.as_bytes(),
        &toolbind_codegen::Options::default().require_entry(false),
    )
    .unwrap();
    spec.entry = Some("index.sh".into());
    let tool = toolbind::ToolInfo::from(spec);
    let r = call(&exec, &tool, json!({"mode": "big"})).await;
    assert!(!r.is_error, "{}", r.text_content());
    assert_eq!(
        linked_file(&r.content[0], &dir, 1_500_000, "audio/wav"),
        vec![0u8; 1_500_000]
    );
    let Content::ResourceLink(link) = &r.content[0] else {
        unreachable!()
    };
    assert!(link.name.ends_with(".wav"), "{link:?}");
}
