//! `toolbind check`: every diagnostic of every tools folder, at once.

use std::io::IsTerminal;

use toolbind_codegen::{Options, load_tools};

use crate::args::{CheckArgs, ColorChoice, Format};
use crate::exit::{Code, Outcome};

pub fn run(args: &CheckArgs) -> Outcome {
    let dirs = crate::tools::dirs(&args.dirs);
    let result = load_tools(&dirs, &Options::default());
    // Errors and warnings together, or the warnings of a set that loads; with them, as
    // `toolbind list` reports it, each folder named differently from its tool.
    let (diags, tools) = match result {
        Ok(tools) => {
            let mut d = toolbind_codegen::warnings(&tools);
            d.0.extend(toolbind_codegen::folder_name_warnings(&tools));
            d.sort();
            (d, Some(tools))
        }
        Err(d) => (d, None),
    };
    let failed = tools.is_none() || (args.deny_warnings && !diags.is_empty());
    match args.format {
        Format::Json => {
            let list: Vec<serde_json::Value> = diags.iter().map(|d| d.to_json()).collect();
            println!("{}", serde_json::Value::Array(list));
        }
        Format::Human => {
            if !diags.is_empty() {
                eprintln!("{}", diags.render(color_stderr()));
            }
            if let Some(tools) = &tools {
                let warned = if diags.is_empty() {
                    String::new()
                } else if args.deny_warnings {
                    " (warnings denied by --deny-warnings)".to_owned()
                } else {
                    format!(
                        " ({} warning{})",
                        diags.len(),
                        if diags.len() == 1 { "" } else { "s" }
                    )
                };
                eprintln!(
                    "{}: {} tool{} in {}{warned}",
                    if failed { "failed" } else { "ok" },
                    tools.len(),
                    if tools.len() == 1 { "" } else { "s" },
                    dirs.iter()
                        .map(|d| d.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
    }
    Ok(if failed { Code::Failed } else { Code::Ok })
}

/// The `--color` choice, set once by `main`.
static COLOR: std::sync::OnceLock<ColorChoice> = std::sync::OnceLock::new();

/// Records the `--color` choice for [`color_stderr`].
pub fn set_color(choice: ColorChoice) {
    let _ = COLOR.set(choice);
}

/// Whether reports on stderr are coloured: `--color always`/`never`, else on a terminal
/// unless `NO_COLOR` is set (<https://no-color.org>).
pub fn color_stderr() -> bool {
    match COLOR.get().copied().unwrap_or(ColorChoice::Auto) {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stderr().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}
