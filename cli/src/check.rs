//! `toolbind check`: every diagnostic of every tools folder, at once.

use std::io::IsTerminal;
use std::path::PathBuf;

use toolbind_codegen::{Options, load_tools};

use crate::args::{CheckArgs, Format};
use crate::exit::{Code, Outcome};

pub fn run(args: &CheckArgs) -> Outcome {
    let dirs = if args.dirs.is_empty() {
        vec![PathBuf::from("tools")]
    } else {
        args.dirs.clone()
    };
    let result = load_tools(&dirs, &Options::default());
    match args.format {
        Format::Json => {
            let diags: Vec<serde_json::Value> = match &result {
                Ok(_) => Vec::new(),
                Err(d) => d.iter().map(|d| d.to_json()).collect(),
            };
            println!("{}", serde_json::Value::Array(diags));
        }
        Format::Human => match &result {
            Ok(tools) => eprintln!(
                "ok: {} tool{} in {}",
                tools.len(),
                if tools.len() == 1 { "" } else { "s" },
                dirs.iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Err(d) => eprintln!("{}", d.render(color_stderr())),
        },
    }
    Ok(if result.is_ok() {
        Code::Ok
    } else {
        Code::Failed
    })
}

/// Colour on a terminal, unless `NO_COLOR` is set (<https://no-color.org>).
pub fn color_stderr() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}
