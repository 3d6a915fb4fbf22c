"""One kind of secret as the redactor reads it (`Rule`), and what every kind asks of a matched value.

A rule is an RE2 pattern, the cheap literal triggers every match holds, a marker, and, for what RE2 cannot state, a
bounded check on each match. Most kinds keep a value that only names a secret (`$TOKEN`, `<key>`, `None`, a call), so a
lesson can still say where the key comes from (`placeholder`), and pass over a marker an earlier pass wrote.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from core.patterns import Match, Pattern

__all__ = [
    "Check",
    "Rule",
    "Span",
    "a_value",
    "ascii_alnum",
    "matches",
    "not_a_marker",
    "not_placeholder",
    "placeholder",
    "word_char",
]

Span = tuple[int, int]
# A condition RE2 cannot state, checked on a match: the span to replace (the one given, or another), or None when
# the match holds no secret after all.
Check = Callable[[Match, Span], "Span | None"]


@dataclass(frozen=True)
class Rule:
    """One kind of secret.

    The first single-letter group that took part (`v`, or one of several alternatives), else the whole match, is
    replaced by `marker`, unless `check` says otherwise. `triggers` are lower-case substrings every match contains:
    where the one pass over every rule's pattern cannot say which match (`core.secret_rule_set`), a text holding
    none of a rule's triggers is not scanned with it (a rule without triggers always runs). An `ignore_case` rule
    is matched against the text with its ASCII letters lower-cased, so its pattern is lower case. `shape` is what
    DuckDB looks for where the pattern alone would be too wide (the pattern itself otherwise); either way, wherever
    the rule finds a secret, its shape matches.
    """

    name: str
    pattern: Pattern
    marker: str
    triggers: tuple[str, ...]
    ignore_case: bool = False
    check: Check | None = None
    shape: str | None = None
    letters: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "letters", tuple(g for g in self.pattern.groupindex if len(g) == 1))

    def spans(self, subject: str) -> list[tuple[int, int, str]]:
        """Where this rule finds secrets in `subject` (lower-cased already when `ignore_case`)."""
        found = []
        for m in matches(self.pattern, subject):
            chosen = m.spans[0]
            for group in self.letters:  # (a loop, not `next` over a generator: ~0.2 us a match)
                if m.start(group) >= 0:
                    chosen = m.span(group)
                    break
            span = chosen if self.check is None else self.check(m, chosen)
            if span is not None and span[1] > span[0]:
                found.append((span[0], span[1], self.marker))
        return found


def matches(pattern: Pattern, text: str) -> Iterator[Match]:
    """`pattern.finditer(text)`, without the last search where a match ends the text (none of these patterns matches
    an empty string, so nothing can follow): a search costs a call into RE2, and a short text's secret often ends it."""
    end = len(text)
    # one `finditer` for every search (a `search` a match set up the text and a generator each time: ~0.3 us)
    for m in pattern.finditer(text):
        yield m
        if m.spans[0][1] >= end:
            return


# Values that name a secret without being one are kept, so a lesson can still say where the key comes from:
# `$TOKEN`, `<key>`, `%s`, `{{ var }}`, `os.environ[...]`, `process.env.X`, None/null/true/..., a number, a call.
_PLACEHOLDERS = ("[redacted", "$", "<", "%", "{{", "os.", "process.env", "env.")
_NON_VALUES = ("none", "null", "nil", "true", "false", "undefined")
_NUMBER = Pattern(r"\p{Nd}+(?:[^\p{L}\p{N}_]|$)")  # Python's `\d+\b`
_CALL = Pattern(r"[\p{L}\p{N}_.]*\(")  # Python's `[\w.]*\(`


def word_char(ch: str) -> bool:  # Python's `\w`; an empty string (the end of the text) is none
    return ch.isalnum() or ch == "_"


def ascii_alnum(ch: str) -> bool:  # `[0-9A-Za-z]`; an empty string (an end of the text) is none
    return ch.isascii() and ch.isalnum()


def placeholder(text: str, at: int) -> bool:
    """Whether the value starting at `at` only names a secret (see `_PLACEHOLDERS`); the look runs over the value's
    own characters (a number's digits, a name up to its `(`), so it is bounded by the match."""
    head = text[at : at + 12].lower()
    if head.startswith(_PLACEHOLDERS):
        return True
    if any(head.startswith(w) and not word_char(text[at + len(w) : at + len(w) + 1]) for w in _NON_VALUES):
        return True
    return _NUMBER.match(text, at) is not None or _CALL.match(text, at) is not None


def not_placeholder(m: Match, span: Span) -> Span | None:
    return None if placeholder(m.string, span[0]) else span


def not_a_marker(m: Match, span: Span) -> Span | None:
    return None if m.string.startswith(("[REDACTED", "[redacted"), span[0]) else span


def a_value(m: Match, span: Span) -> Span | None:
    """Neither a placeholder nor what an earlier pass wrote (`[REDACTED:password]`, read again at ingest)."""
    return None if not_a_marker(m, span) is None else not_placeholder(m, span)
