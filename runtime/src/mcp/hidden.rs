//! A jailed stdio server's tool that failed on a path its jail does not show: the result
//! gets a note naming the path and the grant that would show it, as a local tool's does.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::sandbox::SandboxPolicy;

/// System folders every jail shows (or replaces with its own, as `/proc`): never a grant
/// to suggest. (Its `/tmp` is its own: a host path there is hidden.)
const SYSTEM: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/proc", "/dev", "/sys",
];

/// What a server's jail shows of the host, as real paths: the system folders, the grants,
/// the server's own folders (`own`: its state root and private folder) and what its
/// command's plan binds.
pub(super) fn shown(policy: &SandboxPolicy, own: &[&Path], binds: &[PathBuf]) -> Vec<PathBuf> {
    let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    SYSTEM
        .iter()
        .map(|s| real(Path::new(s)))
        .chain(policy.get_read().iter().map(|p| real(p)))
        .chain(policy.get_write().iter().map(|p| real(p)))
        .chain(own.iter().map(|p| real(p)))
        .chain(binds.iter().map(|p| real(p)))
        .collect()
}

/// The note for a failed call whose arguments `args` or error text `said` name an
/// absolute path that exists on this machine but that `shown` does not hold; `None` when
/// nothing does.
pub(crate) fn note(
    server: &str,
    policy: &SandboxPolicy,
    shown: &[PathBuf],
    args: &serde_json::Map<String, Value>,
    said: &str,
) -> Option<String> {
    let mut named: Vec<&str> = Vec::new();
    strings(args.values(), &mut named);
    // A path in the error text ends at a space, a quote or punctuation around it. Only
    // one the call's arguments led to is looked at (an argument it starts or ends with, as
    // a relative argument the server resolved, or a folder and a file in it): whether a
    // path the server chose exists on the host is not the server's to learn through the
    // model.
    let stop = |c: char| c.is_whitespace() || "\"'`()[]{},;=<>".contains(c);
    let from_args = |t: &str| {
        named.iter().any(|a| {
            let a = a.trim_end_matches('/');
            a.len() > 1 && (t.starts_with(a) || t.ends_with(a))
        })
    };
    let in_text: Vec<&str> = said
        .split(stop)
        .map(|t| t.trim_end_matches([':', '.']))
        .filter(|t| t.starts_with('/'))
        .take(64)
        .filter(|t| from_args(t))
        .collect();
    named.extend(in_text);
    let mut hidden: Vec<String> = Vec::new();
    for s in named {
        if s.len() > 4096 || s.contains('\n') || !s.starts_with('/') {
            continue;
        }
        let Ok(host) = Path::new(s).canonicalize() else {
            continue;
        };
        let label = format!("`{s}`");
        if host != Path::new("/")
            && !shown.iter().any(|r| host.starts_with(r))
            && !hidden.contains(&label)
        {
            hidden.push(label);
        }
        if hidden.len() == 8 {
            break;
        }
    }
    if hidden.is_empty() {
        return None;
    }
    let (these, exist, it) = if hidden.len() == 1 {
        ("this path", "exists", "it")
    } else {
        ("these paths", "exist", "them")
    };
    Some(format!(
        "note: {these} {exist} on this machine but the jail of MCP server `{server}` does not show {it} to the server: {} (a jailed server sees system folders, its own folders and granted paths). Grant access with {}.",
        hidden.join(", "),
        policy.get_grant_hints().grant()
    ))
}

/// The string values of `values`, nested ones included (at most 64).
fn strings<'a>(values: impl Iterator<Item = &'a Value>, out: &mut Vec<&'a str>) {
    for v in values {
        if out.len() >= 64 {
            return;
        }
        match v {
            Value::String(s) => out.push(s),
            Value::Array(a) => strings(a.iter(), out),
            Value::Object(m) => strings(m.values(), out),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> serde_json::Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn only_a_path_the_arguments_led_to_is_looked_at() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("notes.txt");
        std::fs::write(&file, "x").unwrap();
        let other = tempfile::tempdir().unwrap();
        let policy = SandboxPolicy::new();
        let f = file.to_str().unwrap();
        // Named by the arguments: noted.
        let n = note("s", &policy, &[], &args(json!({"path": f})), "failed").unwrap();
        assert!(n.contains(f), "{n}");
        // A relative argument the server resolved, in its error text: noted.
        let said = format!("cannot read {f}: No such file or directory");
        let n = note(
            "s",
            &policy,
            &[],
            &args(json!({"path": "notes.txt"})),
            &said,
        )
        .unwrap();
        assert!(n.contains(f), "{n}");
        // A path only the server's text names: not looked at (the model would learn
        // whether it exists on the host).
        let said = format!("cannot read {}: denied", other.path().display());
        assert_eq!(
            note("s", &policy, &[], &args(json!({"path": "x"})), &said),
            None
        );
        // Shown by the jail: no note.
        let shown = vec![dir.path().canonicalize().unwrap()];
        assert_eq!(
            note("s", &policy, &shown, &args(json!({"path": f})), "failed"),
            None
        );
    }
}
