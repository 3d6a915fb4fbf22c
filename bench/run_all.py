"""`make bench`: every benchmark, one after the other (each alone on the machine), then one table.

Each bench prints its own detail as it goes and hands its headline rows to this script (`BENCH_ROWS`);
the table gives, per row, min / median / max of the samples, the baseline's median, the ratio of the
medians, the goal and whether it is met. Modelled figures (tokens, prices) are marked as such. Sizes are
the ones that keep the whole run near half an hour here; each bench's `--help` gives its full-size options.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._table import Row, spread  # noqa: E402

BENCHES: list[list[str]] = [
    ["bench_cli.py", "--rounds", "5"],
    ["bench_hooks.py", "--rounds", "15"],
    ["bench_mcp.py", "--rounds", "3"],
    ["bench_apply.py", "--rounds", "5"],
    ["bench_answer.py", "--rounds", "7"],
    ["bench_tokens.py"],
    ["bench_miner.py", "--rounds", "5"],
    ["bench_impact.py", "--seeds", "300", "--rounds", "5"],
    # Two sizes past the bound where ingest's memory reaches its cap (~1 GB), so their peak RSS ratio is a slope.
    ["bench_ingest.py", "--sizes", "1000,2000", "--rounds", "3"],
    ["bench_redact.py", "--rounds", "5"],
    # Batches of 20 ms of CPU (not 50): CPU time is the child's own, so shorter batches stay steady.
    ["bench_regex.py", "--budget", "0.02"],
    ["bench_jsonx.py", "--rounds", "5"],
    ["bench_recipes.py", "--rounds", "3"],
    ["bench_growth.py", "--rounds", "3"],
    ["bench_rebuild.py", "--rounds", "7"],
    # The lexical stems every install has, then the peak memory of a default run: the MiniLM rows take about 40
    # minutes more (`bench_flat.py --embedders minilm`).
    ["bench_flat.py", "--rounds", "3", "--embedders", "lexical", "--no-peak"],
    # One round of the peak: a value against a goal (< 1.5 GB), not a ratio, and ~2 minutes of CPU a round.
    ["bench_flat.py", "--no-flat", "--peak-rounds", "1"],
    ["bench_store.py", "--rounds", "3"],
    ["bench_prefect.py", "--rounds", "3"],
    ["bench_report.py", "--rounds", "3"],
    # Calls of 0.5 s, not the default 2 s: the share of calls in flight only gets harder to keep up (the run's own
    # CPU per call is milliseconds), and the 18 runs sleep a quarter as long (305 s of wall at 1 s, under load).
    ["bench_pipeline.py", "--sessions", "200", "--latency-sessions", "32", "--latency", "0.5", "--rounds", "3"],
    ["bench_keyless.py", "--rounds", "3"],
    # A team of 10 writing 10 sessions a day each, 10 nights of history (13 s of CPU a night at 20 a day).
    ["bench_team.py", "--contributors", "10", "--per-day", "10", "--days", "10"],
    ["bench_scale.py"],
]


def table(rows: list[Row]) -> str:
    """The rows as one aligned text table."""
    head = ("bench", "measure", "min / median / max", "unit", "baseline (median)", "ratio", "goal", "")
    lines = [head]
    for r in rows:
        base = f"{r.baseline} ({statistics.median(r.base):.2f})" if r.base else ""
        ratio = f"{r.ratio:.2f}x" if r.ratio is not None else ""
        verdict = "" if r.met is None else ("met" if r.met else "NOT met")
        what = r.what + (" (modelled)" if r.modelled else "")
        lines.append((r.bench, what, spread(r.samples), r.unit, base, ratio, r.goal, verdict))
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip() for line in lines)


def children_cpu() -> float:
    """CPU seconds (user + system) of every finished child process so far, their own children included."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="", help="comma-separated bench names (e.g. ingest,flat)")
    args = parser.parse_args()
    wanted = {f"bench_{name.strip()}.py" for name in args.only.split(",") if name.strip()}
    chosen = [b for b in BENCHES if not wanted or b[0] in wanted]
    with tempfile.TemporaryDirectory(prefix="playbook-bench-rows-") as tmp:
        collected = Path(tmp) / "rows.jsonl"
        collected.touch()
        failed = []
        costs: list[tuple[str, float, float]] = []  # (bench, wall s, CPU s)
        for script, *options in chosen:
            print(f"\n== {script} {' '.join(options)}", flush=True)
            started, cpu = time.perf_counter(), children_cpu()
            env = {**os.environ, "BENCH_ROWS": str(collected)}
            code = subprocess.run([sys.executable, str(ROOT / "bench" / script), *options], env=env).returncode
            costs.append((script, time.perf_counter() - started, children_cpu() - cpu))
            print(
                f"== {script}: {costs[-1][1]:.0f} s wall, {costs[-1][2]:.0f} s CPU"
                f"{'' if code == 0 else f', exit {code}'}"
            )
            if code:
                failed.append(script)
        rows = [Row(**json.loads(line)) for line in collected.read_text().splitlines() if line.strip()]
    print("\n" + table(rows))
    wall, cpu = sum(c[1] for c in costs), sum(c[2] for c in costs)
    print(f"\n{len(costs)} runs: {wall / 60:.1f} min wall, {cpu / 60:.1f} min CPU (children included)")
    if failed:
        print(f"\nfailed: {', '.join(failed)}")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
