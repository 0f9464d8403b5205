"""email_db: search a SQLite email database, read-only.

The database path comes from EMAIL_DB_PATH. Every value from the model reaches SQLite
as a bound parameter; LIKE wildcards in it are escaped, so it is always matched
literally.
"""

import os
import pathlib
import sqlite3
from datetime import date, datetime, timedelta, timezone

ENV_VAR = "EMAIL_DB_PATH"
DEFAULT_LIMIT = 20
MAX_LIMIT = 200
SNIPPET_CHARS = 240
REQUIRED_COLUMNS = ("id", "thread_id", "sender", "recipients", "subject", "body", "date", "labels")


class EmailDbError(Exception):
    """A problem the agent can fix (bad parameter) or should report (missing database)."""


def execute(tool_call_id, params, signal, on_update):
    params = params or {}
    _progress(on_update, "Opening email database...")
    path = _db_path()

    limit = _limit(params.get("limit"))
    include_body = _bool(params.get("include_body"), "include_body")
    where, args, filters = _filters(params)

    _check_cancelled(signal)
    conn = _connect(path)
    try:
        _check_schema(conn, path)
        _progress(on_update, "Searching messages" + (f" ({', '.join(filters)})" if filters else "") + "...")
        where_sql = f"WHERE {' AND '.join(where)}" if where else ""
        total = conn.execute(f"SELECT COUNT(*) FROM messages {where_sql}", args).fetchone()[0]
        _check_cancelled(signal)
        rows = conn.execute(
            "SELECT id, thread_id, sender, recipients, subject, date, labels, body FROM messages "
            f"{where_sql} ORDER BY julianday(date) DESC, id DESC LIMIT ?",
            [*args, limit],
        ).fetchall()
    except sqlite3.DatabaseError as err:
        raise EmailDbError(f"could not query {path}: {err}") from None
    finally:
        conn.close()

    messages = [_message(row, include_body) for row in rows]
    text = _render(messages, total, limit, filters, include_body)
    return {
        "content": [{"type": "text", "text": text}],
        "details": {"total": total, "returned": len(messages), "limit": limit, "filters": filters, "messages": messages},
    }


# ---- parameters -----------------------------------------------------------------------


def _filters(params):
    where, args, described = [], [], []

    query = _text(params.get("query"), "query")
    if query:
        # Every word must appear in the subject or the body (case-insensitive for ASCII).
        for term in query.split():
            where.append("(subject LIKE ? ESCAPE '\\' OR body LIKE ? ESCAPE '\\')")
            args += [_like(term), _like(term)]
        described.append(f"query={query!r}")

    sender = _text(params.get("sender"), "sender")
    if sender:
        where.append("sender LIKE ? ESCAPE '\\'")
        args.append(_like(sender))
        described.append(f"sender={sender!r}")

    recipient = _text(params.get("recipient"), "recipient")
    if recipient:
        where.append("recipients LIKE ? ESCAPE '\\'")
        args.append(_like(recipient))
        described.append(f"recipient={recipient!r}")

    label = _text(params.get("label"), "label")
    if label:
        where.append("(',' || REPLACE(LOWER(labels), ' ', '') || ',') LIKE ? ESCAPE '\\'")
        args.append("%," + _escape_like(label.lower().replace(" ", "")) + ",%")
        described.append(f"label={label!r}")

    thread_id = _text(params.get("thread_id"), "thread_id")
    if thread_id:
        where.append("thread_id = ?")
        args.append(thread_id)
        described.append(f"thread_id={thread_id!r}")

    since = _text(params.get("since"), "since")
    if since:
        where.append("julianday(date) >= julianday(?)")
        args.append(_iso(_parse_date(since, "since", end_of_day=False)))
        described.append(f"since={since}")

    until = _text(params.get("until"), "until")
    if until:
        # A bare date is an exclusive bound at the next midnight; a date-time is inclusive.
        where.append("julianday(date) < julianday(?)" if len(until) == 10 else "julianday(date) <= julianday(?)")
        args.append(_iso(_parse_date(until, "until", end_of_day=True)))
        described.append(f"until={until}")

    if since and until and _parse_date(since, "since", False) > _parse_date(until, "until", True):
        raise EmailDbError(f"since ({since}) is after until ({until})")

    return where, args, described


def _text(value, name):
    if value is None:
        return ""
    if not isinstance(value, str):
        raise EmailDbError(f"{name} must be a string, got {type(value).__name__}")
    return value.strip()


def _bool(value, name):
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise EmailDbError(f"{name} must be true or false, got {value!r}")


def _limit(value):
    if value is None:
        return DEFAULT_LIMIT
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise EmailDbError(f"limit must be a number, got {value!r}") from None
    if number != number or number < 1 or number != int(number):
        raise EmailDbError(f"limit must be a whole number of at least 1, got {value!r}")
    return min(int(number), MAX_LIMIT)


def _escape_like(text):
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _like(text):
    return f"%{_escape_like(text)}%"


def _parse_date(text, name, end_of_day):
    """An ISO date or date-time as an aware UTC datetime.

    A bare date means the start of that day for `since` and the start of the next day
    for `until` (used as an exclusive bound), so since=2024-03-01 until=2024-03-31 covers
    all of March. A date-time without an offset is taken as UTC.
    """
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            moment = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
            return moment + timedelta(days=1) if end_of_day else moment
        moment = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        raise EmailDbError(
            f"{name} must be an ISO 8601 date (2024-03-15) or date-time (2024-03-15T09:30:00Z), got {text!r}"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def _iso(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


# ---- database -----------------------------------------------------------------------------


def _db_path():
    raw = os.environ.get(ENV_VAR, "").strip()
    if not raw:
        raise EmailDbError(
            f"{ENV_VAR} is not set: point it at the SQLite email database "
            "(for a demo database run: python3 make_sample_db.py /tmp/emails.db)"
        )
    path = pathlib.Path(raw).expanduser()
    if not path.exists():
        raise EmailDbError(f"email database not found: {ENV_VAR}={raw} does not exist")
    if not path.is_file():
        raise EmailDbError(f"email database path is not a file: {ENV_VAR}={raw}")
    return path.resolve()


def _connect(path):
    # mode=ro: SQLite itself refuses writes; query_only also blocks them on this connection.
    uri = path.as_uri() + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=5)
        conn.execute("PRAGMA query_only = ON")
    except sqlite3.Error as err:
        raise EmailDbError(f"could not open email database {path}: {err}") from None
    return conn


def _check_schema(conn, path):
    try:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(messages)")}
    except sqlite3.DatabaseError as err:
        raise EmailDbError(f"{path} is not a readable SQLite database: {err}") from None
    if not columns:
        raise EmailDbError(f"{path} has no 'messages' table; is EMAIL_DB_PATH pointing at the email database?")
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        raise EmailDbError(f"the messages table in {path} lacks column(s): {', '.join(missing)}")


# ---- output ----------------------------------------------------------------------------------


def _message(row, include_body):
    msg_id, thread_id, sender, recipients, subject, when, labels, body = row
    message = {
        "id": msg_id,
        "thread_id": thread_id,
        "date": when,
        "sender": sender,
        "recipients": recipients,
        "subject": subject,
        "labels": [l.strip() for l in (labels or "").split(",") if l.strip()],
    }
    body = body or ""
    if include_body:
        message["body"] = body
    else:
        flat = " ".join(body.split())
        message["snippet"] = flat if len(flat) <= SNIPPET_CHARS else flat[:SNIPPET_CHARS].rstrip() + "..."
    return message


def _render(messages, total, limit, filters, include_body):
    scope = f" matching {', '.join(filters)}" if filters else ""
    if total == 0:
        return f"No messages{scope}."
    shown = f"showing the {len(messages)} most recent" if total > len(messages) else "showing all"
    lines = [f"{total} message(s){scope}; {shown}, newest first."]
    if total > len(messages):
        lines.append(f"(Narrow the search or raise limit, currently {limit}, to see more.)")
    for m in messages:
        lines.append("")
        lines.append(f"[{m['id']}] {m['date']}  thread {m['thread_id']}  labels: {', '.join(m['labels']) or '-'}")
        lines.append(f"From: {m['sender']}")
        lines.append(f"To: {m['recipients']}")
        lines.append(f"Subject: {m['subject']}")
        if include_body:
            lines.append("")
            lines.extend(m["body"].splitlines() or [""])
            lines.append("-" * 40)
        else:
            lines.append(f"> {m['snippet']}")
    return "\n".join(lines)


# ---- runtime plumbing -------------------------------------------------------------------------


def _progress(on_update, text):
    if on_update is not None:
        on_update({"content": [{"type": "text", "text": text}]})


def _check_cancelled(signal):
    aborted = getattr(signal, "aborted", None)
    if callable(aborted):
        aborted = aborted()
    if aborted is None and hasattr(signal, "is_set"):
        aborted = signal.is_set()
    if aborted:
        raise EmailDbError("email search cancelled")
