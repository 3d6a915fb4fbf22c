"""`core.near_misses` on RE2: its number and word patterns give what the `re` patterns they replace gave."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from core.near_misses import _numbers, _words, different

# The patterns as they were on Python's `re` (lookarounds and all): the reference.
_SPAN = re.compile(r"`([^`]+)`")
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)*)(?!\w)")
_WORD = re.compile(r"[a-z][a-z-]*")


@given(st.text(alphabet=st.sampled_from(list("0123456789.ab_ -`x\u0663é")), max_size=30))
@settings(max_examples=300, deadline=None)
def test_numbers_and_words_are_those_of_the_backtracking_patterns(text: str) -> None:
    assert _numbers(text) == set(_NUMBER.findall(_SPAN.sub(" ", text)))
    expected = _WORD.findall(_SPAN.sub(lambda m: " " + m.group(1).replace(" ", "_") + " ", text.lower()))
    assert _words(text) == expected


def test_a_number_glued_to_a_word_gives_back_its_last_dotted_part() -> None:
    assert _numbers("1.2.3a and v1.2 and 4.5 and x7 and 8") == {"1.2", "4.5", "8"}  # `v1.2` and `x7` are names
    assert different("Retry 3 times.", "Retry 5 times.")
