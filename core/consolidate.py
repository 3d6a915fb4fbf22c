"""Consolidation: near-duplicate live entries clustered and merged into one, with no model needed.

When a model is configured it may write the merged text (`consolidation_reflection` is the curator's brief,
`with_curated_texts` takes its MERGE texts); which entries are merged is still decided here, by similarity.

Pairs of live entries at or above the similarity threshold are joined into clusters (single link); each
cluster of two or more becomes one MERGE operation for the engine, whose text is the text of the member
with the best evidence (helpful minus harmful, then rediscoveries, then the oldest). The engine sums the
counters and removes the sources, as for any MERGE; the caller writes one version for the whole pass.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from core.models import CuratorOutput, Entry, ReflectorOutput
from core.operations import clean_entry_text

__all__ = ["consolidation_reflection", "merge_operations", "near_pairs", "with_curated_texts"]


def near_pairs(entries: Sequence[Entry], vectors: Mapping[str, np.ndarray], threshold: float) -> int:
    """How many pairs of entries are at least `threshold` similar (the duplicate rate's numerator)."""
    if len(entries) < 2:
        return 0
    matrix = np.stack([vectors[e.text] for e in entries])
    similar = np.triu(matrix @ matrix.T >= threshold, k=1)
    return int(similar.sum())


def merge_operations(
    entries: Sequence[tuple[str, Entry]],
    vectors: Mapping[str, np.ndarray],
    threshold: float,
    rediscoveries: Mapping[str, int] | None = None,
    confirm: Callable[[Entry, Entry], bool] | None = None,
) -> list[dict[str, Any]]:
    """MERGE operations (raw, as a curator would write them) for each cluster of near-duplicate entries.

    Args:
        entries: (section, entry) pairs of the live playbook, in playbook order.
        vectors: a unit vector per entry text.
        threshold: the similarity at which two entries say the same thing.
        rediscoveries: how often each entry was found again (evidence beside the counters).
        confirm: when given, a pair at or above `threshold` is joined only if it says yes (a judge of
            candidates found by similarity, which can then be looked for below the skipping threshold).
    """
    found_again = rediscoveries or {}
    if len(entries) < 2:
        return []
    matrix = np.stack([vectors[e.text] for _, e in entries])
    similar = matrix @ matrix.T >= threshold
    parent = list(range(len(entries)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(entries)):
        for j in range(i + 1, len(entries)):
            if similar[i, j] and (confirm is None or confirm(entries[i][1], entries[j][1])):
                parent[root(j)] = root(i)
    clusters: dict[int, list[int]] = {}
    for i in range(len(entries)):
        clusters.setdefault(root(i), []).append(i)
    operations = []
    for members in clusters.values():
        if len(members) < 2:
            continue

        def evidence(i: int) -> tuple[int, int, int]:
            entry = entries[i][1]
            return (entry.helpful - entry.harmful, found_again.get(entry.name, 0), -i)

        keeper = max(members, key=evidence)
        operations.append(
            {
                "type": "MERGE",
                "source_ids": [entries[i][1].name for i in members],
                "merged_text": entries[keeper][1].text,
                "section": entries[keeper][0],
            }
        )
    return operations


def consolidation_reflection(operations: Sequence[Mapping[str, Any]], threshold: float) -> ReflectorOutput:
    """The curator's brief for a consolidation: the clusters to merge, one line each (no session)."""
    lines = [
        "Consolidation pass, not a session: each group below holds live playbook entries that say nearly the"
        f" same thing (sentence similarity at least {threshold:.2f}). For each group, return one MERGE whose"
        " source_ids are exactly the group's ids and whose merged_text states the lesson once, in one or two"
        " sentences, keeping every specific command, name and number. Return no other operation.",
    ]
    lines += [f"- group {i}: {', '.join(op['source_ids'])}" for i, op in enumerate(operations, 1)]
    return ReflectorOutput(analysis="\n".join(lines), bullet_tags=[])


def with_curated_texts(
    operations: Sequence[Mapping[str, Any]], curated: CuratorOutput | None, max_chars: int
) -> tuple[list[dict[str, Any]], int]:
    """`operations` with the merged texts the curator wrote for exactly their groups; any other operation it
    returned, and any text that is empty or over `max_chars` after cleaning, is ignored (the best-evidence
    text stays). Returns the operations and how many texts came from the curator."""
    planned = {frozenset(op["source_ids"]): dict(op) for op in operations}
    taken = 0
    for raw in curated.operations if curated else []:
        if not isinstance(raw, dict) or raw.get("type") != "MERGE" or not isinstance(raw.get("source_ids"), list):
            continue
        group = frozenset(str(i) for i in raw["source_ids"])
        text = clean_entry_text(raw["merged_text"]) if isinstance(raw.get("merged_text"), str) else ""
        if group in planned and text and len(text) <= max_chars and "curated" not in planned[group]:
            planned[group].update(merged_text=text, curated=True)
            taken += 1
    return [{k: v for k, v in op.items() if k != "curated"} for op in planned.values()], taken
