"""Prefect where it pays: a command-line run with no Prefect server configured runs the same loop without Prefect
(no ephemeral API to wait for), a configured server that does not answer is one notice and the run goes on, and
Ctrl-C inside a database query is still the one `Interrupted` line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.servers import free_port

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

RUN = (
    "import sys, time; from flows.cli import app\n"
    "started = time.perf_counter()\n"
    "try:\n    app(sys.argv[1:])\n"
    "except SystemExit as e:\n    print('exit', e.code, file=sys.stderr)\n"
    "print('prefect loaded:', any(m == 'prefect' or m.startswith('prefect.') for m in sys.modules), file=sys.stderr)\n"
    "print(f'wall: {time.perf_counter() - started:.2f}', file=sys.stderr)"
)


def run(work: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PLAYBOOK_", "ANTHROPIC_", "PREFECT_"))}
    clean |= {"PLAYBOOK_OUT_DIR": str(work / "out"), "PREFECT_HOME": str(work / "prefect-home"), **env}
    return subprocess.run(
        [sys.executable, "-c", RUN, *args], cwd=work, env=clean, capture_output=True, text=True, timeout=300
    )


def test_no_prefect_server_means_no_prefect_at_all(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "data" / "samples" / "claude-code" / "spotter", tmp_path / "samples")
    done = run(tmp_path, "nightly", "samples", "--llm", "heuristic", "--db", "c.duckdb", "--json")
    assert "exit 0" in done.stderr and "prefect loaded: False" in done.stderr, done.stderr[-2000:]
    (summary,) = json.loads(done.stdout)
    assert summary["sessions_applied"] >= 1 and (tmp_path / "out" / "default.md").exists()
    recorded = run(tmp_path, "runs", "--json", "--db", "c.duckdb")
    assert [r["kind"] for r in json.loads(recorded.stdout)] == ["nightly"]  # the run row, as with Prefect


def test_a_configured_prefect_server_that_is_down_is_one_notice(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "data" / "samples" / "claude-code" / "spotter", tmp_path / "samples")
    down = f"http://127.0.0.1:{free_port()}/api"  # nobody listens there
    started = time.monotonic()
    done = run(tmp_path, "nightly", "samples", "--llm", "heuristic", "--db", "c.duckdb", PREFECT_API_URL=down)
    assert "exit 0" in done.stderr and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert f"The Prefect API at {down} did not answer" in " ".join(done.stderr.split())
    assert time.monotonic() - started < 120 and (tmp_path / "out" / "default.md").exists()
