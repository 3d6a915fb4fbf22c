"""Sentence vectors: the model embeds in small batches grouped by length, each text's vector the same as alone and in
the order given, with memory that does not grow with how many texts there are; vectors are stored once per text."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.llm.embed import BATCH, Embedder, Lexical, MiniLM, VectorIndex, load_embedder, near_finder, neighbour_finder
from core.models import Entry
from core.store.db import open_db
from core.store.embeddings import store_missing_vectors, vectors_for
from tests.profiles import examples

ROOT = Path(__file__).resolve().parents[2]
LESSONS = [t for group in json.loads((ROOT / "data/lessons/paraphrases.json").read_text())["lessons"] for t in group]
# A finding that quotes an error output: one "sentence" longer than the model's 256 tokens.
LONG = "The build failed with " + " ".join(f"src/module_{i}/handler.py:{i * 7} ImportError" for i in range(90))


def minilm() -> MiniLM:
    model = load_embedder("minilm")
    assert isinstance(model, MiniLM)
    return model


texts = st.lists(
    st.one_of(
        st.sampled_from(LESSONS),
        st.just(LONG),
        st.text(st.sampled_from("abcdefgh ijklmnop `-_./"), min_size=0, max_size=200),
    ),
    min_size=0,
    max_size=2 * BATCH + 1,
)


@settings(max_examples=examples(20), deadline=None)
@given(texts)
def test_batches_give_each_text_its_own_vector_in_the_order_given(given_texts: list[str]) -> None:
    model = minilm()
    together = model.embed(given_texts)
    alone = np.array([model.embed([t])[0] for t in given_texts], dtype=np.float32).reshape(-1, model.dim)
    assert together.shape == (len(given_texts), model.dim) and together.dtype == np.float32
    # Padding within a batch changes nothing a text sees (its mask hides it): the same vector to float tolerance.
    np.testing.assert_allclose(together, alone, atol=2e-5)


def _peak(model: MiniLM, batch: Sequence[str]) -> int:
    tracemalloc.start()
    try:
        model.embed(batch)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_is_bounded_by_a_batch_not_by_the_count() -> None:
    # One long text among many short ones: padded all to its length in one batch, 32 texts held 4x the attention
    # of 8; in batches grouped by length, the long text pads only its own batch.
    model = minilm()
    few = _peak(model, [LONG, *LESSONS[: BATCH - 1]])
    many = _peak(model, [LONG, *LESSONS[: 4 * BATCH - 1]])
    assert many < 1.5 * few, (few, many)


def _counting(model: Embedder, seen: list[str]) -> type:
    """An embedder class that answers as `model` and notes in `seen` each text it is asked to embed."""

    class Counting:
        name, threshold, floor = model.name, model.threshold, model.floor

        def embed(self, batch: Sequence[str]) -> np.ndarray:
            seen.extend(batch)
            return model.embed(batch)

    return Counting


@pytest.mark.parametrize("kind", ["minilm", "lexical"])
def test_a_stored_text_is_never_embedded_again(tmp_path: Path, kind: str) -> None:
    model = load_embedder(kind)
    seen: list[str] = []
    Counting = _counting(model, seen)
    first, second = LESSONS[:5], LESSONS[3:9]
    with open_db(tmp_path / "v.duckdb") as con:
        stored = vectors_for(con, Counting(), first + first)
        assert seen == first  # each distinct text once
        memo: dict[str, dict[str, np.ndarray]] = {}
        again = vectors_for(con, Counting(), second, memo=memo)
        assert seen == first + LESSONS[5:9]  # only the texts not stored yet
        vectors_for(con, Counting(), first + second, memo=memo)
        assert seen == first + LESSONS[5:9]
    # Read back as they were stored.
    for text in LESSONS[3:5]:
        np.testing.assert_allclose(stored[text], again[text], atol=1e-7)


def test_missing_vectors_are_stored_as_they_would_be_read_and_each_text_is_asked_about_once(tmp_path: Path) -> None:
    model = Lexical()
    seen: list[str] = []
    Counting = _counting(model, seen)
    first, second = LESSONS[:5], LESSONS[3:9]
    with open_db(tmp_path / "v.duckdb") as con:
        vectors_for(con, Counting(), first)
        known: set[str] = set()
        store_missing_vectors(con, Counting(), [*first, *second, ""], known)
        assert seen == first + LESSONS[5:9] and known == set(first + second)  # only the texts not stored yet
        store_missing_vectors(con, Counting(), second, known)
        assert seen == first + LESSONS[5:9]
        rows = con.execute("SELECT count(*) FROM text_embeddings").fetchone()
        back = vectors_for(con, Counting(), first + second)
    assert rows == (len(set(first + second)),) and seen == first + LESSONS[5:9]
    for text in first + second:
        np.testing.assert_array_equal(back[text], model.embed([text])[0])


def test_the_lexical_fallback_gives_unit_rows_in_order() -> None:
    lexical = Lexical()
    vectors = lexical.embed([LESSONS[0], "", LESSONS[1]])
    assert vectors.shape == (3, lexical.dim)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), [1.0, 0.0, 1.0], atol=1e-6)
    np.testing.assert_allclose(vectors[2], lexical.embed([LESSONS[1]])[0])


def test_paraphrases_are_closer_than_different_lessons() -> None:
    # What batching must keep: the model's meaning (padding counted as text would make every pair alike).
    groups = json.loads((ROOT / "data/lessons/paraphrases.json").read_text())["lessons"][:4]
    vectors = minilm().embed([t for group in groups for t in group]).reshape(len(groups), 4, -1)
    scores = np.einsum("gad,hbd->gahb", vectors, vectors)
    same = np.mean([scores[g, a, g, b] for g in range(4) for a in range(4) for b in range(a + 1, 4)])
    apart = np.mean([scores[g, :, h, :].mean() for g in range(4) for h in range(g + 1, 4)])
    assert same > apart + 0.25 and apart < 0.4, (same, apart)


@settings(max_examples=examples(40), deadline=None)
@given(
    st.lists(st.sampled_from(LESSONS), min_size=0, max_size=30, unique=True),
    st.lists(st.sampled_from(LESSONS), min_size=0, max_size=6),
    st.sampled_from([0.0, 0.2, 0.5]),
)
def test_neighbours_are_each_querys_k_closest_entries_at_the_floor(
    entry_texts: list[str], queries: list[str], floor: float
) -> None:
    # Scored in one product for all of a session's queries, in the dimensions the entries use: the same as each
    # query against every entry on its own.
    lexical = Lexical()
    known = dict(zip(entry_texts + queries, lexical.embed(entry_texts + queries), strict=True))
    entries = [Entry(name=f"oth-{i:03d}", text=t) for i, t in enumerate(entry_texts)]
    got = neighbour_finder(known, entries, k=2, floor=floor)(queries)
    expected = []
    for query in queries if entries else []:
        scores = [float(known[e.text] @ known[query]) for e in entries]
        ranked = sorted(range(len(entries)), key=lambda i: -scores[i])[:2]
        best = [(entries[i], scores[i]) for i in ranked if scores[i] >= floor]
        if best:
            expected.append((query, best))
    assert [q for q, _ in got] == [q for q, _ in expected]
    for (_, found), (_, wanted) in zip(got, expected, strict=True):
        assert [s for _, s in found] == pytest.approx([s for _, s in wanted], abs=1e-5)


def _stacked_neighbours(
    known: dict[str, np.ndarray], entries: Sequence[Entry], queries: Sequence[str], k: int, floor: float
) -> list[tuple[str, list[tuple[Entry, float]]]]:
    """The neighbours as found before the run kept one index: every entry's vector stacked each epoch, in the
    dimensions the entries use."""
    matrix = np.array([known[e.text] for e in entries], dtype=np.float32)
    used = np.flatnonzero(matrix.any(axis=0))
    matrix = np.take(matrix, used, axis=1)
    every = np.take(np.array([known[q] for q in queries], dtype=np.float32), used, axis=1) @ matrix.T
    found = []
    for query, scores in zip(queries, every, strict=True):
        top = np.argpartition(-scores, k)[:k] if len(scores) > k else np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]
        best = [(entries[int(i)], float(scores[i])) for i in top if scores[i] >= floor]
        if best:
            found.append((query, best))
    return found


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 39), min_size=1, max_size=30), min_size=1, max_size=4),
    st.lists(st.integers(0, 39), min_size=1, max_size=6),
    st.sampled_from([0.0, 0.25, 1.0]),
    st.integers(0, 2**32 - 1),
    st.sampled_from([6, 64]),
)
def test_one_index_through_a_runs_epochs_finds_what_stacking_each_epoch_found(
    epochs: list[list[int]], asked: list[int], floor: float, seed: int, dim: int
) -> None:
    # The epochs' entries change (texts go, come back, repeat, change order) while one index serves them all; the
    # answers, ties included, are those of the entries stacked afresh. Quarters in a few dimensions (or sparse in
    # many, as word stems are): every product is exact in float32, so only what is compared can differ.
    rng = np.random.default_rng(seed)
    vectors = rng.integers(-2, 3, (40, dim)).astype(np.float32) / 4
    if dim > 6:
        vectors[rng.random((40, dim)) < 0.9] = 0
    known = {f"text {i}": vectors[i] for i in range(40)}
    index = VectorIndex()
    queries = [f"text {i}" for i in asked]
    for numbers in epochs:
        entries = [Entry(name=f"oth-{n:03d}", text=f"text {n}") for n in numbers]
        got = neighbour_finder(known, entries, k=2, floor=floor, index=index)(queries)
        assert got == _stacked_neighbours(known, entries, queries, 2, floor)


def test_the_near_duplicate_finder_and_the_neighbours_share_one_index() -> None:
    lexical = Lexical()
    entries = [Entry(name=f"oth-{i:03d}", text=t) for i, t in enumerate(LESSONS[:12])]
    known = dict(zip(LESSONS[:12], lexical.embed(LESSONS[:12]), strict=True))
    index = VectorIndex()
    neighbour_finder(known, entries, floor=0.1, index=index)([LESSONS[1]])
    held = len(index.rows)
    near = near_finder(lexical, dict(known), 0.3, index)
    alone = near_finder(lexical, dict(known), 0.3)
    live = {t: 1 for t in LESSONS[2:12]}
    for probe in [LESSONS[0], LESSONS[1], LESSONS[13], LESSONS[40]]:
        assert near(probe, live) == alone(probe, live)
    assert held == 12 and len(index.rows) == 14  # the entries' vectors taken as they were, the probes added once


@settings(max_examples=examples(40), deadline=None)
@given(
    st.lists(st.sampled_from(LESSONS[:12]), max_size=8),
    st.lists(st.sampled_from(LESSONS[:12]), min_size=1, max_size=10),
    st.lists(st.sampled_from(LESSONS[:12]), max_size=12),
    st.booleans(),
)
def test_texts_said_to_be_stored_are_read_as_when_asked_first_which_are(
    tmp_path_factory: pytest.TempPathFactory, before: list[str], asked: list[str], said: list[str], memo: bool
) -> None:
    """`stored` (texts a caller knows to be stored) spares the question which are: the vectors, and the texts
    embedded, are the same as without it, even when it names texts that are not stored."""
    model = Lexical()
    results = []
    for hint in (frozenset(), frozenset(said)):
        seen: list[str] = []
        Counting = _counting(model, seen)
        with open_db(tmp_path_factory.mktemp("hint") / "v.duckdb") as con:
            vectors_for(con, Counting(), before)
            seen.clear()
            held: dict[str, dict[str, np.ndarray]] | None = {} if memo else None
            got = vectors_for(con, Counting(), asked, memo=held, stored=hint)
            rows = con.execute("SELECT count(*) FROM text_embeddings").fetchone()
        results.append((got, seen, rows))
    (plain, plain_seen, plain_rows), (hinted, hinted_seen, hinted_rows) = results
    # As a mapping: without `memo` the texts come in the order the store returns its rows, which it does not fix.
    assert hinted.keys() == plain.keys() and hinted_seen == plain_seen and hinted_rows == plain_rows
    for text in plain:
        np.testing.assert_array_equal(hinted[text], plain[text])
