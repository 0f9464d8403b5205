//! `toolbind mcp snapshot` and `toolbind mcp check`: MCP servers' tool lists as
//! checked-in snapshots; `toolbind mcp skills` (`skills`): a server's skills.

mod skills;

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use toolbind::mcp::{
    ListLimits, McpServer, ServerConfig, Snapshot, TokenSource, add_bearer_token, diff,
    list_server_tools,
};

use crate::args::{HttpServerArgs, McpCheckArgs, McpCommand, McpSnapshotArgs};
use crate::check::color_stderr;
use crate::exit::{Code, Failure, Outcome};

pub fn run(cmd: McpCommand) -> Outcome {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::failed(format!("cannot start the async runtime: {e}")))?;
    match cmd {
        McpCommand::Snapshot(a) => rt.block_on(snapshot(a)),
        McpCommand::Check(a) => rt.block_on(check(a)),
        McpCommand::Skills(a) => rt.block_on(skills::run(a)),
        McpCommand::Login(a) => rt.block_on(crate::login::login(a)),
        McpCommand::Logout(a) => crate::login::logout(a),
        McpCommand::Status(a) => crate::login::status(a),
    }
}

/// The server of --url, with its headers and token, when --url is given.
pub(crate) fn url_server(a: &HttpServerArgs) -> Result<Option<ServerConfig>, Failure> {
    let Some(url) = &a.url else {
        return Ok(None);
    };
    let mut headers = BTreeMap::new();
    for h in &a.headers {
        let Some((k, v)) = h.split_once(':') else {
            return Err(Failure::usage(format!(
                "--header {:?} is not `Name: value`",
                h.split(':').next().unwrap_or_default()
            )));
        };
        headers.insert(k.trim().to_owned(), v.trim().to_owned());
    }
    let source = match (&a.bearer_token_file, &a.bearer_token_env) {
        (Some(f), _) => Some(("--bearer-token-file", TokenSource::File(f))),
        (None, Some(v)) => Some(("--bearer-token-env", TokenSource::Var(v))),
        (None, None) => None,
    };
    if let Some((flag, source)) = source {
        add_bearer_token(&mut headers, source, &|n| std::env::var(n).ok())
            .map_err(|e| Failure::failed(format!("{flag}: {e}")))?;
    }
    let config = ServerConfig::Http {
        url: url.clone(),
        headers,
    };
    Ok(Some(config))
}

/// The servers to reach: by name, from --config, --url or the command after `--`; a stdio
/// one jailed by the sandbox flags, as `list --mcp-config` and the runtime start it. A
/// command after `--` runs in the current folder (when a grant shows it), and its state
/// folder is keyed by it.
pub(crate) fn servers(
    config: Option<&Path>,
    names: &[String],
    command: &[String],
    name: Option<&str>,
    url: Option<ServerConfig>,
    sandbox: &crate::args::SandboxArgs,
) -> Result<Vec<(Option<String>, McpServer)>, Failure> {
    sandbox.check()?;
    let found = configured(config, names, command, name, url)?;
    Ok(found
        .into_iter()
        .map(|(n, s)| (n, crate::tools::jail_server(s, sandbox)))
        .collect())
}

fn configured(
    config: Option<&Path>,
    names: &[String],
    command: &[String],
    name: Option<&str>,
    url: Option<ServerConfig>,
) -> Result<Vec<(Option<String>, McpServer)>, Failure> {
    if let Some(server) = url {
        if !command.is_empty() {
            return Err(Failure::usage(
                "give either --url or a server command after `--`, not both",
            ));
        }
        if !names.is_empty() {
            return Err(Failure::usage(
                "SERVER names pick servers of --config; with --url, name the snapshot with --name",
            ));
        }
        return Ok(vec![(
            name.map(str::to_owned),
            McpServer::new(name.unwrap_or("server"), server),
        )]);
    }
    match (config, command.split_first()) {
        (Some(_), Some(_)) => Err(Failure::usage(
            "give either --config or a server command after `--`, not both",
        )),
        (None, Some((program, args))) => {
            if !names.is_empty() {
                return Err(Failure::usage(
                    "SERVER names pick servers of --config; with a command after `--`, name the snapshot with --name",
                ));
            }
            let here = std::env::current_dir()
                .map_err(|e| Failure::failed(format!("cannot read the current folder: {e}")))?;
            // Named after its program, whatever --name says: `snapshot --name fs` and a
            // later `check` of the same command here share its state folder (one download).
            let shown = Path::new(program)
                .file_name()
                .map_or_else(|| "server".into(), |n| n.to_string_lossy().into_owned());
            Ok(vec![(
                name.map(str::to_owned),
                McpServer::stdio(shown, program, args).cwd(here),
            )])
        }
        (config, None) => {
            if name.is_some() {
                return Err(Failure::usage(
                    "--name names the server given after `--`; a --config server's snapshot is named by its key",
                ));
            }
            let default = Path::new(".mcp.json");
            let file = config.unwrap_or(default);
            if config.is_none() && !default.exists() {
                return Err(Failure::usage(
                    "no server given: pass --config FILE (an mcpServers JSON), or the server's command after `--`",
                ));
            }
            let mut all: BTreeMap<String, McpServer> = McpServer::from_config_file(file)
                .map_err(|e| Failure::failed(e.to_string()))?
                .into_iter()
                .map(|s| (s.get_name().to_owned(), s))
                .collect();
            if names.is_empty() {
                if all.is_empty() {
                    return Err(Failure::failed(format!(
                        "{}: `mcpServers` lists no servers",
                        file.display()
                    )));
                }
                return Ok(all.into_iter().map(|(n, c)| (Some(n), c)).collect());
            }
            let known: Vec<String> = all.keys().cloned().collect();
            names
                .iter()
                .map(|n| {
                    all.remove(n).map(|c| (Some(n.clone()), c)).ok_or_else(|| {
                        Failure::usage(format!(
                            "{} has no server `{n}` (it has: {})",
                            file.display(),
                            if known.is_empty() {
                                "none".into()
                            } else {
                                known.join(", ")
                            }
                        ))
                    })
                })
                .collect()
        }
    }
}

async fn snapshot(a: McpSnapshotArgs) -> Outcome {
    let list = servers(
        a.config.as_deref(),
        &a.servers,
        &a.command,
        a.name.as_deref(),
        url_server(&a.http)?,
        &a.sandbox,
    )?;
    if a.out.is_some() && list.len() > 1 {
        return Err(Failure::usage(format!(
            "--out writes one snapshot, but {} servers were asked for: use --out-dir, or name one server",
            list.len()
        )));
    }
    let limits = ListLimits::default();
    let mut failed = 0;
    for (name, server) in list {
        let started = Instant::now();
        let shown = name.clone().unwrap_or_else(|| "the server".into());
        let listing = match list_server_tools(&server, &limits).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("error: {}", shown_text(&format!("{shown}: {e}")));
                failed += 1;
                continue;
            }
        };
        let name = name.unwrap_or_else(|| listing.server.name.clone());
        let snap = match listing.into_snapshot(&name) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: {}", shown_text(&format!("{name}: {e}")));
                failed += 1;
                continue;
            }
        };
        let text = snap.to_json();
        let secs = started.elapsed().as_secs_f64();
        let what = format!(
            "{name}: {} tools from {} {} (protocol {}) in {secs:.1} s",
            snap.tools.len(),
            snap.server.name,
            snap.server.version,
            snap.protocol_version
        );
        // The server's name and version, escaped for the terminal.
        let what = shown_text(&what);
        if a.out.as_deref() == Some(Path::new("-")) {
            // JSON escapes C0 controls, not C1 or bidi controls: escaped on a terminal.
            if std::io::stdout().is_terminal() {
                print!("{}", shown_text(&text));
            } else {
                print!("{text}");
            }
            eprintln!("{what}");
            continue;
        }
        let path = a
            .out
            .clone()
            .unwrap_or_else(|| a.out_dir.join(format!("{name}.json")));
        match write_atomic(&path, &text) {
            Ok(true) => eprintln!("{what}: wrote {}", path.display()),
            Ok(false) => eprintln!("{what}: {} unchanged", path.display()),
            Err(e) => {
                eprintln!("error: cannot write {}: {e}", path.display());
                failed += 1;
            }
        }
    }
    Ok(if failed > 0 { Code::Failed } else { Code::Ok })
}

/// Writes `text` to `path` through a temporary file in the same folder and a rename, so
/// an interrupted snapshot never leaves a half-written file; `false` when the file already
/// held exactly this.
fn write_atomic(path: &Path, text: &str) -> std::io::Result<bool> {
    if std::fs::read(path).is_ok_and(|old| old == text.as_bytes()) {
        return Ok(false);
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)?;
    let file = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("not a file path"))?
        .to_string_lossy();
    let tmp = dir.join(format!(".{file}.{}.tmp", std::process::id()));
    let written = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map(|()| true)
}

async fn check(a: McpCheckArgs) -> Outcome {
    let (old, warnings) = match Snapshot::read(&a.snapshot) {
        Ok(s) => s,
        Err(diags) => {
            for d in diags {
                eprintln!("{}", d.render(color_stderr()));
            }
            return Err(Failure::silent());
        }
    };
    for d in warnings {
        eprintln!("{}", d.render(color_stderr()));
    }
    let server = a.server.clone().unwrap_or_else(|| old.name.clone());
    let url = url_server(&a.http)?;
    if url.is_some() && a.server.is_some() {
        return Err(Failure::usage(
            "--server names a server of --config; --url is the server itself",
        ));
    }
    let names = if a.command.is_empty() && url.is_none() {
        vec![server.clone()]
    } else {
        Vec::new()
    };
    if a.config.is_none()
        && a.command.is_empty()
        && url.is_none()
        && !Path::new(".mcp.json").exists()
    {
        return Err(Failure::usage(
            "no server given: pass --config FILE (the mcpServers JSON that names the snapshot's server), --url, or the server's command after `--`",
        ));
    }
    let list = servers(
        a.config.as_deref(),
        &names,
        &a.command,
        None,
        url,
        &a.sandbox,
    )?;
    let (_, live) = list.into_iter().next().expect("one server");
    let listing = list_server_tools(&live, &ListLimits::default())
        .await
        .map_err(|e| Failure::failed(format!("{server}: {e}")))?;
    let new = listing
        .into_snapshot(&old.name)
        .map_err(|e| Failure::failed(format!("{server}: {e}")))?;
    let changes = diff(&old, &new);
    let file = a.snapshot.display();
    let breaking = changes.iter().filter(|c| c.breaks()).count();
    for c in &changes {
        let level = if c.breaks() { "error" } else { "warning" };
        eprintln!("{level}: {file}: {}", shown_text(&c.to_string()));
    }
    if breaking > 0 {
        eprintln!(
            "error: {file}: {breaking} breaking change(s) against {} {}: review them, then take the snapshot again (`toolbind mcp snapshot`) and rebuild",
            shown_text(&new.server.name),
            shown_text(&new.server.version)
        );
        return Ok(Code::Failed);
    }
    let note = if changes.is_empty() {
        "no changes".to_owned()
    } else {
        format!("{} change(s), none breaking", changes.len())
    };
    eprintln!(
        "{file}: {} tools match {} {} ({note})",
        old.tools.len(),
        shown_text(&new.server.name),
        shown_text(&new.server.version)
    );
    Ok(Code::Ok)
}

/// A server's (or a snapshot's) text as stderr shows it: escaped for the terminal.
pub(crate) fn shown_text(text: &str) -> std::borrow::Cow<'_, str> {
    toolbind::untrusted::terminal(text)
}
