//! Tool results in the seed's JSON shape: `{content: [{type, text}], details?, isError?}`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One block of a tool's output, in MCP's shapes (`type` names the kind). A block of a
/// kind not listed here, or one missing a field, reaches the agent as a text block holding
/// its JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
#[non_exhaustive]
pub enum Content {
    /// `{type: "text", text}`
    Text {
        /// The text.
        text: String,
    },
    /// `{type: "image", data, mimeType}` — base64 data.
    Image {
        /// Base64 data.
        data: String,
        #[serde(rename = "mimeType")]
        /// The image's MIME type (`mimeType`).
        mime_type: String,
    },
    /// `{type: "audio", data, mimeType}` — base64 data.
    Audio {
        /// Base64 data.
        data: String,
        #[serde(rename = "mimeType")]
        /// The audio's MIME type (`mimeType`), e.g. `audio/wav`.
        mime_type: String,
    },
    /// `{type: "resource", resource: {uri, mimeType?, text | blob}}` — a document or file
    /// the tool returns whole, named by a URI.
    Resource {
        /// The resource: its URI, MIME type and contents.
        resource: EmbeddedResource,
    },
    /// `{type: "resource_link", uri, name, title?, description?, mimeType?, size?}` — a
    /// pointer to a resource the client may fetch, without its contents.
    #[serde(rename = "resource_link")]
    ResourceLink(ResourceLink),
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text } => Some(text),
            _ => None,
        }
    }

    /// How many bytes the block carries (text, base64 data, a resource's contents).
    pub fn size(&self) -> usize {
        match self {
            Content::Text { text } => text.len(),
            Content::Image { data, .. } | Content::Audio { data, .. } => data.len(),
            Content::Resource { resource } => resource.uri.len() + resource.contents.len(),
            Content::ResourceLink(l) => {
                l.uri.len()
                    + l.name.len()
                    + l.title.as_ref().map_or(0, String::len)
                    + l.description.as_ref().map_or(0, String::len)
            }
        }
    }
}

/// The resource of a [`Content::Resource`] block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EmbeddedResource {
    /// Its URI.
    pub uri: String,
    /// Its MIME type (`mimeType`).
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its contents: `text`, or `blob` (base64).
    #[serde(flatten)]
    pub contents: ResourceContents,
}

impl EmbeddedResource {
    /// A text resource.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        EmbeddedResource {
            uri: uri.into(),
            mime_type: None,
            contents: ResourceContents::Text { text: text.into() },
        }
    }

    /// A binary resource, `blob` in base64.
    pub fn blob(uri: impl Into<String>, blob: impl Into<String>) -> Self {
        EmbeddedResource {
            uri: uri.into(),
            mime_type: None,
            contents: ResourceContents::Blob { blob: blob.into() },
        }
    }

    /// With its MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

/// What an [`EmbeddedResource`] holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ResourceContents {
    /// `text`: the resource as text.
    Text {
        /// The text.
        text: String,
    },
    /// `blob`: the resource's bytes, base64.
    Blob {
        /// Base64 data.
        blob: String,
    },
}

impl ResourceContents {
    /// Its size in bytes (of the text, or of the base64 data).
    pub fn len(&self) -> usize {
        match self {
            ResourceContents::Text { text } => text.len(),
            ResourceContents::Blob { blob } => blob.len(),
        }
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A [`Content::ResourceLink`] block: a resource named, not included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResourceLink {
    /// The resource's URI.
    pub uri: String,
    /// Its name (an identifier).
    pub name: String,
    /// A name for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type (`mimeType`).
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

impl ResourceLink {
    /// A link to `uri`, named `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceLink {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
        }
    }
}

/// Why a call ended: what an agent matches on to decide what to do next (retry a timeout,
/// fix bad arguments, give up on a crash) without parsing the text. Kept off every wire
/// format (it is not serialised); the text says the same for the model.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum StopReason {
    /// The tool ran and returned a result.
    #[default]
    Completed,
    /// The tool ran and reported a failure: `isError: true`, a thrown error, a non-zero exit
    /// of a bash tool, or a failing `prepareArguments`.
    ToolError,
    /// The arguments did not validate against the tool's inputs; nothing ran.
    BadArguments,
    /// No loaded tool has that name; nothing ran.
    UnknownTool,
    /// The TOOL.md on disk differs from the contract the typed call was compiled against;
    /// nothing ran.
    ContractDrift,
    /// The call's timeout passed.
    Timeout {
        /// The timeout that passed.
        after: std::time::Duration,
    },
    /// The call was cancelled (before it started or while it ran).
    Cancelled,
    /// The sandbox ended the tool for a limit: memory, CPU time, file size, processes.
    LimitExceeded {
        /// Which limit.
        limit: Limit,
    },
    /// The sandbox could not start the tool (bwrap missing under `required`, a grant that
    /// does not exist, bwrap's own failure).
    JailFailed,
    /// The tool's process could not start or died without a result (a signal, an exit
    /// before answering, the interpreter missing), or a neighbouring call broke the worker
    /// it shared.
    Crashed,
    /// The tool's process broke the protocol (a line too long or not a message, a result
    /// of the wrong shape).
    ProtocolError,
    /// The call needed approval (TOOL.md `approval: always`, or the host's policy) and did
    /// not get it: the host denied it, did not answer in time, or there is no host to ask.
    /// Nothing ran.
    Denied,
}

impl StopReason {
    /// The variant's stable snake_case name: `completed`, `tool_error`, `bad_arguments`,
    /// `unknown_tool`, `contract_drift`, `timeout`, `cancelled`, `limit_exceeded`,
    /// `jail_failed`, `crashed`, `protocol_error`, `denied`. `toolbind call --json` prints it as
    /// `stop.kind`; these strings do not change once published (other outputs, such as
    /// traces, reuse them), and a new variant gets a new one.
    pub const fn kind(&self) -> &'static str {
        match self {
            StopReason::Completed => "completed",
            StopReason::ToolError => "tool_error",
            StopReason::BadArguments => "bad_arguments",
            StopReason::UnknownTool => "unknown_tool",
            StopReason::ContractDrift => "contract_drift",
            StopReason::Timeout { .. } => "timeout",
            StopReason::Cancelled => "cancelled",
            StopReason::LimitExceeded { .. } => "limit_exceeded",
            StopReason::JailFailed => "jail_failed",
            StopReason::Crashed => "crashed",
            StopReason::ProtocolError => "protocol_error",
            StopReason::Denied => "denied",
        }
    }
}

/// A sandbox limit a tool can hit ([`StopReason::LimitExceeded`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// Private writable memory per process (`RLIMIT_DATA`).
    Memory,
    /// CPU time per call (`RLIMIT_CPU`).
    CpuTime,
    /// The size of a file the tool writes (`RLIMIT_FSIZE`).
    FileSize,
    /// The number of processes of a call or worker.
    Processes,
}

impl Limit {
    /// `memory`, `CPU time`, `file size`, `processes`: as the error text names it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Limit::Memory => "memory",
            Limit::CpuTime => "CPU time",
            Limit::FileSize => "file size",
            Limit::Processes => "processes",
        }
    }

    /// The limit's stable snake_case name: `memory`, `cpu_time`, `file_size`, `processes`
    /// (`toolbind call --json` prints it as `stop.limit`); like [`StopReason::kind`], it
    /// does not change once published.
    pub const fn kind(self) -> &'static str {
        match self {
            Limit::Memory => "memory",
            Limit::CpuTime => "cpu_time",
            Limit::FileSize => "file_size",
            Limit::Processes => "processes",
        }
    }
}

/// Where the runtime's own notes are in a result's `content`: one run of consecutive
/// blocks (the runtime appends its notes together, when it reads the tool's result), kept
/// in the padding of [`ToolResult`] so results, moved by value everywhere, do not grow. A
/// note past block 65,535 is not marked, and so counts as the tool's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct RuntimeNotes {
    first: u16,
    count: u8,
}

impl RuntimeNotes {
    pub(crate) fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub(crate) fn contains(&self, i: usize) -> bool {
        let first = usize::from(self.first);
        (first..first + usize::from(self.count)).contains(&i)
    }

    /// Marks block `i`, which must follow the run (or start it).
    pub(crate) fn push(&mut self, i: usize) {
        let Ok(at) = u16::try_from(i) else { return };
        if self.count == 0 {
            (self.first, self.count) = (at, 1);
        } else if usize::from(self.first) + usize::from(self.count) == i {
            self.count = self.count.saturating_add(1);
        } else {
            debug_assert!(
                false,
                "a runtime note at {i} apart from the run at {}",
                self.first
            );
        }
    }
}

/// What a tool call returns to the model.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolResult {
    /// What the model sees: text and image blocks.
    pub content: Vec<Content>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The tool's structured details (`details`), for the agent; not sent to the model by
    /// the provider formats that have no place for them.
    pub details: Option<Value>,
    #[serde(
        rename = "isError",
        default,
        skip_serializing_if = "std::ops::Not::not"
    )]
    /// The call failed (`isError`); [`stop`](Self::stop) says why.
    pub is_error: bool,
    /// The tool asks the agent loop to stop after this batch (the Pi tool API's
    /// `terminate: true`): a [`Batch`](crate::batch::Batch) reports it when every result in
    /// the batch says so. Never sent to the model.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub terminate: bool,
    /// Why the call ended ([`StopReason`]); never serialised.
    #[serde(skip)]
    pub stop: StopReason,
    /// Whether the result's `details` keep the tool's declared TOOL.md `outputs:`. A broken
    /// contract ([`OutputCheck::Broken`](OutputCheck)) is a bug in the tool, not a
    /// failed call (its side effects already happened): the result is kept as the tool
    /// returned it (`is_error` false, `stop` [`StopReason::Completed`]), the runtime reports
    /// each violation, and `toolbind serve` leaves out its `structuredContent`. Never
    /// serialised.
    #[serde(skip)]
    pub output_check: OutputCheck,
    /// Which blocks of `content` are notes the runtime added where it cut the tool's
    /// output (`[output truncated by the runtime: ...]`, giving the tool's real totals):
    /// known by position, never by their text, so a tool cannot write one.
    #[serde(skip)]
    pub(crate) runtime_notes: RuntimeNotes,
}

impl ToolResult {
    /// Appends the runtime's note on what it cut, remembered as such.
    pub(crate) fn push_runtime_note(&mut self, text: String) {
        self.runtime_notes.push(self.content.len());
        self.content.push(Content::text(text));
    }

    /// A successful result with these content blocks.
    pub fn new(content: Vec<Content>) -> Self {
        ToolResult {
            content,
            ..ToolResult::default()
        }
    }

    /// Sets the structured details (`details`).
    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(details);
        self
    }

    /// Marks the result as a failure (`isError`) that ended as `reason`.
    pub fn failed(mut self, reason: StopReason) -> Self {
        self.is_error = true;
        self.stop = reason;
        self
    }

    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        ToolResult {
            content: vec![Content::text(text)],
            details: None,
            is_error: false,
            terminate: false,
            stop: StopReason::Completed,
            output_check: OutputCheck::Unchecked,
            runtime_notes: RuntimeNotes::default(),
        }
    }

    /// An error result with one text block the model can act on.
    pub fn error(text: impl Into<String>) -> Self {
        ToolResult {
            content: vec![Content::text(text)],
            details: None,
            is_error: true,
            terminate: false,
            stop: StopReason::ToolError,
            output_check: OutputCheck::Unchecked,
            runtime_notes: RuntimeNotes::default(),
        }
    }

    /// An error result that ended for `reason`.
    pub fn stopped(reason: StopReason, text: impl Into<String>) -> Self {
        ToolResult {
            stop: reason,
            ..ToolResult::error(text)
        }
    }

    /// Sets why the call ended.
    #[must_use]
    pub fn with_stop(mut self, reason: StopReason) -> Self {
        self.stop = reason;
        self
    }

    /// All text blocks joined by newlines.
    pub fn text_content(&self) -> String {
        let texts: Vec<&str> = self.content.iter().filter_map(Content::as_text).collect();
        texts.join("\n")
    }
}

/// A progress update from `onUpdate` (the platform's TOOLS.md: `{content: [{type, text}]}`),
/// with an optional position: `onUpdate({content, progress: 40, total: 100})` in node and
/// python, a `{"text", "progress", "total"}` JSON line on fd 3 in bash (see
/// tools/README.md).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Progress {
    /// What the tool says it is doing.
    pub content: Vec<Content>,
    /// How far along the call is, in the tool's own units (a finite number, `>= 0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<f64>,
    /// The value `progress` reaches when the work is done, when the tool knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
}

impl Progress {
    /// An update with these content blocks and no position.
    pub fn new(content: Vec<Content>) -> Self {
        Progress {
            content,
            ..Progress::default()
        }
    }

    /// Sets the position: `progress` of `total` (when known).
    pub fn at(mut self, progress: f64, total: Option<f64>) -> Self {
        self.progress = Some(progress);
        self.total = total;
        self
    }

    /// An update with one text block and no position.
    pub fn text(text: impl Into<String>) -> Self {
        Progress {
            content: vec![Content::text(text)],
            ..Progress::default()
        }
    }

    /// All text blocks joined by newlines.
    pub fn text_content(&self) -> String {
        let texts: Vec<&str> = self.content.iter().filter_map(Content::as_text).collect();
        texts.join("\n")
    }
}

/// Whether a result's `details` keep its tool's declared TOOL.md `outputs:`
/// ([`ToolResult::output_check`]). Never serialised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum OutputCheck {
    /// Not checked: the tool declares no `outputs:`, the call did not complete, or the
    /// result was not made by a [`Runtime`](crate::Runtime).
    #[default]
    Unchecked,
    /// The details keep the declared outputs (`toolbind serve` sends them as
    /// `structuredContent`).
    Held,
    /// The details break them: a bug in the tool, reported field by field when the call
    /// ended ([`RuntimeBuilder::on_output_violation`](crate::runtime::RuntimeBuilder::on_output_violation)),
    /// and by [`Runtime::output`](crate::Runtime::output).
    Broken,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant, each at its own index: a new variant fails to compile here until it
    /// is listed, so it cannot go out without a name of its own.
    fn all_stop_reasons() -> Vec<StopReason> {
        let all = vec![
            StopReason::Completed,
            StopReason::ToolError,
            StopReason::BadArguments,
            StopReason::UnknownTool,
            StopReason::ContractDrift,
            StopReason::Timeout {
                after: std::time::Duration::from_secs(1),
            },
            StopReason::Cancelled,
            StopReason::LimitExceeded {
                limit: Limit::Memory,
            },
            StopReason::JailFailed,
            StopReason::Crashed,
            StopReason::ProtocolError,
            StopReason::Denied,
        ];
        for (i, r) in all.iter().enumerate() {
            let index = match r {
                StopReason::Completed => 0,
                StopReason::ToolError => 1,
                StopReason::BadArguments => 2,
                StopReason::UnknownTool => 3,
                StopReason::ContractDrift => 4,
                StopReason::Timeout { .. } => 5,
                StopReason::Cancelled => 6,
                StopReason::LimitExceeded { .. } => 7,
                StopReason::JailFailed => 8,
                StopReason::Crashed => 9,
                StopReason::ProtocolError => 10,
                StopReason::Denied => 11,
            };
            assert_eq!(index, i, "{r:?}");
        }
        all
    }

    fn all_limits() -> Vec<Limit> {
        let all = vec![
            Limit::Memory,
            Limit::CpuTime,
            Limit::FileSize,
            Limit::Processes,
        ];
        for (i, l) in all.iter().enumerate() {
            let index = match l {
                Limit::Memory => 0,
                Limit::CpuTime => 1,
                Limit::FileSize => 2,
                Limit::Processes => 3,
            };
            assert_eq!(index, i, "{l:?}");
        }
        all
    }

    fn assert_distinct_snake_case(names: &[&str]) {
        let mut seen = std::collections::HashSet::new();
        for n in names {
            assert!(
                !n.is_empty()
                    && n.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
                    && !n.starts_with('_')
                    && !n.ends_with('_'),
                "{n} is not snake_case"
            );
            assert!(seen.insert(*n), "{n} names two variants");
        }
    }

    #[test]
    fn every_stop_reason_and_limit_has_its_own_snake_case_name() {
        let kinds: Vec<_> = all_stop_reasons().iter().map(StopReason::kind).collect();
        assert_distinct_snake_case(&kinds);
        // Published: they may be added to, never changed.
        assert_eq!(
            kinds,
            [
                "completed",
                "tool_error",
                "bad_arguments",
                "unknown_tool",
                "contract_drift",
                "timeout",
                "cancelled",
                "limit_exceeded",
                "jail_failed",
                "crashed",
                "protocol_error",
                "denied"
            ]
        );
        let limits: Vec<_> = all_limits().into_iter().map(Limit::kind).collect();
        assert_distinct_snake_case(&limits);
        assert_eq!(limits, ["memory", "cpu_time", "file_size", "processes"]);
    }
}
