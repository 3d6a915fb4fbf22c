"""The engine's near-duplicate finder for one epoch's apply step: the sentence model (or word stems) over the live
entries and the epoch's proposed texts, each vector computed once and stored."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping

import duckdb

from core.layered import unseen_texts
from core.llm.embed import near_finder
from core.models import CuratorOutput, Playbook
from core.operations import NearFinder, clean_entry_text, live_texts
from core.store.embeddings import store_vectors, vectors_for
from flows.context import RunConfig
from flows.run.run_state import RunMemo, StepResult

__all__ = ["RULES_NEAR", "near_duplicates", "only_close"]

# The rules word each lesson one way (the same words for the same lesson, `core.miner`), so only an entry that
# says it nearly word for word is the same lesson; their shared templates put different lessons at 0.6-0.85
# ("lint with `mix credo`" and "build with `mix compile`": 0.71).
RULES_NEAR = 0.9


def only_close(near: NearFinder, floor: float) -> NearFinder:
    """`near`, answering only for texts at least `floor` similar."""

    def closer(text: str, live: Mapping[str, int]) -> tuple[str, float] | None:
        found = near(text, live)
        return found if found is not None and found[1] >= floor else None

    return closer


def near_duplicates(
    con: duckdb.DuckDBPyConnection,
    config: RunConfig,
    memo: RunMemo,
    current: Playbook,
    curations: list[StepResult[CuratorOutput]],
) -> tuple[NearFinder | None, Callable[[], None]]:
    """The engine's near-duplicate finder for one epoch, and a function that stores the vectors it made."""
    similarity = config.similarity()
    if similarity is None:
        return None, lambda: None
    embedder, threshold = similarity
    proposed = [
        clean_entry_text(str(op.get("text") or ""))
        for c in curations
        if c.output is not None
        for op in c.output.operations
        if isinstance(op, dict) and op.get("type") == "ADD"
    ]
    known = memo.vectors.setdefault(embedder.name, {})
    # The live texts the run holds no vector of: every one at its first epoch, then the few its epochs changed
    # (`unseen_texts` passes over the thousands only when the engine's index of them was rebuilt).
    fresh = unseen_texts(live_texts(current), known, memo.covered.setdefault(embedder.name, []))
    vectors_for(con, embedder, fresh + proposed, memo=memo.vectors)  # read or computed, and stored, once
    stored = len(known)  # texts are only ever added to it, at its end: those after this many are new
    near = memo.finders.get((embedder.name, threshold))
    if near is None:
        near = near_finder(embedder, known, threshold, memo.index(embedder.name))  # the run's index, shared
        memo.finders[(embedder.name, threshold)] = near
    return near, lambda: store_vectors(con, embedder, dict(itertools.islice(known.items(), stored, None)))
