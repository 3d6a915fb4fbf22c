"""Versioned playbooks: type-2 entry rows, one transaction per version, history, diff and revert.

An entry row is valid for versions `valid_from <= v < valid_to` (`valid_to` NULL while current), so
storage grows with the number of changes, not versions x size, and any version is rebuilt with one range
predicate (the `playbook_at` table macro). Everything that belongs to one version (the version row,
entry changes, the operation log, evaluations, prunes and the session ledger row) is written in ONE
transaction: a crash leaves either the whole version or none of it.
"""

from __future__ import annotations

import bisect
import gc
import itertools
import json
import operator
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import duckdb

from core.errors import StoreError, VersionConflictError
from core.models import ApplyReport, Entry, Playbook
from core.store.db import transaction
from core.store.ledger import mark_all_applied, mark_applied
from core.store.registry import cached_sections, known_sections, missing_playbook

__all__ = [
    "SessionChange",
    "Source",
    "Tip",
    "current_version",
    "entry_since",
    "live_entries",
    "load_version",
    "rediscovery_counts",
    "revert",
    "tip_of",
    "write_version",
]

Source = Literal["init", "session", "import", "revert", "consolidate", "review", "retire", "feedback"]


def current_version(con: duckdb.DuckDBPyConnection, name: str) -> int:
    """The newest version number of playbook `name`."""
    row = con.execute("SELECT max(version) FROM versions WHERE playbook = ?", [name]).fetchone()
    if not row or row[0] is None:
        raise missing_playbook(con, name)
    return int(row[0])


def live_entries(con: duckdb.DuckDBPyConnection, name: str) -> int:
    """How many entries the newest version of `name` holds."""
    row = con.execute("SELECT count(*) FROM entries WHERE playbook = ? AND valid_to IS NULL", [name]).fetchone()
    return int(row[0]) if row else 0


def rediscovery_counts(con: duckdb.DuckDBPyConnection, name: str) -> dict[str, int]:
    """How often each entry of `name` was found again (a near-duplicate ADD skipped in its favour)."""
    rows = con.execute("SELECT entry_id, count(*) FROM rediscoveries WHERE playbook = ? GROUP BY 1", [name])
    return {r[0]: int(r[1]) for r in rows.fetchall()}


def entry_since(con: duckdb.DuckDBPyConnection, name: str) -> dict[str, int]:
    """The version at which each live entry's current text and counters began (how recently it changed)."""
    rows = con.execute("SELECT name, valid_from FROM entries WHERE playbook = ? AND valid_to IS NULL", [name])
    return {r[0]: int(r[1]) for r in rows.fetchall()}


_ALL_FIELDS = frozenset(Entry.model_fields)
_new = object.__new__
_set = object.__setattr__


def _trusted_entry(name: str, text: str, helpful: int, harmful: int) -> Entry:
    """An `Entry` from a row the store wrote (validated when it was written), built without validating it again."""
    entry = _new(Entry)
    _set(entry, "__dict__", {"name": name, "text": text, "helpful": helpful, "harmful": harmful})
    _set(entry, "__pydantic_fields_set__", set(_ALL_FIELDS))
    _set(entry, "__pydantic_extra__", None)
    _set(entry, "__pydantic_private__", None)
    return entry


class _Built:
    """The entries built from stored rows, shared, since entries are immutable values: keyed by the very row tuple
    a query returns (section, name, text, helpful, harmful), so a rebuild of an unchanged entry is one look-up in C
    per row (`map(dict.get, rows)`), with no key built for it. Bounded: emptied when it holds `limit` rows.

    The last few row lists asked about are kept with their entries: rows equal to one of them, compared in C
    (string by string, which reads each string once where a look-up hashes it: ~0.08 ms at 2,500 rows, not
    ~0.23), give its entries again, the very objects the look-ups would give (both are forgotten together)."""

    def __init__(self, limit: int = 1 << 16, recent: int = 4) -> None:
        self.limit = limit
        self.by_row: dict[tuple[Any, ...], Entry] = {}
        self.keep = recent
        # (rows, their entries), newest first; replaced whole, never changed, so threads read it as it was.
        self.recent: tuple[tuple[list[tuple[Any, ...]], list[Entry]], ...] = ()

    def entries(self, rows: Sequence[tuple[Any, ...]]) -> list[Entry]:
        """The entry of each (section, name, text, helpful, harmful) row, in order."""
        rows = list(rows)
        recent = self.recent
        for seen, built in recent:
            if len(seen) == len(rows) and seen == rows:
                return list(built)
        found: list[Entry | None] = list(map(self.by_row.get, rows))
        # `None in found` would call Entry.__eq__ a row; `all` tests each in C (an entry is always true).
        if not all(found):
            if len(self.by_row) + len(rows) > self.limit:
                self.clear()
                recent = ()
            # Thousands of new objects, none in a cycle: the collections they would set off (a third of a cold
            # rebuild's time at 2,500 entries) could free nothing of them. Re-enabled only if it was enabled.
            with _collector_paused():
                for i, entry in enumerate(found):
                    if entry is None:
                        row = rows[i]
                        found[i] = self.by_row[row] = _trusted_entry(row[1], row[2], row[3], row[4])
        entries: list[Entry] = found  # type: ignore[assignment]  # every None was replaced
        self.recent = ((rows, entries), *recent[: self.keep - 1])
        return list(entries)

    def clear(self) -> None:
        """Forget every entry built (as in a process that has built none)."""
        self.recent = ()
        self.by_row.clear()


_built = _Built()
_first = operator.itemgetter(0)

# The rows of a version, each (section, name, text, helpful, harmful) in the playbook's order, after one row of the
# version itself: (NULL, NULL, NULL, its creation time in microseconds since the epoch, NULL), which sorts first. One
# round trip; the version row is missing when the version is. The version is read by a row of its own, not a join
# (a column of every row), which cost 0.4 ms at 2,500 entries. A row's section comes as its place in the playbook's
# sections ($3, 1-based; 0 for a section not among them): an integer, where the name would be one new string a row
# (0.3-0.5 ms at 2,500 entries, a fifth of the whole query); the rows sort by it, so they come in the playbook's order.
_ROWS_AT = (
    "SELECT section, name, text, helpful, harmful FROM ("
    " SELECT NULL AS section, NULL AS name, NULL AS text, epoch_us(created_at) AS helpful, NULL AS harmful,"
    " NULL AS position FROM versions WHERE playbook = $1 AND version = $2"
    " UNION ALL SELECT coalesce(list_position($3, section), 0), name, text, helpful, harmful, position FROM entries"
    " WHERE playbook = $1 AND valid_from <= $2 AND (valid_to IS NULL OR valid_to > $2)"
    ") ORDER BY section NULLS FIRST, position"
)

# The same for the newest version: its rows are the open ones.
_ROWS_NEWEST = (
    "SELECT section, name, text, helpful, harmful FROM ("
    " SELECT NULL AS section, NULL AS name, NULL AS text, epoch_us(arg_max(created_at, version)) AS helpful,"
    " NULL AS harmful, NULL AS position FROM versions WHERE playbook = $1 HAVING count(*) > 0"
    " UNION ALL SELECT coalesce(list_position($2, section), 0), name, text, helpful, harmful, position FROM entries"
    " WHERE playbook = $1 AND valid_to IS NULL"
    ") ORDER BY section NULLS FIRST, position"
)

# The same rows with their sections by name, in the order of the names: for a version that holds an entry in a
# section its playbook does not declare (which no writer makes; kept, as every stored row is).
_NAMED_AT = (
    "SELECT section, name, text, helpful, harmful FROM ("
    " SELECT NULL AS section, NULL AS name, NULL AS text, epoch_us(created_at) AS helpful, NULL AS harmful,"
    " NULL AS position FROM versions WHERE playbook = $1 AND version = $2"
    " UNION ALL SELECT section, name, text, helpful, harmful, position FROM entries"
    " WHERE playbook = $1 AND valid_from <= $2 AND (valid_to IS NULL OR valid_to > $2)"
    ") ORDER BY section NULLS FIRST, position"
)
_NAMED_NEWEST = (
    "SELECT section, name, text, helpful, harmful FROM ("
    " SELECT NULL AS section, NULL AS name, NULL AS text, epoch_us(arg_max(created_at, version)) AS helpful,"
    " NULL AS harmful, NULL AS position FROM versions WHERE playbook = $1 HAVING count(*) > 0"
    " UNION ALL SELECT section, name, text, helpful, harmful, position FROM entries"
    " WHERE playbook = $1 AND valid_to IS NULL"
    ") ORDER BY section NULLS FIRST, position"
)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def load_version(con: duckdb.DuckDBPyConnection, name: str, version: int | None = None) -> Playbook:
    """Rebuild playbook `name` at `version` (default: the newest).

    One round trip for a version that holds entries (the version's row, then its entries' by the range predicate);
    the playbook's facts are read only when that finds no entry (an empty version, or one that does not exist).
    The rows, which the store wrote from validated entries, are trusted (not validated again). Read as tuples, not
    numpy columns: 2 ms more at 5,000 entries, where numpy's import costs a read command (`show`, `diff`) ~90 ms.
    """
    rows: list[tuple[Any, ...]] = []
    by_number = True  # whether the rows name their sections by number (their place in the playbook's, from 1)
    if version is None or version >= 0:
        known = known_sections(con, name).names
        if version is None:
            rows = con.execute(_ROWS_NEWEST, [name, known]).fetchall()
        else:
            rows = con.execute(_ROWS_AT, [name, version, known]).fetchall()
        if len(rows) > 1 and rows[1][0] == 0:  # an entry in an undeclared section (sorted first): read them by name
            sql, params = (_NAMED_NEWEST, [name]) if version is None else (_NAMED_AT, [name, version])
            rows, by_number = con.execute(sql, params).fetchall(), False
    created: datetime | None
    by_section: dict[str, list[Entry]]
    if len(rows) > 1 and rows[0][0] is None:  # the version's row, then its entries
        created = _EPOCH + timedelta(microseconds=int(rows[0][3]))
        del rows[0]
        by_section = {s: [] for s in known}
        entries = _built.entries(rows)
        start = 0
        # The rows come section by section: each section's run of rows is one slice of the entries.
        if by_number:  # in the playbook's order, numbered from 1: where each run ends is a binary search
            for number, section in enumerate(known, 1):
                end = bisect.bisect_right(rows, number, start, key=_first)
                by_section[section] = entries[start:end]
                start = end
        else:
            for section, group in itertools.groupby(map(_first, rows)):
                end = start + len(list(group))
                by_section.setdefault(section, []).extend(entries[start:end])
                start = end
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
        by_section = {s: [] for s in cached_sections(raw_sections).names}
    return Playbook.model_construct(
        contract_version=1,
        version="1.0",
        last_updated=created.astimezone(UTC).isoformat(timespec="seconds") if created else None,
        sections=by_section,
    )


_PAUSE = threading.Lock()
_paused = [0, False]  # how many builds pause the collector now, and whether it was on before the first


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cycle collector off while a block runs, and back on after the last of the blocks running at once, if it
    was on before the first (threads of one run may rebuild at once: each turning it back on its own could leave it
    off for good)."""
    with _PAUSE:
        if _paused[0] == 0:
            _paused[1] = gc.isenabled()
            gc.disable()
        _paused[0] += 1
    try:
        yield
    finally:
        with _PAUSE:
            _paused[0] -= 1
            if _paused[0] == 0 and _paused[1]:
                gc.enable()


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
    # Keyed as `load_version` keys them (a section by its number), so both share the entries built.
    rows = con.execute(
        "SELECT coalesce(list_position(?, section), 0), name, text, helpful, harmful, position, section FROM entries"
        " WHERE playbook = ? AND valid_to IS NULL",
        [known_sections(con, name).names, name],
    ).fetchall()
    # The entries `load_version` built of the same rows (the same objects, so a write compares them by identity),
    # keyed by section name when a row's section is undeclared, as `load_version` then reads them.
    named = any(r[0] == 0 for r in rows)
    entries = _built.entries([(r[6], *r[1:5]) if named else r[:5] for r in rows])
    return Tip(name, version, {r[1]: (r[6], r[5], e) for r, e in zip(rows, entries, strict=True)})


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


@dataclass(frozen=True)
class SessionChange:
    """What one session did in a version: its report, and a note on how it was applied. A version may hold several
    (a keyless run writes one version per epoch); each of its rows (operations, tags, prunes, rediscoveries, the
    ledger and `version_sessions`) names the session that made it."""

    session_id: str | None
    report: ApplyReport
    note: str | None = None


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
    changes: Sequence[SessionChange] = (),
) -> int:
    """Store `new` as the next version of `name`, with its report, in one transaction.

    Args:
        session_id: the session whose `report` this version applies (one session's version).
        changes: instead of `session_id` and `report`, the sessions this version applies, in the order they were
            applied (an epoch's, in one version); their operations are numbered in that order within the version.
        expected_parent: when given, the write is refused if another writer added a version since.
        tip: the open rows as the caller last left them (`tip_of`); used when it is the newest version's, then
            moved forward to the new version once the transaction commits. Otherwise they are read.

    Returns:
        The new version number.
    """
    parts = list(changes) or [SessionChange(session_id, report or ApplyReport(), note)]
    if changes and (session_id is not None or report is not None):
        raise ValueError("write_version takes either `changes` or `session_id` and `report`, not both")
    if changes:
        session_id = parts[0].session_id if len(parts) == 1 else None
        noted = [(c.session_id, c.note) for c in parts if c.note]
        if len(parts) == 1:
            note = note or (noted[0][1] if noted else None)
        else:  # the version's note says how many sessions it holds, and each session's own note
            said = [f"{len(parts)} sessions of one epoch"] + [f"{sid}: {n}" for sid, n in noted]
            note = "; ".join(([note] if note else []) + said)
    # Each part's operations are numbered after the previous part's: `idx` orders a version's operations as applied.
    offsets = list(
        itertools.accumulate((max((o.index for o in c.report.outcomes), default=-1) + 1 for c in parts), initial=0)
    )
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
        reports = [c.report for c in parts]
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
                sum(r.proposed for r in reports),
                sum(r.applied() for r in reports),
                sum(c["skipped"] for r in reports for c in r.counts().values()),
                sum(1 for r in reports for e in r.evaluations if e.status == "applied"),
                sum(len(r.pruned) for r in reports),
                new.size(),
                note,
            ],
        )
        operations = [
            {
                "session_id": c.session_id,
                "idx": at + o.index,
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
            for c, at in zip(parts, offsets, strict=False)
            for o in c.report.outcomes
        ]
        if operations:
            con.execute(
                "INSERT INTO operations (playbook, version, session_id, idx, type, status, code, reason, entry_id,"
                " target_ids, section, old_text, new_text, raw, similarity, trigger) SELECT ?, ?, r.session_id, r.idx,"
                " r.type, r.status, r.code, r.reason, r.entry_id, r.target_ids, r.section, r.old_text, r.new_text,"
                " r.raw, r.similarity, r.trigger"
                " FROM (SELECT unnest(?) AS r)",
                [name, version, operations],
            )
        for c in parts:
            _record_triggers(con, name, version, c.report)
        _record_lessons(con, name, version, parts, offsets)
        found_again = [
            (name, version, c.session_id, o.entry_id, o.similarity, o.new_text)
            for c in parts
            for o in c.report.outcomes
            if o.code in ("near_duplicate", "duplicate_text") and o.entry_id
        ]
        if found_again:
            _insert(con, "rediscoveries", _REDISCOVERY, found_again)
        evaluations = [
            e.model_dump(include={"name", "rating", "status", "rationale"}) | {"session_id": c.session_id}
            for c in parts
            for e in c.report.evaluations
        ]
        if evaluations:
            con.execute(
                "INSERT INTO evaluations SELECT ?, ?, r.session_id, r.name, r.rating, r.status, r.rationale"
                " FROM (SELECT unnest(?) AS r)",
                [name, version, evaluations],
            )
        pruned = [p.model_dump() | {"session_id": c.session_id} for c in parts for p in c.report.pruned]
        if pruned:
            con.execute(
                "INSERT INTO prunes SELECT ?, ?, r.session_id, r.name, r.section, r.text, r.helpful, r.harmful"
                " FROM (SELECT unnest(?) AS r)",
                [name, version, pruned],
            )
        sessions = [c for c in parts if c.session_id is not None]
        if sessions:  # which sessions this version applies (several for an epoch's version), with their notes
            con.execute(
                "INSERT INTO version_sessions SELECT ?, ?, unnest(?), unnest(?)",
                [name, version, [c.session_id for c in sessions], [c.note for c in sessions]],
            )
        if source == "session" and sessions:
            ids = [c.session_id for c in sessions if c.session_id is not None]
            if len(ids) == 1:
                mark_applied(con, name, ids[0], version, "applied", None)
            else:
                mark_all_applied(con, name, dict.fromkeys(ids, version))
            con.execute(
                "DELETE FROM session_failures WHERE playbook = ? AND session_id IN (SELECT unnest(?))", [name, ids]
            )
    if given is not None:  # committed: the caller's tip now describes the new version
        rows = tip.rows  # the caller's, or one read afresh in this call: either is ours to move forward
        for gone in close:
            del rows[gone]
        rows.update((e.name, (section, position, e)) for section, position, e in insert)
        given.version, given.rows, given.lists = version, rows, dict(new.sections)
    return version


_REDISCOVERY = ("VARCHAR", "INTEGER", "VARCHAR", "VARCHAR", "DOUBLE", "VARCHAR")


def _insert(con: duckdb.DuckDBPyConnection, table: str, types: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """`rows` into `table` (its columns in order, of `types`) in one statement: `executemany` runs one a row."""
    if not rows:
        return
    columns = ", ".join(f"unnest(?::{kind}[])" for kind in types)
    con.execute(f"INSERT INTO {table} SELECT {columns}", [list(c) for c in zip(*rows, strict=True)])


def _record_triggers(con: duckdb.DuckDBPyConnection, name: str, version: int, report: ApplyReport) -> None:
    """An applied ADD's trigger belongs to its new entry; a MERGE result inherits every trigger of its sources."""
    applied = [o for o in report.outcomes if o.status == "applied" and o.entry_id]
    added = [(name, o.entry_id, o.trigger, version) for o in applied if o.type == "ADD" and o.trigger]
    if added:
        _insert(con, "entry_triggers", ("VARCHAR", "VARCHAR", "VARCHAR", "INTEGER"), added)
    for o in applied:
        if o.type == "MERGE" and o.target_ids:
            con.execute(
                "INSERT INTO entry_triggers SELECT DISTINCT playbook, ?, trigger, ? FROM entry_triggers"
                " WHERE playbook = ? AND entry_id IN (SELECT unnest(?))",
                [o.entry_id, version, name, o.target_ids],
            )


def _record_lessons(
    con: duckdb.DuckDBPyConnection, name: str, version: int, parts: list[SessionChange], offsets: list[int]
) -> None:
    """What each applied ADD rests on: the rules miner's typed lesson (kept for its guards) and the citations read
    from it (`core.citations`), or a model's `citations`, each kept only when the ADD's session mentions it
    (one it never mentions is dropped, and the operation's reason says so); with the session's project folder."""
    added_by = [
        [
            o
            for o in c.report.outcomes
            if o.status == "applied" and o.type == "ADD" and o.entry_id and o.new_text and isinstance(o.raw, dict)
        ]
        for c in parts
    ]
    if not any(added_by):
        return
    from core.citations import Citation, citations_from_words, citations_of  # only for a version that adds one
    from core.guards import bound_lesson

    lessons = [o for added in added_by for o in added if isinstance(o.raw.get("lesson"), dict)]
    if lessons:
        _insert(
            con,
            "entry_lessons",
            ("VARCHAR", "VARCHAR", "INTEGER", "VARCHAR"),
            [(name, o.entry_id, version, json.dumps(o.raw["lesson"])) for o in lessons],
        )
    ids = [c.session_id for c, added in zip(parts, added_by, strict=True) if added and c.session_id is not None]
    try:
        roots = dict(
            con.execute("SELECT session_id, cwd FROM sessions WHERE session_id IN (SELECT unnest(?))", [ids]).fetchall()
        )
    except duckdb.CatalogException:  # a database without sessions of its own (an imported playbook's)
        roots = {}
    rows: list[tuple[object, ...]] = []
    for c, at, added in zip(parts, offsets, added_by, strict=False):
        known = c.session_id is not None and c.session_id in roots
        session, root = (c.session_id, roots[c.session_id]) if known else (None, None)
        for o in added:
            cited: list[Citation] = []
            if isinstance(o.raw.get("lesson"), dict):
                lesson = bound_lesson(o.raw["lesson"], o.new_text or "")
                cited = citations_of(lesson) if lesson is not None else []
            elif isinstance(o.raw.get("citations"), list):
                said = [v for v in o.raw["citations"] if isinstance(v, str) and v.strip()][:20]
                kept = [v for v in said if session is not None and _mentioned(con, session, v)]
                if len(kept) < len(said):
                    dropped = ", ".join(f"`{v[:80]}`" for v in said if v not in kept)
                    con.execute(
                        "UPDATE operations SET reason = ? WHERE playbook = ? AND version = ? AND idx = ?",
                        [f"citations the session never mentions were dropped: {dropped}", name, version, at + o.index],
                    )
                cited = citations_from_words(kept)
            rows += [(name, o.entry_id, version, x.kind, x.value, x.manifest, x.folder, root) for x in cited]
    if rows:
        _insert(con, "entry_citations", ("VARCHAR", "VARCHAR", "INTEGER") + ("VARCHAR",) * 5, rows)


def _mentioned(con: duckdb.DuckDBPyConnection, session_id: str, value: str) -> bool:
    """Whether the session's messages (their text or a tool's input) hold `value` word for word."""
    row = con.execute(
        "SELECT count(*) FROM messages WHERE session_id = ? AND (contains(text, ?) OR contains(tool_input, ?))",
        [session_id, value, value],
    ).fetchone()
    return bool(row and row[0])


def revert(con: duckdb.DuckDBPyConnection, name: str, version: int, *, run_id: str | None = None) -> int:
    """A new version equal to `version`: history is never rewritten."""
    target = load_version(con, name, version)
    return write_version(con, name, target, source="revert", run_id=run_id, note=f"revert to version {version}")
