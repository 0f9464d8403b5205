//! Sync-by-version of seed tools into a data folder at startup: [`sync()`],
//! [`sync_with`] and the [`SyncReport`] they return.

use std::ffi::OsStr;

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use toolbind_codegen::FolderFileErrorKind;
use toolbind_codegen::model::path_component_problem;
use toolbind_codegen::{Options, TOOL_FILE, read_name, read_tool_file, read_version};

/// The lock file every sync of a data folder holds for its whole run.
pub const LOCK_FILE: &str = ".toolbind-sync.lock";
const STAGING_PREFIX: &str = ".staging-";
const OLD_PREFIX: &str = ".old-";

mod compare;
mod report;

pub use report::{
    Ignored, SkipReason, SyncCounts, SyncError, SyncOptions, SyncOutcome, SyncReport, ToolSync,
};

fn sync_err(path: &Path, action: &'static str, e: io::Error) -> SyncError {
    SyncError {
        path: path.to_path_buf(),
        action,
        error: e.into(),
    }
}

/// Syncs every tool of `seed_dir` into `data_dir` (created if missing).
///
/// Sync-by-version at startup (`sync-tools` in the platform's TOOLS.md): copy each seed tool
/// into the data folder when it is missing there or has a lower `version`; never downgrade.
///
/// ```no_run
/// let report = toolbind::sync("seed/tools", "/data/tools")?;
/// for tool in &report.tools {
///     println!("{tool}"); // "updated web_fetch 2 -> 3", "skipped broken: ..."
/// }
/// # Ok::<(), toolbind::syncing::SyncError>(())
/// ```
///
/// # Guarantees
///
/// - **Fast when up to date**: only the `version:` line of each TOOL.md (seed and installed)
///   and the `name:` line of each seed are read, with [`toolbind_codegen::read_version`]
///   and [`toolbind_codegen::read_name`]; nothing is validated or copied. At the same
///   version the two copies' files are compared too (read, not parsed).
/// - **Never replaced at the same version**: a seed edited without bumping its `version:`
///   is not installed, and is reported as [`SyncOutcome::NotBumped`] (with the fix) rather
///   than as unchanged.
/// - **One folder per tool name**: when two seed folders' TOOL.md declare one tool name,
///   only one is synced, by the loader's rule — the folder named after the tool, else the
///   one that sorts first — and the other is [`SkipReason::Duplicate`], naming the folder
///   that won. Never both.
/// - **Validated before installing**: a seed tool that would be installed or updated is
///   first parsed and validated in full (entry file included). A malformed one is skipped
///   with its diagnostics and never replaces the installed copy.
/// - **Crash-safe**: a tool is copied (and fsynced) into `data_dir/.staging-<name>-<pid>-<n>`
///   and then swapped into place — atomically with `renameat2(RENAME_EXCHANGE)` where the
///   platform and filesystem support it, otherwise by renaming the old folder away to
///   `.old-<name>-<pid>-<n>` and the staged one into place. A kill at any moment leaves each
///   tool wholly old or wholly new: the next sync removes stale `.staging-`/`.old-` folders
///   and, if a kill landed between the two renames, puts the old folder back first.
/// - **Concurrency-safe**: the whole sync holds an exclusive lock on
///   `data_dir/.toolbind-sync.lock` (`flock`, blocking), so two processes syncing the same
///   data folder take turns.
/// - **Contained**: tool names come from seed folder names (or [`SyncOptions::only`]) and
///   must be one plain path component (no `/`, `\`, `..`, NUL or leading `.`), so every
///   write stays inside `data_dir`. An installed tool folder that is a symlink is left alone.
/// - **No symlinks out of the seed folder**: a seed tool folder that is a symlink is used
///   only if it resolves inside the seed folder. Inside a tool, a symlinked *file* is copied
///   as a regular file only if it resolves inside that seed tool's folder; symlinked
///   directories, symlinks pointing elsewhere and special files are not copied and are
///   listed in [`SyncReport::ignored`]. If TOOL.md or the entry file is such a symlink, the
///   tool is skipped, and nothing of what TOOL.md points to is read. A TOOL.md over
///   [`toolbind_codegen::MAX_TOOL_FILE_BYTES`] is skipped as malformed, unread.
/// - Installed tools that have no seed are left alone.
/// - **Skipped is not failed**: a tool left alone by rule is [`SyncOutcome::Skipped`]; one
///   that could not be installed because of an error (a full disk, an I/O error) is
///   [`SyncOutcome::Failed`], counted apart ([`SyncCounts::failed`],
///   [`SyncReport::failures`]). `sync` still returns the whole report, so an agent can start
///   with what did install; `toolbind sync` exits non-zero when anything failed.
///
/// An installed TOOL.md whose version cannot be read counts as version 0, the same as a
/// TOOL.md without `version:`.
pub fn sync(
    seed_dir: impl AsRef<Path>,
    data_dir: impl AsRef<Path>,
) -> Result<SyncReport, SyncError> {
    sync_with(seed_dir, data_dir, &SyncOptions::default())
}

/// [`sync`] with [`SyncOptions`].
///
/// ```no_run
/// use std::path::Path;
/// use toolbind::syncing::{SyncOptions, sync_with};
///
/// let opts = SyncOptions::default().only(["web_fetch"]);
/// let report = sync_with(Path::new("seed/tools"), Path::new("/data/tools"), &opts)?;
/// println!("{report}");
/// # Ok::<(), toolbind::syncing::SyncError>(())
/// ```
pub fn sync_with(
    seed_dir: impl AsRef<Path>,
    data_dir: impl AsRef<Path>,
    opts: &SyncOptions,
) -> Result<SyncReport, SyncError> {
    sync_paths(seed_dir.as_ref(), data_dir.as_ref(), opts)
}

fn sync_paths(
    seed_dir: &Path,
    data_dir: &Path,
    opts: &SyncOptions,
) -> Result<SyncReport, SyncError> {
    fs::create_dir_all(data_dir)
        .map_err(|e| sync_err(data_dir, "cannot create the data folder", e))?;
    let lock_path = data_dir.join(LOCK_FILE);
    let lock = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| sync_err(&lock_path, "cannot open the lock file", e))?;
    lock.lock()
        .map_err(|e| sync_err(&lock_path, "cannot lock", e))?;

    let mut report = SyncReport::default();
    recover(data_dir, &mut report)?;

    let mut cx = Cx {
        seed_dir,
        data_dir,
        opts,
        seed_canon: None,
        report,
        warnings: Vec::new(),
    };
    // Every seed's TOOL.md is read first: which tool name each folder claims decides, as
    // in the loader, which of two folders claiming one name is synced.
    let mut seeds = Vec::new();
    for (name, kind) in candidates(seed_dir, opts)? {
        let seed = match kind {
            Candidate::Invalid(why) => Err(SyncOutcome::Skipped(SkipReason::InvalidName(why))),
            Candidate::Missing => Err(SyncOutcome::Skipped(SkipReason::NotInSeed)),
            Candidate::Dir { symlink } => cx.read_seed(&name, symlink),
        };
        seeds.push((name, seed));
    }
    let claims = cx.claims(&seeds)?;
    let installed = installed_claims(data_dir, &seeds);
    for (name, seed) in seeds {
        let outcome = match seed {
            Err(outcome) => outcome,
            Ok(seed) => match duplicate_of(&name, seed.claim.as_deref(), &claims) {
                Some(reason) => SyncOutcome::Skipped(reason),
                None => match seed.claim.as_deref().and_then(|c| {
                    installed
                        .iter()
                        .find(|(f, n)| n == c && *f != name)
                        .map(|(f, _)| (c, f))
                }) {
                    Some((c, f)) => SyncOutcome::Skipped(SkipReason::AlreadyInstalled {
                        name: c.to_owned(),
                        folder: f.clone(),
                    }),
                    None => cx.sync_tool(&name, seed),
                },
            },
        };
        let warnings = std::mem::take(&mut cx.warnings);
        cx.report.tools.push(ToolSync {
            name,
            outcome,
            warnings,
        });
    }
    drop(lock);
    Ok(cx.report)
}

enum Candidate {
    Dir { symlink: bool },
    Invalid(String),
    Missing,
}

/// A seed tool whose TOOL.md was read.
struct Seed {
    /// The folder whose insides are copied (a symlinked seed folder's target).
    tool: PathBuf,
    /// The folder symlinks inside must stay in, when already resolved.
    root: Option<PathBuf>,
    /// `tool/TOOL.md`.
    file: PathBuf,
    /// Its bytes.
    text: Vec<u8>,
    /// The tool name it declares, by [`read_name`] (`None` when unreadable).
    claim: Option<String>,
}

/// The loader's rule for two folders claiming one tool name, applied to seed folders:
/// the folder named after the tool wins, else the one that sorts (and so loads) first.
/// `Some` for the loser of `folder`, claiming `claim`, against every `(folder, claim)`.
fn duplicate_of(
    folder: &str,
    claim: Option<&str>,
    claims: &[(String, String)],
) -> Option<SkipReason> {
    let claim = claim?;
    if folder == claim {
        return None;
    }
    let rivals = claims
        .iter()
        .filter(|(f, c)| c == claim && f != folder)
        .map(|(f, _)| f.as_str());
    let (kept, why) = if rivals.clone().any(|f| f == claim) {
        (claim, "its folder is named after the tool")
    } else {
        (
            rivals.filter(|f| *f < folder).min()?,
            "it sorts first, and the loader keeps the first",
        )
    };
    Some(SkipReason::Duplicate {
        name: claim.to_owned(),
        kept: kept.to_owned(),
        why,
    })
}

/// `(folder, tool name)` of the data folder's tools that no seed folder of the same name
/// has: what a seed folder of another name must not be installed beside.
fn installed_claims(
    data_dir: &Path,
    seeds: &[(String, Result<Seed, SyncOutcome>)],
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in fs::read_dir(data_dir).into_iter().flatten().flatten() {
        let folder = e.file_name().to_string_lossy().into_owned();
        if folder.starts_with('.')
            || seeds.iter().any(|(f, _)| *f == folder)
            || !e.file_type().is_ok_and(|t| t.is_dir())
        {
            continue;
        }
        let Ok(bytes) = toolbind_codegen::read_tool_file(&e.path()) else {
            continue;
        };
        if let Some(name) = std::str::from_utf8(&bytes)
            .ok()
            .and_then(toolbind_codegen::read_name)
        {
            out.push((folder, name));
        }
    }
    out
}

/// The seed tools to consider, sorted by name.
fn candidates(seed_dir: &Path, opts: &SyncOptions) -> Result<Vec<(String, Candidate)>, SyncError> {
    let mut out = Vec::new();
    if let Some(only) = &opts.only {
        for name in only {
            let c = match check_name(OsStr::new(name)) {
                Err(why) => Candidate::Invalid(why),
                Ok(()) => match fs::symlink_metadata(seed_dir.join(name)) {
                    Ok(m) if m.is_dir() => Candidate::Dir { symlink: false },
                    Ok(m) if m.file_type().is_symlink() => Candidate::Dir { symlink: true },
                    _ => Candidate::Missing,
                },
            };
            out.push((name.clone(), c));
        }
    } else {
        let entries = fs::read_dir(seed_dir)
            .map_err(|e| sync_err(seed_dir, "cannot read the seed folder", e))?;
        for entry in entries {
            let entry = entry.map_err(|e| sync_err(seed_dir, "cannot read the seed folder", e))?;
            let file_name = entry.file_name();
            let Ok(ft) = entry.file_type() else { continue };
            let symlink = ft.is_symlink();
            // Hidden entries and plain files (a README) are not tools, as in the loader.
            if file_name.as_encoded_bytes().first() == Some(&b'.')
                || !(ft.is_dir() || (symlink && entry.path().is_dir()))
            {
                continue;
            }
            let name = file_name.to_string_lossy().into_owned();
            let c = match check_name(&file_name) {
                Ok(()) => Candidate::Dir { symlink },
                Err(why) => Candidate::Invalid(why),
            };
            out.push((name, c));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// A tool name must be one plain, visible path component, so `data_dir/<name>` is a direct
/// child of `data_dir` and never one of the sync's own dot-files: the rule every path made
/// of a tool name follows ([`path_component_problem`]), and valid UTF-8.
fn check_name(name: &OsStr) -> Result<(), String> {
    let Some(s) = name.to_str() else {
        return Err("not valid UTF-8".to_owned());
    };
    match path_component_problem(s) {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

struct Cx<'a> {
    seed_dir: &'a Path,
    data_dir: &'a Path,
    opts: &'a SyncOptions,
    seed_canon: Option<PathBuf>,
    report: SyncReport,
    /// The warnings of the tool being synced.
    warnings: Vec<String>,
}

static STAGE_COUNTER: AtomicU64 = AtomicU64::new(0);

fn io_failed(path: &Path, e: io::Error) -> SyncOutcome {
    SyncOutcome::Failed {
        path: path.to_path_buf(),
        error: e.into(),
    }
}

impl Cx<'_> {
    /// Reads a seed tool's TOOL.md (never through a symlink out of the seed folder or the
    /// tool's own folder, never a special file, never over the size limit).
    fn read_seed(&mut self, name: &str, symlink: bool) -> Result<Seed, SyncOutcome> {
        let link = self.seed_dir.join(name);
        // The folder whose insides are copied, and the root symlinks inside must stay in.
        let (tool, root) = if symlink {
            let canon = self.seed_canon().map_err(|e| io_failed(self.seed_dir, e))?;
            match fs::canonicalize(&link) {
                Ok(real) if real.starts_with(&canon) && real.is_dir() => (real.clone(), Some(real)),
                _ => return Err(SyncOutcome::Skipped(SkipReason::SymlinkOutside(link))),
            }
        } else {
            (link, None)
        };
        let file = tool.join(TOOL_FILE);
        let text = match read_tool_file(&tool) {
            Ok(b) => b,
            Err(e) => {
                return Err(match e.kind {
                    FolderFileErrorKind::NotFound => SyncOutcome::Skipped(SkipReason::NoToolFile),
                    FolderFileErrorKind::SymlinkOutside => {
                        SyncOutcome::Skipped(SkipReason::SymlinkOutside(file))
                    }
                    FolderFileErrorKind::TooLarge { .. } => {
                        SyncOutcome::Skipped(SkipReason::Malformed(vec![e.to_diagnostic()]))
                    }
                    _ => io_failed(&file, e.into_io()),
                });
            }
        };
        let claim = std::str::from_utf8(&text).ok().and_then(read_name);
        Ok(Seed {
            tool,
            root,
            file,
            text,
            claim,
        })
    }

    /// `(folder, claimed name)` of every seed folder whose TOOL.md names a tool. With
    /// [`SyncOptions::only`], the folders not asked for are read too when one asked for
    /// claims a name other than its folder's: that folder may lose to one of them.
    fn claims(
        &mut self,
        seeds: &[(String, Result<Seed, SyncOutcome>)],
    ) -> Result<Vec<(String, String)>, SyncError> {
        let of = |seeds: &[(String, Result<Seed, SyncOutcome>)]| -> Vec<(String, String)> {
            seeds
                .iter()
                .filter_map(|(f, s)| Some((f.clone(), s.as_ref().ok()?.claim.clone()?)))
                .collect()
        };
        let mut claims = of(seeds);
        let renamed = claims.iter().any(|(f, c)| f != c);
        if self.opts.only.is_some() && renamed {
            let mut others = Vec::new();
            for (name, kind) in candidates(self.seed_dir, &SyncOptions::default())? {
                if let Candidate::Dir { symlink } = kind
                    && !seeds.iter().any(|(f, _)| *f == name)
                {
                    let seed = self.read_seed(&name, symlink);
                    others.push((name, seed));
                }
            }
            claims.extend(of(&others));
        }
        Ok(claims)
    }

    fn sync_tool(&mut self, name: &str, seed: Seed) -> SyncOutcome {
        let Seed {
            tool: seed_tool,
            root,
            file: seed_file,
            text: seed_text,
            ..
        } = seed;
        let seed_version = std::str::from_utf8(&seed_text).ok().and_then(read_version);

        let target = self.data_dir.join(name);
        let installed = match installed_version(&target) {
            Ok(v) => v,
            Err(outcome) => return outcome,
        };
        if let (Some(seed), Some(installed)) = (seed_version, installed)
            && installed >= seed
        {
            return kept(
                installed,
                seed,
                &seed_tool,
                root.as_deref(),
                &seed_file,
                &target,
            );
        }

        // About to install: validate the whole seed tool first.
        let root = match root {
            Some(r) => r,
            None => match fs::canonicalize(&seed_tool) {
                Ok(r) => r,
                Err(e) => return io_failed(&seed_tool, e),
            },
        };
        // TOOL.md was read only from inside the folder; the entry file is checked by the
        // validator (a symlink out of the folder or a special file is an error there).
        let spec = match toolbind_codegen::parse_tool_md(
            &seed_file,
            &seed_tool,
            &seed_text,
            &Options::default(),
        ) {
            Ok(spec) => spec,
            Err(diags) => return SyncOutcome::Skipped(SkipReason::Malformed(diags)),
        };
        if spec.name != name {
            self.warnings.push(format!(
                "warning: the folder `{name}` holds the tool `{}`: a loader reading the data folder \
                 prefers a folder named after the tool, so name the folder `{}`",
                spec.name, spec.name
            ));
        }
        self.warnings
            .extend(spec.warnings.iter().map(|d| d.plain()));
        if let Some(installed) = installed
            && installed >= spec.version
        {
            let seed = spec.version;
            return kept(
                installed,
                seed,
                &seed_tool,
                Some(&root),
                &seed_file,
                &target,
            );
        }

        if let Err(outcome) = self.install(name, &seed_tool, &root, &target, installed.is_some()) {
            return outcome;
        }
        match installed {
            None => SyncOutcome::Installed {
                version: spec.version,
            },
            Some(from) => SyncOutcome::Updated {
                from,
                to: spec.version,
            },
        }
    }

    /// Copies the seed tool into a staging folder beside `target`, then moves it in
    /// place (swapped with the installed one, when `replacing`, which is then removed).
    fn install(
        &mut self,
        name: &str,
        seed_tool: &Path,
        root: &Path,
        target: &Path,
        replacing: bool,
    ) -> Result<(), SyncOutcome> {
        let n = STAGE_COUNTER.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let staging = self
            .data_dir
            .join(format!("{STAGING_PREFIX}{name}-{pid}-{n}"));
        let copied = fs::create_dir(&staging)
            .and_then(|()| copy_tree(seed_tool, &staging, root, &mut self.report.ignored))
            .and_then(|()| sync_dir(&staging));
        if let Err(e) = copied {
            let _ = fs::remove_dir_all(&staging);
            return Err(io_failed(&staging, e));
        }
        let swapped = if replacing {
            let old = self.data_dir.join(format!("{OLD_PREFIX}{name}-{pid}-{n}"));
            swap(&staging, target, &old, self.opts.atomic_exchange)
        } else {
            fs::rename(&staging, target)
        };
        if let Err(e) = swapped.and_then(|()| sync_dir(self.data_dir)) {
            let _ = fs::remove_dir_all(&staging);
            return Err(io_failed(target, e));
        }
        Ok(())
    }

    fn seed_canon(&mut self) -> io::Result<PathBuf> {
        if let Some(c) = &self.seed_canon {
            return Ok(c.clone());
        }
        let c = fs::canonicalize(self.seed_dir)?;
        self.seed_canon = Some(c.clone());
        Ok(c)
    }
}

/// Replaces the folder `target` by `staged`. Afterwards the old content is in `staged`
/// (exchange) or `old` (two renames) and is removed.
fn swap(staged: &Path, target: &Path, old: &Path, exchange: bool) -> io::Result<()> {
    if exchange && exchange_dirs(staged, target)? {
        sync_dir(target.parent().unwrap_or(Path::new(".")))?;
        return fs::remove_dir_all(staged);
    }
    // A kill between these two renames leaves `target` missing and `old` whole: `recover`
    // puts it back at the start of the next sync.
    fs::rename(target, old)?;
    if let Err(e) = fs::rename(staged, target) {
        let _ = fs::rename(old, target);
        return Err(e);
    }
    sync_dir(target.parent().unwrap_or(Path::new(".")))?;
    fs::remove_dir_all(old)
}

/// Atomically exchanges two paths. `Ok(false)` when the platform or filesystem cannot.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn exchange_dirs(a: &Path, b: &Path) -> io::Result<bool> {
    use nix::errno::Errno;
    use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
    match renameat2(AT_FDCWD, a, AT_FDCWD, b, RenameFlags::RENAME_EXCHANGE) {
        Ok(()) => Ok(true),
        Err(Errno::EINVAL | Errno::ENOSYS | Errno::EOPNOTSUPP) => Ok(false),
        Err(e) => Err(io::Error::from(e)),
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn exchange_dirs(_: &Path, _: &Path) -> io::Result<bool> {
    Ok(false)
}

/// Removes what killed syncs left behind. Runs under the lock, so no other sync is using
/// these folders.
fn recover(data_dir: &Path, report: &mut SyncReport) -> Result<(), SyncError> {
    let entries =
        fs::read_dir(data_dir).map_err(|e| sync_err(data_dir, "cannot read the data folder", e))?;
    let mut olds = Vec::new();
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(s) = file_name.to_str() else {
            continue;
        };
        if s.starts_with(STAGING_PREFIX) {
            let _ = fs::remove_dir_all(entry.path());
        } else if let Some(rest) = s.strip_prefix(OLD_PREFIX) {
            olds.push((rest.to_owned(), entry.path()));
        }
    }
    olds.sort();
    for (rest, path) in olds {
        // `.old-<name>-<pid>-<n>`: the name may itself contain `-`.
        let name = rest.rsplitn(3, '-').nth(2).unwrap_or_default();
        let target = data_dir.join(name);
        let restore = check_name(OsStr::new(name)).is_ok()
            && matches!(fs::symlink_metadata(&target), Err(e) if e.kind() == io::ErrorKind::NotFound);
        if restore && fs::rename(&path, &target).is_ok() {
            report.recovered.push(name.to_owned());
        } else {
            let _ = fs::remove_dir_all(&path);
        }
    }
    if !report.recovered.is_empty() {
        sync_dir(data_dir).map_err(|e| sync_err(data_dir, "cannot sync the data folder", e))?;
    }
    Ok(())
}

/// Copies the contents of `src` into the existing folder `dst`, fsyncing every file and
/// folder. Symlinks are followed only to files inside `root`.
fn copy_tree(src: &Path, dst: &Path, root: &Path, ignored: &mut Vec<Ignored>) -> io::Result<()> {
    for entry in fs::read_dir(src)? {
        let entry = entry?;
        let from = entry.path();
        let to = dst.join(entry.file_name());
        let ft = entry.file_type()?;
        if ft.is_dir() {
            fs::create_dir(&to)?;
            copy_tree(&from, &to, root, ignored)?;
        } else if ft.is_file() {
            copy_file(&from, &to)?;
        } else if ft.is_symlink() {
            match fs::canonicalize(&from) {
                Ok(real) if real.starts_with(root) && real.is_file() => copy_file(&real, &to)?,
                Ok(real) if real.starts_with(root) && real.is_dir() => ignored.push(Ignored {
                    path: from,
                    reason: "symlinked folders are not copied".to_owned(),
                }),
                _ => ignored.push(Ignored {
                    path: from,
                    reason: "symlink resolves outside the seed tool's folder; not followed"
                        .to_owned(),
                }),
            }
        } else {
            ignored.push(Ignored {
                path: from,
                reason: "not a regular file or folder".to_owned(),
            });
        }
    }
    sync_dir(dst)
}

fn copy_file(from: &Path, to: &Path) -> io::Result<()> {
    let mut src = File::open(from)?;
    let mut dst = File::options().write(true).create_new(true).open(to)?;
    io::copy(&mut src, &mut dst)?;
    dst.set_permissions(src.metadata()?.permissions())?;
    dst.sync_all()
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// The outcome for a seed tool that is not installed because the installed copy's version
/// is as high: unchanged, unless the versions are equal and the files differ, when the seed
/// was edited without bumping `version:` ([`SyncOutcome::NotBumped`]). A comparison that
/// cannot read a file says unchanged: either way nothing is written.
fn kept(
    installed: u64,
    seed: u64,
    seed_tool: &Path,
    root: Option<&Path>,
    seed_file: &Path,
    target: &Path,
) -> SyncOutcome {
    let unchanged = SyncOutcome::Unchanged { installed, seed };
    if installed != seed {
        return unchanged;
    }
    let root = match root {
        Some(r) => r.to_path_buf(),
        None => match fs::canonicalize(seed_tool) {
            Ok(r) => r,
            Err(_) => return unchanged,
        },
    };
    match compare::same_files(seed_tool, &root, target) {
        Ok(false) => SyncOutcome::NotBumped {
            version: seed,
            file: seed_file.to_path_buf(),
        },
        _ => unchanged,
    }
}

/// The version of the tool installed at `target` (0 when its TOOL.md cannot be read),
/// `None` when nothing is; a file there skips the tool.
fn installed_version(target: &Path) -> Result<Option<u64>, SyncOutcome> {
    match fs::symlink_metadata(target) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_failed(target, e)),
        Ok(m) if !m.is_dir() => Err(SyncOutcome::Skipped(SkipReason::TargetNotAFolder(
            target.to_path_buf(),
        ))),
        Ok(_) => Ok(Some(
            read_tool_file(target)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .and_then(|t| read_version(&t))
                .unwrap_or(0),
        )),
    }
}

#[cfg(test)]
mod tests {
    /// `OsError` is transparent: its message is the io::Error's, and the chain goes on with
    /// that error's own cause (none here), not with the io::Error a second time.
    #[test]
    fn an_os_error_does_not_repeat_itself_in_a_chain() {
        let os: crate::OsError = std::io::Error::other("disk on fire").into();
        assert!(std::error::Error::source(&os).is_none());
        assert_eq!(os.to_string(), "disk on fire");
    }
}
