//! `toolbind search`: the tools that best match a query, from the runtime's index.

use toolbind::index::ToolIndex;

use crate::args::SearchArgs;
use crate::exit::{Code, Failure, Outcome};
use crate::tools::load_all;

/// How many characters of a description a line of the human listing shows.
const DESCRIPTION_CHARS: usize = 72;

pub fn run(args: &SearchArgs) -> Outcome {
    let (_, loaded, mcp) = load_all(&args.dirs, &args.mcp, &args.sandbox)?;
    for w in loaded.warnings.iter().filter(|w| w.skipped()) {
        eprintln!("warning: {}", w.to_string().replace('\n', "\n  "));
    }
    for (name, state, _) in mcp.not_ready() {
        eprintln!("warning: MCP server {name} not ready, its tools are not searched: {state}");
    }
    let index = ToolIndex::build(&loaded.registry);
    let hits = index
        .search(&args.query, args.limit)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let describe = |name: &str| {
        loaded
            .registry
            .get(name)
            .map(|t| t.description().to_owned())
            .unwrap_or_default()
    };
    if args.json {
        let rows: Vec<serde_json::Value> = hits
            .iter()
            .map(|h| {
                let mut v = serde_json::json!({
                    "name": h.name,
                    "score": (h.score * 1e4).round() / 1e4,
                    "description": describe(&h.name),
                });
                if let Some(s) = &h.server {
                    v["server"] = s.as_str().into();
                }
                v
            })
            .collect();
        println!("{}", serde_json::Value::Array(rows));
    } else if hits.is_empty() {
        eprintln!(
            "no tool matches {:?} among {} tool{}",
            toolbind::untrusted::terminal(&args.query),
            index.len(),
            if index.len() == 1 { "" } else { "s" }
        );
    } else {
        let width = hits
            .iter()
            .map(|h| h.name.chars().count())
            .max()
            .unwrap_or(0);
        for (i, h) in hits.iter().enumerate() {
            let line = first_line(&describe(&h.name));
            let text = toolbind::untrusted::terminal(&line);
            let from = h
                .server
                .as_ref()
                .map(|s| format!(" [{}]", toolbind::untrusted::terminal(s)))
                .unwrap_or_default();
            println!(
                "{:>2}. {:width$}  {:>7.3}  {text}{from}",
                i + 1,
                h.name,
                h.score
            );
        }
    }
    let skipped = loaded.warnings.iter().any(|w| w.skipped());
    Ok(
        if hits.is_empty() || skipped || !mcp.not_ready().is_empty() {
            Code::Failed
        } else {
            Code::Ok
        },
    )
}

/// A description's first line, cut to [`DESCRIPTION_CHARS`] with an ellipsis.
fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if line.chars().count() <= DESCRIPTION_CHARS {
        return line.to_owned();
    }
    let cut: String = line.chars().take(DESCRIPTION_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}
