//! `serve --progressive`: for MCP clients that cannot defer tools, `tools/list` holds only
//! the core tools and two of its own — `search_tools` (a query in, the best matching tools
//! with their input schemas out, from the runtime's index) and `call_tool` (any tool by
//! name, with its arguments). Every tool also stays callable by its own name.

use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, JsonObject, Tool};
use serde_json::{Value, json};
use toolbind::Runtime;
use toolbind::discovery::MAX_LIMIT;
use toolbind_codegen::ToolSpec;
use toolbind_codegen::model::DiscoveryMode;

use crate::serve::logging::log;

/// The search tool's name (the runtime's, so a model sees one name everywhere).
pub(crate) const SEARCH_TOOL: &str = toolbind::discovery::SEARCH_TOOL;
/// The proxy's name.
pub(crate) const CALL_TOOL: &str = "call_tool";
/// How many tools a search returns when the client does not say.
const DEFAULT_LIMIT: u64 = 5;

/// Whether `spec` is listed from the start: named by `--core` or `discovery: always`.
pub(crate) fn is_core(core: &[String], spec: &ToolSpec) -> bool {
    spec.discovery == DiscoveryMode::Always || core.contains(&spec.name)
}

/// `tools/list` under `--progressive`: the core tools of `all` (every tool's MCP
/// definition), then `search_tools` and `call_tool`. A tool of the folder named like one of
/// those two is reachable through `call_tool` only (a warning says so).
pub(crate) fn listed(all: &[Tool], specs: &[ToolSpec], core: &[String]) -> Vec<Tool> {
    let mut listed: Vec<Tool> = Vec::new();
    for t in all {
        let name = t.name.as_ref();
        if name == SEARCH_TOOL || name == CALL_TOOL {
            log(&format!(
                "warning: tool `{name}` has the name of --progressive's own tool: it is not \
                 listed, and `{CALL_TOOL}` reaches it by name"
            ));
            continue;
        }
        if specs.iter().any(|s| s.name == name && is_core(core, s)) {
            listed.push(t.clone());
        }
    }
    for name in core {
        if !specs.iter().any(|s| s.name == *name) {
            log(&format!("warning: --core `{name}`: no tool has that name"));
        }
    }
    let hidden = all.len() - listed.len();
    listed.push(tool(json!({
        "name": SEARCH_TOOL,
        "title": "Search tools",
        "description": format!(
            "Search {hidden} more tools, not listed here, by what they do. Returns the best \
             matches with their input schemas; call one with {CALL_TOOL} (or by its name)."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What the tool should do, in a few words (e.g. create a GitHub issue)"},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "description": "How many tools to return at most (default 5)"}
            },
            "required": ["query"]
        },
        "annotations": {"readOnlyHint": true, "openWorldHint": false}
    })));
    listed.push(tool(json!({
        "name": CALL_TOOL,
        "title": "Call a tool",
        // Any tool may be behind it: a host that asks before a destructive call must ask.
        "annotations": {"destructiveHint": true, "openWorldHint": true, "readOnlyHint": false},
        "description": format!(
            "Call a tool found with {SEARCH_TOOL}: its name, and its arguments as its input \
             schema says."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's name, as search_tools gave it"},
                "arguments": {"type": "object", "description": "The tool's arguments"}
            },
            "required": ["name"]
        }
    })));
    listed
}

fn tool(v: Value) -> Tool {
    serde_json::from_value(v).expect("progressive mode's own tool definitions are valid")
}

/// The line the instructions and the system prompt end with under `--progressive`: how to
/// find the `hidden` tools not listed.
pub(crate) fn instructions(hidden: usize) -> String {
    format!(
        "{hidden} more tools are not listed: find them with `{SEARCH_TOOL}` (what the tool \
         should do, in a few words) and call one with `{CALL_TOOL}` (its name and \
         arguments).\n"
    )
}

/// Answers `search_tools`: the tools of `all` (their MCP definitions) that best match the
/// query, as structured content (`{tools: [{name, title, description, inputSchema}]}`) and
/// the same JSON as text; an error result for a bad query.
pub(crate) fn search(runtime: &Runtime, all: &[Tool], args: Option<&JsonObject>) -> CallToolResult {
    let query = args.and_then(|a| a.get("query")).and_then(Value::as_str);
    let Some(query) = query else {
        return error(format!(
            "{SEARCH_TOOL} needs `query`: a string that says what the tool should do"
        ));
    };
    let limit = match args.and_then(|a| a.get("limit")) {
        None | Some(Value::Null) => DEFAULT_LIMIT,
        Some(v) => match v.as_u64() {
            Some(n) if (1..=MAX_LIMIT).contains(&n) => n,
            _ => {
                return error(format!(
                    "`limit` must be a whole number from 1 to {MAX_LIMIT}"
                ));
            }
        },
    };
    let hits = match runtime.tool_index().search(query, limit as usize) {
        Ok(h) => h,
        Err(e) => return error(e.to_string()),
    };
    let tools: Vec<Value> = hits
        .iter()
        .filter_map(|h| all.iter().find(|t| t.name.as_ref() == h.name))
        .map(|t| {
            let mut v = json!({
                "name": t.name,
                "description": t.description,
                "inputSchema": t.input_schema,
            });
            if let Some(title) = &t.title {
                v["title"] = title.as_str().into();
            }
            v
        })
        .collect();
    let structured = json!({ "tools": tools });
    let mut result = CallToolResult::structured(structured.clone());
    if tools.is_empty() {
        result.content = vec![ContentBlock::text(format!(
            "No tool matches {query:?}. Try other words: what the tool should do, and on what."
        ))];
    }
    result
}

fn error(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// What `--progressive` answers itself: `search_tools`, and `call_tool`'s mistakes (no
/// name, bad arguments, an unknown tool: told to the model as error results, never the
/// whole catalog). A `call_tool` request that names a tool is made that tool's call in
/// place (`None`: the normal path runs it, even a folder tool named like one of ours).
pub(crate) fn intercept(
    runtime: &Runtime,
    all: &[Tool],
    core: &[String],
    request: &mut CallToolRequestParams,
) -> Option<CallToolResult> {
    if request.name == SEARCH_TOOL {
        return Some(search(runtime, all, request.arguments.as_ref()));
    }
    if request.name != CALL_TOOL {
        return None;
    }
    if let Err(refused) = unwrap_call(request, runtime) {
        return Some(error(refused));
    }
    if runtime.registry().get(&request.name).is_none() {
        if request.name == SEARCH_TOOL {
            return Some(search(runtime, all, request.arguments.as_ref()));
        }
        return Some(error(unknown(&request.name, all, core)));
    }
    None
}

/// An unknown tool's error: the listed tools' names it may have meant, and where to look.
fn unknown(name: &str, all: &[Tool], core: &[String]) -> String {
    let listed: Vec<&str> = all
        .iter()
        .map(|t| t.name.as_ref())
        .filter(|n| core.iter().any(|c| c == n))
        .collect();
    let names: Vec<&str> = all.iter().map(|t| t.name.as_ref()).collect();
    let near = toolbind_codegen::suggest(name, &names);
    let mut text = format!("unknown tool `{}`", toolbind::untrusted::echo(name));
    if let Some(near) = near {
        text.push_str(&format!(" (did you mean `{near}`?)"));
    }
    text.push_str(&format!(
        "; {SEARCH_TOOL} finds tools by what they do{}",
        if listed.is_empty() {
            String::new()
        } else {
            format!(" (listed: {})", listed.join(", "))
        }
    ));
    text
}

/// `call_tool`'s request made the call it asks for: `request`'s name and arguments
/// replaced by the inner ones (its `_meta`, task, request state and input responses kept,
/// so a call that asks or runs as a task goes on as the inner tool's). Why not, when the
/// arguments do not name a tool.
fn unwrap_call(request: &mut CallToolRequestParams, runtime: &Runtime) -> Result<(), String> {
    let args = request.arguments.take().unwrap_or_default();
    let name = match args.get("name") {
        Some(Value::String(n)) if !n.is_empty() => n.clone(),
        _ => {
            return Err(format!(
                "{CALL_TOOL} needs `name`: the tool's name, as {SEARCH_TOOL} gave it"
            ));
        }
    };
    if name == CALL_TOOL && runtime.registry().get(CALL_TOOL).is_none() {
        return Err(format!("{CALL_TOOL} does not call itself: name the tool"));
    }
    let inner = match args.get("arguments") {
        None | Some(Value::Null) => None,
        Some(Value::Object(o)) => Some(o.clone()),
        Some(_) => {
            return Err("`arguments` must be an object of the tool's named arguments".to_owned());
        }
    };
    request.name = name.into();
    request.arguments = inner;
    Ok(())
}
