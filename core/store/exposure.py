"""Exposure: what the hooks and the MCP server gave each session (merged from their ledger), which entries a session
had (`v_exposure`: those records and the exported files it loaded), the sessions on either side of an entry that
its impact is estimated from, and the outcomes agents reported (`feedback`) and which a run counted."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

import duckdb
from pydantic import BaseModel

from core.agent_reports import reports_carried
from core.exposure import FeedbackLine, LedgerLine
from core.impact import ImpactCounts
from core.store.db import fetch_rows

__all__ = [
    "Reported",
    "exposed_entries",
    "exposure_arms",
    "impact_counts",
    "ledger_read_bytes",
    "mark_counted",
    "store_feedback",
    "store_ledger_lines",
    "uncounted_feedback",
]


def _mark_read(con: duckdb.DuckDBPyConnection, path: str, read_bytes: int, skipped: int) -> None:
    """Record that the file at `path` (the hooks' ledger, the feedback file) is merged up to `read_bytes`."""
    con.execute(
        "INSERT OR REPLACE INTO exposure_ledgers (path, read_bytes, skipped_lines, merged_at) VALUES (?, ?,"
        " coalesce((SELECT skipped_lines FROM exposure_ledgers WHERE path = ?), 0) + ?, now())",
        [path, read_bytes, path, skipped],
    )


def ledger_read_bytes(con: duckdb.DuckDBPyConnection, path: str) -> int:
    """How far the ledger at `path` has been merged (0: never)."""
    row = con.execute("SELECT read_bytes FROM exposure_ledgers WHERE path = ?", [path]).fetchone()
    return int(row[0]) if row else 0


# Which hook gave an entry: the prompt hook and the guards by name, SessionStart (whatever started the session) as
# `hook`.
_SOURCES = {"UserPromptSubmit": "UserPromptSubmit", "PreToolUse": "PreToolUse", "MCP": "MCP"}


def store_ledger_lines(
    con: duckdb.DuckDBPyConnection, path: str, lines: Sequence[LedgerLine], read_bytes: int, skipped: int
) -> int:
    """Record the exposures of `lines` (a session's start seen twice, resumed or compacted, is kept once; an entry
    given again by the same hook too) and that the ledger at `path` is merged up to `read_bytes`; returns the rows
    added."""
    rows = [
        (line.session_id, got.playbook, entry, shown, got.version, _SOURCES.get(line.source, "hook"), line.at)
        for line in lines
        for got in line.playbooks
        for shown, ids in ((True, got.shown), (False, got.held_out))
        for entry in ids
    ]
    before = con.execute("SELECT count(*) FROM exposures").fetchone()
    con.execute("BEGIN")
    try:
        if rows:
            con.executemany(
                "INSERT OR IGNORE INTO exposures (session_id, playbook, entry_id, shown, version, source, recorded_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
        _mark_read(con, path, read_bytes, skipped)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    after = con.execute("SELECT count(*) FROM exposures").fetchone()
    return int(after[0] if after else 0) - int(before[0] if before else 0)


def exposed_entries(con: duckdb.DuckDBPyConnection, playbook: str, session_ids: Sequence[str]) -> dict[str, set[str]]:
    """For each of `session_ids`: the entries of `playbook` its agent had, as the hooks' records and the exported files
    it loaded say (what its reflection is shown and may tag, what its agent may report on); none for a session that
    predates every export and had no hook.

    The records as they are, not `v_exposure`'s: a session curated after the fact (a backfill, a replayed run) is
    judged against what its records say it had, while impact, adherence and stale count only records that can be
    true of it (`v_hook_exposure`)."""
    found: dict[str, set[str]] = {sid: set() for sid in session_ids}
    if not session_ids:
        return found
    rows = con.execute(
        "SELECT session_id, entry_id FROM exposures WHERE shown AND playbook = $p AND session_id IN (SELECT unnest($s))"
        " UNION SELECT session_id, entry_id FROM v_export_exposure WHERE playbook = $p"
        " AND session_id IN (SELECT unnest($s))",
        {"p": playbook, "s": list(session_ids)},
    ).fetchall()
    for sid, entry in rows:
        found[str(sid)].add(str(entry))
    return found


def _arm(prefix: str, where: str) -> str:
    return (
        f"count(g.session_id) FILTER (WHERE {where}) AS {prefix}_n,"
        f" count(g.session_id) FILTER (WHERE {where} AND g.hit) AS {prefix}_hit,"
        f" coalesce(sum(g.errors) FILTER (WHERE {where}), 0)::BIGINT AS {prefix}_err"
    )


def impact_counts(con: duckdb.DuckDBPyConnection, playbook: str, entry_id: str | None = None) -> list[ImpactCounts]:
    """The arms of every live entry of `playbook` (or of `entry_id`): a session counts as "trigger seen" when a
    tool's output in it holds one of the entry's triggers, or one of its actions matches one (a command that starts
    with the trigger's words, a file it names: `v_action_hits`), the situation the lesson is about came up."""
    arms = ", ".join(
        [
            _arm("hook", "g.hooked"),
            _arm("held", "g.held"),
            _arm("tb", "f.first_at IS NOT NULL AND g.started_at < f.first_at AND NOT g.exposed"),
            _arm("ta", "g.exposed"),
            _arm("cb", "f.first_at IS NULL AND g.started_at < r.t0"),
            _arm("ca", "f.first_at IS NULL AND g.started_at >= r.t0"),
        ]
    )
    return fetch_rows(
        con,
        ImpactCounts,
        f"""
        WITH live AS (
            SELECT e.name AS entry_id, any_value(e.text) AS text,
                   coalesce(list(DISTINCT t.trigger) FILTER (WHERE t.trigger IS NOT NULL), []) AS triggers
            FROM entries e LEFT JOIN entry_triggers t ON t.playbook = e.playbook AND t.entry_id = e.name
            WHERE e.playbook = $p AND e.valid_to IS NULL AND ($id IS NULL OR e.name = $id)
            GROUP BY e.name
        ), hits AS (
            SELECT DISTINCT l.entry_id, m.session_id
            FROM live l, unnest(l.triggers) AS u(pat)
            JOIN messages m ON m.kind = 'tool_result' AND m.text IS NOT NULL AND contains(lower(m.text), lower(u.pat))
            UNION
            SELECT l.entry_id, a.session_id
            FROM live l, unnest(l.triggers) AS u(pat) JOIN v_action_hits a ON a.pat = u.pat
        ), shown AS (
            SELECT DISTINCT session_id, entry_id FROM v_exposure WHERE playbook = $p
        ), hooked AS (
            SELECT DISTINCT session_id, entry_id FROM v_hook_exposure WHERE playbook = $p AND shown
        ), held AS (
            SELECT DISTINCT session_id, entry_id FROM v_hook_exposure WHERE playbook = $p AND NOT shown
            EXCEPT SELECT session_id, entry_id FROM shown
        ), grid AS (
            SELECT l.entry_id, s.session_id, coalesce(s.project, s.session_id) AS project, s.started_at,
                   coalesce(s.n_tool_errors, 0) AS errors, h.session_id IS NOT NULL AS hit,
                   x.session_id IS NOT NULL AS exposed, k.session_id IS NOT NULL AS hooked,
                   d.session_id IS NOT NULL AS held
            FROM live l CROSS JOIN sessions s
            LEFT JOIN hits h ON h.entry_id = l.entry_id AND h.session_id = s.session_id
            LEFT JOIN shown x ON x.entry_id = l.entry_id AND x.session_id = s.session_id
            LEFT JOIN hooked k ON k.entry_id = l.entry_id AND k.session_id = s.session_id
            LEFT JOIN held d ON d.entry_id = l.entry_id AND d.session_id = s.session_id
        ), firsts AS (
            SELECT entry_id, project, min(started_at) AS first_at FROM grid WHERE exposed GROUP BY ALL
        ), rollout AS (
            SELECT entry_id, min(first_at) AS t0 FROM firsts GROUP BY entry_id
        )
        SELECT l.entry_id, l.text, l.triggers, {arms}
        FROM live l
        LEFT JOIN grid g ON g.entry_id = l.entry_id
        LEFT JOIN firsts f ON f.entry_id = g.entry_id AND f.project = g.project
        LEFT JOIN rollout r ON r.entry_id = g.entry_id
        GROUP BY l.entry_id, l.text, l.triggers
        ORDER BY l.entry_id
        """,
        {"p": playbook, "id": entry_id},
    )


def exposure_arms(con: duckdb.DuckDBPyConnection, playbook: str) -> dict[str, tuple[set[str], set[str]]]:
    """Entry id -> (the sessions that had it, the sessions the hooks held it out of and that never had it)."""
    found: dict[str, tuple[set[str], set[str]]] = {}
    for entry, sid in con.execute(
        "SELECT DISTINCT entry_id, session_id FROM v_exposure WHERE playbook = ?", [playbook]
    ).fetchall():
        found.setdefault(str(entry), (set(), set()))[0].add(str(sid))
    for entry, sid in con.execute(
        "SELECT DISTINCT entry_id, session_id FROM v_hook_exposure WHERE playbook = ? AND NOT shown", [playbook]
    ).fetchall():
        arms = found.setdefault(str(entry), (set(), set()))
        if str(sid) not in arms[0]:
            arms[1].add(str(sid))
    return found


def store_feedback(
    con: duckdb.DuckDBPyConnection, path: str, lines: Sequence[FeedbackLine], read_bytes: int, skipped: int
) -> int:
    """Record the outcomes agents reported (`playbook mcp`), with their notes as given (the caller redacted them),
    and that the feedback file at `path` is merged up to `read_bytes`; returns the rows added."""
    con.execute("BEGIN")
    try:
        if lines:
            con.executemany(
                "INSERT INTO feedback (session_id, entry_id, outcome, note, reported_at) VALUES (?, ?, ?, ?, ?)",
                [(x.session_id, x.entry_id, x.outcome, x.note, x.at) for x in lines],
            )
        _mark_read(con, path, read_bytes, skipped)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return len(lines)


class Reported(BaseModel):
    """An outcome an agent reported that a playbook's run has not counted yet."""

    session_id: str
    entry_id: str
    outcome: str
    reported_at: datetime


def uncounted_feedback(con: duckdb.DuckDBPyConnection, playbook: str) -> list[Reported]:
    """The outcomes not yet counted for `playbook`, oldest first."""
    return fetch_rows(
        con,
        Reported,
        "SELECT f.session_id, f.entry_id, f.outcome, f.reported_at FROM feedback f WHERE NOT EXISTS ("
        " SELECT 1 FROM feedback_counted c WHERE c.playbook = ? AND c.session_id = f.session_id"
        " AND c.entry_id = f.entry_id AND c.reported_at = f.reported_at) ORDER BY f.reported_at",
        [playbook],
    )


def mark_counted(con: duckdb.DuckDBPyConnection, playbook: str, reported: Sequence[Reported], version: int) -> None:
    """Record that `version` of `playbook` counted `reported`."""
    con.executemany(
        "INSERT INTO feedback_counted VALUES (?, ?, ?, ?, ?)",
        [(playbook, r.session_id, r.entry_id, r.reported_at, version) for r in reported],
    )


def reported_harm(con: duckdb.DuckDBPyConnection, playbook: str) -> dict[str, int]:
    """Per entry id of `playbook`, the harmful tags that are agents' own reports (`hurt`, `wrong`): the evaluations
    the feedback versions applied (`flows.run.curation.count_feedback`)."""
    # Every run asks; most playbooks have no feedback version, and then the evaluations (a row per tag) are not read.
    versions = [v for (v,) in con.execute(_FEEDBACK_VERSIONS, [playbook]).fetchall()]
    if not versions:
        return {}
    rows = con.execute(
        "SELECT name, count(*) FROM evaluations WHERE playbook = ? AND version IN (SELECT unnest(?))"
        " AND rating = 'harmful' AND status = 'applied' GROUP BY name",
        [playbook, versions],
    ).fetchall()
    # The entries merged since the first report carry them (`reports_carried`).
    merges = con.execute(
        "SELECT entry_id, target_ids FROM operations WHERE playbook = ? AND version > ? AND type = 'MERGE'"
        " AND status = 'applied' AND entry_id IS NOT NULL ORDER BY version, idx",
        [playbook, min(versions)],
    ).fetchall()
    return reports_carried(
        {str(name): int(n) for name, n in rows}, [(str(made), json.loads(into)) for made, into in merges]
    )


_FEEDBACK_VERSIONS = "SELECT version FROM versions WHERE playbook = ? AND source = 'feedback'"
