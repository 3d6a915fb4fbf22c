"""`estimate_tokens` against the input tokens Claude Code recorded, on held-out pairs committed with the project
(tests/data/token_pairs.json, written by bench/calibrate_tokens.py), and the estimate's invariants."""

from __future__ import annotations

import json
import math
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from core.tokens import (
    TOKENS_PER_NEWLINE,
    TOKENS_PER_SYMBOL,
    TOKENS_PER_WORD,
    estimate_tokens,
    token_pieces,
    token_units,
)

SAMPLE = json.loads((Path(__file__).resolve().parents[1] / "data" / "token_pairs.json").read_text(encoding="utf-8"))


def test_the_estimate_is_within_ten_percent_of_recorded_usage_on_held_out_pairs() -> None:
    pairs = SAMPLE["pairs"]
    recorded = sum(p["recorded"] for p in pairs)
    # the API's per-block tokens (fitted on the training sources) are not in the text: added to both sides' terms
    ours = sum(estimate_tokens(p["text"]) + SAMPLE["block_tokens"] * p["blocks"] for p in pairs)
    quarter = sum(len(p["text"]) / 4 + SAMPLE["block_tokens"] * p["blocks"] for p in pairs)
    assert len(pairs) >= 50 and {p["source"] for p in pairs} == set(SAMPLE["sources"])
    assert abs(ours / recorded - 1) <= 0.10, ours / recorded
    assert abs(ours / recorded - 1) < abs(quarter / recorded - 1)  # closer than characters / 4


def test_the_estimate_weighs_words_symbols_and_newlines() -> None:
    assert estimate_tokens("") == 0
    assert token_pieces("def f(x):\n    return x + 1") == (5, 5, 1)  # def f x return x; ( ) : + 1
    assert estimate_tokens("hello world") == math.ceil(2 * TOKENS_PER_WORD)
    assert token_units("a\nb.") == round(100 * (2 * TOKENS_PER_WORD + TOKENS_PER_SYMBOL + TOKENS_PER_NEWLINE))
    assert token_pieces("é") == (0, 2, 0)  # each UTF-8 byte of a non-ASCII character


_TEXT = st.text(alphabet=st.sampled_from(list("ab Z09.,{}\n\té€")), max_size=60)


@given(a=_TEXT, b=_TEXT, sep=st.sampled_from([" ", "\n", "\t"]))
def test_texts_joined_by_whitespace_add_up(a: str, b: str, sep: str) -> None:
    """What compaction relies on: the joined text's units are the parts' plus the separator's, exactly."""
    assert token_units(a + sep + b) == token_units(a) + token_units(sep) + token_units(b)


@given(a=_TEXT, b=_TEXT)
def test_the_estimate_never_shrinks_when_text_is_added_apart(a: str, b: str) -> None:
    assert estimate_tokens(a + " " + b) >= max(estimate_tokens(a), estimate_tokens(b))
