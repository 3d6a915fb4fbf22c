"""The duplicate rate's count of near pairs: brought up to date from the entries a run changed (`near_pairs_since`)
it is exactly the count of every pair (`near_pairs`), and a count kept in the store is given back only for the very
texts, embedder, threshold and code it was counted under."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from core.consolidate import near_pairs, near_pairs_since, texts_digest
from core.llm.embed import Lexical
from core.models import Entry
from core.store.db import open_db
from core.store.embeddings import keep_pair_count, kept_pair_count
from tests.profiles import examples

ROOT = Path(__file__).resolve().parents[2]
GROUPS = json.loads((ROOT / "data/lessons/paraphrases.json").read_text())["lessons"]
# Paraphrases (near pairs by word stems), and lessons alike in words that the near-miss rules tell apart (a quoted
# command or a number changed): both decide what counts.
POOL = [t for group in GROUPS[:12] for t in group] + [
    "Run `npm test` before pushing.",
    "Run `pnpm test` before pushing.",
    "Keep the timeout at 30 seconds.",
    "Keep the timeout at 60 seconds.",
]
OTHERS = [group[0] for group in GROUPS[20:30]]
LEXICAL = Lexical()
VECTORS = dict(zip(POOL + OTHERS, LEXICAL.embed(POOL + OTHERS), strict=True))


def count(texts: list[str], threshold: float) -> int:
    return near_pairs([Entry(name=f"oth-{i:03d}", text=t) for i, t in enumerate(texts)], VECTORS, threshold)


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.sampled_from(POOL), min_size=12, max_size=48),
    st.lists(st.integers(0, 47), max_size=3),
    st.lists(st.sampled_from(POOL), max_size=3),
    st.sampled_from([0.2, 0.4, 0.6]),
    st.randoms(use_true_random=False),
)
def test_a_count_brought_up_to_date_is_the_count_of_every_pair(
    before: list[str], gone: list[int], came: list[str], threshold: float, rng: random.Random
) -> None:
    # A run deletes a few entries and adds a few (texts again among them: a text twice is two entries), in any order.
    after = [t for i, t in enumerate(before) if i not in set(gone)] + came
    rng.shuffle(after)
    got = near_pairs_since(before, after, VECTORS, threshold, count(before, threshold))
    changed = len(before) - len(after) + 2 * len(came)
    if 4 * changed > len(before):
        assert got is None or got == count(after, threshold)  # too much changed: counted again, or the same
    else:
        assert got == count(after, threshold)


def test_the_near_miss_rules_and_the_threshold_decide_as_in_a_full_count() -> None:
    texts = ["Run `npm test` before pushing.", "Run `pnpm test` before pushing.", GROUPS[0][0], GROUPS[0][1]]
    full = count(OTHERS + texts, 0.2)
    assert near_pairs_since(OTHERS + texts[:1], OTHERS + texts, VECTORS, 0.2, count(OTHERS + texts[:1], 0.2)) == full
    # The two quoted commands are alike in words but not the same lesson: not a pair.
    assert count(texts[:2], 0.2) == 0 and float(VECTORS[texts[0]] @ VECTORS[texts[1]]) >= 0.2


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.sampled_from(POOL), max_size=20), st.randoms(use_true_random=False))
def test_the_digest_is_of_the_texts_in_any_order_and_counts_each_one(texts: list[str], rng: random.Random) -> None:
    shuffled = texts[:]
    rng.shuffle(shuffled)
    assert texts_digest(shuffled) == texts_digest(texts)
    if texts:
        assert texts_digest([*texts, texts[0]]) != texts_digest(texts)


def test_a_kept_count_is_given_back_only_for_what_it_was_counted_on(tmp_path: Path) -> None:
    digest = texts_digest(POOL)
    with open_db(tmp_path / "p.duckdb") as con:
        assert kept_pair_count(con, "default", LEXICAL.name, 0.4, digest) is None
        keep_pair_count(con, "default", LEXICAL.name, 0.4, digest, 7)
        assert kept_pair_count(con, "default", LEXICAL.name, 0.4, digest) == 7
        assert kept_pair_count(con, "default", LEXICAL.name, 0.4, texts_digest(POOL[1:])) is None
        assert kept_pair_count(con, "default", LEXICAL.name, 0.5, digest) is None
        assert kept_pair_count(con, "other", LEXICAL.name, 0.4, digest) is None
        keep_pair_count(con, "default", LEXICAL.name, 0.4, texts_digest(POOL[1:]), 5)  # the next run's replaces it
        assert kept_pair_count(con, "default", LEXICAL.name, 0.4, digest) is None
        assert kept_pair_count(con, "default", LEXICAL.name, 0.4, texts_digest(POOL[1:])) == 5


# Texts with no digit nor quoted command (the near-miss rules tell none of them apart): what decides a pair is the
# similarity alone, so any product that drops a term or adds in another order would show in the count.
NAMES = [
    f"Keep the {a} {b} tidy." for a in ("red", "blue", "green", "gray") for b in ("desk", "shelf", "drawer", "box")
]


@st.composite
def sparse_vectors(draw: st.DrawFn) -> dict[str, np.ndarray]:
    """A unit vector per name: a few non-zero dimensions of 48, shared among them (as word stems are), drawn values;
    some all zero (a text without a content word) and some alike (a pair near any threshold)."""
    vectors = {}
    for name in NAMES:
        row = np.zeros(48, dtype=np.float32)
        for dim in draw(st.lists(st.integers(0, 47), max_size=6, unique=True)):
            row[dim] = draw(st.sampled_from([1.0, 0.5, 0.25, 2.0, 0.3]))
        norm = np.linalg.norm(row)
        vectors[name] = row / norm if norm else row
    return vectors


@settings(max_examples=examples(80), deadline=None)
@given(
    sparse_vectors(),
    st.lists(st.sampled_from(NAMES), min_size=8, max_size=40),
    st.lists(st.integers(0, 39), max_size=4),
    st.lists(st.sampled_from(NAMES), max_size=4),
    st.floats(0.05, 0.95),
    st.randoms(use_true_random=False),
)
def test_on_sparse_vectors_an_updated_count_is_the_full_count(
    vectors: dict[str, np.ndarray],
    before: list[str],
    gone: list[int],
    came: list[str],
    threshold: float,
    rng: random.Random,
) -> None:
    # The update reads the other entries only in the dimensions the changed texts use: no pair may come or go by it,
    # whichever dimensions they share (none, some, all) and however close to the threshold they are.
    after = [t for i, t in enumerate(before) if i not in set(gone)] + came
    rng.shuffle(after)

    def full(texts: list[str]) -> int:
        return near_pairs([Entry(name=f"oth-{i:03d}", text=t) for i, t in enumerate(texts)], vectors, threshold)

    got = near_pairs_since(before, after, vectors, threshold, full(before))
    assert got is None or got == full(after)
    changed = len(before) - len(after) + 2 * len(came)
    assert got is not None or 4 * changed > len(before)
