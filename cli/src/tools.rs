//! Which tools folders a runtime command reads, loading them, and `toolbind list`.

use std::path::PathBuf;

use toolbind::Loader;
use toolbind::loader::{Loaded, TOOLS_DIRS_ENV, parse_tools_dirs};

use crate::args::{DirsArg, ListArgs};
use crate::exit::{Code, Outcome};

/// The `--dir` folders, then the `DIR` arguments; without any, those of `PI_TOOLS_DIRS`;
/// without that, `./tools`. Every command reads its tools folders this way.
pub fn dirs(args: &DirsArg) -> Vec<PathBuf> {
    if !args.dirs.is_empty() || !args.positional.is_empty() {
        return args.dirs.iter().chain(&args.positional).cloned().collect();
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
    args.sandbox.check()?;
    let dirs = dirs(&args.dirs);
    let loaded = load(&dirs);
    if args.json {
        let mut v = list_json(&loaded);
        v["sandbox"] = sandbox_status(&loaded, args).into();
        println!("{v}");
        return Ok(exit_code(&loaded));
    }
    let tools: Vec<_> = loaded.registry.iter().collect();
    let rows: Vec<[String; 4]> = tools
        .iter()
        .map(|t| {
            [
                t.name().to_owned(),
                t.version().to_string(),
                t.language().to_string(),
                t.dir().display().to_string(),
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
    let (skipped, notes): (Vec<_>, Vec<_>) = loaded.warnings.iter().partition(|w| w.skipped());
    if !notes.is_empty() {
        println!("\nwarnings (the tools load):");
        for w in &notes {
            println!("  {}", w.to_string().replace('\n', "\n  "));
        }
    }
    if !skipped.is_empty() {
        println!(
            "\nskipped {} folder{}:",
            skipped.len(),
            if skipped.len() == 1 { "" } else { "s" }
        );
        for w in &skipped {
            println!("  {}", w.to_string().replace('\n', "\n  "));
        }
    }
    println!("\nsandbox: {}", sandbox_status(&loaded, args));
    Ok(exit_code(&loaded))
}

/// The sandbox mode in force for these tools' languages, and why.
fn sandbox_status(loaded: &Loaded, args: &ListArgs) -> String {
    let mut languages: Vec<toolbind::tool::Language> = Vec::new();
    for t in loaded.registry.iter() {
        if !languages.contains(&t.language()) {
            languages.push(t.language());
        }
    }
    let executor = toolbind::exec::SubprocessExecutor::new(
        toolbind::exec::ExecConfig::default().sandbox(args.sandbox.policy()),
    );
    executor.sandbox_status(&languages).to_string()
}

/// A skipped tool folder is reported and listing goes on; a tools folder that cannot be
/// read at all (a typo in --dir) is a failure a script should see.
fn exit_code(loaded: &Loaded) -> Code {
    let unreadable = loaded.warnings.iter().any(|w| {
        matches!(
            w.kind,
            toolbind::loader::LoadWarningKind::UnreadableDir { .. }
                | toolbind::loader::LoadWarningKind::NotAToolsFolder { .. }
        )
    });
    if unreadable { Code::Failed } else { Code::Ok }
}

/// `list --json`: the tools with their warnings, the skipped folders and the other notes.
fn list_json(loaded: &Loaded) -> serde_json::Value {
    use serde_json::json;
    let tools: Vec<_> = loaded
        .registry
        .iter()
        .map(|t| {
            json!({
                "name": t.name(),
                "label": t.label(),
                "version": t.version(),
                "language": t.language().as_str(),
                "folder": t.dir().display().to_string(),
                "description": t.description(),
                "warnings": t.spec().warnings.iter().map(|d| d.to_json()).collect::<Vec<_>>(),
            })
        })
        .collect();
    let (skipped, notes): (Vec<_>, Vec<_>) = loaded.warnings.iter().partition(|w| w.skipped());
    let entry = |w: &&toolbind::loader::LoadWarning, key: &str| json!({"path": w.path.display().to_string(), key: w.to_string()});
    json!({
        "tools": tools,
        "skipped": skipped.iter().map(|w| entry(w, "reason")).collect::<Vec<_>>(),
        "sandbox": null,
        "notes": notes
            .iter()
            .filter(|w| !matches!(w.kind, toolbind::loader::LoadWarningKind::Warnings { .. }))
            .map(|w| entry(w, "message"))
            .collect::<Vec<_>>(),
    })
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
