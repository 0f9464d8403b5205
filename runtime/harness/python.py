# toolbind Python harness. Usage: python3 python.py <index.py> <maxTextBytes>
#
# Loads the tool's module once, says hello, then serves JSON-lines calls on fd 3 (a
# socket); runtime/src/exec/protocol.rs describes every message:
#   first: {"type":"hello","protocol":4,"capabilities":{"prepare":<defines prepare_arguments>}}
#          (or a fatal, when the module cannot load)
#   in:  {"type":"call","id","toolCallId","params","trace"?} | {"type":"abort","id"}
#        | {"type":"prepare","id","args"} (the Pi tool API's prepareArguments: answered with
#          {"type":"prepared","id","args"} or an error)
#        | {"type":"answer","id","ask","result"|"error"} (to a question of the call's ctx)
#   out: {"type":"update","id","content"} | {"type":"result","id","result"}
#        | {"type":"error","id","message"} | {"type":"fatal","message"}
#        | {"type":"ask","id","ask","kind","params","key"?} | {"type":"notify","id","level","text"}
#        | {"type":"waiting","id"} (it asked, and awaits an answer)
# The runtime joins fd 1 to fd 2, so print() cannot reach the protocol.
#
# execute(tool_call_id, params, signal, on_update) may be a plain or an `async def`
# function. Plain functions run on their own thread, coroutines on one shared event loop
# thread. `signal.aborted` tells whether the call was cancelled; `signal.wait(timeout)`
# blocks until it is (or the timeout passes) and `await signal.wait_async()` awaits it.
# Returning a str is shorthand for one text block. An exception becomes an error result
# with its message; the traceback goes to stderr.
#
# execute(tool_call_id, params, signal, on_update, ctx): an execute that takes a fifth
# argument gets `ctx`, to ask the agent during the call: ctx.confirm(message),
# ctx.elicit(message, schema), ctx.sample({"messages": [...], ...}), ctx.roots() return an
# answer to `await` (async execute) or to `.result()` (plain execute); ctx.notify(text,
# level="info") sends a log message. At most 8 questions open at once; the call's abort
# fails what is still open.
#
# A call's W3C trace context (when the runtime exports traces) is what
# `toolbind_trace.carrier()` returns while that call's code runs: a dict with `traceparent`
# (and `tracestate`), empty otherwise; OpenTelemetry's
# `TraceContextTextMapPropagator().extract(toolbind_trace.carrier())` continues the trace.
import contextvars
import inspect
import json
import os
import signal as _signal
import sys
import threading
import types

# The protocol socket arrives on fd 3. Move it to a descriptor of the harness's own that
# is close-on-exec (os.dup makes non-inheritable descriptors, PEP 446) and close fd 3, so a
# tool's child process (`os.system("echo 40% >&3")`) can neither write into the protocol
# nor keep it open after the harness dies.
PROTO = os.dup(3)
os.close(3)
_write_lock = threading.Lock()
_entry = sys.argv[1]
_max_text = int(sys.argv[2]) if len(sys.argv) > 2 else 4 * 1024 * 1024
_max_line = int(sys.argv[3]) if len(sys.argv) > 3 else 16 * 1024 * 1024
_entry_name = os.path.basename(_entry)


def _send(msg):
    _write(_encode(msg))


def _encode(msg):
    """A message's line, as bytes: within the line limit, and an error instead of a value
    JSON cannot hold."""
    try:
        # allow_nan=False: NaN and Infinity have no JSON form; the runtime would reject the
        # whole line. They become this call's error instead.
        data = json.dumps(msg, ensure_ascii=False, default=_not_json, allow_nan=False)
    except Exception as e:  # noqa: BLE001
        data = json.dumps({"type": "error", "id": msg.get("id"),
                           "message": "the tool's %s is not JSON-serialisable: %s" % (msg.get("type"), e)})
    buf = (data + "\n").encode("utf-8", "replace")
    if len(buf) > _max_line - 1024:
        # _cap bounds characters; escaping and `details` can still overflow the line limit.
        buf = (json.dumps(_shrink(msg, len(buf)), ensure_ascii=False) + "\n").encode("utf-8", "replace")
    return buf


def _write(buf):
    with _write_lock:
        while buf:
            n = os.write(PROTO, buf)
            buf = buf[n:]


def _shrink(msg, size):
    kind = msg.get("type")
    body = msg.get("content") if kind == "update" else msg.get("result") if kind == "result" else None
    blocks = body.get("content", []) if isinstance(body, dict) else []
    texts = [b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)]
    room = (_max_line - 4096) // 12  # even if every character became a \u escape
    # The runtime writes the note from `cut` (protocol 3).
    cut = {"kind": "message", "message": kind, "bytes": size, "limit": _max_line, "kept": room}
    content = [{"type": "text", "text": "\n".join(texts)[:room]}]
    if kind == "update":
        return {"type": "update", "id": msg.get("id"), "content": {"content": content}, "cut": cut}
    if kind == "result":
        return {"type": "result", "id": msg.get("id"), "cut": cut,
                "result": {"content": content, "isError": bool(isinstance(body, dict) and body.get("isError"))}}
    if kind == "prepared":
        return {"type": "error", "id": msg.get("id"),
                "message": "prepare_arguments returned %d bytes of JSON, over the %d-byte protocol limit"
                % (size, _max_line)}
    return {"type": "error", "id": msg.get("id"), "message": str(msg.get("message", ""))[:room]}


def _not_json(value):
    raise TypeError("%s is not JSON-serialisable" % type(value).__name__)


def _fatal(message):
    try:
        _send({"type": "fatal", "message": message})
    finally:
        os._exit(70)


class AbortSignal:
    """Cancellation of one call: `.aborted`, `.wait(timeout)`, `await .wait_async()`."""

    def __init__(self):
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks = []
        self.reason = None

    @property
    def aborted(self):
        return self._event.is_set()

    def wait(self, timeout=None):
        """Blocks until the call is cancelled or `timeout` seconds pass; returns `aborted`."""
        return self._event.wait(timeout)

    async def wait_async(self):
        """Resolves once the call is cancelled."""
        import asyncio
        loop = asyncio.get_running_loop()
        fut = loop.create_future()

        def wake():
            loop.call_soon_threadsafe(lambda: fut.done() or fut.set_result(True))

        self.add_listener(wake)
        await fut

    def add_listener(self, callback):
        """Calls `callback()` once when the call is cancelled (now, if it already is)."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return
        callback()

    def throw_if_aborted(self):
        if self._event.is_set():
            raise RuntimeError("the call was cancelled")

    def _abort(self):
        # The lock pairs with add_listener: a listener added while the abort lands is
        # either in the list below or sees the event set, never neither.
        with self._lock:
            if self._event.is_set():
                return
            self.reason = "cancelled"
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            try:
                cb()
            except Exception:  # noqa: BLE001
                pass


def _cap(value):
    """Bounds the text of an update or result: _max_text characters in all (one budget for
    every text block). Returns the bounded body and, when text was cut, `cut` saying how
    much: the runtime writes the note (protocol 3), so no text a tool returns can pass for
    one. Works on a copy: a warm tool returning cached state must not see its own data cut."""
    if isinstance(value, str):
        value = {"content": [{"type": "text", "text": value}]}
    if not (isinstance(value, dict) and isinstance(value.get("content"), list)):
        return value, None
    left, cut, content = _max_text, 0, []
    for block in value["content"]:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            text = block["text"]
            if len(text) > left:
                cut += len(text) - left
                block = dict(block, text=text[:left])
                left = 0
            else:
                left -= len(text)
        content.append(block)
    return dict(value, content=content), ({"kind": "chars", "cut": cut, "limit": _max_text} if cut else None)


def _capped(kind, call_id, value):
    """An update or result message, its text bounded."""
    body, cut = _cap(value)
    if kind == "update":
        msg = {"type": "update", "id": call_id, "content": body}
    else:
        msg = {"type": "result", "id": call_id, "result": _pieces(call_id, body)}
    if cut:
        msg["cut"] = cut
    return msg


def _describe(exc):
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - an exception whose __str__ fails is named by its type
        text = ""
    if type(exc) in (Exception, RuntimeError) and text:
        return text
    return "%s: %s" % (type(exc).__name__, text) if text else type(exc).__name__


def _load():
    sys.path.insert(0, os.path.dirname(os.path.abspath(_entry)))
    mod = types.ModuleType("tool_index")
    mod.__file__ = _entry
    sys.modules["tool_index"] = mod
    try:
        with open(_entry, "rb") as f:
            code = compile(f.read(), _entry, "exec")
        exec(code, mod.__dict__)
    except SystemExit as e:
        _fatal("%s called sys.exit(%s) while loading" % (_entry_name, e.code))
    except BaseException as e:  # noqa: BLE001
        import traceback
        traceback.print_exc()
        sys.stderr.flush()
        detail = "".join(traceback.format_exception_only(type(e), e)).strip()
        _fatal("failed to load %s: %s" % (_entry_name, detail))
    global _module
    _module = mod
    fn = getattr(mod, "execute", None)
    if not callable(fn):
        names = ", ".join(n for n in vars(mod) if not n.startswith("_")) or "nothing"
        _fatal("%s does not define an execute function (it defines: %s); expected "
               "`def execute(tool_call_id, params, signal, on_update)`" % (_entry_name, names))
    return fn


# The call the running code belongs to (set around `execute`; coroutines and the tasks
# they create inherit it), and each call in flight's trace context.
_current_call = contextvars.ContextVar("toolbind_call", default=None)
_traces = {}


def _carrier():
    """The W3C trace context of the call this code runs for: {"traceparent", "tracestate"?},
    or {} when the runtime exports no traces (or outside a call)."""
    t = _traces.get(_current_call.get())
    if not isinstance(t, dict):
        return {}
    return {k: v for k, v in t.items() if k in ("traceparent", "tracestate") and isinstance(v, str)}


_trace_module = types.ModuleType("toolbind_trace")
_trace_module.carrier = _carrier
sys.modules.setdefault("toolbind_trace", _trace_module)

_module = None
_execute = _load()
_is_async = inspect.iscoroutinefunction(inspect.unwrap(_execute)) or inspect.iscoroutinefunction(
    getattr(_execute, "__call__", None))
_calls = {}
_loop = None


def _takes_ctx(fn):
    """Whether `execute` takes a fifth argument (`ctx`): a seed-format tool's four-argument
    execute is called as before."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return True
    return len([p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]) >= 5


_with_ctx = _takes_ctx(_execute)
# Each call's open questions: {call id: {question number: Future}}.
_questions = {}
_questions_lock = threading.Lock()
MAX_QUESTIONS = 8


class Answer:
    """The answer to a question of `ctx`: `await` it in an async execute, or call
    `.result(timeout=None)` in a plain one. Fails with RuntimeError saying why when the
    agent refuses, does not answer in time, or the call is cancelled."""

    def __init__(self, future, waiting=None):
        self._future = future
        self._waiting = waiting

    def result(self, timeout=None):
        # A plain execute blocks here: the runtime hears that the tool waits.
        if not self._future.done() and self._waiting is not None:
            self._waiting()
        return self._future.result(timeout)

    def __await__(self):
        import asyncio
        return asyncio.wrap_future(self._future).__await__()


class Ctx:
    """`execute`'s fifth argument: questions to the agent during one call."""

    def __init__(self, call_id):
        self._id = call_id
        self._next = 0
        # How many questions had been asked at the last `waiting`: one per burst of them
        # (a tool polling .result(timeout) must not flood the runtime).
        self._waited = 0

    def _ask(self, kind, params, key=None):
        import concurrent.futures
        fut = concurrent.futures.Future()
        with _questions_lock:
            open_ = _questions.get(self._id)
            sig = _calls.get(self._id)
            if open_ is None or sig is None:
                fut.set_exception(RuntimeError("ctx.%s: the call has ended" % kind))
                return Answer(fut)
            if sig.aborted:
                fut.set_exception(RuntimeError("ctx.%s: the call was cancelled" % kind))
                return Answer(fut)
            if len(open_) >= MAX_QUESTIONS:
                fut.set_exception(RuntimeError(
                    "ctx.%s: at most %d questions may be open at once" % (kind, MAX_QUESTIONS)))
                return Answer(fut)
            n = self._next
            self._next += 1
            open_[n] = fut
        msg = {"type": "ask", "id": self._id, "ask": n, "kind": kind, "params": params}
        if key is not None:
            # The question's name (MCP 2026-07-28 clients see it as its inputRequests key).
            msg["key"] = str(key)
        _send(msg)
        # An async execute: once the event loop has run what is ready (the other
        # questions of an asyncio.gather), the tool awaits; a plain one: when it blocks
        # in .result().
        try:
            import asyncio
            asyncio.get_running_loop().call_soon(self._waiting)
        except RuntimeError:
            pass
        return Answer(fut, self._waiting)

    def _waiting(self):
        with _questions_lock:
            open_ = _questions.get(self._id)
            if not open_ or self._id not in _calls or self._waited == self._next:
                return
            self._waited = self._next
        _send({"type": "waiting", "id": self._id})

    def confirm(self, message, key=None):
        return self._ask("confirm", {"message": str(message)}, key)

    def elicit(self, message, schema, key=None):
        return self._ask("elicit", {"message": str(message), "schema": schema}, key)

    def sample(self, params, key=None):
        return self._ask("sample", params if isinstance(params, dict) else {}, key)

    def roots(self, key=None):
        return self._ask("roots", {}, key)

    def notify(self, text, level="info"):
        if self._id in _calls:
            _send({"type": "notify", "id": self._id, "level": str(level), "text": str(text)})


def _answer(msg):
    with _questions_lock:
        fut = _questions.get(msg.get("id"), {}).pop(msg.get("ask"), None)
    if fut is None:
        return
    import concurrent.futures
    try:
        if isinstance(msg.get("error"), str):
            fut.set_exception(RuntimeError(msg["error"]))
        else:
            fut.set_result(msg.get("result"))
    except concurrent.futures.InvalidStateError:
        pass  # cancelled meanwhile (an awaiting task was cancelled): nobody waits for it


def _fail_questions(call_id, why, forget=False):
    with _questions_lock:
        open_ = _questions.pop(call_id, {}) if forget else _questions.get(call_id, {})
        futs = list(open_.values())
        open_.clear()
    import concurrent.futures
    for fut in futs:
        try:
            fut.set_exception(RuntimeError(why))
        except concurrent.futures.InvalidStateError:
            pass

# The first message: the protocol version this harness speaks and what the module offers
# (the runtime sends `prepare` lines only when it defines prepare_arguments). Sent before
# the socket is read, so it precedes every answer.
PROTOCOL_VERSION = 4
try:
    _send({"type": "hello", "protocol": PROTOCOL_VERSION,
           "capabilities": {"prepare": callable(getattr(_module, "prepare_arguments", None))}})
except OSError:
    pass  # the runtime is gone: _serve reads end-of-stream and takes the group down


def _event_loop():
    global _loop
    if _loop is None:
        import asyncio
        _loop = asyncio.new_event_loop()
        threading.Thread(target=_loop.run_forever, daemon=True).start()
    return _loop


# Plain execute functions run on pooled threads: a call reuses an idle thread instead of
# paying for a new one, and calls never wait for each other.
_pool_lock = threading.Lock()
_idle = 0
_jobs = None


def _submit(job):
    global _idle, _jobs
    with _pool_lock:
        if _jobs is None:
            from _queue import SimpleQueue
            _jobs = SimpleQueue()
        if _idle > 0:
            _idle -= 1
            _jobs.put(job)
            return
    threading.Thread(target=_pool_thread, args=(job,), daemon=True).start()


def _pool_thread(job):
    global _idle
    while True:
        # A job returns its answer's line, made but not sent. The thread counts as idle
        # before it goes out: the runtime's next message can arrive as soon as it has the
        # answer, and must find this thread idle, not start another one. Only the write is
        # left by then, so a call given to this thread waits for no more than that.
        try:
            line = job()
        except BaseException:  # noqa: BLE001 - a bug of ours: the thread lives on
            import traceback
            traceback.print_exc()
            line = None
        with _pool_lock:
            _idle += 1
        if line is not None:
            try:
                _write(line)
            except OSError:
                pass  # the runtime is gone: the main thread sees the end and kills the group
        job = _jobs.get()


# A base64 string longer than this (an image's or audio's `data`, a resource's `blob`)
# goes ahead of its result in `data` pieces of this many characters, each line well inside
# the line limit even if every character were escaped; the result names it {"ref": n}.
_PIECE = max(64, min(1 << 20, (_max_line - 256) // 6))


def _long(v):
    return isinstance(v, str) and len(v) > _PIECE


def _pieces(call_id, value):
    if not isinstance(value, dict) or not isinstance(value.get("content"), list):
        return value
    refs = [0]

    def ahead(text):
        n = refs[0]
        refs[0] += 1
        for i in range(0, len(text), _PIECE):
            if call_id not in _calls:
                break
            piece = {"type": "data", "id": call_id, "ref": n, "data": text[i:i + _PIECE]}
            if i == 0:
                piece["size"] = len(text)
            _send(piece)
        return {"ref": n}

    content = []
    for block in value["content"]:
        # Copies: a warm tool returning cached state must not see it changed.
        if isinstance(block, dict) and block.get("type") in ("image", "audio") and _long(block.get("data")):
            block = dict(block, data=ahead(block["data"]))
        elif (isinstance(block, dict) and block.get("type") == "resource"
              and isinstance(block.get("resource"), dict) and _long(block["resource"].get("blob"))):
            block = dict(block, resource=dict(block["resource"], blob=ahead(block["resource"]["blob"])))
        content.append(block)
    return dict(value, content=content) if refs[0] else value


def _finish(call_id, value=None, exc=None):
    line = _result_line(call_id, value, exc)
    if line is not None:
        _write(line)


def _result_line(call_id, value=None, exc=None):
    """A call's end: the line of its result (its `data` pieces sent ahead) or of its error,
    or None when the call was aborted meanwhile. Forgets the call."""
    _traces.pop(call_id, None)
    # Only an execute that takes `ctx` can have questions open: the others skip the lock
    # and the import, a tenth of a warm call's CPU in the harness (issue 58).
    if _with_ctx:
        _fail_questions(call_id, "the call has ended", forget=True)
    if exc is None:
        if call_id not in _calls:
            return None
        msg = _capped("result", call_id, value)
        _calls.pop(call_id, None)
        return _encode(msg)
    _calls.pop(call_id, None)
    if isinstance(exc, SystemExit):
        sys.stdout.flush()
        sys.stderr.write("%s: execute() called sys.exit(%s)\n" % (_entry_name, exc.code))
        sys.stderr.flush()
        os._exit(exc.code if isinstance(exc.code, int) else 1)
    import traceback
    traceback.print_exception(type(exc), exc, exc.__traceback__)
    sys.stderr.flush()
    return _encode({"type": "error", "id": call_id, "message": _describe(exc)})


def _await(call_id, awaitable):
    import asyncio

    async def wrap():
        _current_call.set(call_id)
        return await awaitable

    fut = asyncio.run_coroutine_threadsafe(wrap(), _event_loop())

    def done(f):
        try:
            _finish(call_id, f.result())
        except BaseException as e:  # noqa: BLE001
            _finish(call_id, exc=e)

    fut.add_done_callback(done)


def _start(msg):
    call_id = msg["id"]
    sig = AbortSignal()
    _calls[call_id] = sig

    def on_update(partial=None):
        if call_id in _calls:
            if isinstance(partial, str):
                partial = {"content": [{"type": "text", "text": partial}]}
            _send(_capped("update", call_id, partial))

    args = (msg.get("toolCallId", ""), msg.get("params") or {}, sig, on_update)
    if _with_ctx:
        with _questions_lock:
            _questions[call_id] = {}
        args = args + (Ctx(call_id),)
    trace = msg.get("trace")
    if trace is not None:
        # Kept as sent (the runtime writes only the two strings); copied when read.
        _traces[call_id] = trace
    if _is_async:
        token = _current_call.set(call_id)
        try:
            coro = _execute(*args)
        except BaseException as e:  # noqa: BLE001
            _finish(call_id, exc=e)
            return
        finally:
            _current_call.reset(token)
        _await(call_id, coro)
    else:
        def run():
            token = _current_call.set(call_id)
            try:
                value = _execute(*args)
            except BaseException as e:  # noqa: BLE001
                return _result_line(call_id, exc=e)
            finally:
                _current_call.reset(token)
            if inspect.isawaitable(value):
                # A decorated or partial `execute`, or an object with `async def __call__`:
                # what it returned still has to run on the event loop.
                _await(call_id, value)
                return None
            try:
                sys.stdout.flush()
            except Exception:  # noqa: BLE001
                pass
            return _result_line(call_id, value)

        _submit(run)


def _prepare(msg):
    """The Pi tool API's `prepareArguments`: the module's `prepare_arguments(args)` reshapes a
    model's raw arguments (old argument shapes) before the runtime validates them."""
    call_id = msg.get("id")
    args = msg.get("args")
    fn = getattr(_module, "prepare_arguments", None)
    if not callable(fn):
        _send({"type": "prepared", "id": call_id, "args": args})
        return

    def run():
        import asyncio
        try:
            value = fn(args)
            if inspect.isawaitable(value):
                async def wrap():
                    return await value
                value = asyncio.run_coroutine_threadsafe(wrap(), _event_loop()).result()
        except BaseException as e:  # noqa: BLE001
            import traceback
            traceback.print_exception(type(e), e, e.__traceback__)
            sys.stderr.flush()
            return _encode({"type": "error", "id": call_id, "message": "prepare_arguments failed: " + _describe(e)})
        return _encode({"type": "prepared", "id": call_id, "args": value})

    _submit(run)


def _serve():
    buf = b""
    while True:
        try:
            chunk = os.read(PROTO, 65536)
        except InterruptedError:
            continue
        except OSError:
            chunk = b""
        if not chunk:
            break
        buf += chunk
        while True:
            nl = buf.find(b"\n")
            if nl < 0:
                break
            line, buf = buf[:nl], buf[nl + 1:]
            if not line:
                continue
            msg = json.loads(line)
            kind = msg.get("type")
            if kind == "call":
                _start(msg)
            elif kind == "prepare":
                _prepare(msg)
            elif kind == "answer":
                _answer(msg)
            elif kind == "abort":
                _fail_questions(msg.get("id"), "the call was cancelled")
                sig = _calls.get(msg.get("id"))
                if sig is not None:
                    sig._abort()
    # The runtime is gone (or done with this worker): take the whole process group down.
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os.killpg(0, _signal.SIGKILL)


_serve()
