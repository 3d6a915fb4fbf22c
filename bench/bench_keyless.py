"""Benchmark: a keyless run (`--llm heuristic`, the rules miner, no model) of 1,000 synthetic sessions, in CPU.

Each sample is a fresh child process on a fresh copy of one prepared database (the `bench_pipeline` sessions: six
message parts each, one project), so no round inherits another's memory or caches. Measured in the child: process
CPU seconds of the run loop (`run_curation` with the plain steps, no Prefect; DuckDB's threads included) and its
peak RSS. The floor, measured in the same rounds the same way: the rules' own reading, every session's messages read
from the store and observed by the miner once (what a keyless run cannot do without). The ratio is the run's median
over the floor's. `--profile N` prints the top N cumulative rows of one profiled run instead (cProfile, CPU clock).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._table import Row, emit, interleaved  # noqa: E402
from bench.bench_pipeline import SESSIONS_SQL  # noqa: E402
from core.store.db import open_db  # noqa: E402


def prepare(folder: Path, sessions: int) -> Path:
    """A database holding `sessions` synthetic sessions and nothing else."""
    db = folder / "template.duckdb"
    with open_db(db) as con:
        con.execute(SESSIONS_SQL.replace("$n", str(sessions)))
    return db


def run_keyless(db: Path) -> dict[str, float]:
    """One keyless run of every pending session of `db` (in this process): its CPU and what it wrote."""
    from core.selection import SessionFilter
    from flows.config import Settings
    from flows.run.curation import run_curation
    from flows.workspace import Workspace

    ws = Workspace.of(Settings(db=db, out_dir=db.parent / "out"))
    spec = ws.provider("heuristic")
    started = time.process_time()
    summary = run_curation(ws, "default", spec, chosen=SessionFilter())
    cpu = time.process_time() - started
    with open_db(db) as con:
        versions = con.execute("SELECT count(*) FROM versions WHERE source = 'session'").fetchone()
    return {"cpu": cpu, "applied": summary.sessions_applied, "versions": versions[0] if versions else 0}


def read_and_observe(db: Path) -> dict[str, float]:
    """The floor: every session's messages read once (64 sessions a query) and observed by the rules miner."""
    from core.miner import observe
    from core.store.observations import session_place
    from core.store.sessions import load_messages_of

    started = time.process_time()
    with open_db(db) as con:
        ids = [r[0] for r in con.execute("SELECT session_id FROM sessions ORDER BY session_id").fetchall()]
        for at in range(0, len(ids), 64):
            for session_id, messages in load_messages_of(con, ids[at : at + 64]):
                observe(messages, session_place(con, session_id)[1])
    return {"cpu": time.process_time() - started, "applied": len(ids), "versions": 0}


CHILDREN = {"run": run_keyless, "floor": read_and_observe}


def child(kind: str, db: Path) -> None:
    """Run one measure and print its figures and this process's peak RSS as one JSON line."""
    figures = CHILDREN[kind](db)
    figures["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(figures))


def sample(kind: str, template: Path, work: Path, figures: dict[str, list[float]]) -> float:
    """One measure in a fresh process on a fresh copy of the template; its CPU seconds."""
    db = work / f"{kind}.duckdb"
    db.unlink(missing_ok=True)
    shutil.copy(template, db)
    done = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(db)], check=True, capture_output=True, text=True
    )
    got = json.loads(done.stdout.strip().splitlines()[-1])
    figures.setdefault(f"{kind} rss", []).append(got["rss_mb"])
    figures.setdefault(f"{kind} versions", []).append(got["versions"])
    shutil.rmtree(db.parent / "out", ignore_errors=True)
    return float(got["cpu"])


def profile(template: Path, work: Path, top: int) -> None:
    """One run under cProfile (CPU clock), its top `top` rows by cumulative time."""
    db = work / "profiled.duckdb"
    shutil.copy(template, db)
    prof = cProfile.Profile(time.process_time)
    prof.enable()
    got = run_keyless(db)
    prof.disable()
    print(f"profiled run: {got['applied']:.0f} sessions applied, {got['versions']:.0f} versions, {got['cpu']:.1f} s")
    pstats.Stats(prof).sort_stats("cumulative").print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", type=int, default=0, help="print the top N rows of one profiled run instead")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "DB"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return
    work = Path(tempfile.mkdtemp(prefix="playbook-bench-keyless-"))
    try:
        template = prepare(work, args.sessions)
        if args.profile:
            profile(template, work, args.profile)
            return
        n = args.sessions
        extra: dict[str, list[float]] = {}
        cpu = interleaved(
            {k: (lambda k=k: sample(k, template, work, extra)) for k in CHILDREN},  # type: ignore[misc]
            max(3, args.rounds),
        )
        print(f"keyless run of {n} sessions: versions written {extra['run versions']}")
        emit(
            [
                Row("keyless", f"rules run, {n} sessions: CPU", "s", cpu["run"], "the floor", cpu["floor"]),
                Row("keyless", "  floor: each session read once and observed", "s", cpu["floor"]),
                Row("keyless", "  rules run: CPU per session", "ms", [c / n * 1e3 for c in cpu["run"]]),
                Row("keyless", "  rules run: peak RSS", "MB", extra["run rss"]),
            ]
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
