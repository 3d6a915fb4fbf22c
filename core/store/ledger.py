"""The session ledger (`applied_sessions` and `session_failures`): which sessions each playbook has applied,
skipped, failed, quarantined or held, and which are still work for it."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

import duckdb
from pydantic import BaseModel

from core.selection import PendingSession, SessionFilter
from core.store.db import fetch_rows, transaction

__all__ = [
    "FailedSession",
    "LedgerStatus",
    "applied_among",
    "count_pending",
    "failed_sessions",
    "mark_all_applied",
    "mark_applied",
    "mark_session",
    "pending_sessions",
    "previous_applies",
    "previous_apply",
    "record_failure",
    "release_failures",
    "requeue_sessions",
    "sessions_applied_by",
]

# What a playbook did with a session: applied it (a version), skipped it (a reason, e.g. too short), gave up
# after repeated failures (quarantined), or holds it for a person (a mass change).
LedgerStatus = Literal["applied", "skipped", "quarantined", "held"]

# A session is work for a playbook when the playbook has never handled it, or when it applied or skipped it
# and the session has grown since; and only once it has been idle (no message for `idle` minutes), so a
# session still being written is not curated half-way. The playbook filter sits in a subquery: with it in the
# join condition, DuckDB 2.0.0 (and still 2.0.1) drops the query's LIMIT when the playbook has no ledger rows yet
# (a first `curate --limit 50` curated every session).
_PENDING = """
FROM sessions s LEFT JOIN (SELECT * FROM applied_sessions WHERE playbook = $playbook) a ON a.session_id = s.session_id
WHERE (a.session_id IS NULL OR (a.status IN ('applied', 'skipped') AND s.n_messages > coalesce(a.n_messages, 0)))
  AND (s.ended_at IS NULL OR s.ended_at <= now() - to_seconds(CAST($idle * 60 AS BIGINT)))
"""


def pending_sessions(
    con: duckdb.DuckDBPyConnection, playbook: str, chosen: SessionFilter | None = None, *, idle_minutes: float = 0.0
) -> list[PendingSession]:
    """Sessions `playbook` has not handled, or that grew since it did, oldest first, as `chosen` filters them."""
    chosen = chosen or SessionFilter()
    return fetch_rows(
        con,
        PendingSession,
        "SELECT s.session_id, s.project, s.cwd, s.started_at, s.n_messages, s.n_user_prompts, s.n_tool_calls,"
        " s.n_tool_errors, s.contributor" + _PENDING + " AND ($project::VARCHAR IS NULL OR s.project = $project)"
        " AND ($since::TIMESTAMPTZ IS NULL OR s.started_at >= $since::TIMESTAMPTZ)"
        " AND ($until::TIMESTAMPTZ IS NULL OR s.started_at < $until::TIMESTAMPTZ)"
        " ORDER BY s.started_at NULLS FIRST, s.session_id LIMIT $limit",
        {
            "playbook": playbook,
            "idle": idle_minutes,
            "project": chosen.project,
            "since": chosen.since,
            "until": chosen.until,
            "limit": chosen.limit if chosen.limit is not None else 2**62,
        },
    )


def previous_apply(
    con: duckdb.DuckDBPyConnection, playbook: str, session_id: str
) -> tuple[datetime | None, int] | None:
    """(when the part already applied ends, the version that applied it), or None if never applied."""
    row = con.execute(
        "SELECT upto, version FROM applied_sessions WHERE playbook = ? AND session_id = ? AND status = 'applied'",
        [playbook, session_id],
    ).fetchone()
    return (row[0], int(row[1])) if row else None


def previous_applies(
    con: duckdb.DuckDBPyConnection, playbook: str, session_ids: list[str]
) -> dict[str, tuple[datetime | None, int]]:
    """`previous_apply` of many sessions in one query: only those applied before are keys."""
    rows = con.execute(
        "SELECT session_id, upto, version FROM applied_sessions WHERE playbook = ? AND status = 'applied'"
        " AND session_id IN (SELECT unnest(?))",
        [playbook, session_ids],
    ).fetchall()
    return {str(r[0]): (r[1], int(r[2])) for r in rows}


def applied_among(con: duckdb.DuckDBPyConnection, playbook: str, session_ids: list[str]) -> set[str]:
    """Which of `session_ids` `playbook` has already applied (to resume an epoch a killed run left open)."""
    rows = con.execute(
        "SELECT session_id FROM applied_sessions WHERE playbook = ? AND session_id IN (SELECT unnest(?))",
        [playbook, session_ids],
    ).fetchall()
    return {r[0] for r in rows}


def count_pending(con: duckdb.DuckDBPyConnection, playbook: str, idle_minutes: float = 0.0) -> int:
    """Sessions that are work for `playbook` (see `pending_sessions`), plus epochs a killed run left open."""
    row = con.execute(
        "SELECT (SELECT count(*) " + _PENDING + ")"
        " + (SELECT count(*) FROM epochs WHERE playbook = $playbook AND status = 'open')",
        {"playbook": playbook, "idle": idle_minutes},
    ).fetchone()
    return int(row[0]) if row else 0


def mark_applied(
    con: duckdb.DuckDBPyConnection,
    name: str,
    session_id: str,
    version: int | None,
    status: LedgerStatus,
    reason: str | None,
) -> None:
    """Write the session's ledger row (inside the caller's transaction): `version` applied it, or `status` says
    why not; the size of what was seen is kept, so a session that grows later is taken up again."""
    con.execute("DELETE FROM applied_sessions WHERE playbook = ? AND session_id = ?", [name, session_id])
    con.execute(
        "INSERT INTO applied_sessions (playbook, session_id, version, status, reason, n_messages, upto)"
        " SELECT ?, ?, ?, ?, ?, (SELECT n_messages FROM sessions WHERE session_id = ?),"
        " (SELECT ended_at FROM sessions WHERE session_id = ?)",
        [name, session_id, version, status, reason, session_id, session_id],
    )


def mark_all_applied(con: duckdb.DuckDBPyConnection, name: str, applied: Mapping[str, int | None]) -> None:
    """`mark_applied` with status `applied` for many sessions (session id -> the version it is applied at), in two
    statements (an epoch's sessions: each statement costs ~1 ms however few rows it touches)."""
    if not applied:
        return
    ids = list(applied)
    con.execute("DELETE FROM applied_sessions WHERE playbook = ? AND session_id IN (SELECT unnest(?))", [name, ids])
    con.execute(
        "INSERT INTO applied_sessions (playbook, session_id, version, status, reason, n_messages, upto)"
        " SELECT ?, a.session_id, a.version, 'applied', NULL, s.n_messages, s.ended_at"
        " FROM (SELECT unnest(?) AS session_id, unnest(?) AS version) a"
        " LEFT JOIN sessions s ON s.session_id = a.session_id",
        [name, ids, list(applied.values())],
    )


def mark_session(con: duckdb.DuckDBPyConnection, name: str, session_id: str, status: LedgerStatus, reason: str) -> None:
    """Record a session as handled without a new version (for example `skipped: too short`)."""
    with transaction(con):
        mark_applied(con, name, session_id, None, status, reason)


def record_failure(
    con: duckdb.DuckDBPyConnection,
    name: str,
    session_id: str,
    reason: str,
    run_id: str,
    max_attempts: int,
    *,
    hold: bool = False,
) -> int:
    """Count one more run that could not process the session; quarantine it at `max_attempts`.

    A quarantined session is out of the pending set (its `applied_sessions` row says `quarantined`) until
    `release_failures` lets it back. With `hold`, the session is held at once (status `held`): its output
    was valid but not applied (a mass change), and it waits for a person, not for another attempt.
    Returns the attempts so far.
    """
    with transaction(con):
        row = con.execute(
            "SELECT attempts FROM session_failures WHERE playbook = ? AND session_id = ?", [name, session_id]
        ).fetchone()
        attempts = (int(row[0]) if row else 0) + 1
        con.execute("DELETE FROM session_failures WHERE playbook = ? AND session_id = ?", [name, session_id])
        con.execute(
            "INSERT INTO session_failures (playbook, session_id, attempts, reason, last_run_id) VALUES (?, ?, ?, ?, ?)",
            [name, session_id, attempts, reason, run_id],
        )
        if hold:
            mark_applied(con, name, session_id, None, "held", reason)
        elif attempts >= max_attempts:
            mark_applied(con, name, session_id, None, "quarantined", f"{attempts} failed attempts; last: {reason}")
    return attempts


class FailedSession(BaseModel):
    """A session a playbook could not process, or holds (`playbook sessions --failed`)."""

    session_id: str
    attempts: int
    reason: str | None
    last_run_id: str | None
    updated_at: datetime | None
    status: Literal["failed", "quarantined", "held"]


def failed_sessions(con: duckdb.DuckDBPyConnection, name: str) -> list[FailedSession]:
    """Sessions whose processing failed or was held, with attempts, the last reason and the status
    (`failed`: tried again next run; `quarantined`; `held`: waiting for `playbook retry`)."""
    return fetch_rows(
        con,
        FailedSession,
        "SELECT f.session_id, f.attempts, f.reason, f.last_run_id, f.updated_at,"
        " CASE WHEN a.status IN ('quarantined', 'held') THEN a.status ELSE 'failed' END AS status"
        " FROM session_failures f LEFT JOIN applied_sessions a USING (playbook, session_id)"
        " WHERE f.playbook = ? ORDER BY status DESC, f.attempts DESC, f.session_id",
        [name],
    )


def release_failures(con: duckdb.DuckDBPyConnection, name: str, session_ids: list[str] | None) -> int:
    """Let quarantined or held sessions (all, or those named) be tried again by the next run; returns how many."""
    with transaction(con):
        chosen = (
            [r[0] for r in con.execute("SELECT session_id FROM session_failures WHERE playbook = ?", [name]).fetchall()]
            if session_ids is None
            else session_ids
        )
        con.execute(
            "DELETE FROM applied_sessions WHERE playbook = ? AND status IN ('quarantined', 'held') AND session_id IN"
            " (SELECT unnest(?))",
            [name, chosen],
        )
        con.execute(
            "DELETE FROM session_failures WHERE playbook = ? AND session_id IN (SELECT unnest(?))", [name, chosen]
        )
    return len(chosen)


def sessions_applied_by(
    con: duckdb.DuckDBPyConnection, playbook: str, provider: str | None, since: Any = None
) -> list[str]:
    """Sessions `playbook` applied in a run of `provider` (any when None), started at or after `since`."""
    rows = con.execute(
        """
        SELECT a.session_id FROM applied_sessions a
        JOIN versions v ON v.playbook = a.playbook AND v.version = a.version
        LEFT JOIN runs r ON r.run_id = v.run_id
        LEFT JOIN sessions s ON s.session_id = a.session_id
        WHERE a.playbook = $p AND a.status = 'applied' AND ($provider::VARCHAR IS NULL OR r.provider = $provider)
          AND ($since::TIMESTAMPTZ IS NULL OR s.started_at >= $since::TIMESTAMPTZ)
        ORDER BY s.started_at, a.session_id
        """,
        {"p": playbook, "provider": provider, "since": since},
    ).fetchall()
    return [r[0] for r in rows]


def requeue_sessions(con: duckdb.DuckDBPyConnection, playbook: str, session_ids: list[str]) -> int:
    """Make `session_ids` pending again for `playbook` (the versions they produced stay in the history)."""
    if not session_ids:
        return 0
    con.execute(
        "DELETE FROM applied_sessions WHERE playbook = ? AND session_id IN (SELECT unnest(?))", [playbook, session_ids]
    )
    return len(session_ids)
