//! Rules across the tools of one set: duplicate names, colliding Rust names, folders
//! named differently from their tool.

use super::*;

/// A warning for each tool whose folder is named differently from the tool, as the
/// runtime's loader reports it (`toolbind list`): when two folders claim one tool name, the
/// loader and sync keep the one named after the tool, so a renamed folder can lose to, or
/// shadow, another. Located at the `name:` value.
pub fn folder_name_warnings(tools: &[ToolSpec]) -> Vec<Diagnostic> {
    tools
        .iter()
        .filter_map(|t| {
            let folder = t.dir.file_name()?.to_string_lossy();
            if folder == t.name.as_str() {
                return None;
            }
            let (pos, source) = name_pos(&t.file);
            Some(
                Diagnostic::new(
                    &t.file,
                    pos,
                    format!(
                        "folder {} holds the tool `{}`: the folder is named differently from the tool",
                        t.dir.to_string_lossy().escape_debug(),
                        t.name
                    ),
                )
                .hint(format!(
                    "rename the folder to `{}`: when two folders claim one tool name, the \
                     runtime keeps the one named after the tool",
                    t.name
                ))
                .span(t.name.chars().count())
                .source_text(source)
                .warning(),
            )
        })
        .collect()
}

/// Rules across tools, in load order. A duplicate tool name is an error (one of the two
/// could never be called). Two tools whose Rust module or `ToolCall` variant would be the
/// same get numbered fallbacks, with a warning pushed onto the later tool's
/// [`ToolSpec::warnings`]. Returns the errors.
pub fn check_set(tools: &mut [ToolSpec]) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let mut names: BTreeMap<String, PathBuf> = BTreeMap::new();
    for i in 0..tools.len() {
        let (done, rest) = tools.split_at_mut(i);
        let t = &mut rest[0];
        let (pos, source) = name_pos(&t.file);
        let width = t.name.chars().count();
        if let Some(prev) = names.get(&t.name) {
            diags.push(
                Diagnostic::new(
                    &t.file,
                    pos,
                    format!(
                        "duplicate tool name `{}`, also defined in {}",
                        t.name,
                        prev.display()
                    ),
                )
                .hint("tool names must be unique across all tool folders; rename one of them")
                .span(width)
                .source_text(source.clone()),
            );
            continue;
        }
        names.insert(t.name.clone(), t.file.clone());
        // Each Rust name of the tool, with how to read and how to replace it.
        type Get = fn(&ToolSpec) -> &String;
        type Set = fn(&mut ToolSpec) -> &mut String;
        let names: [(&str, Get, Set); 2] = [
            ("`ToolCall` variant", |t| &t.rust_type, |t| &mut t.rust_type),
            ("module", |t| &t.rust_module, |t| &mut t.rust_module),
        ];
        for (kind, get, set) in names {
            let base = get(t).clone();
            let Some(prev) = done.iter().find(|p| *get(p) == base) else {
                continue;
            };
            let prev_name = prev.name.clone();
            let fallback = ident::unique(&base, |c| done.iter().any(|p| get(p) == c));
            t.warnings.push(
                Diagnostic::new(
                    &t.file,
                    pos,
                    format!(
                        "tool names `{prev_name}` and `{}` both map to the Rust {kind} `{base}`: `{}` gets `{fallback}`",
                        t.name, t.name
                    ),
                )
                .hint("the names the model sends are unchanged; rename one for a nicer Rust name")
                .span(width)
                .source_text(source.clone())
                .warning(),
            );
            *set(t) = fallback;
        }
    }
    diags
}

/// Where `name:`'s value is in a TOOL.md, and the text for a snippet; read again only to
/// report a cross-file diagnostic.
pub(super) fn name_pos(file: &Path) -> (Pos, Arc<str>) {
    let text = file
        .parent()
        .and_then(|dir| {
            crate::file::read_folder_file(dir, file, crate::file::MAX_TOOL_FILE_BYTES).ok()
        })
        .and_then(|b| crate::parse::decode(file, &b).ok())
        .unwrap_or_else(|| Arc::from(""));
    let pos = text
        .lines()
        .enumerate()
        .find_map(|(i, l)| {
            let rest = l.strip_prefix("name:")?;
            let col = 5 + rest.len() - rest.trim_start().len();
            Some(Pos::new(i as u32 + 1, col as u32 + 1))
        })
        .unwrap_or(Pos::new(1, 1));
    (pos, text)
}
