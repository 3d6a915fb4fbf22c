"""Versioned playbooks: type-2 entry rows, one transaction per version, history, diff and revert.

An entry row is valid for versions `valid_from <= v < valid_to` (`valid_to` NULL while current), so
storage grows with the number of changes, not versions x size, and any version is rebuilt with one range
predicate (the `playbook_at` table macro). Everything that belongs to one version (the version row,
entry changes, the operation log, evaluations, prunes and the session ledger row) is written in ONE
transaction: a crash leaves either the whole version or none of it.
"""

from __future__ import annotations

import difflib
import functools
import itertools
import json
import weakref
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from operator import itemgetter
from typing import Any, Literal

import duckdb

from core.errors import StoreError, VersionConflictError
from core.models import ApplyReport, Entry, Playbook
from core.sections import DEFAULT_SECTIONS, Section, SectionSet
from core.store.db import transaction

__all__ = [
    "Change",
    "Tip",
    "approved_version",
    "count_versions",
    "current_version",
    "diff_versions",
    "ensure_playbook",
    "entry_since",
    "failed_sessions",
    "history",
    "live_entries",
    "load_version",
    "mark_session",
    "missing_playbook",
    "playbook_names",
    "playbook_stats",
    "record_export",
    "record_failure",
    "record_review",
    "rediscovery_counts",
    "release_failures",
    "require_playbook",
    "revert",
    "sections_of",
    "stale_entries",
    "tip_of",
    "trigger_recurrence",
    "version_changes",
    "with_trigger",
    "write_version",
]

Source = Literal["init", "session", "import", "revert", "consolidate", "review"]


def _rows(
    con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


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


def current_version(con: duckdb.DuckDBPyConnection, name: str) -> int:
    """The newest version number of playbook `name`."""
    row = con.execute("SELECT max(version) FROM versions WHERE playbook = ?", [name]).fetchone()
    if not row or row[0] is None:
        raise missing_playbook(con, name)
    return int(row[0])


def rediscovery_counts(con: duckdb.DuckDBPyConnection, name: str) -> dict[str, int]:
    """How often each entry of `name` was found again (a near-duplicate ADD skipped in its favour)."""
    rows = con.execute("SELECT entry_id, count(*) FROM rediscoveries WHERE playbook = ? GROUP BY 1", [name])
    return {r[0]: int(r[1]) for r in rows.fetchall()}


def entry_since(con: duckdb.DuckDBPyConnection, name: str) -> dict[str, int]:
    """The version at which each live entry's current text and counters began (how recently it changed)."""
    rows = con.execute("SELECT name, valid_from FROM entries WHERE playbook = ? AND valid_to IS NULL", [name])
    return {r[0]: int(r[1]) for r in rows.fetchall()}


def stale_entries(con: duckdb.DuckDBPyConnection, name: str, days: float) -> list[dict[str, Any]]:
    """Live entries no session has confirmed (a helpful tag, or a rediscovery) for `days`, counted from the
    last confirmation or, for an entry never confirmed, from its creation; oldest first."""
    return _rows(
        con,
        """
        WITH born AS (
            SELECT e.name, min(v.created_at) AS created FROM entries e
            JOIN versions v ON v.playbook = e.playbook AND v.version = e.valid_from
            WHERE e.playbook = $p GROUP BY e.name
        ), confirmed AS (
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


def live_entries(con: duckdb.DuckDBPyConnection, name: str) -> int:
    """How many entries the newest version of `name` holds."""
    row = con.execute("SELECT count(*) FROM entries WHERE playbook = ? AND valid_to IS NULL", [name]).fetchone()
    return int(row[0]) if row else 0


_ALL_FIELDS = frozenset(Entry.model_fields)


@functools.lru_cache(maxsize=1 << 16)
def _trusted_entry(name: str, text: str, helpful: int, harmful: int) -> Entry:
    """An `Entry` from a row the store wrote (validated when it was written): built without validating it again,
    and shared, since entries are immutable values (a rebuild of an unchanged entry costs a dict lookup)."""
    entry = object.__new__(Entry)
    object.__setattr__(entry, "__dict__", {"name": name, "text": text, "helpful": helpful, "harmful": harmful})
    object.__setattr__(entry, "__pydantic_fields_set__", set(_ALL_FIELDS))
    object.__setattr__(entry, "__pydantic_extra__", None)
    object.__setattr__(entry, "__pydantic_private__", None)
    return entry


_first, _second = itemgetter(0), itemgetter(1)


@functools.lru_cache(maxsize=256)
def _cached_sections(raw: str) -> SectionSet:
    return _section_set(raw)


# A playbook's sections are written once, when it is created, and never changed (nothing updates or deletes a
# `playbooks` row), so a connection reads them once.
_KNOWN_SECTIONS: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, dict[str, SectionSet]] = (
    weakref.WeakKeyDictionary()
)

# The entry rows valid at a version, each with the version's creation time (microseconds since the epoch: a
# number column costs nothing to fetch), in one round trip; no row at all for an empty or missing version.
_ROWS_AT = (
    "SELECT e.section, e.name, e.text, e.helpful, e.harmful, epoch_us(v.created_at) AS created"
    " FROM entries e, versions v WHERE e.playbook = $1 AND e.valid_from <= $2"
    " AND (e.valid_to IS NULL OR e.valid_to > $2) AND v.playbook = $1 AND v.version = $2"
    " ORDER BY e.section, e.position"
)
# The same for the newest version: its rows are the open ones.
_ROWS_NEWEST = (
    "SELECT e.section, e.name, e.text, e.helpful, e.harmful, epoch_us(v.created_at) AS created"
    " FROM entries e, versions v WHERE e.playbook = $1 AND e.valid_to IS NULL"
    " AND v.playbook = $1 AND v.version = (SELECT max(version) FROM versions WHERE playbook = $1)"
    " ORDER BY e.section, e.position"
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _known_sections(con: duckdb.DuckDBPyConnection, name: str) -> SectionSet:
    known = _KNOWN_SECTIONS.setdefault(con, {})
    if name not in known:
        known[name] = sections_of(con, name)
    return known[name]


def load_version(con: duckdb.DuckDBPyConnection, name: str, version: int | None = None) -> Playbook:
    """Rebuild playbook `name` at `version` (default: the newest).

    One round trip for a version that holds entries (its rows by the range predicate, as columns, with the
    version's creation time); the playbook's facts are read only when that finds no row (an empty version, or
    one that does not exist). The rows, which the store wrote from validated entries, are trusted (not
    validated again).
    """
    cols: dict[str, Any] = {}
    if version is None or version >= 0:
        sql, params = (_ROWS_NEWEST, [name]) if version is None else (_ROWS_AT, [name, version])
        cols = con.execute(sql, params).fetchnumpy()
    if len(cols.get("name", ())):
        sections = _known_sections(con, name)
        created: datetime | None = _EPOCH + timedelta(microseconds=int(cols["created"][0]))
        names, texts, helpful, harmful = (cols[k].tolist() for k in ("name", "text", "helpful", "harmful"))
        section_of = cols["section"].tolist()
    else:
        meta = con.execute(
            "SELECT (SELECT sections_json FROM playbooks WHERE name = ?), max(version),"
            " arg_max(created_at, version) FILTER (WHERE version = coalesce(?, version)) FROM versions"
            " WHERE playbook = ?",
            [name, version, name],
        ).fetchone()
        if meta is None or meta[0] is None or meta[1] is None:
            raise missing_playbook(con, name)
        raw_sections, latest, created = meta
        v = latest if version is None else version
        if v < 0 or v > latest:
            raise StoreError(f"Playbook `{name}` has no version {v}; versions run from 0 to {latest}.")
        sections = _cached_sections(raw_sections)
        names = texts = helpful = harmful = section_of = []
    entries = map(_trusted_entry, names, texts, helpful, harmful)
    by_section: dict[str, list[Entry]] = {s: [] for s in sections.names}
    for section, group in itertools.groupby(zip(section_of, entries, strict=True), key=_first):
        by_section.setdefault(section, []).extend(map(_second, group))
    return Playbook.model_construct(
        contract_version=1,
        version="1.0",
        last_updated=created.astimezone(UTC).isoformat(timespec="seconds") if created else None,
        sections=by_section,
    )


@dataclass
class Tip:
    """The open entry rows of a playbook at `version` (name -> section, position, entry), which a writer keeps
    in memory between the versions it writes, so a write compares against them instead of reading them back.
    `write_version` moves it forward; a tip of another version than the newest is ignored (read afresh)."""

    playbook: str
    version: int
    rows: dict[str, tuple[str, int, Entry]]
    # The very section lists of the playbook last written through this tip: a list that comes back unchanged (the
    # same object: playbooks are values) has all its rows open, unchanged and in order, so it is not compared.
    lists: dict[str, list[Entry]] = field(default_factory=dict)


def tip_of(con: duckdb.DuckDBPyConnection, name: str) -> Tip:
    """The newest version's open entry rows of playbook `name`, read once."""
    version = current_version(con, name)
    rows = con.execute(
        "SELECT name, section, position, text, helpful, harmful FROM entries WHERE playbook = ? AND valid_to IS NULL",
        [name],
    ).fetchall()
    return Tip(name, version, {r[0]: (r[1], r[2], _trusted_entry(r[0], r[3], r[4], r[5])) for r in rows})


def _plan(
    open_rows: dict[str, tuple[str, int, Entry]], new: Playbook, written: dict[str, list[Entry]] | None = None
) -> tuple[list[str], list[tuple[str, int, Entry]]]:
    """(names whose open row closes, rows to insert) to go from the open rows to `new`.

    Unchanged entries keep their row while their relative order holds; everything else gets a new row. An entry
    is unchanged when it is the very object of its row (entries are immutable and shared), or equal to it.
    `written`: the section lists the open rows were written from (`Tip.lists`); a section of `new` that is one
    of those very lists is skipped.
    """
    close: list[str] = []
    insert: list[tuple[str, int, Entry]] = []
    seen: set[str] = set()
    same: set[str] = set()  # sections whose list is the very one written
    found = 0  # names of `new` that have an open row
    for section, items in new.sections.items():
        if written and written.get(section) is items:
            same.add(section)
            found += len(items)
            continue
        last = -1
        for e in items:
            seen.add(e.name)
            old = open_rows.get(e.name)
            if old is None:
                last += 1
                insert.append((section, last, e))
                continue
            found += 1
            if old[0] == section and old[1] > last:
                was = old[2]
                if was is e or (was.text, was.helpful, was.harmful) == (e.text, e.helpful, e.harmful):
                    last = old[1]
                    continue
            close.append(e.name)
            last += 1
            insert.append((section, last, e))
    if found < len(open_rows):  # some open rows are gone from `new` (none of a section written as it is)
        close.extend(n for n, row in open_rows.items() if n not in seen and row[0] not in same)
    return close, insert


def write_version(
    con: duckdb.DuckDBPyConnection,
    name: str,
    new: Playbook,
    *,
    source: Source,
    session_id: str | None = None,
    report: ApplyReport | None = None,
    run_id: str | None = None,
    note: str | None = None,
    expected_parent: int | None = None,
    tip: Tip | None = None,
) -> int:
    """Store `new` as the next version of `name`, with its report, in one transaction.

    Args:
        expected_parent: when given, the write is refused if another writer added a version since.
        tip: the open rows as the caller last left them (`tip_of`); used when it is the newest version's, then
            moved forward to the new version once the transaction commits. Otherwise they are read.

    Returns:
        The new version number.
    """
    report = report or ApplyReport()
    given = tip
    with transaction(con):
        parent = current_version(con, name)
        if expected_parent is not None and parent != expected_parent:
            raise VersionConflictError(
                f"Playbook `{name}` moved to version {parent} while version {expected_parent} was being extended;"
                " run again."
            )
        version = parent + 1
        if tip is None or tip.playbook != name or tip.version != parent:
            tip = tip_of(con, name)
        close, insert = _plan(tip.rows, new, tip.lists)
        if close:
            con.execute(
                "UPDATE entries SET valid_to = ? WHERE playbook = ? AND valid_to IS NULL AND name IN"
                " (SELECT unnest(?))",
                [version, name, close],
            )
        if insert:
            con.execute(
                "INSERT INTO entries SELECT ?, r.name, r.section, r.position, r.text, r.helpful, r.harmful, ?, NULL"
                " FROM (SELECT unnest(?) AS r)",
                [
                    name,
                    version,
                    [
                        {
                            "name": e.name,
                            "section": section,
                            "position": position,
                            "text": e.text,
                            "helpful": e.helpful,
                            "harmful": e.harmful,
                        }
                        for section, position, e in insert
                    ],
                ],
            )
        counts = report.counts()
        con.execute(
            "INSERT INTO versions (playbook, version, source, session_id, parent_version, run_id, ops_proposed,"
            " ops_applied, ops_skipped, evaluations, pruned, n_entries, note)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                name,
                version,
                source,
                session_id,
                parent,
                run_id,
                report.proposed,
                report.applied(),
                sum(c["skipped"] for c in counts.values()),
                sum(1 for e in report.evaluations if e.status == "applied"),
                len(report.pruned),
                new.size(),
                note,
            ],
        )
        if report.outcomes:
            con.execute(
                "INSERT INTO operations (playbook, version, session_id, idx, type, status, code, reason, entry_id,"
                " target_ids, section, old_text, new_text, raw, similarity, trigger) SELECT ?, ?, ?, r.idx, r.type,"
                " r.status, r.code, r.reason, r.entry_id, r.target_ids, r.section, r.old_text, r.new_text, r.raw,"
                " r.similarity, r.trigger"
                " FROM (SELECT unnest(?) AS r)",
                [
                    name,
                    version,
                    session_id,
                    [
                        {
                            "idx": o.index,
                            "type": o.type,
                            "status": o.status,
                            "code": o.code,
                            "reason": o.reason,
                            "entry_id": o.entry_id,
                            "target_ids": json.dumps(o.target_ids),
                            "section": o.section,
                            "old_text": o.old_text,
                            "new_text": o.new_text,
                            "raw": json.dumps(o.raw, default=str),
                            "similarity": o.similarity,
                            "trigger": o.trigger,
                        }
                        for o in report.outcomes
                    ],
                ],
            )
        _record_triggers(con, name, version, report)
        found_again = [o for o in report.outcomes if o.code == "near_duplicate" and o.entry_id]
        if found_again:
            con.executemany(
                "INSERT INTO rediscoveries VALUES (?, ?, ?, ?, ?, ?)",
                [(name, version, session_id, o.entry_id, o.similarity, o.new_text) for o in found_again],
            )
        if report.evaluations:
            con.execute(
                "INSERT INTO evaluations SELECT ?, ?, ?, r.name, r.rating, r.status, r.rationale"
                " FROM (SELECT unnest(?) AS r)",
                [
                    name,
                    version,
                    session_id,
                    [e.model_dump(include={"name", "rating", "status", "rationale"}) for e in report.evaluations],
                ],
            )
        if report.pruned:
            con.execute(
                "INSERT INTO prunes SELECT ?, ?, ?, r.name, r.section, r.text, r.helpful, r.harmful"
                " FROM (SELECT unnest(?) AS r)",
                [name, version, session_id, [p.model_dump() for p in report.pruned]],
            )
        if source == "session" and session_id is not None:
            _mark(con, name, session_id, version, "applied", None)
            con.execute("DELETE FROM session_failures WHERE playbook = ? AND session_id = ?", [name, session_id])
    if given is not None:  # committed: the caller's tip now describes the new version
        rows = tip.rows  # the caller's, or one read afresh in this call: either is ours to move forward
        for gone in close:
            del rows[gone]
        rows.update((e.name, (section, position, e)) for section, position, e in insert)
        given.version, given.rows, given.lists = version, rows, dict(new.sections)
    return version


def _record_triggers(con: duckdb.DuckDBPyConnection, name: str, version: int, report: ApplyReport) -> None:
    """An applied ADD's trigger belongs to its new entry; a MERGE result inherits every trigger of its sources."""
    applied = [o for o in report.outcomes if o.status == "applied" and o.entry_id]
    added = [(name, o.entry_id, o.trigger, version) for o in applied if o.type == "ADD" and o.trigger]
    if added:
        con.executemany("INSERT INTO entry_triggers VALUES (?, ?, ?, ?)", added)
    for o in applied:
        if o.type == "MERGE" and o.target_ids:
            con.execute(
                "INSERT INTO entry_triggers SELECT DISTINCT playbook, ?, trigger, ? FROM entry_triggers"
                " WHERE playbook = ? AND entry_id IN (SELECT unnest(?))",
                [o.entry_id, version, name, o.target_ids],
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


def trigger_recurrence(con: duckdb.DuckDBPyConnection, name: str, entry_id: str | None = None) -> list[dict[str, Any]]:
    """Per live entry with a trigger: sessions where it occurs before and after the entry was first exported."""
    return _rows(
        con,
        "SELECT entry_id, triggers, first_exported_at, sessions_before, seen_before, sessions_after, seen_after"
        " FROM v_trigger_recurrence WHERE playbook = ? AND (? IS NULL OR entry_id = ?) ORDER BY entry_id",
        [name, entry_id, entry_id],
    )


def _mark(
    con: duckdb.DuckDBPyConnection, name: str, session_id: str, version: int | None, status: str, reason: str | None
) -> None:
    con.execute("DELETE FROM applied_sessions WHERE playbook = ? AND session_id = ?", [name, session_id])
    # What was seen of the session is kept, so a session that grows later is taken up again.
    con.execute(
        "INSERT INTO applied_sessions (playbook, session_id, version, status, reason, n_messages, upto)"
        " SELECT ?, ?, ?, ?, ?, (SELECT n_messages FROM sessions WHERE session_id = ?),"
        " (SELECT ended_at FROM sessions WHERE session_id = ?)",
        [name, session_id, version, status, reason, session_id, session_id],
    )


def mark_session(con: duckdb.DuckDBPyConnection, name: str, session_id: str, status: str, reason: str) -> None:
    """Record a session as handled without a new version (for example `skipped: too short`)."""
    with transaction(con):
        _mark(con, name, session_id, None, status, reason)


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
            _mark(con, name, session_id, None, "held", reason)
        elif attempts >= max_attempts:
            _mark(con, name, session_id, None, "quarantined", f"{attempts} failed attempts; last: {reason}")
    return attempts


def failed_sessions(con: duckdb.DuckDBPyConnection, name: str) -> list[dict[str, Any]]:
    """Sessions whose processing failed or was held, with attempts, the last reason and the status
    (`failed`: tried again next run; `quarantined`; `held`: waiting for `playbook retry`)."""
    return _rows(
        con,
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


def history(
    con: duckdb.DuckDBPyConnection, name: str, *, limit: int | None = None, since: Any = None
) -> list[dict[str, Any]]:
    """One dict per version, oldest first: version, created_at, source, session_id, ops_applied, ops_skipped,
    pruned, ...; only the newest `limit` (None: all) created at or after `since` (None: any time)."""
    current_version(con, name)
    rows = _rows(
        con,
        "SELECT version, created_at, source, session_id, parent_version, ops_proposed, ops_applied, ops_skipped,"
        " evaluations, pruned, n_entries, note FROM versions WHERE playbook = ?"
        " AND (?::TIMESTAMPTZ IS NULL OR created_at >= ?::TIMESTAMPTZ) ORDER BY version DESC LIMIT ?",
        [name, since, since, limit if limit is not None else 2**62],
    )
    return rows[::-1]


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


def revert(con: duckdb.DuckDBPyConnection, name: str, version: int, *, run_id: str | None = None) -> int:
    """A new version equal to `version`: history is never rewritten."""
    target = load_version(con, name, version)
    return write_version(con, name, target, source="revert", run_id=run_id, note=f"revert to version {version}")


def playbook_stats(con: duckdb.DuckDBPyConnection, name: str) -> dict[str, Any]:
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
    return {
        "playbook": name,
        "sessions_ingested": one[0],
        "sessions_applied": one[1],
        "sessions_skipped": one[2],
        "latest_version": one[3],
        "prunes": one[4],
        "cost_usd": one[5],
        "llm_calls": one[6],
        "operations": [{"type": t, "status": s, "n": n} for t, s, n in ops],
    }


def version_changes(con: duckdb.DuckDBPyConnection, name: str, after: int, upto: int) -> dict[str, Any]:
    """What happened to `name` in versions `after` < v <= `upto`: versions, sessions applied, and the
    operations applied by type (for a publish commit's message)."""
    row = con.execute(
        "SELECT count(*), count(DISTINCT session_id) FILTER (WHERE source = 'session') FROM versions"
        " WHERE playbook = ? AND version > ? AND version <= ?",
        [name, after, upto],
    ).fetchone()
    ops = con.execute(
        "SELECT type, count(*) FROM operations WHERE playbook = ? AND version > ? AND version <= ?"
        " AND status = 'applied' GROUP BY type ORDER BY type",
        [name, after, upto],
    ).fetchall()
    return {
        "versions": int(row[0]) if row else 0,
        "sessions": int(row[1]) if row else 0,
        "operations": {str(t): int(n) for t, n in ops},
    }
