"""A read command is a query and its rendering: it imports none of the heavy libraries a run needs (Prefect, the
model SDK, numpy, matplotlib), each of which costs a command tenths of a
second before it reads a row; and it opens the database read-only, writing nothing, unless the file needs a
migration first (then it gets one)."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from tests.helpers import SAMPLES

HEAVY = ("prefect", "matplotlib", "anthropic", "numpy", "pydantic_settings", "asyncio")
READS = [
    ["show"],
    ["show", "--format", "json"],
    ["history"],
    ["history", "--limit", "0", "--json"],
    ["diff", "1", "2"],
    ["why", "pat-001"],
    ["sql", "select count(*) from entries"],
    ["sessions"],
    ["stats"],
]
# The installed `playbook` entry point, run in a process of its own; it reports what it imported on the way out.
PROBE = (
    "import atexit, sys\n"
    "atexit.register(lambda: print('HEAVY', sorted({m.split('.')[0] for m in sys.modules} & set(%r)), file=sys.stderr))\n"
    "from flows.cli import app\n"
    "sys.argv = ['playbook', *%r]\n"
    "app()\n"
)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("reads")
    book = where / "book.json"
    entries = [{"name": f"pat-00{i}", "text": f"Lesson {i}: run `make test` first.", "helpful": i} for i in (1, 2)]
    book.write_text(json.dumps({"version": "1.0", "sections": {"PATTERNS & APPROACHES": entries}}))
    path = where / "p.duckdb"
    runner = CliRunner()
    assert runner.invoke(app, ["ingest", str(SAMPLES / "claude-code" / "spotter"), "--db", str(path)]).exit_code == 0
    assert runner.invoke(app, ["import", str(book), "--db", str(path)]).exit_code == 0
    assert runner.invoke(app, ["import", str(book), "--db", str(path), "--replace"]).exit_code == 0
    return path


@pytest.mark.slow
@pytest.mark.parametrize("args", READS, ids=[" ".join(a) for a in READS])
def test_a_read_command_imports_no_heavy_library(db: Path, args: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE % (HEAVY, [*args, "--db", str(db)])],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip(), "it printed nothing"
    (said,) = [line for line in done.stderr.splitlines() if line.startswith("HEAVY")]
    assert said == "HEAVY []", f"`playbook {' '.join(args)}` imported {said[6:]}"
    assert "leaked" not in done.stderr  # what it left to the end of the process is not reported by DuckDB's bindings


# Printed as plain lines into a pipe, these do not load Rich either (~20 ms of CPU).
PLAIN = [
    ["show"],
    ["history"],
    ["history", "--limit", "0"],
    ["sql", "select count(*) from entries"],
    ["sessions"],
    ["why", "pat-001"],
]


@pytest.mark.slow
@pytest.mark.parametrize("args", PLAIN, ids=[" ".join(a) for a in PLAIN])
def test_a_read_command_printing_plain_lines_into_a_pipe_does_not_load_rich(db: Path, args: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE % (("rich",), [*args, "--db", str(db)])],
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")},
    )
    assert done.returncode == 0, done.stderr
    (said,) = [line for line in done.stderr.splitlines() if line.startswith("HEAVY")]
    assert said == "HEAVY []", f"`playbook {' '.join(args)}` loaded Rich"


def test_a_read_command_called_in_process_turns_the_cycle_collector_back_on(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the command line's read commands run with it off (the process ends with them); a caller's process goes on
    assert gc.isenabled()
    app(["sql", "select count(*) as n from entries", "--json", "--db", str(db)], standalone_mode=False)
    assert gc.isenabled()
    assert json.loads(capsys.readouterr().out) == [{"n": 2}]


@pytest.mark.parametrize("given", [None, "", "logfire"])
def test_a_read_command_called_in_process_leaves_pydantics_plugin_setting_as_it_found_it(
    db: Path, given: str | None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the command line's read commands build their models without pydantic's search for plugins; a caller's process
    # finds its own after, and a value the user set is theirs throughout
    if given is None:
        monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    else:
        monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", given)
    app(["sql", "select count(*) as n from entries", "--json", "--db", str(db)], standalone_mode=False)
    assert os.environ.get("PYDANTIC_DISABLE_PLUGINS") == given
    assert json.loads(capsys.readouterr().out) == [{"n": 2}]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("args", READS, ids=[" ".join(a) for a in READS])
def test_a_read_command_leaves_the_database_byte_for_byte_as_it_was(db: Path, args: list[str]) -> None:
    before = _digest(db)
    done = CliRunner().invoke(app, [*args, "--db", str(db)])
    assert done.exit_code == 0, done.output
    assert _digest(db) == before


def test_a_database_behind_the_code_is_brought_up_to_date_by_a_read(db: Path, tmp_path: Path) -> None:
    from core.store.db import open_db

    old = tmp_path / "old.duckdb"
    old.write_bytes(db.read_bytes())
    with open_db(old) as con:  # views written by an older version of the code
        con.execute("DROP VIEW v_operations_daily")
        con.execute("UPDATE derived_objects SET digest = 'older' WHERE name = 'views'")
    done = CliRunner().invoke(app, ["sql", "select count(*) as n from v_operations_daily", "--json", "--db", str(old)])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout) == [{"n": 0}]
    with open_db(old, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM v_operations_daily").fetchone() is not None
        assert con.execute("SELECT digest FROM derived_objects WHERE name = 'views'").fetchone() != ("older",)
