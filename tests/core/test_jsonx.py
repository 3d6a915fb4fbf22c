"""Robust JSON extraction from model text (`core.jsonx`): the four strategies and their edge cases."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.jsonx import extract_json


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
    ("text", "expected"),
    [
        ('```\n{"a": 1}\n```', {"a": 1}),
        ('prose ```json\n{"a": 1}\n``` then ```\n{"b": 2}\n```', {"a": 1}),
        ('```json\nnot json\n```\n{"b": "}{ \\" }"}', {"b": '}{ " }'}),
        ('{"outer": {"inner": "a } brace"}} trailing }', {"outer": {"inner": "a } brace"}}),
        ('{ unclosed {"a": 1}', {"a": 1}),
        ("[1, 2]", None),
        ("no json here", None),
        ("", None),
    ],
)
def test_extract_json_strategies(text: str, expected: object) -> None:
    assert extract_json(text) == expected


def test_extract_json_non_string() -> None:
    assert extract_json(None) is None


def balanced_object(text: str, start: int) -> str | None:
    """The substring from `text[start]` (a `{`) to its matching `}`, or None if it never closes.

    Braces inside JSON strings, and escaped quotes inside those strings, are not counted.
    """
    depth = 0
    in_string = False
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return None


def by_scanning(text: str) -> dict[str, Any] | None:
    """Strategy 3 as it was written first: balanced-brace scanning from each `{`, then `json.loads`."""
    start = text.find("{")
    for _ in range(64):
        if start == -1:
            break
        candidate = balanced_object(text, start)
        if candidate is not None:
            try:
                value = json.loads(candidate)
            except ValueError:
                value = None
            if isinstance(value, dict):
                return value
        start = text.find("{", start + 1)
    return None


PIECES = st.sampled_from(["{", "}", '"', "\\", " ", "a", ":", ",", "1", "[", "]", '{"a": 1}', '{"b": "}"}', "x{"])


@given(st.lists(st.one_of(PIECES, st.text(max_size=3)), max_size=30))
def test_the_decoder_finds_what_scanning_found(pieces: list[str]) -> None:
    text = "".join(pieces)
    if "```" in text:
        return
    expected = by_scanning(text)
    if expected is None:
        try:
            whole = json.loads(text.strip())
        except ValueError:
            whole = None
        expected = whole if isinstance(whole, dict) else None
    assert extract_json(text) == expected
