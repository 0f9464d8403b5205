//! The agent's say in a call: approval before a tool runs, and the questions a tool asks
//! while it runs.
//!
//! A tool whose TOOL.md says `approval: always` does not run when the model calls it: the
//! runtime asks its [`Host`] first, with the tool (its annotations included) and the
//! validated arguments. The host approves, denies with a reason (the model gets an error
//! result and the agent [`StopReason::Denied`](crate::StopReason::Denied)), or approves
//! edited arguments, which are validated again. A host's policy may ask for other calls
//! too ([`Host::needs_approval`]: every tool annotated `destructive`, say).
//!
//! What a wait may cost is bounded: the time spent waiting for an answer does not count
//! against the call's timeout (the tool has not started), a wait ends after
//! [`RuntimeConfig::ask_timeout`](crate::runtime::RuntimeConfig::ask_timeout) (5 minutes by default)
//! as a denial, a cancelled call stops waiting at once, and a policy that panics denies
//! the call with the panic's message. A runtime without a host denies every call that
//! needs approval, saying how to allow it: never a hang, never a call run unasked.
//!
//! A node or python tool may also ask during its call, through `execute`'s optional fifth
//! argument `ctx` (four-argument tools are unaffected): `ctx.confirm(message)`,
//! `ctx.elicit(message, schema)` (a flat object of primitive fields, as MCP elicitation
//! allows), `ctx.sample({messages, systemPrompt, maxTokens, ...})` (the host's model),
//! `ctx.roots()` and `ctx.notify(text, level)`. Each reaches the host's method of that
//! name ([`Host::confirm`], [`Host::elicit`], [`Host::sample`], [`Host::roots`],
//! [`Host::notify`]); a host that does not implement one refuses it, and the tool's promise
//! rejects with a clear message. The same bounds hold: the wait does not count against the
//! call's timeout, each question ends after `ask_timeout`, a cancelled call rejects what it
//! still waits for, and a call has at most [`MAX_QUESTIONS`] questions open at once. bash
//! tools have no `ctx`.
//!
//! ```no_run
//! use toolbind::host::{Decision, policy};
//!
//! # fn demo(registry: toolbind::Registry) {
//! let runtime = toolbind::Runtime::builder()
//!     .registry(registry)
//!     .host(policy(|request| async move {
//!         if request.tool.name() == "delete_file" && request.args["path"] == "/" {
//!             Decision::deny("not the root")
//!         } else {
//!             Decision::Approve
//!         }
//!     }))
//!     .build();
//! # drop(runtime); }
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::tool::ToolInfo;

/// A future a [`Host`] answers with.
pub type Answer<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// One call waiting for approval.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ApprovalRequest {
    /// The tool: its name, its TOOL.md (`spec().approval`, `spec().annotations`: MCP's
    /// `destructive`, `read_only`, ...).
    pub tool: ToolInfo,
    /// The call's id (the model's tool-call id when it gave one).
    pub tool_call_id: String,
    /// The arguments, validated against the tool's inputs (defaults filled in).
    pub args: Value,
}

impl ApprovalRequest {
    /// The arguments as a person should see them: the values of the tool's sensitive
    /// inputs replaced by `"[sensitive]"`.
    pub fn shown_args(&self) -> Value {
        let mut shown = self.args.clone();
        if let Value::Object(m) = &mut shown {
            for input in self.tool.spec().inputs.iter().filter(|i| i.sensitive) {
                if let Some(v) = m.get_mut(&input.name) {
                    *v = Value::String("[sensitive]".into());
                }
            }
        }
        shown
    }
}

/// A host's answer to an [`ApprovalRequest`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Decision {
    /// Run the call as it is.
    Approve,
    /// Do not run it: the model gets an error result saying so, with `reason`.
    Deny {
        /// Why, for the model and the log.
        reason: String,
    },
    /// Run it with these arguments instead: the approver edited them (validated again; invalid ones are a
    /// [`StopReason::BadArguments`](crate::StopReason::BadArguments) result saying the
    /// approver's edit was invalid).
    ApproveWith {
        /// The arguments to run with: an object.
        args: Value,
    },
}

impl Decision {
    /// [`Decision::Deny`] with `reason`.
    pub fn deny(reason: impl Into<String>) -> Decision {
        Decision::Deny {
            reason: reason.into(),
        }
    }

    /// [`Decision::ApproveWith`] with `args`.
    pub fn approve_with(args: Value) -> Decision {
        Decision::ApproveWith { args }
    }
}

/// The agent's side of calls that need its say. Set on a runtime with
/// [`RuntimeBuilder::host`](crate::runtime::RuntimeBuilder::host); [`policy`] makes one from a
/// closure.
pub trait Host: Send + Sync + 'static {
    /// Whether this call needs approval. By default: when the tool's TOOL.md says
    /// `approval: always`. A policy may ask for more (never for less: a tool that says
    /// `always` is asked for whatever this returns).
    fn needs_approval(&self, tool: &ToolInfo) -> bool {
        let _ = tool;
        false
    }

    /// Decides a call that needs approval. It may take as long as a person does, up to
    /// [`RuntimeConfig::ask_timeout`](crate::runtime::RuntimeConfig::ask_timeout).
    fn approve(&self, request: ApprovalRequest) -> Answer<Decision>;

    /// `ctx.confirm(message)`: `Ok(true)` to go on. By default refused.
    fn confirm(&self, request: ConfirmRequest) -> Answer<Result<bool, Refusal>> {
        let _ = request;
        Box::pin(std::future::ready(Err(not_answered("confirm"))))
    }

    /// `ctx.elicit(message, schema)`: the user's answer to a form. By default refused.
    fn elicit(&self, request: ElicitRequest) -> Answer<Result<Elicited, Refusal>> {
        let _ = request;
        Box::pin(std::future::ready(Err(not_answered("elicit"))))
    }

    /// `ctx.sample({...})`: the host model's answer (MCP's `CreateMessageResult` shape:
    /// `role`, `content`, `model`, `stopReason`). By default refused.
    fn sample(&self, request: SampleRequest) -> Answer<Result<Value, Refusal>> {
        let _ = request;
        Box::pin(std::future::ready(Err(not_answered("sample"))))
    }

    /// `ctx.roots()`: the workspace roots. By default refused.
    fn roots(&self, asker: Asker) -> Answer<Result<Vec<Root>, Refusal>> {
        let _ = asker;
        Box::pin(std::future::ready(Err(not_answered("roots"))))
    }

    /// `ctx.notify(text, level)`: a log message (the runtime also emits it as a DEBUG `tracing`
    /// event, target `toolbind::tool`). By default dropped.
    fn notify(&self, notice: Notice) {
        let _ = notice;
    }

    /// The tool has asked `asked` questions in this call so far and now waits for an
    /// answer (node: its event loop went idle after asking; python: it awaits or blocks
    /// on one). A host that gathers a call's questions may send them now: `toolbind
    /// serve` on MCP 2026-07-28 sends them in one `InputRequiredResult`. A hint, not a
    /// promise: the tool may still be working. By default ignored.
    fn waiting(&self, asker: Asker, asked: u64) {
        let _ = (asker, asked);
    }
}

/// A [`Host`] whose approvals are `decide`'s answers (and which asks only for the tools
/// whose TOOL.md says `approval: always`).
pub fn policy<F, Fut>(decide: F) -> Policy<F>
where
    F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Decision> + Send + 'static,
{
    Policy(decide)
}

/// A [`Host`] made by [`policy`].
#[derive(Clone)]
pub struct Policy<F>(F);

impl<F> std::fmt::Debug for Policy<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Policy")
    }
}

impl<F, Fut> Host for Policy<F>
where
    F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Decision> + Send + 'static,
{
    fn approve(&self, request: ApprovalRequest) -> Answer<Decision> {
        Box::pin((self.0)(request))
    }
}

/// The host a runtime holds.
pub(crate) type SharedHost = Arc<dyn Host>;

/// The most questions one call may have open at once; one more is refused in the tool.
pub const MAX_QUESTIONS: usize = 8;

/// Who asks: the tool and the call, in every question.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Asker {
    /// The tool asking.
    pub tool: ToolInfo,
    /// Its call's id.
    pub tool_call_id: String,
    /// The name the tool gave the question (`ctx.elicit(message, schema, {key})` in node,
    /// `key=` in python), when it gave one: 1 to 64 letters, digits, `_`, `-` or `.`. A
    /// host that lists questions by name (`toolbind serve`'s MCP `inputRequests`) uses
    /// it; others may ignore it.
    pub key: Option<String>,
}

/// The longest question key.
pub const MAX_KEY_LEN: usize = 64;

/// Reads the key a tool gave question `kind` (`None` when it gave none): 1 to
/// [`MAX_KEY_LEN`] letters, digits, `_`, `-` or `.`, else the refusal the tool reads.
pub(crate) fn question_key(kind: &str, key: Option<Value>) -> Result<Option<String>, Refusal> {
    let key = match key {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(k)) => k,
        Some(other) => {
            return Err(format!(
                "ctx.{kind}: key must be a string, not {}",
                toolbind_codegen::mcp::json_kind(&other)
            ));
        }
    };
    let ok = !key.is_empty()
        && key.len() <= MAX_KEY_LEN
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if ok {
        Ok(Some(key))
    } else {
        Err(format!(
            "ctx.{kind}: key must be 1 to {MAX_KEY_LEN} letters, digits, `_`, `-` or `.` (got {} characters)",
            key.chars().count()
        ))
    }
}

/// `ctx.confirm(message)`: a yes or no.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ConfirmRequest {
    /// Who asks.
    pub asker: Asker,
    /// What to confirm.
    pub message: String,
}

/// `ctx.elicit(message, schema)`: a few facts from the user, as a form.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ElicitRequest {
    /// Who asks.
    pub asker: Asker,
    /// What the form is for.
    pub message: String,
    /// The form: a JSON Schema object whose properties are strings, numbers, integers,
    /// booleans or string enums (MCP elicitation's `requestedSchema`). The runtime has
    /// checked it is flat, and checks the answer's content against it.
    pub schema: Value,
}

/// How the user answered a form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ElicitAction {
    /// Filled in and submitted: the answer has content.
    Accept,
    /// Said no.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

impl ElicitAction {
    /// `accept`, `decline`, `cancel`: MCP's words, and what the tool reads.
    pub fn as_str(self) -> &'static str {
        match self {
            ElicitAction::Accept => "accept",
            ElicitAction::Decline => "decline",
            ElicitAction::Cancel => "cancel",
        }
    }
}

/// The answer to an [`ElicitRequest`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Elicited {
    /// What the user did.
    pub action: ElicitAction,
    /// The form's values, for [`ElicitAction::Accept`].
    pub content: Option<serde_json::Map<String, Value>>,
}

impl Elicited {
    /// Accepted with `content`.
    pub fn accept(content: serde_json::Map<String, Value>) -> Elicited {
        Elicited {
            action: ElicitAction::Accept,
            content: Some(content),
        }
    }

    /// Declined or cancelled: no content.
    pub fn without_content(action: ElicitAction) -> Elicited {
        Elicited {
            action,
            content: None,
        }
    }
}

/// `ctx.sample({...})`: a completion from the host's model.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SampleRequest {
    /// Who asks.
    pub asker: Asker,
    /// What the tool passed: MCP `sampling/createMessage` params (`messages`,
    /// `systemPrompt`, `maxTokens`, `temperature`, `stopSequences`, `modelPreferences`).
    pub params: Value,
}

/// One of the client's workspace roots.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// Its name, when it has one.
    pub name: Option<String>,
}

impl Root {
    /// A root at `uri`.
    pub fn new(uri: impl Into<String>, name: Option<String>) -> Root {
        Root {
            uri: uri.into(),
            name,
        }
    }
}

/// `ctx.notify(text, level)`: a log message from the tool.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Notice {
    /// Who says it.
    pub asker: Asker,
    /// `debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert` or `emergency`.
    pub level: String,
    /// What it says (redacted of the call's sensitive values).
    pub text: String,
}

/// Why a question got no answer: said to the tool (its promise rejects with it).
pub type Refusal = String;

/// The refusal of a question a host does not answer.
pub(crate) fn not_answered(what: &str) -> Refusal {
    format!(
        "this agent does not answer `ctx.{what}` (toolbind::host::Host::{what} is not implemented by its host)"
    )
}

/// Answers one question a tool asked (`kind` and its `params` as the harness sent them),
/// from `host`, within `timeout`: the value the tool's promise resolves to, or why it
/// rejects.
pub(crate) async fn answer(
    host: Option<SharedHost>,
    asker: Asker,
    kind: &str,
    params: Value,
    timeout: std::time::Duration,
) -> Result<Value, Refusal> {
    let Some(host) = host else {
        return Err(format!(
            "`ctx.{kind}` has no one to ask: this agent set no host (toolbind::RuntimeBuilder::host)"
        ));
    };
    let text = |field: &str| params.get(field).and_then(Value::as_str).map(str::to_owned);
    let asking: Answer<Result<Value, Refusal>> = match kind {
        "confirm" => {
            let Some(message) = text("message") else {
                return Err("ctx.confirm(message) needs a message, a string".into());
            };
            let f = host.confirm(ConfirmRequest { asker, message });
            Box::pin(async move { f.await.map(Value::Bool) })
        }
        "elicit" => {
            let Some(message) = text("message") else {
                return Err("ctx.elicit(message, schema) needs a message, a string".into());
            };
            let schema = params.get("schema").cloned().unwrap_or(Value::Null);
            flat_schema(&schema)?;
            let f = host.elicit(ElicitRequest {
                asker,
                message,
                schema: schema.clone(),
            });
            Box::pin(async move {
                let answer = f.await?;
                let mut out = serde_json::Map::new();
                out.insert(
                    "action".into(),
                    Value::String(answer.action.as_str().into()),
                );
                if answer.action == ElicitAction::Accept {
                    let content = answer.content.unwrap_or_default();
                    fits(&schema, &content)?;
                    out.insert("content".into(), Value::Object(content));
                }
                Ok(Value::Object(out))
            })
        }
        "sample" => {
            if !params.get("messages").is_some_and(Value::is_array) {
                return Err("ctx.sample({messages, ...}) needs `messages`, an array".into());
            }
            Box::pin(host.sample(SampleRequest { asker, params }))
        }
        "roots" => {
            let f = host.roots(asker);
            Box::pin(async move {
                let roots = f.await?;
                Ok(Value::Array(
                    roots
                        .into_iter()
                        .map(|r| {
                            let mut o = serde_json::Map::new();
                            o.insert("uri".into(), Value::String(r.uri));
                            if let Some(n) = r.name {
                                o.insert("name".into(), Value::String(n));
                            }
                            Value::Object(o)
                        })
                        .collect(),
                ))
            })
        }
        other => {
            return Err(format!(
                "unknown question `{}`: ctx has confirm, elicit, sample, roots and notify",
                other.chars().take(64).collect::<String>()
            ));
        }
    };
    // Its own task: a host that panics refuses this question and nothing else. Aborted
    // when this future is dropped (the call was cancelled, or ended): the host's request
    // (a prompt, an MCP request) does not outlive the question.
    let mut task = AbortOnDrop(tokio::spawn(asking));
    let answer = tokio::select! {
        r = &mut task.0 => r.unwrap_or_else(|e| Err(if e.is_panic() {
            format!("the agent's host panicked answering `ctx.{kind}`")
        } else {
            format!("`ctx.{kind}` was not answered: {e}")
        })),
        () = tokio::time::sleep(timeout) => {
            Err(format!(
                "`ctx.{kind}` got no answer within {} s (RuntimeConfig::ask_timeout)",
                timeout.as_secs_f64()
            ))
        }
    };
    // A refusal goes back to the tool as a line: bounded, whatever the host said.
    answer.map_err(|why| shorten(&why, MAX_REFUSAL))
}

/// The longest refusal sent back to a tool, in characters.
const MAX_REFUSAL: usize = 1000;

/// `text`, cut to `max` characters (with `…`).
pub(crate) fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

/// A task aborted when dropped.
pub(crate) struct AbortOnDrop<T>(pub(crate) tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The most tokens a sample may ask a model for.
pub const MAX_SAMPLE_TOKENS: u64 = 4096;

/// What of a sample's params goes on to a model: the messages, system prompt, model
/// preferences, temperature and stop sequences, and `maxTokens` (at most
/// [`MAX_SAMPLE_TOKENS`]); never `includeContext` (a conversation would come back to
/// whoever asked) nor tools to call.
pub fn sample_params(params: Value) -> Value {
    let mut out = serde_json::Map::new();
    for key in [
        "messages",
        "systemPrompt",
        "modelPreferences",
        "temperature",
        "stopSequences",
    ] {
        if let Some(v) = params.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    let tokens = params
        .get("maxTokens")
        .and_then(Value::as_u64)
        .unwrap_or(MAX_SAMPLE_TOKENS)
        .min(MAX_SAMPLE_TOKENS);
    out.insert("maxTokens".into(), Value::from(tokens));
    Value::Object(out)
}

/// The log levels `ctx.notify` takes: MCP's (RFC 5424's, lower case), least severe first.
pub const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// Checks an elicitation schema is what MCP allows: an object whose properties are each a
/// string (optionally with `enum`, `enumNames` or titled `oneOf` choices), number,
/// integer, boolean, or an array of string choices (`items` with `enum` or titled
/// `anyOf`): no nesting.
fn flat_schema(schema: &Value) -> Result<(), Refusal> {
    let refuse = |why: String| {
        Err(format!(
            "ctx.elicit: {why}; MCP elicitation takes a flat object of string, number, integer, boolean or choice fields"
        ))
    };
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return refuse("the schema must be `{type: \"object\", properties: {...}}`".into());
    }
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return refuse("the schema has no `properties` object".into());
    };
    for (name, p) in props {
        let name = shorten(name, 64);
        match p.get("type").and_then(Value::as_str) {
            Some("string") => {
                if let Some(e) = p.get("enum")
                    && !e.as_array().is_some_and(|v| v.iter().all(Value::is_string))
                {
                    return refuse(format!("`{name}`'s enum must be a list of strings"));
                }
                if let Some(o) = p.get("oneOf")
                    && choices(o).is_none()
                {
                    return refuse(format!(
                        "`{name}`'s oneOf must be a list of {{const: <string>, title}}"
                    ));
                }
            }
            Some("number" | "integer" | "boolean") => {}
            Some("array") => {
                let items = &p["items"];
                let ok = match (items.get("enum"), items.get("anyOf")) {
                    (Some(e), None) => e.as_array().is_some_and(|v| v.iter().all(Value::is_string)),
                    (None, Some(a)) => choices(a).is_some(),
                    _ => false,
                };
                if !ok {
                    return refuse(format!(
                        "`{name}` is an array: only a multi-select of string choices (`items` with `enum` or `anyOf` of consts)"
                    ));
                }
            }
            Some(other) => {
                return refuse(format!("`{name}` is of type `{}`", shorten(other, 64)));
            }
            None => return refuse(format!("`{name}` has no `type`")),
        }
    }
    Ok(())
}

/// The `const` strings of a titled-choices list (`[{const, title}, ...]`).
fn choices(list: &Value) -> Option<Vec<Value>> {
    list.as_array()?
        .iter()
        .map(|c| c.get("const").filter(|v| v.is_string()).cloned())
        .collect()
}

/// The values a field allows, when it is a choice: `enum`, or `oneOf` consts.
fn allowed(p: &Value) -> Option<Vec<Value>> {
    p.get("enum")
        .and_then(Value::as_array)
        .cloned()
        .or_else(|| p.get("oneOf").and_then(choices))
}

/// Checks an accepted answer's content against its (flat) schema: required fields there,
/// no field it does not name, each of its type and within its choices and bounds.
fn fits(schema: &Value, content: &serde_json::Map<String, Value>) -> Result<(), Refusal> {
    let bad = |why: String| Err(format!("the answer does not fit the form: {why}"));
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for req in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !content.contains_key(req) {
            return bad(format!("`{req}` is required"));
        }
    }
    for (name, v) in content {
        let Some(p) = props.get(name) else {
            return bad(format!(
                "`{}` is not a field of the form",
                crate::untrusted::echo(name)
            ));
        };
        field_fits(name, p, v).or_else(bad)?;
    }
    Ok(())
}

/// Whether `value` fits the elicitation form's field `name` of schema `spec`: its type,
/// its choices, its bounds (`minimum`, `maximum`, `minLength`, `maxLength`, `minItems`,
/// `maxItems`) and its string `format` (`email`, `uri`, `date`, `date-time`); else why
/// not, naming the field. The runtime checks a whole answer so before the tool sees it; a
/// host that fills a form field by field (`toolbind call` on the terminal) can check each
/// field as it is given, and ask again.
pub fn field_fits(name: &str, spec: &Value, value: &Value) -> Result<(), String> {
    let (p, v) = (spec, value);
    let ok = match p.get("type").and_then(Value::as_str) {
        Some("string") => v.is_string(),
        Some("number") => v.is_number(),
        Some("integer") => v.as_f64().is_some_and(|f| f.fract() == 0.0),
        Some("boolean") => v.is_boolean(),
        Some("array") => v.is_array(),
        _ => false,
    };
    if !ok {
        return Err(format!(
            "`{name}` must be a {}, got {}",
            p["type"],
            crate::untrusted::echo_json(v)
        ));
    }
    if let Some(allowed) = allowed(p)
        && !allowed.contains(v)
    {
        return Err(format!("`{name}` must be one of {}", Value::Array(allowed)));
    }
    if let (Some(items), Some(allowed)) = (
        v.as_array(),
        allowed(&p["items"]).or_else(|| p["items"].get("anyOf").and_then(choices)),
    ) && let Some(wrong) = items.iter().find(|i| !allowed.contains(i))
    {
        return Err(format!(
            "`{name}` holds {}, not one of {}",
            crate::untrusted::echo_json(wrong),
            Value::Array(allowed)
        ));
    }
    let number = |key: &str| p.get(key).and_then(Value::as_f64);
    let count = |key: &str| p.get(key).and_then(Value::as_u64);
    if let Some(x) = v.as_f64() {
        if number("minimum").is_some_and(|m| x < m) {
            return Err(format!("`{name}` is below its minimum {}", p["minimum"]));
        }
        if number("maximum").is_some_and(|m| x > m) {
            return Err(format!("`{name}` is above its maximum {}", p["maximum"]));
        }
    }
    if let Some(s) = v.as_str() {
        let n = s.chars().count() as u64;
        if count("minLength").is_some_and(|m| n < m) {
            return Err(format!("`{name}` is shorter than {}", p["minLength"]));
        }
        if count("maxLength").is_some_and(|m| n > m) {
            return Err(format!("`{name}` is longer than {}", p["maxLength"]));
        }
        if let Some(f) = p.get("format").and_then(Value::as_str)
            && !has_format(f, s)
        {
            return Err(format!("`{name}` is not a valid {f}"));
        }
    }
    if let Some(items) = v.as_array() {
        let n = items.len() as u64;
        if count("minItems").is_some_and(|m| n < m) {
            return Err(format!(
                "`{name}` has {n} choices, fewer than its minItems {}",
                p["minItems"]
            ));
        }
        if count("maxItems").is_some_and(|m| n > m) {
            return Err(format!(
                "`{name}` has {n} choices, more than its maxItems {}",
                p["maxItems"]
            ));
        }
    }
    Ok(())
}

/// Whether `s` is of one of the string formats MCP elicitation names (`email`, `uri`,
/// `date`, `date-time`, as JSON Schema defines them); another format is not checked (a
/// format JSON Schema does not know is an annotation).
fn has_format(format: &str, s: &str) -> bool {
    match format {
        "email" => is_email(s),
        "uri" => is_uri(s),
        "date" => is_date(s),
        "date-time" => is_date_time(s),
        _ => true,
    }
}

/// RFC 5321's address: a dot-atom or a quoted string, `@`, and a domain of dot-separated
/// labels (letters, digits, inner hyphens) or an address literal (`[...]`); ASCII only
/// (JSON Schema's `idn-email` is another format).
fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.rsplit_once('@') else {
        return false;
    };
    let atext = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c);
    let local_ok = if local.len() >= 2 && local.starts_with('"') && local.ends_with('"') {
        // A quoted string: printable ASCII and spaces, `"` and `\` only escaped.
        let mut chars = local[1..local.len() - 1].chars();
        let mut ok = true;
        while let Some(c) = chars.next() {
            ok &= match c {
                '\\' => chars
                    .next()
                    .is_some_and(|e| e == ' ' || e.is_ascii_graphic()),
                '"' => false,
                c => c == ' ' || c.is_ascii_graphic(),
            };
        }
        ok
    } else {
        local
            .split('.')
            .all(|atom| !atom.is_empty() && atom.chars().all(atext))
    };
    let domain_ok = match domain.strip_prefix('[').and_then(|d| d.strip_suffix(']')) {
        Some(literal) => {
            !literal.is_empty()
                && literal
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | ':'))
        }
        None => {
            domain.len() <= 253
                && domain.split('.').all(|label| {
                    (1..=63).contains(&label.len())
                        && !label.starts_with('-')
                        && !label.ends_with('-')
                        && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                })
        }
    };
    local_ok && domain_ok
}

/// RFC 3986's URI: a scheme (a letter, then letters, digits, `+`, `-`, `.`), a colon, and
/// the rest of unreserved, reserved and percent-encoded characters only.
fn is_uri(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = |j: usize| b.get(j).is_some_and(u8::is_ascii_hexdigit);
                if !(hex(i + 1) && hex(i + 2)) {
                    return false;
                }
                i += 3;
            }
            c if c.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=".contains(&c) => i += 1,
            _ => return false,
        }
    }
    has_uri_scheme(s)
}

/// Whether `s` starts with a scheme and its colon, as RFC 3986 writes it: a letter, then
/// letters, digits, `+`, `-`, `.`.
pub(crate) fn has_uri_scheme(s: &str) -> bool {
    s.split_once(':').is_some_and(|(scheme, _)| {
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

/// RFC 3339's date-time: full-date `T` hh:mm:ss[.fraction] and `Z` or ±hh:mm; a leap
/// second (`:60`) only at 23:59 UTC.
fn is_date_time(s: &str) -> bool {
    let Some((date, time)) = s.split_once(['T', 't']) else {
        return false;
    };
    let Some(i) = time.find(['Z', 'z', '+', '-']) else {
        return false;
    };
    let (clock, zone) = time.split_at(i);
    let (hms, fraction) = match clock.split_once('.') {
        Some((hms, f)) => (hms, Some(f)),
        None => (clock, None),
    };
    // The offset east of UTC, in minutes.
    let offset = match zone {
        "Z" | "z" => Some(0),
        _ if zone.len() == 6 && zone.starts_with(['+', '-']) => {
            zone[1..].split_once(':').and_then(|(h, m)| {
                let h = two_digits(h).filter(|h| *h < 24)?;
                let m = two_digits(m).filter(|m| *m < 60)?;
                let minutes = i64::from(h * 60 + m);
                Some(if zone.starts_with('-') {
                    -minutes
                } else {
                    minutes
                })
            })
        }
        _ => None,
    };
    let [h, m, sec] = hms.split(':').collect::<Vec<_>>()[..] else {
        return false;
    };
    let (Some(h), Some(m), Some(sec), Some(offset)) = (
        two_digits(h).filter(|h| *h < 24),
        two_digits(m).filter(|m| *m < 60),
        two_digits(sec).filter(|s| *s <= 60),
        offset,
    ) else {
        return false;
    };
    let utc_minute = (i64::from(h * 60 + m) - offset).rem_euclid(24 * 60);
    is_date(date)
        && fraction.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
        && (sec < 60 || utc_minute == 23 * 60 + 59)
}

/// `YYYY-MM-DD`, a day that exists (RFC 3339's full-date).
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(year), Some(month), Some(day)) = (
        s[..4]
            .parse::<u32>()
            .ok()
            .filter(|_| b[..4].iter().all(u8::is_ascii_digit)),
        two_digits(&s[5..7]),
        two_digits(&s[8..]),
    ) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// Two ASCII digits, as a number.
fn two_digits(s: &str) -> Option<u32> {
    (s.len() == 2 && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// A tool's notice as a DEBUG `tracing` event (target `toolbind::tool`): the host has it
/// already (a CLI would print it twice); a subscriber that wants every notice turns the
/// target on.
fn trace_notice(notice: &Notice) {
    tracing::debug!(
        target: "toolbind::tool",
        tool = notice.asker.tool.name(),
        level = notice.level.as_str(),
        "{}",
        notice.text
    );
}

/// `host`, with what the tool says to it (a question's message, a notice's text)
/// redacted of the call's sensitive values: they reach a person's screen or a log.
pub(crate) fn redacting(host: SharedHost, redactor: &crate::secret::Redactor) -> SharedHost {
    Arc::new(Redacting {
        inner: host,
        redactor: redactor.clone(),
    })
}

struct Redacting {
    inner: SharedHost,
    redactor: crate::secret::Redactor,
}

impl Redacting {
    /// Every string in `value`, redacted (a form's titles and choices, a sample's
    /// messages and system prompt).
    fn redact_strings(&self, value: &mut Value) {
        match value {
            Value::String(s) => *s = self.redactor.text(s),
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_strings(v)),
            Value::Object(map) => map.values_mut().for_each(|v| self.redact_strings(v)),
            _ => {}
        }
    }
}

impl Host for Redacting {
    fn needs_approval(&self, tool: &ToolInfo) -> bool {
        self.inner.needs_approval(tool)
    }
    fn approve(&self, request: ApprovalRequest) -> Answer<Decision> {
        self.inner.approve(request)
    }
    fn confirm(&self, mut request: ConfirmRequest) -> Answer<Result<bool, Refusal>> {
        request.message = self.redactor.text(&request.message);
        self.inner.confirm(request)
    }
    fn elicit(&self, mut request: ElicitRequest) -> Answer<Result<Elicited, Refusal>> {
        request.message = self.redactor.text(&request.message);
        self.redact_strings(&mut request.schema);
        self.inner.elicit(request)
    }
    fn sample(&self, mut request: SampleRequest) -> Answer<Result<Value, Refusal>> {
        self.redact_strings(&mut request.params);
        self.inner.sample(request)
    }
    fn roots(&self, asker: Asker) -> Answer<Result<Vec<Root>, Refusal>> {
        self.inner.roots(asker)
    }
    fn notify(&self, mut notice: Notice) {
        notice.text = self.redactor.text(&notice.text);
        trace_notice(&notice);
        self.inner.notify(notice)
    }
    fn waiting(&self, asker: Asker, asked: u64) {
        self.inner.waiting(asker, asked)
    }
}

/// `ctx.notify(text, level)`: to the host, which (through [`redacting`]) has it redacted
/// and a DEBUG `tracing` event emitted. An unknown level is `info`; the text is cut to
/// 4,096 characters. Without a host, nothing: unredacted text goes nowhere.
pub(crate) fn notify(host: Option<&SharedHost>, asker: Asker, level: &str, text: String) {
    let level = if LEVELS.contains(&level) {
        level
    } else {
        "info"
    };
    if let Some(host) = host {
        host.notify(Notice {
            asker,
            level: level.to_owned(),
            text: shorten(&text, 4096),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_flat_forms_are_asked() {
        let ok = json!({"type": "object", "properties": {
            "name": {"type": "string"}, "age": {"type": "integer"},
            "color": {"type": "string", "enum": ["red", "blue"]}, "sure": {"type": "boolean"}}});
        assert!(flat_schema(&ok).is_ok());
        let choices = json!({"type": "object", "properties": {
            "titled": {"type": "string", "oneOf": [{"const": "v1", "title": "One"}]},
            "legacy": {"type": "string", "enum": ["a"], "enumNames": ["A"]},
            "multi": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}},
            "titledMulti": {"type": "array", "items": {"anyOf": [{"const": "p", "title": "P"}]}}}});
        assert!(flat_schema(&choices).is_ok());
        let m = |v: Value| v.as_object().unwrap().clone();
        assert!(
            fits(
                &choices,
                &m(json!({"titled": "v1", "multi": ["x"], "titledMulti": ["p"]}))
            )
            .is_ok()
        );
        assert!(fits(&choices, &m(json!({"titled": "v2"}))).is_err());
        assert!(fits(&choices, &m(json!({"multi": ["z"]}))).is_err());
        assert!(fits(&choices, &m(json!({"titledMulti": ["q"]}))).is_err());
        let arrays = json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "object"}}}});
        assert!(flat_schema(&arrays).is_err());
        let nested = json!({"type": "object", "properties": {"a": {"type": "object"}}});
        let e = flat_schema(&nested).unwrap_err();
        assert!(e.contains("`a` is of type `object`"), "{e}");
        assert!(flat_schema(&json!({"type": "array"})).is_err());
        assert!(flat_schema(&json!({"type": "object"})).is_err());
    }

    /// A client's answer is echoed in the error for the tool and the client, cut to a few
    /// hundred bytes: a megabyte field name or value is not repeated whole.
    #[test]
    fn an_answer_that_does_not_fit_is_echoed_in_a_few_hundred_bytes() {
        let form = json!({"type": "object", "properties": {
            "n": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}}});
        let huge = "x".repeat(1 << 20);
        let m = |v: Value| v.as_object().unwrap().clone();
        for answer in [
            json!({huge.clone(): 1}),
            json!({"n": huge.clone()}),
            json!({"tags": ["a", huge.clone()]}),
        ] {
            let e = fits(&form, &m(answer)).unwrap_err();
            assert!(e.len() < 1_000, "{} bytes", e.len());
        }
    }

    #[test]
    fn a_question_key_is_a_short_plain_name() {
        let key = |v: Value| question_key("elicit", Some(v));
        assert_eq!(
            key(json!("user_name")).unwrap().as_deref(),
            Some("user_name")
        );
        assert_eq!(question_key("elicit", None).unwrap(), None);
        assert_eq!(key(Value::Null).unwrap(), None);
        // Dots are allowed (a key is never a path); anything that could break a line, a
        // log or a map's rendering is not.
        assert_eq!(key(json!("..")).unwrap().as_deref(), Some(".."));
        for bad in [
            json!(""),
            json!("a\nb"),
            json!("a b"),
            json!("ключ"),
            json!("../etc"),
            json!("x".repeat(MAX_KEY_LEN + 1)),
        ] {
            let e = key(bad.clone()).unwrap_err();
            assert!(
                e.starts_with("ctx.elicit: key must be 1 to 64"),
                "{bad}: {e}"
            );
        }
        let e = key(json!(7)).unwrap_err();
        assert!(e.contains("must be a string, not a number"), "{e}");
        assert!(key(json!("x".repeat(MAX_KEY_LEN))).is_ok());
    }

    #[test]
    fn answers_are_checked_against_the_form() {
        let schema = json!({"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "maxLength": 5}, "age": {"type": "integer", "minimum": 0},
            "color": {"type": "string", "enum": ["red", "blue"]}}});
        let m = |v: Value| v.as_object().unwrap().clone();
        assert!(
            fits(
                &schema,
                &m(json!({"name": "Ada", "age": 36, "color": "red"}))
            )
            .is_ok()
        );
        for (content, why) in [
            (json!({"age": 1}), "`name` is required"),
            (json!({"name": "Ada", "x": 1}), "`x` is not a field"),
            (json!({"name": 7}), "`name` must be a \"string\""),
            (
                json!({"name": "Ada", "age": 1.5}),
                "`age` must be a \"integer\"",
            ),
            (
                json!({"name": "Ada", "color": "green"}),
                "`color` must be one of",
            ),
            (json!({"name": "Ada", "age": -1}), "below its minimum"),
            (json!({"name": "Adalbert"}), "longer than 5"),
        ] {
            let e = fits(&schema, &m(content)).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
    }

    #[test]
    fn answers_are_checked_for_their_format_and_number_of_choices() {
        let schema = json!({"type": "object", "properties": {
            "email": {"type": "string", "format": "email"},
            "site": {"type": "string", "format": "uri"},
            "day": {"type": "string", "format": "date"},
            "at": {"type": "string", "format": "date-time"},
            "other": {"type": "string", "format": "hostname-ish"},
            "pick": {"type": "array", "minItems": 1, "maxItems": 2,
                     "items": {"type": "string", "enum": ["a", "b", "c"]}}}});
        let m = |v: Value| v.as_object().unwrap().clone();
        for good in [
            json!({"email": "ada@example.org"}),
            json!({"email": "ada@localhost"}),
            json!({"site": "https://example.org/a?b=c"}),
            json!({"site": "urn:isbn:0451450523"}),
            json!({"day": "2024-02-29"}),
            json!({"day": "2026-12-31"}),
            json!({"at": "2026-12-05T21:27:30Z"}),
            json!({"at": "2026-12-05t21:27:30.125+01:00"}),
            json!({"at": "2016-12-31T15:59:60.5-08:00"}),
            json!({"at": "2016-12-31T23:59:60Z"}),
            json!({"email": "\"joe bloggs\"@l33t.com"}),
            json!({"email": "first.last+tag@sub.example.org"}),
            json!({"email": "ada@[127.0.0.1]"}),
            json!({"site": "https://example.org/a%20b?q=%C3%A9#frag"}),
            json!({"other": "anything at all"}),
            json!({"pick": ["a"]}),
            json!({"pick": ["a", "c"]}),
        ] {
            assert!(fits(&schema, &m(good.clone())).is_ok(), "{good}");
        }
        for (bad, why) in [
            (json!({"email": "ada"}), "`email` is not a valid email"),
            (json!({"email": "@example.org"}), "not a valid email"),
            (json!({"email": "ada@"}), "not a valid email"),
            (json!({"email": "a@b@c"}), "not a valid email"),
            (
                json!({"email": "ada lovelace@example.org"}),
                "not a valid email",
            ),
            (json!({"site": "example.org"}), "`site` is not a valid uri"),
            (json!({"site": "1http://x"}), "not a valid uri"),
            (json!({"site": "http://exa mple.org"}), "not a valid uri"),
            (json!({"day": "2023-02-29"}), "`day` is not a valid date"),
            (json!({"day": "2026-13-01"}), "not a valid date"),
            (json!({"day": "2026-1-01"}), "not a valid date"),
            (json!({"day": "+026-01-01"}), "not a valid date"),
            (json!({"day": "2026-12-05T00:00:00Z"}), "not a valid date"),
            (json!({"at": "2026-12-05"}), "`at` is not a valid date-time"),
            (
                json!({"at": "2026-12-05T21:27:30"}),
                "not a valid date-time",
            ),
            (
                json!({"at": "2026-12-05T24:00:00Z"}),
                "not a valid date-time",
            ),
            (
                json!({"at": "2026-12-05T21:27:30.Z"}),
                "not a valid date-time",
            ),
            (
                json!({"at": "2026-12-05T21:27:30+1:00"}),
                "not a valid date-time",
            ),
            (json!({"at": "2026-12-05T21:27Z"}), "not a valid date-time"),
            (json!({"email": ".ada@example.org"}), "not a valid email"),
            (json!({"email": "a..b@example.org"}), "not a valid email"),
            (json!({"email": "ada@-example.org"}), "not a valid email"),
            (json!({"email": "ada@exämple.org"}), "not a valid email"),
            (json!({"site": "http://exämple.org/"}), "not a valid uri"),
            (json!({"site": "http://example.org/<x>"}), "not a valid uri"),
            (json!({"site": "http://example.org/%zz"}), "not a valid uri"),
            (json!({"site": "http://example.org/%4"}), "not a valid uri"),
            (
                json!({"at": "2026-12-05T21:27:30Z01:00"}),
                "not a valid date-time",
            ),
            (
                json!({"at": "2016-12-31T23:59:60-08:00"}),
                "not a valid date-time",
            ),
            (
                json!({"at": "2016-12-31T23:58:60Z"}),
                "not a valid date-time",
            ),
            (
                json!({"at": "2016-12-31T23:59:61Z"}),
                "not a valid date-time",
            ),
            (
                json!({"pick": []}),
                "`pick` has 0 choices, fewer than its minItems 1",
            ),
            (
                json!({"pick": ["a", "b", "c"]}),
                "`pick` has 3 choices, more than its maxItems 2",
            ),
        ] {
            let e = fits(&schema, &m(bad.clone())).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
