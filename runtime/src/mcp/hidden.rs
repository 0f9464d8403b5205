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
    // A path in the error text ends at a space, a quote or punctuation around it.
    let stop = |c: char| c.is_whitespace() || "\"'`()[]{},;=<>".contains(c);
    named.extend(
        said.split(stop)
            .map(|t| t.trim_end_matches([':', '.']))
            .filter(|t| t.starts_with('/'))
            .take(64),
    );
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
