//! An MCP server's skills (SEP-2640, `io.modelcontextprotocol/skills`), as a client reads
//! them: [`Runtime::mcp_skills`](crate::Runtime::mcp_skills) lists them (no file is read
//! until asked: the spec's "no prefetch"), and
//! [`Runtime::mcp_skill_file`](crate::Runtime::mcp_skill_file) reads one file and checks
//! it against the size and digest its skill's manifest promised.

use serde_json::{Map, Value};

/// The most skills read from one server (every page together).
pub const MAX_SKILLS: usize = 10_000;
/// The most `skills/list` pages read from one server.
pub const MAX_SKILL_PAGES: usize = 100;
/// The largest skill file read (the spec's SHOULD for a whole skill: 16 MiB).
pub const MAX_SKILL_FILE_BYTES: u64 = 16 << 20;

/// One skill a server serves.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct McpSkill {
    /// The URI of its `SKILL.md`.
    pub uri: String,
    /// Its name (the frontmatter's `name`).
    pub name: String,
    /// What it is for (the frontmatter's `description`).
    pub description: String,
    /// The frontmatter's other fields, as the server gave them.
    pub frontmatter: Map<String, Value>,
    /// Its files with their sizes and digests; `None` when the server says they are
    /// dynamic (no stable digests).
    pub files: Option<Vec<McpSkillFile>>,
}

/// One file of a skill, as its manifest describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct McpSkillFile {
    /// Its resource URI.
    pub uri: String,
    /// `sha256:` and 64 hex digits.
    pub digest: String,
    /// Its length in bytes.
    pub size: u64,
}

/// Why a server's skills, or one of their files, could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpSkillError {
    /// No server of that name in the runtime.
    UnknownServer(String),
    /// The server does not declare the skills extension.
    NotOffered(String),
    /// The server could not be reached, or its answer was an error.
    Server(String),
    /// The server's answer breaks the extension's rules (a page loop, too many skills, an
    /// entry the spec forbids).
    Protocol(String),
    /// The file is not in the skill's manifest (or the skill's files are dynamic and
    /// `verify` was asked), or it is over [`MAX_SKILL_FILE_BYTES`].
    NotInManifest(String),
    /// The bytes read are not what the manifest promised (size or digest).
    Integrity(String),
}

impl std::fmt::Display for McpSkillError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            McpSkillError::UnknownServer(s) => write!(f, "no MCP server `{s}` in this runtime"),
            McpSkillError::NotOffered(s) => write!(
                f,
                "MCP server `{s}` does not offer skills (it does not declare io.modelcontextprotocol/skills)"
            ),
            McpSkillError::Server(why)
            | McpSkillError::Protocol(why)
            | McpSkillError::NotInManifest(why)
            | McpSkillError::Integrity(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for McpSkillError {}

impl McpSkill {
    /// A skill entry from the wire; `None` when its frontmatter lacks a name or
    /// description.
    pub(crate) fn of(skill: rmcp::model::Skill) -> Result<McpSkill, String> {
        skill.validate().map_err(|e| e.to_string())?;
        let files = match skill.resources {
            rmcp::model::SkillResources::Files(files) => Some(
                files
                    .into_iter()
                    .map(|f| McpSkillFile {
                        uri: f.uri,
                        digest: f.digest,
                        size: f.size,
                    })
                    .collect(),
            ),
            _ => None,
        };
        Ok(McpSkill {
            uri: skill.uri,
            name: skill.frontmatter.name,
            description: skill.frontmatter.description,
            frontmatter: skill.frontmatter.extra,
            files,
        })
    }

    /// Whether `read` (a `SKILL.md`'s frontmatter) is the one this entry gave.
    pub(crate) fn same_frontmatter(&self, read: &Map<String, Value>) -> Result<(), McpSkillError> {
        let mut listed = self.frontmatter.clone();
        listed.insert("name".into(), self.name.clone().into());
        listed.insert("description".into(), self.description.clone().into());
        if &listed == read {
            return Ok(());
        }
        let mut keys: Vec<&str> = listed
            .keys()
            .chain(read.keys())
            .filter(|k| listed.get(*k) != read.get(*k))
            .map(String::as_str)
            .collect();
        keys.sort();
        keys.dedup();
        Err(McpSkillError::Integrity(format!(
            "{}: its frontmatter is not the one skills/list gave (it differs in {})",
            crate::untrusted::echo(&self.uri),
            crate::untrusted::echo(&keys.join(", "))
        )))
    }

    /// The manifest entry of `uri`, when the skill lists it.
    pub fn file(&self, uri: &str) -> Option<&McpSkillFile> {
        self.files.as_ref()?.iter().find(|f| f.uri == uri)
    }
}

impl McpSkillFile {
    /// Whether `bytes` are this file's (its size, then its digest).
    pub(crate) fn check(&self, bytes: &[u8]) -> Result<(), McpSkillError> {
        rmcp::model::SkillResource::new(self.uri.clone(), self.digest.clone(), self.size)
            .verify(bytes)
            .map_err(|e| {
                McpSkillError::Integrity(format!("{}: {e}", crate::untrusted::echo(&self.uri)))
            })
    }
}
