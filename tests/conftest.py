"""Shared fixtures: the bundled real transcripts, a fresh database per test, and one real Prefect server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from core.store.db import connect
from tests import profiles  # noqa: F401  (loads the Hypothesis profile)
from tests.servers import prefect_server

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


@pytest.fixture(scope="session")
def prefect_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a real `prefect server` on loopback, shared by the session's Prefect tests (~25 s to start)."""
    with prefect_server(tmp_path_factory.mktemp("prefect-home")) as url:
        yield url
