// The baseline of cli/benches/mcp_exec.rs: what a TypeScript agent writes to call an MCP
// server's `echo` tool on the official SDK's client (@modelcontextprotocol/sdk, from
// tests/clients/install.sh): start the server over stdio (StdioClientTransport), connect
// (initialize), list its tools, call `echo` once (start to first call), warm up, then time
// CALLS calls of `echo` for each IN_FLIGHT (comma-separated: "1,8"), that many calls in
// flight at once. Every answer is checked. One JSON line on stdout per event:
//
//   {"event":"first","start_to_first_ms":..,"connect_ms":..,"list_ms":..,"server_pid":..,"sdk":".."}
//   {"event":"measured","in_flight":8,"calls":..,"wall_ms":..,"calls_per_s":..,"p50_ms":..,"p99_ms":..,"latencies_ms":[..]}
//
// With --step, it waits for a line on stdin before the warm-up and before each timed
// measurement (so that the bench driving it can read CPU counters around each one).
//
//   node bench/ts-call-tool.mjs [--step] SDK_DIR WARMUP CALLS IN_FLIGHT COMMAND [ARG...]
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

let argv = process.argv.slice(2);
const step = argv[0] === "--step";
if (step) argv = argv.slice(1);
const [sdkDir, warmupArg, callsArg, inFlightArg, command, ...args] = argv;
if (!command) {
  console.error(
    "usage: node bench/ts-call-tool.mjs [--step] SDK_DIR WARMUP CALLS IN_FLIGHT[,IN_FLIGHT...] COMMAND [ARG...]",
  );
  process.exit(2);
}
const warmup = Number(warmupArg);
const calls = Number(callsArg);
const inFlights = inFlightArg.split(",").map(Number);

const load = (p) => import(pathToFileURL(join(sdkDir, "dist/esm", p)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");
const sdk = JSON.parse(readFileSync(join(sdkDir, "package.json"), "utf8")).version;

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const go = async () => {
  if (step) await lines.next();
};
const say = (o) => process.stdout.write(JSON.stringify(o) + "\n");

async function echo(client, i) {
  const r = await client.callTool({ name: "echo", arguments: { message: `call ${i}` } });
  const text = r.content?.[0]?.text;
  if (r.isError || text !== `Echo: call ${i}`) {
    throw new Error(`unexpected answer to call ${i}: ${JSON.stringify(r)}`);
  }
}

// `n` calls, `k` in flight: the latency of each, in ms, and the wall time.
async function run(client, n, k) {
  const took = [];
  let next = 0;
  const start = performance.now();
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= n) return;
      const t = performance.now();
      await echo(client, i);
      took.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: k }, worker));
  return { took, wall: performance.now() - start };
}

const t0 = performance.now();
const transport = new StdioClientTransport({ command, args, stderr: "ignore" });
const client = new Client({ name: "ts-call-tool", version: "1.0.0" });
await client.connect(transport);
const t1 = performance.now();
const { tools } = await client.listTools();
if (!tools.some((t) => t.name === "echo")) throw new Error("the server lists no `echo` tool");
const t2 = performance.now();
await echo(client, 0);
const t3 = performance.now();
say({
  event: "first",
  start_to_first_ms: t3 - t0,
  connect_ms: t1 - t0,
  list_ms: t2 - t1,
  server_pid: transport.pid,
  sdk,
});

if (calls > 0) {
  await go();
  await run(client, warmup, Math.max(...inFlights));
  for (const k of inFlights) {
    await go();
    const { took, wall } = await run(client, calls, k);
    const sorted = [...took].sort((a, b) => a - b);
    const pick = (q) => sorted[Math.min(Math.floor(sorted.length * q), sorted.length - 1)];
    say({
      event: "measured",
      in_flight: k,
      calls,
      wall_ms: wall,
      calls_per_s: (calls / wall) * 1000,
      p50_ms: pick(0.5),
      p99_ms: pick(0.99),
      latencies_ms: took,
    });
  }
}
await client.close();
process.exit(0);
