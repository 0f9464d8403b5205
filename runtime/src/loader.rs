//! Loading tool folders: the [`Loader`] builds a
//! [`Registry`] from tools folders and `PI_TOOLS_DIRS`, and says what it
//! skipped and why ([`LoadWarning`]).

use crate::OsError;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use toolbind_codegen::Diagnostic;
use toolbind_codegen::model::{Language, ToolSpec};
use toolbind_codegen::{Options, TOOL_FILE};

use crate::ToolInfo;

/// The environment variable listing tools folders, colon-separated, as in the platform's
/// TOOLS.md.
pub const TOOLS_DIRS_ENV: &str = "PI_TOOLS_DIRS";

/// Splits a `PI_TOOLS_DIRS` value on `:`, ignoring empty entries (`a::b:` is `[a, b]`).
///
/// ```
/// use std::path::PathBuf;
/// assert_eq!(
///     toolbind::loader::parse_tools_dirs("/data/tools::./more:"),
///     vec![PathBuf::from("/data/tools"), PathBuf::from("./more")],
/// );
/// ```
pub fn parse_tools_dirs(value: &str) -> Vec<PathBuf> {
    value
        .split(':')
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// The loaded tools, by name, in load order.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    tools: Vec<ToolInfo>,
    index: HashMap<String, usize>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool. A tool of the same name already present wins: the new one is given back.
    #[allow(clippy::result_large_err)] // the rejected tool is handed back, not an error
    pub fn insert(&mut self, tool: impl Into<ToolInfo>) -> Result<(), ToolInfo> {
        let tool = tool.into();
        if self.index.contains_key(tool.name()) {
            return Err(tool);
        }
        self.index.insert(tool.name().to_owned(), self.tools.len());
        self.tools.push(tool);
        Ok(())
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&ToolInfo> {
        self.index.get(name).map(|i| &self.tools[*i])
    }

    /// Tool names in load order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.name())
    }

    /// Tools in load order.
    pub fn iter(&self) -> impl Iterator<Item = &ToolInfo> {
        self.tools.iter()
    }

    /// How many tools are loaded.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is loaded.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

impl<T: Into<ToolInfo>> FromIterator<T> for Registry {
    /// Collects tools; on a duplicate name the first wins.
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut r = Registry::new();
        for spec in iter {
            let _ = r.insert(spec);
        }
        r
    }
}

/// A folder the loader skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoadWarning {
    /// The tool folder (or, for [`LoadWarningKind::UnreadableDir`], the tools folder).
    pub path: PathBuf,
    /// Why it was skipped.
    pub kind: LoadWarningKind,
}

/// Why a folder was skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadWarningKind {
    /// A tools folder could not be read (missing, not a folder, no permission).
    UnreadableDir {
        /// The operating system's error.
        error: OsError,
    },
    /// A tools folder was given that is itself one tool's folder (it holds a TOOL.md).
    NotAToolsFolder {
        /// What is wrong, and the folder to pass instead.
        diagnostic: Diagnostic,
    },
    /// The tool folder has no TOOL.md.
    NoToolFile,
    /// TOOL.md is fine but the entry file for its language is missing.
    NoEntryFile {
        /// The tool's name from TOOL.md.
        tool: String,
        /// The tool's language.
        language: Language,
        /// The entry file names that language accepts.
        expected: &'static [&'static str],
    },
    /// TOOL.md or the entry file cannot be used as a file of the folder: a symlink out of
    /// the tool folder (never followed), a FIFO, device or other special file (never
    /// opened), a TOOL.md over [`toolbind_codegen::MAX_TOOL_FILE_BYTES`] (refused from its
    /// size, unread), or an error reading it. The diagnostic names the file and says which;
    /// it never quotes the file.
    Unreadable {
        /// The file and what is wrong with it.
        diagnostic: Diagnostic,
    },
    /// TOOL.md is malformed.
    Malformed {
        /// Every error found in the file.
        diagnostics: Vec<Diagnostic>,
    },
    /// Another folder has a tool of the same name; that one is kept.
    Duplicate {
        /// The tool name both folders use.
        name: String,
        /// The folder whose tool is kept.
        kept: PathBuf,
        /// Why that one wins: its folder is named after the tool, or it loads first.
        why: &'static str,
    },
    /// The tool loaded, with warnings (each a [`Diagnostic`] of warning severity).
    Warnings {
        /// The tool's name.
        tool: String,
        /// The warnings.
        diagnostics: Vec<Diagnostic>,
    },
    /// The tool loaded, but its folder is named differently from the tool.
    NameMismatch {
        /// The tool's name from TOOL.md.
        tool: String,
    },
    /// The folder's name has control characters (a newline could forge report lines).
    BadFolderName,
}

impl LoadWarning {
    /// Whether the folder was skipped (its tool is not in the registry). `false` for a
    /// tool that loaded with warnings or with a differently named folder.
    pub fn skipped(&self) -> bool {
        !matches!(
            self.kind,
            LoadWarningKind::Warnings { .. } | LoadWarningKind::NameMismatch { .. }
        )
    }
}

impl fmt::Display for LoadWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.display();
        match &self.kind {
            LoadWarningKind::UnreadableDir { error } => {
                write!(f, "cannot read tools folder {path}: {error}")
            }
            LoadWarningKind::NotAToolsFolder { diagnostic } => {
                write!(f, "{}", diagnostic.plain())
            }
            LoadWarningKind::NoToolFile => {
                write!(f, "skipped {path}: no {TOOL_FILE} in the folder")
            }
            LoadWarningKind::NoEntryFile {
                tool,
                language,
                expected,
            } => write!(
                f,
                "skipped {path}: tool `{tool}` has no entry file (a {language} tool needs {})",
                expected.join(" or ")
            ),
            LoadWarningKind::Unreadable { diagnostic } => {
                write!(f, "skipped {path}: {}", diagnostic.message)?;
                if let Some(h) = &diagnostic.hint {
                    write!(f, " (help: {h})")?;
                }
                Ok(())
            }
            LoadWarningKind::Malformed { diagnostics } => {
                write!(f, "skipped {path}: malformed {TOOL_FILE}")?;
                for d in diagnostics {
                    write!(f, "\n  {}", d.plain())?;
                }
                Ok(())
            }
            LoadWarningKind::Duplicate { name, kept, why } => write!(
                f,
                "skipped {path}: duplicate tool name `{name}`; {} wins ({why})",
                kept.display()
            ),
            LoadWarningKind::Warnings { tool, diagnostics } => {
                write!(f, "loaded `{tool}` from {path} with warnings")?;
                for d in diagnostics {
                    write!(f, "\n  {}", d.plain())?;
                }
                Ok(())
            }
            LoadWarningKind::NameMismatch { tool } => write!(
                f,
                "folder {path} holds the tool `{tool}`: the folder is named differently from the tool"
            ),
            LoadWarningKind::BadFolderName => write!(
                f,
                "skipped {}: the folder name has control characters",
                self.path.to_string_lossy().escape_debug()
            ),
        }
    }
}

/// A callback receiving each [`LoadWarning`] as it happens.
pub type WarningHook = Arc<dyn Fn(&LoadWarning) + Send + Sync>;

#[derive(Clone, Default)]
enum Hook {
    #[default]
    Stderr,
    Quiet,
    Custom(WarningHook),
}

/// Configures and runs a load.
///
/// The tool loader: builds a [`Registry`] from tool folders, skipping bad ones loudly.
///
/// Folders come from an explicit list and, on request, from `PI_TOOLS_DIRS`
/// (colon-separated, empty entries ignored), explicit folders first. Each tools folder's
/// sub-folders are tools (hidden ones and plain files are ignored). A tool folder is skipped
/// with a [`LoadWarning`] when it has no TOOL.md, no entry file for its language, a
/// TOOL.md with errors (the warning carries the diagnostics; a tool name that is not one
/// plain folder name, such as `..`, is one), a TOOL.md or entry file that is a symlink out
/// of the tool folder, a special file or (TOOL.md) over 1 MiB
/// ([`LoadWarningKind::Unreadable`]: never followed, opened or quoted), or a folder name
/// with control characters. A TOOL.md with only *warnings* (extra keys, names some
/// provider rejects...) is loaded, and its warnings reported
/// ([`LoadWarningKind::Warnings`]): the runtime never skips a tool for a warning. A
/// folder whose name differs from its tool's name is reported too. When two folders claim
/// one tool name, the one whose folder is named after the tool wins, else the first in
/// load order, and the loser is reported with the reason: a tool is never shadowed
/// silently. Loading only reads files: it never runs a tool.
///
/// Warnings are returned and, by default, also printed to stderr as
/// `toolbind: warning: ...`; [`Loader::on_warning`] replaces the printing,
/// [`Loader::quiet`] turns it off.
///
/// ```no_run
/// use toolbind::Loader;
///
/// let loaded = Loader::new().dir("/data/tools").env().load();
/// for w in &loaded.warnings {
///     // already printed to stderr; also here to show in a UI
///     let _ = w.to_string();
/// }
/// let registry = loaded.registry;
/// println!("{} tools: {:?}", registry.len(), registry.names().collect::<Vec<_>>());
/// ```
#[derive(Clone, Default)]
pub struct Loader {
    dirs: Vec<PathBuf>,
    env: bool,
    hook: Hook,
}

impl fmt::Debug for Loader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Loader")
            .field("dirs", &self.dirs)
            .field("env", &self.env)
            .finish_non_exhaustive()
    }
}

/// The result of a load: the registry and every warning.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Loaded {
    /// The tools that loaded.
    pub registry: Registry,
    /// Every skipped folder, in load order.
    pub warnings: Vec<LoadWarning>,
}

impl Loader {
    /// A loader with no folders, printing warnings to stderr.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tools folder (its sub-folders are tools). Earlier folders win on duplicates.
    /// A relative path is made absolute against the current directory when it is given
    /// (`std::path::absolute`), so changing directory later does not change it.
    /// A tool loaded from it has an absolute folder, which is what a jailed `python3`
    /// or `bash` is given, whatever directory it runs in.
    pub fn dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dirs.push(crate::dirs::given(dir.into()));
        self
    }

    /// Adds several tools folders, in order; each as [`dir`](Self::dir) takes it.
    pub fn dirs<I, P>(mut self, dirs: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        self.dirs
            .extend(dirs.into_iter().map(|d| crate::dirs::given(d.into())));
        self
    }

    /// Also loads the folders listed in `PI_TOOLS_DIRS` (read when [`load`](Self::load)
    /// runs, and a relative entry made absolute then), after the explicit ones.
    pub fn env(mut self) -> Self {
        self.env = true;
        self
    }

    /// Sends each warning to `hook` instead of stderr.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let sink = seen.clone();
    /// let loaded = toolbind::Loader::new()
    ///     .dir("/no/such/folder")
    ///     .on_warning(move |w| sink.lock().unwrap().push(w.to_string()))
    ///     .load();
    /// assert_eq!(seen.lock().unwrap().len(), loaded.warnings.len());
    /// assert!(seen.lock().unwrap()[0].starts_with("cannot read tools folder /no/such/folder"));
    /// ```
    pub fn on_warning(mut self, hook: impl Fn(&LoadWarning) + Send + Sync + 'static) -> Self {
        self.hook = Hook::Custom(Arc::new(hook));
        self
    }

    /// Does not print warnings (they are still returned in [`Loaded::warnings`]).
    pub fn quiet(mut self) -> Self {
        self.hook = Hook::Quiet;
        self
    }

    /// The tools folders a load reads, in order: the explicit ones, then `PI_TOOLS_DIRS`'s.
    pub fn tools_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = self.dirs.clone();
        if self.env
            && let Some(v) = std::env::var_os(TOOLS_DIRS_ENV)
        {
            let listed = parse_tools_dirs(&v.to_string_lossy());
            dirs.extend(listed.into_iter().map(crate::dirs::given));
        }
        dirs
    }

    /// Loads every tool folder, skipping (and reporting) the bad ones.
    pub fn load(&self) -> Loaded {
        let mut loaded = Loaded::default();
        // The winners, in load order; `index` maps a name to its slot.
        let mut kept: Vec<(PathBuf, ToolSpec)> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        for dir in self.tools_dirs() {
            // The folder's own error, as the operating system gave it.
            if let Err(e) = std::fs::read_dir(&dir) {
                let error = e.into();
                self.warn(&mut loaded, dir, LoadWarningKind::UnreadableDir { error });
                continue;
            }
            let folders = match toolbind_codegen::tool_folders(&dir) {
                Ok(f) => f,
                Err(diagnostic) => {
                    let kind = LoadWarningKind::NotAToolsFolder { diagnostic };
                    self.warn(&mut loaded, dir, kind);
                    continue;
                }
            };
            for folder in folders {
                let folder_name = folder
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if folder_name.chars().any(char::is_control) {
                    self.warn(&mut loaded, folder, LoadWarningKind::BadFolderName);
                    continue;
                }
                let spec = match load_folder(&folder) {
                    Ok(spec) => spec,
                    Err(kind) => {
                        self.warn(&mut loaded, folder, kind);
                        continue;
                    }
                };
                if !spec.warnings.is_empty() {
                    let kind = LoadWarningKind::Warnings {
                        tool: spec.name.clone(),
                        diagnostics: spec.warnings.clone(),
                    };
                    self.warn(&mut loaded, folder.clone(), kind);
                }
                let named_after = folder_name == spec.name;
                if !named_after {
                    let kind = LoadWarningKind::NameMismatch {
                        tool: spec.name.clone(),
                    };
                    self.warn(&mut loaded, folder.clone(), kind);
                }
                let Some(&slot) = index.get(&spec.name) else {
                    index.insert(spec.name.clone(), kept.len());
                    kept.push((folder, spec));
                    continue;
                };
                let (old_folder, old_spec) = &kept[slot];
                let old_named_after = old_folder.file_name().map(|n| n.to_string_lossy())
                    == Some(old_spec.name.as_str().into());
                if named_after && !old_named_after {
                    // The folder named after the tool is its owner; the other is an impostor.
                    let kind = LoadWarningKind::Duplicate {
                        name: spec.name.clone(),
                        kept: folder.clone(),
                        why: "its folder is named after the tool",
                    };
                    let loser = old_folder.clone();
                    self.warn(&mut loaded, loser, kind);
                    kept[slot] = (folder, spec);
                } else {
                    let why = if old_named_after {
                        "its folder is named after the tool"
                    } else {
                        "it loads first"
                    };
                    let kind = LoadWarningKind::Duplicate {
                        name: spec.name.clone(),
                        kept: old_folder.clone(),
                        why,
                    };
                    self.warn(&mut loaded, folder, kind);
                }
            }
        }
        for (_, spec) in kept {
            let _ = loaded.registry.insert(spec);
        }
        loaded
    }

    fn warn(&self, loaded: &mut Loaded, path: PathBuf, kind: LoadWarningKind) {
        let w = LoadWarning { path, kind };
        match &self.hook {
            Hook::Stderr => crate::telemetry::warn(&format!("toolbind: warning: {w}")),
            Hook::Quiet => {}
            Hook::Custom(f) => f(&w),
        }
        loaded.warnings.push(w);
    }
}

/// Loads the tools of `dirs` with the default [`Loader`] (warnings printed to stderr).
pub fn load<P: AsRef<Path>>(dirs: &[P]) -> Loaded {
    Loader::new()
        .dirs(dirs.iter().map(|d| d.as_ref().to_path_buf()))
        .load()
}

fn load_folder(folder: &Path) -> Result<ToolSpec, LoadWarningKind> {
    let file = folder.join(TOOL_FILE);
    // The rule every command shares: no symlink out of the folder, no special file, no
    // TOOL.md over the size limit; the error names the file and quotes nothing of it.
    let bytes = match toolbind_codegen::read_tool_file(folder) {
        Ok(b) => b,
        Err(e) if e.is_not_found() => return Err(LoadWarningKind::NoToolFile),
        Err(e) => {
            return Err(LoadWarningKind::Unreadable {
                diagnostic: e.to_diagnostic(),
            });
        }
    };
    let opts = Options::default().require_entry(false);
    let spec = toolbind_codegen::parse_tool_md(&file, folder, &bytes, &opts)
        .map_err(|diagnostics| LoadWarningKind::Malformed { diagnostics })?;
    if spec.entry.is_none() {
        let candidates = spec.language.entry_candidates();
        return Err(match toolbind_codegen::find_entry(folder, candidates) {
            Err(e) => LoadWarningKind::Unreadable {
                diagnostic: e.to_diagnostic(),
            },
            Ok(_) => LoadWarningKind::NoEntryFile {
                tool: spec.name.clone(),
                language: spec.language,
                expected: candidates,
            },
        });
    }
    Ok(spec)
}
