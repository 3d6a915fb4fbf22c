"""Versioned playbooks (`core.store.versions`): type-2 entry rows, one transaction per version, history, diff,
revert, and a writer's tip that gives the very rows a read would."""

from __future__ import annotations

from datetime import UTC
from typing import Any

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import StoreError, TransientError, VersionConflictError
from core.models import CuratorOutput, Entry, Playbook, ReflectorOutput
from core.operations import apply_session, empty_playbook
from core.store.db import connect
from core.store.history import diff_versions, history, version_changes
from core.store.registry import ensure_playbook, sections_of
from core.store.versions import (
    SessionChange,
    current_version,
    entry_since,
    live_entries,
    load_version,
    revert,
    tip_of,
    write_version,
)
from tests.helpers import pb
from tests.profiles import examples


def session_step(
    con: duckdb.DuckDBPyConnection, ops: list[dict[str, Any]], tags: list[dict[str, str]], session: str
) -> int:
    current = load_version(con, "default")
    new, report = apply_session(current, ReflectorOutput(bullet_tags=tags), CuratorOutput(operations=ops))
    return write_version(con, "default", new, source="session", session_id=session, report=report)


def test_versions_are_type2_rows(con: duckdb.DuckDBPyConnection) -> None:
    ensure_playbook(con, "default")
    v1 = write_version(con, "default", pb(pat=[("pat-001", "A", 0, 0), ("pat-002", "B", 0, 0)]), source="import")
    v2 = session_step(con, [{"type": "UPDATE", "target_id": "pat-001", "text": "A2"}], [], "s1")
    v3 = session_step(con, [{"type": "DELETE", "target_id": "pat-002"}], [{"name": "pat-001", "tag": "helpful"}], "s2")
    assert (v1, v2, v3) == (1, 2, 3)
    assert [(e.name, e.text) for _, e in load_version(con, "default", 1).entries()] == [
        ("pat-001", "A"),
        ("pat-002", "B"),
    ]
    assert [(e.name, e.text) for _, e in load_version(con, "default", 2).entries()] == [
        ("pat-001", "A2"),
        ("pat-002", "B"),
    ]
    assert [(e.name, e.text, e.helpful) for _, e in load_version(con, "default").entries()] == [("pat-001", "A2", 1)]
    # pat-002 kept one row over versions 1-2; pat-001 has three rows (import, update, counter change).
    rows = con.execute("SELECT name, valid_from, valid_to FROM entries ORDER BY name, valid_from").fetchall()
    assert rows == [("pat-001", 1, 2), ("pat-001", 2, 3), ("pat-001", 3, None), ("pat-002", 1, 3)]
    ops = con.execute("SELECT version, session_id, type, status FROM operations ORDER BY version").fetchall()
    assert ops == [(2, "s1", "UPDATE", "applied"), (3, "s2", "DELETE", "applied")]
    assert con.execute("SELECT session_id, version, status FROM applied_sessions ORDER BY version").fetchall() == [
        ("s1", 2, "applied"),
        ("s2", 3, "applied"),
    ]
    assert con.execute("SELECT name, rating FROM evaluations").fetchall() == [("pat-001", "helpful")]


def test_history_diff_revert(con: duckdb.DuckDBPyConnection) -> None:
    ensure_playbook(con, "default")
    write_version(con, "default", pb(oth=[("oth-001", "x", 0, 0)]), source="import")
    session_step(con, [{"type": "ADD", "text": "y"}, {"type": "DELETE", "target_id": "ghost"}], [], "s1")
    session_step(con, [{"type": "DELETE", "target_id": "oth-001"}], [], "s2")
    changes = {(c.kind, c.name) for c in diff_versions(con, "default", 1, 3)}
    assert changes == {("added", "oth-002"), ("removed", "oth-001")}
    v = revert(con, "default", 1)
    assert v == 4 and load_version(con, "default", 4).sections == load_version(con, "default", 1).sections
    rows = history(con, "default")
    assert [(r.version, r.source, r.session_id, r.ops_applied, r.ops_skipped, r.n_entries) for r in rows] == [
        (0, "init", None, 0, 0, 0),
        (1, "import", None, 0, 0, 1),
        (2, "session", "s1", 1, 1, 2),
        (3, "session", "s2", 1, 0, 1),
        (4, "revert", None, 0, 0, 1),
    ]


def test_unknown_playbook_and_version_messages(con: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(StoreError, match="Playbook `nope` does not exist"):
        load_version(con, "nope")
    ensure_playbook(con, "default")
    with pytest.raises(StoreError, match=r"Playbook `default` has no version 5; versions run from 0 to 0\."):
        load_version(con, "default", 5)


def test_expected_parent_guards_concurrent_extension(con: duckdb.DuckDBPyConnection) -> None:
    ensure_playbook(con, "default")
    write_version(con, "default", pb(), source="import")
    with pytest.raises(VersionConflictError, match="moved to version 1 while version 0") as conflict:
        write_version(con, "default", pb(), source="import", expected_parent=0)
    assert isinstance(conflict.value, TransientError)  # "run again" is worth retrying
    assert current_version(con, "default") == 1


@settings(max_examples=examples(25))
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.sampled_from(["ADD", "UPDATE", "DELETE", "MERGE"]),
                st.integers(0, 6),
                st.integers(0, 6),
                st.sampled_from(["helpful", "harmful", "neutral"]),
            ),
            max_size=5,
        ),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from(["none", "kept", "stale"]),
)
@pytest.mark.slow
def test_store_round_trip_every_version(
    tmp_path_factory: pytest.TempPathFactory, steps: list[Any], tip_use: str
) -> None:
    # A writer's tip (its open rows kept in memory) gives the very rows a read would; a stale one is ignored.
    connection = connect(tmp_path_factory.mktemp("rt") / "rt.duckdb")
    ensure_playbook(connection, "default")
    expected = [empty_playbook()]
    tip = tip_of(connection, "default") if tip_use != "none" else None
    for n, step in enumerate(steps):
        current = expected[-1]
        ids = [e.name for _, e in current.entries()] or ["oth-001"]
        ops: list[dict[str, Any]] = []
        tags = []
        for kind, a, b, tag in step:
            x, y = ids[a % len(ids)], ids[b % len(ids)]
            ops.append(
                {
                    "ADD": {"type": "ADD", "text": f"t{n}-{a}-{b}", "section": ["pat", "OTHERS"][a % 2]},
                    "UPDATE": {"type": "UPDATE", "target_id": x, "text": f"u{n}-{b}"},
                    "DELETE": {"type": "DELETE", "target_id": x},
                    "MERGE": {"type": "MERGE", "source_ids": [x, y], "merged_text": f"m{n}-{a}"},
                }[kind]
            )
            tags.append({"name": y, "tag": tag})
        new, report = apply_session(current, ReflectorOutput(bullet_tags=tags), CuratorOutput(operations=ops))
        if tip_use == "stale" and n % 2:
            write_version(connection, "default", current, source="import")  # another writer, unknown to the tip
        write_version(connection, "default", new, source="session", session_id=f"s{n}", report=report, tip=tip)
        if tip is not None:
            fresh = tip_of(connection, "default")
            assert (tip.version, tip.rows) == (fresh.version, fresh.rows)
        if tip_use == "stale" and n % 2:
            expected.append(current)
        expected.append(new)
    for version, model in enumerate(expected):
        assert load_version(connection, "default", version).sections == model.sections
        if version:
            before = {e.name: (sec, e) for sec, e in expected[version - 1].entries()}
            after = {e.name: (sec, e) for sec, e in model.entries()}
            moved = {n for n in before.keys() & after.keys() if before[n] != after[n]}
            changes = {(c.kind, c.name) for c in diff_versions(connection, "default", version - 1, version)}
            assert changes == (
                {("added", n) for n in after.keys() - before.keys()}
                | {("removed", n) for n in before.keys() - after.keys()}
                | {("changed", n) for n in moved}
            )
    newest = len(expected) - 1
    assert live_entries(connection, "default") == expected[-1].size()
    # An entry's row began at the last version that changed it (its text, counters or section).
    began = {
        e.name: max(
            v
            for v in range(newest + 1)
            if (s, e) in expected[v].entries() and (v == 0 or (s, e) not in expected[v - 1].entries())
        )
        for s, e in expected[-1].entries()
    }
    assert entry_since(connection, "default") == began
    sessions = version_changes(connection, "default", 0, newest).sessions
    assert sessions == len(steps)  # every step was a session's version
    # The newest, asked without a number (its open rows), and each version's time, read in the same round trip.
    assert load_version(connection, "default").sections == expected[-1].sections
    created = connection.execute("SELECT version, created_at FROM versions WHERE playbook = 'default'").fetchall()
    for version, at in created:
        stamp = at.astimezone(UTC).isoformat(timespec="seconds")
        assert load_version(connection, "default", version).last_updated == stamp
    connection.close()


def test_history_limit_and_since_and_the_trusted_rebuild(con: duckdb.DuckDBPyConnection) -> None:
    """`history` shows the newest `limit` versions, oldest first, from `since`; the rebuilt playbook equals a
    validated one (its rows are trusted, not validated again)."""
    ensure_playbook(con, "default")
    for i in range(1, 8):
        write_version(
            con, "default", pb(pat=[(f"pat-{n:03d}", f"Lesson {n}.", n, 0) for n in range(1, i + 1)]), source="import"
        )
    assert [r.version for r in history(con, "default")] == list(range(8))
    assert [r.version for r in history(con, "default", limit=3)] == [5, 6, 7]
    con.execute("UPDATE versions SET created_at = TIMESTAMPTZ '2026-01-01' + INTERVAL (version) DAY")
    assert [r.version for r in history(con, "default", since="2026-01-06")] == [5, 6, 7]
    assert [r.version for r in history(con, "default", limit=2, since="2026-01-02")] == [6, 7]
    rebuilt = load_version(con, "default", 4)
    expected = Playbook.model_validate(
        pb(pat=[(f"pat-{n:03d}", f"Lesson {n}.", n, 0) for n in range(1, 5)]).model_dump()
    )
    assert rebuilt.sections == expected.sections and rebuilt.last_updated == "2026-01-05T00:00:00+00:00"
    assert Playbook.model_validate(rebuilt.model_dump()) == rebuilt
    with pytest.raises(StoreError, match="has no version 9"):
        load_version(con, "default", 9)
    with pytest.raises(StoreError, match="does not exist"):
        load_version(con, "nope")


STEPS = st.lists(
    st.tuples(
        st.sampled_from(["ADD", "UPDATE", "DELETE", "TAG"]),
        st.sampled_from(["pat-001", "pat-002", "pat-003"]),
        st.sampled_from(["Lesson one.", "Lesson two, longer.", "Lesson three."]),
    ),
    min_size=1,
    max_size=6,
)


def _apply_steps(steps: list[tuple[str, str, str]]) -> list[tuple[Playbook, SessionChange]]:
    """Each step as one session's change (`s0`, `s1`, ...), applied in order from a two-entry playbook."""
    current = pb(pat=[("pat-001", "First.", 0, 0), ("pat-002", "Second.", 0, 0)])
    done = []
    for i, (kind, target, text) in enumerate(steps):
        ops: list[dict[str, Any]] = []
        tags: list[dict[str, str]] = []
        if kind == "TAG":
            tags = [{"name": target, "tag": "helpful"}]
        elif kind == "ADD":
            ops = [{"type": "ADD", "text": f"{text} ({i})", "section": "PATTERNS & APPROACHES"}]
        else:
            ops = [{"type": kind, "target_id": target, "text": f"{text} ({i})"}]
        current, report = apply_session(
            current, ReflectorOutput(bullet_tags=tags), CuratorOutput(operations=ops), exposed=None
        )
        done.append((current, SessionChange(f"s{i}", report, None)))
    return done


@settings(max_examples=examples(40), deadline=None)
@given(steps=STEPS)
def test_one_version_of_several_sessions_holds_what_a_version_each_would(steps: list[tuple[str, str, str]]) -> None:
    """An epoch's sessions written as one version (a keyless run's) end at the same playbook as a version per
    session, and every operation, tag and prune names the same session, in the same order; the version lists
    the sessions it applied, and the ledger has each applied at it."""
    done = _apply_steps(steps)
    apart, together = connect(":memory:"), connect(":memory:")
    for c in (apart, together):
        ensure_playbook(c, "default")
        write_version(
            c, "default", pb(pat=[("pat-001", "First.", 0, 0), ("pat-002", "Second.", 0, 0)]), source="import"
        )
    for new, change in done:
        write_version(apart, "default", new, source="session", session_id=change.session_id, report=change.report)
    version = write_version(together, "default", done[-1][0], source="session", changes=[c for _, c in done])
    assert version == 2 and load_version(together, "default").sections == load_version(apart, "default").sections
    for table, order in (
        ("operations", "version, idx"),
        ("evaluations", "session_id, name"),
        ("prunes", "session_id, name"),
    ):
        columns = "session_id, type, status, entry_id, new_text" if table == "operations" else "session_id, name"
        query = f"SELECT {columns} FROM {table} ORDER BY {order}"
        assert together.execute(query).fetchall() == apart.execute(query).fetchall()
    changed = [c.session_id for _, c in done if not c.report.empty()]
    held = together.execute("SELECT session_id FROM version_sessions WHERE version = 2").fetchall()
    assert [r[0] for r in held] == [c.session_id for _, c in done]
    ledger = together.execute("SELECT session_id, version FROM applied_sessions ORDER BY session_id").fetchall()
    assert ledger == sorted((c.session_id, 2) for _, c in done)
    assert version_changes(together, "default", 1, 2).sessions == len({c.session_id for _, c in done})
    assert version_changes(apart, "default", 1, len(done) + 1).sessions == len(done) >= len(changed)
    (row,) = [r for r in history(together, "default") if r.version == 2]
    assert row.session_id == (done[0][1].session_id if len(done) == 1 else None)
    apart.close()
    together.close()


def _rebuilt_by_validation(con: duckdb.DuckDBPyConnection, name: str, version: int | None) -> Playbook:
    """The rebuild `load_version` must equal, done the plain way: the version checked, its entry rows read by the
    range predicate, each validated into an `Entry`, grouped into the playbook's sections (others after them)."""
    latest = current_version(con, name)
    at = latest if version is None else version
    if not 0 <= at <= latest:
        raise StoreError(f"Playbook `{name}` has no version {at}; versions run from 0 to {latest}.")
    created = con.execute("SELECT created_at FROM versions WHERE playbook = ? AND version = ?", [name, at]).fetchone()
    assert created is not None
    rows = con.execute(
        "SELECT section, name, text, helpful, harmful FROM entries WHERE playbook = ? AND valid_from <= ?"
        " AND (valid_to IS NULL OR valid_to > ?) ORDER BY section, position",
        [name, at, at],
    ).fetchall()
    sections: dict[str, list[Entry]] = {s: [] for s in sections_of(con, name).names}
    for section, entry_name, text, helpful, harmful in rows:
        sections.setdefault(section, []).append(Entry(name=entry_name, text=text, helpful=helpful, harmful=harmful))
    stamp = created[0].astimezone(UTC).isoformat(timespec="seconds")
    return Playbook(sections=sections, last_updated=stamp)


# Versions drawn from few sections (two the playbook does not list), names and texts, so entries come back
# unchanged, move between sections and repeat in another playbook: the rows a rebuild shares entries between.
_SECTION = st.sampled_from(["PATTERNS & APPROACHES", "OTHERS", "zz later", "Äußeres", "MISTAKES TO AVOID"])
_VERSION = st.dictionaries(
    st.sampled_from([f"pat-{n:03d}" for n in range(1, 9)]),
    st.tuples(_SECTION, st.sampled_from(["Run it.", "Read the log first.", "ß ✓ unicode"]), st.integers(0, 2)),
    max_size=7,
)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(_VERSION, min_size=1, max_size=6), st.booleans())
def test_a_rebuild_equals_a_validated_one_at_every_version_cold_or_warm(
    tmp_path_factory: pytest.TempPathFactory, versions: list[dict[str, tuple[str, str, int]]], second: bool
) -> None:
    """Every version (the newest asked with and without its number), each rebuilt twice (the second from the
    entries the first built), equals the plain validated rebuild; a version that does not exist is refused as it
    is; and a writer's tip holds the very entries a rebuild of the newest gave."""
    connection = connect(tmp_path_factory.mktemp("rebuild") / "r.duckdb")
    try:
        for playbook in ["default", "other"] if second else ["default"]:
            ensure_playbook(connection, playbook)
            for drawn in versions:
                sections: dict[str, list[Entry]] = {}
                for entry_name, (section, text, helpful) in drawn.items():
                    sections.setdefault(section, []).append(Entry(name=entry_name, text=text, helpful=helpful))
                write_version(connection, playbook, Playbook(sections=sections), source="import")
            for version in [None, *range(len(versions) + 1)]:
                expected = _rebuilt_by_validation(connection, playbook, version)
                for _ in range(2):
                    rebuilt = load_version(connection, playbook, version)
                    assert rebuilt == expected and rebuilt.model_dump() == expected.model_dump()
                    assert list(rebuilt.sections) == list(expected.sections)  # the order, which == does not see
            for missing in (-1, len(versions) + 1):
                with pytest.raises(StoreError, match=f"has no version {missing}; versions run from 0 to"):
                    load_version(connection, playbook, missing)
            newest = {e.name: e for _, e in load_version(connection, playbook).entries()}
            tip = tip_of(connection, playbook)
            assert tip.rows.keys() == newest.keys()
            assert all(tip.rows[n][2] is e for n, e in newest.items())
    finally:
        connection.close()


# Rows that differ in one field only (a counter, a letter of a text, a section), in playbooks of one size.
_NEARLY = st.lists(
    st.tuples(
        st.sampled_from(["PATTERNS & APPROACHES", "OTHERS", "zz later"]),
        st.sampled_from(["Run it.", "Run it!", "Read the log first."]),
        st.integers(0, 1),
    ),
    min_size=3,
    max_size=3,
)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(_NEARLY, min_size=2, max_size=4), st.lists(st.integers(0, 7), min_size=1, max_size=12))
def test_rebuilds_of_nearly_equal_versions_in_any_order_in_two_databases_each_equal_a_validated_one(
    tmp_path_factory: pytest.TempPathFactory, drawn: list[list[tuple[str, str, int]]], order: list[int]
) -> None:
    """Versions of the same size whose rows differ in one field, in two databases holding the same playbook and
    entry names (one's versions in the reverse order), rebuilt in any order, each time equal the plain validated
    rebuild: a rebuild never gives the entries of rows it only resembles."""
    connections = [connect(tmp_path_factory.mktemp("nearly") / "r.duckdb") for _ in range(2)]
    try:
        for connection, versions in zip(connections, [drawn, drawn[::-1]], strict=True):
            ensure_playbook(connection, "default")
            for rows in versions:
                sections: dict[str, list[Entry]] = {}
                for i, (section, text, helpful) in enumerate(rows):
                    sections.setdefault(section, []).append(Entry(name=f"pat-{i:03d}", text=text, helpful=helpful))
                write_version(connection, "default", Playbook(sections=sections), source="import")
        for k in order:
            connection = connections[k % 2]
            version = 1 + k // 2 % len(drawn)
            expected = _rebuilt_by_validation(connection, "default", version)
            rebuilt = load_version(connection, "default", version)
            assert rebuilt == expected and rebuilt.model_dump() == expected.model_dump()
            assert list(rebuilt.sections) == list(expected.sections)
    finally:
        for connection in connections:
            connection.close()


def test_rebuilds_in_threads_leave_the_cycle_collector_as_they_found_it(con: duckdb.DuckDBPyConnection) -> None:
    """A cold rebuild pauses the collector; rebuilds in several threads at once must not leave it off for good."""
    import gc
    import threading

    from core.store.versions import _built

    ensure_playbook(con, "default")
    entries = [(f"pat-{i:03d}", f"lesson {i}", 0, 0) for i in range(1, 400)]
    write_version(con, "default", pb(pat=entries), source="import")
    assert gc.isenabled()

    def rebuild() -> None:
        cursor = con.cursor()
        for _ in range(20):
            _built.clear()  # cold each time: the path that pauses the collector
            assert len(load_version(cursor, "default").entries()) == len(entries)
        cursor.close()

    threads = [threading.Thread(target=rebuild) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert gc.isenabled()
