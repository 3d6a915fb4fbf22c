"""The rule set's helpers, by their contracts: lower-casing that keeps every offset, and the rules a caller names."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.redact import RULES
from core.secret_rule import Rule
from core.secret_rule_set import RuleSet, ascii_lowered

_RULE_SET = RuleSet(RULES, ())


@given(st.text())
def test_ascii_lowered_changes_only_ascii_letters(text: str) -> None:
    """Offsets into the lowered text are offsets into the original: one character for one, only A-Z changed."""
    lowered = ascii_lowered(text)
    assert len(lowered) == len(text)
    for before, after in zip(text, lowered, strict=True):
        assert after == (before.lower() if "A" <= before <= "Z" else before)


@given(
    st.text(), st.lists(st.sampled_from(RULES), unique_by=lambda r: r.name).map(lambda rs: sorted(rs, key=RULES.index))
)
def test_named_rules_are_read_as_named(text: str, among: list[Rule]) -> None:
    """Rules the caller names are all run, in its order, a case-blind one on the lowered text, the others on the
    text itself; a random token may then be anywhere."""
    chosen, tokens = _RULE_SET.chosen(text, among)
    assert [rule for rule, _ in chosen] == among
    assert all(subject == (ascii_lowered(text) if rule.ignore_case else text) for rule, subject in chosen)
    assert tokens
