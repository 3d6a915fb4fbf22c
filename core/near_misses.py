"""Lessons that read alike but say different things: different commands quoted, different numbers, opposite words,
or the same words with what is advised against swapped ("use pnpm, not npm" against "use npm, not pnpm").

A sentence model scores such pairs as near-duplicates (they share most of their words), and merging them would
lose a lesson, so the near-duplicate skip and the consolidation's threshold merges ask `different` first.
Measured on data/lessons/near_misses.json (40 pairs written for it: in-sample) and on the paraphrases of
data/lessons/paraphrases.json, none of whose same-lesson pairs it separates (docs/near-duplicates.md).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from core.patterns import Pattern

__all__ = ["different"]

_SPAN = Pattern(r"`([^`]+)`")
_NUMBER = Pattern(r"\p{Nd}+(?:\.\p{Nd}+)*")
_WORD = Pattern(r"[a-z][a-z-]*")
# Words that turn a lesson into its opposite (pairs seen in lessons; not `before`/`after` or `short`/`long`, which
# paraphrases swap freely: "run X before Y" is "run Y after X").
_OPPOSITES = (
    ("never", "always"),
    ("without", "with"),
    ("short", "detailed"),
    ("enable", "disable"),
    ("allow", "forbid"),
    ("include", "exclude"),
    ("absolute", "relative"),
    ("add", "remove"),
    ("local", "remote"),
    ("staging", "production"),
    ("min", "max"),
    ("first", "last"),
    ("true", "false"),
    ("read-only", "writable"),
    ("unit", "integration"),
    ("frontend", "backend"),
    ("feature", "release"),
)


def _spans(text: str) -> set[str]:
    return {" ".join(s.lower().split()) for s in _SPAN.findall(text)}


def _numbers(text: str) -> set[str]:
    """The numbers standing alone (not after a word character or a dot, not before a word character): a number glued
    to a letter gives back its last dotted part (`1.2.3a` -> `1.2`), as a backtracking match would."""
    found = set()
    for m in _NUMBER.finditer(_SPAN.sub(" ", text)):
        number = m.group() or ""
        before, after = m.before(), m.after()
        if before and (before.isalnum() or before in "._"):
            continue
        if after and (after.isalnum() or after == "_"):
            number = number[: number.rfind(".")] if "." in number else ""
        if number:
            found.add(number)
    return found


def _words(text: str) -> list[str]:
    """The words, a quoted command counting as one word."""
    return _WORD.findall(_SPAN.sub(lambda m: " " + (m.group(1) or "").replace(" ", "_") + " ", text.lower()))


class _Features(NamedTuple):
    spans: frozenset[str]
    numbers: frozenset[str]
    words: tuple[str, ...]
    kinds: frozenset[str]
    ordered: tuple[str, ...]
    contrasted: tuple[str, ...]


@functools.lru_cache(maxsize=65536)
def _features(text: str) -> _Features:
    """What the rules compare, read once per text (a playbook's pairs share their texts)."""
    words = _words(text)
    return _Features(
        frozenset(_spans(text)),
        frozenset(_numbers(text)),
        tuple(words),
        frozenset(words),
        tuple(sorted(words)),
        tuple(_contrasted(words)),
    )


def different(a: str, b: str) -> str | None:
    """Why `a` and `b` are different lessons however alike they read (`quotes`, `numbers`, `opposite: x/y`,
    `swapped`), or None when nothing says so."""
    fa, fb = _features(a), _features(b)
    sa, sb = fa.spans, fb.spans
    if sa and sb and sa != sb:
        return "quotes"
    na, nb = fa.numbers, fb.numbers
    if na and nb and na != nb:
        return "numbers"
    ka, kb = fa.kinds, fb.kinds
    for x, y in _OPPOSITES:
        one_way = x in ka and y in kb and x not in kb and y not in ka
        if one_way or (y in ka and x in kb and y not in kb and x not in ka):
            return f"opposite: {x}/{y}"
    if fa.ordered == fb.ordered and fa.contrasted != fb.contrasted:
        return "swapped"
    return None


_CONTRAST = ("not", "instead", "over", "than")


def _contrasted(words: list[str]) -> list[str]:
    """The words right after "not", "instead (of)", "over", "(rather) than": what a lesson advises against."""
    found = []
    for i, word in enumerate(words[:-1]):
        if word in _CONTRAST:
            after = words[i + 1]
            found.append(words[i + 2] if after == "of" and i + 2 < len(words) else after)
    return found
