"""Benchmark: what Prefect costs a keyless run (issue 47 item 5; goals: <= 3 s of CPU a run and <= 5 ms a session over
the same run without Prefect).

The same synthetic sessions (`bench_store`'s, three projects) are curated with the rules twice per size: directly
(`run_curation`, as a command does with no Prefect server configured) and inside a Prefect flow run on the
ephemeral API with the steps the flows choose (`task_steps(provider)`). Each run is a child process, and its CPU
(DuckDB's threads and the ephemeral server's included) is what is measured; `--with-tasks` adds the flow run with a
task run per step and epoch, as every run had before. Two sizes give the fixed cost (at the small size, less the
direct run) and the cost a session (the slope between the sizes, less the direct run's slope); rounds interleave
the modes and sizes (`--rounds`, at least 3).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._table import Row, emit, interleaved  # noqa: E402

CHILD = """
import resource, sys, tempfile
sys.path.insert(0, {root!r})
from pathlib import Path
from bench.bench_store import STORE_SQL
from core.store.db import open_db
from flows.config import Settings
from flows.run.curation import run_curation
from flows.workspace import Workspace

work = Path(tempfile.mkdtemp(dir={tmp!r}))
db = work / "s.duckdb"
with open_db(db) as con:
    con.execute(STORE_SQL.replace("$n", "{n}").replace("$projects", "3"))
ws = Workspace.of(Settings(db=db, out_dir=work / "out"))
rules = ws.provider("heuristic")
before = resource.getrusage(resource.RUSAGE_SELF)
if {mode!r} == "direct":
    summary = run_curation(ws, "default", rules)
else:
    from prefect import flow
    from flows.run._runtime import local_run
    from flows.run.pipeline import task_steps

    @flow(name="bench-prefect")
    def curate():
        return run_curation(ws, "default", rules, steps=task_steps() if {mode!r} == "tasks" else task_steps(rules))

    with local_run():
        summary = curate()
after = resource.getrusage(resource.RUSAGE_SELF)
assert summary.sessions_applied == {n}, summary.status
print("cpu", after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
"""


def run(mode: str, n: int, tmp: str) -> float:
    """CPU seconds of one keyless run of `n` sessions in a child process (`mode`: direct, prefect or tasks)."""
    code = CHILD.format(root=str(ROOT), tmp=tmp, n=n, mode=mode)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return float(next(line for line in out.splitlines() if line.startswith("cpu ")).split()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", type=int, default=40)
    parser.add_argument("--large", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--with-tasks", action="store_true", help="also a flow run with a task run per step")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="playbook-prefect-")
    modes = ["direct", "prefect"] + (["tasks"] if args.with_tasks else [])
    samples = interleaved(
        {f"{m} {n}": (lambda m=m, n=n: run(m, n, tmp)) for m in modes for n in (args.small, args.large)},
        max(3, args.rounds),
    )
    span = args.large - args.small
    rows = []
    for mode in modes[1:]:
        fixed = [p - d for p, d in zip(samples[f"{mode} {args.small}"], samples[f"direct {args.small}"], strict=True)]
        slope = [
            ((pl - ps) - (dl - ds)) / span * 1000
            for pl, ps, dl, ds in zip(
                samples[f"{mode} {args.large}"],
                samples[f"{mode} {args.small}"],
                samples[f"direct {args.large}"],
                samples[f"direct {args.small}"],
                strict=True,
            )
        ]
        label = "a flow run, the steps it chooses" if mode == "prefect" else "a flow run, a task run per step"
        rows.append(Row("prefect", f"CPU a run over the direct run, {label}", "s", fixed, goal="<= 3 s"))
        rows.append(Row("prefect", f"CPU a session over the direct run, {label}", "ms", slope, goal="<= 5 ms"))
        rows[-2].met = statistics.median(fixed) <= 3
        rows[-1].met = statistics.median(slope) <= 5
    for name, values in samples.items():
        print(f"  {name} sessions: {', '.join(f'{v:.2f}' for v in values)} s of CPU, round by round")
    emit(rows)


if __name__ == "__main__":
    main()
