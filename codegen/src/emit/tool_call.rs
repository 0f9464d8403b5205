//! `ToolCall`: the enum over a set of tools, parsing a model's call into it and running
//! it, for local tools and for an MCP server's.

use crate::model::ToolSpec;
use crate::rustdoc::code;

use super::layout::{W, lit};

pub(super) fn tool_call(w: &mut W, tools: &[ToolSpec]) {
    tool_call_enum(
        w,
        tools,
        "/// A model's tool call, parsed into the generated params of the tool it names.",
    );
    w.open("impl ToolCall {");
    w.line("/// The names of all compiled tools, in folder order.");
    let names: Vec<String> = tools.iter().map(|t| lit(&t.name)).collect();
    let one = format!(
        "pub const NAMES: &'static [&'static str] = &[{}];",
        names.join(", ")
    );
    if w.fits(&one) {
        w.line(&one);
    } else {
        w.open("pub const NAMES: &'static [&'static str] = &[");
        for n in &names {
            w.line(&format!("{n},"));
        }
        w.close("];");
    }
    w.line("/// Parses a model's call: the tool's name and its JSON arguments (`null` and");
    w.line("/// `\"\"` count as no arguments). Pure: a tool's `prepareArguments` (old argument");
    w.line("/// shapes) does not run here; raw model JSON for such a tool goes through");
    w.line("/// `Runtime::call`.");
    from_call(w, tools, "params");
    w.line("/// The called tool's name.");
    w.open("pub fn name(&self) -> &'static str {");
    if tools.is_empty() {
        w.line("match *self {}");
    } else {
        w.open("match self {");
        for t in tools {
            w.arm(&format!("Self::{}(_)", t.rust_type), &lit(&t.name));
        }
        w.close("}");
    }
    w.close("}");
    w.line(
        "/// Validates a model's call with `runtime`'s validator (the one `Runtime::call` uses,",
    );
    w.line("/// against the TOOL.md the runtime loaded) and parses it: every problem comes back");
    w.line("/// as the same error result, ready for the model, that `Runtime::call` returns.");
    w.open("pub fn parse(");
    w.line("runtime: &::toolbind::Runtime,");
    w.line("name: &str,");
    w.line("args: ::toolbind::__private::serde_json::Value,");
    w.close(") -> ::core::result::Result<Self, ::toolbind::ToolResult> {");
    w.indent += 1;
    w.line("::toolbind::__private::parse_call(runtime, name, args, Self::from_call)");
    w.close("}");
    w.line("/// Runs the call on `runtime` by the typed path (`Runtime::call_typed`): the");
    w.line("/// contract drift check, then the params as they are, not validated again.");
    call_fn(w, tools, "call_typed");
    w.line("/// The call's arguments as JSON, as the tool receives them.");
    w.open("pub fn to_args(&self) -> ::toolbind::__private::serde_json::Value {");
    if tools.is_empty() {
        w.line("match *self {}");
    } else {
        w.open("match self {");
        for t in tools {
            w.arm(
                &format!("Self::{}(p)", t.rust_type),
                "::toolbind::__private::to_args(p)",
            );
        }
        w.close("}");
    }
    w.close("}");
    w.close("}");
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

/// Generated `from_call`: `match name`, one arm per tool, then the unknown-name error.
fn from_call(w: &mut W, tools: &[ToolSpec], helper: &str) {
    // Over no tools every name is unknown: no `match` (clippy's `match_single_binding`),
    // and `args` is unused.
    let unused = if tools.is_empty() { "_" } else { "" };
    w.open("pub fn from_call(");
    w.line("name: &str,");
    w.line(&format!(
        "{unused}args: ::toolbind::__private::serde_json::Value,"
    ));
    w.close(") -> ::core::result::Result<Self, ::toolbind::__private::CallError> {");
    w.indent += 1;
    if tools.is_empty() {
        w.line("::toolbind::__private::unknown_tool(name, Self::NAMES)");
    } else {
        from_call_arms(w, tools, helper);
        w.line("_ => ::toolbind::__private::unknown_tool(name, Self::NAMES),");
        w.close("}");
    }
    w.close("}");
}

/// The arms of generated `from_call`'s `match name`, up to the unknown-name arm: each
/// parses the args with `::toolbind::__private::<helper>::<module::Tool>`.
fn from_call_arms(w: &mut W, tools: &[ToolSpec], helper: &str) {
    w.open("match name {");
    for t in tools {
        // One call per tool; the tool's name comes from its `Tool` impl.
        let call = format!(
            "::toolbind::__private::{helper}::<{}::Tool>(args)",
            t.rust_module
        );
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
                w.open(&format!("::toolbind::__private::{helper}::<"));
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

/// Generated `ToolCall::call`: one arm per tool, each `__private::<private>::<Tool>`.
fn call_fn(w: &mut W, tools: &[ToolSpec], private: &str) {
    // Over no tools the body is `match self {}`: the unused arguments would warn.
    let unused = if tools.is_empty() { "_" } else { "" };
    w.open("pub fn call<'a>(");
    w.line("self,");
    w.line(&format!("{unused}runtime: &'a ::toolbind::Runtime,"));
    w.line(&format!("{unused}opts: ::toolbind::CallOptions,"));
    w.close(") -> ::toolbind::__private::BoxFuture<'a, ::toolbind::ToolResult> {");
    w.indent += 1;
    if tools.is_empty() {
        w.line("match self {}");
    } else {
        w.open("match self {");
        for t in tools {
            let call = format!(
                "::toolbind::__private::{private}::<{}::Tool>(runtime, p, opts)",
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
            w.open(&format!("::toolbind::__private::{private}::<"));
            w.line(&format!("{}::Tool,", t.rust_module));
            w.close(">(runtime, p, opts)");
            w.close("}");
        }
        w.close("}");
    }
    w.close("}");
}

/// An MCP server's `ToolCall`: the enum, then its impl (names, parsing, calling,
/// the arguments as the server takes them).
pub(super) fn mcp_tool_call(w: &mut W, tools: &[ToolSpec]) {
    tool_call_enum(
        w,
        tools,
        "/// A model's call of one of the server's tools, parsed into its generated params.",
    );
    w.open("impl ToolCall {");
    mcp_name_consts(w, tools);
    w.line("/// Parses a model's call: the tool's provider-facing name and its JSON arguments");
    w.line("/// (`null` and `\"\"` count as no arguments).");
    from_call(w, tools, "mcp_params");
    w.line("/// Sends the call to its server through `runtime` (`Runtime::call_mcp`): the");
    w.line("/// contract drift check against the snapshot the bindings came from, then the call.");
    call_fn(w, tools, "call_mcp");
    for (doc, f, get) in [
        ("/// The called tool's provider-facing name.", "name", 0),
        (
            "/// The name the server calls the called tool by.",
            "mcp_name",
            1,
        ),
    ] {
        w.line(doc);
        w.open(&format!("pub fn {f}(&self) -> &'static str {{"));
        if tools.is_empty() {
            w.line("match *self {}");
        } else {
            w.open("match self {");
            for t in tools {
                let n = if get == 0 {
                    &t.name
                } else {
                    &t.mcp.as_ref().expect("an MCP tool").name
                };
                w.arm(&format!("Self::{}(_)", t.rust_type), &lit(n));
            }
            w.close("}");
        }
        w.close("}");
    }
    w.line("/// The call's arguments as JSON, as the server receives them.");
    w.open("pub fn to_args(&self) -> ::toolbind::__private::serde_json::Value {");
    if tools.is_empty() {
        w.line("match *self {}");
    } else {
        w.open("match self {");
        for t in tools {
            w.arm(
                &format!("Self::{}(p)", t.rust_type),
                "::toolbind::__private::to_args(p)",
            );
        }
        w.close("}");
    }
    w.close("}");
    w.close("}");
}

/// `NAMES` (provider-facing) and `MCP_NAMES` (the server's), in name order.
fn mcp_name_consts(w: &mut W, tools: &[ToolSpec]) {
    for (doc, konst, names) in [
        (
            "/// The names a model calls the tools by (provider-facing), in name order.",
            "NAMES",
            tools.iter().map(|t| lit(&t.name)).collect::<Vec<_>>(),
        ),
        (
            "/// The names the server calls the tools by, in the same order as `NAMES`.",
            "MCP_NAMES",
            tools
                .iter()
                .map(|t| lit(&t.mcp.as_ref().expect("an MCP tool").name))
                .collect(),
        ),
    ] {
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
