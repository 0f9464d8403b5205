//! How a node or python harness process is started for a tool: its command line, the
//! harness file written into the cache, and the transpiled module of a TypeScript entry.

use crate::lock::Locked;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use toolbind_codegen::model::{Language, ToolSpec};

use super::cache;
use super::error::StartError;
#[cfg(feature = "typescript")]
use super::error::TranspileError;
use super::pool::worker_stamp;
#[cfg(feature = "typescript")]
use super::transpile;
use super::worker::Launch;
use super::{NODE_HARNESS, PYTHON_HARNESS, SubprocessExecutor};

impl SubprocessExecutor {
    /// The command line for a Node or Python harness running `tool`.
    pub(super) async fn launch(&self, tool: &ToolSpec, entry: &Path) -> Result<Launch, StartError> {
        let config = &self.inner.config;
        let entry_name = tool.entry.clone().unwrap_or_default();
        let max_text = config.max_text_bytes.to_string();
        let max_line = config.max_line_bytes.max(1024).to_string();
        let stamp = worker_stamp(tool, entry);
        match tool.language {
            Language::Python => {
                let harness = self.harness_file("python.py", PYTHON_HARNESS)?;
                Ok(Launch {
                    program: config.python.clone(),
                    binds: vec![harness.clone()],
                    // `-s`: no user site-packages, so no `usercustomize.py` planted in
                    // a `HOME` runs before the tool. `-B`: no `__pycache__` written beside
                    // a module the tool imports from its folder (unjailed, that folder is
                    // writable; the jail sets PYTHONDONTWRITEBYTECODE as well).
                    args: vec![
                        "-s".into(),
                        "-B".into(),
                        harness.into(),
                        entry.into(),
                        max_text.into(),
                        max_line.into(),
                    ],
                    label: "python",
                    entry_name,
                    stamp,
                })
            }
            Language::TypeScript | Language::Bash => {
                let harness = self.harness_file("node.mjs", NODE_HARNESS)?;
                let mut args: Vec<OsString> = Vec::new();
                let mut binds = vec![harness.clone()];
                let module = if is_typescript(entry) {
                    args.push("--enable-source-maps".into());
                    let module = self.transpiled(tool, entry).await?;
                    // The jail sees this tool's mirror only, not the whole cache.
                    if let Some(mirror) = module.parent() {
                        binds.push(mirror.to_path_buf());
                    }
                    module
                } else {
                    entry.to_path_buf()
                };
                args.extend([
                    harness.into(),
                    module.into(),
                    max_text.into(),
                    entry_name.clone().into(),
                    max_line.into(),
                ]);
                Ok(Launch {
                    program: config.node.clone(),
                    binds,
                    args,
                    label: "node",
                    entry_name,
                    stamp,
                })
            }
        }
    }

    #[cfg(feature = "typescript")]
    async fn transpiled(&self, tool: &ToolSpec, entry: &Path) -> Result<PathBuf, StartError> {
        let name = tool.name.clone();
        let dir = tool.dir.clone();
        let entry_name = entry
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let cache = self.inner.config.cache_dir.clone();
        tokio::task::spawn_blocking(move || transpile::prepare(&name, &dir, &entry_name, &cache))
            .await
            .map_err(|e| TranspileError::Panicked(e.to_string()))?
            .map_err(StartError::Transpile)
    }

    #[cfg(not(feature = "typescript"))]
    async fn transpiled(&self, tool: &ToolSpec, entry: &Path) -> Result<PathBuf, StartError> {
        Err(StartError::NoTypeScript {
            tool: tool.name.clone(),
            entry: entry.to_path_buf(),
        })
    }

    /// Writes a harness into the cache (once per content) and returns its path.
    pub(super) fn harness_file(
        &self,
        name: &'static str,
        text: &str,
    ) -> Result<PathBuf, StartError> {
        let mut map = self.inner.harness.locked();
        if let Some(p) = map.get(name) {
            return Ok(p.clone());
        }
        let dir = crate::dirs::private_subdir(&self.inner.config.cache_dir, &["harness"]).map_err(
            |why| StartError::Folder {
                what: "the harness folder",
                why,
            },
        )?;
        let (stem, ext) = name.split_once('.').unwrap_or((name, ""));
        let path = dir.join(format!(
            "{stem}-{}.{ext}",
            &cache::sha256_hex(text.as_bytes())[..32]
        ));
        // Compared with the embedded text before every first use in a process.
        if std::fs::read(&path).ok().as_deref() != Some(text.as_bytes()) {
            let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
            std::fs::write(&tmp, text)
                .and_then(|()| std::fs::rename(&tmp, &path))
                .map_err(|source| StartError::Harness {
                    path: path.clone(),
                    source,
                })?;
        }
        map.insert(name, path.clone());
        Ok(path)
    }
}

pub(super) fn is_typescript(entry: &Path) -> bool {
    matches!(
        entry.extension().and_then(|e| e.to_str()),
        Some("ts" | "mts")
    )
}
