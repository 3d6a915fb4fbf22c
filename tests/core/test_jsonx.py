"""Robust JSON extraction from model text (`core.jsonx`): the four strategies and SCN-CUR-016."""

from __future__ import annotations

import pytest

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
