"""Sentence vectors of entry and proposal texts, kept in DuckDB: computed once per text and model; and the
duplicate rate's count of near pairs, kept from one run to the next."""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Collection, Container, Iterable
from functools import cache
from importlib import metadata
from pathlib import Path

import duckdb
import numpy as np

from core.llm.embed import Embedder

__all__ = ["keep_pair_count", "kept_pair_count", "pair_rules", "store_missing_vectors", "store_vectors", "vectors_for"]

_CHUNK = 512


def _key(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def vectors_for(
    con: duckdb.DuckDBPyConnection,
    embedder: Embedder,
    texts: Iterable[str],
    memo: dict[str, dict[str, np.ndarray]] | None = None,
    stored: Container[str] = frozenset(),
) -> dict[str, np.ndarray]:
    """A unit vector per distinct text: stored ones read back, the others computed and stored.

    `memo`: model -> text -> vector, which the caller keeps between calls (a run's epochs); texts in it are not
    read again, and every vector returned is added to it. `stored`: texts the caller knows to be stored
    (`store_missing_vectors`'s); when every text to read is one, their vectors are read without asking first which
    are stored (a pass over the thousands of keys, at a run's first read).
    """
    wanted = dict.fromkeys(texts)
    wanted.pop("", None)
    if memo is not None:
        held = memo.setdefault(embedder.name, {})
        # A look-up per wanted text: `wanted.keys() - held.keys()` passes over all of `held` (CPython discards each
        # of its keys from a copy of `wanted`), 0.25 ms a call at 5,000 entries, one call per session.
        if absent := [t for t in wanted if t not in held]:
            held.update(vectors_for(con, embedder, absent, stored=stored))
        return dict(zip(wanted, map(held.__getitem__, wanted), strict=True))  # lookups in C, not a loop of ours
    if not wanted:
        return {}
    keys = {_key(t): t for t in wanted}
    if all(t in stored for t in wanted):
        held_keys = list(keys)
    else:
        # Which are stored, first: a query that reads the vectors costs ~7 ms once thousands are stored even when
        # none matches (as for an epoch's new findings and proposals), one that reads the keys 1 ms.
        held_keys = [
            str(h)
            for (h,) in con.execute(
                "SELECT text_hash FROM text_embeddings WHERE model = ? AND text_hash IN (SELECT unnest(?))",
                [embedder.name, list(keys)],
            ).fetchall()
        ]
    found: dict[str, np.ndarray] = {}
    if held_keys:
        # Fetched as arrays (each vector a float32 array already): a list of Python floats per row cost 13x as much
        # at 5,000 entries, the first epoch of every run.
        rows = con.execute(
            "SELECT text_hash, vector FROM text_embeddings WHERE model = ? AND text_hash IN (SELECT unnest(?))",
            [embedder.name, held_keys],
        ).fetchnumpy()
        found = {
            keys[h]: np.asarray(v, dtype=np.float32) for h, v in zip(rows["text_hash"], rows["vector"], strict=True)
        }
    missing = [t for t in wanted if t not in found]
    if missing:
        computed = dict(zip(missing, embedder.embed(missing), strict=True))
        store_vectors(con, embedder, computed)
        found.update(computed)
    return found


def store_missing_vectors(
    con: duckdb.DuckDBPyConnection,
    embedder: Embedder,
    texts: Iterable[str],
    stored: set[str],
    memo: dict[str, np.ndarray] | None = None,
    memo_texts: Collection[str] = (),
) -> None:
    """Compute and store the vectors of those of `texts` the store lacks, as `vectors_for` would, without reading
    back the others (thousands of vectors, for a caller that may need none of them).

    `stored`: texts the caller knows to be stored, kept between calls; they are not asked for, and every text of
    `texts` is added to it. `memo`: text -> vector (`vectors_for`'s, of this model), given the vectors computed
    here of those of `memo_texts` (the very values a read gives back: float32 stored as FLOAT), so a caller about
    to ask for those few does not read them back; the others are not held (thousands, after an import).
    """
    wanted = [t for t in dict.fromkeys(texts) if t and t not in stored]
    if not wanted:
        return
    keys = {_key(t): t for t in wanted}
    have = {
        str(h)
        for (h,) in con.execute(
            "SELECT text_hash FROM text_embeddings WHERE model = ? AND text_hash IN (SELECT unnest(?))",
            [embedder.name, list(keys)],
        ).fetchall()
    }
    missing = [t for h, t in keys.items() if h not in have]
    if missing:
        computed = dict(zip(missing, embedder.embed(missing), strict=True))
        store_vectors(con, embedder, computed)
        if memo is not None:
            # Copies: a row of `embed`'s matrix would hold all of it (every missing text's vector) alive.
            memo.update((t, computed[t].copy()) for t in memo_texts if t in computed)
    stored.update(wanted)


def store_vectors(con: duckdb.DuckDBPyConnection, embedder: Embedder, vectors: dict[str, np.ndarray]) -> None:
    """Keep `vectors` (text -> vector) for later runs; texts already stored are left as they are."""
    items = list(vectors.items())
    # `_CHUNK` rows an insert, each vector made a list by numpy (`tolist`): the Python floats that DuckDB reads
    # stay at one chunk's (5,000 vectors at once were 1.9 million of them), and 0.45 s instead of 0.74 s.
    for start in range(0, len(items), _CHUNK):
        con.execute(
            "INSERT OR IGNORE INTO text_embeddings SELECT ?, r.h, r.v FROM (SELECT unnest(?) AS r)",
            [embedder.name, [{"h": _key(t), "v": v.tolist()} for t, v in items[start : start + _CHUNK]]],
        )


# The code that decides whether two texts are a near pair (`core.consolidate.near_pairs`): a count kept under other
# code is counted again.
_PAIR_MODULES = ("consolidate.py", "near_misses.py", "patterns.py")


@cache
def pair_rules() -> str:
    """A fingerprint of the code that decides a near pair as this process runs it: its modules' source, and the
    versions of Python and of the libraries it matches and computes with."""
    digest = hashlib.sha256(sys.version.encode())
    for library in ("google-re2", "numpy"):
        try:
            digest.update(f" {library}={metadata.version(library)}".encode())
        except metadata.PackageNotFoundError:
            digest.update(f" {library}=?".encode())
    root = Path(__file__).resolve().parents[1]
    for name in _PAIR_MODULES:
        try:
            digest.update(name.encode() + b"\0" + (root / name).read_bytes() + b"\0")
        except OSError:  # code that cannot be read cannot be told apart from other code: no count is reused
            digest.update(os.urandom(32))
    return digest.hexdigest()


def kept_pair_count(
    con: duckdb.DuckDBPyConnection, playbook: str, model: str, threshold: float, texts: str
) -> int | None:
    """The near pairs counted among the texts whose digest is `texts`, when the last count kept for `playbook` was
    of those very texts, under this embedder, threshold and code (`pair_rules`); else None."""
    row = con.execute(
        "SELECT pairs FROM near_pair_counts WHERE playbook = ? AND model = ? AND threshold = ? AND rules = ?"
        " AND texts = ?",
        [playbook, model, threshold, pair_rules(), texts],
    ).fetchone()
    return None if row is None else int(row[0])


def keep_pair_count(
    con: duckdb.DuckDBPyConnection, playbook: str, model: str, threshold: float, texts: str, pairs: int
) -> None:
    """Keep `pairs`, the near pairs among the texts whose digest is `texts`, for the next run of `playbook`."""
    con.execute(
        "INSERT OR REPLACE INTO near_pair_counts (playbook, model, threshold, rules, texts, pairs)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        [playbook, model, threshold, pair_rules(), texts, pairs],
    )
