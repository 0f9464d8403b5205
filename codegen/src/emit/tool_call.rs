//! `ToolCall` and `TOOLS`: the items over a set of tools, written by one emitter for local
//! tools, for an MCP server's tools and for the macro's stand-in (a `ToolCall` over none).

use crate::model::ToolSpec;
use crate::rustdoc::code;

use super::layout::{W, lit};

/// Whose `ToolCall` it is: what a call parses with and runs through, and which methods
/// the impl has beside the shared ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Calls {
    /// Tools compiled from TOOL.md files (and the macro's stand-in, over none): parsed
    /// with `__private::params`, run by `Runtime::call_typed`; with `parse`.
    Local,
    /// An MCP server's tools: parsed with `__private::mcp_params`, run by
    /// `Runtime::call_mcp`; with `MCP_NAMES` and `mcp_name`.
    Mcp,
}

impl Calls {
    /// The `__private` function `from_call` parses a tool's arguments with.
    fn parser(self) -> &'static str {
        match self {
            Calls::Local => "params",
            Calls::Mcp => "mcp_params",
        }
    }
    /// The `__private` function `call` runs a tool's params with.
    fn runner(self) -> &'static str {
        match self {
            Calls::Local => "call_typed",
            Calls::Mcp => "call_mcp",
        }
    }
    /// Who receives `to_args`'s JSON.
    fn receiver(self) -> &'static str {
        match self {
            Calls::Local => "tool",
            Calls::Mcp => "server",
        }
    }
}

/// `enum ToolCall` (documented by `doc`) over `tools`, then its impl: the names, parsing
/// a model's call, running it, and the arguments as the tool or server takes them.
pub(super) fn tool_call(w: &mut W, tools: &[ToolSpec], calls: Calls, doc: &str) {
    tool_call_enum(w, tools, doc);
    w.open("impl ToolCall {");
    name_consts(w, tools, calls);
    match calls {
        Calls::Local => {
            w.line("/// Parses a model's call: the tool's name and its JSON arguments (`null` and");
            w.line(
                "/// `\"\"` count as no arguments). Pure: a tool's `prepareArguments` (old argument",
            );
            w.line("/// shapes) does not run here; raw model JSON for such a tool goes through");
            w.line("/// `Runtime::call`.");
            from_call(w, tools, calls);
            name_fn(w, tools, "/// The called tool's name.", "name", |t| &t.name);
            parse_fn(w);
            w.line("/// Runs the call on `runtime` by the typed path (`Runtime::call_typed`): the");
            w.line("/// contract drift check, then the params as they are, not validated again.");
            call_fn(w, tools, calls);
        }
        Calls::Mcp => {
            w.line(
                "/// Parses a model's call: the tool's provider-facing name and its JSON arguments",
            );
            w.line("/// (`null` and `\"\"` count as no arguments).");
            from_call(w, tools, calls);
            w.line("/// Sends the call to its server through `runtime` (`Runtime::call_mcp`): the");
            w.line(
                "/// contract drift check against the snapshot the bindings came from, then the call.",
            );
            call_fn(w, tools, calls);
            let provider_facing = "/// The called tool's provider-facing name.";
            name_fn(w, tools, provider_facing, "name", |t| &t.name);
            let server_side = "/// The name the server calls the called tool by.";
            name_fn(w, tools, server_side, "mcp_name", mcp_name);
        }
    }
    to_args_fn(w, tools, calls);
    w.close("}");
}

/// `pub static TOOLS: &[<runtime>::__private::<compiled>]` (documented by `doc`): the
/// static facts of every tool, `<compiled>::of::<module::Tool>()` each.
pub(super) fn tools_static(w: &mut W, tools: &[ToolSpec], compiled: &str, doc: &[&str]) {
    let rt = w.rt.clone();
    for line in doc {
        w.line(line);
    }
    let head = format!("pub static TOOLS: &[{rt}::__private::{compiled}] = &[");
    if tools.is_empty() {
        w.line(&format!("{head}];"));
        return;
    }
    w.open(&head);
    for t in tools {
        let one = format!(
            "{rt}::__private::{compiled}::of::<{}::Tool>(),",
            t.rust_module
        );
        if w.fits(&one) {
            w.line(&one);
        } else {
            w.open(&format!("{rt}::__private::{compiled}::of::<"));
            w.line(&format!("{}::Tool,", t.rust_module));
            w.close(">(),");
        }
    }
    w.close("];");
}

/// The name an MCP tool has on its server.
fn mcp_name(t: &ToolSpec) -> &str {
    &t.mcp.as_ref().expect("an MCP tool").name
}

/// `enum ToolCall` (documented by `doc`): one variant per tool, holding its params. The
/// same enum for compiled tools and for an MCP server's.
fn tool_call_enum(w: &mut W, tools: &[ToolSpec], doc: &str) {
    w.line(doc);
    w.line("#[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::cmp::PartialEq)]");
    if tools.is_empty() {
        w.line("pub enum ToolCall {}");
    } else {
        w.open("pub enum ToolCall {");
        for t in tools {
            w.doc(&format!("A call of {}.", code(&t.name)));
            let one = format!("{}({}::Params),", t.rust_type, t.rust_module);
            if w.fits(&one) {
                w.line(&one);
            } else {
                w.open(&format!("{}(", t.rust_type));
                w.line(&format!("{}::Params,", t.rust_module));
                w.close("),");
            }
        }
        w.close("}");
    }
}

/// `NAMES`, and for an MCP server `MCP_NAMES` (the server's names, in the same order).
fn name_consts(w: &mut W, tools: &[ToolSpec], calls: Calls) {
    let names = |name: fn(&ToolSpec) -> &str| tools.iter().map(|t| lit(name(t))).collect();
    let consts: Vec<(&str, &str, Vec<String>)> = match calls {
        Calls::Local => vec![(
            "/// The names of all compiled tools, in folder order.",
            "NAMES",
            names(|t| &t.name),
        )],
        Calls::Mcp => vec![
            (
                "/// The names a model calls the tools by (provider-facing), in name order.",
                "NAMES",
                names(|t| &t.name),
            ),
            (
                "/// The names the server calls the tools by, in the same order as `NAMES`.",
                "MCP_NAMES",
                names(mcp_name),
            ),
        ],
    };
    for (doc, konst, names) in consts {
        w.line(doc);
        let one = format!(
            "pub const {konst}: &'static [&'static str] = &[{}];",
            names.join(", ")
        );
        if w.fits(&one) {
            w.line(&one);
        } else {
            w.open(&format!("pub const {konst}: &'static [&'static str] = &["));
            for n in &names {
                w.line(&format!("{n},"));
            }
            w.close("];");
        }
    }
}

/// Generated `from_call`: `match name`, one arm per tool, then the unknown-name error.
fn from_call(w: &mut W, tools: &[ToolSpec], calls: Calls) {
    let rt = w.rt.clone();
    // Over no tools every name is unknown: no `match` (clippy's `match_single_binding`),
    // and `args` is unused.
    let unused = if tools.is_empty() { "_" } else { "" };
    w.open("pub fn from_call(");
    w.line("name: &str,");
    w.line(&format!(
        "{unused}args: {rt}::__private::serde_json::Value,"
    ));
    w.close(&format!(
        ") -> ::core::result::Result<Self, {rt}::__private::CallError> {{"
    ));
    w.indent += 1;
    if tools.is_empty() {
        w.line(&format!("{rt}::__private::unknown_tool(name, Self::NAMES)"));
    } else {
        from_call_arms(w, tools, calls.parser());
        w.line(&format!(
            "_ => {rt}::__private::unknown_tool(name, Self::NAMES),"
        ));
        w.close("}");
    }
    w.close("}");
}

/// The arms of generated `from_call`'s `match name`, up to the unknown-name arm: each
/// parses the args with `<runtime>::__private::<helper>::<module::Tool>`.
fn from_call_arms(w: &mut W, tools: &[ToolSpec], helper: &str) {
    let rt = w.rt.clone();
    w.open("match name {");
    for t in tools {
        // One call per tool; the tool's name comes from its `Tool` impl.
        let call = format!("{rt}::__private::{helper}::<{}::Tool>(args)", t.rust_module);
        let map = format!(".map(Self::{})", t.rust_type);
        let one = format!("{} => {call}{map},", lit(&t.name));
        if w.fits(&one) {
            w.line(&one);
            continue;
        }
        w.open(&format!("{} => {{", lit(&t.name)));
        if w.fits(&format!("{call}{map}")) {
            w.line(&format!("{call}{map}"));
        } else {
            if w.fits(&call) {
                w.line(&call);
            } else {
                w.open(&format!("{rt}::__private::{helper}::<"));
                w.line(&format!("{}::Tool,", t.rust_module));
                w.close(">(args)");
            }
            w.indent += 1;
            if w.fits(&map) {
                w.line(&map);
            } else {
                w.open(".map(");
                w.line(&format!("Self::{},", t.rust_type));
                w.close(")");
            }
            w.indent -= 1;
        }
        w.close("}");
    }
}

/// `pub fn {f}(&self) -> &'static str` (documented by `doc`): `name` of each tool.
fn name_fn(w: &mut W, tools: &[ToolSpec], doc: &str, f: &str, name: fn(&ToolSpec) -> &str) {
    w.line(doc);
    w.open(&format!("pub fn {f}(&self) -> &'static str {{"));
    if tools.is_empty() {
        w.line("match *self {}");
    } else {
        w.open("match self {");
        for t in tools {
            w.arm(&format!("Self::{}(_)", t.rust_type), &lit(name(t)));
        }
        w.close("}");
    }
    w.close("}");
}

/// Generated `ToolCall::parse` of local tools: validation by the runtime, then `from_call`.
fn parse_fn(w: &mut W) {
    let rt = w.rt.clone();
    w.line(
        "/// Validates a model's call with `runtime`'s validator (the one `Runtime::call` uses,",
    );
    w.line("/// against the TOOL.md the runtime loaded) and parses it: every problem comes back");
    w.line("/// as the same error result, ready for the model, that `Runtime::call` returns.");
    w.open("pub fn parse(");
    w.line(&format!("runtime: &{rt}::Runtime,"));
    w.line("name: &str,");
    w.line(&format!("args: {rt}::__private::serde_json::Value,"));
    w.close(&format!(
        ") -> ::core::result::Result<Self, {rt}::ToolResult> {{"
    ));
    w.indent += 1;
    w.line(&format!(
        "{rt}::__private::parse_call(runtime, name, args, Self::from_call)"
    ));
    w.close("}");
}

/// Generated `ToolCall::call`: one arm per tool, each `__private::<runner>::<Tool>`.
fn call_fn(w: &mut W, tools: &[ToolSpec], calls: Calls) {
    let rt = w.rt.clone();
    let runner = calls.runner();
    // Over no tools the body is `match self {}`: the unused arguments would warn.
    let unused = if tools.is_empty() { "_" } else { "" };
    w.open("pub fn call<'a>(");
    w.line("self,");
    w.line(&format!("{unused}runtime: &'a {rt}::Runtime,"));
    w.line(&format!("{unused}opts: {rt}::CallOptions,"));
    w.close(&format!(
        ") -> {rt}::__private::BoxFuture<'a, {rt}::ToolResult> {{"
    ));
    w.indent += 1;
    if tools.is_empty() {
        w.line("match self {}");
    } else {
        w.open("match self {");
        for t in tools {
            let call = format!(
                "{rt}::__private::{runner}::<{}::Tool>(runtime, p, opts)",
                t.rust_module
            );
            let pat = format!("Self::{}(p)", t.rust_type);
            if w.fits(&format!("{pat} => {call},"))
                || w.fits(&format!("{pat} =>")) && {
                    w.indent += 1;
                    let inner = w.fits(&call);
                    w.indent -= 1;
                    inner
                }
            {
                w.arm(&pat, &call);
                continue;
            }
            // Too long even in a block: prettyplease breaks the turbofish.
            w.open(&format!("{pat} => {{"));
            w.open(&format!("{rt}::__private::{runner}::<"));
            w.line(&format!("{}::Tool,", t.rust_module));
            w.close(">(runtime, p, opts)");
            w.close("}");
        }
        w.close("}");
    }
    w.close("}");
}

/// Generated `ToolCall::to_args`: the params as the JSON the tool or server receives.
fn to_args_fn(w: &mut W, tools: &[ToolSpec], calls: Calls) {
    let rt = w.rt.clone();
    w.line(&format!(
        "/// The call's arguments as JSON, as the {} receives them.",
        calls.receiver()
    ));
    w.open(&format!(
        "pub fn to_args(&self) -> {rt}::__private::serde_json::Value {{"
    ));
    if tools.is_empty() {
        w.line("match *self {}");
    } else {
        w.open("match self {");
        for t in tools {
            w.arm(
                &format!("Self::{}(p)", t.rust_type),
                &format!("{rt}::__private::to_args(p)"),
            );
        }
        w.close("}");
    }
    w.close("}");
}
