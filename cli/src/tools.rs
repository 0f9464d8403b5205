//! Which tools folders a runtime command reads, loading them, and `toolbind list`.

use std::path::PathBuf;

use toolbind::Loader;
use toolbind::loader::{Loaded, TOOLS_DIRS_ENV, parse_tools_dirs};

use crate::args::{DirsArg, ListArgs, McpConfigArg};
use crate::exit::{Code, Outcome};

/// The `--dir` folders, then the `DIR` arguments; without any, those of `PI_TOOLS_DIRS`;
/// without that, `./tools`. Every command reads its tools folders this way.
pub fn dirs(args: &DirsArg) -> Vec<PathBuf> {
    if !args.dirs.is_empty() || !args.positional.is_empty() {
        return args.dirs.iter().chain(&args.positional).cloned().collect();
    }
    let from_env = std::env::var_os(TOOLS_DIRS_ENV)
        .map(|v| parse_tools_dirs(&v.to_string_lossy()))
        .unwrap_or_default();
    if from_env.is_empty() {
        vec![PathBuf::from("tools")]
    } else {
        from_env
    }
}

/// [`dirs`] for a command that also takes `--mcp-config`: given a config and no tools
/// folder (no `DIR`, `--dir` or `PI_TOOLS_DIRS`), the default `./tools` is read only when it
/// exists. The servers are then the tools asked for, and a missing default folder is no
/// error to warn about.
pub fn dirs_beside(args: &DirsArg, mcp: &McpConfigArg) -> Vec<PathBuf> {
    let dirs = dirs(args);
    let defaulted =
        dirs == [PathBuf::from("tools")] && args.dirs.is_empty() && args.positional.is_empty();
    if mcp.file.is_some() && defaulted && !std::path::Path::new("tools").exists() {
        return Vec::new();
    }
    dirs
}

/// Loads the tools of `dirs` without printing: callers decide where warnings go.
pub fn load(dirs: &[PathBuf]) -> Loaded {
    Loader::new().dirs(dirs.iter().cloned()).quiet().load()
}

/// The tools of the folders of `dirs` (beside `--mcp-config`) and of the config's MCP
/// servers, in one registry, the sandbox flags checked first: what `list` and `search`
/// read.
pub fn load_all(
    dirs: &DirsArg,
    mcp: &McpConfigArg,
    sandbox: &crate::args::SandboxArgs,
) -> Result<(Vec<PathBuf>, Loaded, McpListing), crate::exit::Failure> {
    sandbox.check()?;
    let dirs = dirs_beside(dirs, mcp);
    let mut loaded = load(&dirs);
    let listing = mcp_tools(mcp, sandbox, &loaded.registry)?;
    for t in &listing.tools {
        // Clashes were refused by `connect`.
        let _ = loaded.registry.insert(t.clone());
    }
    Ok((dirs, loaded, listing))
}

pub fn list(args: &ListArgs) -> Outcome {
    let (dirs, loaded, mcp) = load_all(&args.dirs, &args.mcp, &args.sandbox)?;
    if args.json {
        let mut v = list_json(&loaded);
        v["mcp_servers"] = mcp_servers_json(&mcp);
        let status = sandbox_status(&loaded, args);
        v["sandbox"] = status.to_string().into();
        v["sandbox_limits"] = status.limits.iter().map(limit_json).collect();
        println!("{v}");
        if !mcp.not_ready().is_empty() {
            return Ok(Code::Failed);
        }
        return Ok(exit_code(&loaded));
    }
    let tools: Vec<_> = loaded.registry.iter().collect();
    let rows: Vec<[String; 4]> = tools
        .iter()
        .map(|t| match &t.spec().mcp {
            Some(origin) => [
                t.name().to_owned(),
                "-".to_owned(),
                "mcp".to_owned(),
                format!("MCP server `{}`", origin.server),
            ],
            None => [
                t.name().to_owned(),
                t.version().to_string(),
                t.language().to_string(),
                t.dir().display().to_string(),
            ],
        })
        .collect();
    let header = ["NAME", "VERSION", "LANGUAGE", "FOLDER"].map(String::from);
    let mut widths = [0usize; 4];
    for row in std::iter::once(&header).chain(&rows) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut folders = dirs
        .iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if let Some(f) = &args.mcp.file {
        let and = if folders.is_empty() { "" } else { " and " };
        folders.push_str(&format!("{and}the MCP servers of {}", f.display()));
    }
    if rows.is_empty() {
        println!("no tools in {folders}");
    } else {
        for row in std::iter::once(&header).chain(&rows) {
            let line: Vec<String> = row
                .iter()
                .zip(widths)
                .map(|(c, w)| format!("{c:w$}"))
                .collect();
            println!("{}", line.join("  ").trim_end());
        }
        println!(
            "\n{} tool{} from {folders}",
            rows.len(),
            if rows.len() == 1 { "" } else { "s" }
        );
    }
    let (skipped, notes): (Vec<_>, Vec<_>) = loaded.warnings.iter().partition(|w| w.skipped());
    if !notes.is_empty() {
        println!("\nwarnings (the tools load):");
        for w in &notes {
            println!("  {}", w.to_string().replace('\n', "\n  "));
        }
    }
    if !skipped.is_empty() {
        println!(
            "\nskipped {} folder{}:",
            skipped.len(),
            if skipped.len() == 1 { "" } else { "s" }
        );
        for w in &skipped {
            println!("  {}", w.to_string().replace('\n', "\n  "));
        }
    }
    let not_ready = mcp.not_ready();
    print_not_ready(&not_ready);
    println!("\nsandbox: {}", sandbox_status(&loaded, args));
    Ok(if not_ready.is_empty() {
        exit_code(&loaded)
    } else {
        Code::Failed
    })
}

/// `list`'s lines for the MCP servers that are not ready: state, why, fix.
fn print_not_ready(not_ready: &[(String, String, String)]) {
    if not_ready.is_empty() {
        return;
    }
    println!(
        "\nMCP server{} not ready (the other servers' tools are listed):",
        if not_ready.len() == 1 { "" } else { "s" }
    );
    for (name, state, fix) in not_ready {
        println!("  {name}: {}", state.replace('\n', "\n    "));
        println!("    fix: {fix}");
    }
}

/// `list --json`'s `mcp_servers`: every server of `--mcp-config` with its state, and for
/// one that is not ready, why and the fix.
fn mcp_servers_json(mcp: &McpListing) -> serde_json::Value {
    let not_ready = mcp.not_ready();
    mcp.servers
        .iter()
        .map(|(name, state)| {
            let mut v = serde_json::json!({"name": name, "state": state.kind()});
            if let Some((_, _, fix)) = not_ready.iter().find(|(n, _, _)| *n == shown_name(name)) {
                if let Some(reason) = state.reason() {
                    v["reason"] = reason.into();
                }
                v["fix"] = fix.as_str().into();
            }
            v
        })
        .collect()
}

/// The sandbox mode in force for these tools' languages, and why.
fn sandbox_status(loaded: &Loaded, args: &ListArgs) -> toolbind::sandbox::SandboxStatus {
    let mut languages: Vec<toolbind::tool::Language> = Vec::new();
    for t in loaded.registry.iter().filter(|t| t.spec().mcp.is_none()) {
        if !languages.contains(&t.language()) {
            languages.push(t.language());
        }
    }
    let executor = toolbind::exec::SubprocessExecutor::new(
        toolbind::exec::ExecConfig::default().sandbox(args.sandbox.policy()),
    );
    executor.sandbox_status(&languages)
}

/// One limit in `list --json`: `{name, value, explicit, enforced}`, `enforced` one of
/// `enforced` (with `by`), `not_enforced` (with `why` and `fix`), `unlimited`.
fn limit_json(l: &toolbind::sandbox::LimitStatus) -> serde_json::Value {
    use toolbind::sandbox::Enforcement;
    let mut v = serde_json::json!({"name": l.name, "value": l.value, "explicit": l.explicit});
    match &l.enforced {
        Enforcement::Enforced { by } => {
            v["enforced"] = "enforced".into();
            v["by"] = by.as_str().into();
        }
        Enforcement::NotEnforced { why, fix } => {
            v["enforced"] = "not_enforced".into();
            v["why"] = why.as_str().into();
            v["fix"] = fix.as_str().into();
        }
        _ => v["enforced"] = "unlimited".into(),
    }
    v
}

/// A skipped tool folder is reported and listing goes on; a tools folder that cannot be
/// read at all (a typo in --dir) is a failure a script should see.
fn exit_code(loaded: &Loaded) -> Code {
    let unreadable = loaded.warnings.iter().any(|w| {
        matches!(
            w.kind,
            toolbind::loader::LoadWarningKind::UnreadableDir { .. }
                | toolbind::loader::LoadWarningKind::NotAToolsFolder { .. }
        )
    });
    if unreadable { Code::Failed } else { Code::Ok }
}

/// `list --json`: the tools with their warnings, the skipped folders and the other notes.
fn list_json(loaded: &Loaded) -> serde_json::Value {
    use serde_json::json;
    let tools: Vec<_> = loaded
        .registry
        .iter()
        .map(|t| match &t.spec().mcp {
            Some(origin) => json!({
                "name": t.name(),
                "label": t.label(),
                "server": origin.server,
                "mcpName": origin.name,
                "description": t.description(),
                "warnings": [],
            }),
            None => json!({
                "name": t.name(),
                "label": t.label(),
                "version": t.version(),
                "language": t.language().as_str(),
                "folder": t.dir().display().to_string(),
                "description": t.description(),
                "warnings": t.spec().warnings.iter().map(|d| d.to_json()).collect::<Vec<_>>(),
            }),
        })
        .collect();
    let (skipped, notes): (Vec<_>, Vec<_>) = loaded.warnings.iter().partition(|w| w.skipped());
    let entry = |w: &&toolbind::loader::LoadWarning, key: &str| json!({"path": w.path.display().to_string(), key: w.to_string()});
    json!({
        "tools": tools,
        "skipped": skipped.iter().map(|w| entry(w, "reason")).collect::<Vec<_>>(),
        "sandbox": null,
        "notes": notes
            .iter()
            .filter(|w| !matches!(w.kind, toolbind::loader::LoadWarningKind::Warnings { .. }))
            .map(|w| entry(w, "message"))
            .collect::<Vec<_>>(),
    })
}

/// Absolute folders: a tool's process runs with the caller's working directory, and an MCP
/// client may start `serve` anywhere.
pub fn absolute(dirs: Vec<PathBuf>) -> Result<Vec<PathBuf>, crate::exit::Failure> {
    dirs.into_iter()
        .map(|d| {
            std::path::absolute(&d).map_err(|e| {
                crate::exit::Failure::failed(format!("cannot resolve {}: {e}", d.display()))
            })
        })
        .collect()
}

/// The servers of `--mcp-config`, jailed by the command's sandbox flags (mode, grants,
/// state folder; network on unless `--no-network`; no CPU-time limit: a server lives as
/// long as the command).
pub fn mcp_servers(
    arg: &crate::args::McpConfigArg,
    sandbox: &crate::args::SandboxArgs,
) -> Result<Vec<toolbind::mcp::McpServer>, crate::exit::Failure> {
    let Some(file) = &arg.file else {
        return Ok(Vec::new());
    };
    let servers = toolbind::mcp::McpServer::from_config_file(file)
        .map_err(|e| crate::exit::Failure::usage(format!("--mcp-config: {e}")))?;
    Ok(servers
        .into_iter()
        .map(|s| jail_server(s, sandbox))
        .collect())
}

/// `server` in the jail of the command's sandbox flags: network on unless `--no-network`,
/// no CPU-time limit (a server lives as long as the command).
pub fn jail_server(
    server: toolbind::mcp::McpServer,
    sandbox: &crate::args::SandboxArgs,
) -> toolbind::mcp::McpServer {
    let policy = sandbox.policy();
    let limits = policy.get_limits().clone().cpu(None);
    server.sandbox(policy.limits(limits))
}

/// What `--mcp-config` gave: the tools of the servers that started, and each server's
/// state (one that failed affects only its own tools).
#[derive(Default)]
pub struct McpListing {
    pub tools: Vec<toolbind::ToolInfo>,
    pub servers: Vec<(String, toolbind::mcp::McpServerState)>,
    /// The config file, for the fixes.
    pub config: Option<PathBuf>,
    /// How long the servers were waited for.
    pub waited: std::time::Duration,
}

impl McpListing {
    /// The servers that are not ready, each with why and the fix.
    pub fn not_ready(&self) -> Vec<(String, String, String)> {
        use toolbind::mcp::McpServerState as S;
        // As a shell takes it: quoted when it holds anything but plain characters.
        let file = self
            .config
            .as_ref()
            .map(|f| f.display().to_string())
            .unwrap_or_default();
        let file = if file
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:@,".contains(c))
        {
            file
        } else {
            format!("'{}'", file.replace('\'', r"'\''"))
        };
        self.servers
            .iter()
            .filter(|(_, s)| *s != S::Ready)
            .map(|(name, state)| {
                let name = &shown_name(name);
                let fix = match state {
                    S::NeedsLogin { reason, .. } if reason.contains("OAuth login") => format!(
                        "sign in: `toolbind mcp login --config {file} {name}` (the token is kept for later runs)"
                    ),
                    S::NeedsLogin { .. } => format!(
                        "give it a token: `\"bearerTokenEnvVar\": \"VAR\"` or `\"bearerTokenFile\": \"PATH\"` in its entry in {file}"
                    ),
                    S::Refused { .. } => format!(
                        "give it a prefix: `\"prefix\": \"{name}_\"` in its entry in {file}"
                    ),
                    S::Starting | S::NotStarted => format!(
                        "it did not finish starting within {} s (a first `npx -y` downloads the server): run the command again, wait longer (--mcp-wait SECS), or check its entry in {file}",
                        self.waited.as_secs_f64()
                    ),
                    _ => format!(
                        "correct or remove its entry in {file}; `toolbind mcp snapshot --config {file} --out - {name}` starts it alone"
                    ),
                };
                (name.clone(), printable(&state.to_string()), printable(&fix))
            })
            .collect()
    }
}

/// A server's name (a key of the config, which may be a project's) on one line, its
/// control characters escaped: it cannot forge a line of the report.
fn shown_name(name: &str) -> String {
    name.escape_debug().to_string()
}

fn printable(text: &str) -> String {
    toolbind::untrusted::terminal(text).into_owned()
}

/// The tools of the `--mcp-config` servers, listed live now (the servers stop when this
/// returns), and each server's state: a server that cannot start, or whose tool names a
/// local tool has, is reported and the others' tools are listed.
pub fn mcp_tools(
    arg: &crate::args::McpConfigArg,
    sandbox: &crate::args::SandboxArgs,
    local: &toolbind::Registry,
) -> Result<McpListing, crate::exit::Failure> {
    let servers = mcp_servers(arg, sandbox)?;
    if servers.is_empty() {
        return Ok(McpListing::default());
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| {
            crate::exit::Failure::failed(format!("cannot start the async runtime: {e}"))
        })?;
    let listing = rt.block_on(async {
        let mut b = toolbind::Runtime::builder()
            .registry(local.clone())
            .mcp_start_wait(arg.start_wait());
        for s in servers {
            b = b.mcp_server(s);
        }
        let runtime = b
            .connect()
            .await
            .map_err(|e| crate::exit::Failure::failed(e.to_string()))?;
        Ok::<_, crate::exit::Failure>(McpListing {
            tools: runtime
                .registry()
                .iter()
                .filter(|t| t.spec().mcp.is_some())
                .cloned()
                .collect::<Vec<_>>(),
            servers: runtime.mcp_servers(),
            config: arg.file.clone(),
            waited: arg.start_wait(),
        })
    });
    rt.shutdown_timeout(std::time::Duration::from_millis(500));
    listing
}
