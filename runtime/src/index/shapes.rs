//! The parts of a request that are not words but things named: a URL, a file path, a
//! file name, a Slack-style `#channel`, an `@user`, an e-mail address, a `` `command` ``.
//! Their own words say little of the tool wanted ("/etc/nginx/nginx.conf" is no request
//! for nginx): they count for [`LITERAL_WEIGHT`], and what they are ("a file", "a web
//! page") counts for [`CONCEPT_WEIGHT`].

/// The weight of the words inside a thing named.
pub(crate) const LITERAL_WEIGHT: f32 = 0.3;
/// The weight of what a thing named is.
pub(crate) const CONCEPT_WEIGHT: f32 = 0.6;

const IMAGE: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "webp", "svg", "bmp", "ico", "tiff",
];
const TEXT: &[&str] = &[
    "md", "txt", "conf", "cfg", "ini", "toml", "yaml", "yml", "json", "xml", "csv", "log", "html",
    "htm", "css", "js", "ts", "py", "rs", "go", "java", "c", "h", "cpp", "sh", "sql", "env",
    "lock",
];
const AUDIO: &[&str] = &["mp3", "wav", "flac", "ogg", "m4a", "aac", "opus"];

/// What `chunk` (a piece of a query between spaces) names, as English words of tools'
/// descriptions; `None` when it is plain words.
pub(crate) fn concepts(chunk: &str) -> Option<&'static [&'static str]> {
    let raw = chunk.trim_matches(|c: char| {
        matches!(
            c,
            '"' | '\'' | '(' | ')' | ',' | '?' | '!' | ';' | ':' | '[' | ']' | '<' | '>'
        )
    });
    if raw.starts_with('`') || raw.ends_with('`') {
        return Some(&["command"]);
    }
    let t = raw.trim_end_matches('.');
    if t.len() < 2 {
        return None;
    }
    if t.contains("://") || t.starts_with("www.") {
        return Some(&["url", "web", "page"]);
    }
    if let Some(rest) = t.strip_prefix('#') {
        return rest
            .chars()
            .next()
            .filter(|c| c.is_alphanumeric())
            .map(|_| &["channel"][..]);
    }
    if let Some(rest) = t.strip_prefix('@') {
        return rest
            .chars()
            .next()
            .filter(|c| c.is_alphanumeric())
            .map(|_| &["user"][..]);
    }
    if t.contains('@') && t.rsplit('@').next().is_some_and(|d| d.contains('.')) {
        return Some(&["email", "address"]);
    }
    let last = t.rsplit(['/', '\\']).next().unwrap_or(t);
    let ext = last
        .rsplit_once('.')
        .filter(|(stem, e)| !stem.is_empty() && !e.is_empty() && e.len() <= 5)
        .map(|(_, e)| e.to_ascii_lowercase());
    let kind: Option<&'static [&'static str]> = match ext.as_deref() {
        Some(e) if IMAGE.contains(&e) => Some(&["image", "file"]),
        Some(e) if AUDIO.contains(&e) => Some(&["audio", "file"]),
        Some("pdf") => Some(&["pdf", "file"]),
        Some(e) if TEXT.contains(&e) => Some(&["file", "text"]),
        _ => None,
    };
    let pathlike = t.starts_with('~')
        || t.starts_with('/')
        || t.starts_with("./")
        || t.contains('\\')
        || t.matches('/').count() >= 2;
    match (kind, pathlike) {
        (Some(k), _) => Some(k),
        (None, true) => Some(&["directory", "path"]),
        (None, false) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn things_named_are_told_from_words() {
        assert_eq!(
            concepts("/etc/nginx/nginx.conf"),
            Some(&["file", "text"][..])
        );
        assert_eq!(concepts("~/screens/bug.png"), Some(&["image", "file"][..]));
        assert_eq!(
            concepts("~/projects/new-site/assets/img"),
            Some(&["directory", "path"][..])
        );
        assert_eq!(
            concepts("https://example.com/a?b=c"),
            Some(&["url", "web", "page"][..])
        );
        assert_eq!(concepts("#incidents"), Some(&["channel"][..]));
        assert_eq!(concepts("@ada,"), Some(&["user"][..]));
        assert_eq!(concepts("ada@example.com"), Some(&["email", "address"][..]));
        assert_eq!(concepts("`npm"), Some(&["command"][..]));
        assert_eq!(concepts("report.pdf"), Some(&["pdf", "file"][..]));
        for plain in [
            "read",
            "a",
            "file",
            "e.g.",
            "U.S.",
            "1.5",
            "#",
            "@",
            "and/or",
            "pallets/flask",
        ] {
            assert_eq!(concepts(plain), None, "{plain}");
        }
    }
}
