"""One writer at a time, and the run owns the database: while a real nightly runs, `playbook show` in a
loop, a plain read-only DuckDB reader, `export --parquet` and a second writer (`ingest`) all run against
the same file; the nightly finishes with exactly the playbook it makes alone, and nobody crashes it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.store.db import open_db
from core.store.ingest import ingest
from flows.config import Settings
from flows.run.curation import run_curation
from flows.workspace import Workspace

ROOT = Path(__file__).resolve().parents[2]
PLAYBOOK = str(Path(sys.executable).with_name("playbook"))
pytestmark = pytest.mark.slow

READER = """
import sys, time, duckdb
ok = busy = 0
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    try:
        con = duckdb.connect(sys.argv[1], read_only=True)
        con.execute("SELECT count(*) FROM entries").fetchone()
        con.close()
        ok += 1
    except duckdb.Error:
        busy += 1  # the run has the file open for writing: try again
    time.sleep(0.05)
print(ok, busy)
"""


def env_for(work: Path, api: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLAYBOOK_", "ANTHROPIC_", "PREFECT_API"))}
    env.update(PLAYBOOK_OUT_DIR=str(work / "out"), PREFECT_API_URL=api, PLAYBOOK_MIN_MESSAGES="1")
    return env


def playbook_json(work: Path, api: str) -> dict[str, object]:
    shown = subprocess.run(
        [PLAYBOOK, "show", "--db", "c.duckdb", "--format", "json"],
        cwd=work,
        env=env_for(work, api),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    return data["sections"]  # the entries; `last_updated` is when the run happened


def test_readers_and_writers_never_crash_a_nightly(tmp_path: Path, prefect_api: str) -> None:
    alone, busy = tmp_path / "alone", tmp_path / "busy"
    for work in (alone, busy):
        shutil.copytree(ROOT / "data" / "samples", work / "samples")
    # The same run alone, in this process (no Prefect needed for the reference).
    settings = Workspace.of(Settings(db=alone / "c.duckdb", out_dir=alone / "out", min_messages=1))
    with open_db(settings.settings.db) as con:
        ingest(con, [alone / "samples"])
    assert run_curation(settings, "default", settings.provider("heuristic")).status == "ok"
    expected = playbook_json(alone, prefect_api)

    env = env_for(busy, prefect_api)
    run = subprocess.Popen(
        [PLAYBOOK, "nightly", "samples", "--llm", "heuristic", "--db", "c.duckdb", "--json"],
        cwd=busy,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lock = busy / "c.duckdb.lock"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (busy / "c.duckdb").exists():
        time.sleep(0.05)
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(busy / "c.duckdb"), "20"], stdout=subprocess.PIPE, text=True
    )
    shows = exports = 0
    writer = subprocess.run(
        [PLAYBOOK, "ingest", "samples", "--db", "c.duckdb", "--wait", "0"],
        cwd=busy,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    while run.poll() is None:
        show = subprocess.run(
            [PLAYBOOK, "show", "--db", "c.duckdb", "--wait", "60"], cwd=busy, env=env, capture_output=True, text=True
        )
        assert show.returncode == 0 and "Traceback" not in show.stderr, show.stderr
        shows += 1
        export = subprocess.run(
            [PLAYBOOK, "export", "--parquet", f"snap{exports}", "--db", "c.duckdb", "--wait", "60"],
            cwd=busy,
            env=env,
            capture_output=True,
            text=True,
        )
        assert export.returncode == 0, export.stderr
        exports += 1
    _out, err = run.communicate(timeout=600)
    reads = reader.communicate(timeout=60)[0].split()
    assert run.returncode == 0, err[-3000:]
    assert "Traceback" not in err
    assert shows >= 1 and exports >= 1 and int(reads[0]) >= 1
    print(f"during the nightly: {shows} show, {exports} export --parquet, reader {reads[0]} ok / {reads[1]} busy")
    # The second writer either waited its turn or said in one line who holds the database; it never
    # wrote during the run.
    if writer.returncode != 0:
        assert writer.stderr.strip().splitlines()[-1].startswith("Error: Database `c.duckdb` is in use by process"), (
            writer.stderr
        )
        assert "playbook nightly" in writer.stderr
    assert playbook_json(busy, prefect_api) == expected
    assert not lock.exists() or lock.read_text() == ""
