"""The rules miner's work on a long prompt grows with its lines, not by a pattern search per sentence and cue: a
1 MB prompt of 15,000 lines that read as words (issue 47's crafted input) cost 2.7x the miner's ordinary text. The
calls are counted on re2 itself (a spy that changes nothing), so no timing decides a test."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
import re2
from hypothesis import given
from hypothesis import strategies as st

from core.miner import observe
from core.models import SessionMessage
from core.said import said, sentences, some_sentence, typed_words

_METHODS = ("search", "match", "fullmatch", "split", "sub", "finditer", "findall")


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """How many times each of re2's pattern methods ran, by name."""
    counted: Counter[str] = Counter()
    for name in _METHODS:
        original = getattr(re2._Regexp, name)

        def spy(
            self: re2._Regexp, *args: object, _original: object = original, _name: str = name, **kw: object
        ) -> object:
            counted[_name] += 1
            return _original(self, *args, **kw)  # type: ignore[operator]

        monkeypatch.setattr(re2._Regexp, name, spy)
    yield counted


def _observed(calls: Counter[str], text: str) -> Counter[str]:
    sentences.cache_clear()  # each text read anew, as a new session's
    calls.clear()
    observe([SessionMessage(seq=0, role="user", kind="text", is_prompt=True, text=text)], "/w/app")
    return Counter(calls)


def test_a_prompts_sentences_cost_no_pattern_call_each(calls: Counter[str]) -> None:
    sentence = "The build runs on the old server today."
    few, many = (_observed(calls, " ".join([sentence] * n)) for n in (20, 2000))
    assert few == many  # before: 9 searches a sentence (18,003 for 2,000 sentences)


def test_a_prompts_lines_are_split_into_sentences_without_a_call_each_unless_one_may_end_there(
    calls: Counter[str],
) -> None:
    line = "The build runs on the old server today"
    few, many = (_observed(calls, "\n".join([line] * n)) for n in (20, 2000))
    assert (few["split"], few["search"]) == (many["split"], many["search"])  # before: a split and 9 searches a line


def test_whether_a_prompt_was_pasted_is_read_from_no_more_lines_than_it_takes(calls: Counter[str]) -> None:
    lines = ["we keep the fixtures small and readable"] * 2000
    calls.clear()
    assert typed_words("\n".join(lines)) is not None
    assert calls["match"] <= len(lines) // 2 + 1  # settled once half the lines read as words (before: all 2,000)


_WORDS = ["never", "always", "we always", "comments", "the why", "readme", "be brief", "x", "A"]
# Patterns of the shapes `some_sentence`'s callers pass (a cue at a sentence's start or end, or bounded as a word).
_PATTERNS = st.builds(
    lambda word, shape: re2.compile(shape.format(word=word)),
    st.sampled_from(_WORDS),
    st.sampled_from(["(?i)^{word}\\b", "(?i)\\b{word}$", "(?i)\\b{word}\\b", "{word}", "(?i)^(?:please )?{word}"]),
)
_JOINS = st.sampled_from([" ", ". ", "! ", " - ", "\n", ", ", "? ", "please "])


@given(_PATTERNS, st.lists(st.tuples(st.sampled_from(_WORDS), _JOINS), max_size=12))
def test_a_pattern_any_sentence_holds_is_found_in_them_all_at_once(
    pattern: re2._Regexp, parts: list[tuple[str, str]]
) -> None:
    split = sentences("".join(w + j for w, j in parts))
    assert some_sentence(pattern, split) >= any(pattern.search(s) for s in split), (pattern.pattern, split)


def test_a_prompts_sentences_are_split_once_for_its_preferences_and_its_habits(calls: Counter[str]) -> None:
    line = "The build runs on the old server. It is slow today."
    few, many = (_observed(calls, "\n".join([line] * n)) for n in (100, 200))
    assert many["split"] - few["split"] == 100  # a split a line; before: two (its preferences, then its habits)


def test_a_pasted_document_of_rules_is_read_up_to_a_bound_not_whole() -> None:
    """Round 11: one prompt of 80,000 sentences, each a rule ("As always never push file1."), took a minute of
    curation. What of a prompt the rules read is bounded: 64 KB of typed text, cut where a sentence ends, and 16 of
    the rules it states (no prompt in data/ states more than 2)."""
    rules = " ".join(f"From now on we use pnpm in package{i}." for i in range(5_000))
    typed = typed_words(rules)
    assert typed is not None and 60 * 1024 < len(typed) <= 64 * 1024 and typed.endswith(".")
    assert rules.startswith(typed)  # the start of the prompt, whole sentences
    prompt = SessionMessage(seq=0, role="user", kind="text", is_prompt=True, text=rules)
    stated = [p.said for p in said([prompt])]
    assert len(stated) == 16 and stated[0].endswith("package0") and stated[-1].endswith("package15")
    few = " ".join(f"From now on we use pnpm in package{i}." for i in range(5))
    assert len(said([prompt.model_copy(update={"text": few})])) == 5  # under the bound: every one
