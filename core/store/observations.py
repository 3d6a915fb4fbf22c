"""What the rules miner found in each session, and which of a project's sessions a run weighs.

Kept (`observations`) so a run weighs a project's sessions without reading them again."""

from __future__ import annotations

from collections.abc import Collection, Mapping

import duckdb

from core.miner import MINER_VERSION, Observed

__all__ = ["evidence_sessions", "session_place", "session_places", "store_observations", "stored_observations"]


def session_place(con: duckdb.DuckDBPyConnection, session_id: str) -> tuple[str | None, str | None]:
    """(project, working directory) of `session_id`; a session without a project is a project of its own."""
    row = con.execute("SELECT project, cwd FROM sessions WHERE session_id = ?", [session_id]).fetchone()
    return (row[0], row[1]) if row else (None, None)


def session_places(con: duckdb.DuckDBPyConnection, session_ids: list[str]) -> dict[str, tuple[str | None, str | None]]:
    """`session_place` of many sessions in one query (every one of `session_ids` a key)."""
    rows = con.execute(
        "SELECT session_id, project, cwd FROM sessions WHERE session_id IN (SELECT unnest(?))", [session_ids]
    ).fetchall()
    found = {str(r[0]): (r[1], r[2]) for r in rows}
    return {sid: found.get(sid, (None, None)) for sid in session_ids}


def evidence_sessions(
    con: duckdb.DuckDBPyConnection, project: str | None, session_id: str, run: Collection[str], recent: int
) -> dict[str, int]:
    """{session id: messages} of the sessions whose evidence a run weighs for `project`, oldest first: the run's own
    sessions of the project (`run`, and `session_id`), and the `recent` newest the miner has observed before.

    The rest of the project is neither read nor observed: a run's cost follows its own sessions, not the store (a
    run of 64 sessions in a 20,000-session store observed every session of every project it touched). A session
    waiting for a later run adds its evidence when that run takes it."""
    if project is None:
        found = con.execute("SELECT session_id, n_messages FROM sessions WHERE session_id = ?", [session_id])
        return {str(r[0]): int(r[1] or 0) for r in found.fetchall()}
    found = con.execute(
        "SELECT session_id, n_messages FROM ("
        "  SELECT s.session_id, s.n_messages, s.started_at FROM sessions s"
        "  WHERE s.project = ? AND s.session_id IN (SELECT unnest(?))"
        "  UNION"
        "  (SELECT s.session_id, s.n_messages, s.started_at FROM sessions s JOIN observations o USING (session_id)"
        "   WHERE s.project = ? ORDER BY s.started_at DESC NULLS LAST, s.session_id DESC LIMIT ?)"
        ") ORDER BY started_at NULLS FIRST, session_id",
        [project, [*run, session_id], project, recent],
    )
    return {str(r[0]): int(r[1] or 0) for r in found.fetchall()}


def stored_observations(con: duckdb.DuckDBPyConnection, sizes: dict[str, int]) -> dict[str, Observed]:
    """The stored observations of the sessions in `sizes` that are current: made by this miner, of the session
    as large as it is now."""
    if not sizes:
        return {}
    rows = con.execute(
        "SELECT o.session_id, o.observed FROM observations o JOIN (SELECT unnest(?) AS session_id, unnest(?) AS n)"
        " s ON s.session_id = o.session_id AND s.n = o.n_messages WHERE o.miner_version = ?",
        [list(sizes), list(sizes.values()), MINER_VERSION],
    ).fetchall()
    return {str(sid): Observed.model_validate_json(data) for sid, data in rows}


def store_observations(con: duckdb.DuckDBPyConnection, observed: Mapping[str, tuple[int, Observed]]) -> None:
    """Keep what the miner found in each session (session id -> (its messages, what it found)), in one statement."""
    if not observed:
        return
    con.execute(
        "INSERT OR REPLACE INTO observations (session_id, n_messages, miner_version, observed)"
        " SELECT unnest(?), unnest(?), unnest(?), unnest(?)",
        [
            list(observed),
            [n for n, _ in observed.values()],
            [o.version for _, o in observed.values()],
            [o.model_dump_json() for _, o in observed.values()],
        ],
    )
