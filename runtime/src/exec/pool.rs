//! The warm-worker pool: one live worker per tool, replaced when the stamp of its sources
//! changes and stopped when idle; the one-shot processes kept for a moment after reading a
//! hello (spares); and what each entry's hello said about `prepareArguments`.

use crate::lock::Locked;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant, SystemTime};

use toolbind_codegen::model::{Fnv, ToolSpec};

use super::worker::Worker;

/// How long a one-shot process started for its hello waits for its call.
const SPARE_TTL: Duration = Duration::from_secs(1);

/// Which tool a warm worker serves: its name and folder. (What it was started from is its
/// [`stamp`](worker_stamp).)
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct WorkerKey {
    name: String,
    dir: PathBuf,
}

impl WorkerKey {
    pub(super) fn of(tool: &ToolSpec) -> Self {
        WorkerKey {
            name: tool.name.clone(),
            dir: tool.dir.clone(),
        }
    }
}

/// What a hello said of one entry: when, and whether it exports `prepareArguments`.
#[derive(Debug, Clone, Copy)]
struct Prepares {
    learned: Instant,
    has: bool,
}

/// The pool. Dropping it kills every worker and spare in it.
#[derive(Default)]
pub(super) struct Pool {
    workers: Mutex<HashMap<WorkerKey, Arc<Worker>>>,
    /// Entry file -> a one-shot process started to read its hello, which said the entry
    /// has no `prepareArguments`: it has run nothing, so the call that follows takes it
    /// instead of starting another (one process per call, as one-shot promises). Taken only
    /// within [`SPARE_TTL`] of its start, so it cannot serve an entry edited since.
    spares: Mutex<HashMap<PathBuf, (Instant, Arc<Worker>)>>,
    /// Entry file -> what a harness's hello last said about it.
    prepares: Mutex<HashMap<PathBuf, Prepares>>,
    reaper: Mutex<bool>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.locked()
}

impl Pool {
    /// The worker of `key` when it is alive and its stamp was found current within
    /// `interval`: no `stat` of the sources needed.
    pub(super) fn checked_within(
        &self,
        key: &WorkerKey,
        interval: Duration,
    ) -> Option<Arc<Worker>> {
        let workers = lock(&self.workers);
        let w = workers.get(key)?;
        (w.is_alive() && lock(&w.stamp_checked).is_some_and(|t| t.elapsed() < interval))
            .then(|| w.clone())
    }

    /// The worker of `key` when it is alive and was started from `stamp` (which is then
    /// current as of now).
    pub(super) fn current(&self, key: &WorkerKey, stamp: u64) -> Option<Arc<Worker>> {
        let workers = lock(&self.workers);
        let w = workers.get(key)?;
        if !(w.is_alive() && w.stamp == stamp) {
            return None;
        }
        *lock(&w.stamp_checked) = Some(Instant::now());
        Some(w.clone())
    }

    /// The worker of `key` for `stamp`: one another call started meanwhile, else the one
    /// `start` makes, which replaces (and kills) a stale one. Under the pool's lock, so
    /// two calls never start two workers for one tool.
    pub(super) fn current_or_start<E>(
        &self,
        key: WorkerKey,
        stamp: u64,
        start: impl FnOnce() -> Result<Arc<Worker>, E>,
    ) -> Result<Arc<Worker>, E> {
        let mut workers = lock(&self.workers);
        if let Some(w) = workers.get(&key)
            && w.is_alive()
            && w.stamp == stamp
        {
            return Ok(w.clone());
        }
        let worker = start()?;
        if let Some(old) = workers.insert(key, worker.clone()) {
            old.kill();
        }
        Ok(worker)
    }

    /// How many warm workers are alive.
    pub(super) fn alive(&self) -> usize {
        lock(&self.workers)
            .values()
            .filter(|w| w.is_alive())
            .count()
    }

    /// Stops every warm worker (their calls in flight get an error result).
    pub(super) fn shutdown(&self) {
        let workers: Vec<_> = lock(&self.workers).drain().map(|(_, w)| w).collect();
        for w in workers {
            w.kill();
        }
    }

    /// Starts, once, the task that stops workers idle for `idle` (or dead). It holds the
    /// pool weakly: it ends with the pool.
    pub(super) fn ensure_reaper(self: &Arc<Self>, idle: Duration) {
        let mut started = lock(&self.reaper);
        if *started {
            return;
        }
        *started = true;
        let weak: Weak<Pool> = Arc::downgrade(self);
        let tick = (idle / 4).clamp(Duration::from_millis(20), Duration::from_secs(10));
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(tick).await;
                let Some(pool) = weak.upgrade() else { return };
                let stale: Vec<_> = {
                    let mut workers = lock(&pool.workers);
                    let keys: Vec<_> = workers
                        .iter()
                        .filter(|(_, w)| !w.is_alive() || w.idle_for(idle))
                        .map(|(k, _)| k.clone())
                        .collect();
                    keys.iter().filter_map(|k| workers.remove(k)).collect()
                };
                for w in stale {
                    w.kill();
                }
            }
        });
    }

    /// Records what `entry`'s hello said.
    pub(super) fn learn(&self, entry: &Path, has_prepare: bool) {
        lock(&self.prepares).insert(
            entry.to_path_buf(),
            Prepares {
                learned: Instant::now(),
                has: has_prepare,
            },
        );
    }

    /// Whether `entry` exports `prepareArguments`, as a hello said within `within`.
    pub(super) fn learned(&self, entry: &Path, within: Duration) -> Option<bool> {
        let known = lock(&self.prepares).get(entry).copied()?;
        (known.learned.elapsed() < within).then_some(known.has)
    }

    /// Keeps `worker`, a one-shot process that read its hello and nothing else, for the
    /// call that follows. A call that never comes (its arguments failed validation) must
    /// not leave the process waiting: it is killed once it could no longer be taken.
    pub(super) fn keep_spare(self: &Arc<Self>, entry: PathBuf, worker: Arc<Worker>) {
        let old = lock(&self.spares).insert(entry.clone(), (Instant::now(), worker.clone()));
        if let Some((_, w)) = old {
            w.kill();
        }
        let pool = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(SPARE_TTL).await;
            let Some(pool) = pool.upgrade() else {
                return;
            };
            let mut spares = lock(&pool.spares);
            // Still there, untaken (a call that took it owns it now).
            if spares
                .get(&entry)
                .is_some_and(|(_, w)| Arc::ptr_eq(w, &worker))
            {
                spares.remove(&entry);
                drop(spares);
                worker.kill();
            }
        });
    }

    /// The process started for `entry`'s hello, when it is fresh and alive.
    pub(super) fn take_spare(&self, entry: &Path) -> Option<Arc<Worker>> {
        let (started, w) = lock(&self.spares).remove(entry)?;
        if started.elapsed() < SPARE_TTL && w.is_alive() {
            Some(w)
        } else {
            w.kill();
            None
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        for (_, w) in lock(&self.workers).drain() {
            w.kill();
        }
        for (_, (_, w)) in lock(&self.spares).drain() {
            w.kill();
        }
    }
}

/// What a warm worker was started from: its TOOL.md (env, timeout), its entry and the
/// source files beside it (a helper module the entry imports). A worker whose stamp no
/// longer matches is replaced at the next call that checks (at most once per
/// `ExecConfig::source_check_interval`, a second by default, per worker). It only stats:
/// at most 256 source files, not descending into node_modules, __pycache__ or hidden
/// folders.
pub(super) fn worker_stamp(tool: &ToolSpec, entry: &Path) -> u64 {
    const SOURCES: &[&str] = &["ts", "mts", "cts", "js", "mjs", "cjs", "py", "json"];
    let mut h = Fnv::new();
    h.write(&file_stamp(entry).to_le_bytes());
    h.write(&file_stamp(&tool.file).to_le_bytes());
    let mut budget = 256usize;
    let mut dirs = vec![(tool.dir.clone(), 0)];
    while let Some((dir, depth)) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if name.starts_with('.') || name == "node_modules" || name == "__pycache__" {
                continue;
            }
            if p.is_dir() {
                if depth < 3 {
                    dirs.push((p, depth + 1));
                }
            } else if p
                .extension()
                .is_some_and(|e| SOURCES.iter().any(|s| e == *s))
            {
                if budget == 0 {
                    return h.finish();
                }
                budget -= 1;
                h.write(&file_stamp(&p).to_le_bytes());
            }
        }
    }
    h.finish()
}

/// Changes when the file is edited (its path, mtime and size).
fn file_stamp(file: &Path) -> u64 {
    let mut h = Fnv::new();
    h.write(file.as_os_str().as_encoded_bytes());
    if let Ok(meta) = std::fs::metadata(file) {
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        h.write(&mtime.to_le_bytes());
        h.write(&meta.len().to_le_bytes());
    }
    h.finish()
}
