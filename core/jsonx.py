"""Robust extraction of one JSON object from model text (fenced, bare, or among prose).

Strategies, in order; the first that yields a JSON object wins:
1. a ```json fenced block;
2. a ``` fenced block without a language tag;
3. the JSON object that begins at each `{` (balanced braces, aware of strings and escapes), whatever follows;
4. `json.loads` of the whole text.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["extract_json", "locate_json"]

_JSON_FENCE = re.compile(r"```json[ \t]*\r?\n?(.*?)```", re.DOTALL | re.IGNORECASE)
_PLAIN_FENCE = re.compile(r"```[ \t]*\r?\n(.*?)```", re.DOTALL)
# Bound the brace strategy so a hostile text of many `{` cannot make extraction quadratic.
_MAX_BRACE_STARTS = 64


def _loads_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def extract_json(text: object) -> dict[str, Any] | None:
    """Return the first JSON object found in `text` by the four strategies, or None."""
    found = locate_json(text)
    return found[0] if found else None


def locate_json(text: object) -> tuple[dict[str, Any], int, int] | None:
    """The object `extract_json` returns, with where its JSON text starts and ends in `text`, or None."""
    if not isinstance(text, str) or not text.strip():
        return None
    for fence in (_JSON_FENCE, _PLAIN_FENCE):
        for match in fence.finditer(text):
            inner = match.group(1)
            found = _loads_object(inner.strip())
            if found is not None:
                lead = len(inner) - len(inner.lstrip())
                start = match.start(1) + lead
                return found, start, start + len(inner.strip())
    start = text.find("{")
    tries = 0
    while start != -1 and tries < _MAX_BRACE_STARTS:
        tries += 1
        at = _object_at(text, start)
        if at is not None:
            return at[0], start, at[1]
        start = text.find("{", start + 1)
    whole = _loads_object(text.strip())
    if whole is None:
        return None
    lead = len(text) - len(text.lstrip())
    return whole, lead, lead + len(text.strip())


_DECODER = json.JSONDecoder()


def _object_at(text: str, start: int) -> tuple[dict[str, Any], int] | None:
    """The JSON object that begins at `text[start]` (whatever follows it) and where it ends, or None.

    The object that balanced-brace scanning from `start` delimits, when that is valid JSON, found by the C decoder: a
    megabyte-long answer costs what `json.loads` of it does, not a Python loop over every character.
    """
    try:
        value, end = _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
    return (value, end) if isinstance(value, dict) else None
