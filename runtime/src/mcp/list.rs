//! Listing an MCP server's tools: connect, initialize, page through `tools/list` within
//! bounds, and hand back what a snapshot holds.
//!
//! The server is a process of its own group, killed (the whole group) when the listing
//! ends however it ends. What it writes to stdout is bounded in bytes, its pages in number,
//! and each step in time; its last stderr lines go into every error.

use std::collections::HashSet;
use std::fmt;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::PaginatedRequestParams;
use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};

use super::ServerConfig;
use toolbind_codegen::mcp::{ServerInfo, Snapshot, SnapshotTool};

/// Bounds on one listing.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ListLimits {
    /// How long the server may take to answer `initialize` (default 60 s: an `npx`
    /// server may download its package first).
    pub connect_timeout: Duration,
    /// How long one `tools/list` page may take (default 30 s).
    pub page_timeout: Duration,
    /// The most pages read (default 100).
    pub max_pages: usize,
    /// The most bytes the server may write to stdout in all (default 32 MiB).
    pub max_bytes: u64,
}

impl Default for ListLimits {
    fn default() -> Self {
        ListLimits {
            connect_timeout: Duration::from_secs(60),
            page_timeout: Duration::from_secs(30),
            max_pages: 100,
            max_bytes: 32 * 1024 * 1024,
        }
    }
}

/// What a server listed: who it is, the protocol version negotiated, its tools (in the
/// order listed).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Listing {
    /// The server, as its `initialize` result introduced it.
    pub server: ServerInfo,
    /// The negotiated protocol version.
    pub protocol_version: String,
    /// The tools, each hashed.
    pub tools: Vec<SnapshotTool>,
}

impl Listing {
    /// The listing as a snapshot named `name` (tools sorted; two of one name an error).
    pub fn into_snapshot(self, name: &str) -> Result<Snapshot, ListError> {
        Snapshot::new(name, self.server, self.protocol_version, self.tools).map_err(ListError)
    }
}

/// Why a listing failed, with the server's last stderr lines when it wrote any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListError(String);

impl fmt::Display for ListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ListError {}

/// How many bytes of the server's stderr are kept for error messages.
const STDERR_TAIL: usize = 4096;

/// Connects to the server, initializes, and lists its tools.
pub async fn list_tools(config: &ServerConfig, limits: &ListLimits) -> Result<Listing, ListError> {
    match config {
        ServerConfig::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args)
                .envs(env)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0)
                .kill_on_drop(true);
            if let Some(cwd) = cwd {
                cmd.current_dir(cwd);
            }
            let mut child = cmd
                .spawn()
                .map_err(|e| ListError(format!("cannot start `{command}`: {e}")))?;
            // The group dies with the listing, whichever way it ends: an `npx` server is
            // npm's child, and killing npm alone would leave the server running.
            let _group = child.id().map(Group);
            let stdin = child.stdin.take().expect("stdin is piped");
            let stdout = child.stdout.take().expect("stdout is piped");
            let mut stderr = child.stderr.take().expect("stderr is piped");
            let tail = Arc::new(Mutex::new(Vec::<u8>::new()));
            let tail_w = tail.clone();
            let drain = tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                while let Ok(n @ 1..) = stderr.read(&mut buf).await {
                    let mut t = tail_w.lock().unwrap_or_else(|e| e.into_inner());
                    t.extend_from_slice(&buf[..n]);
                    if t.len() > STDERR_TAIL * 2 {
                        let cut = t.len() - STDERR_TAIL;
                        t.drain(..cut);
                    }
                }
            });
            let over = Arc::new(Mutex::new(false));
            let stdout = Bounded {
                inner: stdout,
                left: limits.max_bytes,
                over: over.clone(),
            };
            let result = session((stdout, stdin), limits).await;
            // A server that went away says how: its exit status, when it has one by now.
            let exited = if result.is_err() {
                match tokio::time::timeout(Duration::from_millis(500), child.wait()).await {
                    Ok(Ok(status)) => format!(" (the server exited: {status})"),
                    _ => String::new(),
                }
            } else {
                String::new()
            };
            let result = result.map_err(|e| {
                let e = if *over.lock().unwrap_or_else(|e| e.into_inner()) {
                    format!(
                        "the server wrote more than {} bytes to stdout: stopped reading (a tool list that large is not one toolbind takes)",
                        limits.max_bytes
                    )
                } else {
                    e
                };
                let what = format!("`{command}`");
                ListError(with_stderr(&format!("{what}: {e}{exited}"), &tail))
            });
            drop(_group);
            drain.abort();
            result
        }
        ServerConfig::Http { url, .. } => Err(ListError(format!(
            "{url}: listing a Streamable HTTP server is not supported by this toolbind yet; \
             snapshot a stdio server (`command`), or run the HTTP server's package as a \
             stdio server"
        ))),
    }
}

/// Appends the server's last stderr lines to a message.
fn with_stderr(msg: &str, tail: &Mutex<Vec<u8>>) -> String {
    let t = tail.lock().unwrap_or_else(|e| e.into_inner());
    let text = String::from_utf8_lossy(&t);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return msg.to_owned();
    }
    let last = &lines[lines.len().saturating_sub(10)..];
    let mut out = format!("{msg}\nthe server's last stderr lines:");
    for l in last {
        let l: String = l
            .chars()
            .filter(|c| !c.is_control() || *c == '\t')
            .take(300)
            .collect();
        out.push_str("\n  ");
        out.push_str(&l);
    }
    out
}

async fn session<T, E, A>(transport: T, limits: &ListLimits) -> Result<Listing, String>
where
    T: rmcp::transport::IntoTransport<rmcp::RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let client = match tokio::time::timeout(limits.connect_timeout, ().serve(transport)).await {
        Err(_) => {
            return Err(format!(
                "no answer to `initialize` within {} s",
                limits.connect_timeout.as_secs_f64()
            ));
        }
        Ok(Err(e)) => return Err(format!("`initialize` failed: {e}")),
        Ok(Ok(c)) => c,
    };
    let info = client
        .peer_info()
        .ok_or_else(|| "the server sent no `initialize` result".to_owned())?;
    // `serverInfo` is optional from 2026-07-28 on: an unnamed server snapshots as "".
    let mut server = ServerInfo::default();
    if let Some(i) = &info.server_info {
        server = ServerInfo::new(i.name.clone(), i.version.clone());
        server.title = i.title.clone();
    }
    let protocol_version = info.protocol_version.to_string();
    if info.capabilities.tools.is_none() {
        let _ = client.cancel().await;
        return Err(format!(
            "server `{}` does not offer tools (no `tools` capability in its `initialize` result)",
            server.name
        ));
    }
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    let mut pages = 0;
    let outcome = loop {
        if pages == limits.max_pages {
            break Err(format!(
                "`tools/list` still had more pages after {pages}: stopped (the bound is {})",
                limits.max_pages
            ));
        }
        pages += 1;
        let params = PaginatedRequestParams::default().with_cursor(cursor.clone());
        let page = match tokio::time::timeout(limits.page_timeout, client.list_tools(Some(params)))
            .await
        {
            Err(_) => {
                break Err(format!(
                    "no answer to `tools/list` page {pages} within {} s",
                    limits.page_timeout.as_secs_f64()
                ));
            }
            Ok(Err(rmcp::ServiceError::TransportClosed)) => {
                break Err(format!(
                    "the server closed the connection before answering `tools/list` page {pages}"
                ));
            }
            Ok(Err(e)) => break Err(format!("`tools/list` page {pages} failed: {e}")),
            Ok(Ok(p)) => p,
        };
        let mut bad = None;
        for t in &page.tools {
            let listed = serde_json::to_value(t)
                .map_err(|e| e.to_string())
                .and_then(|v| SnapshotTool::from_listed(&v));
            match listed {
                Ok(t) => tools.push(t),
                Err(e) => {
                    bad = Some(e);
                    break;
                }
            }
        }
        if let Some(e) = bad {
            break Err(format!("`tools/list` page {pages}: {e}"));
        }
        match page.next_cursor {
            None => break Ok(()),
            Some(c) if c.is_empty() => break Ok(()),
            Some(c) => {
                if !seen.insert(c.clone()) {
                    let shown: String = c.chars().take(60).collect();
                    break Err(format!(
                        "`tools/list` returned the cursor {shown:?} a second time (page {pages}): its pagination would never end"
                    ));
                }
                cursor = Some(c);
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), client.cancel()).await;
    outcome.map(|()| Listing {
        server,
        protocol_version,
        tools,
    })
}

/// A process group, killed when dropped.
struct Group(u32);

impl Drop for Group {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.0) {
            // SAFETY: killpg only sends a signal; a group that is gone gives ESRCH.
            unsafe {
                libc::killpg(pid, libc::SIGKILL);
            }
        }
    }
}

/// A reader that fails after `left` bytes, so that a server flooding stdout cannot make
/// the listing hold more than that.
struct Bounded<R> {
    inner: R,
    left: u64,
    over: Arc<Mutex<bool>>,
}

impl<R: AsyncRead + Unpin> AsyncRead for Bounded<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.left == 0 {
            *self.over.lock().unwrap_or_else(|e| e.into_inner()) = true;
            return Poll::Ready(Err(std::io::Error::other("stdout over its byte bound")));
        }
        let room = buf
            .remaining()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let mut limited = ReadBuf::new(buf.initialize_unfilled_to(room));
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_read(cx, &mut limited) {
            Poll::Ready(Ok(())) => {
                let n = limited.filled().len();
                buf.advance(n);
                this.left -= n as u64;
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}
