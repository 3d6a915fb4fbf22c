"""A keyless job (the rules wait on no model) opens its database file once: the ingest, the curation run, the exports,
the report and the targets go through that one opening (each opening costs ~20 ms of CPU: the file's checks and a
checkpoint when it closes). Only the hooks' snapshot, which reads the file read-only, opens it again, after."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from flows.cli import app
from flows.config import Settings
from flows.delivery.hook import write_snapshot
from flows.workspace import Workspace

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "data" / "samples"
pytestmark = pytest.mark.slow
runner = CliRunner()


class Openings:
    """Counts the openings of one database file: connections made while no other to it is open in this process (a
    connection made while one is open joins the same open database)."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)
        self.count = 0
        self.live: list[duckdb.DuckDBPyConnection] = []
        self.connect = duckdb.connect

    def __call__(self, database: Any = ":memory:", *args: Any, **kwargs: Any) -> duckdb.DuckDBPyConnection:
        if str(database) != self.path:
            return self.connect(database, *args, **kwargs)
        self.live = [con for con in self.live if _open(con)]
        if not self.live:
            self.count += 1
        con = self.connect(database, *args, **kwargs)
        self.live.append(con)
        return con


def _open(con: duckdb.DuckDBPyConnection) -> bool:
    try:
        con.execute("SELECT 1")
    except duckdb.ConnectionException:
        return False
    return True


def test_a_keyless_nightly_opens_its_database_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db, out = tmp_path / "p.duckdb", tmp_path / "out"
    shutil.copytree(SAMPLES / "claude-code", tmp_path / "first")
    shutil.copytree(SAMPLES / "codex", tmp_path / "later")
    common = ["--llm", "heuristic", "--db", str(db)]
    env = {"PLAYBOOK_OUT_DIR": str(out)}
    openings = Openings(db)
    monkeypatch.setattr(duckdb, "connect", openings)
    done = runner.invoke(app, ["nightly", str(tmp_path / "first"), *common], env=env)
    assert done.exit_code == 0, done.output
    assert openings.count == 1  # was 5: the ingest, the run, the exports, the report and the targets each
    assert (out / "default.md").exists() and (out / "report" / "default" / "index.html").exists()

    # With the hooks' snapshot in use, it is written after the job lets the file go (it opens it read-only).
    snapshot = write_snapshot(Workspace.of(Settings(db=db, out_dir=out)))
    assert snapshot is not None
    before = snapshot.stat().st_mtime_ns
    openings.count = 0
    again = runner.invoke(app, ["nightly", str(tmp_path / "first"), str(tmp_path / "later"), *common], env=env)
    assert again.exit_code == 0, again.output
    assert openings.count == 3  # the check for new work before the run, the job, the snapshot
    assert snapshot.stat().st_mtime_ns != before


def test_a_keyless_curate_and_its_export_open_the_database_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, out = tmp_path / "p.duckdb", tmp_path / "out"
    assert runner.invoke(app, ["ingest", str(SAMPLES / "claude-code"), "--db", str(db)]).exit_code == 0
    openings = Openings(db)
    monkeypatch.setattr(duckdb, "connect", openings)
    done = runner.invoke(app, ["curate", "--llm", "heuristic", "--db", str(db)], env={"PLAYBOOK_OUT_DIR": str(out)})
    assert done.exit_code == 0, done.output
    assert openings.count == 2  # the check for work before the run, then the run and its export (was 3)
    assert (out / "default.md").exists()
