//! `gen`, `schema`, `prompt`, `docs`: what codegen makes of a tools folder, on stdout.

use std::io::Write;
use std::path::Path;

use toolbind_codegen::Diagnostics;
use toolbind_codegen::{Config, Error, Options, ToolSpec, load_tools, prompt, schema};

use crate::args::{DirsArg, GenArgs, McpConfigArg, PromptArgs, SandboxArgs, SchemaArgs};
use crate::check::color_stderr;
use crate::exit::{Code, Failure, Outcome};

/// `gen`: literally `Config::generate()`, so the text is byte-identical to build.rs output.
pub fn rust(args: &GenArgs) -> Outcome {
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::failed(format!("cannot read the current folder: {e}")))?;
    // `Config::tools_dir` resolves a relative path against CARGO_MANIFEST_DIR when it is set
    // (build scripts, but also `cargo run`); a command line means the current folder.
    let mut config = Config::new();
    for dir in crate::tools::dirs(&args.dirs) {
        config.tools_dir(cwd.join(dir));
    }
    let generated = match config.generate() {
        Ok(g) => g,
        Err(Error::Invalid(d)) => return Err(invalid(relative_to(d, &cwd))),
        Err(e) => return Err(Failure::failed(e.to_string())),
    };
    for w in relative_to(toolbind_codegen::warnings(&generated.tools), &cwd).iter() {
        eprintln!("{}", w.plain());
    }
    let code = generated.rust().unwrap_or_default();
    match &args.output {
        None => print(code),
        Some(file) => {
            if std::fs::read(file).is_ok_and(|old| old == code.as_bytes()) {
                eprintln!("{} is up to date", file.display());
            } else {
                std::fs::write(file, code).map_err(|e| {
                    Failure::failed(format!("cannot write {}: {e}", file.display()))
                })?;
                eprintln!("wrote {} ({} tools)", file.display(), generated.tools.len());
            }
            Ok(Code::Ok)
        }
    }
}

pub fn schema(args: &SchemaArgs) -> Outcome {
    let tools = with_mcp(load(&args.dirs, &args.mcp)?, &args.mcp, &args.sandbox)?;
    print(&schema::definitions_json(&tools, args.dialect))
}

pub fn prompt(args: &PromptArgs) -> Outcome {
    let tools = with_mcp(load(&args.dirs, &args.mcp)?, &args.mcp, &args.sandbox)?;
    print(&prompt::system_prompt(&tools))
}

/// The tools folders' tools, then those of the `--mcp-config` servers (listed live).
fn with_mcp(
    mut tools: Vec<ToolSpec>,
    mcp: &McpConfigArg,
    sandbox: &SandboxArgs,
) -> Result<Vec<ToolSpec>, Failure> {
    if mcp.file.is_none() {
        return Ok(tools);
    }
    sandbox.check()?;
    let local: toolbind::Registry = tools
        .iter()
        .cloned()
        .map(toolbind::ToolInfo::from)
        .collect();
    let listing = crate::tools::mcp_tools(mcp, sandbox, &local)?;
    for t in &listing.tools {
        tools.push(t.spec().clone());
    }
    // The runtime said which server is not ready and why; the fix is the CLI's.
    for (name, _, fix) in listing.not_ready() {
        eprintln!("fix for MCP server `{name}`: {fix}");
    }
    Ok(tools)
}

pub fn docs(args: &DirsArg) -> Outcome {
    print(&prompt::docs(&load(
        args,
        &McpConfigArg {
            file: None,
            wait: None,
        },
    )?))
}

/// Loads the tools; warnings go to stderr, one line each (stdout is the output).
fn load(dirs: &DirsArg, mcp: &McpConfigArg) -> Result<Vec<ToolSpec>, Failure> {
    let dirs = crate::tools::dirs_beside(dirs, mcp);
    let tools = load_tools(&dirs, &Options::default()).map_err(invalid)?;
    for w in toolbind_codegen::warnings(&tools).iter() {
        eprintln!("{}", w.plain());
    }
    Ok(tools)
}

/// Prints the diagnostics; the command then exits 1.
fn invalid(d: Diagnostics) -> Failure {
    eprintln!("{}", d.render(color_stderr()));
    Failure::silent()
}

/// Diagnostics name files as the user typed them, not as absolute paths.
fn relative_to(mut d: Diagnostics, cwd: &Path) -> Diagnostics {
    for diag in &mut d.0 {
        if let Ok(rel) = diag.file.strip_prefix(cwd) {
            diag.file = rel.to_path_buf();
        }
    }
    d
}

fn print(text: &str) -> Outcome {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(Code::Ok),
        // `toolbind schema | head` closes the pipe early: not an error worth reporting.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(Code::Ok),
        Err(e) => Err(Failure::failed(format!("cannot write to stdout: {e}"))),
    }
}
