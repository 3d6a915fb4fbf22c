"""Benchmark: the CPU of the evolution report for a long history (default 10,000 versions) against the same
report for a short one (100 versions), interleaved, --rounds rounds (min / median / max).

Both histories (60 entries, 3 changes a version, one operation per version, prunes and 30 runs) are written with
SQL in the same run. Two rows, both CPU time (user + system), so machine load cannot make them pass:
- `playbook report`, each run a process of its own (what a user waits for: imports, the database, 8 charts, the
  page), its CPU read from `getrusage(RUSAGE_CHILDREN)`; goal <= 1.5x the 100-version report;
- the report alone, built in this process after a first build has loaded matplotlib and its fonts (no fixed cost
  to hide a part that grows with the history); goal <= 1.5x too.
With a headless Chromium on the machine, a screenshot of the long report is taken.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._table import Row, emit, interleaved  # noqa: E402
from flows.insight.evolution import write_evolution_report  # noqa: E402
from tests.helpers import long_history  # noqa: E402

GOAL = 1.5


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def command_cpu(command: list[str], env: dict[str, str]) -> float:
    """The CPU seconds (user + system) of `command`, run to its end as a child process."""
    before = _children_cpu()
    subprocess.run(command, env=env, capture_output=True, check=True)
    return _children_cpu() - before


def build_cpu(db: Path, out: Path) -> float:
    """The CPU seconds of building the report of `db` in this process."""
    started = time.process_time()
    write_evolution_report(db, "default", out)
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--versions", type=int, default=10_000)
    parser.add_argument("--short", type=int, default=100, help="versions of the history compared against")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="playbook-report-")))
    args = parser.parse_args()
    rounds = max(3, args.rounds)
    dbs = {n: args.out / f"history-{n}.duckdb" for n in (args.short, args.versions)}
    for n, db in dbs.items():
        started = time.perf_counter()
        long_history(db, n)
        print(f"history of {n:,} versions written in {time.perf_counter() - started:.1f} s")
    playbook = str(Path(sys.executable).with_name("playbook"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLAYBOOK_", "PREFECT_API"))}
    commands = {
        n: [playbook, "report", "--db", str(db), "--out", str(args.out / f"report-{n}")] for n, db in dbs.items()
    }
    for n, db in dbs.items():  # the first build loads matplotlib and its font cache: not a sample
        write_evolution_report(db, "default", args.out / f"build-{n}")
    samples = interleaved(
        {
            **{f"command {n}": (lambda c=c: command_cpu(c, env)) for n, c in commands.items()},
            **{f"build {n}": (lambda n=n, db=db: build_cpu(db, args.out / f"build-{n}")) for n, db in dbs.items()},
        },
        rounds,
    )
    long, short = f"{args.versions:,}", f"{args.short:,}"
    rows = []
    for kind, what in (("command", "`playbook report` (a process)"), ("build", "report build (in process)")):
        row = Row(
            "report",
            f"{what}, {long} versions",
            "s CPU",
            samples[f"{kind} {args.versions}"],
            f"the same at {short} versions",
            samples[f"{kind} {args.short}"],
            goal=f"<= {GOAL}x",
        )
        row.met = row.ratio is not None and row.ratio <= GOAL
        print(
            f"{what}, {short} versions: "
            + " / ".join(f"{v:.2f}" for v in _spread(samples[f"{kind} {args.short}"]))
            + " s CPU (min / median / max)"
        )
        rows.append(row)
    emit(rows)
    browser = shutil.which("chromium")
    if browser:
        shot = args.out / f"report-{args.versions}" / "screenshot.png"
        subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--no-first-run",
                f"--user-data-dir={args.out / 'profile'}",
                "--window-size=1000,3600",
                f"--screenshot={shot}",
                (args.out / f"report-{args.versions}" / "index.html").as_uri(),
            ],
            capture_output=True,
            timeout=120,
        )
        print(f"screenshot: {shot}")


def _spread(values: list[float]) -> tuple[float, float, float]:
    return min(values), statistics.median(values), max(values)


if __name__ == "__main__":
    main()
