//! Which tools folders a runtime command reads, loading them, and `toolbind list`.

use std::path::PathBuf;

use toolbind::loader::{Loaded, Loader, TOOLS_DIRS_ENV, parse_tools_dirs};

use crate::args::{DirsArg, ListArgs};
use crate::exit::{Code, Outcome};

/// The `--dir` folders; without any, those of `PI_TOOLS_DIRS`; without that, `./tools`.
pub fn dirs(args: &DirsArg) -> Vec<PathBuf> {
    if !args.dirs.is_empty() {
        return args.dirs.clone();
    }
    let from_env = std::env::var_os(TOOLS_DIRS_ENV)
        .map(|v| parse_tools_dirs(&v.to_string_lossy()))
        .unwrap_or_default();
    if from_env.is_empty() {
        vec![PathBuf::from("tools")]
    } else {
        from_env
    }
}

/// Loads the tools of `dirs` without printing: callers decide where warnings go.
pub fn load(dirs: &[PathBuf]) -> Loaded {
    Loader::new().dirs(dirs.iter().cloned()).quiet().load()
}

pub fn list(args: &ListArgs) -> Outcome {
    let dirs = dirs(&args.dirs);
    let loaded = load(&dirs);
    let tools: Vec<_> = loaded.registry.iter().collect();
    let rows: Vec<[String; 4]> = tools
        .iter()
        .map(|t| {
            [
                t.name.clone(),
                t.version.to_string(),
                t.language.to_string(),
                t.dir.display().to_string(),
            ]
        })
        .collect();
    let header = ["NAME", "VERSION", "LANGUAGE", "FOLDER"].map(String::from);
    let mut widths = [0usize; 4];
    for row in std::iter::once(&header).chain(&rows) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let folders = dirs
        .iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if rows.is_empty() {
        println!("no tools in {folders}");
    } else {
        for row in std::iter::once(&header).chain(&rows) {
            let line: Vec<String> = row
                .iter()
                .zip(widths)
                .map(|(c, w)| format!("{c:w$}"))
                .collect();
            println!("{}", line.join("  ").trim_end());
        }
        println!(
            "\n{} tool{} from {folders}",
            rows.len(),
            if rows.len() == 1 { "" } else { "s" }
        );
    }
    if !loaded.warnings.is_empty() {
        println!(
            "\nskipped {} folder{}:",
            loaded.warnings.len(),
            if loaded.warnings.len() == 1 { "" } else { "s" }
        );
        for w in &loaded.warnings {
            println!("  {}", w.to_string().replace('\n', "\n  "));
        }
    }
    let mut languages: Vec<toolbind::Language> = Vec::new();
    for t in &tools {
        if !languages.contains(&t.language) {
            languages.push(t.language);
        }
    }
    let executor = toolbind::exec::SubprocessExecutor::new(toolbind::exec::ExecConfig {
        sandbox: args.sandbox.policy(),
        ..toolbind::exec::ExecConfig::default()
    });
    println!("\nsandbox: {}", executor.sandbox_status(&languages));
    // A skipped tool folder is reported and listing goes on; a tools folder that cannot
    // be read at all (a typo in --dir) is a failure a script should see.
    let unreadable = loaded.warnings.iter().any(|w| {
        matches!(
            w.kind,
            toolbind::loader::LoadWarningKind::UnreadableDir { .. }
        )
    });
    Ok(if unreadable { Code::Failed } else { Code::Ok })
}

/// Absolute folders: a tool's process runs with the caller's working directory, and an MCP
/// client may start `serve` anywhere.
pub fn absolute(dirs: Vec<PathBuf>) -> Result<Vec<PathBuf>, crate::exit::Failure> {
    dirs.into_iter()
        .map(|d| {
            std::path::absolute(&d).map_err(|e| {
                crate::exit::Failure::failed(format!("cannot resolve {}: {e}", d.display()))
            })
        })
        .collect()
}
