//! MCP's skills extension in `serve` (SEP-2640, `io.modelcontextprotocol/skills`):
//! `skills/list`, `skills/get`, and each skill's files through `resources/read` at
//! `skill://<name>/<path>`.
//!
//! Two sources: each served tool as a skill (`--tool-skills`), its `SKILL.md` generated
//! from the TOOL.md ([`tool_skill_name`] maps the tool's name to a skill name); and
//! folders of Agent Skills served as they are (`--skills DIR`: each subfolder holding a
//! `SKILL.md`, with every regular file below it). Every file is read once, when the
//! folders are (re)loaded, and served from memory: what a client reads is what its
//! digest promised, whatever happens on disk meanwhile. Symbolic links, hidden entries
//! and special files are left out; a skill over [`MAX_FILES`] files or [`MAX_SKILL_BYTES`]
//! is skipped, and all skills together stop at [`MAX_TOTAL_BYTES`] (a warning says so).

use std::collections::BTreeMap;
use std::path::Path;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    GetSkillResult, ListSkillsResult, ReadResourceResult, Resource, ResourceContents, Skill,
    SkillFrontmatter, SkillResource, SkillResources,
};
use serde_json::{Map, Value};
use toolbind_codegen::ToolSpec;

/// The URI scheme of skills.
const SCHEME: &str = "skill://";
/// A skill's entry file.
const SKILL_MD: &str = "SKILL.md";
const MARKDOWN: &str = "text/markdown";
/// The MIME type of a folder (`resources/directory/read`).
const DIRECTORY: &str = "inode/directory";
/// The most files one skill may have (the spec's SHOULD).
pub(crate) const MAX_FILES: usize = 512;
/// The most bytes one skill's files may have together (the spec's SHOULD: 16 MiB).
pub(crate) const MAX_SKILL_BYTES: u64 = 16 << 20;
/// The most bytes all served skills may hold in memory together.
pub(crate) const MAX_TOTAL_BYTES: u64 = 64 << 20;
/// How deep a skill's folders are read.
const MAX_DEPTH: usize = 8;
/// The longest skill name (Agent Skills).
const MAX_NAME: usize = 64;
/// The longest skill description (Agent Skills).
const MAX_DESCRIPTION: usize = 1024;

/// One file of a skill, in memory.
#[derive(Debug, Clone, PartialEq)]
struct File {
    bytes: Vec<u8>,
    mime: &'static str,
}

/// One skill: its entry and its files by URI.
#[derive(Debug, Clone, PartialEq)]
struct Served {
    skill: Skill,
    files: BTreeMap<String, File>,
    /// Generated from a TOOL.md (`--tool-skills`), not read from a `--skills` folder.
    generated: bool,
}

/// The skills a server serves at one moment, by name.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Skills {
    by_name: BTreeMap<String, Served>,
}

impl Skills {
    /// The skills of `dirs` (`--skills`) and, when `tools` is given (`--tool-skills`),
    /// one per tool; the warnings of what was left out or renamed, each a line.
    pub(crate) fn load(
        dirs: &[std::path::PathBuf],
        tools: Option<&[ToolSpec]>,
    ) -> (Skills, Vec<String>) {
        let mut skills = Skills::default();
        let mut warnings = Vec::new();
        let mut total = 0u64;
        for dir in dirs {
            skills.load_dir(dir, &mut total, &mut warnings);
        }
        for spec in tools.unwrap_or_default() {
            skills.add_tool(spec, &mut warnings);
        }
        (skills, warnings)
    }

    /// `skills/list`: the `--skills` folders' skills, then the tools', each by name.
    pub(crate) fn list(&self) -> ListSkillsResult {
        ListSkillsResult::with_all_items(self.ordered().map(|s| s.skill.clone()).collect())
    }

    fn ordered(&self) -> impl Iterator<Item = &Served> {
        let authored = self.by_name.values().filter(|s| !s.generated);
        authored.chain(self.by_name.values().filter(|s| s.generated))
    }

    /// `skills/get`: the skill whose `SKILL.md` is at `uri`; -32602 for any other URI.
    pub(crate) fn get(&self, uri: &str) -> Result<GetSkillResult, McpError> {
        self.by_name
            .values()
            .find(|s| s.skill.uri == uri)
            .map(|s| GetSkillResult::new(s.skill.clone()))
            .ok_or_else(|| {
                McpError::invalid_params(
                    format!(
                        "no skill at `{}`; skills/list names the skills served",
                        toolbind::untrusted::echo(uri)
                    ),
                    None,
                )
            })
    }

    /// `resources/list`'s share: each skill's `SKILL.md`, named and described as its
    /// frontmatter says.
    pub(crate) fn resources(&self) -> Vec<Resource> {
        self.ordered()
            .map(|s| {
                let size = s
                    .files
                    .get(&s.skill.uri)
                    .map_or(0, |f| f.bytes.len() as u64);
                Resource::new(s.skill.uri.clone(), s.skill.frontmatter.name.clone())
                    .with_description(s.skill.frontmatter.description.clone())
                    .with_mime_type(MARKDOWN)
                    .with_size(size)
            })
            .collect()
    }

    /// `resources/read` of a skill's file; `None` when `uri` is no file of a skill.
    pub(crate) fn read(&self, uri: &str) -> Option<ReadResourceResult> {
        let name = uri.strip_prefix(SCHEME)?.split('/').next()?;
        let file = self.by_name.get(name)?.files.get(uri)?;
        let contents = match std::str::from_utf8(&file.bytes) {
            Ok(text) => ResourceContents::text(text, uri),
            Err(_) => ResourceContents::blob(base64(&file.bytes), uri),
        };
        Some(ReadResourceResult::new(vec![
            contents.with_mime_type(file.mime),
        ]))
    }

    /// `resources/directory/read`: the direct children of a skill's folder (`skill://<name>`
    /// or a folder below it): its files, and its subfolders as `inode/directory`
    /// resources. -32602 for a URI that is no folder of a skill.
    pub(crate) fn read_dir(&self, uri: &str) -> Result<Vec<Resource>, McpError> {
        let dir = uri.trim_end_matches('/');
        let not_dir = || {
            McpError::invalid_params(
                format!(
                    "`{}` is not a folder of a skill",
                    toolbind::untrusted::echo(uri)
                ),
                None,
            )
        };
        let name = dir
            .strip_prefix(SCHEME)
            .and_then(|rest| rest.split('/').next())
            .ok_or_else(not_dir)?;
        let skill = self.by_name.get(name).ok_or_else(not_dir)?;
        let prefix = format!("{dir}/");
        let mut children: Vec<Resource> = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for (file_uri, file) in skill.files.range(prefix.clone()..) {
            let Some(rest) = file_uri.strip_prefix(&prefix) else {
                break;
            };
            let (segment, nested) = match rest.split_once('/') {
                Some((s, _)) => (s, true),
                None => (rest, false),
            };
            if !seen.insert(segment.to_owned()) {
                continue;
            }
            let child = format!("{prefix}{segment}");
            children.push(if nested {
                Resource::new(child, segment.to_owned()).with_mime_type(DIRECTORY)
            } else {
                Resource::new(child, segment.to_owned())
                    .with_mime_type(file.mime)
                    .with_size(file.bytes.len() as u64)
            });
        }
        if children.is_empty() {
            return Err(not_dir());
        }
        Ok(children)
    }

    /// The URIs of `SKILL.md`s that differ between `self` and `new`.
    pub(crate) fn changed(&self, new: &Skills) -> Vec<String> {
        let names = self.by_name.keys().chain(new.by_name.keys());
        let mut uris: Vec<String> = names
            .filter(|n| self.by_name.get(*n) != new.by_name.get(*n))
            .map(|n| format!("{SCHEME}{n}/{SKILL_MD}"))
            .collect();
        uris.dedup();
        uris
    }

    fn insert(&mut self, served: Served) {
        self.by_name
            .insert(served.skill.frontmatter.name.clone(), served);
    }

    /// Each subfolder of `dir` that holds a `SKILL.md`, as a skill.
    fn load_dir(&mut self, dir: &Path, total: &mut u64, warnings: &mut Vec<String>) {
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) => {
                warnings.push(format!(
                    "--skills {}: {e}; no skill read from it",
                    dir.display()
                ));
                return;
            }
        };
        let mut folders: Vec<_> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .filter(|p| p.join(SKILL_MD).is_file() && !hidden(p))
            .collect();
        folders.sort();
        for folder in folders {
            match read_skill(&folder) {
                Err(why) => warnings.push(format!("skill {}: {why}; not served", folder.display())),
                Ok(served) => {
                    let name = served.skill.frontmatter.name.clone();
                    let size: u64 = served.files.values().map(|f| f.bytes.len() as u64).sum();
                    if self.by_name.contains_key(&name) {
                        warnings.push(format!(
                            "skill {}: a skill named `{name}` is already served (an earlier --skills folder); not served",
                            folder.display()
                        ));
                    } else if *total + size > MAX_TOTAL_BYTES {
                        warnings.push(format!(
                            "skill {}: the skills served would pass {} MiB in all; not served",
                            folder.display(),
                            MAX_TOTAL_BYTES >> 20
                        ));
                    } else {
                        *total += size;
                        self.insert(served);
                    }
                }
            }
        }
    }

    /// A tool as a skill: its `SKILL.md` generated from its TOOL.md, under
    /// [`tool_skill_name`]; a name a `--skills` skill or an earlier tool has already is
    /// given `-2`, `-3`, ... (a warning says so).
    fn add_tool(&mut self, spec: &ToolSpec, warnings: &mut Vec<String>) {
        let base = tool_skill_name(&spec.name);
        let mut name = base.clone();
        let mut n = 1;
        while self.by_name.contains_key(&name) {
            n += 1;
            let suffix = format!("-{n}");
            name = format!(
                "{}{suffix}",
                base[..base.len().min(MAX_NAME - suffix.len())].trim_end_matches('-')
            );
        }
        if name != base {
            warnings.push(format!(
                "tool `{}`: the skill name `{base}` is taken; served as skill `{name}`",
                spec.name
            ));
        }
        let description = clipped(&printable(spec.description.trim()), MAX_DESCRIPTION);
        let mut metadata = Map::new();
        metadata.insert("tool".into(), spec.name.clone().into());
        let mut frontmatter = SkillFrontmatter::new(name.clone(), description.clone());
        frontmatter = frontmatter.with_field("metadata", Value::Object(metadata));
        let body = toolbind_codegen::prompt::tool_reference(spec, 1);
        // JSON strings are YAML flow scalars: the file's frontmatter reads back as exactly
        // the entry's.
        let text = format!(
            "---\nname: {}\ndescription: {}\nmetadata:\n  tool: {}\n---\n\n{body}\nCall it as \
             this server's MCP tool `{}`.\n",
            Value::from(name.clone()),
            Value::from(description),
            Value::from(spec.name.clone()),
            spec.name
        );
        let uri = format!("{SCHEME}{name}/{SKILL_MD}");
        let file = File {
            bytes: text.into_bytes(),
            mime: MARKDOWN,
        };
        let resources =
            SkillResources::Files(vec![SkillResource::from_bytes(uri.clone(), &file.bytes)]);
        self.insert(Served {
            skill: Skill::new(uri.clone(), frontmatter, resources),
            files: BTreeMap::from([(uri, file)]),
            generated: true,
        });
    }
}

/// A tool's name as a skill name (Agent Skills: 1–64 lowercase letters, digits and single
/// hyphens, neither first nor last): lowercased, every run of other characters (`_`,
/// `.`, spaces) one `-`, cut to 64, `tool` when nothing is left. `web_fetch` ->
/// `web-fetch`, `HTTPGet` -> `httpget`.
pub(crate) fn tool_skill_name(tool: &str) -> String {
    let mut name = String::new();
    for c in tool.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            name.push(c);
        } else if !name.ends_with('-') && !name.is_empty() {
            name.push('-');
        }
    }
    name.truncate(MAX_NAME);
    let name = name.trim_matches('-').to_owned();
    if name.is_empty() {
        "tool".to_owned()
    } else {
        name
    }
}

/// Whether `name` is a skill name (the Agent Skills rules).
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

fn hidden(p: &Path) -> bool {
    p.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
}

/// `text` with what YAML refuses in a flow scalar (control characters but newline and tab,
/// U+FFFE, U+FFFF, the line and paragraph separators) made spaces.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\n' | '\t' => c,
            c if c.is_control() => ' ',
            '\u{2028}' | '\u{2029}' | '\u{fffe}' | '\u{ffff}' => ' ',
            c => c,
        })
        .collect()
}

fn clipped(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => text[..at].to_owned(),
        None => text.to_owned(),
    }
}

/// A `--skills` folder as a skill: its `SKILL.md`'s frontmatter checked (a mapping with a
/// string `name`, equal to the folder's name and a skill name, and a string
/// `description`), every regular file below it read.
fn read_skill(folder: &Path) -> Result<Served, String> {
    let folder_name = folder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut files = Vec::new();
    // Opened without following a link, then read through its descriptor: a folder (or
    // an ancestor of a file) swapped for a link meanwhile is never followed.
    let dir = open_dir_nofollow(folder).map_err(|e| format!("{e}"))?;
    let mut budget = MAX_SKILL_BYTES;
    collect(&dir, "", 0, &mut budget, &mut files)?;
    let entry = files
        .iter()
        .find(|(path, _)| path == SKILL_MD)
        .map(|(_, b)| b.clone())
        .ok_or("no regular SKILL.md file")?;
    let frontmatter = frontmatter(&entry)?;
    let name = frontmatter.name.clone();
    if !valid_name(&name) {
        return Err(format!(
            "`name: {name}` is not a skill name (1-64 lowercase letters, digits and single hyphens)"
        ));
    }
    if name != folder_name {
        return Err(format!(
            "`name: {name}` differs from the folder's name `{folder_name}`"
        ));
    }
    let mut served = BTreeMap::new();
    let mut manifest = Vec::new();
    for (path, bytes) in files {
        let uri = format!("{SCHEME}{name}/{}", encode_path(&path));
        manifest.push(SkillResource::from_bytes(uri.clone(), &bytes));
        served.insert(
            uri,
            File {
                mime: mime_of(&path),
                bytes,
            },
        );
    }
    let uri = format!("{SCHEME}{name}/{SKILL_MD}");
    Ok(Served {
        skill: Skill::new(uri, frontmatter, SkillResources::Files(manifest)),
        files: served,
        generated: false,
    })
}

/// A folder opened without following a link (`O_NOFOLLOW | O_DIRECTORY`).
fn open_dir_nofollow(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_DIRECTORY | nix::libc::O_NOFOLLOW | nix::libc::O_CLOEXEC)
        .open(path)
}

/// A file opened without following a link, not blocking on a FIFO swapped in.
fn open_file_nofollow(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK | nix::libc::O_CLOEXEC)
        .open(path)
}

/// The regular files below the open folder `dir` (`prefix` their path so far). Every
/// entry is reached through `dir`'s descriptor (`/proc/self/fd/N/<name>`) and opened
/// without following a link, so no path is resolved again by name; a file's size is
/// checked against `budget` (what the skill may still hold) before a byte is read, and
/// it is read no further than its size.
fn collect(
    dir: &std::fs::File,
    prefix: &str,
    depth: usize,
    budget: &mut u64,
    out: &mut Vec<(String, Vec<u8>)>,
) -> Result<(), String> {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    if depth > MAX_DEPTH {
        return Err(format!("folders nested deeper than {MAX_DEPTH}"));
    }
    let here = std::path::PathBuf::from(format!("/proc/self/fd/{}", dir.as_raw_fd()));
    let mut names: Vec<std::ffi::OsString> = std::fs::read_dir(&here)
        .map_err(|e| format!("{}: {e}", show(prefix)))?
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .collect();
    names.sort();
    for os_name in names {
        let Some(name) = os_name.to_str() else {
            // A name that is no UTF-8 cannot be one URI of its own.
            return Err(format!("a file name in {} is not UTF-8", show(prefix)));
        };
        if name.starts_with('.') {
            continue;
        }
        let path = if prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{prefix}/{name}")
        };
        let Ok(meta) = std::fs::symlink_metadata(here.join(name)) else {
            continue;
        };
        if meta.is_dir() {
            let sub = open_dir_nofollow(&here.join(name)).map_err(|e| format!("{path}: {e}"))?;
            collect(&sub, &path, depth + 1, budget, out)?;
        } else if meta.is_file() {
            if out.len() >= MAX_FILES {
                return Err(format!(
                    "more than {MAX_FILES} files: over what a skill may have"
                ));
            }
            let file = open_file_nofollow(&here.join(name)).map_err(|e| format!("{path}: {e}"))?;
            let meta = file.metadata().map_err(|e| format!("{path}: {e}"))?;
            if !meta.is_file() {
                continue;
            }
            if meta.len() > *budget {
                return Err(format!(
                    "over the {} MiB a skill may have (at {path})",
                    MAX_SKILL_BYTES >> 20
                ));
            }
            let mut bytes = Vec::with_capacity(meta.len() as usize);
            file.take(meta.len())
                .read_to_end(&mut bytes)
                .map_err(|e| format!("{path}: {e}"))?;
            *budget -= bytes.len() as u64;
            out.push((path, bytes));
        }
        // Links and special files are not a skill's files.
    }
    Ok(())
}

/// A folder's path within its skill, for a message.
fn show(prefix: &str) -> String {
    if prefix.is_empty() {
        "the skill's folder".to_owned()
    } else {
        format!("`{prefix}`")
    }
}

/// The frontmatter of a `SKILL.md` (`toolbind_codegen::skill_frontmatter`), its name and
/// description required.
fn frontmatter(bytes: &[u8]) -> Result<SkillFrontmatter, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "SKILL.md is not UTF-8")?;
    let mut map = toolbind_codegen::skill_frontmatter(text).map_err(|e| e.to_string())?;
    let name = match map.remove("name") {
        Some(Value::String(s)) if !s.is_empty() => s,
        _ => return Err("its frontmatter has no `name`".into()),
    };
    let description = match map.remove("description") {
        Some(Value::String(s)) if !s.is_empty() => s,
        _ => return Err("its frontmatter has no `description`".into()),
    };
    let mut fm = SkillFrontmatter::new(name, description);
    for (k, v) in map {
        fm = fm.with_field(k, v);
    }
    Ok(fm)
}

/// A relative path as URI path segments: every byte outside RFC 3986's unreserved set
/// percent-encoded, `/` kept between segments.
fn encode_path(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn mime_of(path: &str) -> &'static str {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("md") => MARKDOWN,
        Some("txt") => "text/plain",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("py") => "text/x-python",
        Some("sh") => "text/x-shellscript",
        Some("js" | "mjs") => "text/javascript",
        Some("ts") => "text/x-typescript",
        Some("html") => "text/html",
        Some("csv") => "text/csv",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("pdf") => "application/pdf",
        _ => "application/octet-stream",
    }
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_map_to_skill_names() {
        assert_eq!(tool_skill_name("web_fetch"), "web-fetch");
        assert_eq!(tool_skill_name("HTTPGet"), "httpget");
        assert_eq!(tool_skill_name("__a..b__"), "a-b");
        assert_eq!(tool_skill_name("___"), "tool");
        assert_eq!(tool_skill_name(&"x_".repeat(100)).len(), 63);
        for n in ["web_fetch", "a-b", "Ünïcode_ok", &"y".repeat(300)] {
            assert!(valid_name(&tool_skill_name(n)), "{n}");
        }
    }

    #[test]
    fn base64_is_standard() {
        for (raw, enc) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(raw.as_bytes()), enc);
        }
    }

    #[test]
    fn paths_are_percent_encoded_per_segment() {
        assert_eq!(encode_path("references/FORMS.md"), "references/FORMS.md");
        assert_eq!(encode_path("a b/ü.md"), "a%20b/%C3%BC.md");
    }
}
