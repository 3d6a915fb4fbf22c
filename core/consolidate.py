"""Consolidation: near-duplicate live entries clustered and merged into one.

Pairs of live entries at or above the similarity threshold are joined into clusters (single link); each
cluster of two or more becomes one MERGE operation for the engine, whose text is the text of the member
with the best evidence (helpful minus harmful, then rediscoveries, then the oldest). The engine sums the
counters and removes the sources, as for any MERGE; the caller writes one version for the whole pass.

When a model is configured it judges more: `candidate_groups` finds entries that may say one lesson in
other words (well below the threshold), `judging_reflection` is its brief, and `judged_merges` takes its
MERGEs within those groups and says which pairs it kept apart. `merged_wordings` keeps each merged-away text
as an alias of the entry it went into.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from core.models import CuratorOutput, Entry, ReflectorOutput
from core.near_misses import different
from core.operations import clean_entry_text

__all__ = [
    "candidate_groups",
    "judged_merges",
    "judging_reflection",
    "merge_operations",
    "merged_wordings",
    "near_pairs",
    "near_pairs_since",
    "texts_digest",
]


_BLOCK = 512
# How far below the threshold a float32 product of unit vectors may land for a pair that is at it: the products err
# by ~1e-6 at most (sums of a few hundred terms), so a pair within this margin is decided by its exact similarity.
_MARGIN = 1e-3


def _exact(a: np.ndarray, b: np.ndarray) -> float:
    """The similarity of two vectors, rounded once: each product of two float32 values is exact in float64 and
    `math.fsum` adds them exactly, so it is the same whatever the order or the shape of the product it came from.
    A pair is near by this, not by a BLAS product whose last bit depends on the block it was computed in, so
    every way of counting (`near_pairs`, `near_pairs_since`) agrees on every pair, at the threshold too."""
    return math.fsum((np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)).tolist())


def _near(a: str, b: str, vectors: Mapping[str, np.ndarray], threshold: float) -> bool:
    """Whether two texts are a near-duplicate pair: at least `threshold` similar, and not told apart by the
    near-miss rules (both are symmetric, so the order of the two does not matter)."""
    return _exact(vectors[a], vectors[b]) >= threshold and not different(a, b)


def _compact(texts: Sequence[str], vectors: Mapping[str, np.ndarray]) -> np.ndarray:
    matrix = np.array([vectors[t] for t in texts], dtype=np.float32)
    # Only the dimensions some entry uses: a column of zeros adds nothing to any product, and the word-stem vectors
    # use few of theirs (921 of 2,048 at 5,000 entries: the count in 0.27 s of CPU instead of 0.48 s).
    return np.take(matrix, np.flatnonzero(matrix.any(axis=0)), axis=1)


def _gathered(texts: Sequence[str], vectors: Mapping[str, np.ndarray], used: np.ndarray) -> np.ndarray:
    """The vectors of `texts` in the dimensions `used` only, one row each: stacked `_BLOCK` at a time, so the full
    matrix (40 MB of word-stem vectors at 5,000 entries, every page of it new) is never made."""
    out = np.empty((len(texts), len(used)), dtype=np.float32)
    for start in range(0, len(texts), _BLOCK):
        part = np.array([vectors[t] for t in texts[start : start + _BLOCK]], dtype=np.float32)
        out[start : start + len(part)] = np.take(part, used, axis=1)  # half the CPU of `part[:, used]`
    return out


def texts_digest(texts: Iterable[str]) -> str:
    """A digest of a multiset of texts (the same in any order; a text twice is not a text once)."""
    digest = hashlib.sha256()
    for key in sorted(hashlib.blake2b(t.encode(), digest_size=16).digest() for t in texts):
        digest.update(key)
    return digest.hexdigest()


def near_pairs(entries: Sequence[Entry], vectors: Mapping[str, np.ndarray], threshold: float) -> int:
    """How many pairs of entries are at least `threshold` similar and not told apart by the near-miss rules (the
    duplicate rate's numerator)."""
    if len(entries) < 2:
        return 0
    texts = [e.text for e in entries]
    matrix = _compact(texts, vectors)
    # By blocks of rows against the rows from the block on: half the products of a full n x n matrix, and
    # memory for a block's scores only (the full matrix is 100 MB at 5,000 entries).
    upper = np.triu(np.ones((_BLOCK, _BLOCK), dtype=bool), k=1)
    count = 0
    for start in range(0, len(matrix), _BLOCK):
        hits = matrix[start : start + _BLOCK] @ matrix[start:].T >= threshold - _MARGIN
        rows = hits.shape[0]
        hits[:, :rows] &= upper[:rows, :rows]
        # The few pairs near the threshold, decided exactly; those the near-miss rules tell apart are not
        # duplicates either.
        count += sum(
            1
            for i, j in zip(*np.nonzero(hits), strict=True)
            if _near(texts[start + int(i)], texts[start + int(j)], vectors, threshold)
        )
    return count


def near_pairs_since(
    before: Sequence[str], after: Sequence[str], vectors: Mapping[str, np.ndarray], threshold: float, counted: int
) -> int | None:
    """`near_pairs` of the entries whose texts are `after`, from `counted`, the count of those of `before`: the
    pairs that touch a text no longer there are taken off and those that touch a new one added, so a run that
    changed a few entries of thousands compares those few against the rest instead of every pair again. None when
    so much changed that counting every pair is cheaper (then call `near_pairs`).

    Texts are taken as a multiset: a text twice is two entries. `vectors` must hold both lists' texts.
    """
    old, new = Counter(before), Counter(after)
    gone, came = old - new, new - old
    changed = sum(gone.values()) + sum(came.values())
    # Each changed text costs a row against all; every pair costs half of n rows against all.
    if 4 * changed > max(len(after), len(before)):
        return None
    return counted - _touching(before, gone, vectors, threshold) + _touching(after, came, vectors, threshold)


def _touching(texts: Sequence[str], these: Counter[str], vectors: Mapping[str, np.ndarray], threshold: float) -> int:
    """How many near pairs of `texts` have at least one end among `these` (a sub-multiset of `texts`)."""
    if not these or len(texts) < 2:
        return 0
    wanted = Counter(these)
    rows = []  # the positions of `these` in `texts`: any occurrences of a text, they are interchangeable
    for i, text in enumerate(texts):
        if wanted.get(text, 0) > 0:  # not `wanted[text]`: a Counter calls `__missing__` for each absent text
            wanted[text] -= 1
            rows.append(i)
    picked = np.array(rows)
    # Only the dimensions `these` use: a product with them is the same sum without its zero terms, and the
    # word-stem vectors of a run's few changed texts use a fraction of the playbook's (the pass over every entry
    # for the dimensions any of them uses, and the full matrix it stacked, were most of the count's CPU).
    asked = np.array([vectors[texts[i]] for i in picked], dtype=np.float32)
    used = np.flatnonzero(asked.any(axis=0))
    asked = asked[:, used]
    matrix = _gathered(texts, vectors, used)
    among = np.zeros(len(texts), dtype=bool)
    among[picked] = True
    count = 0
    for start in range(0, len(picked), _BLOCK):
        block = picked[start : start + _BLOCK]
        hits = asked[start : start + _BLOCK] @ matrix.T >= threshold - _MARGIN
        # A pair with both ends among `these` once (from its lower end), and never an entry with itself.
        columns = np.arange(len(texts))
        hits &= ~among[None, :] | (columns[None, :] > block[:, None])
        count += sum(
            1
            for i, j in zip(*np.nonzero(hits), strict=True)
            if _near(texts[int(block[i])], texts[int(j)], vectors, threshold)
        )
    return count


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
    if len(entries) < 2:
        return []
    similar = _scores(entries, vectors) >= threshold
    joins = [
        (i, j)
        for i, j in zip(*np.nonzero(np.triu(similar, k=1)), strict=True)
        if not different(entries[i][1].text, entries[j][1].text)  # alike in words, not in what they say
        and (confirm is None or confirm(entries[i][1], entries[j][1]))
    ]
    return [_merge(entries, members, rediscoveries or {}) for members in _clusters(len(entries), joins)]


def _scores(entries: Sequence[tuple[str, Entry]], vectors: Mapping[str, np.ndarray]) -> np.ndarray:
    matrix = np.array([vectors[e.text] for _, e in entries], dtype=np.float32)
    return matrix @ matrix.T


def _clusters(n: int, joins: Iterable[tuple[int, int]]) -> list[list[int]]:
    """The groups of two or more that `joins` (pairs of indexes) make, single link, in order of first member."""
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in joins:
        a, b = root(int(i)), root(int(j))
        if a != b:
            parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(root(i), []).append(i)
    return [members for members in groups.values() if len(members) > 1]


def _merge(
    entries: Sequence[tuple[str, Entry]], members: list[int], found_again: Mapping[str, int], text: str | None = None
) -> dict[str, Any]:
    """One MERGE of `members`, with `text` or else the text of the member with the best evidence (helpful minus
    harmful, then rediscoveries, then the oldest), in that member's section."""

    def evidence(i: int) -> tuple[int, int, int]:
        entry = entries[i][1]
        return (entry.helpful - entry.harmful, found_again.get(entry.name, 0), -i)

    keeper = max(members, key=evidence)
    return {
        "type": "MERGE",
        "source_ids": [entries[i][1].name for i in members],
        "merged_text": text or entries[keeper][1].text,
        "section": entries[keeper][0],
    }


def candidate_groups(
    entries: Sequence[tuple[str, Entry]],
    vectors: Mapping[str, np.ndarray],
    *,
    floor: float,
    neighbours: int = 2,
    max_group: int = 6,
    judged_different: Collection[frozenset[str]] = frozenset(),
) -> list[list[int]]:
    """Groups of entries (indexes) for a judge to look at, well below the skipping threshold.

    A pair is a candidate when its similarity is at least `floor`, or when one is among the other's `neighbours`
    closest entries (paraphrases can score low yet still be each other's nearest); pairs whose two texts were
    judged different before are left out. Pairs are joined most similar first, and never into a group of more
    than `max_group` (a chain of loose pairs must not become one group of everything).
    """
    n = len(entries)
    if n < 2:
        return []
    scores = _scores(entries, vectors)
    np.fill_diagonal(scores, -np.inf)
    pairs = {(int(i), int(j)) for i, j in zip(*np.nonzero(np.triu(scores >= floor, k=1)), strict=True)}
    if neighbours:
        k = min(neighbours, n - 1)
        closest = np.argpartition(-scores, k - 1, axis=1)[:, :k]  # each row's k closest, in no order
        pairs.update((min(i, int(j)), max(i, int(j))) for i in range(n) for j in closest[i])
    texts = [e.text for _, e in entries]
    ranked = sorted(
        (p for p in pairs if frozenset((texts[p[0]], texts[p[1]])) not in judged_different),
        key=lambda p: (-scores[p], p),
    )
    group = {i: [i] for i in range(n)}
    for i, j in ranked:
        a, b = group[i], group[j]
        if a is not b and len(a) + len(b) <= max_group:
            a.extend(b)
            for k in b:
                group[k] = a
    seen: set[int] = set()
    found = []
    for i in range(n):
        if len(group[i]) > 1 and id(group[i]) not in seen:
            seen.add(id(group[i]))
            found.append(sorted(group[i]))
    return found


def judged_merges(
    entries: Sequence[tuple[str, Entry]],
    similar: Sequence[Mapping[str, Any]],
    groups: Sequence[Sequence[int]],
    judged: CuratorOutput | None,
    max_chars: int,
    rediscoveries: Mapping[str, int] | None = None,
) -> tuple[list[dict[str, Any]], list[frozenset[str]], int]:
    """The MERGE operations of a consolidation a model judged.

    The clusters of `similar` (the MERGEs `merge_operations` found at the threshold, the rule every ADD is held
    to) merge as without a model; beyond that, the model's MERGEs join entries, each only within one of the
    `groups` it was shown (a MERGE that reaches outside its group, names unknown ids or has fewer than two is
    ignored). A cluster that is exactly one MERGE of the model takes its text (cleaned, at most `max_chars`);
    other clusters take the best-evidence text.

    Returns:
        The operations; the pairs of texts the model kept apart (in one group, not merged: not asked again; none
        when there is no answer); and how many of the model's MERGEs were taken.
    """
    if len(entries) < 2:
        return [], [], 0
    index = {e.name: i for i, (_, e) in enumerate(entries)}
    group_of = {i: g for g, members in enumerate(groups) for i in members}
    joins = [(index[op["source_ids"][0]], index[other]) for op in similar for other in op["source_ids"][1:]]
    texts: dict[frozenset[int], str] = {}
    taken = 0
    for raw in judged.operations if judged else []:
        if not isinstance(raw, dict) or raw.get("type") != "MERGE" or not isinstance(raw.get("source_ids"), list):
            continue
        members = sorted({index[str(x)] for x in raw["source_ids"] if str(x) in index})
        if len(members) < 2 or len(members) < len(raw["source_ids"]) or len({group_of.get(i) for i in members}) != 1:
            continue
        if group_of.get(members[0]) is None:
            continue
        joins.extend((members[0], m) for m in members[1:])
        text = clean_entry_text(raw["merged_text"]) if isinstance(raw.get("merged_text"), str) else ""
        if text and len(text) <= max_chars:
            texts[frozenset(members)] = text
        taken += 1
    clusters = _clusters(len(entries), joins)
    operations = [_merge(entries, m, rediscoveries or {}, texts.get(frozenset(m))) for m in clusters]
    apart: list[frozenset[str]] = []
    if judged is not None:
        cluster_of = {i: c for c, cluster in enumerate(clusters) for i in cluster}
        for shown in groups:
            for a, i in enumerate(shown):
                for j in shown[a + 1 :]:
                    if cluster_of.get(i, -1 - i) != cluster_of.get(j, -1 - j):
                        apart.append(frozenset((entries[i][1].text, entries[j][1].text)))
    return operations, apart, taken


def merged_wordings(merges: Iterable[tuple[str, Sequence[str], str]]) -> dict[str, str]:
    """Each text merged away, with the entry it now lives in (the engine's `aliases`).

    `merges`: MERGEs in the order they were applied, as (new entry id, source ids, the sources' texts joined by
    newlines; entry texts are one line), and the ADDs among them as (id, [], ""). A wording of a source that is
    merged again moves with it; one whose entry's id was later given to another entry is dropped.
    """
    # Each MERGE's result is a node of its own (an id can be given again to a later, unrelated entry); a node
    # merged away forwards to the node it went into.
    named: list[str] = []  # node -> entry id
    current: dict[str, int] = {}  # entry id -> the node it names now
    forward: dict[int, int] = {}
    into: dict[str, int] = {}
    for entry_id, sources, texts in merges:
        node = len(named)
        named.append(entry_id)
        forward.update((current[source], node) for source in sources if source in current)
        current[entry_id] = node
        into.update((text, node) for text in texts.split("\n") if text)

    def last(node: int) -> int:
        while node in forward:
            node = forward[node]
        return node

    return {text: named[end] for text, node in into.items() if current[named[end := last(node)]] == end}


def judging_reflection(
    entries: Sequence[tuple[str, Entry]], groups: Sequence[Sequence[int]], threshold: float
) -> ReflectorOutput:
    """The curator's brief for a consolidation it judges: groups of entries that may say the same lesson."""
    lines = [
        "Consolidation pass, not a session. Each group below lists live playbook entries that MAY say the same"
        " lesson in other words. Within a group, for each set of two or more entries that give the same advice,"
        " return one MERGE whose source_ids are exactly those entries' ids (all from that one group) and whose"
        " merged_text states the lesson once, in one or two sentences, keeping every specific command, name and"
        " number. Entries that give different advice must not be merged: return nothing for them. Entries at"
        f" sentence similarity {threshold:.2f} or more are merged in any case. Return no other operation.",
    ]
    for g, members in enumerate(groups, 1):
        lines.append(f"- group {g}:")
        lines += [f'  - {entries[i][1].name}: "{entries[i][1].text}"' for i in members]
    return ReflectorOutput(analysis="\n".join(lines), bullet_tags=[])
