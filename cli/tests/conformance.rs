//! The MCP project's own referee: the official conformance suite
//! (`@modelcontextprotocol/conformance`, pinned in `tests/conformance/package.json` and
//! installed with Node 22 by `tests/clients/install.sh`) against `toolbind serve --http` on
//! loopback, serving the fixture tools of `tests/conformance/tools/` — ordinary TOOL.md
//! tools written for the suite's fixture names — with `--sandbox required`.
//!
//! Three runs: 0.1.16 (the latest release) on 2025-11-25, and the 0.2.0 alpha's frozen
//! requirements of 2025-11-25 and of 2026-07-28. Each run has its baseline
//! (`tests/conformance/baseline-*.yml`, the suite's `--expected-failures`): a scenario or
//! check that fails and is not listed fails the test, and so does one that is listed and
//! passes (the suite's own rule), so the issue that makes it pass deletes its line.
//!
//! The suite sends no `Authorization` header, and `serve --http` has no token-less mode:
//! a small proxy here adds the token and passes everything else through unchanged (Host
//! and Origin included, so the DNS-rebinding scenario sees the server's own checks); the
//! upstream request is dropped when the suite's connection goes away.

use crate::common;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use common::{bin, clients_dir, eventually, fixture};
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, HeaderValue};
use hyper::{Request, Response, StatusCode};
use serde_json::Value;
use tokio::net::{TcpListener, TcpStream};

const TOKEN: &str = "conformance-token-0123456789abcdef";
/// The longest a whole run may take; the suite's own limit is 30 s per scenario.
const RUN_LIMIT: Duration = Duration::from_secs(600);

/// The runs share the machine's two cores with nothing else: one at a time, so the
/// suite's timing windows (a list change within 1.5 s) are not squeezed.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `tests/clients/install.sh`'s conformance folder: the suites and Node 22.
fn suite_dir() -> PathBuf {
    let dir = clients_dir().join("conformance");
    assert!(
        dir.join("node22/bin/node").exists()
            && dir
                .join("node_modules/conformance-0.2/dist/index.js")
                .exists(),
        "the MCP conformance suite is not installed in {}: run tests/clients/install.sh",
        dir.display()
    );
    dir
}

/// `toolbind serve --http 127.0.0.1:0` on the conformance fixtures and a second, empty
/// folder that `test_trigger_tool_change` writes (granted with `--allow-write`, named by
/// `CONFORMANCE_DYNAMIC_DIR`); killed when dropped.
struct Serve {
    child: std::process::Child,
    addr: SocketAddr,
    log: PathBuf,
    _tmp: tempfile::TempDir,
}

impl Serve {
    /// `serve` with `extra` arguments after the standard ones.
    fn start(extra: &[&std::ffi::OsStr]) -> Serve {
        let tmp = tempfile::tempdir().unwrap();
        let dynamic = tmp.path().join("dynamic");
        std::fs::create_dir(&dynamic).unwrap();
        let log = tmp.path().join("serve.log");
        let child = std::process::Command::new(bin())
            .arg("serve")
            .args(["--http", "127.0.0.1:0", "--sandbox", "required"])
            .arg("--allow-write")
            .arg(&dynamic)
            .arg(repo().join("tests/conformance/tools"))
            .arg(&dynamic)
            .args(extra)
            .env_remove("PI_TOOLS_DIRS")
            .env("TOOLBIND_TOKEN", TOKEN)
            .env("CONFORMANCE_DYNAMIC_DIR", &dynamic)
            .env("XDG_STATE_HOME", tmp.path().join("state"))
            .env("XDG_RUNTIME_DIR", tmp.path().join("run"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let mut addr = None;
        let started = eventually(20.0, || {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            addr = text
                .split_once("at http://")
                .and_then(|(_, rest)| rest.split_once("/mcp"))
                .and_then(|(a, _)| a.parse().ok());
            addr.is_some()
        });
        let s = Serve {
            child,
            addr: addr.unwrap_or_else(|| ([127, 0, 0, 1], 0).into()),
            log,
            _tmp: tmp,
        };
        assert!(started, "serve did not start:\n{}", s.log());
        s
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The token-injecting proxy: every request to it goes to `upstream` on a connection of
/// its own, with `Authorization: Bearer TOKEN` set and nothing else changed; the answer
/// streams back (SSE included). When the suite drops its connection, hyper drops the
/// answer's body, which closes the upstream connection and so the request.
async fn proxy(listener: TcpListener, upstream: SocketAddr) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| forward(req, upstream));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

type Body = http_body_util::combinators::BoxBody<hyper::body::Bytes, hyper::Error>;

async fn forward(
    mut req: Request<Incoming>,
    upstream: SocketAddr,
) -> Result<Response<Body>, Infallible> {
    use http_body_util::BodyExt;
    req.headers_mut().insert(
        AUTHORIZATION,
        HeaderValue::from_str(&format!("Bearer {TOKEN}")).unwrap(),
    );
    let sent = async {
        let conn = TcpStream::connect(upstream)
            .await
            .map_err(|e| e.to_string())?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(conn))
                .await
                .map_err(|e| e.to_string())?;
        tokio::spawn(connection);
        sender.send_request(req).await.map_err(|e| e.to_string())
    };
    Ok(match sent.await {
        Ok(r) => r.map(BodyExt::boxed),
        Err(e) => {
            let mut r = Response::new(
                http_body_util::Full::new(hyper::body::Bytes::from(format!("proxy: {e}")))
                    .map_err(|never| match never {})
                    .boxed(),
            );
            *r.status_mut() = StatusCode::BAD_GATEWAY;
            r
        }
    })
}

/// Runs the suite `package` (`conformance-0.1` or `-0.2`) once per argument set of
/// `runs`, one after the other against one fresh server, with `baseline`; panics with the
/// unexpected results when one fails.
async fn run(package: &str, runs: &[&[&str]], baseline: &str) {
    run_with(package, runs, baseline, &[]).await;
}

/// [`run`] against `serve` started with `extra` arguments.
async fn run_with(package: &str, runs: &[&[&str]], baseline: &str, extra: &[&std::ffi::OsStr]) {
    let _one = ONE_AT_A_TIME.lock().await;
    let suite = suite_dir();
    let serve = Serve::start(extra);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let proxied = tokio::spawn(proxy(listener, serve.addr));
    let results = Results::new(baseline.trim_end_matches(".yml"));
    let baseline = repo().join("tests/conformance").join(baseline);
    let mut failed_runs = Vec::new();
    for args in runs {
        let server = ["server", "--url", url.as_str()];
        let mode: Vec<&std::ffi::OsStr> = server
            .iter()
            .chain(args.iter())
            .map(std::ffi::OsStr::new)
            .collect();
        let mut cmd = suite_command(&suite, package, &mode, &baseline, &results);
        let out = tokio::time::timeout(RUN_LIMIT, cmd.output())
            .await
            .unwrap_or_else(|_| panic!("{package} {args:?} ran past {RUN_LIMIT:?}"))
            .unwrap();
        if !out.status.success() {
            failed_runs.push((args.join(" "), out));
        }
    }
    proxied.abort();
    if failed_runs.is_empty() {
        assert_every_entry_matched(&baseline, results.path());
        return;
    }
    let mut report = String::new();
    for (args, out) in &failed_runs {
        let stdout = String::from_utf8_lossy(&out.stdout);
        let summary = stdout
            .find("=== SUMMARY ===")
            .map_or(&stdout[..], |i| &stdout[i..]);
        report += &format!(
            "--- {package} {args}:\n{summary}\n{}\n",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    panic!(
        "the conformance suite failed against the baseline {}:\n\n\
         checks that did not pass:\n{}\n\n{report}\nserver log (last 40 lines):\n{}",
        baseline.display(),
        failed_checks(results.path()).join("\n"),
        tail(&serve.log(), 40),
    );
}

/// The suite calls an entry stale only when its check ran and passed: an entry that names
/// nothing that ran (mistyped, renamed, skipped) would pass unseen, so each must match a
/// failure of the run.
fn assert_every_entry_matched(baseline: &Path, results: &Path) {
    let failed = failures(results);
    let unmatched: Vec<String> = baseline_entries(baseline)
        .into_iter()
        .filter(|e| !failed.contains(e) && !failed.contains(&format!("{e}:*")))
        .collect();
    assert!(
        unmatched.is_empty(),
        "baseline entries of {} that no failing scenario or check matches (remove or \
         correct them): {unmatched:?}",
        baseline.display()
    );
}

/// The suite `package` run by the Node 22 of `suite` in `mode` (`server ...`, `client ...`,
/// its subcommand first), with `baseline` and the results folder.
fn suite_command(
    suite: &Path,
    package: &str,
    mode: &[&std::ffi::OsStr],
    baseline: &Path,
    results: &Results,
) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(suite.join("node22/bin/node"));
    cmd.arg(
        suite
            .join("node_modules")
            .join(package)
            .join("dist/index.js"),
    )
    .args(mode)
    .arg("--expected-failures")
    .arg(baseline)
    .arg("-o")
    .arg(results.path())
    // Bounded memory: the suite is one node process.
    .env("NODE_OPTIONS", "--max-old-space-size=1024")
    .env("NO_COLOR", "1")
    .stdin(Stdio::null())
    .kill_on_drop(true);
    cmd
}

/// Where a run's results go: a temporary folder, or one `CONFORMANCE_RESULTS` names.
enum Results {
    Temp(tempfile::TempDir),
    Kept(PathBuf),
}

impl Results {
    /// `CONFORMANCE_RESULTS=<dir>`: the suite's results (every check's checks.json) are
    /// kept in `<dir>/<name>`, to read what passed as well as what failed.
    fn new(name: &str) -> Results {
        match std::env::var_os("CONFORMANCE_RESULTS") {
            Some(keep) => {
                let dir = Path::new(&keep).join(name);
                let _ = std::fs::remove_dir_all(&dir);
                std::fs::create_dir_all(&dir).unwrap();
                Results::Kept(dir)
            }
            None => Results::Temp(tempfile::tempdir().unwrap()),
        }
    }

    fn path(&self) -> &Path {
        match self {
            Results::Temp(t) => t.path(),
            Results::Kept(p) => p,
        }
    }
}

/// The entries of a baseline file: `scenario` or `scenario:check-id`.
fn baseline_entries(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|e| e.split(" #").next().unwrap().trim().to_owned())
        .collect()
}

/// Every failing (or warning) check as `scenario:check-id`, and its scenario as
/// `scenario:*`.
fn failures(results: &Path) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for c in checks(results) {
        if matches!(c.status.as_str(), "FAILURE" | "WARNING") {
            out.insert(format!("{}:{}", c.scenario, c.id));
            out.insert(format!("{}:*", c.scenario));
        }
    }
    out
}

/// One check of a run's results.
struct Check {
    scenario: String,
    id: String,
    status: String,
    message: String,
}

/// Every check in a results folder. A scenario's folder is `server-<scenario>-<timestamp>`
/// (the client mode's: `<scenario>-<timestamp>`, and `auth/<name>-<timestamp>`).
fn checks(results: &Path) -> Vec<Check> {
    let mut out = Vec::new();
    let Ok(dirs) = std::fs::read_dir(results) else {
        return out;
    };
    let mut dirs: Vec<PathBuf> = dirs.filter_map(|d| d.ok().map(|d| d.path())).collect();
    dirs.sort();
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        // The client's `auth/*` scenarios are a folder of their own (`auth/<name>-<ts>`).
        if name == "auth" {
            for mut c in checks(&dir) {
                c.scenario = format!("auth/{}", c.scenario);
                out.push(c);
            }
            continue;
        }
        let scenario = name.strip_prefix("server-").unwrap_or(&name);
        // The timestamp: `-2026-12-02T03-26-10-791Z`, its `T` 11 bytes after the dash.
        let stamp = scenario
            .match_indices('-')
            .map(|(i, _)| i)
            .find(|&i| scenario.as_bytes().get(i + 11) == Some(&b'T'));
        let scenario = stamp.map_or(scenario, |i| &scenario[..i]).to_owned();
        let Ok(text) = std::fs::read_to_string(dir.join("checks.json")) else {
            continue;
        };
        let Ok(Value::Array(list)) = serde_json::from_str(&text) else {
            continue;
        };
        for c in list {
            let text = |k: &str| c[k].as_str().unwrap_or("?").to_owned();
            out.push(Check {
                scenario: scenario.clone(),
                id: text("id"),
                status: text("status"),
                message: c["errorMessage"].as_str().unwrap_or("").to_owned(),
            });
        }
    }
    out
}

/// `scenario:check status message` for every check in the results that did not pass.
fn failed_checks(results: &Path) -> Vec<String> {
    checks(results)
        .into_iter()
        .filter(|c| !matches!(c.status.as_str(), "SUCCESS" | "SKIPPED" | "INFO"))
        .map(|c| format!("  {}:{} {}: {}", c.scenario, c.id, c.status, c.message))
        .collect()
}

fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_0_1_16_on_2025_11_25() {
    run(
        "conformance-0.1",
        &[&["--spec-version", "2025-11-25"]],
        "baseline-0.1.16.yml",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_requirements_of_2025_11_25() {
    run(
        "conformance-0.2",
        &[&["--requirements", "2025-11-25"]],
        "baseline-2025-11-25.yml",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_requirements_of_2026_07_28() {
    run(
        "conformance-0.2",
        &[&["--requirements", "2026-07-28"]],
        "baseline-2026-07-28.yml",
    )
    .await;
}

/// The tasks extension's scenarios (`io.modelcontextprotocol/tasks`, SEP-2663). Run by a
/// requirements set, an extension's scenarios are reported but never scored; named with
/// `--scenario`, each is scored against the baseline like any other.
const TASKS_SCENARIOS: &[&str] = &[
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-required-task-error",
    "tasks-mrtr-input",
    "tasks-mrtr-composition",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_tasks_extension() {
    let runs: Vec<[&str; 2]> = TASKS_SCENARIOS.iter().map(|s| ["--scenario", s]).collect();
    let runs: Vec<&[&str]> = runs.iter().map(|r| &r[..]).collect();
    run("conformance-0.2", &runs, "baseline-tasks.yml").await;
}

/// The skills extension's server scenarios (`io.modelcontextprotocol/skills`, SEP-2640),
/// by name: they skip unless the server declares the extension, so `serve` runs with the
/// skills of cli/tests/fixtures/skills (one good skill with files in subfolders, and two
/// folders it must leave out) and every conformance tool as a skill too.
const SKILLS_SCENARIOS: &[&str] = &[
    "sep-2640-skills-enumeration",
    "sep-2640-skills-manifest",
    "sep-2640-skills-directory",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_skills_extension() {
    let runs: Vec<[&str; 2]> = SKILLS_SCENARIOS.iter().map(|s| ["--scenario", s]).collect();
    let runs: Vec<&[&str]> = runs.iter().map(|r| &r[..]).collect();
    let skills = fixture("skills");
    let extra = [
        "--skills".as_ref(),
        skills.as_os_str(),
        "--tool-skills".as_ref(),
    ];
    run_with("conformance-0.2", &runs, "baseline-skills.yml", &extra).await;
}

/// The client driver, `cli/examples/conformance_client.rs`: built beside this test (cargo
/// builds a package's examples with its tests).
fn client_driver() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let driver = exe
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .join("examples/conformance_client");
    assert!(
        driver.exists(),
        "{} is missing: cargo build -p toolbind-cli --examples",
        driver.display()
    );
    // `cargo test --test it conformance::` builds no example: a driver older than the sources
    // would measure old code.
    let built = driver.metadata().and_then(|m| m.modified()).unwrap();
    for dir in ["runtime/src", "codegen/src", "cli/src", "cli/examples"] {
        if let Some(newer) = newer_than(&repo().join(dir), built) {
            panic!(
                "{} is older than {}: cargo build -p toolbind-cli --examples",
                driver.display(),
                newer.display()
            );
        }
    }
    driver
}

/// A file under `dir` modified after `time`.
fn newer_than(dir: &Path, time: std::time::SystemTime) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_dir() {
            if let Some(p) = newer_than(&path, time) {
                return Some(p);
            }
        } else if meta.modified().is_ok_and(|m| m > time) {
            return Some(path);
        }
    }
    None
}

/// The suite's client mode: toolbind's MCP executor (the driver) against the suite's test
/// servers, every client scenario `revision` requires, with the baseline
/// `baseline-client-<revision>.yml`; panics with what did not pass when the run fails.
async fn client_run(revision: &str) {
    let _one = ONE_AT_A_TIME.lock().await;
    let suite = suite_dir();
    let baseline = repo()
        .join("tests/conformance")
        .join(format!("baseline-client-{revision}.yml"));
    let results = Results::new(&format!("client-{revision}"));
    let state = tempfile::tempdir().unwrap();
    let driver = client_driver();
    let mode = [
        "client".as_ref(),
        "--command".as_ref(),
        driver.as_os_str(),
        "--requirements".as_ref(),
        revision.as_ref(),
    ];
    let mut cmd = suite_command(&suite, "conformance-0.2", &mode, &baseline, &results);
    // The driver's state (none of it should outlive the run).
    cmd.env("XDG_STATE_HOME", state.path());
    let out = tokio::time::timeout(RUN_LIMIT, cmd.output())
        .await
        .unwrap_or_else(|_| panic!("the client suite {revision} ran past {RUN_LIMIT:?}"))
        .unwrap();
    if out.status.success() {
        assert_every_entry_matched(&baseline, results.path());
        return;
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    panic!(
        "the client conformance suite ({revision}) failed against the baseline {}:\n\n\
         checks that did not pass:\n{}\n\n{stdout}\n{}",
        baseline.display(),
        failed_checks(results.path()).join("\n"),
        tail(&String::from_utf8_lossy(&out.stderr), 80),
    );
}

/// The skills extension's client scenario, by name (an extension's scenarios are not scored
/// by `--requirements`): the driver lists the server's skills and must read none of
/// their files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_conformance_skills_extension() {
    let _one = ONE_AT_A_TIME.lock().await;
    let suite = suite_dir();
    let baseline = repo().join("tests/conformance/baseline-client-skills.yml");
    let results = Results::new("client-skills");
    let driver = client_driver();
    let mode = [
        "client".as_ref(),
        "--command".as_ref(),
        driver.as_os_str(),
        "--scenario".as_ref(),
        "sep-2640-client-no-prefetch".as_ref(),
    ];
    let mut cmd = suite_command(&suite, "conformance-0.2", &mode, &baseline, &results);
    let out = tokio::time::timeout(RUN_LIMIT, cmd.output())
        .await
        .expect("the client skills scenario ran in time")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the client skills scenario failed:\n{}\n{stdout}\n{}",
        failed_checks(results.path()).join("\n"),
        tail(&String::from_utf8_lossy(&out.stderr), 40)
    );
    // It ran and passed, not skipped: the driver listed the skills.
    let passed = checks(results.path())
        .iter()
        .any(|c| c.id == "sep-2640-host-no-prefetch" && c.status == "SUCCESS");
    assert!(passed, "the no-prefetch check did not pass:\n{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_conformance_requirements_of_2025_11_25() {
    client_run("2025-11-25").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_conformance_requirements_of_2026_07_28() {
    client_run("2026-07-28").await;
}
