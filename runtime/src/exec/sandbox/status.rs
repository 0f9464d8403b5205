//! Each limit of a policy, and what enforces it on this machine — or why nothing does and
//! how to get it. `SandboxStatus::limits` carries it; its prose `reason` is made from it.

use super::SandboxPolicy;
use super::cgroup::{self, is_root};

/// One limit of the sandbox and whether it holds on this machine
/// ([`SandboxStatus::limits`](super::SandboxStatus::limits)).
///
/// ```
/// use toolbind::sandbox::{Enforcement, SandboxStatus};
/// fn memory_per_call_holds(status: &SandboxStatus) -> bool {
///     status
///         .limits
///         .iter()
///         .any(|l| l.name == "call_memory" && matches!(l.enforced, Enforcement::Enforced { .. }))
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LimitStatus {
    /// Which limit: `call_memory` (bytes, all of a call's processes together),
    /// `processes` (a call's processes at once), `memory` (bytes per process), `cpu`
    /// (seconds per call), `file_size` (bytes), or `tracking` (every process a call
    /// starts, daemons included, ends with it; listed only when tools run unjailed or in
    /// the lighter jail, which has no PID namespace to end them; `value` always `None`). Stable names, as [`SandboxLimits::is_explicit`] takes them
    /// (`tracking` aside).
    ///
    /// [`SandboxLimits::is_explicit`]: super::SandboxLimits::is_explicit
    pub name: &'static str,
    /// The value in force, in the unit above; `None`: unlimited.
    pub value: Option<u64>,
    /// Whether the runtime's owner set it (a `SandboxLimits` setter, a CLI flag) rather
    /// than leaving the default. An explicit limit that is not enforced fails each call
    /// under `required` before the tool runs.
    pub explicit: bool,
    /// What enforces it here, or why nothing does.
    pub enforced: Enforcement,
}

/// Whether a limit holds on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Enforcement {
    /// It holds; `by` names the mechanism (`RLIMIT_DATA`, `a memory cgroup (v1)`, ...).
    Enforced {
        /// The mechanism, in a few words.
        by: String,
    },
    /// It does not hold here: `why`, and what the user can do about it (`fix`).
    NotEnforced {
        /// What is missing, naming the folder or setting.
        why: String,
        /// How to get the limit enforced.
        fix: String,
    },
    /// The limit is set to unlimited.
    Unlimited,
}

impl LimitStatus {
    /// Whether the limit holds here (or is unlimited, so there is nothing to hold).
    pub fn holds(&self) -> bool {
        !matches!(self.enforced, Enforcement::NotEnforced { .. })
    }

    /// How the prose names it: `memory per call`, `processes`, `memory per process`,
    /// `CPU time per call`, `file size`, `daemons of a call`.
    pub fn label(&self) -> &'static str {
        label(self.name)
    }
}

fn label(name: &str) -> &'static str {
    match name {
        "call_memory" => "memory per call",
        "processes" => "processes",
        "memory" => "memory per process",
        "cpu" => "CPU time per call",
        "file_size" => "file size",
        _ => "daemons of a call",
    }
}

impl std::fmt::Display for LimitStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.enforced {
            Enforcement::Enforced { by } => write!(f, "{} bounded by {by}", self.label()),
            Enforcement::Unlimited => write!(f, "{} unlimited", self.label()),
            Enforcement::NotEnforced { why, fix } => {
                write!(f, "{}: not enforced: {why}; {fix}", self.label())
            }
        }
    }
}

/// The limits of `policy` as tools run here: in the jail (`jailed`) or not.
pub(super) fn limits(policy: &SandboxPolicy, jailed: bool) -> Vec<LimitStatus> {
    let l = &policy.limits;
    let here = cgroup::here();
    let entry = |name: &'static str, value: Option<u64>, enforced: Enforcement| LimitStatus {
        name,
        value,
        explicit: l.is_explicit(name),
        enforced,
    };
    let by = |value: Option<u64>, r: &Result<String, cgroup::NotHere>| match (value, r) {
        (None, _) => Enforcement::Unlimited,
        (Some(_), Ok(by)) => Enforcement::Enforced { by: by.clone() },
        (Some(_), Err(e)) => Enforcement::NotEnforced {
            why: e.why.clone(),
            fix: e.fix.clone(),
        },
    };
    let rlimit = |value: Option<u64>, what: &str| match value {
        None => Enforcement::Unlimited,
        Some(_) => Enforcement::Enforced {
            by: what.to_owned(),
        },
    };
    if !jailed {
        let off = |name: &'static str, value: Option<u64>| {
            entry(
                name,
                value,
                match value {
                    None => Enforcement::Unlimited,
                    Some(_) => Enforcement::NotEnforced {
                        why: "tools run unjailed, without limits".to_owned(),
                        fix: "run them in the jail: `--sandbox required` (SandboxMode::Required) on a machine where bubblewrap works".to_owned(),
                    },
                },
            )
        };
        return vec![
            off("call_memory", l.call_memory),
            off("processes", l.processes),
            off("memory", l.memory),
            off("cpu", l.cpu.map(|c| c.as_secs())),
            off("file_size", l.file_size),
            tracking(),
        ];
    }
    let processes = match (&here.pids, l.processes) {
        (Err(_), Some(_)) if !is_root() => Enforcement::Enforced {
            by: "RLIMIT_NPROC (counts all of this uid's processes)".to_owned(),
        },
        (r, v) => by(v, r),
    };
    vec![
        entry(
            "call_memory",
            l.call_memory,
            by(l.call_memory, &here.memory),
        ),
        entry("processes", l.processes, processes),
        entry("memory", l.memory, rlimit(l.memory, "RLIMIT_DATA")),
        entry(
            "cpu",
            l.cpu.map(|c| c.as_secs()),
            rlimit(l.cpu.map(|c| c.as_secs()), "RLIMIT_CPU"),
        ),
        entry(
            "file_size",
            l.file_size,
            rlimit(l.file_size, "RLIMIT_FSIZE"),
        ),
    ]
}

/// Whether everything a call starts, daemons included, ends with it: the `tracking` entry
/// of tools that run without a PID namespace (unjailed, or in the lighter jail).
pub(super) fn tracking() -> LimitStatus {
    LimitStatus {
        name: "tracking",
        value: None,
        explicit: false,
        enforced: match &cgroup::here().track {
            Ok(by) => Enforcement::Enforced { by: by.clone() },
            Err(e) => Enforcement::NotEnforced {
                why: e.why.clone(),
                fix: e.fix.clone(),
            },
        },
    }
}

/// The clauses of a jailed status's prose: the cgroup limits always, and every limit that
/// does not hold.
pub(super) fn prose(limits: &[LimitStatus], required: bool) -> String {
    limits
        .iter()
        .filter(|l| matches!(l.name, "call_memory" | "processes") || !l.holds())
        .map(|l| {
            if required && l.explicit && !l.holds() {
                format!("{l} (set explicitly, so each call fails before it runs)")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::SandboxLimits;

    fn status(name: &'static str, explicit: bool, enforced: Enforcement) -> LimitStatus {
        LimitStatus {
            name,
            value: Some(1 << 30),
            explicit,
            enforced,
        }
    }

    #[test]
    fn the_prose_names_each_cgroup_limit_and_every_limit_that_does_not_hold() {
        let not = || Enforcement::NotEnforced {
            why: "WHY".into(),
            fix: "FIX".into(),
        };
        let by = |b: &str| Enforcement::Enforced { by: b.into() };
        let limits = [
            status("call_memory", false, not()),
            status("processes", false, by("a pids cgroup (v1)")),
            status("memory", false, by("RLIMIT_DATA")),
            status("cpu", true, not()),
        ];
        assert_eq!(
            prose(&limits, false),
            "memory per call: not enforced: WHY; FIX; processes bounded by a pids cgroup (v1); CPU time per call: not enforced: WHY; FIX"
        );
        // Under `required` an explicit limit that does not hold fails each call: said.
        assert!(
            prose(&limits, true)
                .ends_with("CPU time per call: not enforced: WHY; FIX (set explicitly, so each call fails before it runs)")
        );
        assert!(!limits[0].holds() && limits[1].holds());
        let unlimited = status("file_size", false, Enforcement::Unlimited);
        assert!(unlimited.holds());
        assert_eq!(unlimited.to_string(), "file size unlimited");
    }

    #[test]
    fn unjailed_every_limit_is_not_enforced_and_tracking_is_listed() {
        let policy =
            SandboxPolicy::off().limits(SandboxLimits::default().cpu(None).call_memory(1 << 20));
        let limits = limits(&policy, false);
        let names: Vec<_> = limits.iter().map(|l| l.name).collect();
        assert_eq!(
            names,
            [
                "call_memory",
                "processes",
                "memory",
                "cpu",
                "file_size",
                "tracking"
            ]
        );
        assert!(limits[0].explicit && !limits[1].explicit);
        assert_eq!(limits[0].value, Some(1 << 20));
        assert!(matches!(
            limits[0].enforced,
            Enforcement::NotEnforced { .. }
        ));
        assert_eq!(limits[3].enforced, Enforcement::Unlimited);
        // Jailed, the rlimits hold wherever the jail runs.
        let jailed = super::limits(&policy, true);
        assert_eq!(
            jailed[2].enforced,
            Enforcement::Enforced {
                by: "RLIMIT_DATA".into()
            }
        );
        assert_eq!(jailed.len(), 5);
    }
}
