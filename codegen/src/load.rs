//! Loading tools: one TOOL.md from its bytes or its folder, the tool folders of a tools
//! folder, and every tool of a set of folders with all their diagnostics at once.

use std::path::{Path, PathBuf};

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::file::read_tool_file;
use crate::model::{Pos, TOOL_FILE, ToolSpec};
use crate::parse;
use crate::validate::{self, Options};

/// Parses and validates one TOOL.md from its bytes. `dir` is the tool folder (where the
/// entry file is looked up when `opts.require_entry`).
pub fn parse_tool_md(
    file: &Path,
    dir: &Path,
    bytes: &[u8],
    opts: &Options,
) -> Result<ToolSpec, Vec<Diagnostic>> {
    let text = parse::decode(file, bytes).map_err(|d| vec![d])?;
    let doc = parse::parse_document(file, text).map_err(|d| vec![d])?;
    validate::tool_from_document(file, dir, &doc, opts)
}

/// Parses and validates the tool in folder `dir` (`dir/TOOL.md` plus its entry file).
/// TOOL.md is read with [`read_tool_file`]: a symlink out of the folder, a special file or
/// a file over [`MAX_TOOL_FILE_BYTES`](crate::file::MAX_TOOL_FILE_BYTES) is an error naming the file, and nothing of it is
/// read or quoted.
pub fn parse_tool_dir(dir: impl AsRef<Path>, opts: &Options) -> Result<ToolSpec, Vec<Diagnostic>> {
    let dir = dir.as_ref();
    let file = dir.join(TOOL_FILE);
    match read_tool_file(dir) {
        Ok(bytes) => parse_tool_md(&file, dir, &bytes, opts),
        Err(e) if e.is_not_found() => Err(vec![
            Diagnostic::new(dir, Pos::NONE, "tool folder has no TOOL.md")
                .hint("add a TOOL.md (YAML frontmatter + Markdown docs) beside the entry file, or move the folder out of the tools folder"),
        ]),
        Err(e) => Err(vec![e.to_diagnostic()]),
    }
}

/// The tool folders inside a tools directory, sorted by name. Hidden entries (`.git`,
/// `.cache`) and plain files (a README) are not tool folders. A tools directory that holds
/// a TOOL.md itself is one tool's folder given by mistake: an error, not "no tools".
pub fn tool_folders(tools_dir: impl AsRef<Path>) -> Result<Vec<PathBuf>, Diagnostic> {
    let tools_dir = tools_dir.as_ref();
    if std::fs::symlink_metadata(tools_dir.join(TOOL_FILE)).is_ok() {
        let parent = tools_dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| "..".to_owned(), |p| p.display().to_string());
        return Err(Diagnostic::new(
            tools_dir,
            Pos::NONE,
            "cannot use it as a tools folder: it is one tool's folder (it holds a TOOL.md)",
        )
        .hint(format!(
            "pass the folder that holds the tool folders, such as `{parent}`"
        )));
    }
    let entries = std::fs::read_dir(tools_dir).map_err(|e| {
        Diagnostic::new(tools_dir, Pos::NONE, format!("cannot read tools folder: {e}"))
            .hint("check the path: build.rs resolves a relative `tools_dir` against the crate root, the CLI against the working directory")
    })?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter(|e| e.path().is_dir())
        .map(|e| e.path())
        .collect();
    dirs.sort();
    Ok(dirs)
}

/// Loads every tool of every folder in `tools_dirs`, strictly: a folder without TOOL.md, a
/// malformed TOOL.md, a missing entry file or a duplicate name is an error. All errors of
/// all files are returned together, with every warning beside them. On success the
/// warnings are on each tool ([`ToolSpec::warnings`]; [`warnings`] collects them).
pub fn load_tools(tools_dirs: &[PathBuf], opts: &Options) -> Result<Vec<ToolSpec>, Diagnostics> {
    let mut tools = Vec::new();
    let mut diags = Vec::new();
    for dir in tools_dirs {
        match tool_folders(dir) {
            Ok(folders) => {
                for folder in folders {
                    match parse_tool_dir(&folder, opts) {
                        Ok(t) => tools.push(t),
                        Err(d) => diags.extend(d),
                    }
                }
            }
            Err(d) => diags.push(d),
        }
    }
    diags.extend(validate::check_set(&mut tools));
    if diags.iter().any(Diagnostic::is_error) {
        diags.extend(tools.into_iter().flat_map(|t| t.warnings));
        let mut d = Diagnostics(diags);
        d.sort();
        Err(d)
    } else {
        Ok(tools)
    }
}

/// Every warning of a loaded tool set, sorted by file and position.
pub fn warnings(tools: &[ToolSpec]) -> Diagnostics {
    let mut d = Diagnostics(tools.iter().flat_map(|t| t.warnings.clone()).collect());
    d.sort();
    d
}
