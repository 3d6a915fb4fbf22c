"""Whether a pattern may match a text of given characters alone: never "no" where a text of them holds a match."""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from core.pattern_alphabet import may_match_within
from core.patterns import Pattern
from core.redact import RULES, Rule

_TOKEN = string.ascii_letters + string.digits + "+/_-"
# Patterns of the constructs the reading follows (classes, negations, repeats, groups, alternatives, flags), and those
# it does not (anchors, RE2's own syntax).
_PATTERNS = [
    r"abc",
    r"a b",
    r"a\.b",
    r"a[ =:]b",
    r"a(?: b)?c",
    r"x|y z",
    r"a{0}b",
    r" *z",
    r"[^a-z]",
    r"[^\s:]+:x",
    r"\s",
    r"\w+\W",
    r"\d+\.\d+",
    r"(?i)K\u212a",
    r"(?i:s)",
    r"\u017f",
    r"(?i:[\u212a])",
    r"(?i)(?-i:K)",
    r"\bkey\b",
    r"^\p{L}+$",
    r"token[ \t]+[a-z0-9]{16,}",
    r"[?&]sig=[a-z0-9%+/_\-]{16,}",
] + [rule.pattern.source for rule in RULES]


@pytest.mark.parametrize(
    ("source", "alphabet", "may"),
    [
        ("abc", "abc", True),
        ("a b", _TOKEN, False),
        ("a[ =]b", _TOKEN, False),
        ("a(?: b)?c", _TOKEN, True),
        ("a(?: b)+c", _TOKEN, False),
        ("x|y z", "xyz", True),
        ("y z|w", "xyz", False),
        ("[^a-z]", "abc", False),
        ("[^a-z]", "abC", True),
        ("K", "k", False),
        ("(?i)K", "k", True),
        ("\u212a", "k", False),
        ("(?i)\u212a", "k", True),  # the Kelvin sign folds to k
        ("(?i)(?-i:K)", "k", False),
        (r"\p{L}", " ", True),  # RE2's syntax, unread: may match
        (r"\bx", "x", True),
    ],
)
def test_what_a_pattern_may_match_within(source: str, alphabet: str, may: bool) -> None:
    assert may_match_within(source, alphabet) is may


def test_an_alphabet_not_ascii_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match="ASCII alphabets only"):
        may_match_within("é", "é")


def _python(source: str) -> re.Pattern[str] | None:
    try:
        return re.compile(source)
    except re.error:
        return None


_READ = [(source, compiled) for source in _PATTERNS if (compiled := _python(source)) is not None]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(st.sampled_from(_READ).flatmap(lambda read: st.tuples(st.just(read[0]), st.from_regex(read[1]))))
def test_a_text_that_holds_a_match_is_never_said_to_be_out_of_reach(drawn: tuple[str, str]) -> None:
    """A text drawn from a pattern (a match, and text around it): a pattern may match a text made of its characters."""
    source, text = drawn
    assume(text.isascii() and text)
    assert may_match_within(source, text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=_TOKEN, max_size=200), st.sampled_from([r for r in RULES if r.pattern.flags == ""]))
def test_a_rule_said_to_need_another_character_finds_nothing_in_token_characters(text: str, rule: Rule) -> None:
    """RE2 agrees: a rule said to need a character outside the token characters matches no text of them alone."""
    source = rule.pattern.source
    if not may_match_within(source, _TOKEN):
        assert Pattern(source).search(text) is None
        assert Pattern(source).search(text.lower()) is None
