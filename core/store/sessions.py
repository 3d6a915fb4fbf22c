"""Reading sessions back: their messages for rendering, the list `playbook sessions` shows, and what the rendering
took out of them. Which sessions a playbook still has to handle is the ledger's (`core.store.ledger`)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from operator import itemgetter

import duckdb
from pydantic import BaseModel

from core.models import SessionMessage
from core.store.db import fetch_rows

__all__ = [
    "MOST_PARTS",
    "SAME_PART",
    "SessionFiles",
    "SessionRow",
    "list_sessions",
    "load_messages",
    "load_messages_of",
    "project_names",
    "record_redactions",
    "session_label",
    "sessions_in_order",
    "sessions_with_errors",
]


# SQL: which stored parts are one part of a session, whichever file or record holds them. A part with a key is its
# key's (what it is, whichever record carries it: a copy in another file, a replay in the same one); one stored
# before parts had keys is its record's (`uuid`) at its position; one without either, its file's line at its
# position.
SAME_PART = "coalesce(part_key, record_id || ':' || part, source_path || ':' || seq || ':' || part)"


def load_messages(
    con: duckdb.DuckDBPyConnection, session_id: str, *, after: datetime | None = None
) -> list[SessionMessage]:
    """Every message part of a session once: the main thread first, then subagents, in time and record order.

    `after`: only the parts written after this time (the new part of a session that grew since it was
    applied).
    """
    # A part copied into several files (a renamed copy, a session resumed into a second file) is read once.
    cur = con.execute(
        "SELECT seq, part, role, kind, text, tool_name, tool_input, tool_use_id, is_error, is_meta, is_prompt,"
        " is_sidechain FROM messages WHERE session_id = ? AND (?::TIMESTAMPTZ IS NULL OR ts > ?::TIMESTAMPTZ)"
        f" QUALIFY row_number() OVER (PARTITION BY {SAME_PART} ORDER BY source_path, seq) = 1"
        " ORDER BY is_sidechain, ts NULLS LAST, source_path, seq, part",
        [session_id, after, after],
    )
    names = [d[0] for d in cur.description]
    return [SessionMessage(**dict(zip(names, row, strict=True))) for row in cur.fetchall()]


# A session's parts read for curation, at most: real sessions hold a few thousand (the bundled and labelled ones at
# most 1,250); a crafted file of a million parts would take minutes and gigabytes to read into memory. The first
# ones are read, the rest left in the store.
MOST_PARTS = 50_000


def load_messages_of(
    con: duckdb.DuckDBPyConnection,
    session_ids: Sequence[str],
    *,
    after: Mapping[str, datetime | None] | None = None,
    most: int = MOST_PARTS,
) -> Iterator[tuple[str, list[SessionMessage]]]:
    """`load_messages` of many sessions in one query (a query per session costs ~3 ms of CPU however small the
    session): (session id, its messages) in the order of `session_ids`, a session without messages included.

    `after`: per session, only the parts written after that time (a session missing from it: all of them).
    `most`: a session's first parts read, at most (`MOST_PARTS`).
    """
    if not session_ids:
        return
    after = after or {}
    order = "is_sidechain, ts NULLS LAST, source_path, seq, part"
    cur = con.execute(
        "SELECT i, seq, part, role, kind, text, tool_name, tool_input, tool_use_id, is_error, is_meta, is_prompt,"
        f" is_sidechain FROM (SELECT *, row_number() OVER (PARTITION BY i ORDER BY {order}) AS n FROM ("
        " SELECT w.i, m.* FROM messages m"
        " JOIN (SELECT unnest(?) AS sid, unnest(?)::TIMESTAMPTZ AS after, generate_subscripts(?, 1) AS i) w"
        " ON m.session_id = w.sid WHERE (w.after IS NULL OR m.ts > w.after)"
        f" QUALIFY row_number() OVER (PARTITION BY w.i, {SAME_PART} ORDER BY m.source_path, m.seq) = 1))"
        f" WHERE n <= ? ORDER BY i, {order}",
        [list(session_ids), [after.get(s) for s in session_ids], list(session_ids), most],
    )
    names = [d[0] for d in cur.description][1:]
    rows = iter(cur.fetchall())
    found = {
        int(i): [SessionMessage(**dict(zip(names, row[1:], strict=True))) for row in group]
        for i, group in itertools.groupby(rows, key=itemgetter(0))
    }
    for i, session_id in enumerate(session_ids, start=1):
        yield session_id, found.pop(i, [])


class SessionRow(BaseModel):
    """An ingested session, as `playbook sessions` lists it."""

    session_id: str
    project: str | None
    format: str
    source_path: str | None
    started_at: datetime | None
    ended_at: datetime | None
    n_messages: int
    n_user_prompts: int
    n_tool_calls: int
    n_tool_errors: int
    n_subagents: int | None
    n_subagent_tool_calls: int | None
    n_subagent_tool_errors: int | None
    n_files: int | None
    n_noise_records: int | None
    n_bad_lines: int | None
    n_secrets_redacted: int | None  # masked in its files at ingest, and in what a model was sent
    n_personal_masked: int | None
    git_branch: str | None
    title: str | None
    contributor: str | None


def list_sessions(
    con: duckdb.DuckDBPyConnection, *, project: str | None = None, since: datetime | None = None, limit: int = 1000
) -> list[SessionRow]:
    """Ingested sessions, newest first, optionally of one project and since a date."""
    return fetch_rows(
        con,
        SessionRow,
        "SELECT session_id, project, format, source_path, started_at, ended_at, n_messages, n_user_prompts,"
        " n_tool_calls, n_tool_errors, n_subagents, n_subagent_tool_calls, n_subagent_tool_errors, n_files,"
        " n_noise_records, n_bad_lines,"
        # Secrets are masked twice over: in its files before they are stored, and in what a model is sent.
        " (SELECT coalesce(sum(f.n_secrets), 0) FROM files f WHERE f.session_id = sessions.session_id)"
        " + coalesce(n_secrets_redacted, 0) AS n_secrets_redacted,"
        " n_personal_masked, git_branch, title, contributor"
        " FROM sessions"
        " WHERE (?::VARCHAR IS NULL OR project = ?) AND (?::TIMESTAMPTZ IS NULL OR started_at >= ?::TIMESTAMPTZ)"
        " ORDER BY started_at DESC NULLS LAST LIMIT ?",
        [project, project, since, since, limit],
        trusted=True,
    )


def project_names(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Every project a stored session belongs to."""
    return {r[0] for r in con.execute("SELECT DISTINCT project FROM sessions WHERE project IS NOT NULL").fetchall()}


def session_label(con: duckdb.DuckDBPyConnection, session_id: str) -> str:
    """`id (format, project P, started T)`: how a prompt introduces the session to the model."""
    row = con.execute("SELECT project, started_at, format FROM sessions WHERE session_id = ?", [session_id]).fetchone()
    return f"{session_id} ({row[2]}, project {row[0]}, started {row[1]})" if row else session_id


def record_redactions(con: duckdb.DuckDBPyConnection, counts: Mapping[str, tuple[int, int]]) -> None:
    """How many secrets and personal-data spans each session's rendering took out (session id -> (secrets,
    personal), the latest rendering), in one statement for an epoch's sessions (an UPDATE of the sessions table
    costs ~10 ms however few rows it touches); not in a playbook's shard, which reads the store's sessions and never
    writes them."""
    if not counts:
        return
    shard = con.execute(
        "SELECT count(*) FROM duckdb_views() WHERE view_name = 'sessions' AND database_name = current_database()"
    ).fetchone()
    if shard and shard[0]:
        return
    con.execute(
        "UPDATE sessions SET n_secrets_redacted = c.secrets, n_personal_masked = c.personal"
        " FROM (SELECT unnest(?) AS session_id, unnest(?) AS secrets, unnest(?) AS personal) c"
        " WHERE sessions.session_id = c.session_id",
        [list(counts), [v[0] for v in counts.values()], [v[1] for v in counts.values()]],
    )


def sessions_with_errors(con: duckdb.DuckDBPyConnection, texts: list[str], exclude: str) -> dict[str, int]:
    """For each text, how many sessions other than `exclude` have a tool error containing it."""
    if not texts:
        return {}
    rows = con.execute(
        "SELECT p.t, count(DISTINCT m.session_id) FROM (SELECT unnest(?) AS t) p JOIN messages m"
        " ON m.is_error AND m.kind = 'tool_result' AND m.session_id <> ? AND contains(m.text, p.t) GROUP BY p.t",
        [list(dict.fromkeys(texts)), exclude],
    ).fetchall()
    return {t: int(n) for t, n in rows}


class SessionFiles(BaseModel):
    """A session's place in time and the files it was read from."""

    session_id: str
    project: str | None
    cwd: str | None
    started_at: datetime | None
    paths: list[str]


def sessions_in_order(con: duckdb.DuckDBPyConnection) -> list[SessionFiles]:
    """Every session, oldest first, with the files it was read from."""
    return fetch_rows(
        con,
        SessionFiles,
        "SELECT s.session_id, s.project, s.cwd, s.started_at, list(f.path ORDER BY f.path) AS paths"
        " FROM sessions s JOIN files f ON f.session_id = s.session_id AND f.status IN ('ok', 'shrunk')"
        " GROUP BY ALL ORDER BY s.started_at NULLS FIRST, s.session_id",
    )
