//! The build.rs API, in the prost-build / typify style.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::emit::{self, Generator};
use crate::load::{self, load_tools};
use crate::mcp::{self, Snapshot};
use crate::model::Pos;
use crate::model::ToolSpec;
use crate::prompt;
use crate::schema::{self, Dialect};
use crate::validate::Options;

/// Configures code generation for a tools folder. Use it from `build.rs`:
///
/// ```no_run
/// // build.rs
/// fn main() -> Result<(), toolbind_codegen::Error> {
///     toolbind_codegen::Config::new()
///         .tools_dir("tools")
///         .emit_schemas(true)
///         .compile()
/// }
/// ```
///
/// and include the result in the crate:
///
/// ```ignore
/// toolbind::include_tools!();
/// ```
#[derive(Debug, Clone)]
pub struct Config {
    tools_dirs: Vec<PathBuf>,
    mcp_snapshots: Vec<PathBuf>,
    mcp_prefixes: BTreeMap<String, String>,
    mcp_accepted: BTreeSet<String>,
    out_dir: Option<PathBuf>,
    out_file: String,
    emit_rust: bool,
    emit_schemas: bool,
    emit_prompt: bool,
    emit_docs: bool,
    options: Options,
    generator: Generator,
    deny_warnings: bool,
    print_warnings: bool,
    runtime_path: String,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            tools_dirs: Vec::new(),
            mcp_snapshots: Vec::new(),
            mcp_prefixes: BTreeMap::new(),
            mcp_accepted: BTreeSet::new(),
            out_dir: None,
            out_file: "tools.rs".into(),
            emit_rust: true,
            emit_schemas: false,
            emit_prompt: false,
            emit_docs: false,
            options: Options::default(),
            generator: Generator::Build,
            deny_warnings: false,
            print_warnings: true,
            runtime_path: emit::RUNTIME_PATH.to_owned(),
        }
    }
}

/// The outputs of [`Config::generate`]: file name -> content, plus the validated tools.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Generated {
    /// Output files by name relative to the output folder: the Rust bindings (`tools.rs`),
    /// and when enabled `schemas/<dialect>.json`, `prompt.md`, `TOOLS.md`.
    pub files: BTreeMap<String, String>,
    /// The tools, in folder order.
    pub tools: Vec<ToolSpec>,
}

impl Generated {
    /// The Rust bindings, when [`Config::emit_rust`] is on.
    pub fn rust(&self) -> Option<&str> {
        self.files
            .iter()
            .find(|(k, _)| k.ends_with(".rs"))
            .map(|(_, v)| v.as_str())
    }
}

/// Why generation failed.
#[derive(Clone)]
#[non_exhaustive]
pub enum Error {
    /// The tools folder has malformed files: every diagnostic of the run.
    Invalid(Diagnostics),
    /// Writing an output failed: the file, and why.
    Write {
        /// The file.
        path: PathBuf,
        /// Why writing it failed (its `kind()`: `PermissionDenied`, `StorageFull`, ...).
        /// The message says it already; [`source`](std::error::Error::source) is its own
        /// cause, if any, so an error chain prints each cause once.
        error: std::sync::Arc<std::io::Error>,
    },
    /// `compile()` outside a build script (no `OUT_DIR`) without `out_dir`.
    NoOutDir,
    /// [`Config::runtime_path`] is not a Rust path.
    RuntimePath(String),
}

impl Error {
    /// The diagnostics, when the input was malformed.
    pub fn diagnostics(&self) -> Option<&Diagnostics> {
        match self {
            Error::Invalid(d) => Some(d),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Invalid(d) => write!(f, "{}", d.summary().trim_start_matches("error: ")),
            Error::Write { path, error } => {
                write!(f, "cannot write {}: {error}", path.display())
            }
            Error::NoOutDir => f.write_str(
                "OUT_DIR is not set: call compile() from build.rs, or set Config::out_dir",
            ),
            Error::RuntimePath(p) => write!(
                f,
                "Config::runtime_path({p:?}) is not a Rust path: give the path your crate \
                 reaches the toolbind runtime by, e.g. \"::toolbind\" or \"::my_rt\" for \
                 `my_rt = {{ package = \"toolbind\", .. }}`"
            ),
        }
    }
}

// Debug is what `fn main() -> Result<(), Error>` prints: keep it the one-line summary.
impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Write { error, .. } => error.source(),
            _ => None,
        }
    }
}

impl Config {
    /// A configuration with the defaults: Rust bindings only, into `$OUT_DIR/toolbind/tools.rs`,
    /// strict portable-name rules.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tools folder (call it more than once for several). A relative path is resolved
    /// against `CARGO_MANIFEST_DIR` when set, so build scripts may write `"tools"`. Tool
    /// names must be unique across all folders.
    pub fn tools_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.tools_dirs.push(resolve(dir.as_ref()));
        self
    }

    /// Adds an MCP server's snapshot (`toolbind mcp snapshot` writes them, by default as
    /// `mcp/<server>.json`; call this once per server). The bindings get a module named
    /// after the snapshot's name, with a module per tool (`filesystem::edit_file::Params`),
    /// the server's own `ToolCall` and `TOOLS`; schemas, prompt and docs include its tools.
    /// A relative path is resolved against `CARGO_MANIFEST_DIR` when set. The bindings
    /// need toolbind's `mcp` feature.
    pub fn mcp_snapshot(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.mcp_snapshots.push(resolve(path.as_ref()));
        self
    }

    /// Puts `prefix` in front of the provider-facing names of the tools of the snapshot
    /// named `server` (`mcp_prefix("github", "gh_")`: `create_issue` → `gh_create_issue`),
    /// for two sources that share a tool name. The name the server is called with is
    /// unchanged.
    pub fn mcp_prefix(
        &mut self,
        server: impl Into<String>,
        prefix: impl Into<String>,
    ) -> &mut Self {
        self.mcp_prefixes.insert(server.into(), prefix.into());
        self
    }

    /// Accepts the warnings about the tools of the snapshot named `server`: parts of its
    /// schemas that bindings cannot type (they become `serde_json::Value`), names some
    /// provider rejects. They are the server's, not yours to fix, and cargo shows a build
    /// script's warnings again on every build, so once read they can be silenced here:
    /// neither printed nor denied ([`deny_warnings`](Self::deny_warnings)). Warnings about
    /// the snapshot file itself (a hash that does not match) are still shown.
    /// `toolbind mcp snapshot` and `toolbind mcp check` show them all.
    pub fn accept_mcp_warnings(&mut self, server: impl Into<String>) -> &mut Self {
        self.mcp_accepted.insert(server.into());
        self
    }

    /// Where [`compile`](Self::compile) writes; default `$OUT_DIR/toolbind`.
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The Rust file's name; default `tools.rs`. `toolbind::include_tools!("name.rs")` then
    /// includes it.
    pub fn out_file(&mut self, name: impl Into<String>) -> &mut Self {
        self.out_file = name.into();
        self
    }

    /// Emit the Rust bindings (default on).
    pub fn emit_rust(&mut self, on: bool) -> &mut Self {
        self.emit_rust = on;
        self
    }

    /// Emit `schemas/<dialect>.json` for every provider dialect (default off).
    pub fn emit_schemas(&mut self, on: bool) -> &mut Self {
        self.emit_schemas = on;
        self
    }

    /// Emit `prompt.md`, the system-prompt text (default off).
    pub fn emit_prompt(&mut self, on: bool) -> &mut Self {
        self.emit_prompt = on;
        self
    }

    /// Emit `TOOLS.md`, the Markdown tools table and per-tool docs (default off).
    pub fn emit_docs(&mut self, on: bool) -> &mut Self {
        self.emit_docs = on;
        self
    }

    /// Reject tool and parameter names that no model provider accepts (default `true`).
    /// A name only some providers reject is a warning either way, and those dialects leave
    /// the tool out. Turn it off only for tools that never go to a provider.
    pub fn portable_names(&mut self, on: bool) -> &mut Self {
        self.options.portable_names = on;
        self
    }

    /// Fail on warnings too (default `false`): extra keys, names some provider rejects,
    /// fallback Rust identifiers, converted defaults. Warnings are always printed, as
    /// `cargo::warning=` lines from build.rs.
    pub fn deny_warnings(&mut self, on: bool) -> &mut Self {
        self.deny_warnings = on;
        self
    }

    /// Which shell the output is for (the proc-macro passes [`Generator::Macro`]). Not
    /// public API: toolbind's own proc-macro sets it.
    #[doc(hidden)]
    pub fn generator(&mut self, generator: Generator) -> &mut Self {
        self.generator = generator;
        self
    }

    /// The path generated code reaches the runtime by (default `::toolbind`), for a
    /// renamed dependency (`rt = { package = "toolbind", .. }` → `"::rt"`) or a re-export
    /// (`"crate::deps::toolbind"`), like prost-build's `prost_path`. A path that is not a
    /// Rust path fails [`generate`](Self::generate) with [`Error::RuntimePath`].
    pub fn runtime_path(&mut self, path: &str) -> &mut Self {
        self.runtime_path = path.trim().to_owned();
        self
    }

    /// The tools folders, resolved; `tools` (beside Cargo.toml) when none was set.
    pub fn tools_dirs(&self) -> Vec<PathBuf> {
        if self.tools_dirs.is_empty() {
            vec![resolve(Path::new("tools"))]
        } else {
            self.tools_dirs.clone()
        }
    }

    /// Print warnings as `cargo::warning=` lines in [`compile`](Self::compile) (default
    /// `true`). Turn it off for a tools folder whose warnings you have read and accept
    /// (deliberate metadata keys, say); they stay on [`Generated::tools`].
    pub fn print_warnings(&mut self, on: bool) -> &mut Self {
        self.print_warnings = on;
        self
    }

    /// Parses, validates and emits without touching the disk. The warnings are on the
    /// returned tools ([`crate::warnings`]); with [`deny_warnings`](Self::deny_warnings)
    /// they fail the run as [`Error::Invalid`].
    pub fn generate(&self) -> Result<Generated, Error> {
        if !is_rust_path(&self.runtime_path) {
            return Err(Error::RuntimePath(self.runtime_path.clone()));
        }
        let dirs = if self.tools_dirs.is_empty() && !self.mcp_snapshots.is_empty() {
            // Only MCP servers: no tools folder is looked for.
            Vec::new()
        } else {
            self.tools_dirs()
        };
        let local = load_tools(&dirs, &self.options).map_err(Error::Invalid)?;
        let servers = self.mcp_servers(&local).map_err(Error::Invalid)?;
        let mut tools = local.clone();
        for s in &servers {
            tools.extend(s.tools.iter().cloned());
        }
        if self.deny_warnings {
            let mut w = load::warnings(&tools);
            if !w.is_empty() {
                // Denied warnings are errors, as with rustc's `-D warnings`.
                for d in &mut w.0 {
                    d.severity = crate::diagnostic::Severity::Error;
                    d.hint = Some(match d.hint.take() {
                        Some(h) => format!("{h}; denied by `Config::deny_warnings(true)`"),
                        None => "denied by `Config::deny_warnings(true)`".to_owned(),
                    });
                }
                return Err(Error::Invalid(w));
            }
        }
        let mut files = BTreeMap::new();
        if self.emit_rust {
            files.insert(
                self.out_file.clone(),
                emit::rust_with_mcp(&local, &servers, self.generator, &self.runtime_path),
            );
        }
        if self.emit_schemas {
            for d in Dialect::ALL {
                files.insert(
                    format!("schemas/{d}.json"),
                    schema::definitions_json(&tools, d),
                );
            }
        }
        if self.emit_prompt {
            files.insert("prompt.md".into(), prompt::system_prompt(&tools));
        }
        if self.emit_docs {
            files.insert("TOOLS.md".into(), prompt::docs(&tools));
        }
        Ok(Generated { files, tools })
    }

    /// Generates and writes the outputs (only files whose content changed, so a no-op build
    /// does not touch mtimes), and prints `cargo::rerun-if-changed` for every tools folder so
    /// edited and new tools are picked up. Each warning is printed as a `cargo::warning=`
    /// line (`file:line:col: warning: message (help: ...)`), which cargo shows without
    /// failing the build. On malformed input it prints every diagnostic, rustc-style, to
    /// stderr (cargo shows it) and returns [`Error::Invalid`], whose `Debug` is a one-line
    /// summary.
    pub fn compile(&self) -> Result<(), Error> {
        if !self.tools_dirs.is_empty() || self.mcp_snapshots.is_empty() {
            for dir in self.tools_dirs() {
                println!("cargo::rerun-if-changed={}", dir.display());
            }
        }
        for file in &self.mcp_snapshots {
            println!("cargo::rerun-if-changed={}", file.display());
        }
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => {
                PathBuf::from(std::env::var_os("OUT_DIR").ok_or(Error::NoOutDir)?).join("toolbind")
            }
        };
        let generated = match self.generate() {
            Ok(g) => g,
            Err(e) => {
                if let Error::Invalid(d) = &e {
                    eprintln!("{}", d.render(false));
                }
                return Err(e);
            }
        };
        let warnings = if self.print_warnings {
            load::warnings(&generated.tools)
        } else {
            crate::diagnostic::Diagnostics::default()
        };
        for d in warnings.iter() {
            // One line per warning: cargo reads `cargo::warning=` up to the newline.
            println!("cargo::warning={}", d.plain().replace(['\n', '\r'], " "));
        }
        for (name, content) in &generated.files {
            write_if_changed(&out_dir.join(name), content)?;
        }
        Ok(())
    }
}

impl Config {
    /// Reads every MCP snapshot and maps its tools; a provider-facing name shared with a
    /// tools folder's tool or another server's, or a server module that would shadow a
    /// tool's, is an error that says how to tell them apart.
    fn mcp_servers(&self, local: &[ToolSpec]) -> Result<Vec<emit::McpServerCode>, Diagnostics> {
        let mut diags = Vec::new();
        let mut servers: Vec<emit::McpServerCode> = Vec::new();
        // Provider name -> where it comes from.
        let mut names: BTreeMap<String, String> = local
            .iter()
            .map(|t| (t.name.clone(), format!("the tool in {}", t.file.display())))
            .collect();
        for file in &self.mcp_snapshots {
            let (snap, warnings) = match Snapshot::read(file) {
                Ok(s) => s,
                Err(d) => {
                    diags.extend(d);
                    continue;
                }
            };
            diags.extend(warnings);
            let prefix = self.mcp_prefixes.get(&snap.name).map_or("", String::as_str);
            let mut tools = mcp::tool_specs(&snap, prefix);
            for w in tools.iter_mut().flat_map(|t| &mut t.warnings) {
                let silence = format!(
                    "the server's schema, not yours to fix: `Config::accept_mcp_warnings({:?})` silences it",
                    snap.name
                );
                w.hint = Some(match w.hint.take() {
                    Some(h) => format!("{h}; {silence}"),
                    None => silence,
                });
            }
            if self.mcp_accepted.contains(&snap.name) {
                for t in &mut tools {
                    t.warnings.clear();
                }
            }
            let module = crate::ident::module_name(&snap.name);
            diags.extend(module_clashes(file, &snap, &module, local, &servers));
            diags.extend(name_clashes(file, &snap, &module, &tools, &mut names));
            servers.push(
                emit::McpServerCode::new(
                    module,
                    snap.name.clone(),
                    format!("{} {}", snap.server.name, snap.server.version),
                    file.display().to_string(),
                    tools,
                )
                .with_snapshot(snap.to_json()),
            );
        }
        for server in self.mcp_prefixes.keys() {
            if !servers.iter().any(|s| &s.name == server) && diags.iter().all(|d| !d.is_error()) {
                diags.push(Diagnostic::new(
                    PathBuf::from("build.rs"),
                    Pos::NONE,
                    format!("`Config::mcp_prefix({server:?}, ..)` names no snapshot given to `mcp_snapshot`"),
                ));
            }
        }
        for server in &self.mcp_accepted {
            if !servers.iter().any(|s| &s.name == server) && diags.iter().all(|d| !d.is_error()) {
                diags.push(Diagnostic::new(
                    PathBuf::from("build.rs"),
                    Pos::NONE,
                    format!("`Config::accept_mcp_warnings({server:?})` names no snapshot given to `mcp_snapshot`"),
                ));
            }
        }
        if diags.iter().any(Diagnostic::is_error) {
            return Err(Diagnostics(diags));
        }
        // Warnings travel on the tools; the snapshot-level ones on the server's first tool.
        if let Some(first) = servers.iter_mut().find_map(|s| s.tools.first_mut()) {
            first.warnings.extend(diags);
        }
        Ok(servers)
    }
}

/// Writes `content` unless the file already holds exactly it.
pub(crate) fn write_if_changed(path: &Path, content: &str) -> Result<bool, Error> {
    if std::fs::read(path).is_ok_and(|old| old == content.as_bytes()) {
        return Ok(false);
    }
    let err = |e: std::io::Error| Error::Write {
        path: path.to_path_buf(),
        error: std::sync::Arc::new(e),
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(err)?;
    }
    std::fs::write(path, content).map_err(err)?;
    Ok(true)
}

/// A relative path against `CARGO_MANIFEST_DIR` when set (build scripts), else as given.
fn resolve(dir: &Path) -> PathBuf {
    match std::env::var_os("CARGO_MANIFEST_DIR") {
        Some(root) if dir.is_relative() => PathBuf::from(root).join(dir),
        _ => dir.to_path_buf(),
    }
}

/// `::a::b`, `a::b`, `crate::a`: identifiers (raw ones too) joined by `::`, with an
/// optional leading `::`.
fn is_rust_path(path: &str) -> bool {
    let body = path.strip_prefix("::").unwrap_or(path);
    !body.is_empty()
        && body.split("::").all(|seg| {
            let seg = seg.strip_prefix("r#").unwrap_or(seg);
            let mut chars = seg.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
                && seg != "_"
        })
}

/// A server whose Rust module would be a tool's or another server's.
fn module_clashes(
    file: &Path,
    snap: &Snapshot,
    module: &str,
    local: &[ToolSpec],
    servers: &[emit::McpServerCode],
) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let pos = snap.position("/name");
    if let Some(t) = local.iter().find(|t| t.rust_module == module) {
        diags.push(
            Diagnostic::new(file, pos, format!(
                "the server `{}` would be the Rust module `{module}`, which the tool `{}` ({}) already is",
                snap.name, t.name, t.file.display()
            ))
            .hint("take the snapshot under another name (`toolbind mcp snapshot --name`, or the server's key in the config)"),
        );
    }
    if let Some(s) = servers.iter().find(|s| s.module == module) {
        diags.push(
            Diagnostic::new(
                file,
                pos,
                format!(
                    "two snapshots would be the Rust module `{module}` (`{}` in {} and `{}`)",
                    s.name, s.file, snap.name
                ),
            )
            .hint("give each server its own name when taking the snapshots"),
        );
    }
    diags
}

/// A server's tools whose provider-facing name is already taken (`names`: provider name ->
/// where it comes from); the others take theirs.
fn name_clashes(
    file: &Path,
    snap: &Snapshot,
    module: &str,
    tools: &[ToolSpec],
    names: &mut BTreeMap<String, String>,
) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    for t in tools {
        let mcp_name = &t.mcp.as_ref().expect("an MCP tool").name;
        let here = format!(
            "the tool `{mcp_name}` of the server `{}` ({})",
            snap.name,
            file.display()
        );
        if let Some(prev) = names.get(&t.name) {
            let p = snap
                .tool_pointer(mcp_name)
                .map_or(Pos::new(1, 1), |ptr| snap.position(&format!("{ptr}/name")));
            diags.push(
                Diagnostic::new(
                    file,
                    p,
                    format!(
                        "a model would call {here} and {prev} by the same name `{}`",
                        t.name
                    ),
                )
                .hint(format!(
                    "give the server's tools a prefix: `Config::mcp_prefix({:?}, \"{}_\")`",
                    snap.name, module
                )),
            );
        } else {
            names.insert(t.name.clone(), here);
        }
    }
    diags
}
