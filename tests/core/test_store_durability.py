"""What ingest commits reads back whole, at a size where a DuckDB fault shows.

DuckDB 2.0.0 corrupted a commit ("Invalid unicode (byte sequence mismatch) detected in segment statistics update",
"Corrupted uncompressed string segment", or a segfault) in most ingests of the unseen transcripts with a generated
archive of 100-300 MB in 8 MB batches (8 runs of 9), and in none of 3 with either alone, nor in batches of 64 or 256 MB:
many commits of mixed strings are what it took. This is that ingest, checked against the same files stored in one
batch; under 2.0.0 it failed 3 runs of 3 (two of them a segfault).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.bench_ingest import build_archive
from core.store.db import open_db, verify
from core.store.ingest import ingest

ROOT = Path(__file__).resolve().parents[2]
UNSEEN = ROOT / "data" / "unseen"
# The size and batches the fault took.
ARCHIVE_MB = 100
SMALL_BATCH = 8 << 20


def _stored(db: Path, paths: list[Path], batch_bytes: int | None) -> tuple[Any, ...]:
    """Ingest `paths` into a fresh store at `db`: (files that failed, tables that read back broken, and a digest of
    every message and session row: its count and the sum of each column's hashes, the time of ingest aside)."""
    with open_db(db) as con:
        summary = ingest(con, paths, **({"batch_bytes": batch_bytes} if batch_bytes else {}))
        _, _, broken = verify(con)
        messages = con.execute("SELECT count(*), sum(hash(COLUMNS(*))) FROM messages").fetchone()
        sessions = con.execute("SELECT count(*), sum(hash(COLUMNS(* EXCLUDE (ingested_at)))) FROM sessions").fetchone()
    failed = [(r.path, r.error) for r in summary.results if r.status == "failed"]
    return failed, broken, messages, sessions


@pytest.mark.slow
def test_many_small_commits_of_a_large_archive_store_what_one_batch_does(tmp_path: Path) -> None:
    build_archive(tmp_path / "archive", ARCHIVE_MB)
    paths = [UNSEEN, tmp_path / "archive"]
    failed, broken, messages, sessions = _stored(tmp_path / "small.duckdb", paths, SMALL_BATCH)
    assert failed == [] and broken == []
    assert (messages, sessions) == _stored(tmp_path / "one.duckdb", paths, None)[2:]
    assert messages[0] > 50_000 and sessions[0] > 200  # both inputs were read, not only one
