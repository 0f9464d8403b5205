//! [`Refusal`]: why a question got no answer, as a type a host builds and a caller
//! matches on; its text is what the tool (or the MCP server) reads.

use std::fmt;
use std::time::Duration;

/// Why a question got no answer: said to the tool (its promise rejects with the
/// [`Display`](fmt::Display) text) or to the MCP server that asked.
///
/// A [`Host`](super::Host) refuses in its own words with [`Refusal::new`] (or `"...".into()`);
/// the runtime builds the other variants.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// The host refused, in its own words: the user is away, the client cannot be asked,
    /// the question was withdrawn...
    Host(String),
    /// The host does not answer questions of this kind (its [`Host`](super::Host) method is
    /// the default one).
    NotAnswered {
        /// `confirm`, `elicit`, `sample` or `roots`.
        question: &'static str,
    },
    /// The agent set no host: nobody can be asked.
    NoHost {
        /// The kind of question, as the tool named it.
        question: String,
    },
    /// No answer came within [`RuntimeConfig::ask_timeout`](crate::runtime::RuntimeConfig::ask_timeout).
    TimedOut {
        /// The kind of question.
        question: &'static str,
        /// The ask timeout.
        after: Duration,
    },
    /// The call is being stopped (cancelled or timed out): no question is asked now.
    Stopping,
    /// The host panicked, or its task ended, before it answered.
    HostFailed {
        /// The kind of question.
        question: &'static str,
        /// What happened (the task's error; empty for a panic).
        why: Option<String>,
    },
    /// The question is not one that can be asked: a missing message, a form MCP does not
    /// allow, a bad key, an unknown kind.
    BadQuestion(String),
    /// The host's answer does not fit the form it answers.
    Unfit(String),
}

impl Refusal {
    /// A host's refusal, in its own words.
    pub fn new(why: impl Into<String>) -> Refusal {
        Refusal::Host(why.into())
    }

    /// The refusal of a question a host does not answer.
    pub(crate) fn not_answered(question: &'static str) -> Refusal {
        Refusal::NotAnswered { question }
    }

    /// This refusal with every text it carries cut to `max` characters: it goes back to
    /// the tool (or an MCP server) as a line, bounded whatever the host said and however
    /// long the form whose answer did not fit.
    pub(crate) fn bounded(self, max: usize) -> Refusal {
        let cut = |why: String| super::shorten(&why, max);
        match self {
            Refusal::Host(why) => Refusal::Host(cut(why)),
            Refusal::BadQuestion(why) => Refusal::BadQuestion(cut(why)),
            Refusal::Unfit(why) => Refusal::Unfit(cut(why)),
            Refusal::NoHost { question } => Refusal::NoHost {
                question: cut(question),
            },
            Refusal::HostFailed { question, why } => Refusal::HostFailed {
                question,
                why: why.map(cut),
            },
            other => other,
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Host(why) | Refusal::BadQuestion(why) | Refusal::Unfit(why) => {
                f.write_str(why)
            }
            Refusal::NotAnswered { question } => write!(
                f,
                "this agent does not answer `ctx.{question}` (toolbind::host::Host::{question} is not implemented by its host)"
            ),
            Refusal::NoHost { question } => write!(
                f,
                "`ctx.{question}` has no one to ask: this agent set no host (toolbind::RuntimeBuilder::host)"
            ),
            Refusal::TimedOut { question, after } => write!(
                f,
                "`ctx.{question}` got no answer within {} s (RuntimeConfig::ask_timeout)",
                after.as_secs_f64()
            ),
            Refusal::Stopping => f.write_str("the call is being stopped"),
            Refusal::HostFailed {
                question,
                why: None,
            } => write!(f, "the agent's host panicked answering `ctx.{question}`"),
            Refusal::HostFailed {
                question,
                why: Some(why),
            } => write!(f, "`ctx.{question}` was not answered: {why}"),
        }
    }
}

impl std::error::Error for Refusal {}

impl From<String> for Refusal {
    fn from(why: String) -> Refusal {
        Refusal::Host(why)
    }
}

impl From<&str> for Refusal {
    fn from(why: &str) -> Refusal {
        Refusal::Host(why.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words a tool reads are the ones it read when a refusal was a `String`.
    #[test]
    fn a_refusal_says_what_it_said_as_a_string() {
        assert_eq!(
            Refusal::not_answered("elicit").to_string(),
            "this agent does not answer `ctx.elicit` (toolbind::host::Host::elicit is not implemented by its host)"
        );
        assert_eq!(
            Refusal::TimedOut {
                question: "confirm",
                after: Duration::from_millis(1500)
            }
            .to_string(),
            "`ctx.confirm` got no answer within 1.5 s (RuntimeConfig::ask_timeout)"
        );
        let own: Refusal = "the user is away".into();
        assert_eq!(own, Refusal::new("the user is away"));
        assert_eq!(own.to_string(), "the user is away");
        let long = Refusal::new("x".repeat(5000)).bounded(1000);
        assert_eq!(long.to_string().chars().count(), 1001);
        // Only a host's own words are cut: the runtime's are bounded already.
        let err: &dyn std::error::Error = &Refusal::Stopping;
        assert_eq!(err.to_string(), "the call is being stopped");
    }
}
