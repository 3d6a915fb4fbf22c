"""Robust extraction of a model's answer (`core.jsonx`): fenced, bare or among prose, but never an inner object of a
larger document, and never slower than linear in the text's length."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.jsonx import extract_json, find_json, locate_json


def test_scn_016_01_json_in_prose_via_balanced_braces() -> None:
    text = (
        'Here is my analysis of the playbook:\n\n{"reasoning": "pat-001 has been harmful", "operations": '
        '[{"type": "DELETE", "target_id": "pat-001", "reason": "consistently harmful"}]}\n\n'
        "I hope this helps improve the playbook."
    )
    assert extract_json(text) == {
        "reasoning": "pat-001 has been harmful",
        "operations": [{"type": "DELETE", "target_id": "pat-001", "reason": "consistently harmful"}],
    }


def test_scn_016_02_json_code_fence() -> None:
    text = '```json\n{"reasoning": "No changes needed", "operations": []}\n```'
    assert extract_json(text) == {"reasoning": "No changes needed", "operations": []}


@pytest.mark.parametrize(
    ("text", "expected", "problem"),
    [
        ('```\n{"a": 1}\n```', {"a": 1}, None),
        ('prose ```json\n{"a": 1}\n``` then ```\n{"b": 2}\n```', {"a": 1}, None),
        ('```json\nnot json\n```\n{"b": "}{ \\" }"}', {"b": '}{ " }'}, None),
        ('```json{"a": 1}```', {"a": 1}, None),
        ('```python\n{"a": 1}\n```', {"a": 1}, None),  # not a JSON fence, but the object is still the first span
        ('{"outer": {"inner": "a } brace"}} trailing }', {"outer": {"inner": "a } brace"}}, None),
        ('I use {braces} and [refs] [1]. {"a": 1} ok', {"a": 1}, None),
        ('Use {"x": 1} in prose, then:\n```json\n{"a": 2}\n```', {"a": 2}, None),  # the fenced answer first
        # Cut short: the document never closes, and its first complete inner object is not the answer.
        ('{ unclosed {"a": 1}', None, "truncated"),
        ('{"analysis": "the build", "bullet_tags": [{"name": "pat-001", "tag": "helpful"}', None, "truncated"),
        ('```json\n{"analysis": "the build", "nested": {"a": 1}', None, "truncated"),
        ('{"analysis": "a string that never ends', None, "truncated"),
        # A fence inside an answer that never closes is part of it, not an answer of its own.
        ('{"analysis": "x", "note": "\n```json\n{"a": 1}\n```', None, "truncated"),
        # Valid JSON that is no object is no answer either, nor an object inside it.
        ("[1, 2]", None, "not_object"),
        ('[{"analysis": "x", "bullet_tags": []}]', None, "not_object"),
        ('```json\n[{"a": 1}]\n```', None, "not_object"),
        ("no json here", None, "none"),
        ("{not json} [nor this]", None, "none"),
        ("", None, "none"),
        ("   ", None, "none"),
    ],
)
def test_what_is_the_answer(text: str, expected: object, problem: str | None) -> None:
    found = find_json(text)
    assert (found.value, found.problem) == (expected, problem)
    assert extract_json(text) == expected


def test_a_fence_quoted_inside_the_answer_is_not_the_answer() -> None:
    answer = {"analysis": "Reset it with\n```json\n{}\n```\nand retry.", "bullet_tags": []}
    text = "Here it is:\n" + json.dumps(answer)  # prose first: the fence is inside the object's string
    assert extract_json(text) == answer
    assert extract_json(json.dumps(answer)) == answer


def test_where_the_object_is() -> None:
    text = 'Sure.\n```json\n  {"a": [1, "}"]}  \n```\nDone.'
    value, start, end = locate_json(text) or ({}, 0, 0)
    assert value == {"a": [1, "}"]} and text[start:end] == '{"a": [1, "}"]}'
    text = 'So: {"a": 1} and more.'
    value, start, end = locate_json(text) or ({}, 0, 0)
    assert text[start:end] == '{"a": 1}'
    assert locate_json("[1]") is None and locate_json(None) is None and extract_json(3) is None


# --- the rule, written the plain way, against random texts -------------------------------------------------------

_BROKEN = object()


def _plain_close(text: str, start: int) -> int | None:
    """Where the span opening at `text[start]` ends, by one step per character; None when it never closes."""
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def plain_rule(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """The answer of a text without fences: the first top-level span that is a JSON object, else why none."""
    i, problem = 0, "none"
    while i < len(text):
        if text[i] not in "{[":
            i += 1
            continue
        end = _plain_close(text, i)
        if end is None:
            return None, "truncated"
        try:
            value = json.loads(text[i:end])
        except (ValueError, RecursionError):
            value = _BROKEN
        if isinstance(value, dict):
            return value, None
        if value is not _BROKEN:
            problem = "not_object"
        i = end
    return (None, problem) if text.strip() else (None, "none")


PIECES = st.sampled_from(
    ["{", "}", "[", "]", '"', "\\", " ", "a", ":", ",", "1", "\n", '{"a": 1}', '{"b": "}"}', "x{", "[1]", '["{"]']
)


@given(st.lists(st.one_of(PIECES, st.text(max_size=3)), max_size=30))
def test_the_answer_is_what_the_plain_rule_says(pieces: list[str]) -> None:
    text = "".join(pieces)
    if "```" in text:
        return
    found = find_json(text)
    assert (found.value, found.problem) == plain_rule(text)


DOCUMENTS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
).map(lambda v: {"analysis": "x", "value": v})
PROSE = st.text(alphabet="abc .:\n'", max_size=20)


@given(DOCUMENTS, st.data(), PROSE, st.booleans())
def test_an_answer_cut_anywhere_is_truncated_never_an_inner_object(
    document: dict[str, Any], data: st.DataObject, prose: str, fenced: bool
) -> None:
    whole = json.dumps(document, indent=data.draw(st.sampled_from([None, 2])))
    cut = data.draw(st.integers(min_value=1, max_value=len(whole) - 1))  # the `{` is kept, the final `}` is not
    text = prose + ("```json\n" if fenced else "") + whole[:cut]
    found = find_json(text)
    assert (found.value, found.problem) == (None, "truncated")
    assert find_json(prose + whole + "\n" + prose).value == document  # whole, it is the answer


# --- crafted text -------------------------------------------------------------------------------------------------
# How long these take is measured in bench/bench_jsonx.py (linear: the ratio to an ordinary answer holds from
# 50 KB to 500 KB); here, that each is read to its end and answers "no document", whatever its depth.

CRAFTED: dict[str, Callable[[int], str]] = {
    "opening braces": lambda n: "{" * n,
    "opening brackets (deeper than the decoder recurses)": lambda n: "[" * n,
    "closing brackets": lambda n: "]}" * (n // 2),
    "spans that balance but are no JSON": lambda n: "{]" * (n // 2),
    "objects with one bad token": lambda n: '{"a":1 x}' * (n // 9),
    "an endless string of escapes": lambda n: '{"' + '\\"' * (n // 2),
    "fences around broken blocks": lambda n: "```json\n{\n```\n" * (n // 14),
    "prose": lambda n: "word " * (n // 5),
}


# text that leaves a brace, bracket, string or fence open is a cut answer; a document after it is inside it
LEFT_OPEN = {
    "opening braces",
    "opening brackets (deeper than the decoder recurses)",
    "an endless string of escapes",
    "fences around broken blocks",
}


@pytest.mark.parametrize("name", list(CRAFTED))
def test_crafted_text_deeper_than_the_decoder_recurses_is_no_answer(name: str) -> None:
    found = find_json(CRAFTED[name](200_000))
    assert (found.value, found.problem) == (None, "truncated" if name in LEFT_OPEN else "none")
    after = find_json(CRAFTED[name](2_000) + '\n{"analysis": "x"}')
    assert after.value == (None if name in LEFT_OPEN else {"analysis": "x"})
