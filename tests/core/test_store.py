"""The versioned store: type-2 rows, one transaction per version, migrations, locks, crash atomicity."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from datetime import UTC
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import DatabaseBusyError, SchemaVersionError, StoreError, TransientError, VersionConflictError
from core.models import CuratorOutput, Entry, Playbook, ReflectorOutput
from core.operations import apply_session, empty_playbook
from core.store.db import LATEST_SCHEMA, connect, open_db
from core.store.playbooks import (
    current_version,
    diff_versions,
    ensure_playbook,
    history,
    load_version,
    revert,
    tip_of,
    write_version,
)
from core.store.schema import MIGRATIONS
from tests.profiles import examples

ROOT = Path(__file__).resolve().parents[2]


def pb(**sections: list[tuple[str, str, int, int]]) -> Playbook:
    model = empty_playbook()
    names = {"pat": "PATTERNS & APPROACHES", "mis": "MISTAKES TO AVOID", "oth": "OTHERS"}
    for slug, items in sections.items():
        model.sections[names[slug]] = [Entry(name=n, text=t, helpful=h, harmful=x) for n, t, h, x in items]
    return model


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
    assert [
        (r["version"], r["source"], r["session_id"], r["ops_applied"], r["ops_skipped"], r["n_entries"]) for r in rows
    ] == [
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
    # The newest, asked without a number (its open rows), and each version's time, read in the same round trip.
    assert load_version(connection, "default").sections == expected[-1].sections
    created = connection.execute("SELECT version, created_at FROM versions WHERE playbook = 'default'").fetchall()
    for version, at in created:
        stamp = at.astimezone(UTC).isoformat(timespec="seconds")
        assert load_version(connection, "default", version).last_updated == stamp
    connection.close()


# --- migrations and refusal of newer files ----------------------------------------------------


def test_migrations_run_forward_from_an_old_file(db_path: Path) -> None:
    old = duckdb.connect(str(db_path))
    old.execute(
        "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL,"
        " applied_at TIMESTAMPTZ DEFAULT now())"
    )
    version, name, sql = MIGRATIONS[0]
    old.execute(sql)
    old.execute("INSERT INTO schema_version (version, name) VALUES (?, ?)", [version, name])
    old.execute("INSERT INTO sessions (session_id, format, source_path) VALUES ('keep-me', 'codex', '/x')")
    old.close()
    con = connect(db_path)
    assert con.execute("SELECT max(version) FROM schema_version").fetchone() == (LATEST_SCHEMA,)
    assert con.execute("SELECT session_id FROM sessions").fetchall() == [("keep-me",)]
    assert con.execute("SELECT count(*) FROM llm_calls").fetchone() == (0,)
    con.close()


def test_newer_file_is_refused(db_path: Path) -> None:
    con = connect(db_path)
    con.execute("INSERT INTO schema_version (version, name) VALUES (99, 'from the future')")
    con.close()
    with pytest.raises(SchemaVersionError) as err:
        connect(db_path)
    assert str(err.value) == (
        f"Database `{db_path}` has schema version 99, newer than this playbook understands ({LATEST_SCHEMA});"
        " upgrade playbook or use another `--db`."
    )


def hold_database(db_path: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, sys, time; c = duckdb.connect({str(db_path)!r}); print('held', "
            "flush=True); sys.stdin.readline()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_second_writer_gets_one_line_message(db_path: Path) -> None:
    connect(db_path).close()
    holder = hold_database(db_path)
    try:
        with pytest.raises(DatabaseBusyError) as err:
            connect(db_path)
        assert str(err.value) == (
            f"Database `{db_path}` is in use by process {holder.pid}; wait for it to finish (`--wait SECONDS`) or"
            " pass another `--db`."
        )
    finally:
        holder.communicate("\n")


# --- crash atomicity --------------------------------------------------------------------------

CRASH_SCRIPT = textwrap.dedent("""
    import os, signal, sys
    import core.store.playbooks as playbooks
    from core.models import Entry
    from core.store.db import connect
    from core.store.playbooks import load_version, write_version

    class KillingJson:
        # Killed after entries and the version row are written, before COMMIT.
        @staticmethod
        def dumps(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGKILL)

    con = connect(sys.argv[1])
    current = load_version(con, "default")
    new = current.model_copy(update={"sections": {**current.sections, "OTHERS": [
        Entry(name="oth-009", text="half-written")]}})
    from core.models import ApplyReport, OpOutcome
    report = ApplyReport(proposed=1, outcomes=[OpOutcome(index=0, type="ADD", status="applied")])
    playbooks.json = KillingJson
    write_version(con, "default", new, source="session", session_id="doomed", report=report)
""")


def test_killed_writer_leaves_previous_version_intact(db_path: Path) -> None:
    con = connect(db_path)
    ensure_playbook(con, "default")
    write_version(con, "default", pb(oth=[("oth-001", "kept", 2, 0)]), source="import")
    before = load_version(con, "default")
    con.close()
    proc = subprocess.run([sys.executable, "-c", CRASH_SCRIPT, str(db_path)], cwd=ROOT, capture_output=True)
    assert proc.returncode == -9, proc.stderr
    con = connect(db_path)
    assert current_version(con, "default") == 1
    assert load_version(con, "default").sections == before.sections
    assert con.execute("SELECT count(*) FROM applied_sessions").fetchone() == (0,)
    assert con.execute("SELECT count(*) FROM entries WHERE text = 'half-written'").fetchone() == (0,)
    # The next run completes.
    assert write_version(con, "default", pb(oth=[("oth-001", "kept", 3, 0)]), source="import") == 2
    con.close()


def test_snapshot_parquet(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    from core.store.snapshot import write_parquet

    ensure_playbook(con, "default")
    written = write_parquet(con, tmp_path / "pq")
    assert {p.name for p in written} >= {"versions.parquet", "entries.parquet", "sessions.parquet"}
    rows = duckdb.connect().execute(f"SELECT count(*) FROM '{tmp_path / 'pq' / 'versions.parquet'}'").fetchone()
    assert rows == (1,)
    assert json.loads(con.execute("SELECT sections_json FROM playbooks").fetchone()[0])["fallback"] == "OTHERS"


def test_migration_4_gives_old_skips_their_code(tmp_path: Path) -> None:
    path = tmp_path / "v3.duckdb"
    old = duckdb.connect(str(path))
    old.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name VARCHAR, applied_at TIMESTAMPTZ)")
    for version, name, sql in MIGRATIONS[:3]:
        old.execute(sql)
        old.execute("INSERT INTO schema_version VALUES (?, ?, now())", [version, name])
    reasons = [
        ("skipped", 'ADD: duplicate text "x"'),
        ("skipped", "DELETE: target_id 'ghost' not found"),
        ("skipped", "MERGE: source_ids has fewer than 2 entries"),
        ("skipped", "UPDATE: empty or missing text"),
        ("skipped", "Unknown operation type: 'RENAME'"),
        ("skipped", "Operation is not an object: str"),
        ("truncated", "Operations list truncated from 12 to 10"),
        ("applied", ""),
    ]
    for i, (status, reason) in enumerate(reasons):
        old.execute(
            "INSERT INTO operations (playbook, version, idx, type, status, reason) VALUES ('p', 1, ?, 'ADD', ?, ?)",
            [i, status, reason],
        )
    old.close()
    with open_db(path) as con:
        codes = [r[0] for r in con.execute("SELECT code FROM operations ORDER BY idx").fetchall()]
    assert codes == [
        "duplicate_text",
        "not_found",
        "too_few_sources",
        "empty_field",
        "unknown_type",
        "not_object",
        "truncated",
        None,
    ]


def test_verify_reads_every_block_and_names_the_damaged_table(tmp_path: Path) -> None:
    import os

    from core.store.db import verify

    path = tmp_path / "v.duckdb"
    with open_db(path) as con:
        ensure_playbook(con, "default")
        con.execute("CREATE TABLE filler AS SELECT range AS i, repeat('x', 200) AS t FROM range(200000)")
        tables, rows, broken = verify(con)
    assert broken == [] and tables >= 15 and rows >= 200_000
    with path.open("r+b") as fh:  # random bytes in the middle of the file, as a bad disk would leave
        fh.seek(path.stat().st_size // 2)
        fh.write(os.urandom(8192))
    con = connect(path, read_only=True)
    _, _, broken = verify(con)
    con.close()
    assert broken and any("checksum" in why or "Corrupt" in why or "Error" in why for _, why in broken)


def test_back_up_keeps_the_newest_copies(tmp_path: Path) -> None:
    from core.store.db import back_up

    path = tmp_path / "b.duckdb"
    assert back_up(path, 3) is None  # nothing to copy yet
    with open_db(path) as con:
        ensure_playbook(con, "default")
    copies = [back_up(path, 3) for _ in range(5)]
    kept = sorted((tmp_path / "b.duckdb.backups").glob("*.duckdb"))
    assert kept == sorted(c for c in copies[-3:] if c is not None) and len(kept) == 3
    with open_db(kept[-1], read_only=True) as con:  # a copy is a working database
        assert load_version(con, "default").size() == 0
    assert back_up(path, 0) is None


def test_history_limit_and_since_and_the_trusted_rebuild(con: duckdb.DuckDBPyConnection) -> None:
    """`history` shows the newest `limit` versions, oldest first, from `since`; the rebuilt playbook equals a
    validated one (its rows are trusted, not validated again)."""
    ensure_playbook(con, "default")
    for i in range(1, 8):
        write_version(
            con, "default", pb(pat=[(f"pat-{n:03d}", f"Lesson {n}.", n, 0) for n in range(1, i + 1)]), source="import"
        )
    assert [r["version"] for r in history(con, "default")] == list(range(8))
    assert [r["version"] for r in history(con, "default", limit=3)] == [5, 6, 7]
    con.execute("UPDATE versions SET created_at = TIMESTAMPTZ '2026-01-01' + INTERVAL (version) DAY")
    assert [r["version"] for r in history(con, "default", since="2026-01-06")] == [5, 6, 7]
    assert [r["version"] for r in history(con, "default", limit=2, since="2026-01-02")] == [6, 7]
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
