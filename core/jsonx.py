"""Robust extraction of one JSON object from model text (fenced, bare, or among prose): the model's answer.

The answer is a *document*: JSON that begins outside any other bracket. The text's top-level spans are found by
bracket matching that skips JSON strings: a `{` or `[` outside every span begins one, which ends where its
brackets balance (`{` and `[` count alike; the decoder tells a valid span from a broken one). The first of these
that yields a JSON object is the answer:
1. a ```json fenced block, then a ``` block without a language tag, whose fence opens outside every span;
2. the first span that is a JSON object.
Never an object nested inside a larger span, valid or broken: when a span never closes, the answer was cut short
(`truncated`), and its first complete inner object is not an answer; a span that is valid JSON but no object (a
bare list) is no answer either (`not_object`).

Every character is looked at a bounded number of times (`str.find` from where the last search of the same
character ended; the C decoder once per span and once per fenced block), so extraction is linear in the text's
length whatever it holds (`tests/core/test_jsonx.py` measures crafted inputs).
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Iterator
from typing import Any, Literal, NamedTuple

__all__ = ["Located", "Problem", "extract_json", "find_json", "locate_json"]

# Why a text holds no answer: no JSON at all, a document that does not close, or JSON that is not an object.
Problem = Literal["none", "truncated", "not_object"]

_DECODER = json.JSONDecoder()
_FENCE = "```"
_BROKEN = object()  # the value of a span that is not valid JSON
_PAIR = {"{": "}", "[": "]"}
# What may follow an opening bracket in JSON (besides white space): a key or the end; a value or the end.
_FIRST = {"{": '"}', "[": '"{[]-0123456789tfnNI'}


class Located(NamedTuple):
    """The answer's object and where its JSON text starts and ends in the text, or why there is none."""

    value: dict[str, Any] | None
    start: int
    end: int
    problem: Problem | None = None


def extract_json(text: object) -> dict[str, Any] | None:
    """The answer's JSON object in `text` (see the module docstring), or None."""
    return find_json(text).value


def locate_json(text: object) -> tuple[dict[str, Any], int, int] | None:
    """The object `extract_json` returns, with where its JSON text starts and ends in `text`, or None."""
    found = find_json(text)
    return None if found.value is None else (found.value, found.start, found.end)


def find_json(text: object) -> Located:
    """The answer's JSON object in `text` and where it is, or the `problem` that leaves none (see the module
    docstring for what counts)."""
    if not isinstance(text, str) or not text.strip():
        return Located(None, 0, 0, "none")
    lead = len(text) - len(text.lstrip())
    if text[lead] == "{":  # the usual answer, an object first (and no fenced block after it): the C decoder alone
        first = _decoded(text, lead)
        if first is not None and isinstance(first[0], dict) and text.find(_FENCE, first[1]) == -1:
            return Located(first[0], lead, first[1])
    fences = _fenced_blocks(text)
    spans = _Scanner(text).spans()
    if fences:
        # Only a fence outside every span is the answer's: one inside a JSON string quotes something.
        seen = list(spans)
        starts = [s for s, _, _ in seen]

        def outside(at: int) -> bool:
            i = bisect_right(starts, at) - 1
            if i < 0:
                return True
            end = seen[i][1]
            return end is not None and at >= end

        for wanted in (True, False):  # ```json blocks first, then untagged ones
            for at, begin, stop, is_json in fences:
                if is_json is wanted and outside(at):
                    found = _block(text, begin, stop)
                    if found is not None:
                        return found
        spans = iter(seen)
    problem: Problem = "none"
    for start, end, value in spans:
        if end is None:
            return Located(None, start, len(text), "truncated")
        if isinstance(value, dict):
            return Located(value, start, end)
        if value is not _BROKEN:
            problem = "not_object"
    return Located(None, 0, 0, problem)


def _decoded(text: str, start: int) -> tuple[Any, int] | None:
    """The JSON value that begins at `text[start]` and where it ends, or None."""
    try:
        return _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        return None


def _value(text: str, start: int, end: int) -> Any:
    """The JSON value that is the span `text[start:end]`, or _BROKEN. Prose in brackets (`{braces}`, `[1]`, `{]`) is
    told by its bracket pair or its first character, before any decoding: a failed decoding costs an exception."""
    opener, second = text[start], text[start + 1]  # a span holds its two brackets at least
    if text[end - 1] != _PAIR[opener] or not (second.isspace() or second in _FIRST[opener]):
        return _BROKEN
    # The slice, not the text at `start`: a decoding error counts the lines before it, which in the whole text
    # would cost each broken span the length of everything before it.
    found = _decoded(text[start:end], 0)
    return _BROKEN if found is None or found[1] != end - start else found[0]


def _block(text: str, begin: int, stop: int) -> Located | None:
    """The JSON object that is the whole (stripped) content of a fenced block, or None."""
    inner = text[begin:stop]
    body = inner.strip()
    if not body.startswith("{"):
        return None
    found = _decoded(body, 0)
    if found is None or not isinstance(found[0], dict) or found[1] != len(body):
        return None
    start = begin + len(inner) - len(inner.lstrip())
    return Located(found[0], start, start + len(body))


def _fenced_blocks(text: str) -> list[tuple[int, int, int, bool]]:
    """Each closed fenced block that is ```json or untagged: (where its fence opens, where its content starts and
    ends, whether it is ```json). Fences pair in order; a block of another language is passed over."""
    marks = []
    at = text.find(_FENCE)
    while at != -1:
        marks.append(at)
        at = text.find(_FENCE, at + len(_FENCE))
    blocks = []
    for opening, closing in zip(marks[::2], marks[1::2], strict=False):
        begin = opening + len(_FENCE)
        if text[begin : begin + 4].lower() == "json":  # as a ```json[ \t]*\r?\n? opening, content may follow at once
            begin += 4
            while begin < closing and text[begin] in " \t":
                begin += 1
            begin += text.startswith("\r", begin)
            begin += text.startswith("\n", begin)
            blocks.append((opening, min(begin, closing), closing, True))
            continue
        line_end = text.find("\n", begin, closing)
        if line_end != -1 and not text[begin:line_end].strip(" \t\r"):
            blocks.append((opening, line_end + 1, closing, False))
    return blocks


class _Scanner:
    """The text's top-level spans, found in one forward pass. Each structural character's next position is
    searched with `str.find` from where its previous search stopped, so each is searched over the text once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.size = len(text)
        # The next `{`, `[`, `}`, `]`, `"` and backslash at or after the scan position (-1: not searched yet).
        self.next = [-1] * 6

    def _find(self, which: int, char: str, pos: int) -> int:
        at = self.next[which]
        if at < pos:
            at = self.text.find(char, pos)
            at = self.size if at == -1 else at
            self.next[which] = at
        return at

    def spans(self) -> Iterator[tuple[int, int | None, Any]]:
        """(start, end or None when it never closes, its JSON value or _BROKEN), in order; after a span that never
        closes there is no other."""
        find, text = self._find, self.text
        pos = 0
        while True:
            start = min(find(0, "{", pos), find(1, "[", pos))
            if start >= self.size:
                return
            end = self._close(start)
            if end is None:
                yield start, None, _BROKEN
                return
            yield start, end, _value(text, start, end)
            pos = end

    def _close(self, start: int) -> int | None:
        """Where the span that opens at `start` ends (just after its balancing bracket), or None when it never
        closes; brackets inside JSON strings (escapes honoured) do not count."""
        find, text, size = self._find, self.text, self.size
        depth = 0
        pos = start
        while True:
            at = min(find(0, "{", pos), find(1, "[", pos), find(2, "}", pos), find(3, "]", pos), find(4, '"', pos))
            if at >= size:
                return None
            char = text[at]
            pos = at + 1
            if char == '"':  # a string: on to its closing quote
                while True:
                    quote, escape = find(4, '"', pos), find(5, "\\", pos)
                    if quote >= size:
                        return None
                    if escape < quote:
                        pos = escape + 2
                        continue
                    pos = quote + 1
                    break
                continue
            depth += 1 if char in "{[" else -1
            if depth == 0:
                return pos
