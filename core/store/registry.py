"""The registry of playbooks: which exist, their section sets, and their totals."""

from __future__ import annotations

import difflib
import functools
import json
import weakref

import duckdb
from pydantic import BaseModel

from core.errors import StoreError
from core.sections import DEFAULT_SECTIONS, Section, SectionSet
from core.store.db import transaction

__all__ = [
    "OperationCount",
    "PlaybookStats",
    "ensure_playbook",
    "known_sections",
    "missing_playbook",
    "playbook_names",
    "playbook_stats",
    "require_playbook",
    "sections_of",
]


def ensure_playbook(con: duckdb.DuckDBPyConnection, name: str, sections: SectionSet = DEFAULT_SECTIONS) -> SectionSet:
    """Create playbook `name` with an empty version 0 if missing; return its section set."""
    row = con.execute("SELECT sections_json FROM playbooks WHERE name = ?", [name]).fetchone()
    if row:
        return _section_set(row[0])
    with transaction(con):
        con.execute("INSERT INTO playbooks (name, sections_json) VALUES (?, ?)", [name, sections.model_dump_json()])
        con.execute(
            "INSERT INTO versions (playbook, version, source, note) VALUES (?, 0, 'init', 'empty playbook')", [name]
        )
    return sections


def _section_set(raw: str) -> SectionSet:
    data = json.loads(raw)
    return SectionSet(sections=tuple(Section(**s) for s in data["sections"]), fallback=data["fallback"])


def playbook_names(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every playbook in the database, by name."""
    return [r[0] for r in con.execute("SELECT name FROM playbooks ORDER BY name").fetchall()]


def missing_playbook(con: duckdb.DuckDBPyConnection, name: str) -> StoreError:
    """The error for a playbook name that does not exist, with a did-you-mean when one is close."""
    close = difflib.get_close_matches(name, playbook_names(con), n=1)
    hint = f"did you mean `{close[0]}`? To create it, run" if close else "create it with"
    return StoreError(f"Playbook `{name}` does not exist; {hint} `playbook new {name}` (or pass `--create`).")


def require_playbook(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """Raise `missing_playbook` unless playbook `name` exists."""
    if not con.execute("SELECT 1 FROM playbooks WHERE name = ?", [name]).fetchone():
        raise missing_playbook(con, name)


def sections_of(con: duckdb.DuckDBPyConnection, name: str) -> SectionSet:
    """The section set of playbook `name`."""
    row = con.execute("SELECT sections_json FROM playbooks WHERE name = ?", [name]).fetchone()
    if not row:
        raise missing_playbook(con, name)
    return _section_set(row[0])


@functools.lru_cache(maxsize=256)
def cached_sections(raw: str) -> SectionSet:
    """The section set stored as `raw` JSON, parsed once per distinct text."""
    return _section_set(raw)


# A playbook's sections are written once, when it is created, and never changed (nothing updates or deletes a
# `playbooks` row), so a connection reads them once.
_KNOWN_SECTIONS: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, dict[str, SectionSet]] = (
    weakref.WeakKeyDictionary()
)


def known_sections(con: duckdb.DuckDBPyConnection, name: str) -> SectionSet:
    """`sections_of`, read once per connection (a playbook's sections never change)."""
    known = _KNOWN_SECTIONS.setdefault(con, {})
    if name not in known:
        known[name] = sections_of(con, name)
    return known[name]


class OperationCount(BaseModel):
    """Operations of one type and status."""

    type: str
    status: str
    n: int


class PlaybookStats(BaseModel):
    """Totals for one playbook (`playbook stats`)."""

    playbook: str
    sessions_ingested: int
    sessions_applied: int
    sessions_skipped: int
    latest_version: int
    prunes: int
    cost_usd: float
    llm_calls: int
    operations: list[OperationCount]


def playbook_stats(con: duckdb.DuckDBPyConnection, name: str) -> PlaybookStats:
    """Totals for `name`: sessions, versions, prunes, model calls and cost, operations by type and status."""
    require_playbook(con, name)
    one = con.execute(
        "SELECT (SELECT count(*) FROM sessions),"
        " (SELECT count(*) FROM applied_sessions WHERE playbook = $p AND status = 'applied'),"
        " (SELECT count(*) FROM applied_sessions WHERE playbook = $p AND status = 'skipped'),"
        " (SELECT coalesce(max(version), 0) FROM versions WHERE playbook = $p),"
        " (SELECT count(*) FROM prunes WHERE playbook = $p),"
        " (SELECT coalesce(sum(cost_usd), 0) FROM llm_calls WHERE playbook = $p),"
        " (SELECT count(*) FROM llm_calls WHERE playbook = $p)",
        {"p": name},
    ).fetchone()
    ops = con.execute(
        "SELECT type, status, count(*) FROM operations WHERE playbook = ? GROUP BY ALL ORDER BY ALL", [name]
    ).fetchall()
    assert one is not None  # an aggregate query always returns one row
    return PlaybookStats(
        playbook=name,
        sessions_ingested=one[0],
        sessions_applied=one[1],
        sessions_skipped=one[2],
        latest_version=one[3],
        prunes=one[4],
        cost_usd=one[5],
        llm_calls=one[6],
        operations=[OperationCount(type=t, status=s, n=n) for t, s, n in ops],
    )
