//! The tool search benchmark (bench/discovery/README.md): how well and how fast
//! [`toolbind::index::ToolIndex`] finds the tool a request needs.
//!
//! ```text
//! cargo run --release -p toolbind --no-default-features --example search_bench -- \
//!     bench/discovery [--queries FILE] [--tools DIR] [--misses] [--json] [--no-timing]
//! ```
//!
//! The catalog is every snapshot in `<dir>/catalog` (real servers' tool lists at pinned
//! versions) plus the shipped `tools/` folder (`--tools`); the queries are `<dir>/queries.json`
//! (`[{query, tool}]`, `tool` being `server/name` or `local/name`, or an array of them).
//! Reported: recall at 1, 5 and 10 and the mean reciprocal rank; index build and query
//! times for the real catalog and for generated ones of 1,000 and 10,000 tools (the real
//! tools again under new names); and the answers to bad queries.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolbind::index::ToolIndex;
use toolbind::{Registry, ToolInfo};
use toolbind_codegen::mcp::Snapshot;

struct Args {
    dir: PathBuf,
    queries: Option<PathBuf>,
    tools: PathBuf,
    misses: bool,
    json: bool,
    timing: bool,
}

fn args() -> Args {
    let mut a = Args {
        dir: PathBuf::from("bench/discovery"),
        queries: None,
        tools: PathBuf::from("tools"),
        misses: false,
        json: false,
        timing: true,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--queries" => a.queries = it.next().map(PathBuf::from),
            "--tools" => a.tools = it.next().map(PathBuf::from).expect("--tools DIR"),
            "--misses" => a.misses = true,
            "--json" => a.json = true,
            "--no-timing" => a.timing = false,
            _ => a.dir = PathBuf::from(arg),
        }
    }
    a
}

/// The catalog: every snapshot's tools (renamed `<server>_<name>` where two servers share
/// a name, as an agent's prefix would), then the shipped tools. Each with its label.
fn catalog(dir: &Path, local: &Path) -> Vec<(String, ToolInfo)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("catalog"))
        .expect("the catalog folder")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut specs = Vec::new();
    for f in &files {
        let (snap, _) = Snapshot::read(f).unwrap_or_else(|d| panic!("{}: {d:?}", f.display()));
        specs.extend(toolbind_codegen::mcp::tool_specs(&snap, ""));
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    for s in &specs {
        *seen.entry(s.name.clone()).or_default() += 1;
    }
    let mut out = Vec::new();
    for mut s in specs {
        let origin = s.mcp.as_ref().expect("an MCP tool");
        let label = format!("{}/{}", origin.server, origin.name);
        if seen[&s.name] > 1 {
            s.name =
                toolbind_codegen::mcp::provider_name(&format!("{}_", origin.server), &origin.name);
        }
        out.push((label, ToolInfo::from(s)));
    }
    let loaded = toolbind::Loader::new().dir(local).quiet().load();
    for t in loaded.registry.iter() {
        out.push((format!("local/{}", t.name()), t.clone()));
    }
    out
}

fn registry(tools: &[(String, ToolInfo)]) -> Registry {
    let mut r = Registry::new();
    for (label, t) in tools {
        if r.insert(t.clone()).is_err() {
            panic!("two tools named {} ({label})", t.name());
        }
    }
    r
}

/// `n` tools: the real ones again and again, each copy under a new name.
fn generated(real: &[(String, ToolInfo)], n: usize) -> Registry {
    let mut r = Registry::new();
    for i in 0..n {
        let (_, t) = &real[i % real.len()];
        let mut spec = t.spec().clone();
        spec.name = format!("{}_{}", spec.name, i / real.len());
        let _ = r.insert(ToolInfo::from(spec));
    }
    r
}

/// The baseline: plain BM25 (k1 1.2, b 0.75) over each tool's name and description,
/// lowercased words split at anything not a letter or digit, no stemming, synonyms or
/// field weights — the usual "BM25 over the tool list" of a tool-search proxy.
struct Plain {
    docs: Vec<HashMap<String, f64>>,
    lens: Vec<f64>,
    df: HashMap<String, f64>,
    avg: f64,
}

fn plain_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

impl Plain {
    fn build(reg: &Registry) -> Plain {
        let mut p = Plain {
            docs: Vec::new(),
            lens: Vec::new(),
            df: HashMap::new(),
            avg: 0.0,
        };
        for t in reg.iter() {
            let words = plain_words(&format!("{} {}", t.name(), t.description()));
            let mut tf: HashMap<String, f64> = HashMap::new();
            for w in &words {
                *tf.entry(w.clone()).or_default() += 1.0;
            }
            for w in tf.keys() {
                *p.df.entry(w.clone()).or_default() += 1.0;
            }
            p.lens.push(words.len() as f64);
            p.docs.push(tf);
        }
        p.avg = p.lens.iter().sum::<f64>() / p.lens.len().max(1) as f64;
        p
    }

    /// The indexes of the best `k` tools, best first (ties by index).
    fn search(&self, query: &str, k: usize) -> Vec<usize> {
        let n = self.docs.len() as f64;
        let mut words = plain_words(query);
        words.sort();
        words.dedup();
        let mut scores: Vec<(usize, f64)> = (0..self.docs.len())
            .map(|i| {
                let s = words
                    .iter()
                    .filter_map(|w| {
                        let tf = *self.docs[i].get(w)?;
                        let df = self.df[w];
                        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                        Some(idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * self.lens[i] / self.avg)))
                    })
                    .sum();
                (i, s)
            })
            .filter(|&(_, s)| s > 0.0)
            .collect();
        scores.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scores.into_iter().take(k).map(|(i, _)| i).collect()
    }
}

/// Recall at 5 and MRR (over the top 10) of `rank_of` (the 0-based rank of a query's first
/// right answer, if in the top 10).
fn quality(qs: &[Query], mut rank_of: impl FnMut(&Query) -> Option<usize>) -> (f64, f64) {
    let (mut r5, mut rr) = (0usize, 0f64);
    for q in qs {
        if let Some(r) = rank_of(q) {
            r5 += usize::from(r < 5);
            rr += 1.0 / (r + 1) as f64;
        }
    }
    let n = qs.len() as f64;
    (
        (r5 as f64 / n * 1000.0).round() / 1000.0,
        (rr / n * 1000.0).round() / 1000.0,
    )
}

struct Query {
    text: String,
    answers: Vec<String>,
}

fn queries(file: &Path) -> Vec<Query> {
    let text = std::fs::read_to_string(file).expect("the query file");
    let v: Vec<Value> = serde_json::from_str(&text).expect("a JSON array");
    v.into_iter()
        .map(|q| Query {
            text: q["query"].as_str().expect("query").to_owned(),
            answers: match &q["tool"] {
                Value::String(s) => vec![s.clone()],
                Value::Array(a) => a.iter().map(|s| s.as_str().unwrap().to_owned()).collect(),
                other => panic!("tool: {other}"),
            },
        })
        .collect()
}

/// The median of `runs` timings of `f`.
fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut t: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    t.sort();
    t[runs / 2]
}

fn micros(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6 * 10.0).round() / 10.0
}

/// Bytes / 4 of what a request carries about tools each turn (Anthropic's definitions and
/// the system prompt): every tool, against progressive discovery with the shipped tools as
/// the core set, before any search and after searches found 5 and 10 tools, the searches'
/// calls and results in the conversation counted too (generic mode, `defer_loading` off:
/// with it on, the deferred definitions travel in the request but the model reads only
/// the referenced ones).
fn tokens_per_turn(reg: &Registry) -> Value {
    use toolbind::batch::{BatchOptions, ToolCallRequest};
    use toolbind::discovery::{Discovery, SEARCH_TOOL};
    use toolbind::provider::Provider;
    let p = Provider::Anthropic;
    let specs: Vec<_> = reg.iter().map(|t| t.spec().clone()).collect();
    let all = p.definitions(reg, false).to_string().len()
        + toolbind_codegen::prompt::system_prompt(&specs).len();
    let rt = toolbind::Runtime::builder().registry(reg.clone()).build();
    let local: Vec<String> = reg
        .iter()
        .filter(|t| t.spec().mcp.is_none())
        .map(|t| t.name().to_owned())
        .collect();
    let mut found = Discovery::new(p).core(local).defer_loading(false);
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut rows = Vec::new();
    let mut history = 0;
    for (turn, queries) in [
        ("first turn", &[][..]),
        (
            "after 1 search, 5 found",
            &["create an issue on GitHub"][..],
        ),
        (
            "after 2 searches, 10 found",
            &["post a message to a Slack channel"][..],
        ),
    ] {
        for q in queries {
            let call = ToolCallRequest::new("s", SEARCH_TOOL, json!({"query": q, "limit": 5}));
            let batch = tokio.block_on(found.call_batch(&rt, vec![call], BatchOptions::new()));
            // The search's call and result stay in the conversation.
            history += found
                .results(&batch)
                .iter()
                .map(|m| m.to_string().len())
                .sum::<usize>()
                + q.len()
                + 40;
        }
        let progressive =
            found.definitions(reg).to_string().len() + found.system_prompt(reg).len() + history;
        rows.push(json!({
            "turn": turn,
            "all": all / 4,
            "progressive": progressive / 4,
            "percent": (progressive as f64 / all as f64 * 1000.0).round() / 10.0,
        }));
    }
    Value::Array(rows)
}

fn main() {
    let a = args();
    let tools = catalog(&a.dir, &a.tools);
    let reg = registry(&tools);
    let label_of: HashMap<&str, &str> = tools.iter().map(|(l, t)| (t.name(), l.as_str())).collect();
    let qs = queries(
        &a.queries
            .clone()
            .unwrap_or_else(|| a.dir.join("queries.json")),
    );
    let index = ToolIndex::build(&reg);

    let (mut r1, mut r5, mut r10, mut rr) = (0usize, 0usize, 0usize, 0f64);
    let mut misses = Vec::new();
    for q in &qs {
        for ans in &q.answers {
            assert!(
                tools.iter().any(|(l, _)| l == ans),
                "no tool {ans} in the catalog ({:?})",
                q.text
            );
        }
        let hits = index.search(&q.text, 10).unwrap_or_default();
        let rank = hits
            .iter()
            .position(|h| q.answers.iter().any(|a| a == label_of[h.name.as_str()]));
        if let Some(r) = rank {
            r1 += usize::from(r == 0);
            r5 += usize::from(r < 5);
            r10 += 1;
            rr += 1.0 / (r + 1) as f64;
        }
        if rank.is_none_or(|r| r >= 5) {
            let top: Vec<&str> = hits
                .iter()
                .take(3)
                .map(|h| label_of[h.name.as_str()])
                .collect();
            misses.push(json!({"query": q.text, "want": q.answers, "rank": rank.map(|r| r + 1), "top": top}));
        }
    }
    let n = qs.len() as f64;
    let plain = Plain::build(&reg);
    let labels: Vec<&str> = reg.iter().map(|t| label_of[t.name()]).collect();
    let (plain_r5, plain_mrr) = quality(&qs, |q| {
        plain
            .search(&q.text, 10)
            .iter()
            .position(|&i| q.answers.iter().any(|a| a == labels[i]))
    });

    let mut timing = Vec::new();
    let sizes = if a.timing { 3 } else { 0 };
    for (label, r) in [
        ("catalog", reg.clone()),
        ("1000", generated(&tools, 1000)),
        ("10000", generated(&tools, 10_000)),
    ]
    .into_iter()
    .take(sizes)
    {
        let build = median(if r.len() > 5000 { 5 } else { 21 }, || {
            std::hint::black_box(ToolIndex::build(&r));
        });
        let idx = ToolIndex::build(&r);
        let per_query = median(5, || {
            for q in &qs {
                std::hint::black_box(idx.search(&q.text, 5).ok());
            }
        }) / qs.len() as u32;
        timing.push(json!({"tools": r.len(), "catalog": label, "build_us": micros(build), "query_us": micros(per_query)}));
    }

    let tokens = tokens_per_turn(&reg);

    let big = generated(&tools, 10_000);
    let big_index = ToolIndex::build(&big);
    let megabyte = "find ".repeat(200_000);
    let bad: Vec<Value> = [
        ("empty", String::new()),
        ("blank", " \t\n ".to_owned()),
        ("1 MB", megabyte),
        ("Japanese", "ファイルを削除する".to_owned()),
        ("Russian", "удалить файл".to_owned()),
        ("only stop words", "the of and".to_owned()),
    ]
    .into_iter()
    .map(|(what, q)| {
        let answer = match big_index.search(&q, 5) {
            Ok(h) if h.is_empty() => "no match".to_owned(),
            Ok(h) => format!("{} hits, first {}", h.len(), h[0].name),
            Err(e) => format!("refused: {e}"),
        };
        json!({"query": what, "answer": answer})
    })
    .collect();

    let report = json!({
        "tools": reg.len(),
        "servers": tools.iter().filter_map(|(_, t)| t.spec().mcp.as_ref().map(|m| m.server.clone())).collect::<std::collections::BTreeSet<_>>().len(),
        "queries": qs.len(),
        "recall_at_1": (r1 as f64 / n * 1000.0).round() / 1000.0,
        "recall_at_5": (r5 as f64 / n * 1000.0).round() / 1000.0,
        "recall_at_10": (r10 as f64 / n * 1000.0).round() / 1000.0,
        "mrr": (rr / n * 1000.0).round() / 1000.0,
        "baseline_plain_bm25": {"recall_at_5": plain_r5, "mrr": plain_mrr},
        "timing": timing,
        "bad_input_10000_tools": bad,
        "misses_at_5": misses.len(),
        "tokens_per_turn": tokens,
    });
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report).unwrap());
        return;
    }
    println!(
        "catalog: {} tools from {} servers and tools/; {} queries",
        report["tools"], report["servers"], report["queries"]
    );
    println!(
        "recall@1 {}  recall@5 {}  recall@10 {}  MRR {}",
        report["recall_at_1"], report["recall_at_5"], report["recall_at_10"], report["mrr"]
    );
    println!(
        "baseline, plain BM25 over name and description: recall@5 {plain_r5}  MRR {plain_mrr}"
    );
    for t in &timing {
        println!(
            "{:>6} tools: build {:>9} us, query {:>7} us (median; query: mean over the query set)",
            t["tools"], t["build_us"], t["query_us"]
        );
    }
    for t in tokens.as_array().unwrap() {
        println!(
            "tokens per turn ({}): {} of {} ({}%)",
            t["turn"].as_str().unwrap(),
            t["progressive"],
            t["all"],
            t["percent"]
        );
    }
    for b in &bad {
        println!(
            "bad input, {}: {}",
            b["query"].as_str().unwrap(),
            b["answer"].as_str().unwrap()
        );
    }
    if a.misses {
        for m in &misses {
            println!("miss: {m}");
        }
    } else {
        println!(
            "{} queries missed the top 5 (--misses lists them)",
            misses.len()
        );
    }
}
