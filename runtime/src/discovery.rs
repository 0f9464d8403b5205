//! Progressive tool discovery: the model first sees a few core tools and `search_tools`,
//! and the tools it finds become callable on its next turn ([`Discovery`]).

use serde_json::{Value, json};
use toolbind_codegen::model::{DiscoveryMode, ToolSpec};
use toolbind_codegen::schema;

use crate::batch::{Answered, Batch, BatchOptions, ToolCallRequest};
use crate::index::ToolIndex;
use crate::loader::Registry;
use crate::provider::Provider;
use crate::result::ToolResult;
use crate::{Runtime, ToolInfo};

/// The name of the search tool [`Discovery`] adds to a request.
pub const SEARCH_TOOL: &str = "search_tools";

/// The most tools one search returns.
pub const MAX_LIMIT: u64 = 20;

/// A conversation's progressive tool list (docs/providers.md, "Many tools").
///
/// The model first sees the core tools (those named with [`core`](Self::core) and those
/// whose TOOL.md says `discovery: always`) and one more, `search_tools` ([`SEARCH_TOOL`]):
/// a query in, the best matching tools out ([`ToolIndex`]). Each tool a search returns is
/// added to the tools the model sees from its next turn on; a call to a tool not yet
/// found is answered with an error that says to search first, and a call to a name no
/// tool has with the nearest shown name (never the whole catalog).
///
/// A search returns only tools the provider's dialect can carry (OpenAI's strict mode and
/// Gemini refuse some schemas), and never a tool of the list named `search_tools` (it
/// would clash with this one: such a tool is left out).
///
/// With [`Provider::Anthropic`], every tool is listed, those not in the core set with
/// `defer_loading: true`, and a search answers with `tool_reference` blocks: the API loads
/// the tools found itself (Anthropic's client-side tool search; the `tools` array stays
/// the same from turn to turn, so the prompt cache holds). Turn it off with
/// [`defer_loading`](Self::defer_loading)`(false)` for a gateway or model that lacks it.
/// Other providers get the core and found tools' definitions, and a search's result names
/// the tools found and what they do (their parameters arrive with their definitions on
/// the next turn).
///
/// Keep one `Discovery` per conversation: what the model found is part of it.
///
/// ```no_run
/// use serde_json::json;
/// use toolbind::batch::BatchOptions;
/// use toolbind::discovery::Discovery;
/// use toolbind::provider::Provider;
/// # async fn post(_: &serde_json::Value) -> serde_json::Value { unimplemented!() }
/// # async fn demo(runtime: toolbind::Runtime) {
/// let p = Provider::OpenAiChat;
/// let mut found = Discovery::new(p).core(["todo"]);
/// let mut messages = vec![json!({"role": "user", "content": "Open an issue about the crash"})];
/// loop {
///     let request = json!({
///         "model": "gpt-4.1-mini",
///         "messages": messages,
///         "tools": found.definitions(&runtime.tool_list()),
///     });
///     let response = post(&request).await;
///     messages.extend(p.model_turn(&response));
///     let calls = p.tool_calls(&response);
///     if calls.is_empty() {
///         break;
///     }
///     let batch = found.call_batch(&runtime, calls, BatchOptions::new()).await;
///     messages.extend(found.results(&batch));
/// }
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Discovery {
    provider: Provider,
    strict: bool,
    core: Vec<String>,
    found: Vec<String>,
    limit: usize,
    defer_loading: bool,
}

impl Discovery {
    /// A conversation with `provider` in which the model has found nothing yet.
    pub fn new(provider: Provider) -> Self {
        Discovery {
            provider,
            strict: false,
            core: Vec::new(),
            found: Vec::new(),
            limit: 5,
            defer_loading: true,
        }
    }

    /// OpenAI's strict mode ([`Provider::dialect`]); off by default.
    pub fn strict(mut self, on: bool) -> Self {
        self.strict = on;
        self
    }

    /// Tools the model sees from the first turn, by name (beside those whose TOOL.md says
    /// `discovery: always`). A name no tool has is ignored.
    pub fn core<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.core.extend(names.into_iter().map(Into::into));
        self
    }

    /// How many tools a search returns when the model does not say (5; at most
    /// [`MAX_LIMIT`]).
    pub fn limit(mut self, n: usize) -> Self {
        self.limit = n.clamp(1, MAX_LIMIT as usize);
        self
    }

    /// With [`Provider::Anthropic`]: list every tool, not-yet-shown ones with
    /// `defer_loading: true`, and answer searches with `tool_reference` blocks (on by
    /// default). Off, Anthropic gets what the other providers get.
    pub fn defer_loading(mut self, on: bool) -> Self {
        self.defer_loading = on;
        self
    }

    /// The tools the model has found so far, in the order found.
    pub fn found(&self) -> &[String] {
        &self.found
    }

    /// Whether the model sees `tool` now: a core tool or one it found.
    pub fn is_shown(&self, tool: &ToolInfo) -> bool {
        tool.name() != SEARCH_TOOL
            && (is_core(&self.core, tool) || self.found.iter().any(|f| f == tool.name()))
    }

    /// Whether the provider's dialect can carry `tool` (and it is not named like the
    /// search tool).
    fn carried(&self, tool: &ToolInfo) -> bool {
        tool.name() != SEARCH_TOOL && self.dialect().rejects(tool.spec()).is_none()
    }

    fn dialect(&self) -> toolbind_codegen::schema::Dialect {
        self.provider.dialect(self.strict)
    }

    /// The tools of `list` the model sees now, in `list`'s order. A tool found earlier
    /// that is gone from the list (its server dropped it) is not among them.
    pub fn shown(&self, list: &Registry) -> Registry {
        let mut shown = Registry::new();
        for t in list.iter().filter(|t| self.is_shown(t) && self.carried(t)) {
            let _ = shown.insert(t.clone());
        }
        shown
    }

    /// The system prompt's text for the tools of `list` the model sees now
    /// (`toolbind_codegen::prompt::system_prompt` of the shown tools), and a line on how many
    /// more `search_tools` can find.
    pub fn system_prompt(&self, list: &Registry) -> String {
        let shown: Vec<ToolSpec> = self.shown(list).iter().map(|t| t.spec().clone()).collect();
        let mut text = toolbind_codegen::prompt::system_prompt(&shown);
        text.push_str(&format!(
            "\n{} more tools are not listed: find them with {SEARCH_TOOL} (what the tool \
             should do, in a few words); the tools it finds can be called from your next \
             turn.\n",
            self.hidden(list)
        ));
        text
    }

    /// How many tools of `list` a search can still find; with Anthropic's deferred
    /// listing, how many are deferred (the same number each turn, so the array is too).
    fn hidden(&self, list: &Registry) -> usize {
        let deferring = self.deferring();
        list.iter()
            .filter(|t| {
                self.carried(t)
                    && if deferring {
                        !is_core(&self.core, t)
                    } else {
                        !self.is_shown(t)
                    }
            })
            .count()
    }

    /// The request's `tools` for the tools of `list` (usually
    /// [`Runtime::tool_list`]): the shown tools' definitions and `search_tools` (see the
    /// type's docs for Anthropic's deferred listing).
    pub fn definitions(&self, list: &Registry) -> Value {
        let dialect = self.dialect();
        let search = schema::tool_definition(&search_spec(self.hidden(list)), dialect);
        let mut defs: Vec<Value> = Vec::new();
        for t in list.iter().filter(|t| self.carried(t)) {
            if self.deferring() {
                // Every tool, the same array each turn: a found tool is loaded by its
                // `tool_reference`, not by a change here.
                let mut d = schema::tool_definition(t.spec(), dialect);
                if !is_core(&self.core, t) {
                    d["defer_loading"] = true.into();
                }
                defs.push(d);
            } else if self.is_shown(t) {
                defs.push(schema::tool_definition(t.spec(), dialect));
            }
        }
        defs.push(search);
        match self.provider {
            Provider::Gemini => json!([{ "functionDeclarations": defs }]),
            _ => Value::Array(defs),
        }
    }

    fn deferring(&self) -> bool {
        self.defer_loading && self.provider == Provider::Anthropic
    }

    /// Runs a model turn's calls: `search_tools` answered here (its tools then shown),
    /// a call to a tool not shown yet, or to a name no tool has, answered with an error
    /// that says what to do, the others run by [`Runtime::call_batch`]. Results in call
    /// order.
    pub async fn call_batch(
        &mut self,
        runtime: &Runtime,
        calls: Vec<ToolCallRequest>,
        opts: BatchOptions,
    ) -> Batch {
        let list = runtime.tool_list();
        let mut answered: Vec<Option<Answered>> = Vec::with_capacity(calls.len());
        let mut run = Vec::new();
        let mut searched = Vec::new();
        for call in calls {
            let refusal = match list.get(&call.name) {
                _ if call.name == SEARCH_TOOL => {
                    let (result, names) = self.search(&runtime.tool_index(), &list, &call);
                    searched.extend(names);
                    Some(result)
                }
                Some(t) if !self.is_shown(t) || !self.carried(t) => {
                    Some(ToolResult::error(format!(
                        "tool `{}` is not loaded yet: find it with {SEARCH_TOOL} first; the \
                         tools a search finds can be called from the next turn",
                        call.name
                    )))
                }
                Some(_) => None,
                None => Some(self.unknown(&list, &call.name)),
            };
            match refusal {
                Some(result) => answered.push(Some(Answered::new(call, result))),
                None => {
                    run.push(call);
                    answered.push(None);
                }
            }
        }
        let mut ran = runtime.call_batch(run, opts).await.results.into_iter();
        for name in searched {
            if !self.found.contains(&name) {
                self.found.push(name);
            }
        }
        Batch::new(
            answered
                .into_iter()
                .map(|a| a.or_else(|| ran.next()).expect("one result per call run"))
                .collect(),
        )
    }

    /// A name no tool has: the nearest shown tool's name, and where to look; never the
    /// whole catalog.
    fn unknown(&self, list: &Registry, name: &str) -> ToolResult {
        let shown = self.shown(list);
        let names: Vec<&str> = shown.names().chain([SEARCH_TOOL]).collect();
        let near = toolbind_codegen::suggest(name, &names)
            .map(|n| format!(" (did you mean `{n}`?)"))
            .unwrap_or_default();
        ToolResult::stopped(
            crate::StopReason::UnknownTool,
            format!(
                "unknown tool `{}`{near}; {SEARCH_TOOL} finds tools by what they do",
                crate::untrusted::echo(name)
            ),
        )
    }

    /// A batch's results ([`Provider::results`]); with Anthropic's deferred listing, each
    /// search's result is the `tool_reference` blocks of the tools it found.
    pub fn results(&self, batch: &Batch) -> Vec<Value> {
        let mut out = self.provider.results(batch);
        if !self.deferring() {
            return out;
        }
        let Some(blocks) = out
            .first_mut()
            .and_then(|m| m.get_mut("content"))
            .and_then(Value::as_array_mut)
        else {
            return out;
        };
        // Anthropic's results: one `tool_result` block per call, in call order.
        for (block, a) in blocks.iter_mut().zip(&batch.results) {
            let names = found_names(a);
            if a.call.name == SEARCH_TOOL && !names.is_empty() {
                block["content"] = names
                    .iter()
                    .map(|n| json!({"type": "tool_reference", "tool_name": n}))
                    .collect();
            }
        }
        out
    }

    /// Answers one `search_tools` call from `index` (of `list`): the result and the names
    /// it found (the provider can carry each).
    fn search(
        &self,
        index: &ToolIndex,
        list: &Registry,
        call: &ToolCallRequest,
    ) -> (ToolResult, Vec<String>) {
        let (query, limit) = match search_args(call, self.limit) {
            Ok(a) => a,
            Err(why) => return (ToolResult::error(why), Vec::new()),
        };
        // Over-fetched, then the tools the provider cannot carry dropped.
        let hits = match index.search(&query, limit.saturating_mul(4).max(20)) {
            Ok(h) => h,
            Err(e) => return (ToolResult::error(e.to_string()), Vec::new()),
        };
        let found: Vec<&ToolInfo> = hits
            .iter()
            .filter_map(|h| list.get(&h.name))
            .filter(|t| self.carried(t))
            .take(limit)
            .collect();
        let names: Vec<String> = found.iter().map(|t| t.name().to_owned()).collect();
        let details = json!({"query": query, "tools": names});
        if found.is_empty() {
            let text = format!(
                "No tool matches {query:?}. Try other words: what the tool should do, and on what."
            );
            return (ToolResult::text(text).with_details(details), names);
        }
        let mut text = format!(
            "Found {} tool{} for {query:?}; call {} from your next turn:\n",
            found.len(),
            if found.len() == 1 { "" } else { "s" },
            if found.len() == 1 { "it" } else { "them" },
        );
        for t in &found {
            text.push_str(&format!(
                "- {}: {}\n",
                t.name(),
                first_line(t.description())
            ));
        }
        (ToolResult::text(text).with_details(details), names)
    }
}

/// A description's first line (its parameters and the rest come with its definition).
fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// The names a search's result lists (its `details.tools`); none for other calls.
fn found_names(a: &Answered) -> Vec<String> {
    if a.call.name != SEARCH_TOOL || a.result.is_error {
        return Vec::new();
    }
    a.result
        .details
        .as_ref()
        .and_then(|d| d.get("tools"))
        .and_then(Value::as_array)
        .map(|v| {
            v.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// A core tool: named by the agent, or `discovery: always` in its TOOL.md.
fn is_core(core: &[String], tool: &ToolInfo) -> bool {
    tool.spec().discovery == DiscoveryMode::Always || core.iter().any(|c| c == tool.name())
}

/// `search_tools`' arguments: the query, and the limit (the model's, else `default`).
fn search_args(call: &ToolCallRequest, default: usize) -> Result<(String, usize), String> {
    let args = call.args.as_ref().map_err(Clone::clone)?;
    let query = args.get("query").and_then(Value::as_str).ok_or_else(|| {
        format!("{SEARCH_TOOL} needs `query`: a string that says what the tool should do")
    })?;
    let limit = match args.get("limit") {
        None | Some(Value::Null) => default,
        Some(v) => match v.as_u64() {
            Some(n) if (1..=MAX_LIMIT).contains(&n) => n as usize,
            _ => {
                return Err(format!(
                    "`limit` must be a whole number from 1 to {MAX_LIMIT}"
                ));
            }
        },
    };
    Ok((query.to_owned(), limit))
}

/// `search_tools` as a tool the dialects can describe; its description counts the tools
/// it can find.
fn search_spec(hidden: usize) -> ToolSpec {
    let md = format!(
        "---\nname: {SEARCH_TOOL}\ndescription: \"Search {hidden} more tools, not listed here, \
         by what they do. The tools found can be called from your next turn.\"\n\
         inputs:\n  query:\n    type: string\n    description: \"What the tool should do, in \
         a few words (e.g. create a GitHub issue)\"\n  limit:\n    type: integer\n    \
         optional: true\n    minimum: 1\n    maximum: {MAX_LIMIT}\n    description: \"How many \
         tools to return at most\"\n---\n"
    );
    let opts = toolbind_codegen::Options::default().require_entry(false);
    let dir = std::path::Path::new(SEARCH_TOOL);
    toolbind_codegen::parse_tool_md(&dir.join("TOOL.md"), dir, md.as_bytes(), &opts)
        .expect("search_tools' own TOOL.md is valid")
}
