"""Benchmark: the apply step on playbooks of 100, 1,000 and 10,000 entries.

For each size, one call applies 10 mixed operations (ADD, UPDATE, MERGE, DELETE) plus bullet tags and
pruning (`apply_session`), beside one plain `copy.deepcopy` of the same playbook measured in the same
run. Prints operations per second and the ratio call / deepcopy, so growth with size is visible.
"""

from __future__ import annotations

import copy
import statistics
import time
from collections.abc import Callable

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


def timeit(fn: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    print(f"{'entries':>8} {'apply (ms)':>11} {'ops/s':>9} {'deepcopy (ms)':>14} {'apply/deepcopy':>15}")
    rows = []
    for size in (100, 1_000, 10_000):
        playbook = make_playbook(size)
        reflector, curator = ops_for(playbook)
        repeat = 200 if size <= 1_000 else 30
        apply_s = timeit(lambda p=playbook, r=reflector, c=curator: apply_session(p, r, c), repeat)
        copy_s = timeit(lambda p=playbook: copy.deepcopy(p), repeat)
        _, report = apply_session(playbook, reflector, curator)
        assert report.applied() == 8, report.summary()
        rows.append((size, apply_s))
        print(f"{size:>8} {apply_s * 1e3:>11.3f} {10 / apply_s:>9.0f} {copy_s * 1e3:>14.3f} {apply_s / copy_s:>15.2f}")
    (s0, t0), (s1, t1) = rows[0], rows[-1]
    print(f"growth 100 -> 10,000 entries: x{t1 / t0:.1f} time for x{s1 / s0:.0f} size (linear would be x100)")


if __name__ == "__main__":
    main()
