"""Benchmark: the apply step on playbooks of 100, 1,000 and 10,000 entries.

For each size, one call applies 10 mixed operations (ADD, UPDATE, MERGE, DELETE) plus bullet tags and
pruning (`apply_session`), interleaved with a floor measured in the same run: the same changes made to plain
tuples, with no validation and no models (copy each section the session touches, then rewrite, drop, count and
append by an id index built beforehand, as `apply_session` carries its own between calls). Prints operations
per second and the ratio call / floor, so what the engine costs beyond moving the data is visible at each size.

Every figure is CPU (`time.process_time`), not wall, so machine load cannot pass or fail a ratio; a call of
microseconds is timed in a batch of calls lasting about `--budget` and divided.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._table import Row, emit, interleaved
from core.models import (
    AddOp,
    BulletTag,
    CuratorOutput,
    DeleteOp,
    Entry,
    MergeOp,
    Playbook,
    ReflectorOutput,
    UpdateOp,
)
from core.operations import apply_session
from core.sections import DEFAULT_SECTIONS


def make_playbook(size: int) -> Playbook:
    names = DEFAULT_SECTIONS.names
    sections: dict[str, list[Entry]] = {n: [] for n in names}
    for i in range(size):
        name = names[i % len(names)]
        slug = DEFAULT_SECTIONS.slug_of(name)
        sections[name].append(Entry(name=f"{slug}-{i // len(names) + 1:03d}", text=f"lesson {i}", helpful=i % 4))
    return Playbook(sections=sections)


def ops_for(playbook: Playbook) -> tuple[ReflectorOutput, CuratorOutput]:
    ids = [e.name for _, e in playbook.entries()]
    mid = len(ids) // 2
    operations = [
        {"type": "ADD", "text": "new lesson A", "section": "PATTERNS & APPROACHES"},
        {"type": "ADD", "text": "new lesson B", "section": "mistakes to avoid"},
        {"type": "UPDATE", "target_id": ids[mid], "text": "revised"},
        {"type": "UPDATE", "target_id": ids[-1], "text": "revised again"},
        {"type": "MERGE", "source_ids": [ids[1], ids[6]], "merged_text": "merged 1"},
        {"type": "MERGE", "source_ids": [ids[11], ids[16], "ghost-001"], "merged_text": "merged 2"},
        {"type": "DELETE", "target_id": ids[2], "reason": "bench"},
        {"type": "DELETE", "target_id": "ghost-002", "reason": "missing"},
        {"type": "ADD", "text": "lesson 3"},  # duplicate text: skipped
        {"type": "ADD", "text": "new lesson C", "section": "OTHERS"},
    ]
    tags = [BulletTag(name=ids[i], tag="harmful" if i % 2 else "helpful") for i in range(0, min(len(ids), 40), 3)]
    return ReflectorOutput(analysis="bench", bullet_tags=tags), CuratorOutput(operations=operations)


def plain_floor(playbook: Playbook, reflector: ReflectorOutput, curator: CuratorOutput) -> Callable[[], object]:
    """The floor: `curator`'s changes and `reflector`'s tags made to plain tuples (name, text, helpful, harmful)."""
    sections = {n: [(e.name, e.text, e.helpful, e.harmful) for e in items] for n, items in playbook.sections.items()}
    where = {row[0]: (n, i) for n, rows in sections.items() for i, row in enumerate(rows)}
    by_lower = {n.lower(): n for n in sections}
    gone: list[str] = []
    rewritten: list[tuple[str, str]] = []
    added: list[tuple[str, str]] = []
    for op in curator.operations:
        if isinstance(op, AddOp):
            added.append((by_lower.get((op.section or "").lower(), "OTHERS"), op.text))
        elif isinstance(op, UpdateOp):
            rewritten.append((op.target_id, op.text))
        elif isinstance(op, MergeOp):
            known = [i for i in op.source_ids if i in where]
            gone += known[1:]
            rewritten += [(known[0], op.merged_text)] if known else []
        elif isinstance(op, DeleteOp):
            gone.append(op.target_id)
    gone = [i for i in gone if i in where]
    rewritten = [(i, t) for i, t in rewritten if i in where]
    tags = [(t.name, t.tag == "helpful") for t in reflector.bullet_tags if t.name in where]
    touched = {where[i][0] for i in [*gone, *(i for i, _ in rewritten), *(i for i, _ in tags)]} | {s for s, _ in added}

    def run() -> dict[str, list[tuple[str, str, int, int] | None]]:
        out: dict[str, list[tuple[str, str, int, int] | None]] = dict(sections)  # type: ignore[arg-type]
        for name in touched:
            out[name] = list(sections[name])
        for entry_id, text in rewritten:
            section, i = where[entry_id]
            row = out[section][i]
            if row is not None:
                out[section][i] = (row[0], text, row[2], row[3])
        for entry_id, helpful in tags:
            section, i = where[entry_id]
            row = out[section][i]
            if row is not None:
                out[section][i] = (row[0], row[1], row[2] + helpful, row[3] + (not helpful))
        for entry_id in gone:
            section, i = where[entry_id]
            out[section][i] = None
        for n, (section, text) in enumerate(added):
            out[section].append((f"new-{n:03d}", text, 0, 0))
        for name in touched:
            out[name] = [row for row in out[name] if row is not None]
        return out

    return run


def calls_for(fn: Callable[[], object], budget: float) -> int:
    """How many calls of `fn` take about `budget` CPU seconds (measured once, on growing batches)."""
    calls = 1
    while True:
        start = time.process_time()
        for _ in range(calls):
            fn()
        took = time.process_time() - start
        if took >= budget / 4 or calls >= 1 << 20:
            return max(1, round(calls * budget / max(took, 1e-9)))
        calls *= 4


def per_call(fn: Callable[[], object], budget: float) -> Callable[[], float]:
    """A measure: CPU seconds per call of `fn`, over a batch of calls sized once to last about `budget`.

    A batch, not one call, so the CPU clock's resolution cannot decide a ratio of calls of microseconds.
    """
    calls = calls_for(fn, budget)

    def measure() -> float:
        start = time.process_time()
        for _ in range(calls):
            fn()
        return (time.process_time() - start) / calls

    return measure


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--budget", type=float, default=0.02, help="CPU seconds per timed batch of calls")
    args = parser.parse_args()
    print("CPU per call (process_time), median of the rounds:")
    print(f"{'entries':>8} {'apply (ms)':>11} {'ops/s':>9} {'floor (ms)':>11} {'apply/floor':>12}")
    rows: list[Row] = []
    for size in (100, 1_000, 10_000):
        playbook = make_playbook(size)
        reflector, curator = ops_for(playbook)
        apply = per_call(functools.partial(apply_session, playbook, reflector, curator), args.budget)
        floor = per_call(plain_floor(playbook, reflector, curator), args.budget)
        got = interleaved({"apply": apply, "floor": floor}, max(3, args.rounds))
        _, report = apply_session(playbook, reflector, curator)
        assert report.applied() == 8, report.summary()
        apply_s, floor_s = statistics.median(got["apply"]), statistics.median(got["floor"])
        print(
            f"{size:>8} {apply_s * 1e3:>11.3f} {10 / apply_s:>9.0f} {floor_s * 1e3:>11.4f} {apply_s / floor_s:>12.1f}"
        )
        ms = {name: [x * 1e3 for x in samples] for name, samples in got.items()}
        rows.append(
            Row(
                "apply",
                f"apply_session, {size:,} entries",
                "ms CPU",
                ms["apply"],
                "the same changes on tuples",
                ms["floor"],
            )
        )
    emit(rows)


if __name__ == "__main__":
    main()
