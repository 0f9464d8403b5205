//! The frontmatter of an Agent Skills `SKILL.md` (MCP's skills extension, SEP-2640), read
//! the one way a server that serves it and a client that checks it must agree on.

use serde_json::{Map, Value};

/// Why a `SKILL.md`'s frontmatter could not be read: its text says what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontmatterError(String);

impl std::fmt::Display for FrontmatterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FrontmatterError {}

/// The frontmatter of `text` (a `SKILL.md`): the YAML between its first line, `---`, and
/// the next line that is `---` (spaces or tabs may follow), read as YAML 1.2 reads it
/// (`yes` is a string, a `<<` merge key and aliases are refused, 16 levels and 4,096
/// nodes at most), as a JSON object. A byte-order mark before it is skipped.
pub fn skill_frontmatter(text: &str) -> Result<Map<String, Value>, FrontmatterError> {
    read(text).map_err(FrontmatterError)
}

fn read(text: &str) -> Result<Map<String, Value>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or("SKILL.md does not begin with a `---` frontmatter block")?;
    let yaml = closing(rest).ok_or("SKILL.md's frontmatter has no closing `---` line")?;
    let options = serde_saphyr::options! {
        strict_booleans: true,
        merge_keys: serde_saphyr::MergeKeyPolicy::Error,
        budget: serde_saphyr::budget! {
            max_depth: 16,
            max_nodes: 4096,
            max_aliases: 0,
        },
    };
    let value: Value = serde_saphyr::from_str_with_options(yaml, options)
        .map_err(|e| format!("its frontmatter: {e}"))?;
    match value {
        Value::Object(map) => Ok(map),
        _ => Err("its frontmatter is not a mapping".into()),
    }
}

/// The frontmatter before the first line that is `---`.
fn closing(rest: &str) -> Option<&str> {
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line
            .trim_end_matches(['\n', '\r'])
            .trim_end_matches([' ', '\t']);
        if bare == "---" {
            return Some(rest[..at].trim_end_matches(['\n', '\r']));
        }
        at += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_frontmatter_reads_as_yaml_1_2() {
        let fm =
            skill_frontmatter("---\nname: a\ndescription: d\nok: yes\nn: 1\n---\n# body\n---\n")
                .unwrap();
        assert_eq!(
            Value::Object(fm),
            json!({"name": "a", "description": "d", "ok": "yes", "n": 1})
        );
        assert!(
            skill_frontmatter("---\na: 1\n----\n").is_err(),
            "`----` does not close it"
        );
        assert!(skill_frontmatter("---\nname: a\n---  \n").is_ok());
        assert!(
            skill_frontmatter("---\nb: &x {c: 1}\nd: *x\n---\n").is_err(),
            "aliases"
        );
        assert!(
            skill_frontmatter("---\nb: {c: 1}\nd:\n  <<: {e: 1}\n---\n").is_err(),
            "merge keys"
        );
        assert!(skill_frontmatter("no frontmatter").is_err());
        assert!(
            skill_frontmatter("---\n- a\n---\n").is_err(),
            "not a mapping"
        );
        let deep = format!("---\na: {}{}\n---\n", "[".repeat(100), "]".repeat(100));
        assert!(skill_frontmatter(&deep).is_err(), "too deep");
    }
}
