"""Benchmark: the apply step on playbooks of 100, 1,000 and 10,000 entries.

For each size, one call applies 10 mixed operations (ADD, UPDATE, MERGE, DELETE) plus bullet tags and
pruning (`apply_session`), beside one plain `copy.deepcopy` of the same playbook measured in the same
run. Prints operations per second and the ratio call / deepcopy, so growth with size is visible.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._table import Row, emit, interleaved
from core.models import BulletTag, CuratorOutput, Entry, Playbook, ReflectorOutput
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


def per_call(fn: Callable[[], object], repeat: int) -> Callable[[], float]:
    """A measure: seconds per call of `fn`, over a block of `repeat` calls."""

    def measure() -> float:
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        return (time.perf_counter() - start) / repeat

    return measure


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"{'entries':>8} {'apply (ms)':>11} {'ops/s':>9} {'deepcopy (ms)':>14} {'apply/deepcopy':>15}")
    rows: list[Row] = []
    for size in (100, 1_000, 10_000):
        playbook = make_playbook(size)
        reflector, curator = ops_for(playbook)
        repeat = 40 if size <= 1_000 else 6
        apply = per_call(lambda p=playbook, r=reflector, c=curator: apply_session(p, r, c), repeat)
        deep = per_call(lambda p=playbook: copy.deepcopy(p), repeat)
        got = interleaved({"apply": apply, "deepcopy": deep}, max(3, args.rounds))
        _, report = apply_session(playbook, reflector, curator)
        assert report.applied() == 8, report.summary()
        apply_s, copy_s = statistics.median(got["apply"]), statistics.median(got["deepcopy"])
        print(f"{size:>8} {apply_s * 1e3:>11.3f} {10 / apply_s:>9.0f} {copy_s * 1e3:>14.3f} {apply_s / copy_s:>15.2f}")
        ms = {name: [x * 1e3 for x in samples] for name, samples in got.items()}
        rows.append(
            Row("apply", f"apply_session, {size:,} entries", "ms", ms["apply"], "copy.deepcopy", ms["deepcopy"])
        )
    emit(rows)


if __name__ == "__main__":
    main()
