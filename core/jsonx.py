"""Robust extraction of one JSON object from model text (REQ-CUR-016).

Strategies, in order; the first that yields a JSON object wins:
1. a ```json fenced block;
2. a ``` fenced block without a language tag;
3. balanced-brace scanning from each `{`, aware of strings and escapes;
4. `json.loads` of the whole text.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["extract_json", "find_balanced_object"]

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


def find_balanced_object(text: str, start: int) -> str | None:
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
        candidate = find_balanced_object(text, start)
        found = _loads_object(candidate) if candidate is not None else None
        if found is not None:
            return found
        start = text.find("{", start + 1)
    return _loads_object(text.strip())
