// toolbind Node harness.
// Usage: node [--enable-source-maps] node.mjs <module> <maxTextBytes> <entryName> <maxLineBytes>
//
// Imports the tool's module once, says hello, then serves JSON-lines calls on fd 3 (a
// socket); runtime/src/exec/protocol.rs describes every message:
//   first: {"type":"hello","protocol":4,"capabilities":{"prepare":<exports prepareArguments>}}
//          (or a fatal, when the module cannot load)
//   in:  {"type":"call","id","toolCallId","params","trace"?} | {"type":"abort","id"}
//        | {"type":"prepare","id","args"} (the Pi tool API's prepareArguments: answered with
//          {"type":"prepared","id","args"} or an error)
//        | {"type":"answer","id","ask","result"|"error"} (to a question of the call's ctx)
//   out: {"type":"update","id","content","cut"?} | {"type":"result","id","result","cut"?}
//        | {"type":"ask","id","ask","kind","params","key"?} | {"type":"notify","id","level","text"}
//        | {"type":"waiting","id"} (it asked, and awaits an answer)
//        | {"type":"error","id","message"} | {"type":"fatal","message"}
//        | {"type":"data","id","ref","data","size"?} (a piece of a long base64 string,
//          sent ahead of the result that names it {"ref": n}; the first gives its length)
// The runtime joins fd 1 to fd 2, so console.log cannot reach the protocol.
// `execute(toolCallId, params, signal, onUpdate, ctx)`: the optional fifth argument asks
// the agent during the call: ctx.confirm(message) -> Promise<boolean>,
// ctx.elicit(message, schema) -> Promise<{action, content?}>, ctx.sample({messages, ...}),
// ctx.roots() -> Promise<[{uri, name?}]>, ctx.notify(text, level = "info"). At most 8
// questions open at once; the call's abort rejects what is still open.
// A call's W3C trace context (when the runtime exports traces) is what
// `globalThis.toolbindTrace.carrier()` returns while that call's code runs (its async
// context, as for exceptions): {traceparent, tracestate?}, or {} otherwise.
import { AsyncLocalStorage } from "node:async_hooks";
import { writeSync } from "node:fs";
import { Socket } from "node:net";
import { pathToFileURL } from "node:url";

const [modulePath, maxTextArg, entryName = modulePath, maxLineArg] = process.argv.slice(2);
const maxText = Number(maxTextArg) || 4 * 1024 * 1024;
const maxLine = Number(maxLineArg) || 16 * 1024 * 1024;

function fatal(message) {
  try {
    writeSync(3, JSON.stringify({ type: "fatal", message }) + "\n");
  } catch {}
  process.exit(70);
}

function describe(err) {
  if (err instanceof Error) return err.message || err.name || "Error";
  if (typeof err === "string") return err;
  try {
    return JSON.stringify(err) ?? String(err);
  } catch {
    return String(err);
  }
}

// Which call an exception belongs to: each call's `execute` runs inside its own async
// context, which timers, promises and event handlers it starts inherit.
const owner = new AsyncLocalStorage();

// Each call in flight's trace context, for `toolbindTrace.carrier()`: defined before the
// tool's module loads, so that the module may keep a reference to it.
const traces = new Map();
globalThis.toolbindTrace = Object.freeze({
  carrier() {
    const t = traces.get(owner.getStore());
    if (!t || typeof t.traceparent !== "string") return {};
    return typeof t.tracestate === "string"
      ? { traceparent: t.traceparent, tracestate: t.tracestate }
      : { traceparent: t.traceparent };
  },
});

let execute;
let prepareArguments;
try {
  const mod = await import(pathToFileURL(modulePath).href);
  prepareArguments = mod.prepareArguments ?? mod.default?.prepareArguments;
  execute = mod.execute ?? mod.default?.execute ??
    (typeof mod.default === "function" ? mod.default : undefined);
  if (typeof execute !== "function") {
    const names = Object.keys(mod).join(", ") || "nothing";
    fatal(`${entryName} does not export an execute function (it exports: ${names}); ` +
      "expected `export async function execute(toolCallId, params, signal, onUpdate)`");
  }
} catch (err) {
  const detail = err instanceof Error && err.stack ? err.stack : describe(err);
  fatal(`failed to load ${entryName}: ${detail}`);
}

// The first message: the protocol version this harness speaks and what the entry offers
// (the runtime sends `prepare` lines only when it exports prepareArguments). Written before
// the socket is read, so it precedes every answer.
const PROTOCOL_VERSION = 4;
try {
  writeSync(3, JSON.stringify({
    type: "hello",
    protocol: PROTOCOL_VERSION,
    capabilities: { prepare: typeof prepareArguments === "function" },
  }) + "\n");
} catch {}

// A promise a tool forgot to await rejects later: log it; do not let Node 20's default
// take down the warm worker and every call in flight on it.
process.on("unhandledRejection", (reason) => {
  process.stderr.write(`unhandled rejection in ${entryName}: ${reason instanceof Error && reason.stack ? reason.stack : describe(reason)}\n`);
});

const sock = new Socket({ fd: 3, readable: true, writable: true });
const calls = new Map();

// A lone UTF-16 surrogate (a string sliced through an emoji) would be written as a `\udXXX`
// escape that is not valid UTF-8 JSON for the runtime: make every string well-formed.
// JSON.stringify writes a lone surrogate as exactly that escape, so only a line showing
// one is written again with the (slower) replacer; a false alarm (an escaped backslash
// before "ud8") costs only that second pass.
const wellFormed = (_key, value) =>
  typeof value === "string" && !value.isWellFormed() ? value.toWellFormed() : value;
const loneSurrogate = /\\ud[89a-f]/i;

function send(msg) {
  let line;
  try {
    line = JSON.stringify(msg);
    if (loneSurrogate.test(line)) line = JSON.stringify(msg, wellFormed);
  } catch (err) {
    line = JSON.stringify({ type: "error", id: msg.id, message: `the tool's ${msg.type} is not JSON-serialisable: ${describe(err)}` });
  }
  // capText bounds characters; escaping (`"` -> `\"`, control characters -> `\u0000`) and
  // `details` can still make the line too long for the runtime. Then send what surely fits.
  if (Buffer.byteLength(line) > maxLine - 1024) line = JSON.stringify(shrink(msg, line), wellFormed);
  // Messages sent in one turn of the event loop (the results of calls that arrived
  // together) leave in one write: fewer system calls and wake-ups on both sides.
  if (!corked) {
    corked = true;
    sock.cork();
    setImmediate(uncork);
  }
  sock.write(line + "\n");
}

let corked = false;
function uncork() {
  corked = false;
  sock.uncork();
}

function shrink(msg, line) {
  const body = msg.type === "update" ? msg.content : msg.type === "result" ? msg.result : null;
  const texts = (body?.content ?? []).filter((b) => typeof b?.text === "string").map((b) => b.text);
  const room = Math.floor((maxLine - 4096) / 12); // even if every character became `\u0000`
  // The runtime writes the note from `cut` (protocol 3).
  const cut = { kind: "message", message: msg.type, bytes: Buffer.byteLength(line), limit: maxLine, kept: room };
  const content = [{ type: "text", text: texts.join("\n").slice(0, room) }];
  if (msg.type === "update") return { type: "update", id: msg.id, content: { content }, cut };
  if (msg.type === "result") return { type: "result", id: msg.id, result: { content, isError: body?.isError === true }, cut };
  if (msg.type === "prepared") {
    return { type: "error", id: msg.id, message: `prepareArguments returned ${Buffer.byteLength(line)} bytes of JSON, over the ${maxLine}-byte protocol limit` };
  }
  return { type: "error", id: msg.id, message: String(msg.message ?? "").slice(0, room) };
}

// Bounds the text of an update or result: maxText characters in all (one budget for every
// text block). Returns the bounded body and, when text was cut, `cut` saying how much: the
// runtime writes the note (protocol 3), so no text a tool returns can pass for one. Works
// on a copy: a warm tool returning cached state must not see its own data cut.
function capText(value) {
  if (typeof value === "string") value = { content: [{ type: "text", text: value }] };
  if (!value || !Array.isArray(value.content)) return { body: value, cut: null };
  let left = maxText;
  let cut = 0;
  const content = value.content.map((block) => {
    if (!block || typeof block.text !== "string") return block;
    if (block.text.length <= left) {
      left -= block.text.length;
      return block;
    }
    cut += block.text.length - left;
    const kept = { ...block, text: block.text.slice(0, left) };
    left = 0;
    return kept;
  });
  return { body: { ...value, content }, cut: cut > 0 ? { kind: "chars", cut, limit: maxText } : null };
}

// An update, its text bounded.
function updateMsg(id, partial) {
  const { body, cut } = capText(partial);
  return cut ? { type: "update", id, content: body, cut } : { type: "update", id, content: body };
}


// Each call's open questions (ctx): question number -> {resolve, reject}.
const questions = new Map();
const MAX_QUESTIONS = 8;

function rejectQuestions(id, why) {
  const open = questions.get(id);
  if (!open) return;
  for (const { reject } of open.values()) reject(new Error(why));
  open.clear();
}

// The fifth argument of `execute`: questions to the agent during call `id`.
function makeCtx(id, signal) {
  const open = new Map();
  questions.set(id, open);
  let next = 0;
  // Once the event loop goes idle after a question (the tool awaits its answers), the
  // runtime hears that the tool waits: questions asked together go out together.
  let idle = false;
  const waiting = () => {
    idle = false;
    if (calls.has(id) && open.size > 0) send({ type: "waiting", id });
  };
  // `opts.key` names the question (MCP 2026-07-28 clients see it as its inputRequests key).
  const ask = (kind, params, opts) => {
    if (!calls.has(id)) return Promise.reject(new Error(`ctx.${kind}: the call has ended`));
    if (signal.aborted) return Promise.reject(new Error(`ctx.${kind}: the call was cancelled`));
    if (open.size >= MAX_QUESTIONS) {
      return Promise.reject(new Error(`ctx.${kind}: at most ${MAX_QUESTIONS} questions may be open at once`));
    }
    const n = next++;
    return new Promise((resolve, reject) => {
      open.set(n, { resolve, reject });
      try {
        const key = opts?.key;
        send(key === undefined ? { type: "ask", id, ask: n, kind, params } : { type: "ask", id, ask: n, kind, params, key: String(key) });
        if (!idle) {
          idle = true;
          setImmediate(waiting);
        }
      } catch (err) {
        open.delete(n);
        reject(err);
      }
    });
  };
  return Object.freeze({
    confirm: (message, opts) => ask("confirm", { message: String(message) }, opts),
    elicit: (message, schema, opts) => ask("elicit", { message: String(message), schema: schema ?? null }, opts),
    sample: (params, opts) => ask("sample", params ?? {}, opts),
    roots: (opts) => ask("roots", {}, opts),
    notify: (text, level = "info") => {
      if (calls.has(id)) send({ type: "notify", id, level: String(level), text: String(text) });
    },
  });
}

function answer(msg) {
  const open = questions.get(msg.id);
  const q = open?.get(msg.ask);
  if (!q) return;
  open.delete(msg.ask);
  if (typeof msg.error === "string") q.reject(new Error(msg.error));
  else q.resolve(msg.result);
}

// Sends a call's one final message, unless it already has one (an exception charged to a
// call in flight ends it; its `execute` may still settle later).
function finish(id, msg) {
  if (!calls.delete(id)) return;
  traces.delete(id);
  rejectQuestions(id, "the call has ended");
  questions.delete(id);
  // The latest update still goes out, before the result.
  if (unsent.has(id)) send(updateMsg(id, unsent.get(id)));
  unsent.delete(id);
  send(msg);
}

// An exception no `await` catches (thrown from a timer or an event handler) is charged to
// the call whose context threw it, if that call is still in flight; otherwise (a timer
// that fires after `execute` returned) it is logged and charged to no call. Either way the
// worker and the other calls on it carry on.
process.on("uncaughtException", (err) => {
  const id = owner.getStore();
  const stack = err instanceof Error && err.stack ? err.stack : describe(err);
  if (id !== undefined && calls.has(id)) {
    process.stderr.write(`${stack}\n`);
    calls.get(id)?.abort(new Error("the call failed"));
    finish(id, { type: "error", id, message: describe(err) });
  } else {
    process.stderr.write(`uncaught exception in ${entryName} outside any call in flight (not charged to a call): ${stack}\n`);
  }
});

// Progress never queues up in memory: while the socket is congested (the runtime reads
// slower than the tool reports), each call keeps only its latest update, sent when the
// socket drains. A result or error supersedes its call's unsent update.
const unsent = new Map();
sock.on("drain", () => {
  for (const [id, partial] of unsent) {
    unsent.delete(id);
    if (calls.has(id)) send(updateMsg(id, partial));
    if (sock.writableNeedDrain) break;
  }
});

function update(id, partial) {
  if (!calls.has(id)) return;
  if (sock.writableNeedDrain) unsent.set(id, partial ?? null);
  else send(updateMsg(id, partial ?? null));
}

async function run(msg) {
  const controller = new AbortController();
  calls.set(msg.id, controller);
  // Kept as sent (the runtime writes only the two strings); copied when read.
  if (msg.trace) traces.set(msg.id, msg.trace);
  const onUpdate = (partial) => update(msg.id, partial);
  const ctx = makeCtx(msg.id, controller.signal);
  try {
    const result = await owner.run(msg.id, () =>
      execute(msg.toolCallId, msg.params ?? {}, controller.signal, onUpdate, ctx));
    const { body, cut } = capText(result ?? null);
    const sent = await pieces(msg.id, body);
    finish(msg.id, cut ? { type: "result", id: msg.id, result: sent, cut } : { type: "result", id: msg.id, result: sent });
  } catch (err) {
    if (err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
    finish(msg.id, { type: "error", id: msg.id, message: describe(err) });
  }
}

// A base64 string longer than this (an image's or audio's `data`, a resource's `blob`)
// goes ahead of its result in `data` pieces of this many characters, each line well inside
// the line limit even if every character were escaped; the result names it {"ref": n}.
// The socket is drained between pieces: a 200 MB image is never queued whole twice.
const PIECE = Math.max(64, Math.min(1 << 20, Math.floor((maxLine - 256) / 6)));
const isLong = (v) => typeof v === "string" && v.length > PIECE;

async function pieces(id, value) {
  if (!value || !Array.isArray(value.content)) return value;
  let refs = 0;
  const ahead = async (text) => {
    const ref = refs++;
    for (let i = 0; i < text.length && calls.has(id); i += PIECE) {
      const piece = { type: "data", id, ref, data: text.slice(i, i + PIECE) };
      if (i === 0) piece.size = text.length;
      send(piece);
      if (sock.writableNeedDrain) await new Promise((resolve) => sock.once("drain", resolve));
    }
    return { ref };
  };
  const content = [];
  // Copies: a warm tool returning cached state must not see it changed.
  for (const block of value.content) {
    if ((block?.type === "image" || block?.type === "audio") && isLong(block.data)) {
      content.push({ ...block, data: await ahead(block.data) });
    } else if (block?.type === "resource" && isLong(block.resource?.blob)) {
      content.push({ ...block, resource: { ...block.resource, blob: await ahead(block.resource.blob) } });
    } else {
      content.push(block);
    }
  }
  return refs ? { ...value, content } : value;
}

// The Pi tool API's `prepareArguments(args)`: reshapes a model's raw arguments (old argument
// shapes) before the runtime validates them. Without it the arguments come back as they are.
async function prepare(msg) {
  try {
    const args = typeof prepareArguments === "function"
      ? await owner.run(msg.id, () => prepareArguments(msg.args))
      : msg.args;
    send({ type: "prepared", id: msg.id, args: args === undefined ? null : args });
  } catch (err) {
    if (err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
    send({ type: "error", id: msg.id, message: `prepareArguments failed: ${describe(err)}` });
  }
}

let buffered = "";
sock.setEncoding("utf8");
sock.on("data", (chunk) => {
  buffered += chunk;
  let nl;
  while ((nl = buffered.indexOf("\n")) >= 0) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    if (!line) continue;
    const msg = JSON.parse(line);
    if (msg.type === "call") run(msg);
    else if (msg.type === "prepare") prepare(msg);
    else if (msg.type === "answer") answer(msg);
    else if (msg.type === "abort") {
      rejectQuestions(msg.id, "the call was cancelled");
      calls.get(msg.id)?.abort(new Error("the call was cancelled"));
    }
  }
});
// The runtime is gone (or done with this worker): take the whole process group down.
const bye = () => {
  try {
    process.kill(0, "SIGKILL");
  } finally {
    process.exit(0);
  }
};
sock.on("end", bye);
sock.on("error", bye);
