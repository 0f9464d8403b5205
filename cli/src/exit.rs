//! Exit codes and the one error type commands return.

use std::process::ExitCode;

/// The exit code of a command that ran to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// Success.
    Ok,
    /// The command ran but found errors (`check`), or the tool returned an error result.
    Failed,
    /// Ctrl-C stopped the command.
    Interrupted,
    /// SIGTERM stopped the command.
    Terminated,
}

impl From<Code> for ExitCode {
    fn from(c: Code) -> Self {
        ExitCode::from(match c {
            Code::Ok => 0,
            Code::Failed => 1,
            Code::Interrupted => 130,
            Code::Terminated => 143,
        })
    }
}

/// Why a command stopped: printed as `error: <message>` on stderr.
#[derive(Debug)]
pub struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    /// The command could not do its job (exit 1).
    pub fn failed(message: impl Into<String>) -> Self {
        Failure {
            code: 1,
            message: message.into(),
        }
    }

    /// The command line asked for something impossible (exit 2, like clap's own errors).
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            code: 2,
            message: message.into(),
        }
    }

    /// Exit 1 after output that already explains the failure (diagnostics were printed).
    pub fn silent() -> Self {
        Failure {
            code: 1,
            message: String::new(),
        }
    }

    pub fn report(self) -> ExitCode {
        if !self.message.is_empty() {
            // It may quote a tool's, a server's or a client's text.
            eprintln!("error: {}", toolbind::untrusted::terminal(&self.message));
        }
        ExitCode::from(self.code)
    }
}

pub type Outcome = Result<Code, Failure>;
