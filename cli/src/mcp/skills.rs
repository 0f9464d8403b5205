//! `toolbind mcp skills`: an MCP server's skills through the runtime's MCP client
//! (`Runtime::mcp_skills`), one skill's `SKILL.md`, every file's digest checked.

use toolbind::Runtime;
use toolbind::mcp::{McpSkill, McpSkillError};

use super::{servers, shown_text, url_server};
use crate::args::McpSkillsArgs;
use crate::exit::{Code, Failure, Outcome};

pub async fn run(a: McpSkillsArgs) -> Outcome {
    let names: Vec<String> = a.server.iter().cloned().collect();
    let list = servers(
        a.config.as_deref(),
        &names,
        &a.command,
        a.name.as_deref(),
        url_server(&a.http)?,
        &a.sandbox,
    )?;
    if list.len() != 1 {
        let known: Vec<String> = list.iter().filter_map(|(n, _)| n.clone()).collect();
        return Err(Failure::usage(format!(
            "name one server (the config has {})",
            known.join(", ")
        )));
    }
    let (_, server) = list.into_iter().next().expect("one server");
    let name = server.get_name().to_owned();
    let runtime = Runtime::builder()
        .mcp_server(server)
        .connect()
        .await
        .map_err(|e| Failure::failed(shown_text(&e.to_string()).into_owned()))?;
    let skills = runtime.mcp_skills(&name).await.map_err(failed)?;
    if let Some(wanted) = &a.get {
        let skill = skills.iter().find(|s| &s.name == wanted).ok_or_else(|| {
            let known: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
            Failure::failed(format!(
                "{name} serves no skill `{}` (it serves: {})",
                shown_text(wanted),
                shown_text(&known.join(", "))
            ))
        })?;
        let text = runtime.mcp_skill_md(&name, skill).await.map_err(failed)?;
        print!("{}", shown_text(&text));
        return Ok(Code::Ok);
    }
    if a.json {
        let rows: Vec<serde_json::Value> = skills.iter().map(json).collect();
        println!("{}", serde_json::Value::Array(rows));
    } else if skills.is_empty() {
        println!("{name} serves no skills");
    } else {
        for s in &skills {
            let (count, size) = s.files.as_ref().map_or((None, 0), |f| {
                (Some(f.len()), f.iter().map(|f| f.size).sum::<u64>())
            });
            let files = match count {
                Some(n) => format!("{n} file{}, {size} bytes", if n == 1 { "" } else { "s" }),
                None => "dynamic files".to_owned(),
            };
            println!(
                "{}  {}  ({files})",
                shown_text(&s.name),
                shown_text(&s.description)
            );
        }
    }
    if !a.verify {
        return Ok(Code::Ok);
    }
    let mut bad = 0;
    for s in &skills {
        let Some(files) = &s.files else {
            eprintln!("{}: dynamic files, nothing to check", shown_text(&s.name));
            continue;
        };
        for f in files {
            let checked = if f.uri == s.uri {
                runtime.mcp_skill_md(&name, s).await.map(|_| ())
            } else {
                runtime.mcp_skill_file(&name, f).await.map(|_| ())
            };
            if let Err(e) = checked {
                eprintln!(
                    "error: skill {}: {}",
                    shown_text(&s.name),
                    shown_text(&e.to_string())
                );
                bad += 1;
            }
        }
    }
    let checked: usize = skills
        .iter()
        .filter_map(|s| s.files.as_ref())
        .map(Vec::len)
        .sum();
    eprintln!("{} of {checked} files hold their digest", checked - bad);
    Ok(if bad == 0 { Code::Ok } else { Code::Failed })
}

fn failed(e: McpSkillError) -> Failure {
    Failure::failed(shown_text(&e.to_string()).into_owned())
}

fn json(s: &McpSkill) -> serde_json::Value {
    let files = match &s.files {
        Some(files) => files
            .iter()
            .map(|f| serde_json::json!({"uri": f.uri, "digest": f.digest, "size": f.size}))
            .collect(),
        None => serde_json::Value::from("dynamic"),
    };
    serde_json::json!({
        "uri": s.uri,
        "name": s.name,
        "description": s.description,
        "frontmatter": s.frontmatter,
        "files": files,
    })
}
