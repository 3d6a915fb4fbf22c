"""Consolidation: near-duplicate live entries clustered and merged into one, with no model needed.

Pairs of live entries at or above the similarity threshold are joined into clusters (single link); each
cluster of two or more becomes one MERGE operation for the engine, whose text is the text of the member
with the best evidence (helpful minus harmful, then rediscoveries, then the oldest). The engine sums the
counters and removes the sources, as for any MERGE; the caller writes one version for the whole pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from core.models import Entry

__all__ = ["merge_operations", "near_pairs"]


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
) -> list[dict[str, Any]]:
    """MERGE operations (raw, as a curator would write them) for each cluster of near-duplicate entries.

    Args:
        entries: (section, entry) pairs of the live playbook, in playbook order.
        vectors: a unit vector per entry text.
        threshold: the similarity at which two entries say the same thing.
        rediscoveries: how often each entry was found again (evidence beside the counters).
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
            if similar[i, j]:
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
