//! What a sync is asked to do ([`SyncOptions`]) and what it reports: each tool's outcome,
//! why one was skipped, what was left uncopied, and the error that stops a whole sync.

use std::fmt;
use std::path::PathBuf;

use crate::OsError;
use toolbind_codegen::{Diagnostic, TOOL_FILE};

/// Choices for [`sync_with`](super::sync_with). The default syncs every seed tool.
#[derive(Debug, Clone)]
pub struct SyncOptions {
    pub(crate) only: Option<Vec<String>>,
    pub(crate) atomic_exchange: bool,
}

impl SyncOptions {
    /// Sync only these tool names (seed folder names). A name that is not a plain folder
    /// name, or has no seed, is reported as skipped. Default: every seed tool.
    pub fn only<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.only = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Swap an updated tool into place with one atomic `renameat2(RENAME_EXCHANGE)` where
    /// supported (default `true`). With `false`, or where it is unsupported, two renames are
    /// used (old folder away, new one in): still crash-safe through the recovery at the
    /// start of the next sync, but a reader that does not take the lock can, for a moment,
    /// find the tool missing.
    pub fn atomic_exchange(mut self, on: bool) -> Self {
        self.atomic_exchange = on;
        self
    }

    /// See [`only`](Self::only); `None`: every seed tool.
    pub fn get_only(&self) -> Option<&[String]> {
        self.only.as_deref()
    }

    /// See [`atomic_exchange`](Self::atomic_exchange).
    pub fn get_atomic_exchange(&self) -> bool {
        self.atomic_exchange
    }
}

impl Default for SyncOptions {
    fn default() -> Self {
        SyncOptions {
            only: None,
            atomic_exchange: true,
        }
    }
}

/// What a sync did, tool by tool (sorted by name).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct SyncReport {
    /// One entry per seed tool considered (per name, with [`SyncOptions::only`]).
    pub tools: Vec<ToolSync>,
    /// Paths inside seed tools that were not copied (symlinks out of the tool folder,
    /// symlinked directories, special files), with the reason.
    pub ignored: Vec<Ignored>,
    /// Tools put back from an `.old-` folder because an earlier sync was killed between its
    /// two renames.
    pub recovered: Vec<String>,
}

impl SyncReport {
    /// The outcome for one tool name.
    pub fn get(&self, name: &str) -> Option<&SyncOutcome> {
        self.tools
            .iter()
            .find(|t| t.name == name)
            .map(|t| &t.outcome)
    }

    /// How many tools were installed, updated, unchanged and skipped.
    pub fn counts(&self) -> SyncCounts {
        let mut c = SyncCounts::default();
        for t in &self.tools {
            match t.outcome {
                SyncOutcome::Installed { .. } => c.installed += 1,
                SyncOutcome::Updated { .. } => c.updated += 1,
                SyncOutcome::Unchanged { .. } => c.unchanged += 1,
                SyncOutcome::NotBumped { .. } => c.not_bumped += 1,
                SyncOutcome::Skipped(_) => c.skipped += 1,
                SyncOutcome::Failed { .. } => c.failed += 1,
            }
        }
        c
    }

    /// The tools that failed to install or update (by error, not by rule): an agent can
    /// start with what did install, and a command line should exit non-zero.
    pub fn failures(&self) -> impl Iterator<Item = &ToolSync> {
        self.tools
            .iter()
            .filter(|t| matches!(t.outcome, SyncOutcome::Failed { .. }))
    }
}

impl fmt::Display for SyncReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for name in &self.recovered {
            writeln!(f, "recovered {name} from an interrupted sync")?;
        }
        for t in &self.tools {
            writeln!(f, "{t}")?;
        }
        for i in &self.ignored {
            writeln!(f, "not copied {}: {}", i.path.display(), i.reason)?;
        }
        let c = self.counts();
        write!(
            f,
            "{} installed, {} updated, {} unchanged, {} skipped",
            c.installed, c.updated, c.unchanged, c.skipped
        )?;
        if c.not_bumped > 0 {
            write!(f, ", {} edited without a version bump", c.not_bumped)?;
        }
        if c.failed > 0 {
            write!(f, ", {} failed", c.failed)?;
        }
        Ok(())
    }
}

/// Totals of a [`SyncReport`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SyncCounts {
    /// Tools copied in because they were missing.
    pub installed: usize,
    /// Tools replaced by a higher seed version.
    pub updated: usize,
    /// Tools already at the seed's version or higher.
    pub unchanged: usize,
    /// Seed tools edited without bumping `version:`, so not installed
    /// ([`SyncOutcome::NotBumped`]).
    pub not_bumped: usize,
    /// Tools left alone by rule ([`SkipReason`]).
    pub skipped: usize,
    /// Tools that could not be installed or updated because of an error
    /// ([`SyncOutcome::Failed`]).
    pub failed: usize,
}

/// One tool's line of a [`SyncReport`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolSync {
    /// The tool folder's name (in the seed and in the data folder).
    pub name: String,
    /// What happened to it.
    pub outcome: SyncOutcome,
    /// What is worth a look in a seed that was read: its folder named differently from
    /// its tool (which could shadow another tool in the data folder), and its TOOL.md's
    /// warnings (extra keys, names some providers reject, ...). One line each.
    pub warnings: Vec<String>,
}

impl fmt::Display for ToolSync {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.outcome_line(f)?;
        for w in &self.warnings {
            write!(f, "\n  {}", w.replace(['\n', '\r'], " "))?;
        }
        Ok(())
    }
}

impl ToolSync {
    fn outcome_line(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A control character (a newline) in a folder name must not forge report lines.
        let name: std::borrow::Cow<'_, str> = if self.name.chars().any(char::is_control) {
            self.name.escape_debug().to_string().into()
        } else {
            self.name.as_str().into()
        };
        match &self.outcome {
            SyncOutcome::Installed { version } => write!(f, "installed {name} (version {version})"),
            SyncOutcome::Updated { from, to } => write!(f, "updated {name} {from} -> {to}"),
            SyncOutcome::Unchanged { installed, seed } if installed > seed => write!(
                f,
                "unchanged {name} (version {installed}; seed has older {seed}, never downgraded)"
            ),
            SyncOutcome::Unchanged { installed, .. } => {
                write!(f, "unchanged {name} (version {installed})")
            }
            SyncOutcome::NotBumped { version, file } => write!(
                f,
                "not installed {name}: the seed differs from the installed copy, but both are \
                 version {version}; bump `version:` to {} in {} to install it",
                version.saturating_add(1),
                file.display()
            ),
            SyncOutcome::Skipped(reason) => write!(f, "skipped {name}: {reason}"),
            SyncOutcome::Failed { path, error } => {
                write!(f, "failed {name}: {}: {error}", path.display())
            }
        }
    }
}

/// What happened to one seed tool.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SyncOutcome {
    /// It was missing from the data folder and was copied in.
    Installed {
        /// The installed version.
        version: u64,
    },
    /// The installed copy had a lower version and was replaced.
    Updated {
        /// The version that was installed before.
        from: u64,
        /// The seed's version, now installed.
        to: u64,
    },
    /// The installed copy's version is the seed's or higher (never downgraded).
    Unchanged {
        /// The installed version (kept).
        installed: u64,
        /// The seed's version.
        seed: u64,
    },
    /// The seed's files differ from the installed copy's, but both declare the same
    /// `version:`: the seed was edited without bumping it. Nothing was installed (an
    /// installed copy is never replaced at the same version); bump the seed's `version:`
    /// and sync again.
    NotBumped {
        /// The version both declare.
        version: u64,
        /// The seed's TOOL.md, where `version:` is to be bumped.
        file: PathBuf,
    },
    /// Nothing was changed, by rule, for this reason.
    Skipped(SkipReason),
    /// Reading or writing failed (a full disk, an I/O error): nothing was changed; the
    /// installed copy, if any, is untouched.
    Failed {
        /// The file or folder that failed.
        path: PathBuf,
        /// The operating system's error.
        error: OsError,
    },
}

/// Why a seed tool was not synced. The installed copy, if any, is untouched.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkipReason {
    /// The name is not one plain folder name (it would escape the data folder, or is
    /// reserved for the sync's own files).
    InvalidName(String),
    /// [`SyncOptions::only`] named a tool the seed folder does not have.
    NotInSeed,
    /// The seed folder has no TOOL.md.
    NoToolFile,
    /// The seed TOOL.md (or its tool folder) is malformed; nothing was replaced.
    Malformed(Vec<Diagnostic>),
    /// This path is a symlink resolving outside the seed folder (or the seed tool's own
    /// folder, for TOOL.md; an entry file that is one is refused by the validator, as
    /// [`SkipReason::Malformed`] with a diagnostic naming it).
    SymlinkOutside(PathBuf),
    /// The installed tool folder is a symlink or not a folder: it is left as it is.
    TargetNotAFolder(PathBuf),
    /// Another seed folder's TOOL.md declares the same tool name and wins by the loader's
    /// rule (the folder named after the tool, else the one that sorts first): two copies
    /// of one tool are never both synced. A copy installed by an earlier sync is left as
    /// it is (and the loader reports the duplicate).
    Duplicate {
        /// The tool name both declare.
        name: String,
        /// The seed folder that is synced instead.
        kept: String,
        /// Why that one wins.
        why: &'static str,
    },
    /// A folder of the data folder that no seed folder has (installed by hand, or by an
    /// earlier sync from a folder since renamed) already declares this tool name: a seed
    /// folder of another name is not installed beside it, where it could shadow it.
    AlreadyInstalled {
        /// The tool name both declare.
        name: String,
        /// The data folder's folder that declares it.
        folder: String,
    },
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::InvalidName(why) => write!(f, "invalid tool name: {why}"),
            SkipReason::NotInSeed => write!(f, "no such tool in the seed folder"),
            SkipReason::NoToolFile => write!(f, "no {TOOL_FILE} in the seed folder"),
            SkipReason::Malformed(diags) => {
                write!(f, "malformed {TOOL_FILE}; the data folder is unchanged")?;
                for d in diags {
                    write!(f, "\n  {}", d.plain())?;
                }
                Ok(())
            }
            SkipReason::SymlinkOutside(p) => write!(
                f,
                "{} is a symlink out of the seed folder; not followed",
                p.display()
            ),
            SkipReason::TargetNotAFolder(p) => write!(
                f,
                "{} is a symlink or not a folder; left as it is",
                p.display()
            ),
            SkipReason::AlreadyInstalled { name, folder } => write!(
                f,
                "tool `{name}` is already installed as the folder `{}` of the data folder; a seed folder of another name is not synced beside it",
                folder.escape_debug()
            ),
            SkipReason::Duplicate { name, kept, why } => write!(
                f,
                "duplicate tool name `{name}`: the seed folder `{}` declares it too and wins \
                 ({why}); not synced",
                kept.escape_debug()
            ),
        }
    }
}

/// A path inside a seed tool that was not copied.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Ignored {
    /// The path in the seed folder.
    pub path: PathBuf,
    /// Why it was not copied.
    pub reason: String,
}

/// A failure of the sync as a whole (unreadable seed folder, data folder that cannot be
/// created or locked). Failures of one tool are [`SkipReason`]s instead.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SyncError {
    /// The folder or file the failure is about.
    pub path: PathBuf,
    /// What was being done: "cannot read the seed folder", "cannot lock", ...
    pub action: &'static str,
    /// The operating system's error.
    pub error: OsError,
}

impl fmt::Display for SyncError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "sync failed: {}: {}: {}",
            self.path.display(),
            self.action,
            self.error
        )
    }
}

impl std::error::Error for SyncError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(self.error.io())
    }
}
