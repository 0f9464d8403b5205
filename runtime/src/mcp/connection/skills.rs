//! A server's skills through its live connection: `skills/list` (every page, bounded) and
//! one file by `resources/read`, checked against its manifest entry.

use super::*;
use crate::mcp::skills::{
    MAX_SKILL_FILE_BYTES, MAX_SKILL_PAGES, MAX_SKILLS, McpSkill, McpSkillError, McpSkillFile,
};

impl Connection {
    /// Every skill the server serves (no file is read).
    pub(crate) async fn skills(self: &Arc<Self>) -> Result<Vec<McpSkill>, McpSkillError> {
        let live = self
            .live()
            .await
            .map_err(|r| McpSkillError::Server(r.text_content()))?;
        let peer = live.client.peer().clone();
        if !peer
            .peer_info()
            .is_some_and(|i| i.capabilities.supports_skills())
        {
            return Err(McpSkillError::NotOffered(self.name().to_owned()));
        }
        let mut skills = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..MAX_SKILL_PAGES {
            let params = cursor
                .take()
                .map(|c| rmcp::model::PaginatedRequestParams::default().with_cursor(Some(c)));
            let wait = self.list_limits().page_timeout;
            let page = tokio::time::timeout(wait, peer.list_skills(params))
                .await
                .map_err(|_| {
                    McpSkillError::Server(format!(
                        "{}: skills/list: no answer within {} s",
                        self.name(),
                        wait.as_secs()
                    ))
                })?
                .map_err(|e| McpSkillError::Server(format!("{}: skills/list: {e}", self.name())))?;
            for s in page.skills {
                if skills.len() >= MAX_SKILLS {
                    return Err(McpSkillError::Protocol(format!(
                        "{}: more than {MAX_SKILLS} skills",
                        self.name()
                    )));
                }
                let skill = McpSkill::of(s).map_err(|why| {
                    McpSkillError::Protocol(format!("{}: a skill entry: {why}", self.name()))
                })?;
                skills.push(skill);
            }
            match page.next_cursor {
                Some(next) if !next.is_empty() => {
                    if !seen.insert(next.clone()) {
                        return Err(McpSkillError::Protocol(format!(
                            "{}: skills/list gave a cursor it gave before",
                            self.name()
                        )));
                    }
                    cursor = Some(next);
                }
                _ => return Ok(skills),
            }
        }
        Err(McpSkillError::Protocol(format!(
            "{}: skills/list did not end within {MAX_SKILL_PAGES} pages",
            self.name()
        )))
    }

    /// The bytes of `file` (read with `resources/read`), checked against its size and
    /// digest.
    pub(crate) async fn skill_file(
        self: &Arc<Self>,
        file: &McpSkillFile,
    ) -> Result<Vec<u8>, McpSkillError> {
        if file.size > MAX_SKILL_FILE_BYTES {
            return Err(McpSkillError::NotInManifest(format!(
                "{}: {} bytes, over the {} MiB a skill file may have",
                crate::untrusted::echo(&file.uri),
                file.size,
                MAX_SKILL_FILE_BYTES >> 20
            )));
        }
        let bytes = self.read_uri(&file.uri).await?;
        file.check(&bytes)?;
        Ok(bytes)
    }

    /// The bytes of the resource at `uri` (`resources/read`, within the page timeout).
    pub(crate) async fn read_uri(self: &Arc<Self>, uri: &str) -> Result<Vec<u8>, McpSkillError> {
        let shown = crate::untrusted::echo(uri);
        let live = self
            .live()
            .await
            .map_err(|r| McpSkillError::Server(r.text_content()))?;
        let wait = self.list_limits().page_timeout;
        let request = live
            .client
            .peer()
            .read_resource(rmcp::model::ReadResourceRequestParams::new(uri.to_owned()));
        let read = tokio::time::timeout(wait, request)
            .await
            .map_err(|_| {
                McpSkillError::Server(format!(
                    "{}: resources/read {shown}: no answer within {} s",
                    self.name(),
                    wait.as_secs()
                ))
            })?
            .map_err(|e| {
                McpSkillError::Server(format!("{}: resources/read {shown}: {e}", self.name()))
            })?;
        let contents = read.contents.into_iter().next().ok_or_else(|| {
            McpSkillError::Protocol(format!(
                "{}: resources/read {shown} returned no contents",
                self.name()
            ))
        })?;
        match contents {
            rmcp::model::ResourceContents::TextResourceContents { text, .. } => {
                Ok(text.into_bytes())
            }
            rmcp::model::ResourceContents::BlobResourceContents { blob, .. } => decode(&blob)
                .map_err(|why| {
                    McpSkillError::Protocol(format!(
                        "{}: {shown}: its blob is not base64 ({why})",
                        self.name()
                    ))
                }),
            _ => Err(McpSkillError::Protocol(format!(
                "{}: {shown}: neither text nor blob",
                self.name()
            ))),
        }
    }
}

/// A blob's bytes (standard or URL-safe base64, padded or not).
fn decode(blob: &str) -> Result<Vec<u8>, String> {
    let mut d = crate::spill::Base64Stream::default();
    let mut out = Vec::new();
    d.feed(blob, &mut out)?;
    d.finish(&mut out)?;
    Ok(out)
}
