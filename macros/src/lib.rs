#![warn(missing_docs)]
//! # toolbind-macros
//!
//! The proc-macro shell of toolbind: [`tools!`] and [`tool!`] run the same
//! `parse -> validate -> model -> emit` pipeline as `toolbind_codegen::Config` in a build
//! script, at compile time, and expand to the generated bindings. Use them through the
//! `toolbind` facade, which re-exports both:
//!
//! ```ignore
//! // src/agent.rs — the tools live in `<crate>/tools/<name>/TOOL.md`
//! toolbind::tools!("../tools");
//!
//! let call = ToolCall::from_call("web_fetch", serde_json::json!({"url": "https://example.com"}))?;
//! assert_eq!(call.name(), "web_fetch");
//! ```
//!
//! ## Where the path is resolved
//!
//! Like `include_str!`, relative to the source file that contains the macro call
//! (`proc_macro::Span::local_file`, stable since Rust 1.88). When the compiler cannot name
//! that file (some IDE expansion servers), the path is resolved relative to
//! `CARGO_MANIFEST_DIR`, the crate root, instead. Absolute paths are used as they are.
//!
//! ## Errors
//!
//! Every problem of every TOOL.md is reported at once, each as a `compile_error!` on the
//! path literal: `path/to/TOOL.md:LINE:COL: message (help: hint)`, the file shown relative
//! to the path you wrote. The macro then still expands to empty stand-ins for `ToolCall`
//! and `TOOLS`, so the real error is not buried under "cannot find type" errors.
//!
//! Warnings (an extra metadata key, a name some provider rejects, a fallback Rust
//! identifier, a converted default) never fail the expansion: the macro accepts exactly
//! what build.rs accepts. Stable proc macros cannot emit warnings, so the macro does not
//! show them; `toolbind check` and a build.rs `Config` (as `cargo::warning=` lines) do.
//!
//! ## Rebuilds
//!
//! The expansion `include_bytes!`s every TOOL.md and entry file it read, so editing one
//! recompiles the crate. A *new* tool folder is not a file the compiler has seen; to pick
//! it up without touching a source file, add a one-line `build.rs`:
//!
//! ```ignore
//! // build.rs
//! fn main() {
//!     println!("cargo::rerun-if-changed=tools");
//! }
//! ```
//!
//! Cargo then reruns the build script, and recompiles the crate, whenever an entry of
//! `tools/` changes.

use std::path::{Path, PathBuf};

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::quote;
use syn::punctuated::Punctuated;
use syn::{LitStr, Token};
use toolbind_codegen::emit::Generator;
use toolbind_codegen::{Config, Diagnostic, Options};

/// Generates typed bindings for every tool in one or more tools folders.
///
/// Each argument is a folder holding tool folders (`<dir>/<name>/TOOL.md` plus its entry
/// file), resolved relative to the file that contains the call, as `include_str!` resolves
/// its path (see the [crate docs](crate) for the fallback). Tool names must be unique
/// across all folders. An argument ending in `.json` is an MCP server's snapshot
/// (`toolbind mcp snapshot`), as `Config::mcp_snapshot` takes it: its tools get a module
/// named after the server (`filesystem::edit_file::Params`); they need toolbind's `mcp`
/// feature.
///
/// The expansion holds, per tool, a module named after it (`web_fetch::Params`, an enum
/// per enum input, a `Tool` marker implementing `toolbind::Tool`), then a `ToolCall` enum
/// over all tools and a `TOOLS` slice of `toolbind::ToolInfo` — the same items
/// `toolbind_codegen::Config` writes from build.rs.
///
/// ```ignore
/// // src/agent.rs (compiled for real by tests/ui/pass/*.rs)
/// mod tools {
///     toolbind::tools!("../tools", "../vendor/tools");
/// }
///
/// fn handle(name: &str, args: serde_json::Value) -> Result<String, toolbind::tool::CallError> {
///     // A new tool in the folder is a new variant: this match stops compiling until
///     // it is handled.
///     Ok(match tools::ToolCall::from_call(name, args)? {
///         tools::ToolCall::WebFetch(p) => format!("fetching {}", p.url),
///         tools::ToolCall::Todo(p) => format!("todo: {}", p.action),
///     })
/// }
/// ```
///
/// A malformed TOOL.md fails the build with one error per problem, on the path literal:
///
/// ```text
/// error: ../tools/web_fetch/TOOL.md:9:11: unknown input type `strin`, expected one of string, number, boolean, enum (help: did you mean `string`?)
///  --> src/agent.rs:2:22
/// ```
#[proc_macro]
pub fn tools(input: TokenStream) -> TokenStream {
    let paths = match parse_paths(input, "tools") {
        Ok(p) => p,
        Err(e) => return e.to_compile_error().into(),
    };
    let base = base_dir();
    let mut config = Config::new();
    config.generator(Generator::Macro);
    let mut errors = Vec::new();
    for lit in &paths {
        let dir = base.join(lit.value());
        if lit.value().ends_with(".json") {
            // An MCP server's snapshot (`toolbind mcp snapshot`), not a tools folder.
            match std::fs::metadata(&dir) {
                Ok(m) if m.is_file() => {
                    config.mcp_snapshot(&dir);
                }
                Ok(_) => errors.push(
                    syn::Error::new(lit.span(), format!("`{}` is not a file: an argument ending in `.json` names an MCP snapshot", lit.value()))
                        .to_compile_error(),
                ),
                Err(e) => errors.push(
                    syn::Error::new(
                        lit.span(),
                        format!(
                            "cannot read MCP snapshot `{}`: {e} (help: take it with `toolbind mcp snapshot`; the path is resolved relative to the file that calls the macro, as `include_str!` does)",
                            lit.value()
                        ),
                    )
                    .to_compile_error(),
                ),
            }
            continue;
        }
        match missing_folder(&dir, lit, &base) {
            Some(e) => errors.push(e),
            None => {
                config.tools_dir(&dir);
            }
        }
    }
    if errors.is_empty() {
        match config.generate() {
            Ok(generated) => match generated.rust().map(str::parse::<TokenStream2>) {
                Some(Ok(tokens)) => return tokens.into(),
                Some(Err(e)) => errors.push(internal(&paths[0], &e.to_string())),
                None => errors.push(internal(&paths[0], "no Rust output")),
            },
            Err(e) => match e.diagnostics() {
                // Stable proc macros cannot emit warnings: only errors fail the expansion
                // (build.rs and `toolbind check` show the warnings).
                Some(diags) => errors.extend(diags.errors().map(|d| located(d, &paths, &base))),
                None => errors.push(internal(&paths[0], &e.to_string())),
            },
        }
    }
    // After the errors, the same `ToolCall` and `TOOLS` the emitter writes over no tools,
    // so agent code using them adds no errors of its own to the real one.
    let stand_in = toolbind_codegen::emit::stand_in()
        .parse::<TokenStream2>()
        .unwrap_or_else(|e| internal(&paths[0], &e.to_string()));
    quote!(#(#errors)* #stand_in).into()
}

/// Generates the module of one tool folder only, without `ToolCall` or `TOOLS`.
///
/// For a crate that wants a single tool out of a shared folder, or wants each tool's
/// module where it uses it. The argument is the tool folder itself (holding `TOOL.md`),
/// resolved as for [`tools!`].
///
/// ```ignore
/// toolbind::tool!("../tools/web_fetch");
///
/// let params = web_fetch::Params {
///     url: "https://example.com".into(),
///     format: web_fetch::Format::Text,
///     max_bytes: 200_000.0,
///     timeout_ms: 10_000.0,
///     output_path: None,
/// };
/// let result = runtime
///     .call_typed::<web_fetch::Tool>(params, toolbind::CallOptions::default())
///     .await;
/// ```
///
/// On errors it expands to the errors only: with no valid TOOL.md there is no module name
/// to stand in for.
#[proc_macro]
pub fn tool(input: TokenStream) -> TokenStream {
    let paths = match parse_paths(input, "tool") {
        Ok(p) => p,
        Err(e) => return e.to_compile_error().into(),
    };
    if paths.len() > 1 {
        return syn::Error::new(
            paths[1].span(),
            "`tool!` takes one tool folder; use `tools!` for a folder of tools",
        )
        .to_compile_error()
        .into();
    }
    let lit = &paths[0];
    let base = base_dir();
    let dir = base.join(lit.value());
    if let Some(e) = missing_folder(&dir, lit, &base) {
        return e.into();
    }
    let spec = match toolbind_codegen::parse_tool_dir(&dir, &Options::default()) {
        Ok(spec) => spec,
        Err(diags) => {
            let errors = diags
                .iter()
                .filter(|d| d.is_error())
                .map(|d| located(d, &paths, &base));
            return quote!(#(#errors)*).into();
        }
    };
    let source = toolbind_codegen::emit::tool_module_source(&spec, Generator::Macro);
    match source.parse::<TokenStream2>() {
        Ok(t) => t.into(),
        Err(e) => internal(lit, &e.to_string()).into(),
    }
}

/// One or more string literals, comma-separated.
fn parse_paths(input: TokenStream, name: &str) -> syn::Result<Vec<LitStr>> {
    let parser = Punctuated::<LitStr, Token![,]>::parse_terminated;
    let paths: Vec<LitStr> = syn::parse::Parser::parse(parser, input)?
        .into_iter()
        .collect();
    if paths.is_empty() {
        return Err(syn::Error::new(
            Span::call_site(),
            format!("`{name}!` expects a path literal, e.g. `{name}!(\"../tools\")`"),
        ));
    }
    Ok(paths)
}

/// The folder relative paths are resolved against: the invoking file's folder, as for
/// `include_str!`, else the crate root. Made absolute so the generated `include_bytes!`
/// (which resolves relative paths against the invoking file itself) finds its files.
fn base_dir() -> PathBuf {
    let from_file = proc_macro::Span::call_site()
        .local_file()
        .map(|f| f.parent().map(Path::to_path_buf).unwrap_or_default());
    let base = from_file
        .or_else(|| std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from))
        .unwrap_or_default();
    let base = if base.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        base
    };
    std::path::absolute(&base).unwrap_or(base)
}

/// The path as the user wrote it, for paths under the base folder: error text must not
/// depend on where the crate sits on disk.
fn shown(text: &str, base: &Path) -> String {
    let prefix = format!("{}/", base.display());
    text.replace(&prefix, "")
}

fn missing_folder(dir: &Path, lit: &LitStr, base: &Path) -> Option<TokenStream2> {
    let err = std::fs::read_dir(dir).err()?;
    let msg = format!(
        "cannot read tools folder `{}`: {err} (help: the path is resolved relative to the file \
         that calls the macro, as `include_str!` does)",
        shown(&dir.display().to_string(), base)
    );
    Some(syn::Error::new(lit.span(), msg).to_compile_error())
}

/// A diagnostic as a `compile_error!` on the literal naming the folder it is in.
fn located(d: &Diagnostic, paths: &[LitStr], base: &Path) -> TokenStream2 {
    let lit = paths
        .iter()
        .find(|l| d.file.starts_with(base.join(l.value())))
        .unwrap_or(&paths[0]);
    let mut d = d.clone();
    d.file = PathBuf::from(shown(&d.file.display().to_string(), base));
    d.message = shown(&d.message, base);
    d.hint = d.hint.map(|h| shown(&h, base));
    syn::Error::new(lit.span(), d.plain()).to_compile_error()
}

fn internal(lit: &LitStr, what: &str) -> TokenStream2 {
    syn::Error::new(
        lit.span(),
        format!("toolbind-macros: internal error, please report: {what}"),
    )
    .to_compile_error()
}
