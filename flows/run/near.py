"""The engine's near-duplicate finder for one epoch's apply step: the sentence model (or word stems) over the live
entries and the epoch's proposed texts, each vector computed once and stored."""

from __future__ import annotations

from collections.abc import Mapping

import duckdb

from core.layered import unseen_texts
from core.llm.embed import near_finder
from core.models import CuratorOutput, Playbook
from core.operations import NearFinder, clean_entry_text, live_texts
from core.store.embeddings import store_missing_vectors, vectors_for
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
) -> NearFinder | None:
    """The engine's near-duplicate finder for one epoch's apply step (`con` open while it runs).

    The vector of every live and proposed text is computed and stored once, as the epoch starts, but read back
    only when the finder is first asked: most epochs of the rules ask nothing (their lessons are known word for
    word), and reading every entry's vector was most of a keyless run's cost that grew with the playbook."""
    similarity = config.similarity()
    if similarity is None:
        return None
    embedder, threshold = similarity
    proposed = [
        clean_entry_text(str(op.get("text") or ""))
        for c in curations
        if c.output is not None
        for op in c.output.operations
        if isinstance(op, dict) and op.get("type") == "ADD"
    ]
    stored = memo.stored.setdefault(embedder.name, set())
    # The live texts not known to be stored: every one at the run's first epoch, then the few its epochs changed
    # (`unseen_texts` passes over the thousands only when the engine's index of them was rebuilt).
    fresh = unseen_texts(live_texts(current), stored, memo.covered.setdefault((embedder.name, "stored"), []))
    known = memo.vectors.setdefault(embedder.name, {})
    # The vectors it computes of the epoch's proposals kept in `known`: not read back (two queries on a table of
    # thousands) when the finder is first asked; the live texts' are read then, as before.
    store_missing_vectors(con, embedder, fresh + proposed, stored, known, proposed)
    near = memo.finders.get((embedder.name, threshold))
    if near is None:
        near = near_finder(embedder, known, threshold, memo.index(embedder.name))  # the run's index, shared
        memo.finders[(embedder.name, threshold)] = near
    read = memo.covered.setdefault((embedder.name, "read"), [])

    def asked(text: str, live: Mapping[str, int]) -> tuple[str, float] | None:
        # Every vector the finder compares with, read (each once a run) before it looks: it embeds none itself. The
        # epoch's proposals with the first text asked about, in one query, not one each.
        # The live texts were all stored as the epoch started (`stored`): read without asking which are first.
        vectors_for(
            con, embedder, [text, *proposed, *unseen_texts(live, known, read)], memo=memo.vectors, stored=stored
        )
        return near(text, live)

    return asked
