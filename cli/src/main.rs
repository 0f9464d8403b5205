//! `toolbind`: check, generate, inspect, run and serve (MCP) a folder of TOOL.md tools.
//!
//! Each command group lives in its own module; this file only parses the command line and
//! turns the outcome into an exit code (0 ok, 1 failure or error result, 2 usage error,
//! 130 after Ctrl-C, 143 after SIGTERM).

mod args;
mod call;
mod check;
mod emit;
mod exit;
mod lock;
mod login;
mod mcp;
mod search;
mod serve;
mod sync;
mod tools;

use std::process::ExitCode;

use clap::Parser;

use args::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    check::set_color(cli.color);
    // Dropped after the command: what is left of its spans goes out then (1 s at most).
    let _telemetry = subscriber(matches!(cli.command, Command::Call(_) | Command::Serve(_)));
    let outcome = match cli.command {
        Command::Check(a) => check::run(&a),
        Command::Gen(a) => emit::rust(&a),
        Command::Schema(a) => emit::schema(&a),
        Command::Prompt(a) => emit::prompt(&a),
        Command::Docs(a) => emit::docs(&a),
        Command::Sync(a) => sync::run(&a),
        Command::List(a) => tools::list(&a),
        Command::Search(a) => search::run(&a),
        Command::Call(a) => call::run(a),
        Command::Serve(a) => serve::run(&a),
        Command::Mcp(a) => mcp::run(a),
        Command::Completions(a) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(a.shell, &mut cmd, "toolbind", &mut std::io::stdout());
            Ok(exit::Code::Ok)
        }
    };
    match outcome {
        Ok(code) => code.into(),
        Err(e) => e.report(),
    }
}

/// The global `tracing` subscriber: the runtime's warnings and notes on stderr as the
/// lines they always were, filtered by `RUST_LOG` (`toolbind::telemetry::stderr_layer`);
/// with feature `otel`, for `call` and `serve` (`exports`), every call's spans and
/// duration metrics exported when an OTLP endpoint is configured
/// (`OTEL_EXPORTER_OTLP_ENDPOINT` or a per-signal one; without one there is no collector
/// to wait for at exit). The guard, while export runs.
fn subscriber(exports: bool) -> Option<Telemetry> {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let registry = tracing_subscriber::registry().with(toolbind::telemetry::stderr_layer());
    #[cfg(feature = "otel")]
    if exports && otlp_configured() {
        match toolbind::telemetry::layer() {
            Ok(Some((guard, layer))) => {
                let _ = registry.with(layer).try_init();
                return Some(guard);
            }
            Ok(None) => {}
            Err(e) => eprintln!("toolbind: warning: no OpenTelemetry export: {e}"),
        }
    }
    let _ = exports;
    let _ = registry.try_init();
    None
}

#[cfg(feature = "otel")]
type Telemetry = toolbind::telemetry::Guard;
#[cfg(not(feature = "otel"))]
type Telemetry = ();

#[cfg(feature = "otel")]
fn otlp_configured() -> bool {
    [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    ]
    .iter()
    .any(|v| std::env::var_os(v).is_some_and(|v| !v.is_empty()))
}
