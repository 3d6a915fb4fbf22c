"""Whether a pattern can match a text made of given characters alone, read from its parse.

A redactor's rule that needs a space, a `:` or a `=` in every match finds nothing in a text of token characters alone
(a pasted key, a blob, a block that is one run), so the pass that asks which rules match need not ask it there
(`core.secret_rule_set`). The answer is read from the parse Python's `re` makes of the pattern (RE2's syntax is
close to it), and it errs one way only: whatever the parser cannot read, or this cannot follow (anchors, word
boundaries, a construct not listed), counts as able to match.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["may_match_within"]

# The parser behind `re.compile`, a module of the standard library without stubs (`sre_parse`, its public name, is
# deprecated): only its parse tree is read, no pattern is run on `re` (core's patterns run on RE2).
_parser: Any = importlib.import_module("re._parser")


def _word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


_IGNORECASE = _parser.SRE_FLAG_IGNORECASE
_CATEGORIES: dict[Any, Callable[[str], bool]] = {
    _parser.CATEGORY_DIGIT: str.isdigit,
    _parser.CATEGORY_NOT_DIGIT: lambda ch: not ch.isdigit(),
    _parser.CATEGORY_SPACE: str.isspace,
    _parser.CATEGORY_NOT_SPACE: lambda ch: not ch.isspace(),
    _parser.CATEGORY_WORD: _word,
    _parser.CATEGORY_NOT_WORD: lambda ch: not _word(ch),
}
# The characters outside ASCII that a case-blind pattern's ASCII letters match (RE2 and `re` fold them so).
_FOLDED_TO_ASCII = {"k": "\u212a", "s": "\u017f"}


def may_match_within(source: str, alphabet: Iterable[str]) -> bool:
    """Whether `source` (an RE2 or Python pattern) may match some text made only of `alphabet`'s characters (ASCII):
    False only where every match must hold a character outside it."""
    chars = frozenset(alphabet)
    if not all(ch.isascii() for ch in chars):
        raise ValueError("may_match_within reads ASCII alphabets only; pass the characters as ASCII")
    try:
        parsed = _parser.parse(source)
    except (_parser.error, RecursionError):  # a pattern the parser cannot read (RE2's `\p{L}`): it may match anything
        return True
    folded = chars | {c.swapcase() for c in chars}
    folded |= {_FOLDED_TO_ASCII[c] for c in folded if c in _FOLDED_TO_ASCII}
    return _sequence(parsed, (chars, frozenset(folded)), bool(parsed.state.flags & _IGNORECASE))


# (the alphabet, the alphabet with every case its letters match case-blind)
_Alphabets = tuple[frozenset[str], frozenset[str]]


def _sequence(items: Iterable[tuple[Any, Any]], alphabets: _Alphabets, blind: bool) -> bool:
    """Whether a sequence of parsed items can match a text of the alphabet alone: each item must. `blind`: read
    case-blind, as a case variant of a character in the alphabet is in it."""
    return all(_item(op, value, alphabets, blind) for op, value in items)


def _item(op: Any, value: Any, alphabets: _Alphabets, blind: bool) -> bool:
    p = _parser
    chars = alphabets[1] if blind else alphabets[0]
    if op is p.LITERAL:
        return chr(value) in chars
    if op is p.NOT_LITERAL:
        return blind or bool(alphabets[0] - {chr(value)})  # (case-blind, `[^k]` leaves out three: may match)
    if op is p.IN:
        return any(_in_class(value, ch) for ch in chars)
    if op is p.BRANCH:
        return any(_sequence(branch, alphabets, blind) for branch in value[1])
    if op is p.SUBPATTERN:
        _, add, remove, items = value
        blind = (blind or bool(add & _IGNORECASE)) and not remove & _IGNORECASE
        return _sequence(items, alphabets, blind)
    if op in (p.MAX_REPEAT, p.MIN_REPEAT, p.POSSESSIVE_REPEAT):
        return value[0] == 0 or _sequence(value[2], alphabets, blind)
    return True  # `.`, anchors, boundaries, anything else: may match


def _in_class(items: Iterable[tuple[Any, Any]], ch: str) -> bool:
    """Whether a parsed character class holds `ch` (True where it holds something this cannot read)."""
    p = _parser
    negated = held = False
    for op, value in items:
        if op is p.NEGATE:
            negated = True
        elif op is p.LITERAL:
            held = held or ord(ch) == value
        elif op is p.RANGE:
            held = held or value[0] <= ord(ch) <= value[1]
        elif op is p.CATEGORY and value in _CATEGORIES:
            held = held or _CATEGORIES[value](ch)
        else:
            return True
    return held != negated
