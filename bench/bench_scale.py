"""Benchmark (a model, on paper): how long a night of S sessions over P playbooks takes on W workers, from the costs
measured here and a rate-limited model, and where the next limit is.

A throughput model of the fan-out the product runs (`shard = "playbook"`, `work_pool`): ingest into the store on one
machine (its measured CPU per session), then each worker takes one playbook's curation flow run at a time, with
`concurrency` model calls in flight, every call holding a slot of the global `model-calls` limit and a share of the
organisation's rate limits (requests and input tokens a minute); each session also takes its measured CPU on its
worker. The measured inputs come from `bench_team.py` and `bench_flat.py` on this machine (2 cores); the model's
latency, tokens and the rate limits are assumptions, said as such. Everything printed is modelled.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._table import Row, emit  # noqa: E402

# Measured here (bench_team.py, 50 contributors x 20 sessions, and bench_flat.py): CPU per session.
INGEST_S = 0.008  # ingest of a pushed session into the store
APPLY_S = 0.075  # a session's curation work outside the model: prompts, apply, version write
# Assumed (Sonnet-class model, Anthropic's published tier-4 limits): per call.
LATENCY_S = 20.0  # about 600 output tokens
INPUT_TOKENS = 3_970  # a call's input: a session's two calls take 7,900, as bench_pipeline.py models them
RPM = 4_000
ITPM = 2_000_000
NIGHT_S = 8 * 3600


@dataclass
class Night:
    """The simulated night: its wall time, and what bound it."""

    sessions: int
    playbooks: int
    workers: int
    ingest_s: float
    wall_s: float
    bound: str


def simulate(
    sessions: int, playbooks: int, workers: int, *, concurrency: int = 8, limit: int = 64, epoch_size: int = 8
) -> Night:
    """One night by throughput: ingest on one machine, then the playbooks' runs on `workers` (at most one run a
    worker, so at most `playbooks` at once), each with `concurrency` calls in flight, all under `limit` slots and
    the rate limits; a run's sessions also take their CPU on its worker. The night is the ingest plus the slowest
    of: the calls at the rate they can go, and the CPU of the busiest worker."""
    ingest = sessions * INGEST_S
    running = min(workers, playbooks)
    in_flight = min(running * min(concurrency, epoch_size), limit)
    calls = 2 * sessions
    rates = {
        "the workers (latency x sessions / workers x concurrency)": running * min(concurrency, epoch_size) / LATENCY_S,
        "the model-calls limit": limit / LATENCY_S,
        "the rate limits (requests a minute)": RPM / 60.0,
        "the rate limits (input tokens a minute)": ITPM / INPUT_TOKENS / 60.0,
    }
    bound, rate = min(rates.items(), key=lambda kv: kv[1])
    assert rate <= in_flight / LATENCY_S + 1e-9
    model_s = calls / rate
    # The busiest worker's CPU: its share of the playbooks (whole runs), each run's sessions at APPLY_S.
    per_run = sessions / playbooks
    cpu_s = -(-playbooks // running) * per_run * APPLY_S
    if cpu_s > model_s:
        bound, model_s = "the workers' CPU", cpu_s
    return Night(sessions, playbooks, workers, ingest, ingest + model_s, bound)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--playbooks", type=int, default=50, help="playbooks (one per team or project)")
    parser.add_argument("--workers", default="1,2,4,8,16,32,64")
    parser.add_argument("--limits", default="64,256", help="sizes of the model-calls limit to try")
    args = parser.parse_args()
    rows = []
    for limit in (int(x) for x in args.limits.split(",")):
        rows += _table(args, limit)
    emit(rows)


def _table(args: argparse.Namespace, limit: int) -> list[Row]:
    rows = []
    print(
        f"Modelled: {LATENCY_S:g} s a call, {INPUT_TOKENS:,} input tokens, {RPM:,} requests and {ITPM:,} input"
        f" tokens a minute, concurrency 8 a worker, model-calls limit {limit}; measured here: ingest"
        f" {INGEST_S * 1e3:g} ms and curation {APPLY_S * 1e3:g} ms of CPU a session."
    )
    print(f"{'sessions':>9} {'workers':>8} {'ingest':>9} {'night':>9}  bound by")
    for size in (int(s) for s in args.sizes.split(",")):
        fits = None
        for w in (int(x) for x in args.workers.split(",")):
            night = simulate(size, min(args.playbooks, size), w, limit=limit)
            print(f"{size:>9,} {w:>8} {night.ingest_s / 60:8.1f}m {night.wall_s / 3600:8.2f}h  {night.bound}")
            if fits is None and night.wall_s <= NIGHT_S:
                fits = night
        night = fits or simulate(size, min(args.playbooks, size), int(args.workers.split(",")[-1]), limit=limit)
        said = f"{night.workers} worker(s)" if fits is not None else "over 8 h on any pool"
        rows.append(
            Row(
                "scale",
                f"{size:,} sessions a night, limit {limit}: {said}, bound by {night.bound}",
                "h",
                [night.wall_s / 3600],
                goal="<= 8 h",
                met=fits is not None,
                modelled=True,
            )
        )
    return rows


if __name__ == "__main__":
    main()
