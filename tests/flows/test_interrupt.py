"""A real process: Ctrl-C ends a nightly with one line and exit 130, the rerun resumes; an idle nightly
finishes without importing Prefect."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def nightly(work: Path, api: str | None = None) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLAYBOOK_", "ANTHROPIC_", "PREFECT_API"))}
    env["PLAYBOOK_OUT_DIR"] = str(work / "out")
    if api:
        env["PREFECT_API_URL"] = api  # the session's server: no local Prefect start-up in the rerun
    return subprocess.Popen(
        [
            str(Path(sys.executable).with_name("playbook")),
            "nightly",
            "samples",
            "--llm",
            "heuristic",
            "--db",
            "c.duckdb",
        ],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_ctrl_c_is_one_line_and_the_rerun_resumes(tmp_path: Path, prefect_api: str) -> None:
    (tmp_path / "samples").mkdir()
    shutil.copy(ROOT / "data" / "samples" / "claude-code" / "spotter" / "short.jsonl", tmp_path / "samples")
    run = nightly(tmp_path)
    lock = tmp_path / "c.duckdb.lock"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "playbook nightly" not in (lock.read_text() if lock.exists() else ""):
        time.sleep(0.1)
    time.sleep(0.2)  # inside the run: ingesting, or starting Prefect (a short run can end within a second)
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=120)
    assert run.returncode == 130, err
    assert err.strip() == "Interrupted; run the same command again to resume."
    again = nightly(tmp_path, prefect_api)
    _out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err[-2000:]
    assert "Traceback" not in err and (tmp_path / "out" / "default.md").exists()


def test_idle_nightly_does_not_start_prefect(tmp_path: Path) -> None:
    from flows.config import Settings
    from flows.curation import run_curation
    from flows.ingest import ingest_with
    from flows.providers import resolve_provider

    shutil.copytree(ROOT / "data" / "samples" / "claude-code" / "spotter", tmp_path / "samples")
    done = Settings(db=tmp_path / "c.duckdb", out_dir=tmp_path / "out")  # everything ingested and curated
    ingest_with(done, [tmp_path / "samples"])
    run_curation(done, "default", resolve_provider("heuristic", done))
    code = (
        "import sys; from flows.cli import app\n"
        "try:\n    app(['nightly', 'samples', '--llm', 'heuristic', '--db', 'c.duckdb', '--json'])\n"
        "except SystemExit as e:\n    print('exit', e.code, file=sys.stderr)\n"
        "print('prefect loaded:', any(m == 'prefect' or m.startswith('prefect.') for m in sys.modules), file=sys.stderr)"
    )
    idle = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "exit 0" in idle.stderr and "prefect loaded: False" in idle.stderr, idle.stderr[-2000:]
    assert '"status": "nothing-to-do"' in idle.stdout
