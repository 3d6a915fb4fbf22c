"""Robust extraction of one JSON object from model text (REQ-CUR-016).

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

__all__ = ["extract_json"]

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
    if not isinstance(text, str) or not text.strip():
        return None
    for fence in (_JSON_FENCE, _PLAIN_FENCE):
        for match in fence.finditer(text):
            found = _loads_object(match.group(1).strip())
            if found is not None:
                return found
    start = text.find("{")
    tries = 0
    while start != -1 and tries < _MAX_BRACE_STARTS:
        tries += 1
        found = _object_at(text, start)
        if found is not None:
            return found
        start = text.find("{", start + 1)
    return _loads_object(text.strip())


_DECODER = json.JSONDecoder()


def _object_at(text: str, start: int) -> dict[str, Any] | None:
    """The JSON object that begins at `text[start]` (whatever follows it), or None.

    The object that balanced-brace scanning from `start` delimits, when that is valid JSON, found by the C decoder: a
    megabyte-long answer costs what `json.loads` of it does, not a Python loop over every character.
    """
    try:
        value, _ = _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None
