//! Declaring an MCP server whose tools a [`Runtime`](crate::Runtime) calls.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{ServerConfig, Snapshot};
use crate::sandbox::{SandboxLimits, SandboxPolicy};

/// An MCP server whose tools an agent calls through the [`Runtime`](crate::Runtime): how
/// to reach it, the snapshot its typed bindings were generated from (if any), the jail its
/// process runs in and the bounds of its connection.
///
/// A stdio server is started by toolbind, in toolbind's jail (the same bubblewrap sandbox
/// as tools, [`SandboxPolicy`]): its own state folder as `HOME`, its package folder
/// read-only, **network on** (most servers need it; turn it off with
/// `.sandbox(SandboxPolicy::new().network(false))`), memory and process limits, no CPU-time
/// limit (a server lives as long as the agent), killed with its whole process group when
/// the runtime drops it or the agent dies.
///
/// ```
/// use toolbind::mcp::McpServer;
/// use toolbind::sandbox::SandboxPolicy;
/// let fs = McpServer::stdio("filesystem", "npx", ["-y", "@modelcontextprotocol/server-filesystem", "/"])
///     .sandbox(SandboxPolicy::new().allow_write("/srv/work"));
/// let remote = McpServer::http("search", "https://mcp.example.com/mcp").bearer_env("SEARCH_TOKEN");
/// # drop((fs, remote));
/// ```
#[derive(Clone)]
pub struct McpServer {
    pub(crate) name: String,
    pub(crate) config: ServerConfig,
    pub(crate) snapshot: Option<Snapshot>,
    pub(crate) prefix: String,
    pub(crate) sandbox: SandboxPolicy,
    pub(crate) bearer: Option<Bearer>,
    pub(crate) sensitive: Vec<String>,
    pub(crate) connect_timeout: Duration,
    pub(crate) ping_timeout: Duration,
    pub(crate) max_in_flight: usize,
    pub(crate) max_message_bytes: u64,
    pub(crate) max_restart_delay: Duration,
    /// The config file the server's entry comes from (absolute), when it comes from one:
    /// part of what its state folder is keyed by.
    pub(crate) origin: Option<PathBuf>,
    /// How to sign in when the server asks for OAuth (the defaults when `None`).
    #[cfg(feature = "mcp-http")]
    pub(crate) oauth: Option<super::OAuth>,
}

/// Where a bearer token comes from; read at each connect, never shown.
#[derive(Clone)]
#[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
pub(crate) enum Bearer {
    Value(crate::Secret<String>),
    File(PathBuf),
    Env(String),
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.name)
            .field("config", &self.config)
            .field("snapshot", &self.snapshot.as_ref().map(|s| s.tools.len()))
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// A server `name` toolbind starts: `command` with `args`, spoken to over its stdin and
    /// stdout.
    ///
    /// In the jail its state folder (its `HOME`, where `npx` and `uv` keep their caches) is
    /// `<state root>/mcp/<name>-<hash>/home`: the hash is of what the server is (the config
    /// file it comes from, if any, and its command, args, `env` and `cwd`), so that a server
    /// of the same name elsewhere (another project's config, a hostile one) never shares it.
    /// A changed entry is a new folder: one fresh download of its packages.
    pub fn stdio(
        name: impl Into<String>,
        command: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self::new(name, ServerConfig::stdio(command, args))
    }

    /// A server `name` reached over Streamable HTTP at `url`.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        Self::new(name, ServerConfig::http(url))
    }

    /// A server as an `mcpServers` config describes it
    /// ([`read_config`](super::read_config)); `name` is its key there.
    pub fn new(name: impl Into<String>, config: ServerConfig) -> Self {
        let limits = SandboxLimits::default().cpu(None);
        McpServer {
            name: name.into(),
            config,
            snapshot: None,
            prefix: String::new(),
            sandbox: SandboxPolicy::new().network(true).limits(limits),
            bearer: None,
            sensitive: Vec::new(),
            connect_timeout: Duration::from_secs(60),
            ping_timeout: Duration::from_secs(5),
            max_in_flight: 64,
            max_message_bytes: 32 * 1024 * 1024,
            max_restart_delay: Duration::from_secs(30),
            origin: None,
            #[cfg(feature = "mcp-http")]
            oauth: None,
        }
    }

    /// Every server of an `mcpServers` config file, by name. Besides the keys every host
    /// reads, an entry may say `"prefix": "fs_"` ([`prefix`](Self::prefix)) and
    /// `"sensitive": ["api_key"]` ([`sensitive`](Self::sensitive)); other hosts ignore
    /// them.
    ///
    /// Each server's state folder (its `HOME` in the jail) is keyed by this file's path
    /// and the entry itself ([`McpServer::stdio`] has more on it).
    pub fn from_config_file(file: &std::path::Path) -> Result<Vec<McpServer>, super::ConfigError> {
        let origin = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
        Ok(super::config::read_servers(file)?
            .into_iter()
            .map(|(name, (config, extras))| {
                let mut s = McpServer::new(name, config);
                s.origin = Some(origin.clone());
                if let Some(p) = extras.prefix {
                    s = s.prefix(p);
                }
                for n in extras.sensitive {
                    s = s.sensitive(n);
                }
                #[cfg(feature = "mcp-http")]
                if let Some(keys) = extras.oauth {
                    s = s.oauth(super::OAuth::from_keys(keys, file));
                }
                s
            })
            .collect())
    }

    /// Sets a variable in a stdio server's environment (on top of the few every tool gets:
    /// `PATH`, `HOME`, `LANG`, ...; in the jail `HOME` is the server's state folder).
    /// Ignored for an HTTP server.
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let ServerConfig::Stdio { env, .. } = &mut self.config {
            env.insert(name.into(), value.into());
        }
        self
    }

    /// A stdio server's working folder. In the jail it is used when it is inside a granted
    /// folder; otherwise the server starts in its state folder. A relative folder is made
    /// absolute against the current directory now, when it is given.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        if let ServerConfig::Stdio { cwd, .. } = &mut self.config {
            *cwd = Some(crate::dirs::given(dir.into()));
        }
        self
    }

    /// A header sent with every request to an HTTP server. Ignored for a stdio server.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let ServerConfig::Http { headers, .. } = &mut self.config {
            headers.insert(name.into(), value.into());
        }
        self
    }

    /// The bearer token for an HTTP server (`Authorization: Bearer ...`).
    pub fn bearer(mut self, token: impl Into<String>) -> Self {
        self.bearer = Some(Bearer::Value(crate::Secret::from(token.into())));
        self
    }

    /// How to sign in when this HTTP server asks for OAuth 2.1 (a 401 whose challenge
    /// names its metadata). Without it a server that asks gets [`OAuth::new`]'s defaults
    /// (a registered client); either way the token is kept by the server's URL, and a
    /// person signs in through [`Host::login`](crate::host::Host::login) or `toolbind mcp
    /// login`. Not used when a bearer token or an `Authorization` header is set.
    ///
    /// [`OAuth::new`]: super::OAuth::new
    #[cfg(feature = "mcp-http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
    pub fn oauth(mut self, oauth: super::OAuth) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// The bearer token, read from a file (one line) at each connect.
    pub fn bearer_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.bearer = Some(Bearer::File(file.into()));
        self
    }

    /// The bearer token, read from an environment variable at each connect.
    pub fn bearer_env(mut self, var: impl Into<String>) -> Self {
        self.bearer = Some(Bearer::Env(var.into()));
        self
    }

    /// The snapshot the program's typed bindings were generated from: its tools are the
    /// server's tools in the runtime's list before the server is reached (the runtime can
    /// then start it on the first call), and the live list is checked against it at every
    /// connect: a tool whose contract changed is refused with
    /// [`StopReason::ContractDrift`](crate::StopReason::ContractDrift) before anything is
    /// sent.
    pub fn snapshot(mut self, snapshot: Snapshot) -> Self {
        self.snapshot = Some(snapshot);
        self
    }

    /// Put in front of every tool name the model sees (`fs_` makes `read_file`
    /// `fs_read_file`), as `Config::mcp_prefix` does for generated bindings: use the same.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// The jail of a stdio server (default: [`SandboxPolicy::new`] with network on and no
    /// CPU-time limit). Grants are what the server may read and write beyond its own
    /// folders; its package folder (the `node_modules` folder its entry sits in, or the
    /// entry's folder) is granted read-only for it.
    pub fn sandbox(mut self, policy: SandboxPolicy) -> Self {
        self.sandbox = policy;
        self
    }

    /// Marks input `name` of every tool of this server as sensitive (redacted from every
    /// text that leaves a call, as TOOL.md `sensitive: true`), on top of the inputs the
    /// server's schema marks `writeOnly` or `format: password`.
    pub fn sensitive(mut self, name: impl Into<String>) -> Self {
        self.sensitive.push(name.into());
        self
    }

    /// How long the server may take to start and answer `initialize` (default 60 s: an
    /// `npx` server may download its package first).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// After a call timed out, how long the server has to answer a `ping` before it is
    /// taken for hung, stopped and started again for the next call (default 5 s).
    pub fn ping_timeout(mut self, timeout: Duration) -> Self {
        self.ping_timeout = timeout;
        self
    }

    /// The most calls sent to the server at once (default 64); more wait their turn.
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n.max(1);
        self
    }

    /// The longest message the server may send (one line of a stdio server, one answer or
    /// event of an HTTP one; default 32 MiB). A longer one ends the connection: the calls
    /// in flight fail and the server is started again.
    pub fn max_message_bytes(mut self, bytes: u64) -> Self {
        self.max_message_bytes = bytes.max(1024);
        self
    }

    /// The longest wait between two attempts to start a server that keeps failing
    /// (default 30 s; the wait doubles from 250 ms). Calls in the wait fail at once, saying
    /// why the last start failed.
    pub fn max_restart_delay(mut self, delay: Duration) -> Self {
        self.max_restart_delay = delay;
        self
    }

    /// The name of the server's state folder under `<state root>/mcp`: its name made
    /// file-safe, then a hash of the config file it comes from and its command, args, `env`
    /// and `cwd`, the folder it runs in (toolbind's own when no `cwd` is set) and the real
    /// file its command names (128 bits: two servers that differ in any of them never
    /// share a `HOME`).
    pub(crate) fn state_key(&self) -> String {
        let (workdir, program) = match &self.config {
            ServerConfig::Stdio { command, cwd, .. } => (
                cwd.clone().or_else(|| std::env::current_dir().ok()),
                which(command),
            ),
            ServerConfig::Http { .. } => (None, None),
        };
        let real = |p: PathBuf| p.canonicalize().unwrap_or(p);
        self.state_key_of(workdir.map(real), program.map(real))
    }

    /// [`state_key`](Self::state_key), given where the server runs and the real file its
    /// command names.
    pub(crate) fn state_key_of(
        &self,
        workdir: Option<PathBuf>,
        program: Option<PathBuf>,
    ) -> String {
        use sha2::Digest;
        let what = match &self.config {
            ServerConfig::Stdio {
                command,
                args,
                env,
                cwd,
            } => serde_json::json!({
                "name": self.name,
                "origin": self.origin.as_ref().map(|p| p.to_string_lossy()),
                "command": command,
                "args": args,
                "env": env,
                "cwd": cwd.as_ref().map(|p| p.to_string_lossy()),
                // Where it runs (toolbind's own folder when no `cwd` is set) and the file its
                // command is: `npx` or `./server` in two projects are two servers, also
                // when they are defined in code, with no config file to tell them apart.
                "workdir": workdir.map(|p| p.to_string_lossy().into_owned()),
                "program": program.map(|p| p.to_string_lossy().into_owned()),
            }),
            ServerConfig::Http { url, .. } => serde_json::json!({"name": self.name, "url": url}),
        };
        let d = sha2::Sha256::digest(what.to_string().as_bytes());
        let hex: String = d[..16].iter().map(|b| format!("{b:02x}")).collect();
        let name: String = safe_name(&self.name).chars().take(40).collect();
        format!("{name}-{hex}")
    }

    /// The server's name (its key in the `mcpServers` config).
    pub fn get_name(&self) -> &str {
        &self.name
    }

    /// How to reach it.
    pub fn get_config(&self) -> &ServerConfig {
        &self.config
    }

    /// The snapshot set with [`snapshot`](Self::snapshot).
    pub fn get_snapshot(&self) -> Option<&Snapshot> {
        self.snapshot.as_ref()
    }

    /// The OAuth setting, when one was given ([`oauth`](Self::oauth), or a config's `"oauth"`).
    #[cfg(feature = "mcp-http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
    pub fn get_oauth(&self) -> Option<&super::OAuth> {
        self.oauth.as_ref()
    }

    /// The jail of a stdio server.
    pub fn get_sandbox(&self) -> &SandboxPolicy {
        &self.sandbox
    }

    /// The headers sent to an HTTP server, the bearer token added; an error names what is
    /// missing (an unset variable, an unreadable file) or in conflict.
    #[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
    pub(crate) fn http_headers(&self) -> Result<BTreeMap<String, String>, String> {
        let ServerConfig::Http { headers, .. } = &self.config else {
            return Ok(BTreeMap::new());
        };
        let mut headers = headers.clone();
        let source = match &self.bearer {
            None => return Ok(headers),
            Some(Bearer::Value(s)) => {
                if headers
                    .keys()
                    .any(|k| k.eq_ignore_ascii_case("authorization"))
                {
                    return Err(
                        "both a bearer token and an `Authorization` header are set: keep one"
                            .into(),
                    );
                }
                headers.insert("Authorization".into(), format!("Bearer {}", s.expose()));
                return Ok(headers);
            }
            Some(Bearer::File(f)) => super::TokenSource::File(f),
            Some(Bearer::Env(v)) => super::TokenSource::Var(v),
        };
        super::add_bearer_token(&mut headers, source, &|v| std::env::var(v).ok())
            .map_err(|e| e.to_string())?;
        Ok(headers)
    }
}

/// Finds `program` as a shell would: a path as it is, a bare name on `PATH` (its absolute
/// entries only: a relative one would find a file of whatever folder toolbind runs in).
pub(super) fn which(program: &str) -> Option<PathBuf> {
    let p = Path::new(program);
    if p.components().count() > 1 || program.contains('/') {
        return p.is_file().then(|| p.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(p))
        .find(|c| {
            std::fs::metadata(c).is_ok_and(|m| {
                use std::os::unix::fs::PermissionsExt;
                m.is_file() && m.permissions().mode() & 0o111 != 0
            })
        })
}

/// A file or folder name from a server's name: what `[A-Za-z0-9._-]` keeps, the rest `_`.
pub(super) fn safe_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    let s = match s.trim_start_matches('.') {
        "" => "server".to_owned(),
        t => t.to_owned(),
    };
    if s == name {
        return s;
    }
    // Two names that map to one (`a b`, `a/b`, `a_b`) must not share a folder.
    use sha2::Digest;
    let d = sha2::Sha256::digest(name.as_bytes());
    format!("{s}-{:02x}{:02x}{:02x}{:02x}", d[0], d[1], d[2], d[3])
}
