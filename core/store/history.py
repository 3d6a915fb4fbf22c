"""How a playbook's versions read back: one row per version (`playbook history`), the entries changed between two
versions (`playbook diff`), and what happened over a range of versions (a publish commit's message). The writing
side, and loading one version, is `core.store.versions`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import duckdb
from pydantic import BaseModel

from core.models import Entry
from core.store.versions import current_version, load_version

__all__ = ["Change", "VersionChanges", "VersionRow", "count_versions", "diff_versions", "history", "version_changes"]


@dataclass(frozen=True, slots=True)
class VersionRow:
    """One version of a playbook, as `playbook history` lists it (a plain row: 10,000 of them are built for
    `history --limit 0`)."""

    version: int
    created_at: datetime
    source: str
    session_id: str | None
    parent_version: int | None
    ops_proposed: int | None
    ops_applied: int | None
    ops_skipped: int | None
    evaluations: int | None
    pruned: int | None
    n_entries: int | None
    note: str | None
    sessions: int = 0  # the sessions it applied: one epoch of a keyless run applies several in one version


def history(
    con: duckdb.DuckDBPyConnection, name: str, *, limit: int | None = None, since: Any = None
) -> list[VersionRow]:
    """One row per version, oldest first; only the newest `limit` (None: all) created at or after `since` (None:
    any time)."""
    current_version(con, name)
    rows = con.execute(
        "SELECT version, created_at, source, session_id, parent_version, ops_proposed, ops_applied, ops_skipped,"
        " evaluations, pruned, n_entries, note,"
        " (SELECT count(*) FROM version_sessions s WHERE s.playbook = v.playbook AND s.version = v.version)"
        " FROM versions v WHERE playbook = ?"
        " AND (?::TIMESTAMPTZ IS NULL OR created_at >= ?::TIMESTAMPTZ) ORDER BY version DESC LIMIT ?",
        [name, since, since, limit if limit is not None else 2**62],
    ).fetchall()
    return [VersionRow(*row) for row in reversed(rows)]  # the columns in the fields' order


def count_versions(con: duckdb.DuckDBPyConnection, name: str) -> int:
    """How many versions `name` has (version 0 included)."""
    row = con.execute("SELECT count(*) FROM versions WHERE playbook = ?", [name]).fetchone()
    return int(row[0]) if row else 0


@dataclass(frozen=True)
class Change:
    """One entry's difference between two versions."""

    kind: Literal["added", "removed", "changed"]
    name: str
    section: str
    before: Entry | None
    after: Entry | None


def diff_versions(con: duckdb.DuckDBPyConnection, name: str, v1: int, v2: int) -> list[Change]:
    """Entries added, removed or changed (text, counters or section) from `v1` to `v2`."""
    a = {e.name: (s, e) for s, e in load_version(con, name, v1).entries()}
    b = {e.name: (s, e) for s, e in load_version(con, name, v2).entries()}
    changes: list[Change] = []
    for entry_name, (section, entry) in b.items():
        if entry_name not in a:
            changes.append(Change("added", entry_name, section, None, entry))
        elif a[entry_name] != (section, entry):
            changes.append(Change("changed", entry_name, section, a[entry_name][1], entry))
    changes.extend(Change("removed", n, s, e, None) for n, (s, e) in a.items() if n not in b)
    return changes


class VersionChanges(BaseModel):
    """What happened to a playbook between two versions (a publish commit's message)."""

    versions: int
    sessions: int
    operations: dict[str, int]


def version_changes(con: duckdb.DuckDBPyConnection, name: str, after: int, upto: int) -> VersionChanges:
    """What happened to `name` in versions `after` < v <= `upto`: versions, sessions applied, and the
    operations applied by type (for a publish commit's message)."""
    row = con.execute(
        "SELECT (SELECT count(*) FROM versions WHERE playbook = $p AND version > $a AND version <= $u),"
        " (SELECT count(DISTINCT s.session_id) FROM version_sessions s JOIN versions v USING (playbook, version)"
        "  WHERE v.source = 'session' AND s.playbook = $p AND s.version > $a AND s.version <= $u)",
        {"p": name, "a": after, "u": upto},
    ).fetchone()
    ops = con.execute(
        "SELECT type, count(*) FROM operations WHERE playbook = ? AND version > ? AND version <= ?"
        " AND status = 'applied' GROUP BY type ORDER BY type",
        [name, after, upto],
    ).fetchall()
    return VersionChanges(
        versions=int(row[0]) if row else 0,
        sessions=int(row[1]) if row else 0,
        operations={str(t): int(n) for t, n in ops},
    )
