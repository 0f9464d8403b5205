//! The command line: clap's types, parsed and nothing more. `serve`'s defaults and its
//! secret files are applied and read in `serve::config`.

use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use toolbind_codegen::schema::Dialect;

/// Check, generate, inspect, run and serve folders of TOOL.md agent tools.
#[derive(Debug, Parser)]
#[command(name = "toolbind", version)]
#[command(
    after_help = "A tools folder holds one sub-folder per tool: <name>/TOOL.md plus \
its entry file (index.ts, index.py or index.sh). Every command takes its tools folders the \
same way: DIR arguments or --dir DIR (repeatable); without either, the folders of \
PI_TOOLS_DIRS (colon-separated), else ./tools."
)]
pub struct Cli {
    /// Colour in reports on stderr: `auto` (on a terminal, unless NO_COLOR is set),
    /// `always` or `never`
    #[arg(long, value_enum, global = true, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate tools folders and print every error and warning, rustc-style
    #[command(
        after_help = "Exit status: 0 when every tool loads (warnings are printed but allowed), \
1 on any error, or on any warning with --deny-warnings."
    )]
    Check(CheckArgs),
    /// Print the Rust bindings build.rs would generate
    Gen(GenArgs),
    /// Print the tool definitions as JSON for a model provider
    Schema(SchemaArgs),
    /// Print the system-prompt text for the tools
    Prompt(PromptArgs),
    /// Print Markdown docs: a tools table and each tool's documentation
    Docs(DirsArg),
    /// Copy seed tools into a data folder by version
    Sync(SyncArgs),
    /// List the tools a runtime would load, then the folders it would skip and why
    List(ListArgs),
    /// Search the tools by what they do, best match first
    #[command(
        after_help = "Ranks every tool of the tools folders (and of --mcp-config's servers) \
against the query by its name, label, description, prompt lines, inputs and docs (BM25F; \
common synonyms count at a lower weight). The same index serves a model's search_tools.\n\n\
Exit status: 0 when some tool matches, 1 when none does or a tool folder failed to load, 2 \
for an empty query or one over 4096 bytes.\n\n\
Example: toolbind search \"download a web page\" --limit 3"
    )]
    Search(SearchArgs),
    /// Validate arguments and run one tool
    #[command(
        after_help = "Progress goes to stderr, the result's text to stdout. Ctrl-C cancels \
the tool through its abort signal; a second Ctrl-C kills it.\n\
Exit status: 0 ok, 1 the tool returned an error, 2 usage error (bad --args, unknown tool, \
invalid arguments), 130 after Ctrl-C, 143 after SIGTERM.\n\n\
Example: toolbind call web_fetch --args '{\"url\": \"https://example.com\"}'"
    )]
    Call(CallArgs),
    /// Serve the tools over MCP on stdin/stdout, or over Streamable HTTP with --http
    #[command(
        after_help = "Logs go to stderr. The tools folders are re-read when they \
change, and clients get notifications/tools/list_changed.\n\n\
MCP client configuration: {\"command\": \"toolbind\", \"args\": [\"serve\", \"--dir\", \"/path/to/tools\"]}\n\n\
Over HTTP (--http ADDR) the endpoint is http://ADDR/mcp and every request needs \
`Authorization: Bearer TOKEN`: the token comes from --auth-token-file, else TOOLBIND_TOKEN, \
else a generated 0600 file whose path is printed on stderr. GET /healthz answers without \
a token, for load balancers. SIGTERM or Ctrl-C stops accepting, lets the calls in flight \
finish for up to --drain-timeout, then cancels the rest."
    )]
    Serve(ServeArgs),
    /// Snapshot MCP servers' tool lists, and check servers against their snapshots
    #[command(subcommand)]
    Mcp(McpCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    #[command(
        after_help = "Example: toolbind completions bash > ~/.local/share/bash-completion/completions/toolbind"
    )]
    Completions(CompletionsArgs),
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub dirs: DirsArg,
    /// `human`: rustc-style reports on stderr (coloured on a terminal); `json`: an array of
    /// {file, line, column, severity, message, hint} on stdout
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Fail (exit 1) on warnings too: extra keys, names some provider rejects, fallback
    /// Rust identifiers, converted defaults
    #[arg(long)]
    pub deny_warnings: bool,
}

#[derive(Debug, Args)]
pub struct GenArgs {
    #[command(flatten)]
    pub dirs: DirsArg,
    /// Write the bindings to FILE (only when its content changes) instead of stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct PromptArgs {
    #[command(flatten)]
    pub dirs: DirsArg,
    #[command(flatten)]
    pub mcp: McpConfigArg,
    /// The jail of the --mcp-config stdio servers started to list their tools.
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

/// MCP servers whose tools join the tools folders' (`mcpServers` JSON, as hosts use it).
#[derive(Debug, Args)]
pub struct McpConfigArg {
    /// Also the tools of every MCP server of this `mcpServers` config (.mcp.json), started
    /// (stdio, in the sandbox, network on) or reached (HTTP) now
    #[arg(long = "mcp-config", value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// The longest wait for the --mcp-config servers to start; one not up by then is
    /// reported and the others' tools are used [default: 30]
    #[arg(long = "mcp-wait", value_name = "SECS", value_parser = parse_secs, requires = "file")]
    pub wait: Option<std::time::Duration>,
}

impl McpConfigArg {
    /// `--mcp-wait`, else 30 s (a first `npx -y` start downloads the server).
    pub fn start_wait(&self) -> std::time::Duration {
        self.wait.unwrap_or(std::time::Duration::from_secs(30))
    }
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    #[command(flatten)]
    pub dirs: DirsArg,
    #[command(flatten)]
    pub mcp: McpConfigArg,
    /// The provider's flavour of tool definition
    #[arg(
        long,
        value_name = "DIALECT",
        default_value = "portable",
        value_parser = dialect_parser(),
    )]
    pub dialect: Dialect,
    /// The jail of the --mcp-config stdio servers started to list their tools.
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

fn dialect_parser() -> impl TypedValueParser<Value = Dialect> {
    PossibleValuesParser::new(Dialect::ALL.map(Dialect::as_str))
        .map(|s| Dialect::from_name(&s).unwrap_or(Dialect::Portable))
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Connect to MCP servers and write their tool lists as snapshots (mcp/<server>.json)
    #[command(
        after_help = "A snapshot is canonical JSON, like a lock file: the server's name and \
version, the protocol version, and its tools sorted by name, each with a `contract` hash \
(name and schemas without their descriptions) and a `docs` hash. It never holds the \
command, environment, headers or tokens. Check it in; build.rs generates typed bindings \
from it (toolbind_codegen::Config::mcp_snapshot) and `toolbind mcp check` compares a live \
server with it.\n\n\
A stdio server runs in toolbind's jail, as when the runtime calls it: grant what it must \
see with the Sandbox flags.\n\n\
Examples:\n  toolbind mcp snapshot --config .mcp.json            every server of the config\n  \
toolbind mcp snapshot --config .mcp.json fs         one of them\n  \
toolbind mcp snapshot --name fs --allow-read . -- npx -y @modelcontextprotocol/server-filesystem .\n  \
toolbind mcp snapshot --name api --url https://example.com/mcp --bearer-token-env API_TOKEN\n\n\
Exit status: 0 when every snapshot was written (or is unchanged), 1 otherwise."
    )]
    Snapshot(McpSnapshotArgs),
    /// Compare a server's live tool list with its snapshot; exit 1 on a breaking change
    #[command(
        after_help = "The server is the one of the snapshot's name in --config (or \
--server), the one at --url, or the command after `--`. A removed tool or a changed contract (a property \
added, removed, retyped, made required) is an error; a new tool or a changed description \
is a warning.\n\n\
Exit status: 0 when nothing a caller relies on changed, 1 on a breaking change or when the \
server cannot be listed."
    )]
    Check(McpCheckArgs),
    /// List an MCP server's skills (SEP-2640), print one's SKILL.md, or check every file's digest
    #[command(
        after_help = "The server is the one named in --config (or the only one there), the \
one at --url, or the command after `--`. Listing reads no skill file. --get NAME prints the \
skill's SKILL.md, --verify reads every file of every skill: each is checked against the size \
and sha256 digest the server's manifest gave, and a file that differs is an error, never \
printed.\n\n\
Exit status: 0 when the skills were listed (and every file checked holds), 1 otherwise."
    )]
    Skills(McpSkillsArgs),
    /// Sign in to an MCP server that asks for OAuth, and keep its token for later runs
    #[command(
        after_help = "The server is the one named in --config (or the one at --url). toolbind \
finds the server's authorization server (its protected-resource metadata), registers a client \
with it unless the config names one (`\"oauth\": {\"clientId\": ...}`), and prints the URL \
to open; a browser is opened when there is a display. The browser comes back to \
127.0.0.1, where toolbind waits (--timeout). With `\"grant\": \"client_credentials\"` no \
person is needed.\n\n\
Tokens are kept in <state root>/mcp-oauth, 0600, by the server's URL (never by the \
config's name for it); `list`, `call`, `mcp snapshot` and `mcp check` use them and refresh \
them.\n\n\
Exit status: 0 when signed in, 1 otherwise."
    )]
    Login(McpLoginArgs),
    /// Forget the OAuth tokens kept for an MCP server
    #[command(
        after_help = "Removes the credentials kept for the server's URL. Nothing is revoked at \
the authorization server: revoke the grant in the server's own settings.\n\n\
Exit status: 0 when something was removed or nothing was kept, 1 on an error."
    )]
    Logout(McpLoginArgs),
    /// Show the OAuth credentials kept for MCP servers (never a token)
    #[command(
        after_help = "For each HTTP server of --config (or the one named, or --url): the \
resource, the authorization server, the client, the scopes, when the token expires and \
whether it can be refreshed.\n\n\
Exit status: 0, also when nothing is kept."
    )]
    Status(McpLoginArgs),
}

#[derive(Debug, Args)]
pub struct McpLoginArgs {
    /// The server's name in --config [for status: default all of them]
    #[arg(value_name = "SERVER")]
    pub server: Option<String>,
    /// The `mcpServers` JSON config that names the server
    #[arg(
        long,
        value_name = "FILE",
        default_value = ".mcp.json",
        conflicts_with = "url"
    )]
    pub config: PathBuf,
    /// A server's endpoint instead of --config
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Print the URL only; open no browser
    #[arg(long)]
    pub no_browser: bool,
    /// How long a login waits for the browser to come back, in seconds
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub timeout: u64,
    /// Print the status as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct McpSnapshotArgs {
    /// An `mcpServers` JSON config (.mcp.json, Claude Desktop's), with ${VAR} and
    /// ${VAR:-default} expanded from the environment
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The servers of --config to snapshot [default: all of them]
    #[arg(value_name = "SERVER")]
    pub servers: Vec<String>,
    /// The folder snapshots are written to, as <server>.json
    #[arg(long, value_name = "DIR", default_value = "mcp")]
    pub out_dir: PathBuf,
    /// The file to write, for one server (`-` for stdout)
    #[arg(long, value_name = "FILE", conflicts_with = "out_dir")]
    pub out: Option<PathBuf>,
    /// The snapshot's name for a server given after `--` or by --url [default: the
    /// server's own name]
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// A stdio server to start instead of --config: the command and its arguments (run
    /// in this folder when a grant shows it, else in the server's state folder)
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
    #[command(flatten)]
    pub http: HttpServerArgs,
    /// The jail a stdio server is started in (network on unless --no-network; no CPU-time
    /// limit), as for `list --mcp-config`.
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

#[derive(Debug, Args)]
pub struct McpSkillsArgs {
    /// The server's name in --config [default: the only one]
    #[arg(value_name = "SERVER")]
    pub server: Option<String>,
    /// An `mcpServers` JSON config (.mcp.json)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The server's name for one given after `--` or by --url
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Print this skill's SKILL.md (checked against its digest)
    #[arg(long, value_name = "SKILL", conflicts_with = "json")]
    pub get: Option<String>,
    /// Read every file of every skill and check its size and digest
    #[arg(long)]
    pub verify: bool,
    /// Print the skills as JSON: [{uri, name, description, frontmatter, files: [{uri,
    /// digest, size}] or "dynamic"}]
    #[arg(long)]
    pub json: bool,
    /// A stdio server to start instead of --config: the command and its arguments
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
    #[command(flatten)]
    pub http: HttpServerArgs,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

#[derive(Debug, Args)]
pub struct McpCheckArgs {
    /// The snapshot file
    #[arg(value_name = "SNAPSHOT")]
    pub snapshot: PathBuf,
    /// The `mcpServers` JSON config that names the server
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The server's name in --config [default: the snapshot's name]
    #[arg(long, value_name = "NAME")]
    pub server: Option<String>,
    /// A stdio server to start instead of --config: the command and its arguments (run
    /// in this folder when a grant shows it, else in the server's state folder)
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
    #[command(flatten)]
    pub http: HttpServerArgs,
    /// The jail a stdio server is started in (network on unless --no-network; no CPU-time
    /// limit), as for `list --mcp-config`.
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

/// A Streamable HTTP server given on the command line instead of --config.
#[derive(Debug, Args)]
#[command(next_help_heading = "Streamable HTTP server")]
pub struct HttpServerArgs {
    /// A Streamable HTTP server to list instead of --config: its endpoint (http:// or
    /// https://, usually ending in /mcp)
    #[arg(long, value_name = "URL", conflicts_with = "config")]
    pub url: Option<String>,
    /// A header sent with every request, as `Name: value`; repeatable
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "url")]
    pub headers: Vec<String>,
    /// Send `Authorization: Bearer <token>` with the token read from FILE
    #[arg(
        long,
        value_name = "FILE",
        requires = "url",
        conflicts_with = "bearer_token_env"
    )]
    pub bearer_token_file: Option<PathBuf>,
    /// Send `Authorization: Bearer <token>` with the token in the environment variable VAR
    #[arg(long, value_name = "VAR", requires = "url")]
    pub bearer_token_env: Option<String>,
}

#[derive(Debug, Args)]
pub struct SyncArgs {
    /// The folder holding the seed tools
    #[arg(long, value_name = "DIR")]
    pub seed: PathBuf,
    /// The data folder the tools are installed into (created when missing)
    #[arg(long, value_name = "DIR")]
    pub data: PathBuf,
}

/// The tools folders, the same way for every command: `DIR...` or `--dir DIR` (both
/// repeatable; `--dir` ones first), else `PI_TOOLS_DIRS`, else `./tools`.
#[derive(Debug, Args)]
pub struct DirsArg {
    /// Tools folders; the first wins on duplicate names [default: $PI_TOOLS_DIRS, else
    /// ./tools]
    #[arg(value_name = "DIR")]
    pub positional: Vec<PathBuf>,
    /// A tools folder, as DIR; repeatable
    #[arg(long = "dir", value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub dirs: DirsArg,
    #[command(flatten)]
    pub mcp: McpConfigArg,
    /// Print JSON on stdout: {tools: [{name, label, version, language, folder, description,
    /// warnings}, or for an MCP server's tool {name, label, server, mcpName, description,
    /// warnings}], skipped: [{path, reason}], notes: [{path, message}], sandbox,
    /// sandbox_limits: [{name, value, explicit, enforced: enforced|not_enforced|unlimited,
    /// by | why, fix}]}
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// What the tool should do, in your words
    #[arg(value_name = "QUERY")]
    pub query: String,
    #[command(flatten)]
    pub dirs: DirsArg,
    #[command(flatten)]
    pub mcp: McpConfigArg,
    /// How many tools to print at most
    #[arg(short = 'n', long, default_value_t = 10, value_name = "N")]
    pub limit: usize,
    /// Print JSON on stdout: an array, best first, of {name, score, description} (and
    /// `server` for an MCP server's tool)
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

/// The jail tools run in (docs/sandbox.md).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Sandbox")]
pub struct SandboxArgs {
    /// required: fail unless bwrap can jail the tools; auto: jail when bwrap works here,
    /// the lighter jail (Landlock + seccomp) where bwrap cannot make a user namespace,
    /// else warn once and run them unjailed; light: always the lighter jail, without
    /// namespaces; off: no jail, no limits
    #[arg(long = "sandbox", value_name = "MODE", default_value = "auto",
          value_parser = ["required", "auto", "light", "off"])]
    pub mode: String,
    /// Let tools read PATH (repeatable)
    #[arg(long, value_name = "PATH")]
    pub allow_read: Vec<PathBuf>,
    /// Let tools read and write PATH (repeatable)
    #[arg(long, value_name = "PATH")]
    pub allow_write: Vec<PathBuf>,
    /// No network for any tool (TOOL.md `sandbox: {network: false}` does it per tool)
    #[arg(long)]
    pub no_network: bool,
    /// Memory per tool process in MiB, RLIMIT_DATA; 0 = unlimited [default: 1024]
    #[arg(long, value_name = "MIB")]
    pub memory: Option<u64>,
    /// Memory of all of a call's (or worker's) processes together in MiB, a memory
    /// cgroup where one can be made; 0 = unlimited [default: 2048]
    #[arg(long, value_name = "MIB")]
    pub call_memory: Option<u64>,
    /// CPU seconds per call; 0 = unlimited [default: 300]
    #[arg(long, value_name = "SECS")]
    pub cpu: Option<u64>,
    /// Processes per call or worker; 0 = unlimited [default: 256]
    #[arg(long, value_name = "N")]
    pub max_processes: Option<u64>,
    /// Largest file a tool may write, in MiB; 0 = unlimited [default: 1024]
    #[arg(long, value_name = "MIB")]
    pub max_file_size: Option<u64>,
    /// Open files per tool process (at least 256) [default: 1024]
    #[arg(long, value_name = "N")]
    pub max_open_files: Option<u64>,
    /// Where the per-tool state folders (each tool's HOME) live
    /// [default: ~/.local/state/toolbind/HASH, one HASH per tools folder]
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

impl SandboxArgs {
    /// Refuses grants of paths that do not exist: the jail cannot bind them, so every call
    /// would fail; a typo is better reported before anything starts (a usage error).
    pub fn check(&self) -> Result<(), crate::exit::Failure> {
        let grants = self.allow_read.iter().map(|p| ("--allow-read", p));
        for (flag, path) in grants.chain(self.allow_write.iter().map(|p| ("--allow-write", p))) {
            if let Err(e) = std::fs::metadata(path) {
                return Err(crate::exit::Failure::usage(format!(
                    "{flag} {}: {e}; a grant must name an existing file or folder",
                    path.display()
                )));
            }
        }
        Ok(())
    }

    /// The runtime's sandbox policy from these flags.
    pub fn policy(&self) -> toolbind::sandbox::SandboxPolicy {
        use toolbind::sandbox::{SandboxLimits, SandboxMode, SandboxPolicy};
        // A setter only for a flag that was given: the limits remember which were set,
        // and only those fail a call under `required` when they cannot be enforced.
        let some = |n: u64, scale: u64| (n != 0).then(|| n.saturating_mul(scale));
        let mut limits = SandboxLimits::default();
        if let Some(n) = self.memory {
            limits = limits.memory(some(n, 1 << 20));
        }
        if let Some(n) = self.call_memory {
            limits = limits.call_memory(some(n, 1 << 20));
        }
        if let Some(n) = self.cpu {
            limits = limits.cpu((n != 0).then(|| std::time::Duration::from_secs(n)));
        }
        if let Some(n) = self.max_processes {
            limits = limits.processes(some(n, 1));
        }
        if let Some(n) = self.max_file_size {
            limits = limits.file_size(some(n, 1 << 20));
        }
        if let Some(n) = self.max_open_files {
            limits = limits.open_files(n.max(256));
        }
        // Hints about a path the jail hides name this command's flags, not the Rust API.
        let mut p = SandboxPolicy::new()
            .grant_hints(toolbind::sandbox::GrantHints::Flags)
            .mode(SandboxMode::from_name(&self.mode).unwrap_or_default())
            .network(!self.no_network)
            .limits(limits);
        for r in &self.allow_read {
            p = p.allow_read(std::path::absolute(r).unwrap_or_else(|_| r.clone()));
        }
        for w in &self.allow_write {
            p = p.allow_write(std::path::absolute(w).unwrap_or_else(|_| w.clone()));
        }
        if let Some(s) = &self.state_dir {
            p = p.state_dir(std::path::absolute(s).unwrap_or_else(|_| s.clone()));
        }
        p
    }
}

#[derive(Debug, Args)]
pub struct CallArgs {
    /// The tool's name
    pub name: String,
    /// The arguments as a JSON object, or `-` to read them from stdin [default: {}]
    #[arg(long, value_name = "JSON")]
    pub args: Option<String>,
    #[command(flatten)]
    pub dirs: DirsArg,
    #[command(flatten)]
    pub mcp: McpConfigArg,
    /// Stop the tool after SECS seconds [default: the tool's timeout, else 120]
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub timeout: Option<std::time::Duration>,
    /// How long an approval or one of the tool's questions waits for an answer on the
    /// terminal; then the question fails in the tool (an approval is denied) [default: 300]
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub ask_timeout: Option<std::time::Duration>,
    /// Print the whole result object as JSON instead of its text
    #[arg(long)]
    pub json: bool,
    /// Approve the call without asking when it needs approval (TOOL.md `approval:
    /// always`). Without it the terminal asks; with no terminal the call is denied
    #[arg(long)]
    pub yes: bool,
    #[command(flatten)]
    pub spill: SpillArg,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

#[derive(Debug, Args)]
pub struct SpillArg {
    /// Where the full text of a truncated result, and binary blocks over 16 MiB, are saved
    /// (a private 0700 folder, 0600 files, pruned after 7 days or past 256 MiB) [default:
    /// $XDG_STATE_HOME/toolbind/spill, else ~/.local/state/toolbind/spill]
    #[arg(long, value_name = "DIR")]
    pub spill_dir: Option<PathBuf>,
}

impl SpillArg {
    /// The spill folder to use.
    pub fn dir(&self) -> PathBuf {
        self.spill_dir
            .clone()
            .unwrap_or_else(toolbind::runtime::default_spill_dir)
    }
}

fn parse_secs(s: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if secs.is_nan() || secs <= 0.0 {
        return Err(format!("the timeout must be more than 0 seconds, got {s}"));
    }
    std::time::Duration::try_from_secs_f64(secs).map_err(|e| format!("timeout {s}: {e}"))
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub dirs: DirsArg,
    /// The longest request accepted (a stdio line, an HTTP body; at least 1024); a longer
    /// one is answered with a JSON-RPC error naming this limit (HTTP status 413) (16 MiB by
    /// default) [default: 16777216]
    #[arg(long, value_name = "BYTES")]
    pub max_request_bytes: Option<usize>,
    /// Stop a tool call after SECS seconds unless its TOOL.md sets a timeout [default: 120]
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub timeout: Option<std::time::Duration>,
    /// How long a call's approval or one of its tool's questions waits for the client's
    /// answer; then the question fails in the tool (an approval is denied). The wait does
    /// not count against --timeout, up to three of these per call [default: 300]
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub ask_timeout: Option<std::time::Duration>,
    #[command(flatten)]
    pub spill: SpillArg,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    /// Tool calls running at once (at least 1). Over HTTP one more is refused with HTTP
    /// 429 and a JSON-RPC error; over stdio it waits until a running call ends (a
    /// cancellation while it waits ends it) [default: 32]
    #[arg(long, value_name = "N")]
    pub max_concurrent_calls: Option<usize>,
    #[command(flatten)]
    pub tasks: TaskArgs,
    #[command(flatten)]
    pub rounds: RoundArgs,
    #[command(flatten)]
    pub http: HttpArgs,
    #[command(flatten)]
    pub progressive: ProgressiveArgs,
    #[command(flatten)]
    pub skills: SkillArgs,
}

/// MCP's skills extension (SEP-2640) in `serve` (docs/http.md, "Skills").
#[derive(Debug, Args)]
#[command(next_help_heading = "Skills")]
pub struct SkillArgs {
    /// Serve the Agent Skills in DIR (each subfolder with a SKILL.md, as it is) over MCP's
    /// skills extension; repeatable
    #[arg(long = "skills", value_name = "DIR")]
    pub skill_dirs: Vec<PathBuf>,
    /// Also serve each tool as a skill, its SKILL.md generated from its TOOL.md (`web_fetch`
    /// as skill `web-fetch`)
    #[arg(long)]
    pub tool_skills: bool,
}

/// Progressive discovery for MCP clients that cannot defer tools (docs/mcp.md).
#[derive(Debug, Args)]
#[command(next_help_heading = "Progressive discovery")]
pub struct ProgressiveArgs {
    /// List only the core tools (--core, and those whose TOOL.md says `discovery: always`)
    /// plus `search_tools` (a query in, the matching tools with their input schemas out)
    /// and `call_tool` (any tool by name, with its arguments). Every tool stays callable
    /// by its own name too
    #[arg(long)]
    pub progressive: bool,
    /// A tool listed from the start under --progressive; repeatable
    #[arg(long = "core", value_name = "TOOL", requires = "progressive")]
    pub core: Vec<String>,
}

/// MCP 2026-07-28's `InputRequiredResult`: a call whose tool asks waits, alive, for its
/// client's retry (docs/http.md, "Tools that ask").
#[derive(Debug, Args)]
#[command(next_help_heading = "Questions on MCP 2026-07-28")]
pub struct RoundArgs {
    /// Calls that may wait for their client's answers at once (at least 1); one more is
    /// stopped and answered with a JSON-RPC error. Each keeps its slot of
    /// --max-concurrent-calls while it waits [default: half of --max-concurrent-calls]
    #[arg(long, value_name = "N")]
    pub max_pending_calls: Option<usize>,
    /// How long a call waits for its client's retry, each round; then it is stopped
    /// [default: 300]
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub pending_ttl: Option<std::time::Duration>,
    /// Read the key that seals `requestState` from PATH (at least 32 bytes). Replicas that
    /// share one tell a retry meant for another replica from a forged one [default: a key
    /// drawn at start, good for this process]
    #[arg(long, value_name = "PATH")]
    pub request_state_key_file: Option<PathBuf>,
}

/// MCP's tasks extension: calls of `task: optional | required` tools, for clients that
/// take tasks (docs/http.md, "Tasks").
#[derive(Debug, Args)]
#[command(next_help_heading = "Tasks")]
pub struct TaskArgs {
    /// Unfinished tasks at once (at least 1); one more is refused with a JSON-RPC error.
    /// Beyond --max-concurrent-calls, tasks wait for a running call to end [default: 1000]
    #[arg(long, value_name = "N")]
    pub max_tasks: Option<usize>,
    /// How long a task is kept, from its creation while it runs (then it is stopped) and
    /// from its end once finished (then its result is dropped); a tool whose timeout is
    /// longer gets its timeout [default: 300]
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub task_ttl: Option<std::time::Duration>,
    /// What finished tasks' results may take in all; past it the oldest are dropped first
    /// (64 MiB by default) [default: 67108864]
    #[arg(long, value_name = "BYTES")]
    pub task_memory: Option<usize>,
}

/// `serve --http`: MCP Streamable HTTP (docs/http.md).
#[derive(Debug, Args)]
#[command(next_help_heading = "HTTP")]
pub struct HttpArgs {
    /// Serve MCP Streamable HTTP on ADDR (HOST:PORT; port 0 picks a free one) at the path
    /// /mcp, instead of stdio
    #[arg(long = "http", value_name = "ADDR")]
    pub addr: Option<String>,
    /// Read the bearer token clients must send from PATH [default: $TOOLBIND_TOKEN, else a
    /// generated token in a 0600 file, printed on stderr]
    #[arg(long, value_name = "PATH", requires = "addr")]
    pub auth_token_file: Option<PathBuf>,
    /// Also accept requests whose Host header names HOST (or HOST:PORT); repeatable.
    /// Loopback names are always accepted; `*` accepts any Host (behind a proxy that
    /// checks it)
    #[arg(long, value_name = "HOST", requires = "addr")]
    pub allowed_host: Vec<String>,
    /// Accept requests from browser pages of ORIGIN (`scheme://host` or
    /// `scheme://host:port`, port `*` for any); repeatable. Pages on localhost, 127.0.0.1
    /// and [::1] are accepted without it when serving on a loopback address. Requests with
    /// any other Origin header get 403; requests without one (non-browser clients) are not
    /// affected
    #[arg(long, value_name = "ORIGIN", requires = "addr")]
    pub allowed_origin: Vec<String>,
    /// No sessions: every POST is answered on its own, so any replica behind a load
    /// balancer can answer any request (no tools/list_changed, no cancellation by
    /// notification)
    #[arg(long, requires = "addr")]
    pub stateless: bool,
    /// Open sessions (at least 1); one more `initialize` is refused with HTTP 503 and a
    /// JSON-RPC error (an idle session closes after 5 minutes) [default: 256]
    #[arg(long, value_name = "N", requires = "addr")]
    pub max_sessions: Option<usize>,
    /// On SIGTERM or Ctrl-C, how long calls in flight may still run before they are
    /// cancelled [default: 20]
    #[arg(long, value_name = "SECS", value_parser = parse_secs, requires = "addr")]
    pub drain_timeout: Option<std::time::Duration>,
}
