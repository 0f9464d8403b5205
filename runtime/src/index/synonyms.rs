//! Words people use for the same action or thing, so that "remove" finds a `delete_file`
//! and "ticket" an issue tracker's `create_issue`. A query's word brings the other words
//! of its group at a lower weight ([`WEIGHT`]); a tool's text is indexed as written.
//!
//! The groups are general English of software tools, written once from what tools do
//! (not from any query set), and kept short: a word in two senses ("open" a file, "open"
//! an issue) is in no group.

use std::collections::HashMap;
use std::sync::OnceLock;

/// A synonym's weight against the query's own word (1).
pub(crate) const WEIGHT: f32 = 0.4;

/// Each group: phrases of one or more words. A query word equal to a one-word phrase of
/// a group brings every term of the group's other phrases.
const GROUPS: &[&[&str]] = &[
    &[
        "delete", "remove", "erase", "rm", "destroy", "trash", "unlink",
    ],
    &["create", "make", "add", "new", "insert", "generate"],
    &[
        "search", "find", "lookup", "locate", "query", "grep", "seek",
    ],
    &["get", "fetch", "retrieve", "download", "obtain", "pull"],
    &["list", "enumerate", "ls", "show", "display"],
    &[
        "edit", "modify", "change", "update", "alter", "patch", "replace",
    ],
    &["read", "view", "load", "cat", "inspect"],
    &["write", "save", "store", "persist"],
    &["run", "execute", "exec", "launch", "invoke", "start"],
    &["stop", "kill", "terminate", "cancel", "abort", "end"],
    &["move", "rename", "mv", "relocate"],
    &["copy", "duplicate", "cp", "clone"],
    &["folder", "directory", "dir"],
    &["issue", "ticket", "bug"],
    &["pr", "pull request", "merge request", "mr"],
    &["repo", "repository", "project"],
    &["screenshot", "screen capture", "screengrab"],
    &[
        "web", "website", "site", "page", "webpage", "url", "link", "http",
    ],
    &["message", "msg", "chat", "dm"],
    &["email", "mail", "e-mail"],
    &["image", "picture", "photo", "img", "pic"],
    &["navigate", "visit", "browse", "goto", "go"],
    &["click", "press", "tap"],
    &["type", "enter", "fill", "input"],
    &["user", "account", "member", "person", "people", "profile"],
    &["channel", "room", "conversation"],
    &["database", "db", "sql"],
    &["kubernetes", "k8s", "kube", "kubectl"],
    &["container", "pod", "docker"],
    &["time", "clock", "hour", "timezone"],
    &["log", "logs", "history"],
    &["commit", "changeset", "revision"],
    &["diff", "difference", "changes", "changed"],
    &["error", "exception", "crash", "failure", "fail"],
    &["summarize", "summary", "tldr", "digest"],
    &["location", "place", "address", "map"],
    &[
        "route",
        "direction",
        "directions",
        "distance",
        "far",
        "travel",
        "trip",
    ],
    &[
        "note",
        "memo",
        "remember",
        "memory",
        "recall",
        "knowledge",
        "fact",
    ],
    &["wait", "sleep", "pause", "delay"],
    &["payment", "charge", "pay", "invoice", "billing"],
    &["customer", "client"],
    &["document", "doc", "docs", "documentation"],
    &["text", "string", "content"],
    &["size", "length", "count", "bytes"],
];

/// Each query term's synonyms' terms (stemmed, as indexed), built once.
fn table() -> &'static HashMap<String, Vec<String>> {
    static TABLE: OnceLock<HashMap<String, Vec<String>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut map: HashMap<String, Vec<String>> = HashMap::new();
        for group in GROUPS {
            let phrases: Vec<Vec<String>> = group.iter().map(|p| raw_terms(p)).collect();
            for (i, own) in phrases.iter().enumerate() {
                let [word] = own.as_slice() else { continue };
                let entry = map.entry(word.clone()).or_default();
                for (j, other) in phrases.iter().enumerate() {
                    for t in other {
                        if j != i && t != word && !entry.contains(t) {
                            entry.push(t.clone());
                        }
                    }
                }
            }
        }
        map
    })
}

/// A phrase's terms as the tokenizer makes them, stop words kept ("go" and "end" are
/// words here).
fn raw_terms(phrase: &str) -> Vec<String> {
    phrase
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut t = w.to_lowercase();
            super::words::stem(&mut t);
            t
        })
        .collect()
}

/// The synonyms' terms of query term `term` (already stemmed), none when it is in no group.
pub(crate) fn of(term: &str) -> &'static [String] {
    table().get(term).map(Vec::as_slice).unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_brings_its_group_stemmed() {
        let s = of("remov");
        assert!(s.contains(&"delet".to_owned()), "{s:?}");
        assert!(!s.contains(&"remov".to_owned()));
        let pr = of("pr");
        assert!(pr.contains(&"pull".to_owned()) && pr.contains(&"request".to_owned()));
        assert!(of("zebra").is_empty());
    }

    #[test]
    fn every_group_word_is_a_term_the_tokenizer_makes() {
        for group in GROUPS {
            for phrase in *group {
                for w in raw_terms(phrase) {
                    assert!(!w.is_empty(), "{phrase}");
                }
            }
        }
    }
}
