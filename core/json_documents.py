"""JSON documents people hand us (an imported playbook.json, a repository's settings.json), parsed with a bound.

Python's JSON decoder, and the recursive code that later walks, validates or writes the value (pydantic, `json.dumps`
with an indent), stop with a `RecursionError` somewhere under a thousand levels: a 200 KB file of brackets is a
traceback, not an answer. `parse_document` reads such a file into a value no deeper than `MAX_DEPTH`, or says in a
`ValueError` what is wrong with it, so every reader can refuse it in one line and leave it as it was.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MAX_DEPTH", "parse_document"]

# Far deeper than the files read this way nest (a playbook.json 4 levels, Claude's settings.json about 7), far
# shallower than where the recursive readers and writers of the value stop (about 1,000).
MAX_DEPTH = 64


def parse_document(text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """The value of JSON `text`, whose arrays and objects nest at most `max_depth` deep.

    Raises:
        ValueError: the text is not JSON (a `json.JSONDecodeError`, with its line and column), or nests deeper.
    """
    try:
        value = json.loads(text)
    except RecursionError:  # the decoder's own bound, far under a 200 KB file of brackets
        raise ValueError(f"it nests arrays or objects more than {max_depth} deep") from None
    if _depth_exceeds(value, max_depth):
        raise ValueError(f"it nests arrays or objects more than {max_depth} deep")
    return value


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Whether `value` nests containers more than `limit` deep: a walk with a stack of its own, not recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
