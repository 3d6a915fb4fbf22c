"""The team ledgers: files a developer pushed, objects the nightly job fetched, whose sessions are whose, and
contributors forgotten on request."""

from __future__ import annotations

import duckdb
from pydantic import BaseModel

from core.store.db import transaction
from core.store.session_keys import backfill_keys

__all__ = [
    "Forgotten",
    "fetched",
    "forget_contributor",
    "forgotten_sessions",
    "pushed",
    "record_fetch",
    "record_push",
    "tag_contributors",
]


def pushed(con: duckdb.DuckDBPyConnection, url: str) -> dict[str, tuple[int, float]]:
    """What was pushed to `url`: local path -> (size, mtime) as it was pushed."""
    rows = con.execute("SELECT path, size, mtime FROM pushed_files WHERE url = ?", [url]).fetchall()
    return {str(p): (int(s), float(m)) for p, s, m in rows}


def record_push(
    con: duckdb.DuckDBPyConnection,
    url: str,
    path: str,
    key: str,
    size: int,
    mtime: float,
    secrets: int,
    personal: int,
) -> None:
    """Note that `path` (at this size and mtime) is at `url/key`."""
    con.execute(
        "INSERT OR REPLACE INTO pushed_files (url, path, key, size, mtime, secrets, personal, pushed_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, now())",
        [url, path, key, size, mtime, secrets, personal],
    )


def fetched(con: duckdb.DuckDBPyConnection, url: str) -> dict[str, tuple[str, int]]:
    """What was fetched from `url`: key -> the object's (tag, size) when it was fetched."""
    rows = con.execute("SELECT key, tag, size FROM remote_objects WHERE url = ?", [url]).fetchall()
    return {str(k): (str(t), int(z or 0)) for k, t, z in rows}


def record_fetch(
    con: duckdb.DuckDBPyConnection, url: str, key: str, tag: str, size: int, local_path: str, contributor: str
) -> None:
    """Note that `url/key` (this version of it) is at `local_path`, from `contributor`."""
    con.execute(
        "INSERT OR REPLACE INTO remote_objects (url, key, tag, size, local_path, contributor, fetched_at)"
        " VALUES (?, ?, ?, ?, ?, ?, now())",
        [url, key, tag, size, local_path, contributor],
    )


def tag_contributors(con: duckdb.DuckDBPyConnection) -> None:
    """Give files and sessions read from fetched objects their contributor (ingest rewrites their rows)."""
    with transaction(con):
        con.execute(
            "UPDATE files SET contributor = r.contributor FROM remote_objects r"
            " WHERE files.path = r.local_path AND files.contributor IS DISTINCT FROM r.contributor"
        )
        con.execute(
            "UPDATE sessions SET contributor = f.contributor FROM files f"
            " WHERE sessions.session_id = f.session_id AND f.is_main AND f.contributor IS NOT NULL"
            " AND sessions.contributor IS DISTINCT FROM f.contributor"
        )


class Forgotten(BaseModel):
    """What `forget_contributor` deleted: sessions, messages, stored model calls, and the local paths of the fetched
    files (the caller removes those inside the cache)."""

    contributor: str
    sessions: int
    messages: int
    calls: int
    paths: list[str]


def forget_contributor(con: duckdb.DuckDBPyConnection, contributor: str) -> Forgotten:
    """Delete `contributor`'s transcripts, messages, stored exchanges and what the rules found in their sessions, in
    one transaction, and record the deletion. Their sessions are those keyed to them (`core.store.session_keys`): a
    file of theirs that carries another contributor's session id made a session of its own, so another's session is
    never deleted. Versions, operations and entries stay (the history is the playbook's); their sessions now show as
    removed on request.

    Returns:
        What was deleted: sessions, messages, calls, and the local paths of the fetched files.
    """
    backfill_keys(con)  # a store written before sessions were keyed: whose each session is, first
    with transaction(con):
        ids = [
            str(r[0])
            for r in con.execute(
                "SELECT session_id FROM session_keys WHERE contributor = ?"
                " AND session_id IN (SELECT session_id FROM sessions UNION SELECT session_id FROM files)",
                [contributor],
            ).fetchall()
        ]
        messages = con.execute("SELECT count(*) FROM messages WHERE session_id IN (SELECT unnest(?))", [ids]).fetchone()
        calls = con.execute("SELECT count(*) FROM llm_calls WHERE session_id IN (SELECT unnest(?))", [ids]).fetchone()
        paths = [
            str(r[0])
            for r in con.execute(
                "SELECT local_path FROM remote_objects WHERE contributor = ?", [contributor]
            ).fetchall()
        ]
        for table in (
            "messages",
            "llm_calls",
            "rules_findings",
            "session_failures",
            "observations",
            "session_content",
            "sessions",
        ):
            con.execute(f"DELETE FROM {table} WHERE session_id IN (SELECT unnest(?))", [ids])
        gone = "SELECT path FROM files WHERE contributor = ? OR session_id IN (SELECT unnest(?))"
        con.execute(f"DELETE FROM file_noise WHERE path IN ({gone})", [contributor, ids])
        con.execute(f"DELETE FROM files WHERE path IN ({gone})", [contributor, ids])
        con.execute("DELETE FROM remote_objects WHERE contributor = ?", [contributor])
        summary = Forgotten(
            contributor=contributor,
            sessions=len(ids),
            messages=int(messages[0]) if messages else 0,
            calls=int(calls[0]) if calls else 0,
            paths=paths,
        )
        con.execute(
            "INSERT INTO forgotten (contributor, sessions, messages, calls, objects, session_ids)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [contributor, len(ids), summary.messages, summary.calls, len(paths), ids],
        )
    return summary


def forgotten_sessions(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Sessions deleted on request: session id -> contributor."""
    rows = con.execute("SELECT unnest(session_ids), contributor FROM forgotten").fetchall()
    return {str(s): str(c) for s, c in rows}
