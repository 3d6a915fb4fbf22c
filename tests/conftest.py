"""Shared fixtures: the bundled real transcripts and a fresh database per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from core.store.db import connect

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "data" / "samples"


@pytest.fixture
def samples() -> Path:
    """The real transcripts shipped in data/samples (see its MANIFEST.md)."""
    return SAMPLES


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A database path that does not exist yet."""
    return tmp_path / "test.duckdb"


@pytest.fixture
def con(db_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A migrated read-write connection."""
    connection = connect(db_path)
    yield connection
    connection.close()
