"""Benchmark: time to build the evolution report for a long history (default 10,000 versions).

The history (60 entries, 3 changes a version, one operation per version, prunes and 30 runs) is written
with SQL in the same run; the report is then built --rounds times (min / median / max; no baseline: it is the
time a user waits), with a screenshot path when a headless Chromium is available.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._table import Row, emit  # noqa: E402
from flows.insight.evolution import write_evolution_report  # noqa: E402
from tests.helpers import long_history  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--versions", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="playbook-report-")))
    args = parser.parse_args()
    db = args.out / "history.duckdb"
    started = time.perf_counter()
    long_history(db, args.versions)
    print(f"history of {args.versions} versions written in {time.perf_counter() - started:.1f} s")
    times = []
    for _ in range(max(3, args.rounds)):
        result = write_evolution_report(db, "default", args.out / "report")
        times.append(result.seconds)
    print(f"report for {args.versions} versions: {min(times):.2f} s (7 charts, HTML + PNG) -> {result.index}")
    emit([Row("report", f"evolution report, {args.versions:,} versions", "s", times)])
    browser = shutil.which("chromium")
    if browser:
        shot = args.out / "report" / "screenshot.png"
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
                result.index.as_uri(),
            ],
            capture_output=True,
            timeout=120,
        )
        print(f"screenshot: {shot}")


if __name__ == "__main__":
    main()
