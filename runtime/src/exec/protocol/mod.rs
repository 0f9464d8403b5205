//! The JSON-lines protocol between the runtime and a language harness.
//!
//! One message per line, UTF-8 JSON, on the tool process's fd 3 (a socket; both
//! directions). The protocol is versioned ([`PROTOCOL_VERSION`]): once the entry has
//! loaded, the harness's first message is
//!
//! - `{"type":"hello","protocol":4,"capabilities":{"prepare":true}}` — the protocol version
//!   it speaks and what the entry offers, found by the harness itself: `prepare` is whether
//!   the entry exports a callable `prepareArguments` (`prepare_arguments` in python). A
//!   capability that is absent is not offered; capability keys the runtime does not know
//!   are ignored (a newer harness may offer more);
//!
//! or a `fatal` (below) when the entry cannot load. A first message of another kind, a
//! second `hello`, or a version the runtime does not speak is a protocol error. Later
//! versions add message kinds and capabilities; they never give an existing message
//! another meaning. The runtime may send before the hello arrives (the harness reads its
//! input only after sending it). The runtime sends:
//!
//! - `{"type":"call","id":1,"toolCallId":"...","params":{...}}` — run `execute` once;
//! - `{"type":"abort","id":1}` — fire that call's `AbortSignal` (and reject what its
//!   `ctx` still waits for);
//! - (version 4) `{"type":"answer","id":1,"ask":0,"result":<value>}` or
//!   `{"type":"answer","id":1,"ask":0,"error":"..."}` — the answer to the call's question
//!   `ask` (below);
//! - `{"type":"prepare","id":2,"args":<raw arguments>}` — run the entry's
//!   `prepareArguments(args)` (the Pi tool API; `prepare_arguments` in python), answered with
//!   `{"type":"prepared","id":2,"args":<its return value>}` (the arguments unchanged when
//!   the entry has none) or an `error`. Sent only to a harness whose hello offered
//!   `prepare`.
//!
//! The harness answers each call with any number of updates and then exactly one
//! result or error:
//!
//! - `{"type":"update","id":1,"content":[{"type":"text","text":"..."}]}` — `onUpdate`;
//! - `{"type":"data","id":1,"ref":0,"data":"<base64 text>","size":<n>}` — (version 2) a
//!   piece of a long base64 string of the coming result (an image's or audio's `data`, a
//!   resource's `blob`), in order, the first one carrying the whole string's length as
//!   `size`; the result then holds `{"ref":0}` in that field. A string longer
//!   than the line limit travels this way, and the runtime bounds it apart from text
//!   (`ExecConfig::max_binary_bytes`), saving one over the bound to the spill folder as
//!   its pieces arrive (exec/blobs.rs);
//! - `{"type":"result","id":1,"result":<what execute returned>}`;
//! - (version 3) an `update` or `result` whose text the harness cut carries `cut`:
//!   `{"kind":"chars","cut":<characters cut>,"limit":<characters kept in all>}`, or for a
//!   message over the line limit that the harness shrank to its text,
//!   `{"kind":"message","message":"result","bytes":<its size>,"limit":<line limit>,"kept":<characters kept>}`.
//!   The runtime writes the note the model reads ([`note`]) and knows it for its own
//!   (`ToolResult::runtime_notes`), so no text a tool returns passes for one;
//! - (version 4) `{"type":"ask","id":1,"ask":0,"kind":"confirm"|"elicit"|"sample"|"roots","params":{...}}`
//!   — a question the tool asks through `ctx` (`execute`'s fifth argument), numbered per
//!   call, with `"key":"..."` when the tool named it; at most [`MAX_QUESTIONS`](crate::host::MAX_QUESTIONS) open at once, one more is
//!   refused at once. The call's timeout stands still while one is open;
//! - (version 4) `{"type":"notify","id":1,"level":"info","text":"..."}` — `ctx.notify`;
//! - (version 4) `{"type":"waiting","id":1}` — the tool asked, and now waits for an
//!   answer (node: its event loop went idle; python: it awaits or blocks on one): a hint
//!   for hosts that gather questions;
//! - `{"type":"error","id":1,"message":"..."}` — `execute` threw;
//! - `{"type":"fatal","message":"..."}` — the harness cannot serve calls at all (the entry
//!   failed to load or has no `execute`); it exits right after.
//!
//! Lines longer than the configured limit, and anything that is not one of these
//! messages, are protocol errors: the process is killed and its calls fail with a message
//! saying what was received.

/// A `Malformed` (the block error of `exec::error`) from a format string.
macro_rules! bad {
    ($($t:tt)*) => {
        $crate::exec::error::Malformed(format!($($t)*))
    };
}

mod binary;
mod content;
mod wire;

pub(crate) use content::{normalize_progress, normalize_result_with, note, progress_line};
pub(crate) use wire::{
    Capabilities, Cut, FromHarness, HelloError, LineError, PROTOCOL_VERSION, abort_line,
    answer_line, call_line, hello, prepare_line, preview, read_line, salvage_id,
};

#[cfg(test)]
mod tests {
    use super::content::*;
    use super::wire::*;
    use crate::result::{Content, EmbeddedResource, Progress, ToolResult};
    use serde_json::Value;
    use serde_json::json;

    #[test]
    fn results_normalise() {
        let r = normalize_result(
            json!({"content": [{"type": "text", "text": "hi"}], "isError": true, "details": {"a": 1}}),
            100,
        );
        assert_eq!(r.text_content(), "hi");
        assert!(r.is_error);
        assert_eq!(r.details, Some(json!({"a": 1})));
        assert_eq!(
            normalize_result(json!("plain"), 100),
            ToolResult::text("plain")
        );
        assert!(normalize_result(Value::Null, 100).is_error);
        assert!(normalize_result(json!({"text": "x"}), 100).is_error);
        let forged = normalize_result(json!({"content": [], "isError": "true"}), 100);
        assert!(forged.is_error);
        assert!(
            forged.text_content().contains("`isError` as a string"),
            "{forged:?}"
        );
    }

    #[test]
    fn rich_blocks_keep_their_kind_and_malformed_ones_become_text() {
        use crate::result::{EmbeddedResource, ResourceLink};
        let r = normalize_result(
            json!({"content": [
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "A"}},
                {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAEC"}},
                {"type": "resource_link", "uri": "file:///c", "name": "c", "size": 3},
                // Malformed: a resource without contents, audio without data, an
                // unknown kind.
                {"type": "resource", "resource": {"uri": "file:///d"}},
                {"type": "audio", "mimeType": "audio/wav"},
                {"type": "video", "data": "x"},
            ]}),
            10_000,
        );
        let mut link = ResourceLink::new("file:///c", "c");
        link.size = Some(3);
        assert_eq!(
            r.content[..4],
            [
                Content::Audio {
                    data: "UklGRg==".into(),
                    mime_type: "audio/wav".into()
                },
                Content::Resource {
                    resource: EmbeddedResource::text("file:///a.txt", "A").mime_type("text/plain")
                },
                Content::Resource {
                    resource: EmbeddedResource::blob("file:///b.bin", "AAEC")
                },
                Content::ResourceLink(link),
            ]
        );
        for (block, kind) in r.content[4..].iter().zip(["resource", "audio", "video"]) {
            let text = block.as_text().unwrap_or_else(|| panic!("{block:?}"));
            assert!(text.contains(kind), "{text}");
        }
        // Serialised back, each has MCP's shape.
        assert_eq!(
            serde_json::to_value(&r.content[1]).unwrap(),
            json!({"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "A"}})
        );
        assert_eq!(
            serde_json::to_value(&r.content[3]).unwrap(),
            json!({"type": "resource_link", "uri": "file:///c", "name": "c", "size": 3})
        );
    }

    #[test]
    fn unambiguous_base64_is_repaired_and_the_rest_refused_with_a_reason() {
        let block = |b: Value| {
            normalize_result(json!({"content": [b]}), 1 << 20)
                .content
                .remove(0)
        };
        let image = |data: &str| Content::Image {
            data: data.into(),
            mime_type: "image/png".into(),
        };
        // A data: URL names the MIME type; line breaks, the URL-safe alphabet and missing
        // padding are read as what they mean.
        assert_eq!(
            block(json!({"type": "image", "data": "data:image/png;base64,iVBO\nRw0K"})),
            image("iVBORw0K")
        );
        assert_eq!(
            block(json!({"type": "image", "data": "-_8", "mimeType": "image/png"})),
            image("+/8=")
        );
        assert_eq!(
            block(json!({"type": "image", "data": "AAEC\r\nAw", "mimeType": "image/png"})),
            image("AAECAw==")
        );
        let refused = |b: Value, why: &str| {
            let c = block(b.clone());
            let text = c
                .as_text()
                .unwrap_or_else(|| panic!("{b} was kept as {c:?}"));
            assert!(
                text.starts_with("[toolbind: ") && text.contains(why),
                "{text}"
            );
            assert!(
                text.contains(&b.to_string()),
                "the block's JSON is kept: {text}"
            );
        };
        // Padding rebuilt to what a decoder wants; an empty mimeType beside a prefix.
        assert_eq!(
            block(json!({"type": "image", "data": "AAAA=", "mimeType": "image/png"})),
            image("AAAA")
        );
        assert_eq!(
            block(json!({"type": "image", "data": "AAA==", "mimeType": "image/png"})),
            image("AAA=")
        );
        assert_eq!(
            block(json!({"type": "image", "data": "data:image/png;base64,AAAA", "mimeType": ""})),
            image("AAAA")
        );
        let r = block(
            json!({"type": "resource", "resource": {"uri": "file:///a.png", "blob": "data:image/png;base64,AAAA"}}),
        );
        assert_eq!(
            r,
            Content::Resource {
                resource: EmbeddedResource::blob("file:///a.png", "AAAA").mime_type("image/png")
            }
        );
        refused(
            json!({"type": "image", "data": "", "mimeType": "image/png"}),
            "is empty",
        );
        refused(
            json!({"type": "image", "data": "AA%C", "mimeType": "image/png"}),
            "byte 2 is \"%\"",
        );
        refused(
            json!({"type": "image", "data": "A+B_", "mimeType": "image/png"}),
            "mixes the standard",
        );
        refused(
            json!({"type": "image", "data": "AAAAA", "mimeType": "image/png"}),
            "cannot be whole bytes",
        );
        refused(
            json!({"type": "image", "data": "AAAA"}),
            "without `mimeType` (e.g. \"image/png\")",
        );
        refused(
            json!({"type": "audio", "data": "AAAA", "mimeType": ""}),
            "audio/wav",
        );
        refused(
            json!({"type": "resource", "resource": {"uri": "file:///a", "text": "t", "blob": "AAAA"}}),
            "both `text` and `blob`",
        );
        refused(
            json!({"type": "resource", "resource": {"uri": "a.txt", "text": "t"}}),
            "not a URI",
        );
        refused(
            json!({"type": "resource_link", "uri": "out mp3", "name": "o"}),
            "not a URI",
        );
        refused(
            json!({"type": "resource_link", "uri": "file:///o", "name": "o", "size": -1}),
            "`size` is -1",
        );
        refused(
            json!({"type": "video", "data": "AAAA"}),
            "unknown type `video`",
        );
        refused(json!({"kind": "text", "text": 1}), "without `type`");
    }

    #[test]
    fn an_embedded_resources_text_shares_the_text_budget() {
        let r = normalize_result(
            json!({"content": [
                {"type": "text", "text": "0123456789"},
                {"type": "resource", "resource": {"uri": "test://u", "text": "abcdefghij"}},
            ]}),
            15,
        );
        match &r.content[1] {
            Content::Resource { resource } => assert_eq!(resource.contents.len(), 5),
            other => panic!("{other:?}"),
        }
        assert!(r.text_content().contains("5 more bytes were cut"), "{r:?}");
    }

    #[test]
    fn progress_carries_an_optional_position() {
        let p = normalize_progress(
            json!({"content": [{"type": "text", "text": "Converting: 40%"}], "progress": 40, "total": 100}),
            100,
        );
        assert_eq!(
            (p.text_content().as_str(), p.progress, p.total),
            ("Converting: 40%", Some(40.0), Some(100.0))
        );
        let p = normalize_progress(json!({"progress": 3}), 100);
        assert!(p.content.is_empty() && p.progress == Some(3.0) && p.total.is_none());
        // Not numbers, negative, zero total: ignored, the text still arrives.
        let p = normalize_progress(json!({"content": "x", "progress": "40", "total": 0}), 100);
        assert_eq!(
            (p.text_content().as_str(), p.progress, p.total),
            ("x", None, None)
        );
        let p = normalize_progress(json!({"text": "y", "progress": -1}), 100);
        assert_eq!((p.text_content().as_str(), p.progress), ("y", None));
        // bash fd 3 lines: a JSON object with a numeric progress, else text.
        let p = progress_line(
            r#"{"text": "Converting: 40%", "progress": 40, "total": 100}"#.into(),
            100,
        );
        assert_eq!(
            (p.text_content().as_str(), p.progress, p.total),
            ("Converting: 40%", Some(40.0), Some(100.0))
        );
        let p = progress_line(r#"{"no": "position"}"#.into(), 100);
        assert_eq!(
            (p.text_content().as_str(), p.progress),
            (r#"{"no": "position"}"#, None)
        );
        assert_eq!(progress_line("plain".into(), 100), Progress::text("plain"));
    }

    #[test]
    fn text_is_capped_with_a_note() {
        let r = normalize_result(json!("é".repeat(10)), 5);
        assert_eq!(r.content[0].as_text(), Some("éé"));
        assert!(r.content[1].as_text().unwrap().contains("16 more bytes"));
    }

    #[test]
    fn ids_are_salvaged_from_lines_that_are_not_json() {
        let nan = br#"{"type": "result", "id": 7, "result": {"content": [NaN]}}"#;
        assert_eq!(salvage_id(nan), Some(("result", 7)));
        assert_eq!(
            salvage_id(br#"{"type":"update","id":12}"#),
            Some(("update", 12))
        );
        assert_eq!(salvage_id(br#"{"type":"fatal","id":1,"x":1}"#), None);
        assert_eq!(salvage_id(b"garbage"), None);
        assert_eq!(salvage_id(br#"{"type":"result","id":7x}"#), None);
    }

    #[test]
    fn hellos_are_checked() {
        let hello_of = |line: &str| match serde_json::from_str::<FromHarness>(line).unwrap() {
            FromHarness::Hello {
                protocol,
                capabilities,
            } => hello("node", &protocol, &capabilities),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            hello_of(r#"{"type":"hello","protocol":4,"capabilities":{"prepare":true}}"#),
            Ok(Capabilities { prepare: true })
        );
        // Absent capabilities are not offered; unknown ones (a newer harness) are ignored.
        assert_eq!(
            hello_of(r#"{"type":"hello","protocol":4}"#),
            Ok(Capabilities::default())
        );
        assert_eq!(
            hello_of(
                r#"{"type":"hello","protocol":4,"capabilities":{"prepare":false,"streams":{"x":1}},"extra":2}"#
            ),
            Ok(Capabilities { prepare: false })
        );
        // A version this runtime does not speak: both versions named.
        let e = hello_of(r#"{"type":"hello","protocol":5,"capabilities":{}}"#).unwrap_err();
        assert_eq!(
            e,
            HelloError::Version {
                label: "node",
                speaks: 5
            }
        );
        assert_eq!(
            e.to_string(),
            "protocol error: the node harness speaks protocol version 5, and this runtime speaks version 4; the harness is from another toolbind version"
        );
        let e = hello_of(r#"{"type":"hello","protocol":"1"}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no protocol version (`protocol` is \"1\")"),
            "{e}"
        );
        assert!(e.contains("speaks version 4"), "{e}");
        let e = hello_of(r#"{"type":"hello","capabilities":{}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`protocol` is null"), "{e}");
        let e = hello_of(r#"{"type":"hello","protocol":4,"capabilities":{"prepare":"yes"}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`prepare` capability as a string"), "{e}");
        let e = hello_of(r#"{"type":"hello","protocol":4,"capabilities":[]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`capabilities` as an array"), "{e}");
        // Message kinds stay closed: an unknown one is not a message.
        assert!(
            serde_json::from_str::<FromHarness>(r#"{"type":"greeting","protocol":4}"#).is_err()
        );
    }

    #[tokio::test]
    async fn lines_are_bounded() {
        let data: &[u8] = b"short\nthis line is far too long\nlast";
        let mut r = tokio::io::BufReader::with_capacity(4, data);
        let mut line = Vec::new();
        assert!(read_line(&mut r, &mut line, 10).await.unwrap().is_some());
        assert_eq!(line, b"short");
        line.clear();
        assert!(matches!(
            read_line(&mut r, &mut line, 10).await,
            Err(LineError::TooLong(10))
        ));
    }
}
