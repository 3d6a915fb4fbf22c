"""Benchmark: a keyless curation's CPU per session against the size of the store it runs in (issue 47 item 2; goal:
the same sessions at a 20,000-session store within 1.2x of a 640-session store).

Each store holds synthetic sessions written with SQL in `--projects` projects (400 sessions each in the large store),
their projects interleaved in time (as a team's archive is: every project works every day), and a keyless run
(`run_curation` with the rules, no Prefect) curates the oldest `--sessions` of them: the same sessions, of the same
projects, in both stores. What is measured is the CPU of the child process that runs it (its
DuckDB threads included), on a fresh copy of a store prepared once per size; sizes alternate round by round
(`--rounds`, at least 3). A second pair of rows curates the next sessions of the same stores, a nightly's steady
state: what the first run stored is read, not computed again.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._table import Row, emit, interleaved  # noqa: E402

# Twelve messages a session: a prompt, a check that fails and a variant that works, a correction, and a build; the
# project's name is in its commands, so each project's miner sees its own lessons.
STORE_SQL = """
INSERT INTO sessions (session_id, format, source_path, project, started_at, ended_at, n_messages, n_user_prompts,
                      n_tool_calls, n_tool_errors)
SELECT 's-' || lpad(i::VARCHAR, 6, '0'), 'claude-code', '/bench/' || i || '.jsonl', 'project-' || (i % $projects),
       TIMESTAMPTZ '2026-01-01' + INTERVAL (i) MINUTE, TIMESTAMPTZ '2026-01-01' + INTERVAL (i) MINUTE, 12, 2, 5, 1
FROM range($n) t(i);
INSERT INTO messages (session_id, source_path, seq, part, ts, role, kind, text, tool_name, tool_input, tool_use_id,
                      is_error, message_key, is_sidechain, agent_id, is_meta, is_prompt)
SELECT 's-' || lpad(i::VARCHAR, 6, '0'), '/bench/' || i || '.jsonl', m, 0,
       TIMESTAMPTZ '2026-01-01' + INTERVAL (i) MINUTE + INTERVAL (m) SECOND,
       CASE WHEN m IN (0, 9) THEN 'user' WHEN m % 2 = 1 THEN 'assistant' ELSE 'tool' END,
       CASE WHEN m IN (0, 9) THEN 'text' WHEN m % 2 = 1 THEN 'tool_use' ELSE 'tool_result' END,
       CASE m WHEN 0 THEN 'Please fix the failing test in module ' || i || ' of project ' || (i % $projects)
              WHEN 2 THEN 'error: unknown option --fast' || chr(10) || 'usage: tool-' || (i % $projects) || ' [-q]'
              WHEN 4 THEN '12 passed in 0.4s'
              WHEN 6 THEN 'FAILED tests/test_' || i || '.py::test_x - AssertionError'
              WHEN 8 THEN '13 passed in 0.5s'
              WHEN 9 THEN 'No, always run make build-' || (i % $projects) || ' before the tests here.'
              WHEN 10 THEN 'built' ELSE NULL END,
       CASE WHEN m IN (1, 3, 5, 7, 11) THEN 'Bash' END,
       CASE m WHEN 1 THEN '{"command": "tool-' || (i % $projects) || ' --fast"}'
              WHEN 3 THEN '{"command": "tool-' || (i % $projects) || ' -q"}'
              WHEN 5 THEN '{"command": "pytest -x"}'
              WHEN 7 THEN '{"command": "make build-' || (i % $projects) || '"}'
              WHEN 11 THEN '{"command": "pytest -x"}' END,
       CASE WHEN m IN (1, 2) THEN 'a' || i WHEN m IN (3, 4) THEN 'b' || i WHEN m IN (5, 6) THEN 'c' || i
            WHEN m IN (7, 8) THEN 'd' || i WHEN m IN (10, 11) THEN 'e' || i END,
       m IN (2, 6), 'k' || i || '-' || m, false, NULL, false, m IN (0, 9)
FROM range($n) t(i), range(12) s(m);
"""

CHILD = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
from pathlib import Path
from core.selection import SessionFilter
from flows.config import Settings
from flows.run.curation import run_curation
from flows.workspace import Workspace

db = Path({db!r})
ws = Workspace.of(Settings(db=db, out_dir=db.parent / "out"))
heuristic = ws.provider("heuristic")
for limit in {limits!r}:
    before = resource.getrusage(resource.RUSAGE_SELF)
    summary = run_curation(ws, "default", heuristic, chosen=SessionFilter(limit=limit))
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    print(json.dumps({{"cpu": cpu, "applied": summary.sessions_applied, "status": summary.status}}), flush=True)
"""


def prepare(folder: Path, sessions: int, projects: int) -> Path:
    """A store of `sessions` synthetic sessions in `projects` projects, taking turns."""
    from core.store.db import open_db

    db = folder / f"store-{sessions}.duckdb"
    with open_db(db) as con:
        con.execute(STORE_SQL.replace("$n", str(sessions)).replace("$projects", str(projects)))
    return db


def curate(db: Path, limits: list[int]) -> list[dict[str, float]]:
    """CPU of consecutive keyless runs (one per limit) in a child process, on a fresh copy of `db`."""
    work = Path(tempfile.mkdtemp(prefix="playbook-store-run-"))
    try:
        copy = work / db.name
        shutil.copy(db, copy)
        code = CHILD.format(root=str(ROOT), db=str(copy), limits=limits)
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
        return [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", type=int, default=640, help="sessions in the small store")
    parser.add_argument("--large", type=int, default=20_000, help="sessions in the large store")
    parser.add_argument("--sessions", type=int, default=64, help="sessions each run curates")
    parser.add_argument("--projects", type=int, default=50, help="projects in each store")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rounds = max(3, args.rounds)
    folder = Path(tempfile.mkdtemp(prefix="playbook-store-"))
    try:
        stores = {size: prepare(folder, size, args.projects) for size in (args.small, args.large)}
        seen: dict[int, list[list[dict[str, float]]]] = {size: [] for size in stores}

        def measure(size: int) -> float:
            runs = curate(stores[size], [args.sessions, args.sessions])
            seen[size].append(runs)
            return runs[0]["cpu"]

        interleaved({str(s): (lambda s=s: measure(s)) for s in stores}, rounds)
        rows = []
        for step, label in ((0, "first run"), (1, "the next run")):
            per = {s: [r[step]["cpu"] / args.sessions * 1000 for r in seen[s]] for s in stores}
            applied = {s: seen[s][0][step]["applied"] for s in stores}
            print(f"{label}: sessions applied per store {applied}")
            row = Row(
                "store",
                f"keyless CPU per session, {label}, {args.large:,}-session store",
                "ms",
                per[args.large],
                f"{args.small:,}-session store",
                per[args.small],
                "<= 1.2x",
            )
            row.met = row.ratio is not None and row.ratio <= 1.2
            rows.append(row)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"largest child's peak RSS: {peak:.0f} MB")
        emit(rows)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
