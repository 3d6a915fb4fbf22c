"""The necessary conditions the redactor relies on: wherever a rule's pattern matches, its RE2 screen (which DuckDB
runs before the Python redactor) matches and one of its triggers is in the text."""

from __future__ import annotations

import re

import duckdb
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from core.re2_superset import superset
from core.redact import RULES, Rule, rule_shapes, secret_shapes, secret_spans
from tests.secret_kinds import KINDS


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    return duckdb.connect()


def _screens(con: duckdb.DuckDBPyConnection, pattern: str, text: str) -> bool:
    row = con.execute("SELECT regexp_matches(?, ?)", [text, pattern]).fetchone()
    return bool(row and row[0])


def _lower(text: str) -> str:  # as the redactor lower-cases: ASCII letters only
    return "".join(c.lower() if c.isascii() else c for c in text)


def _matches(rule: Rule, text: str) -> bool:
    return rule.pattern.search(_lower(text) if rule.ignore_case else text) is not None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@pytest.mark.parametrize("rule", RULES, ids=[r.name for r in RULES])
@given(data=st.data())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_rule_screen_matches_every_text_the_rule_matches(
    con: duckdb.DuckDBPyConnection, rule: Rule, data: st.DataObject
) -> None:
    """Texts drawn from the rule's own pattern (exotic Unicode around and inside it), and the same texts in
    other cases: where the rule finds a secret, its screen and the combined `secret_shapes()` match."""
    text = data.draw(st.from_regex(rule.pattern))
    text = data.draw(st.sampled_from([text, text.swapcase(), text.upper()]))
    assume(_encodable(text) and _matches(rule, text))
    assert _screens(con, superset(rule.pattern, ignore_case=rule.ignore_case), text)
    assert _screens(con, secret_shapes(), text)


@pytest.mark.parametrize("rule", RULES, ids=[r.name for r in RULES])
@given(data=st.data())
@settings(max_examples=60, deadline=None)
def test_every_match_of_a_rule_holds_one_of_its_triggers(rule: Rule, data: st.DataObject) -> None:
    """`Rule.triggers` are a necessary condition (`redact` skips a rule whose triggers a text lacks): texts drawn
    from the rule's own pattern, Unicode whitespace and all, hold one wherever the rule matches."""
    text = data.draw(st.from_regex(rule.pattern))
    text = data.draw(st.sampled_from([text, text.swapcase(), text.upper()]))
    assume(_matches(rule, text))
    assert any(t in _lower(text) for t in rule.triggers)


def _shaped(con: duckdb.DuckDBPyConnection, text: str) -> tuple[Rule, ...]:
    """The rules whose shapes `text` holds, in `RULES` order: what ingest hands the redactor for a record."""
    shapes = rule_shapes()
    query = "SELECT [" + ", ".join(f"regexp_matches($t, $r{i})" for i in range(len(shapes))) + "]"
    row = con.execute(query, {"t": text} | {f"r{i}": shape for i, shape in enumerate(shapes)}).fetchone()
    return tuple(rule for rule, hit in zip(RULES, row[0] if row else [], strict=True) if hit)


@given(data=st.data())
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_rules_whose_shapes_a_text_holds_find_all_that_every_rule_finds(
    con: duckdb.DuckDBPyConnection, data: st.DataObject
) -> None:
    """Ingest runs only the rules whose shapes a record holds: on texts mixing several rules' secrets (drawn from
    their patterns, and the planted kinds in their sentences) they find exactly the spans all the rules find."""
    pieces = data.draw(
        st.lists(
            st.one_of(
                st.sampled_from(RULES).flatmap(lambda rule: st.from_regex(rule.pattern)),
                st.sampled_from([k.text for k in KINDS]),
                st.text(max_size=8),
            ),
            min_size=1,
            max_size=4,
        )
    )
    text = data.draw(st.sampled_from(["", " ", "\n", "x"])).join(pieces)
    assume(_encodable(text))
    assert secret_spans(text, rules=_shaped(con, text)) == secret_spans(text)


def test_every_planted_secret_is_screened(con: duckdb.DuckDBPyConnection) -> None:
    """The 44 kinds of planted secrets in their sentences: each one a rule finds, the screen finds."""
    found = [k for k in KINDS if any(_matches(rule, k.text) for rule in RULES)]
    assert found
    assert [k.text for k in found if not _screens(con, secret_shapes(), k.text)] == []


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        (r"(?<![A-Za-z])key\b", "monkey"),  # lookarounds and boundaries are dropped: wider, never narrower
        (r"a\sb", "a\u2003b"),  # Python's \s holds Unicode spaces; RE2's alone would not
        (r"a\db", "a\u0663b"),  # an Arabic-Indic digit is a Python \d
        (r"a\wb", "a\u00e9b"),  # é is a Python \w
        (r"([\"'])x\1", "'x'"),  # a back-reference becomes its group's pattern
        (r"a[^\n]{0,160}?b", "a" + "-" * 150 + "b"),  # a long bounded repeat becomes unbounded
        (r"-----BEGIN.*?END|\Z", "anything"),  # `\Z` dropped: the empty alternative matches everywhere
    ],
)
def test_python_constructs_without_an_re2_twin_are_widened(
    con: duckdb.DuckDBPyConnection, pattern: str, text: str
) -> None:
    assert _screens(con, superset(re.compile(pattern, re.DOTALL)), text)


def test_a_negated_class_keeps_excluding_what_python_excludes(con: duckdb.DuckDBPyConnection) -> None:
    """Inside `[^...]` a category shrinks to its ASCII part: still a superset, and still a screen."""
    screen = superset(re.compile(r"x[^\s\"']+y"))
    assert _screens(con, screen, "x\u2003y")  # Python's \s excludes U+2003; the screen may let it through
    assert not _screens(con, screen, "x y")
    assert not _screens(con, superset(re.compile(r"sk-[a-z]{20}")), "sk-short")


@pytest.mark.parametrize("pattern", [r"(a)?(?(1)b|c)", r"(?>ab)c", r"a*+b", r"[^\S\d]"])
def test_a_construct_with_no_superset_here_is_refused(pattern: str) -> None:
    with pytest.raises(ValueError, match="no RE2 superset"):
        superset(re.compile(pattern))
