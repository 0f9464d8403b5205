//! The bubblewrap jail, for real: every test runs under `SandboxMode::Required`, so on a
//! machine without a working bwrap they fail (CI installs bubblewrap), and each asserts
//! something only the jail provides — remove the jail and they fail.
//!
//! Every test is bounded: call timeouts of a few seconds, allocations that fail at once,
//! process counts capped by the jail itself, and tool processes that die with the call.

mod exec_common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use exec_common::{call, run};
use serde_json::json;
use toolbind::exec::{ExecConfig, SubprocessExecutor};
use toolbind::sandbox::{Enforcement, SandboxLimits, SandboxMode, SandboxPolicy};
use toolbind::{CancelToken, StopReason, ToolInfo};

/// Whether the limit `name` holds here for `exec`, read from the structured status. When
/// `TOOLBIND_TEST_EXPECT_ENFORCED` (a comma list of limit names, set by the VM script for
/// the host classes where they must hold) names it, it must: the test fails otherwise.
/// A test of a limit asserts the limit when it holds, and the refusal or the report when
/// it does not — never neither.
fn holds(exec: &SubprocessExecutor, name: &str) -> bool {
    let status = exec.sandbox_status(&[]);
    let l = status
        .limits
        .iter()
        .find(|l| l.name == name)
        .unwrap_or_else(|| panic!("no `{name}` in {:?}", status.limits));
    let enforced = matches!(l.enforced, Enforcement::Enforced { .. });
    let expected = std::env::var("TOOLBIND_TEST_EXPECT_ENFORCED")
        .unwrap_or_default()
        .split(',')
        .any(|n| n.trim() == name);
    assert!(
        enforced || !expected,
        "TOOLBIND_TEST_EXPECT_ENFORCED names `{name}`, but here: {l}"
    );
    enforced
}

/// A call refused before its tool ran because the explicit limit `flag` cannot be enforced
/// here: `JailFailed`, the limit and a fix named, and the tool's marker file absent.
fn refused_for_limit(r: &toolbind::ToolResult, flag: &str, marker: &Path) {
    let text = r.text_content();
    assert_eq!(r.stop, StopReason::JailFailed, "{text}");
    assert!(
        text.contains(flag)
            && text.contains("cannot be enforced here")
            && text.contains("To get it:"),
        "{text}"
    );
    assert!(!marker.exists(), "the tool ran: {text}");
}

/// A tools folder of tools written by the test, plus a state folder and caches.
struct Lab {
    root: tempfile::TempDir,
}

impl Lab {
    fn new() -> Self {
        Lab {
            root: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self) -> &Path {
        self.root.path()
    }

    /// Writes `tools/<name>/TOOL.md` (with `extra` frontmatter) and its entry, and loads it.
    fn tool(&self, name: &str, language: &str, extra: &str, code: &str) -> ToolInfo {
        // Every call is bounded: 30 s unless the test sets its own `timeout:`.
        let bounded = if extra.contains("timeout:") {
            ""
        } else {
            "timeout: 30\n"
        };
        let extra = &format!("{bounded}{extra}");
        let dir = self.path().join("tools").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("TOOL.md"),
            format!(
                "---\nname: {name}\ndescription: test tool\nlanguage: {language}\n{extra}inputs:\n  arg:\n    type: string\n    optional: true\n    description: anything\n---\n"
            ),
        )
        .unwrap();
        let entry = match language {
            "python" => "index.py",
            "bash" => "index.sh",
            _ => "index.mjs",
        };
        std::fs::write(dir.join(entry), code).unwrap();
        let loaded = toolbind::Loader::new()
            .dirs([self.path().join("tools")])
            .quiet()
            .load();
        loaded
            .registry
            .get(name)
            .unwrap_or_else(|| panic!("{name} did not load: {:?}", loaded.warnings))
            .clone()
    }

    fn policy(&self) -> SandboxPolicy {
        SandboxPolicy::new()
            .mode(SandboxMode::Required)
            .state_dir(self.path().join("state"))
    }

    fn executor(&self, policy: SandboxPolicy) -> SubprocessExecutor {
        SubprocessExecutor::new(
            ExecConfig::default()
                .cache_dir(self.path().join("cache"))
                .grace(Duration::from_millis(500))
                .sandbox(policy),
        )
    }
}

const NODE_READ: &str = "import { readFileSync } from 'node:fs';\nexport async function execute(id, p) { return readFileSync(p.arg, 'utf8'); }\n";
const PY_READ: &str = "def execute(i, p, s, u):\n    return open(p['arg']).read()\n";
const SH_READ: &str = "arg=$(sed -E 's/.*\"arg\": *\"([^\"]*)\".*/\\1/')\ncat -- \"$arg\"\n";

fn readers(lab: &Lab) -> Vec<ToolInfo> {
    vec![
        lab.tool("read_js", "typescript", "", NODE_READ),
        lab.tool("read_py", "python", "", PY_READ),
        lab.tool("read_sh", "bash", "", SH_READ),
    ]
}

#[tokio::test]
async fn a_planted_file_outside_the_grants_cannot_be_read() {
    let lab = Lab::new();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("planted.txt");
    std::fs::write(&secret, "planted-secret-7731").unwrap();
    let tools = readers(&lab);

    let jailed = lab.executor(lab.policy());
    for t in &tools {
        let r = call(&jailed, t, json!({"arg": secret})).await;
        assert!(r.is_error, "{} read it: {}", t.name(), r.text_content());
        assert!(
            !r.text_content().contains("planted-secret-7731"),
            "{}",
            t.name()
        );
    }
    // Granted read-only: readable.
    let granted = lab.executor(lab.policy().allow_read(outside.path()));
    for t in &tools {
        let r = call(&granted, t, json!({"arg": secret})).await;
        assert!(!r.is_error, "{}: {}", t.name(), r.text_content());
        assert!(
            r.text_content().contains("planted-secret-7731"),
            "{}",
            t.name()
        );
    }
}

#[tokio::test]
async fn the_seed_folder_and_the_agents_home_are_invisible() {
    let lab = Lab::new();
    let seed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/todo/TOOL.md");
    assert!(seed.is_file());
    let jailed = lab.executor(lab.policy());
    for t in readers(&lab) {
        let r = call(&jailed, &t, json!({"arg": seed})).await;
        assert!(
            r.is_error,
            "{} read the seed folder: {}",
            t.name(),
            r.text_content()
        );
    }
    let t = lab.tool(
        "ls_home",
        "python",
        "",
        "import os\ndef execute(i, p, s, u):\n    return str(os.path.exists(p['arg']))\n",
    );
    // Something of the agent's home that is not an interpreter's install folder (the
    // jail binds a pyenv or cached node prefix, which lives under the home here).
    let home = PathBuf::from(std::env::var("HOME").unwrap());
    let planted = tempfile::Builder::new()
        .prefix(".toolbind-sandbox-test-")
        .tempdir_in(&home)
        .unwrap();
    let r = call(&jailed, &t, json!({"arg": planted.path()})).await;
    assert_eq!(r.text_content(), "False", "the agent's home is visible");
}

const NODE_WRITE: &str = "import { writeFileSync } from 'node:fs';\nexport async function execute(id, p) { writeFileSync(p.arg, 'x'); return 'wrote'; }\n";
const PY_WRITE: &str =
    "def execute(i, p, s, u):\n    open(p['arg'], 'w').write('x')\n    return 'wrote'\n";
const SH_WRITE: &str =
    "arg=$(sed -E 's/.*\"arg\": *\"([^\"]*)\".*/\\1/')\necho x > \"$arg\" && echo wrote\n";

#[tokio::test]
async fn writes_outside_the_grants_fail_and_the_tool_folder_is_read_only() {
    let lab = Lab::new();
    let outside = tempfile::tempdir().unwrap();
    let tools = [
        lab.tool("write_js", "typescript", "", NODE_WRITE),
        lab.tool("write_py", "python", "", PY_WRITE),
        lab.tool("write_sh", "bash", "", SH_WRITE),
    ];
    let jailed = lab.executor(lab.policy());
    for t in &tools {
        let target = outside.path().join(format!("{}.txt", t.name()));
        let r = call(&jailed, t, json!({"arg": target})).await;
        assert!(r.is_error, "{}: {}", t.name(), r.text_content());
        assert!(!target.exists(), "{} wrote outside its grants", t.name());
        // Its own folder is read-only.
        let own = t.dir().join("planted-by-tool");
        let r = call(&jailed, t, json!({"arg": own})).await;
        assert!(r.is_error, "{}: {}", t.name(), r.text_content());
        assert!(!own.exists(), "{} wrote into its own folder", t.name());
        // The jail's own root is read-only: a tool cannot fill the host's memory by writing
        // to `/` or `/etc` (bwrap's root is a tmpfs as large as half the RAM).
        for path in ["/planted-by-tool", "/etc/planted-by-tool"] {
            let r = call(&jailed, t, json!({"arg": path})).await;
            assert!(
                r.is_error,
                "{} wrote {path}: {}",
                t.name(),
                r.text_content()
            );
        }
    }
    let granted = lab.executor(lab.policy().allow_write(outside.path()));
    for t in &tools {
        let target = outside.path().join(format!("{}.txt", t.name()));
        let r = call(&granted, t, json!({"arg": target})).await;
        assert!(!r.is_error, "{}: {}", t.name(), r.text_content());
        assert!(target.exists(), "{}", t.name());
    }
}

const NODE_CONNECT: &str = "import { connect } from 'node:net';\nexport async function execute(id, p) {\n  return await new Promise((ok) => {\n    const s = connect(Number(p.arg), '127.0.0.1', () => { s.end(); ok('connected'); });\n    s.on('error', (e) => ok('refused: ' + e.code));\n  });\n}\n";
const PY_CONNECT: &str = "import socket\ndef execute(i, p, s, u):\n    try:\n        socket.create_connection(('127.0.0.1', int(p['arg'])), timeout=5).close()\n        return 'connected'\n    except OSError as e:\n        return 'refused: %s' % e\n";

#[tokio::test]
async fn network_false_and_no_network_block_a_loopback_connect() {
    let lab = Lab::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let open = [
        lab.tool("net_js", "typescript", "", NODE_CONNECT),
        lab.tool("net_py", "python", "", PY_CONNECT),
    ];
    let closed = [
        lab.tool(
            "nonet_js",
            "typescript",
            "sandbox:\n  network: false\n",
            NODE_CONNECT,
        ),
        lab.tool(
            "nonet_py",
            "python",
            "sandbox: {network: false}\n",
            PY_CONNECT,
        ),
    ];
    let jailed = lab.executor(lab.policy());
    for t in &open {
        let r = call(&jailed, t, json!({"arg": port})).await;
        assert_eq!(r.text_content(), "connected", "{}", t.name());
    }
    for t in &closed {
        let r = call(&jailed, t, json!({"arg": port})).await;
        assert!(
            r.text_content().starts_with("refused"),
            "{}: {}",
            t.name(),
            r.text_content()
        );
    }
    // A tool cannot widen the runtime's policy.
    let widen = lab.tool(
        "yesnet_py",
        "python",
        "sandbox: {network: true}\n",
        PY_CONNECT,
    );
    let offline = lab.executor(lab.policy().network(false));
    for t in open.iter().chain([&widen]) {
        let r = call(&offline, t, json!({"arg": port})).await;
        assert!(
            r.text_content().starts_with("refused"),
            "{}: {}",
            t.name(),
            r.text_content()
        );
    }
}

/// Live host processes whose command line contains `marker`.
fn with_marker(marker: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        if String::from_utf8_lossy(&cmd).contains(marker) && exec_common::alive(pid) {
            out.push(pid);
        }
    }
    out
}

async fn gone(marker: &str) -> Vec<i32> {
    let start = Instant::now();
    loop {
        let left = with_marker(marker);
        if left.is_empty() || start.elapsed() > Duration::from_secs(5) {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Tools that start a detached `sleep <marker>` (its own session) and then either return
/// at once (`arg` = "return") or wait forever.
fn detachers(lab: &Lab) -> Vec<ToolInfo> {
    vec![
        lab.tool(
            "detach_sh",
            "bash",
            "",
            "input=$(cat)\nsecs=$(echo \"$input\" | sed -E 's/.*\"secs\": *\"([^\"]*)\".*/\\1/')\nsetsid sleep \"$secs\" </dev/null >/dev/null 2>&1 &\necho started >&3\ncase $input in *return*) echo done; exit 0;; esac\nwhile :; do sleep 1; done\n",
        ),
        lab.tool(
            "detach_js",
            "typescript",
            "",
            "import { spawn } from 'node:child_process';\nexport async function execute(id, p, signal, onUpdate) {\n  spawn('sleep', [p.secs], { detached: true, stdio: 'ignore' }).unref();\n  onUpdate({ content: [{ type: 'text', text: 'started' }] });\n  if (p.arg === 'return') return 'done';\n  for (;;) { const t = Date.now(); while (Date.now() - t < 100) {} await new Promise((r) => setTimeout(r, 10)); }\n}\n",
        ),
        lab.tool(
            "detach_py",
            "python",
            "",
            "import subprocess, time\ndef execute(i, p, s, u):\n    subprocess.Popen(['sleep', p['secs']], start_new_session=True)\n    u('started')\n    if p.get('arg') == 'return':\n        return 'done'\n    while True:\n        time.sleep(1)\n",
        ),
    ]
}

fn marker() -> String {
    // A unique `sleep` duration doubles as the marker in the command line.
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "300.{}{:03}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Held by the jail itself (its PID namespace dies with its init), not by a cgroup: the
/// same on every host class, so no limit's status is read here.
#[tokio::test]
async fn detached_grandchildren_die_after_return_timeout_and_cancel() {
    let lab = Lab::new();
    let tools = detachers(&lab);
    // One-shot and warm: both end the whole jail with the call / worker.
    detached_children_die(&lab.executor(lab.policy()), &tools).await;
}

/// Each of `tools` started a detached child; it must be gone after a return (and
/// `shutdown` of the warm worker), a timeout and a cancel.
async fn detached_children_die(exec: &SubprocessExecutor, tools: &[ToolInfo]) {
    for t in tools {
        // Normal return (one-shot bash; the warm worker is stopped by shutdown below).
        let m = marker();
        let r = call(exec, t, json!({"arg": "return", "secs": m})).await;
        assert_eq!(r.text_content(), "done", "{}", t.name());
        exec.shutdown();
        assert_eq!(
            gone(&m).await,
            Vec::<i32>::new(),
            "{}: survived a return",
            t.name()
        );

        // Timeout.
        let m = marker();
        let r = run(
            exec,
            t,
            json!({"arg": "wait", "secs": m}),
            CancelToken::new(),
            None,
            Some(Duration::from_secs(2)),
        )
        .await;
        assert!(
            r.text_content().contains("timed out"),
            "{}: {}",
            t.name(),
            r.text_content()
        );
        assert_eq!(
            gone(&m).await,
            Vec::<i32>::new(),
            "{}: survived a timeout",
            t.name()
        );

        // Cancel, once the tool said it started its child.
        let m = marker();
        let cancel = CancelToken::new();
        let (sink, _) = exec_common::cancel_on_first_update(cancel.clone());
        let r = run(
            exec,
            t,
            json!({"arg": "wait", "secs": m}),
            cancel,
            Some(sink),
            Some(Duration::from_secs(20)),
        )
        .await;
        assert!(
            r.text_content().contains("cancel"),
            "{}: {}",
            t.name(),
            r.text_content()
        );
        assert_eq!(
            gone(&m).await,
            Vec::<i32>::new(),
            "{}: survived a cancel",
            t.name()
        );
    }
}

#[tokio::test]
async fn a_warm_workers_state_and_home_survive_between_calls() {
    let lab = Lab::new();
    let t = lab.tool(
        "counter",
        "typescript",
        "",
        "import { readFileSync, writeFileSync } from 'node:fs';\nlet n = 0;\nexport async function execute() {\n  n += 1;\n  const f = process.env.HOME + '/count';\n  let disk = 0; try { disk = Number(readFileSync(f, 'utf8')); } catch {}\n  writeFileSync(f, String(disk + 1));\n  return `${n} ${disk + 1}`;\n}\n",
    );
    let exec = lab.executor(lab.policy());
    assert_eq!(call(&exec, &t, json!({})).await.text_content(), "1 1");
    assert_eq!(call(&exec, &t, json!({})).await.text_content(), "2 2");
    // A new worker: module state is fresh, the state folder is kept.
    exec.shutdown();
    assert_eq!(call(&exec, &t, json!({})).await.text_content(), "1 3");
    let state = lab.path().join("state/counter/count");
    assert_eq!(std::fs::read_to_string(state).unwrap(), "3");
}

#[tokio::test]
async fn a_3_gib_allocation_ends_with_the_memory_limits_error() {
    let lab = Lab::new();
    let tools = [
        lab.tool(
            "alloc_js",
            "typescript",
            "",
            "export async function execute() { const b = Buffer.alloc(3 * 2 ** 30); return String(b.length); }\n",
        ),
        lab.tool(
            "alloc_py",
            "python",
            "",
            "def execute(i, p, s, u):\n    b = bytearray(3 << 30)\n    return str(len(b))\n",
        ),
        lab.tool(
            "alloc_sh",
            "bash",
            "",
            "python3 -c 'b = bytearray(3 << 30)'\n",
        ),
    ];
    let exec = lab.executor(lab.policy());
    for t in &tools {
        let r = call(&exec, t, json!({})).await;
        let text = r.text_content();
        assert!(r.is_error, "{}: {text}", t.name());
        assert!(
            text.contains("memory limit (1024 MiB"),
            "{}: {text}",
            t.name()
        );
        assert!(text.contains("--memory"), "{}: {text}", t.name());
    }
}

fn host_processes() -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .count()
}

#[tokio::test]
async fn a_bounded_fork_bomb_hits_the_process_limit() {
    let lab = Lab::new();
    let t = lab.tool(
        "bomb",
        "python",
        "",
        "import os, subprocess\ndef execute(i, p, s, u):\n    open(os.environ['HOME'] + '/ran', 'w').close()\n    kids = []\n    for _ in range(400):\n        kids.append(subprocess.Popen(['sleep', '30']))\n    return 'started %d' % len(kids)\n",
    );
    let limits = SandboxLimits::default().processes(Some(32));
    let exec = lab.executor(lab.policy().limits(limits));
    if !holds(&exec, "processes") {
        // Root without a usable pids cgroup: the explicit limit refuses the call.
        let r = call(&exec, &t, json!({})).await;
        refused_for_limit(&r, "--max-processes", &lab.path().join("state/bomb/ran"));
        return;
    }
    let baseline = host_processes();
    let peak = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, stop) = (peak.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                peak.fetch_max(host_processes(), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let r = call(&exec, &t, json!({})).await;
    stop.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    let text = r.text_content();
    assert!(r.is_error, "{text}");
    assert!(text.contains("process limit (32 processes)"), "{text}");
    // 400 sleeps would have shown; others' builds add noise, hence the slack.
    let peak = peak.load(Ordering::Relaxed);
    assert!(
        peak < baseline + 32 + 150,
        "host processes peaked at {peak} (baseline {baseline})"
    );
}

#[tokio::test]
async fn cpu_limit_ends_a_busy_call_and_is_rearmed_per_warm_call() {
    let lab = Lab::new();
    let t = lab.tool(
        "burn",
        "python",
        "",
        "import time\ndef execute(i, p, s, u):\n    end = time.process_time() + float(p['arg'])\n    while time.process_time() < end:\n        pass\n    return 'burnt'\n",
    );
    let limits = SandboxLimits::default().cpu(Some(Duration::from_secs(2)));
    let exec = lab.executor(lab.policy().limits(limits));
    // Three calls of ~1.2 s CPU each on one warm worker: 3.6 s in total, each within 2 s.
    for _ in 0..3 {
        let r = call(&exec, &t, json!({"arg": "1.2"})).await;
        assert_eq!(r.text_content(), "burnt");
    }
    let r = call(&exec, &t, json!({"arg": "30"})).await;
    let text = r.text_content();
    assert!(r.is_error, "{text}");
    assert!(text.contains("CPU time limit (2 s per call"), "{text}");
}

#[tokio::test]
async fn every_call_on_a_worker_killed_by_a_limit_says_so() {
    let lab = Lab::new();
    let t = lab.tool(
        "shared",
        "python",
        "",
        "import time\ndef execute(i, p, s, u):\n    if p['arg'] == 'sleep':\n        u('sleeping')\n        time.sleep(20)\n        return 'slept'\n    end = time.process_time() + 30\n    while time.process_time() < end:\n        pass\n",
    );
    let limits = SandboxLimits::default().cpu(Some(Duration::from_secs(1)));
    let exec = lab.executor(lab.policy().limits(limits));
    // The burner is sent once the sleeper runs, so both are on the one worker.
    let (sink, running) = exec_common::notifier();
    let sleeper = run(
        &exec,
        &t,
        json!({"arg": "sleep"}),
        CancelToken::new(),
        Some(sink),
        None,
    );
    let (a, b) = tokio::join!(sleeper, async {
        running.notified().await;
        call(&exec, &t, json!({"arg": "burn"})).await
    });
    for r in [a, b] {
        assert!(r.is_error, "{}", r.text_content());
        assert!(
            r.text_content().contains("CPU time limit"),
            "{}",
            r.text_content()
        );
    }
}

#[tokio::test]
async fn required_fails_closed_and_auto_falls_back_without_bwrap() {
    let lab = Lab::new();
    let t = lab.tool("hello", "bash", "", "echo hello\n");
    let missing = PathBuf::from("/nonexistent/bwrap");
    let policy = lab.policy().bwrap(missing.clone());
    let r = call(&lab.executor(policy.clone()), &t, json!({})).await;
    assert!(r.is_error);
    let text = r.text_content();
    assert!(
        text.contains("/nonexistent/bwrap") && text.contains("apt-get install bubblewrap"),
        "{text}"
    );

    let auto = lab.executor(policy.mode(SandboxMode::Auto));
    assert_eq!(call(&auto, &t, json!({})).await.text_content(), "hello");
    let status = auto.sandbox_status(&[toolbind::tool::Language::Bash]);
    assert!(
        !status.jailed && status.reason.contains("not installed"),
        "{status}"
    );

    let status = lab.executor(lab.policy()).sandbox_status(&[
        toolbind::tool::Language::Bash,
        toolbind::tool::Language::Python,
    ]);
    assert!(status.jailed, "{status}");
}

#[tokio::test]
async fn bwraps_options_are_not_in_its_argv() {
    // Inside the jail, pid 1 is bwrap's init: its command line is what `ps` shows the host.
    let lab = Lab::new();
    let t = lab.tool("argv", "bash", "", "tr '\\0' ' ' < /proc/1/cmdline\n");
    let r = call(&lab.executor(lab.policy()), &t, json!({})).await;
    let text = r.text_content();
    assert!(
        text.contains("bwrap --args 4 --json-status-fd 5 -- "),
        "{text}"
    );
    assert!(
        !text.contains("--ro-bind") && !text.contains("--bind"),
        "{text}"
    );
}

/// A jail that fails once the probe passed (here: a wrapper that adds a bind whose source
/// is gone) is told from a tool that failed by bwrap's own status record, not by what was
/// printed: a tool that writes bwrap's words and exits 1 is still the tool's failure.
#[tokio::test]
async fn a_failed_jail_is_told_from_a_tool_that_prints_bwraps_words() {
    use toolbind::StopReason;
    let lab = Lab::new();
    let real = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join("bwrap"))
        .find(|p| p.is_file())
        .expect("bwrap on PATH");
    // The probe passes its options in argv; a jail's come on fd 4 (`--args 4`).
    let wrapper = lab.path().join("bwrap-breaks-jails");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --args ]; then exec {} --ro-bind /no/such/source-7731 /nope \"$@\"; fi\nexec {} \"$@\"\n",
            real.display(),
            real.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let t = lab.tool("hello", "bash", "", "echo hello\n");
    let broken = lab.executor(lab.policy().bwrap(&wrapper));
    let r = call(&broken, &t, json!({})).await;
    let text = r.text_content();
    assert_eq!(r.stop, StopReason::JailFailed, "{text}");
    assert!(
        text.contains("the sandbox could not start the tool") && text.contains("source-7731"),
        "{text}"
    );
    // The same failure in a warm worker's start.
    let py = lab.tool(
        "hello_py",
        "python",
        "",
        "def execute(i, p, s, u):\n    return 'hi'\n",
    );
    let r = call(&broken, &py, json!({})).await;
    assert_eq!(r.stop, StopReason::JailFailed, "{}", r.text_content());

    // bwrap's option and status pipes stop at bwrap: a jailed tool can neither read the
    // options nor write a status record of its own.
    let fds = lab.tool(
        "fds",
        "bash",
        "",
        "for fd in 4 5; do if { true >&$fd; } 2>/dev/null || { true <&$fd; } 2>/dev/null; then echo \"fd$fd-open\"; else echo \"fd$fd-closed\"; fi; done\n",
    );
    let r = call(&lab.executor(lab.policy()), &fds, json!({})).await;
    assert_eq!(
        r.text_content(),
        "fd4-closed\nfd5-closed",
        "{}",
        r.text_content()
    );

    let liar = lab.tool(
        "liar",
        "bash",
        "",
        "echo \"bwrap: Can't find source path /x: No such file or directory\" >&2\nexit 1\n",
    );
    let r = call(&lab.executor(lab.policy()), &liar, json!({})).await;
    let text = r.text_content();
    assert!(r.is_error, "{text}");
    assert_ne!(r.stop, StopReason::JailFailed, "{text}");
    assert!(!text.contains("the sandbox could not start"), "{text}");
}

#[tokio::test]
async fn runtime_builder_sandbox_configures_the_default_executor() {
    let lab = Lab::new();
    lab.tool("hello_sh", "bash", "", "echo hello\n");
    let registry = toolbind::Loader::new()
        .dirs([lab.path().join("tools")])
        .quiet()
        .load()
        .registry;
    let policy = lab.policy().bwrap("/nonexistent/bwrap");
    let rt = toolbind::Runtime::builder()
        .registry(registry.clone())
        .sandbox(policy)
        .build();
    let r = rt
        .call("hello_sh", json!({}), toolbind::CallOptions::new())
        .await;
    assert!(
        r.is_error && r.text_content().contains("bubblewrap"),
        "{}",
        r.text_content()
    );
    let rt = toolbind::Runtime::builder()
        .registry(registry)
        .sandbox(SandboxPolicy::off())
        .build();
    let r = rt
        .call("hello_sh", json!({}), toolbind::CallOptions::new())
        .await;
    assert_eq!(r.text_content(), "hello");
}

#[tokio::test]
async fn cancelling_a_jailed_bash_tool_delivers_sigterm_to_the_script() {
    // SIGTERM must reach the script inside the jail (its trap runs), not just bwrap.
    let lab = Lab::new();
    let t = lab.tool(
        "trapper",
        "bash",
        "",
        "trap 'echo got-term >&2; exit 7' TERM\necho started >&3\nwhile :; do sleep 0.1; done\n",
    );
    let exec = lab.executor(lab.policy());
    let cancel = CancelToken::new();
    let (sink, _) = exec_common::cancel_on_first_update(cancel.clone());
    let r = run(
        &exec,
        &t,
        json!({}),
        cancel,
        Some(sink),
        Some(Duration::from_secs(20)),
    )
    .await;
    let text = r.text_content();
    assert!(text.starts_with("cancelled; SIGTERM was sent"), "{text}");
    assert!(text.contains("got-term"), "{text}");
}

#[tokio::test]
async fn a_descriptor_leaked_into_the_agent_does_not_reach_the_jail() {
    // An fd the agent inherited without close-on-exec (a careless parent) would pass
    // through bwrap to the tool.
    let lab = Lab::new();
    let file = std::fs::File::open("/etc/hostname").unwrap();
    let leaked = 57;
    // SAFETY: dup2 onto a number this test owns; it is closed again below.
    assert_eq!(
        unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&file), leaked) },
        leaked
    );
    let t = lab.tool(
        "fds",
        "bash",
        "",
        "for f in /proc/$$/fd/*; do printf '%s ' \"${f##*/}\"; done\n",
    );
    let r = call(&lab.executor(lab.policy()), &t, json!({})).await;
    // SAFETY: closes the descriptor dup2 made above.
    unsafe { libc::close(leaked) };
    let text = r.text_content();
    let fds: Vec<&str> = text.split_whitespace().collect();
    assert!(fds.contains(&"3"), "the protocol fd is there: {fds:?}");
    assert!(
        !fds.contains(&"57"),
        "the leaked fd reached the tool: {fds:?}"
    );
}

/// What an attacker's tool tried: a name that is a path, a swapped state folder, a planted
/// `usercustomize.py`. Each must fail to reach anything outside the tool's own folders.
mod doors {
    use super::*;
    use toolbind::StopReason;

    const LS_HOME: &str = "import os\ndef execute(i, p, s, u):\n    return ' '.join(sorted(os.listdir(os.environ['HOME'])))\n";

    #[tokio::test]
    async fn a_tool_named_dot_or_dot_dot_gets_no_state_folder_at_all() {
        let lab = Lab::new();
        let state = lab.path().join("state");
        // What a `..` tool reached before: the state root (and the generated token file
        // there) and its siblings' folders.
        std::fs::create_dir_all(state.join("victim")).unwrap();
        std::fs::write(state.join("http-token"), "token-9931").unwrap();
        std::fs::write(state.join("victim/notes"), "victim-notes-5521").unwrap();
        let honest = lab.tool("lister", "python", "", LS_HOME);
        let exec = lab.executor(lab.policy());
        for name in ["..", ".", "a/../..", ""] {
            let mut spec = honest.spec().clone();
            spec.name = name.to_owned();
            let evil = ToolInfo::from(spec);
            let r = call(&exec, &evil, json!({})).await;
            let text = r.text_content();
            assert!(r.is_error, "{name:?} ran: {text}");
            assert_eq!(r.stop, StopReason::JailFailed, "{name:?}: {text}");
            assert!(
                text.contains("refusing the folder name"),
                "{name:?}: {text}"
            );
            assert!(
                !text.contains("http-token") && !text.contains("victim"),
                "{name:?}: {text}"
            );
        }
        // The default state root too (no `state_dir`): the hash folder is not reachable.
        let exec = lab.executor(SandboxPolicy::new().mode(SandboxMode::Required));
        let mut spec = honest.spec().clone();
        spec.name = "..".into();
        let evil = ToolInfo::from(spec);
        let r = call(&exec, &evil, json!({})).await;
        assert_eq!(r.stop, StopReason::JailFailed, "{}", r.text_content());
        // The honest tool sees only its own, empty HOME.
        let r = call(&lab.executor(lab.policy()), &honest, json!({})).await;
        assert!(!r.is_error, "{}", r.text_content());
        assert!(!r.text_content().contains("victim"), "{}", r.text_content());
    }

    #[tokio::test]
    async fn a_state_folder_swapped_for_a_symlink_is_refused_not_mounted() {
        let lab = Lab::new();
        let writer = lab.tool(
            "victim",
            "bash",
            "",
            "echo planted > \"$HOME/written\" && echo wrote\n",
        );
        let exec = lab.executor(lab.policy());
        let r = call(&exec, &writer, json!({})).await;
        assert_eq!(r.text_content(), "wrote");
        let host = tempfile::tempdir().unwrap();
        for target in [host.path(), Path::new("/etc")] {
            let st = lab.path().join("state/victim");
            let _ = std::fs::remove_dir_all(&st);
            let _ = std::fs::remove_file(&st);
            std::os::unix::fs::symlink(target, &st).unwrap();
            let r = call(&exec, &writer, json!({})).await;
            let text = r.text_content();
            assert_eq!(r.stop, StopReason::JailFailed, "{text}");
            assert!(
                text.contains("symlink") && text.contains("victim"),
                "{text}"
            );
            assert!(!target.join("written").exists(), "wrote through the link");
        }
        // The state root itself swapped for a link.
        std::fs::remove_file(lab.path().join("state/victim")).unwrap();
        std::fs::rename(lab.path().join("state"), lab.path().join("state.old")).unwrap();
        std::os::unix::fs::symlink(host.path(), lab.path().join("state")).unwrap();
        let r = call(&exec, &writer, json!({})).await;
        assert_eq!(r.stop, StopReason::JailFailed, "{}", r.text_content());
        assert!(std::fs::read_dir(host.path()).unwrap().next().is_none());
    }

    #[tokio::test]
    async fn a_state_dir_holding_toolbinds_own_state_root_is_refused() {
        let lab = Lab::new();
        let t = lab.tool("spill", "bash", "", "echo ran\n");
        let own = toolbind::dirs::state_root();
        for dir in [own.clone(), own.parent().unwrap().to_path_buf()] {
            let exec = lab.executor(lab.policy().state_dir(&dir));
            let r = call(&exec, &t, json!({})).await;
            assert_eq!(r.stop, StopReason::JailFailed, "{}", r.text_content());
            assert!(
                r.text_content().contains("choose a folder of its own"),
                "{}",
                r.text_content()
            );
        }
    }

    #[tokio::test]
    async fn a_state_folder_of_another_user_is_refused() {
        if nix::unistd::geteuid().as_raw() != 0 {
            eprintln!("skipped: only root can hand a folder to another user");
            return;
        }
        let lab = Lab::new();
        let t = lab.tool("owned", "bash", "", "echo ran\n");
        let st = lab.path().join("state/owned");
        std::fs::create_dir_all(&st).unwrap();
        std::os::unix::fs::chown(&st, Some(4242), Some(4242)).unwrap();
        let r = call(&lab.executor(lab.policy()), &t, json!({})).await;
        assert_eq!(r.stop, StopReason::JailFailed, "{}", r.text_content());
        assert!(
            r.text_content().contains("owned by uid 4242"),
            "{}",
            r.text_content()
        );
    }

    #[tokio::test]
    async fn a_planted_usercustomize_never_runs_in_a_python_tool() {
        let lab = Lab::new();
        let t = lab.tool(
            "py_site",
            "python",
            "worker: oneshot\n",
            "import site, sys\ndef execute(i, p, s, u):\n    return site.getusersitepackages() + '|' + str('usercustomize' in sys.modules)\n",
        );
        let sh = lab.tool(
            "sh_site",
            "bash",
            "",
            "python3 -c 'import sys; print(\"usercustomize\" in sys.modules)'\n",
        );
        let exec = lab.executor(lab.policy());
        let r = call(&exec, &t, json!({})).await;
        let text = r.text_content();
        let (site_dir, loaded) = text.split_once('|').expect(&text);
        assert_eq!(loaded, "False");
        // Plant it where python would look: the tool's own HOME (what another tool
        // reached through a shared state folder), for both tools.
        for name in ["py_site", "sh_site"] {
            let home = lab.path().join("state").join(name);
            let rel = Path::new(site_dir)
                .strip_prefix(lab.path().join("state/py_site").canonicalize().unwrap())
                .unwrap()
                .to_path_buf();
            let dir = home.join(rel);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(
                dir.join("usercustomize.py"),
                "open(__file__ + '.ran', 'w').write('x')\n",
            )
            .unwrap();
        }
        let r = call(&exec, &t, json!({})).await;
        assert!(r.text_content().ends_with("|False"), "{}", r.text_content());
        let r = call(&exec, &sh, json!({})).await;
        assert_eq!(r.text_content(), "False");
        for name in ["py_site", "sh_site"] {
            let ran = walk(&lab.path().join("state").join(name))
                .into_iter()
                .any(|p| p.to_string_lossy().ends_with(".ran"));
            assert!(!ran, "usercustomize.py ran in {name}");
        }
    }

    #[tokio::test]
    async fn a_typescript_module_linked_out_of_the_folder_is_never_read_on_the_host() {
        let lab = Lab::new();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(
            outside.path().join("env.ts"),
            "export const k = 'ts-secret-6620';\n",
        )
        .unwrap();
        std::fs::create_dir(outside.path().join("lib")).unwrap();
        std::fs::write(
            outside.path().join("lib/x.ts"),
            "export const k = 'ts-secret-6621';\n",
        )
        .unwrap();
        for (name, import) in [("leak_file", "./env.ts"), ("leak_dir", "./lib/x.ts")] {
            let t = lab.tool(name, "typescript", "", "");
            std::fs::remove_file(t.dir().join("index.mjs")).unwrap();
            std::fs::write(
                t.dir().join("index.ts"),
                format!("import {{ k }} from '{import}';\nexport async function execute() {{ return k; }}\n"),
            )
            .unwrap();
            std::os::unix::fs::symlink(outside.path().join("env.ts"), t.dir().join("env.ts"))
                .unwrap();
            std::os::unix::fs::symlink(outside.path().join("lib"), t.dir().join("lib")).unwrap();
            let t = t.clone();
            let t = toolbind::ToolInfo::from({
                let mut s = t.spec().clone();
                s.entry = Some("index.ts".into());
                s
            });
            let r = call(&lab.executor(lab.policy()), &t, json!({})).await;
            let text = r.text_content();
            assert!(r.is_error, "{name}: {text}");
            assert!(text.contains("out of the tool folder"), "{name}: {text}");
            assert!(!text.contains("ts-secret"), "{name}: {text}");
            // Nothing of it reached the cache the jail is shown.
            let cached = walk(&lab.path().join("cache"))
                .into_iter()
                .filter(|p| p.is_file())
                .any(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains("ts-secret")));
            assert!(!cached, "{name}: the secret was transpiled into the cache");
        }
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            }
            out.push(p);
        }
        out
    }

    #[tokio::test]
    async fn a_granted_working_directory_is_where_the_tool_runs_and_a_hidden_path_is_named() {
        let lab = Lab::new();
        let work = tempfile::tempdir().unwrap();
        std::fs::write(work.path().join("input.txt"), "input-4417").unwrap();
        let tools = readers(&lab);
        let granted = SubprocessExecutor::new(
            ExecConfig::default()
                .cache_dir(lab.path().join("cache"))
                .cwd(work.path().to_path_buf())
                .sandbox(lab.policy().allow_read(work.path())),
        );
        for t in &tools {
            let r = call(&granted, t, json!({"arg": "input.txt"})).await;
            assert_eq!(r.text_content(), "input-4417", "{}", t.name());
        }
        // Not granted: the tool runs in its state folder, and the error says why the
        // file is missing and how to grant it.
        let hidden = SubprocessExecutor::new(
            ExecConfig::default()
                .cache_dir(lab.path().join("cache"))
                .cwd(work.path().to_path_buf())
                .sandbox(lab.policy()),
        );
        for t in &tools {
            let r = call(&hidden, t, json!({"arg": "input.txt"})).await;
            let text = r.text_content();
            assert!(r.is_error, "{}: {text}", t.name());
            assert!(
                // The Rust API's words: this runtime was not made by the CLI.
                text.contains("`input.txt`") && text.contains("SandboxPolicy::allow_read(PATH)"),
                "{}: {text}",
                t.name()
            );
        }
        // A path that does not exist on the host gets no such note, and no grant of `/`
        // or of what the jail has its own of is ever suggested.
        for arg in ["/nonexistent-3318", "/", "/proc/self/nonexistent"] {
            let r = call(&hidden, &tools[1], json!({ "arg": arg })).await;
            assert!(r.is_error, "{arg}");
            assert!(
                !r.text_content().contains("does not show"),
                "{arg}: {}",
                r.text_content()
            );
        }
        // Run from inside the tool's own (read-only, not granted) folder: the tool runs in
        // its state folder, so a relative name does not find the tool's files.
        let in_tool = SubprocessExecutor::new(
            ExecConfig::default()
                .cache_dir(lab.path().join("cache"))
                .cwd(tools[1].dir())
                .sandbox(lab.policy()),
        );
        let r = call(&in_tool, &tools[1], json!({"arg": "TOOL.md"})).await;
        assert!(r.is_error, "ran in the tool folder: {}", r.text_content());
    }
}

/// What `off` still guarantees: a call's detached grandchildren (their own session, out of
/// the tool's process group) die when it times out or returns, where a cgroup can track
/// them (`tracking`: v1 `pids` as root, a v2 leaf where a subtree is delegated); where
/// none can, the status says they can survive, why, and the fix.
#[tokio::test]
async fn unjailed_calls_end_with_everything_they_started() {
    let lab = Lab::new();
    let exec = lab.executor(SandboxPolicy::off());
    if !holds(&exec, "tracking") {
        let status = exec.sandbox_status(&[]);
        assert!(
            status.reason.contains("can survive") && status.reason.contains("Delegate=yes"),
            "{status}"
        );
        return;
    }
    let tools = detachers(&lab);
    detached_children_die(&exec, &tools).await;
}

#[tokio::test]
async fn processes_of_one_call_share_one_memory_limit() {
    let lab = Lab::new();
    let t = lab.tool(
        "many_mallocs",
        "bash",
        "",
        "touch \"$HOME/ran\"\nfor i in 1 2 3 4; do python3 -c \"b = b'x' * (400 << 20); import time; time.sleep(5)\" & done\nfail=0\nfor j in $(jobs -p); do wait $j || fail=1; done\nexit $fail\n",
    );
    let exec = lab.executor(
        lab.policy()
            .limits(SandboxLimits::default().call_memory(Some(1 << 30))),
    );
    if !holds(&exec, "call_memory") {
        // Set explicitly under `required`: refused before the tool runs, with the fix.
        let r = call(&exec, &t, json!({})).await;
        refused_for_limit(
            &r,
            "--call-memory",
            &lab.path().join("state/many_mallocs/ran"),
        );
        return;
    }
    // Each process stays under the 1 GiB per-process limit; together they pass 1 GiB.
    let r = call(&exec, &t, json!({})).await;
    let text = r.text_content();
    assert_eq!(
        r.stop,
        toolbind::StopReason::LimitExceeded {
            limit: toolbind::result::Limit::Memory
        },
        "{text}"
    );
    assert!(
        text.contains("memory limit per call (1024 MiB") && text.contains("--call-memory"),
        "{text}"
    );
}

/// A script standing in for bwrap at `path`: it exits 1 with `words` on stderr.
fn failing_bwrap(path: &Path, words: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\necho '{words}' >&2\nexit 1\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_path_buf()
}

/// Where the jail cannot start, `required` refuses every language the same way through
/// the `Runtime` (whose `prepareArguments` step starts a node or python process first: its
/// failure used to come back as a `tool_error` string) and through the executor.
#[tokio::test]
async fn a_jail_that_cannot_start_is_jail_failed_for_every_language() {
    use toolbind::StopReason;
    let lab = Lab::new();
    for (name, lang, extra, code) in [
        ("up_sh", "bash", "", "echo hi\n"),
        (
            "up_py",
            "python",
            "",
            "def execute(i, p, s, u):\n    return 'hi'\n",
        ),
        (
            "up_py1",
            "python",
            "worker: oneshot\n",
            "def execute(i, p, s, u):\n    return 'hi'\n",
        ),
        (
            "up_js",
            "typescript",
            "",
            "export async function execute() { return 'hi'; }\n",
        ),
        (
            "up_js1",
            "typescript",
            "worker: oneshot\n",
            "export async function execute() { return 'hi'; }\n",
        ),
    ] {
        lab.tool(name, lang, extra, code);
    }
    let registry = toolbind::Loader::new()
        .dirs([lab.path().join("tools")])
        .quiet()
        .load()
        .registry;
    let broken = failing_bwrap(&lab.path().join("bwrap-fails"), "bwrap: broken-7731");
    for bwrap in [broken, PathBuf::from("/bin/false")] {
        let rt = toolbind::Runtime::builder()
            .registry(registry.clone())
            .sandbox(lab.policy().bwrap(&bwrap))
            .build();
        for name in ["up_sh", "up_py", "up_py1", "up_js", "up_js1"] {
            let r = rt.call(name, json!({}), toolbind::CallOptions::new()).await;
            assert_eq!(
                r.stop,
                StopReason::JailFailed,
                "{name}: {}",
                r.text_content()
            );
            assert!(
                r.text_content()
                    .contains("the sandbox is required but cannot run"),
                "{name}: {}",
                r.text_content()
            );
        }
    }
}

/// A tool's view of its seccomp filter: the `Seccomp` lines of `/proc/self/status`, then
/// `name=ok` or `name=<error>` for each attempt.
const PY_SECCOMP: &str = r#"import ctypes, os
def execute(i, p, s, u):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    out = [l for l in open('/proc/self/status').read().splitlines() if l.startswith('Seccomp')]
    for name, nr, args in [
        ('ptrace', 101, (0, 0, 0, 0)),            # PTRACE_TRACEME
        ('bpf', 321, (0, 0, 0)),
        ('keyctl', 250, (0, -3, 0, 0, 0)),        # the session keyring's id
        ('unshare', 272, (0x10000000,)),          # CLONE_NEWUSER
        ('io_uring_setup', 425, (1, 0)),
    ]:
        r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
        out.append('%s=%s' % (name, 'ok' if r >= 0 else os.strerror(ctypes.get_errno())))
    return '\n'.join(out)
"#;
const NODE_SECCOMP: &str = "import { readFileSync } from 'node:fs';\nimport { execFileSync } from 'node:child_process';\nexport async function execute() {\n  const out = readFileSync('/proc/self/status', 'utf8').split('\\n').filter((l) => l.startsWith('Seccomp'));\n  try { execFileSync('unshare', ['--user', 'true'], { stdio: 'ignore' }); out.push('unshare=ok'); } catch { out.push('unshare=failed'); }\n  return out.join('\\n');\n}\n";
const SH_SECCOMP: &str = "grep ^Seccomp /proc/self/status\nif unshare --user true 2>/dev/null; then echo unshare=ok; else echo unshare=failed; fi\n";

fn seccomp_tools(lab: &Lab) -> Vec<ToolInfo> {
    vec![
        lab.tool("sc_js", "typescript", "", NODE_SECCOMP),
        lab.tool("sc_js1", "typescript", "worker: oneshot\n", NODE_SECCOMP),
        lab.tool("sc_py", "python", "", PY_SECCOMP),
        lab.tool("sc_py1", "python", "worker: oneshot\n", PY_SECCOMP),
        lab.tool("sc_sh", "bash", "", SH_SECCOMP),
    ]
}

/// What every jail's filter shows: a filter in force, and the attempts refused (ptrace,
/// bpf, keyctl, unshare with EPERM; io_uring with ENOSYS, so that libuv falls back).
fn assert_filtered(name: &str, text: &str) {
    assert!(text.contains("Seccomp:\t2"), "{name}: {text}");
    let filters: u32 = text
        .lines()
        .find_map(|l| l.strip_prefix("Seccomp_filters:\t"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    assert!(filters >= 1, "{name}: {text}");
    assert!(!text.contains("=ok"), "{name}: {text}");
    if name.contains("_py") {
        for denied in ["ptrace", "bpf", "keyctl", "unshare"] {
            assert!(
                text.contains(&format!("{denied}=Operation not permitted")),
                "{name}: {text}"
            );
        }
        assert!(
            text.contains("io_uring_setup=Function not implemented"),
            "{name}: {text}"
        );
    } else {
        assert!(text.contains("unshare=failed"), "{name}: {text}");
    }
}

#[tokio::test]
async fn every_bwrap_jail_has_the_seccomp_filter() {
    let lab = Lab::new();
    let jailed = lab.executor(lab.policy());
    for t in seccomp_tools(&lab) {
        let r = call(&jailed, &t, json!({})).await;
        assert!(!r.is_error, "{}: {}", t.name(), r.text_content());
        assert_filtered(t.name(), &r.text_content());
    }
    // Unjailed, the same tools run without one (the test can fail).
    let off = lab.executor(SandboxPolicy::off());
    let t = lab.tool("sc_off", "python", "", PY_SECCOMP);
    let r = call(&off, &t, json!({})).await;
    assert!(
        r.text_content().contains("Seccomp:\t0"),
        "{}",
        r.text_content()
    );
    assert!(
        r.text_content().contains("io_uring_setup=Bad address"),
        "{}",
        r.text_content()
    );
}

/// The jails show `/etc`'s TLS roots, not the host's TLS private keys: Debian's
/// `/etc/ssl/private` (root's, `0710`) is readable by a root agent's tool, uid 0 in both
/// jails, when all of `/etc/ssl` is shown. Checked where the host has the folder and the
/// test runs as root (elsewhere the key is unreadable anyway); TLS still works.
#[tokio::test]
async fn the_hosts_tls_private_keys_are_not_shown() {
    let private = Path::new("/etc/ssl/private");
    if !private.is_dir() || !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: no /etc/ssl/private, or not root");
        return;
    }
    let lab = Lab::new();
    let t = lab.tool(
        "tls_sh",
        "bash",
        "",
        "ls /etc/ssl/private 2>&1 && echo listed\ntest -s /etc/ssl/certs/ca-certificates.crt && echo roots=ok\n",
    );
    for policy in [lab.policy(), lab.policy().mode(SandboxMode::Light)] {
        let text = call(&lab.executor(policy), &t, json!({}))
            .await
            .text_content();
        assert!(!text.contains("listed"), "{text}");
        if Path::new("/etc/ssl/certs/ca-certificates.crt").exists() {
            assert!(text.contains("roots=ok"), "{text}");
        }
    }
}

/// `network: false` is no network of any family: `AF_VSOCK` (the hypervisor's host, from
/// a VM) is no namespace's, so it is refused by the filter in both jails. Where the
/// kernel has no vsock the socket fails anyway; what must never happen is `created`.
#[tokio::test]
async fn network_false_refuses_a_vsock_socket_in_both_jails() {
    let lab = Lab::new();
    let t = lab.tool(
        "vsock_py",
        "python",
        "sandbox: {network: false}\n",
        "import socket\ndef execute(i, p, s, u):\n    try:\n        socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM).close()\n        return 'created'\n    except OSError as e:\n        return 'refused: %s' % e\n",
    );
    for policy in [lab.policy(), lab.policy().mode(SandboxMode::Light)] {
        let r = call(&lab.executor(policy), &t, json!({})).await;
        assert!(
            r.text_content().starts_with("refused"),
            "{}",
            r.text_content()
        );
    }
}

/// The lighter jail (`SandboxMode::Light`), on this host by choice: what the issue asks of
/// it where user namespaces are blocked.
mod light {
    use super::*;
    use toolbind::sandbox::JailKind;

    fn light(lab: &Lab) -> SandboxPolicy {
        lab.policy().mode(SandboxMode::Light)
    }

    #[tokio::test]
    async fn node_python_and_bash_run_warm_and_one_shot_under_the_filter() {
        let lab = Lab::new();
        let exec = lab.executor(light(&lab));
        let status = exec.sandbox_status(&[toolbind::tool::Language::Bash]);
        assert!(
            matches!(status.jail, JailKind::Light { landlock_abi } if landlock_abi >= 1),
            "{status}"
        );
        for t in seccomp_tools(&lab) {
            for _ in 0..2 {
                let r = call(&exec, &t, json!({})).await;
                assert!(!r.is_error, "{}: {}", t.name(), r.text_content());
                assert_filtered(t.name(), &r.text_content());
            }
        }
        // No bwrap: the tool is the process the runtime started.
        let t = lab.tool("parent", "bash", "", "ps -o comm= -p $PPID\n");
        let r = call(&exec, &t, json!({})).await;
        assert!(!r.text_content().contains("bwrap"), "{}", r.text_content());
    }

    #[tokio::test]
    async fn an_ssh_key_in_the_home_outside_the_grants_cannot_be_read() {
        let lab = Lab::new();
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join(".ssh")).unwrap();
        let key = home.path().join(".ssh/id_ed25519");
        std::fs::write(&key, "PRIVATE-KEY-7731").unwrap();
        let tools = readers(&lab);
        let exec = lab.executor(light(&lab));
        for t in &tools {
            let r = call(&exec, t, json!({"arg": key})).await;
            assert!(r.is_error, "{} read it: {}", t.name(), r.text_content());
            assert!(
                !r.text_content().contains("PRIVATE-KEY-7731"),
                "{}",
                t.name()
            );
        }
        let granted = lab.executor(light(&lab).allow_read(home.path()));
        for t in &tools {
            let r = call(&granted, t, json!({"arg": key})).await;
            assert_eq!(r.text_content(), "PRIVATE-KEY-7731", "{}", t.name());
        }
    }

    #[tokio::test]
    async fn writes_go_to_the_state_folder_and_a_private_tmp_only() {
        let lab = Lab::new();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("written.txt");
        let t = lab.tool(
            "write_sh",
            "bash",
            "",
            &format!(
                "if echo x > {} 2>/dev/null; then echo outside=ok; else echo outside=denied; fi\nif echo x > /tmp/toolbind-light-7731 2>/dev/null; then echo tmp=ok; else echo tmp=denied; fi\necho x > \"$HOME/state.txt\" && echo home=ok\necho x > \"$TMPDIR/t\" && echo tmpdir=ok\nmkdir \"$TMPDIR/kept\" && echo x > \"$TMPDIR/kept/f\" && chmod 500 \"$TMPDIR/kept\" 2>/dev/null\necho \"$TMPDIR\"\n",
                target.display()
            ),
        );
        let r = call(&lab.executor(light(&lab)), &t, json!({})).await;
        let text = r.text_content();
        assert!(
            text.contains("outside=denied") && text.contains("tmp=denied"),
            "{text}"
        );
        assert!(
            text.contains("home=ok") && text.contains("tmpdir=ok"),
            "{text}"
        );
        assert!(!target.exists());
        // The private tmp is gone once the process ended, a folder the tool made
        // unwritable (`chmod 500`, as a non-root agent's tool may) included.
        let tmpdir = text.lines().last().unwrap();
        assert!(tmpdir.contains("/light-tmp/"), "{text}");
        assert!(!Path::new(tmpdir).exists(), "{tmpdir} was left behind");
    }

    #[tokio::test]
    async fn the_agent_can_be_neither_read_nor_signalled() {
        let lab = Lab::new();
        let agent = std::process::id();
        let t = lab.tool(
            "agent_sh",
            "bash",
            "",
            &format!(
                "if cat /proc/{agent}/environ >/dev/null 2>&1; then echo environ=read; else echo environ=denied; fi\nkill -0 {agent} 2>&1 && echo kill=ok\nkill -0 -1 2>&1 && echo killall=ok\nkill -0 $$ && echo self=ok\n"
            ),
        );
        let py = lab.tool(
            "agent_py",
            "python",
            "",
            &format!(
                "import os\ndef execute(i, p, s, u):\n    out = []\n    try:\n        open('/proc/{agent}/environ', 'rb').read()\n        out.append('environ=read')\n    except OSError as e:\n        out.append('environ=%s' % e.strerror)\n    try:\n        os.kill({agent}, 0)\n        out.append('kill=ok')\n    except OSError as e:\n        out.append('kill=%s' % e.strerror)\n    return ' '.join(out)\n"
            ),
        );
        let exec = lab.executor(light(&lab));
        let text = call(&exec, &t, json!({})).await.text_content();
        assert!(text.contains("environ=denied"), "{text}");
        assert!(text.contains("Operation not permitted"), "{text}");
        assert!(
            !text.contains("kill=ok") && !text.contains("killall=ok"),
            "{text}"
        );
        assert!(text.contains("self=ok"), "{text}");
        let text = call(&exec, &py, json!({})).await.text_content();
        assert_eq!(
            text, "environ=Permission denied kill=Operation not permitted",
            "{text}"
        );
        // Unjailed, the same process may do both (the test can fail).
        let off = lab.executor(SandboxPolicy::off());
        let text = call(&off, &py, json!({})).await.text_content();
        assert_eq!(text, "environ=read kill=ok", "{text}");
    }

    #[tokio::test]
    async fn network_off_refuses_a_loopback_connect() {
        let lab = Lab::new();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port().to_string();
        let open = [
            lab.tool("lnet_js", "typescript", "", NODE_CONNECT),
            lab.tool("lnet_py", "python", "", PY_CONNECT),
        ];
        let closed = [
            lab.tool(
                "lnonet_js",
                "typescript",
                "sandbox:\n  network: false\n",
                NODE_CONNECT,
            ),
            lab.tool(
                "lnonet_py",
                "python",
                "sandbox: {network: false}\n",
                PY_CONNECT,
            ),
        ];
        let exec = lab.executor(light(&lab));
        for t in &open {
            let r = call(&exec, t, json!({"arg": port})).await;
            assert_eq!(r.text_content(), "connected", "{}", t.name());
        }
        for t in &closed {
            let r = call(&exec, t, json!({"arg": port})).await;
            assert!(
                r.text_content().starts_with("refused"),
                "{}: {}",
                t.name(),
                r.text_content()
            );
        }
        let offline = lab.executor(light(&lab).network(false));
        for t in &open {
            let r = call(&offline, t, json!({"arg": port})).await;
            assert!(
                r.text_content().starts_with("refused"),
                "{}: {}",
                t.name(),
                r.text_content()
            );
        }
    }

    /// No mount namespace, so `/dev` is the host's: a terminal of the user's (here a pty
    /// the test holds, with a line typed into it) must not be readable, or a tool reads what
    /// the user types there. `/dev/null` and `/dev/urandom` still work.
    #[tokio::test]
    async fn the_hosts_terminals_cannot_be_read() {
        use std::os::fd::FromRawFd;
        // SAFETY: plain libc calls on a descriptor this test opens and then owns (the
        // File); `name` is large enough for any pty path.
        let (mut master, slave_path) = unsafe {
            let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
            assert!(m >= 0, "posix_openpt: {}", std::io::Error::last_os_error());
            let master = std::fs::File::from_raw_fd(m);
            assert_eq!(libc::grantpt(m), 0);
            assert_eq!(libc::unlockpt(m), 0);
            let mut name = [0 as libc::c_char; 128];
            assert_eq!(libc::ptsname_r(m, name.as_mut_ptr(), name.len()), 0);
            let name = std::ffi::CStr::from_ptr(name.as_ptr()).to_str().unwrap();
            (master, name.to_owned())
        };
        // The "shell" side stays open, so the typed line waits in the terminal's queue.
        let _slave = std::fs::File::open(&slave_path).unwrap();
        std::io::Write::write_all(&mut master, b"typed-password-7731\n").unwrap();
        let lab = Lab::new();
        let t = lab.tool(
            "tty_sh",
            "bash",
            "",
            &format!(
                "timeout 3 head -n1 {slave_path} 2>&1\nhead -c1 /dev/urandom >/dev/null && echo devices=ok\n"
            ),
        );
        let text = call(&lab.executor(light(&lab)), &t, json!({}))
            .await
            .text_content();
        assert!(!text.contains("typed-password-7731"), "{text}");
        assert!(text.contains("devices=ok"), "{text}");
    }

    /// Landlock does not cover a file's mode: the filter refuses the set-id bits and write
    /// for the group or others (for a root agent `chmod u+s` on any root-owned binary
    /// would hand every local user root; `chmod 666 ~/.ssh/authorized_keys` every local
    /// user a login), on a file the tool may only read as on its own. A root agent's tool
    /// changes no mode at all: uid 0 owns the host's files (`chmod 644 /etc/shadow`).
    #[tokio::test]
    async fn no_set_id_bit_nor_write_for_others_can_be_set() {
        use std::os::unix::fs::PermissionsExt;
        let granted = tempfile::tempdir().unwrap();
        let program = granted.path().join("program");
        std::fs::write(&program, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        let lab = Lab::new();
        let t = lab.tool(
            "setid_sh",
            "bash",
            "",
            &format!(
                "chmod u+s {p} 2>&1\nchmod g+s {p} 2>&1\nprintf x > \"$HOME/own\"\nstat -c before=%a \"$HOME/own\"\nchmod 4755 \"$HOME/own\" 2>&1\nchmod 666 \"$HOME/own\" 2>&1\nchmod o+w {p} 2>&1\nstat -c after-bad=%a \"$HOME/own\"\nchmod 700 \"$HOME/own\" 2>&1\nstat -c after-700=%a \"$HOME/own\"\n",
                p = program.display()
            ),
        );
        let exec = lab.executor(light(&lab).allow_read(granted.path()));
        let text = call(&exec, &t, json!({})).await.text_content();
        let mode = std::fs::metadata(&program).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o755, "{text}");
        assert!(text.contains("Operation not permitted"), "{text}");
        let field = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key))
                .unwrap_or_else(|| panic!("no {key} in {text}"))
                .to_owned()
        };
        let before = field("before=");
        assert_eq!(field("after-bad="), before, "{text}");
        let root = nix::unistd::geteuid().is_root();
        assert_eq!(
            field("after-700="),
            if root { before } else { "700".to_owned() },
            "a root agent's tool changes no mode; another's may, its own file: {text}"
        );
    }

    /// `socket(AF_UNIX)` is refused; a datagram `socketpair` must not be a way around it
    /// (`sendto` a path reaches any datagram socket of the host: syslog, journald).
    #[tokio::test]
    async fn a_hosts_datagram_socket_cannot_be_reached_through_a_socketpair() {
        let sockets = tempfile::tempdir().unwrap();
        let path = sockets.path().join("host.sock");
        let host = std::os::unix::net::UnixDatagram::bind(&path).unwrap();
        host.set_nonblocking(true).unwrap();
        let lab = Lab::new();
        let t = lab.tool(
            "dgram_py",
            "python",
            "",
            "import socket\ndef execute(i, p, s, u):\n    try:\n        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\n        a.sendto(b'from-the-jail-7731', p['arg'])\n        return 'sent'\n    except OSError as e:\n        return 'refused: %s' % e\n",
        );
        let exec = lab.executor(light(&lab));
        let r = call(&exec, &t, json!({"arg": path})).await;
        let mut buf = [0u8; 64];
        let got = host.recv(&mut buf).ok();
        assert_eq!(
            got,
            None,
            "the host socket received a datagram: {}",
            r.text_content()
        );
        assert!(
            r.text_content().starts_with("refused"),
            "{}",
            r.text_content()
        );
        // A stream pair, what a program pipes to its children, still works.
        let pair = lab.tool(
            "pair_py",
            "python",
            "",
            "import socket\ndef execute(i, p, s, u):\n    a, b = socket.socketpair()\n    a.send(b'x')\n    return b.recv(1).decode()\n",
        );
        assert_eq!(call(&exec, &pair, json!({})).await.text_content(), "x");
    }

    /// The limits are the bwrap jail's: rlimits set by the same child, the same cgroups.
    #[tokio::test]
    async fn memory_and_process_limits_hold_and_name_themselves() {
        let lab = Lab::new();
        let alloc = lab.tool(
            "lalloc_py",
            "python",
            "",
            "def execute(i, p, s, u):\n    b = bytearray(3 << 30)\n    return str(len(b))\n",
        );
        let bomb = lab.tool(
            "lbomb_py",
            "python",
            "",
            "import subprocess\ndef execute(i, p, s, u):\n    kids = []\n    for _ in range(400):\n        kids.append(subprocess.Popen(['sleep', '30']))\n    return 'started %d' % len(kids)\n",
        );
        let limits = SandboxLimits::default().processes(Some(32));
        let exec = lab.executor(light(&lab).limits(limits));
        let text = call(&exec, &alloc, json!({})).await.text_content();
        assert!(text.contains("memory limit (1024 MiB"), "{text}");
        let r = call(&exec, &bomb, json!({})).await;
        let text = r.text_content();
        assert!(r.is_error, "{text}");
        assert!(text.contains("process limit (32 processes)"), "{text}");
    }

    /// No PID namespace: a `setsid` child ends with the call through the call's cgroup
    /// (its pids cgroup, or without a process limit the tracking one unjailed calls get).
    #[tokio::test]
    async fn detached_grandchildren_die_with_the_call() {
        let lab = Lab::new();
        let tools = detachers(&lab);
        let exec = lab.executor(light(&lab));
        if !holds(&exec, "tracking") {
            // No cgroup here: the status says daemons survive, why and the fix.
            let status = exec.sandbox_status(&[]);
            assert!(
                status.reason.contains("daemons of a call: not enforced"),
                "{status}"
            );
            return;
        }
        detached_children_die(&exec, &tools).await;
        let unlimited = light(&lab).limits(SandboxLimits::default().processes(None));
        detached_children_die(&lab.executor(unlimited), &tools).await;
    }

    /// A host whose bwrap cannot make a user namespace, as bwrap says it there: `auto`
    /// runs tools in the lighter jail, `required` refuses and names the opt-in.
    #[tokio::test]
    async fn without_user_namespaces_auto_is_light_and_required_names_the_opt_in() {
        use toolbind::StopReason;
        let lab = Lab::new();
        let t = lab.tool("ns_py", "python", "", PY_SECCOMP);
        let sh = lab.tool("ns_sh", "bash", "", SH_SECCOMP);
        for words in [
            "bwrap: setting up uid map: Permission denied",
            "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.",
        ] {
            let bwrap = failing_bwrap(&lab.path().join("bwrap-no-userns"), words);
            let auto = lab.executor(lab.policy().mode(SandboxMode::Auto).bwrap(&bwrap));
            for tool in [&t, &sh] {
                let r = call(&auto, tool, json!({})).await;
                assert!(!r.is_error, "{}: {}", tool.name(), r.text_content());
                assert_filtered(tool.name(), &r.text_content());
            }
            let status = auto.sandbox_status(&[toolbind::tool::Language::Python]);
            assert!(
                matches!(status.jail, JailKind::Light { .. }) && status.jailed,
                "{status}"
            );
            let required = lab.executor(lab.policy().bwrap(&bwrap));
            for tool in [&t, &sh] {
                let r = call(&required, tool, json!({})).await;
                assert_eq!(r.stop, StopReason::JailFailed, "{}", r.text_content());
                assert!(
                    r.text_content().contains("--sandbox light")
                        && r.text_content().contains("user namespace"),
                    "{}",
                    r.text_content()
                );
            }
        }
        // Any other failure of bwrap is not taken for a missing user namespace.
        let broken = failing_bwrap(&lab.path().join("bwrap-broken"), "bwrap: broken-7731");
        let auto = lab.executor(lab.policy().mode(SandboxMode::Auto).bwrap(&broken));
        let status = auto.sandbox_status(&[toolbind::tool::Language::Python]);
        assert_eq!(status.jail, JailKind::None, "{status}");
    }
}
