"""Benchmark: how long the CLI takes for `--help`, the read commands and a nightly with nothing to do,
against `python -c pass` measured in the same run, interleaved, 5 rounds (min / median / max).

Goals on this machine: `--help` and the read commands < 1.5 s; an idle `nightly` < 5 s (it must not start
Prefect). The state is made once through the Python API (no Prefect): the bundled samples ingested and
curated with the heuristic provider.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._table import Row, emit  # noqa: E402
from flows.config import Settings  # noqa: E402
from flows.run.curation import run_curation  # noqa: E402
from flows.run.ingest import ingest_with  # noqa: E402
from flows.workspace import Workspace  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="playbook-bench-cli-"))
    samples = ROOT / "data" / "samples"
    settings = Workspace.of(Settings(db=work / "b.duckdb", out_dir=work / "out"))
    ingest_with(settings, [samples])
    run_curation(settings, "default", settings.provider("heuristic"))
    playbook = str(Path(sys.executable).with_name("playbook"))
    db = ["--db", str(settings.settings.db)]
    commands = {
        "python -c pass (baseline)": [sys.executable, "-c", "pass"],
        "playbook --help": [playbook, "--help"],
        "playbook show": [playbook, "show", *db],
        "playbook history": [playbook, "history", *db],
        "playbook sessions": [playbook, "sessions", *db],
        "playbook runs": [playbook, "runs", *db],
        "playbook nightly (idle)": [playbook, "nightly", str(samples), "--llm", "heuristic", *db],
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLAYBOOK_", "PREFECT_API"))}
    env["PLAYBOOK_OUT_DIR"] = str(work / "out")
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.rounds):
        for name, command in commands.items():  # interleaved: machine load hits every command alike
            started = time.perf_counter()
            subprocess.run(command, cwd=work, env=env, capture_output=True, check=True)
            times[name].append(time.perf_counter() - started)
    base = statistics.median(times["python -c pass (baseline)"])
    print(f"{'command':<28} {'min':>7} {'median':>7} {'max':>7} {'x baseline':>10}")
    for name, values in times.items():
        med = statistics.median(values)
        print(f"{name:<28} {min(values):7.2f} {med:7.2f} {max(values):7.2f} {med / base:10.1f}")
    baseline = "python -c pass"
    rows = []
    for name, values in times.items():
        if name.startswith("python"):
            continue
        limit = 5.0 if "nightly" in name else 1.5
        rows.append(Row("cli", name, "s", values, baseline, times["python -c pass (baseline)"]))
        rows[-1].goal, rows[-1].met = f"< {limit} s", statistics.median(values) < limit
    emit(rows)


if __name__ == "__main__":
    main()
