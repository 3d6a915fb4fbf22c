"""The database file: migrations forward, newer files refused, one writer, crash atomicity, checks, backups."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

from core.errors import DatabaseBusyError, SchemaVersionError
from core.store.db import LATEST_SCHEMA, connect, open_db
from core.store.registry import ensure_playbook
from core.store.schema import MIGRATIONS
from core.store.versions import current_version, load_version, write_version
from tests.helpers import pb, store_at

ROOT = Path(__file__).resolve().parents[2]


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
    import core.store.versions as playbooks
    from core.models import Entry
    from core.store.db import connect
    from core.store.versions import load_version, write_version

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
    old = store_at(path, 3)
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
