"""What agents were given: exports recorded (with their entries, for trigger recurrence), triggers, reviews that
approved a version, and the entries no session confirms any more (stale)."""

from __future__ import annotations

from datetime import datetime

import duckdb
from pydantic import BaseModel

from core.store.db import fetch_rows
from core.store.versions import current_version

__all__ = [
    "StaleEntry",
    "TriggerRecurrence",
    "UnusedEntry",
    "approved_version",
    "entry_triggers",
    "record_export",
    "record_review",
    "stale_entries",
    "trigger_recurrence",
    "unused_entries",
    "with_trigger",
]


class StaleEntry(BaseModel):
    """A live entry no session confirmed lately (`playbook stale`)."""

    name: str
    section: str
    text: str
    created: datetime
    last_confirmed: datetime | None


# When each entry of playbook $p was first added.
_BORN = "born AS (SELECT name, created FROM v_entry_born WHERE playbook = $p)"


class UnusedEntry(BaseModel):
    """A live entry that goes unused (`playbook stale`): no session was given it for `expire_days`, or its trigger
    never came up in any session since it was added."""

    name: str
    section: str
    text: str
    created: datetime
    last_exposed: datetime | None
    trigger_fired: bool | None  # None: it has no trigger


def unused_entries(con: duckdb.DuckDBPyConnection, name: str, days: float) -> list[UnusedEntry]:
    """Live entries older than `days` that no session was given within `days` (through an exported file or a
    hook), or whose trigger never came up; oldest first."""
    return fetch_rows(
        con,
        UnusedEntry,
        f"""
        WITH {_BORN}, exposed AS (
            SELECT x.entry_id AS name, max(s.started_at) AS last_exposed FROM v_exposure x
            JOIN sessions s ON s.session_id = x.session_id WHERE x.playbook = $p GROUP BY 1
        ), fired AS (
            SELECT entry_id AS name, seen_before + seen_after > 0 AS trigger_fired
            FROM v_trigger_recurrence WHERE playbook = $p
        )
        SELECT e.name, e.section, e.text, b.created, x.last_exposed, f.trigger_fired
        FROM entries e JOIN born b USING (name) LEFT JOIN exposed x USING (name) LEFT JOIN fired f USING (name)
        WHERE e.playbook = $p AND e.valid_to IS NULL
          AND b.created < now() - to_seconds(CAST($days * 86400 AS BIGINT))
          AND (coalesce(x.last_exposed, b.created) < now() - to_seconds(CAST($days * 86400 AS BIGINT))
               OR f.trigger_fired = false)
        ORDER BY b.created, e.name
        """,
        {"p": name, "days": days},
    )


def stale_entries(con: duckdb.DuckDBPyConnection, name: str, days: float) -> list[StaleEntry]:
    """Live entries no session has confirmed (a helpful tag, or a rediscovery) for `days`, counted from the
    last confirmation or, for an entry never confirmed, from its creation; oldest first."""
    return fetch_rows(
        con,
        StaleEntry,
        f"""
        WITH {_BORN}, confirmed AS (
            SELECT name, max(confirmed_at) AS last_confirmed FROM (
                SELECT x.name, v.created_at AS confirmed_at FROM evaluations x
                JOIN versions v ON v.playbook = x.playbook AND v.version = x.version
                WHERE x.playbook = $p AND x.rating = 'helpful' AND x.status = 'applied'
                UNION ALL
                SELECT r.entry_id, v.created_at FROM rediscoveries r
                JOIN versions v ON v.playbook = r.playbook AND v.version = r.version
                WHERE r.playbook = $p
            ) GROUP BY name
        )
        SELECT e.name, e.section, e.text, b.created, c.last_confirmed
        FROM entries e JOIN born b USING (name) LEFT JOIN confirmed c USING (name)
        WHERE e.playbook = $p AND e.valid_to IS NULL
          AND coalesce(c.last_confirmed, b.created) < now() - to_seconds(CAST($days * 86400 AS BIGINT))
        ORDER BY coalesce(c.last_confirmed, b.created), e.name
        """,
        {"p": name, "days": days},
    )


class TriggerRecurrence(BaseModel):
    """For a live entry with a trigger: the sessions where it occurs before and after the entry's first export."""

    entry_id: str
    triggers: str
    first_exported_at: datetime | None
    sessions_before: int
    seen_before: int
    sessions_after: int
    seen_after: int


def trigger_recurrence(
    con: duckdb.DuckDBPyConnection, name: str, entry_id: str | None = None
) -> list[TriggerRecurrence]:
    """Per live entry with a trigger: sessions where it occurs before and after the entry was first exported."""
    return fetch_rows(
        con,
        TriggerRecurrence,
        "SELECT entry_id, triggers, first_exported_at, sessions_before, seen_before, sessions_after, seen_after"
        " FROM v_trigger_recurrence WHERE playbook = ? AND (? IS NULL OR entry_id = ?) ORDER BY entry_id",
        [name, entry_id, entry_id],
    )


def record_export(
    con: duckdb.DuckDBPyConnection, name: str, version: int | None, target: str, entry_ids: list[str]
) -> None:
    """Remember that `target` now carries `entry_ids` of `version` (default: the newest), for the trigger
    recurrence."""
    version = current_version(con, name) if version is None else version
    con.execute(
        "INSERT INTO exports (playbook, version, target, entry_ids) VALUES (?, ?, ?, ?)",
        [name, version, target, entry_ids],
    )


def with_trigger(con: duckdb.DuckDBPyConnection, name: str) -> set[str]:
    """The live entries of `name` that have a trigger."""
    rows = con.execute(
        "SELECT DISTINCT t.entry_id FROM entry_triggers t JOIN entries e ON e.playbook = t.playbook"
        " AND e.name = t.entry_id AND e.valid_to IS NULL WHERE t.playbook = ?",
        [name],
    ).fetchall()
    return {r[0] for r in rows}


def entry_triggers(con: duckdb.DuckDBPyConnection, name: str) -> dict[str, list[str]]:
    """Live entry id -> its triggers."""
    rows = con.execute(
        "SELECT t.entry_id, list(DISTINCT t.trigger ORDER BY t.trigger) FROM entry_triggers t JOIN entries e"
        " ON e.playbook = t.playbook AND e.name = t.entry_id AND e.valid_to IS NULL WHERE t.playbook = ? GROUP BY ALL",
        [name],
    ).fetchall()
    return {str(entry): list(found) for entry, found in rows}


def approved_version(con: duckdb.DuckDBPyConnection, name: str) -> int:
    """The newest version of `name` a reviewer approved (0, the empty playbook, before any review)."""
    row = con.execute("SELECT max(version) FROM reviews WHERE playbook = ?", [name]).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def record_review(
    con: duckdb.DuckDBPyConnection, name: str, version: int, approved: int, rejected: int, reviewer: str | None
) -> None:
    """Remember that `version` of `name` is approved, after `approved` changes were accepted and `rejected`
    undone."""
    con.execute(
        "INSERT INTO reviews (playbook, version, approved, rejected, reviewer) VALUES (?, ?, ?, ?, ?)",
        [name, version, approved, rejected, reviewer],
    )
