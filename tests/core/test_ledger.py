"""The session ledger (`core.store.ledger`): which sessions are still work for a playbook, on sessions ingested
from transcript files, through the ledger's own functions."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.operations import empty_playbook
from core.selection import SessionFilter
from core.store.db import open_db
from core.store.ingest import ingest
from core.store.ledger import (
    count_pending,
    failed_sessions,
    mark_session,
    pending_sessions,
    record_failure,
    release_failures,
    requeue_sessions,
    sessions_applied_by,
)
from core.store.registry import ensure_playbook
from core.store.versions import write_version
from tests.helpers import write_session
from tests.profiles import examples

START = datetime(2026, 3, 1, 9, tzinfo=UTC)
IDS = [f"s{i}" for i in range(5)]


@pytest.fixture
def con(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """Five ingested sessions, a day apart (s0 oldest), and the playbook `default`."""
    for i, sid in enumerate(IDS):
        write_session(tmp_path / "t" / f"{sid}.jsonl", sid, START + timedelta(days=i), error=False)
    with open_db(tmp_path / "l.duckdb") as con:
        ingest(con, [tmp_path / "t"])
        ensure_playbook(con, "default")
        yield con


def pending(con: duckdb.DuckDBPyConnection, chosen: SessionFilter | None = None) -> list[str]:
    return [p.session_id for p in pending_sessions(con, "default", chosen)]


def test_every_new_session_is_pending_oldest_first_and_the_filter_narrows_it(con: duckdb.DuckDBPyConnection) -> None:
    assert pending(con) == IDS and count_pending(con, "default") == 5
    assert pending(con, SessionFilter(limit=2)) == ["s0", "s1"]
    assert pending(con, SessionFilter(since=START + timedelta(days=1), until=START + timedelta(days=3))) == ["s1", "s2"]
    assert pending(con, SessionFilter(project="no-such-project")) == []
    assert pending_sessions(con, "other") and count_pending(con, "other") == 5  # each playbook has its own ledger


def test_a_skipped_session_is_work_again_once_it_grows(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    mark_session(con, "default", "s0", "skipped", "too short")
    assert "s0" not in pending(con)
    path = tmp_path / "t" / "s0.jsonl"
    more = {"type": "user", "sessionId": "s0", "uuid": "s0-9", "timestamp": "2026-03-01T10:00:00Z"}
    path.write_text(path.read_text() + json.dumps(more | {"message": {"role": "user", "content": "And lint?"}}) + "\n")
    ingest(con, [tmp_path / "t"])
    assert pending(con)[0] == "s0"


def test_a_session_still_being_written_waits_until_idle(tmp_path: Path) -> None:
    write_session(tmp_path / "t" / "now.jsonl", "now", datetime.now(UTC) - timedelta(minutes=6), error=False)
    with open_db(tmp_path / "l.duckdb") as con:
        ingest(con, [tmp_path / "t"])
        assert [p.session_id for p in pending_sessions(con, "default", idle_minutes=30)] == []
        assert [p.session_id for p in pending_sessions(con, "default", idle_minutes=0)] == ["now"]


def test_failures_count_up_to_quarantine_and_retry_lets_the_session_back(con: duckdb.DuckDBPyConnection) -> None:
    assert record_failure(con, "default", "s1", "timeout", "run-1", max_attempts=2) == 1
    assert "s1" in pending(con)  # tried again next run
    assert [(f.session_id, f.attempts, f.status) for f in failed_sessions(con, "default")] == [("s1", 1, "failed")]
    assert record_failure(con, "default", "s1", "timeout again", "run-2", max_attempts=2) == 2
    assert "s1" not in pending(con)
    (failed,) = failed_sessions(con, "default")
    assert (failed.status, failed.reason, failed.last_run_id) == ("quarantined", "timeout again", "run-2")
    assert release_failures(con, "default", ["s1"]) == 1
    assert "s1" in pending(con) and failed_sessions(con, "default") == []


def test_a_held_session_waits_for_a_person_at_once(con: duckdb.DuckDBPyConnection) -> None:
    record_failure(con, "default", "s2", "mass_change: 6 of 6 entries removed", "run-1", max_attempts=3, hold=True)
    assert "s2" not in pending(con) and [f.status for f in failed_sessions(con, "default")] == ["held"]
    assert release_failures(con, "default", None) == 1 and "s2" in pending(con)


def test_an_applied_session_is_requeued_and_its_version_stays(con: duckdb.DuckDBPyConnection) -> None:
    version = write_version(con, "default", empty_playbook(), source="session", session_id="s3")
    assert "s3" not in pending(con)
    assert sessions_applied_by(con, "default", None) == ["s3"]
    assert sessions_applied_by(con, "default", None, since=START + timedelta(days=4)) == []
    assert requeue_sessions(con, "default", ["s3"]) == 1
    assert "s3" in pending(con)
    assert con.execute("SELECT count(*) FROM versions WHERE playbook = 'default' AND version = ?", [version]).fetchone()


LEDGER_STEPS = st.lists(
    st.tuples(st.sampled_from(["skip", "fail", "hold", "apply", "release", "requeue"]), st.sampled_from(IDS)),
    max_size=12,
)


@pytest.mark.slow
@settings(max_examples=examples(30))
@given(steps=LEDGER_STEPS)
def test_pending_is_exactly_the_sessions_without_a_settled_row(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, str]]
) -> None:
    """Whatever happened to the sessions, a session that did not grow is pending iff the ledger holds no
    settled row for it (applied, skipped, quarantined or held), and the count agrees with the list."""
    tmp = tmp_path_factory.mktemp("ledger")
    for i, sid in enumerate(IDS):
        write_session(tmp / "t" / f"{sid}.jsonl", sid, START + timedelta(days=i), error=False)
    settled: set[str] = set()
    with open_db(tmp / "l.duckdb") as con:
        ingest(con, [tmp / "t"])
        ensure_playbook(con, "default")
        for step, sid in steps:
            if step == "skip":
                mark_session(con, "default", sid, "skipped", "too short")
                settled.add(sid)
            elif step == "fail":
                if record_failure(con, "default", sid, "x", "run", max_attempts=2) >= 2:
                    settled.add(sid)
            elif step == "hold":
                record_failure(con, "default", sid, "mass", "run", max_attempts=9, hold=True)
                settled.add(sid)
            elif step == "apply":
                write_version(con, "default", empty_playbook(), source="session", session_id=sid)
                settled.add(sid)
            elif step == "release":
                quarantined = {f.session_id for f in failed_sessions(con, "default") if f.status != "failed"}
                release_failures(con, "default", [sid])
                settled -= {sid} & quarantined
            else:
                requeue_sessions(con, "default", [sid])
                settled.discard(sid)
        assert pending(con) == [s for s in IDS if s not in settled]
        assert count_pending(con, "default") == len(IDS) - len(settled)
