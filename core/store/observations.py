"""What the rules miner found in each session, and the sessions of a project.

Kept (`observations`) so a run weighs a project's sessions without reading them again."""

from __future__ import annotations

import duckdb

from core.miner import MINER_VERSION, Observed

__all__ = ["project_sessions", "store_observations", "stored_observations"]


def project_sessions(con: duckdb.DuckDBPyConnection, session_id: str) -> tuple[str | None, str | None, dict[str, int]]:
    """(project, working directory, {session id: messages}) of the project `session_id` belongs to, oldest
    session first; a session without a project is a project of its own."""
    row = con.execute("SELECT project, cwd FROM sessions WHERE session_id = ?", [session_id]).fetchone()
    project, cwd = (row[0], row[1]) if row else (None, None)
    if project is None:
        found = con.execute("SELECT session_id, n_messages FROM sessions WHERE session_id = ?", [session_id])
    else:
        found = con.execute(
            "SELECT session_id, n_messages FROM sessions WHERE project = ? ORDER BY started_at NULLS FIRST, session_id",
            [project],
        )
    return project, cwd, {str(r[0]): int(r[1] or 0) for r in found.fetchall()}


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


def store_observations(con: duckdb.DuckDBPyConnection, session_id: str, n_messages: int, observed: Observed) -> None:
    """Keep what the miner found in `session_id` (at `n_messages` messages)."""
    con.execute(
        "INSERT OR REPLACE INTO observations (session_id, n_messages, miner_version, observed) VALUES (?, ?, ?, ?)",
        [session_id, n_messages, observed.version, observed.model_dump_json()],
    )
