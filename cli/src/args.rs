//! The command line.

use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use toolbind_codegen::schema::Dialect;

/// Check, generate, inspect, run and serve folders of TOOL.md agent tools.
#[derive(Debug, Parser)]
#[command(name = "toolbind", version)]
#[command(
    after_help = "A tools folder holds one sub-folder per tool: <name>/TOOL.md plus \
its entry file (index.ts, index.py or index.sh). DIR defaults to ./tools."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate tools folders and print every error, rustc-style
    #[command(after_help = "Exit status: 0 when every tool is valid, 1 on any error.")]
    Check(CheckArgs),
    /// Print the Rust bindings build.rs would generate
    Gen(GenArgs),
    /// Print the tool definitions as JSON for a model provider
    Schema(SchemaArgs),
    /// Print the system-prompt text for the tools
    Prompt(DirArg),
    /// Print Markdown docs: a tools table and each tool's documentation
    Docs(DirArg),
    /// Copy seed tools into a data folder by version
    Sync(SyncArgs),
    /// List the tools a runtime would load, then the folders it would skip and why
    List(ListArgs),
    /// Validate arguments and run one tool
    #[command(
        after_help = "Progress goes to stderr, the result's text to stdout. Ctrl-C cancels \
the tool through its abort signal; a second Ctrl-C kills it.\n\
Exit status: 0 ok, 1 the tool returned an error, 2 usage error (bad --args, unknown tool, \
invalid arguments), 130 after Ctrl-C, 143 after SIGTERM.\n\n\
Example: toolbind call web_fetch --args '{\"url\": \"https://example.com\"}'"
    )]
    Call(CallArgs),
    /// Serve the tools over MCP on stdin/stdout
    #[command(
        after_help = "Logs go to stderr. The tools folders are re-read when they \
change, and clients get notifications/tools/list_changed.\n\n\
MCP client configuration: {\"command\": \"toolbind\", \"args\": [\"serve\", \"--dir\", \"/path/to/tools\"]}"
    )]
    Serve(ServeArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Tools folders to check [default: ./tools]
    #[arg(value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// `human`: rustc-style reports on stderr (coloured on a terminal); `json`: an array of
    /// {file, line, column, severity, message, hint} on stdout
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct DirArg {
    /// The tools folder
    #[arg(value_name = "DIR", default_value = "tools")]
    pub dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct GenArgs {
    #[command(flatten)]
    pub dir: DirArg,
    /// Write the bindings to FILE (only when its content changes) instead of stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    #[command(flatten)]
    pub dir: DirArg,
    /// The provider's flavour of tool definition
    #[arg(
        long,
        value_name = "DIALECT",
        default_value = "portable",
        value_parser = dialect_parser(),
    )]
    pub dialect: Dialect,
}

fn dialect_parser() -> impl TypedValueParser<Value = Dialect> {
    PossibleValuesParser::new(Dialect::ALL.map(Dialect::as_str))
        .map(|s| Dialect::from_name(&s).unwrap_or(Dialect::Portable))
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

#[derive(Debug, Args)]
pub struct DirsArg {
    /// A tools folder; repeat for several, the first wins on duplicate names
    /// [default: $PI_TOOLS_DIRS, else ./tools]
    #[arg(long = "dir", value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub dirs: DirsArg,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

/// The jail tools run in (README, "Sandbox").
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Sandbox")]
pub struct SandboxArgs {
    /// required: fail unless bwrap can jail the tools; auto: jail when bwrap works here,
    /// else warn once and run them unjailed; off: no jail, no limits
    #[arg(long = "sandbox", value_name = "MODE", default_value = "auto",
          value_parser = ["required", "auto", "off"])]
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
    /// The runtime's sandbox policy from these flags.
    pub fn policy(&self) -> toolbind::exec::SandboxPolicy {
        use toolbind::exec::{SandboxLimits, SandboxMode, SandboxPolicy};
        let d = SandboxLimits::default();
        let some = |v: Option<u64>, default: Option<u64>, scale: u64| match v {
            None => default,
            Some(0) => None,
            Some(n) => Some(n.saturating_mul(scale)),
        };
        let limits = SandboxLimits {
            memory: some(self.memory, d.memory, 1 << 20),
            cpu: match self.cpu {
                None => d.cpu,
                Some(0) => None,
                Some(n) => Some(std::time::Duration::from_secs(n)),
            },
            processes: some(self.max_processes, d.processes, 1),
            file_size: some(self.max_file_size, d.file_size, 1 << 20),
            open_files: self.max_open_files.unwrap_or(d.open_files).max(256),
            ..d
        };
        let mut p = SandboxPolicy::new()
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
    /// Stop the tool after SECS seconds [default: the tool's timeout, else 120]
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub timeout: Option<std::time::Duration>,
    /// Print the whole result object as JSON instead of its text
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
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
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}
