"""A read command is a query and its rendering: it imports none of the heavy libraries a run needs (Prefect, the
model SDK, numpy, matplotlib), each of which costs a command tenths of a second before it reads a row."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from tests.helpers import SAMPLES

HEAVY = ("prefect", "matplotlib", "anthropic", "numpy")
READS = [
    ["show"],
    ["show", "--format", "json"],
    ["history"],
    ["diff", "1", "2"],
    ["why", "pat-001"],
    ["sql", "select count(*) from entries"],
    ["sessions"],
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
