"""Benchmark: the impact estimator on histories with a known truth (tests/histories.py), both designs: over many
seeds, how often the 95 % interval covers the true effect, how often a lesson with no effect is called `helps`,
and how often a lesson that helps (or hurts) is found. Then the cost of `impact` on a database of that size: the
SQL that counts the arms, interleaved with the floor of one scan of the same messages for the triggers, both in
CPU (`time.process_time()`: every thread of this process, DuckDB's included), so machine load cannot pass or fail
the ratio; the wall is printed beside it, not judged.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._table import Row, emit, interleaved  # noqa: E402
from core.exposure import parse_ledger  # noqa: E402
from core.impact import did_estimate, holdout_estimate  # noqa: E402
from core.models import CuratorOutput, ReflectorOutput  # noqa: E402
from core.operations import apply_session  # noqa: E402
from core.store.db import open_db  # noqa: E402
from core.store.exposure import impact_counts, store_ledger_lines  # noqa: E402
from core.store.ingest import ingest  # noqa: E402
from core.store.registry import ensure_playbook  # noqa: E402
from core.store.versions import load_version, write_version  # noqa: E402
from tests.histories import LESSONS, holdout_arms, holdout_history, rollout_arms, rollout_history, write_history  # noqa: E402


def figures(design: str, seeds: int) -> dict[str, dict[str, float]]:
    """Per lesson: the share of seeds whose interval covers the truth, and the shares of each verdict."""
    found = {x.entry_id: {"cover": 0.0, "helps": 0.0, "hurts": 0.0} for x in LESSONS}
    for seed in range(seeds):
        history = holdout_history(seed) if design == "holdout" else rollout_history(seed)
        for x in LESSONS:
            if design == "holdout":
                est = holdout_estimate(*holdout_arms(history, x.entry_id))
            else:
                est = did_estimate(*rollout_arms(history, x.entry_id))
            assert est.ci_low is not None and est.ci_high is not None
            found[x.entry_id]["cover"] += (est.ci_low <= x.effect <= est.ci_high) / seeds
            found[x.entry_id]["helps"] += (est.verdict == "helps") / seeds
            found[x.entry_id]["hurts"] += (est.verdict == "hurts") / seeds
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=300)
    parser.add_argument("--sessions", type=int, default=2000, help="sessions of the database the query runs on")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rows: list[Row] = []
    for design in ("holdout", "rollout"):
        found = figures(design, args.seeds)
        print(f"{design} ({args.seeds} seeds):")
        for x in LESSONS:
            f = found[x.entry_id]
            print(
                f"  {x.entry_id} (true effect {x.effect:+.2f}): interval covers the truth in {f['cover']:.1%},"
                f" helps {f['helps']:.1%}, hurts {f['hurts']:.1%}"
            )
        cover = min(f["cover"] for f in found.values())
        false_helps = found["mis-002"]["helps"]
        power = found["mis-001"]["helps"]
        rows += [
            Row(
                "impact", f"{design}: lowest coverage of the truth", "share", [cover], goal=">= 0.90", met=cover >= 0.9
            ),
            Row(
                "impact",
                f"{design}: no-effect lesson called helps",
                "share",
                [false_helps],
                goal="<= 0.05",
                met=false_helps <= 0.05,
            ),
            Row("impact", f"{design}: helping lesson found", "share", [power]),
        ]
    work = Path(tempfile.mkdtemp(prefix="playbook-bench-impact-"))
    history = holdout_history(1, sessions=args.sessions)
    write_history(history, work / "t", work / "ledger.jsonl")
    lines, _ = parse_ledger((work / "ledger.jsonl").read_text().splitlines())
    db = work / "i.duckdb"
    with open_db(db) as con:
        ingest(con, [work / "t"])
        store_ledger_lines(con, "bench", lines, 0, 0)
        ensure_playbook(con, "default")
        adds = [
            {"type": "ADD", "section": "MISTAKES TO AVOID", "text": f"About {x.trigger}.", "trigger": x.trigger}
            for x in LESSONS
        ]
        new, report = apply_session(load_version(con, "default"), ReflectorOutput(), CuratorOutput(operations=adds))
        write_version(con, "default", new, source="session", session_id=history[0].session_id, report=report)

    walls: dict[str, list[float]] = {"query": [], "floor": []}

    def query() -> float:
        with open_db(db, read_only=True) as con:
            cpu, started = time.process_time(), time.perf_counter()
            impact_counts(con, "default")
            walls["query"].append(time.perf_counter() - started)
            return time.process_time() - cpu

    def floor() -> float:
        with open_db(db, read_only=True) as con:
            cpu, started = time.process_time(), time.perf_counter()
            hit = " OR ".join(["contains(lower(text), lower(?))"] * len(LESSONS))
            con.execute(
                f"SELECT count(DISTINCT session_id) FROM messages WHERE kind = 'tool_result' AND ({hit})",
                [x.trigger for x in LESSONS],
            ).fetchall()
            walls["floor"].append(time.perf_counter() - started)
            return time.process_time() - cpu

    timed = interleaved({"query": query, "floor": floor}, args.rounds)
    for what, wall in walls.items():
        low, mid, high = min(wall), statistics.median(wall), max(wall)
        print(f"  wall, not judged: {what} {low * 1e3:.1f} / {mid * 1e3:.1f} / {high * 1e3:.1f} ms")
    ms = {what: [x * 1e3 for x in samples] for what, samples in timed.items()}  # ms: a query is tens of ms
    rows.append(
        Row(
            "impact",
            f"impact CPU over {args.sessions:,} sessions",
            "ms CPU",
            ms["query"],
            "one trigger scan",
            ms["floor"],
        )
    )
    emit(rows)


if __name__ == "__main__":
    main()
