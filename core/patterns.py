"""Linear-time patterns: every regular expression the core runs on text, on RE2 (`google-re2`).

Python's `re` backtracks: a nested quantifier, or a lazy run that fails at the end of a long line, costs time
exponential or quadratic in the text (one 133-character `sshpass` line took 335 s). RE2 matches in time linear in
the text for any pattern it accepts, and accepts no construct that needs backtracking: no lookarounds, no
back-references. A caller checks such a condition on the match, in Python, as a bounded look at the characters
beside it (`Match.before`, `Match.after`), and never goes back to `re`.

Where RE2 differs from `re` on the same spelling: `\\s`, `\\w`, `\\d` and `\\b` are ASCII (`SPACE` is Python's
whitespace, listed, for a class); without `multiline`, `$` is the end of the text only; the end of the text is
`\\z` (Python's `\\Z`); `pos`/`endpos` only bound where a match may lie: `^`, `$` and `\\b` still see the text
around them. Offsets are `str` offsets, as `re` gives them; a text is encoded to UTF-8 once for all the patterns
run over it in a row.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterator, Sequence

import re2

__all__ = ["SPACE", "AnyOf", "Literals", "Match", "Pattern", "escape"]

# Python's `\s` (`str.isspace`), as literal characters for a class: `[{SPACE}]`, `[^{SPACE}]`. RE2's `\s` is ASCII,
# and `\p{Z}` is not the same set (it lacks the tab and holds no control character).
SPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"


def _surrogate_as_fffd(error: UnicodeError) -> tuple[bytes, int]:
    # A lone surrogate (JSON's `\ud800`) is no UTF-8; U+FFFD takes its place, one character for one, so offsets hold.
    assert isinstance(error, UnicodeEncodeError)
    return "\ufffd".encode() * (error.end - error.start), error.end


codecs.register_error("playbook.fffd", _surrogate_as_fffd)


class _Subject:
    """A text and its UTF-8 bytes, with a cursor that turns byte offsets into `str` offsets and back in time
    proportional to the distance from the last one turned (matches come in order)."""

    __slots__ = ("_cursor", "ascii", "data", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.ascii = text.isascii()
        self.data = text.encode("ascii") if self.ascii else text.encode("utf-8", "playbook.fffd")
        self._cursor = (0, 0)  # (byte, char): one tuple, so a reader never sees half of an update

    def char(self, byte: int) -> int:
        if self.ascii:
            return byte
        at_byte, at_char = self._cursor
        if byte >= at_byte:
            char = at_char + len(self.data[at_byte:byte].decode("utf-8"))
        else:
            char = at_char - len(self.data[byte:at_byte].decode("utf-8"))
        self._cursor = (byte, char)
        return char

    def byte(self, char: int) -> int:
        if self.ascii:
            return char
        at_byte, at_char = self._cursor
        if char >= at_char:
            byte = at_byte + len(self.text[at_char:char].encode("utf-8", "playbook.fffd"))
        else:
            byte = at_byte - len(self.text[char:at_char].encode("utf-8", "playbook.fffd"))
        self._cursor = (byte, char)
        return byte


_last: _Subject | None = None


def _subject(text: str) -> _Subject:
    """`text` prepared; the last one is kept, since a redactor runs many patterns over one text in a row."""
    global _last
    last = _last
    if last is not None and last.text is text:
        return last
    _last = prepared = _Subject(text)
    return prepared


class Match:
    """One match: `str` offsets of the whole match (group 0) and of each group; -1 for a group that took no part."""

    __slots__ = ("pattern", "spans", "string")

    def __init__(self, string: str, spans: Sequence[tuple[int, int]], pattern: Pattern) -> None:
        self.string = string
        self.spans = spans
        self.pattern = pattern

    def __repr__(self) -> str:
        return f"<Match {self.spans[0]} {self.group()!r}>"

    def span(self, group: int | str = 0) -> tuple[int, int]:
        return self.spans[group if isinstance(group, int) else self.pattern.index(group)]

    def start(self, group: int | str = 0) -> int:
        return self.span(group)[0]

    def end(self, group: int | str = 0) -> int:
        return self.span(group)[1]

    def group(self, group: int | str = 0) -> str | None:
        start, end = self.span(group)
        return None if start < 0 else self.string[start:end]

    def __getitem__(self, group: int | str) -> str | None:
        return self.group(group)

    def groups(self) -> tuple[str | None, ...]:
        return tuple(self.group(i) for i in range(1, len(self.spans)))

    def before(self, n: int = 1) -> str:
        """Up to `n` characters before the match: a lookbehind's bounded look."""
        start = self.spans[0][0]
        return self.string[max(0, start - n) : start]

    def after(self, n: int = 1) -> str:
        """Up to `n` characters after the match: a lookahead's bounded look."""
        end = self.spans[0][1]
        return self.string[end : end + n]


class Pattern:
    """A compiled RE2 pattern with the calling conventions of `re.Pattern` that the core uses.

    Args:
        source: the pattern, in RE2's syntax.
        ignore_case, dotall, multiline: as `re.IGNORECASE`, `re.DOTALL`, `re.MULTILINE`.
        capture: False when no group is read (only whole matches): parentheses only group, and RE2 can skip the
            engines that fill groups in.

    Raises:
        ValueError: RE2 cannot compile `source` (a lookaround, a back-reference, a repeat above 1000, ...); the
            message is RE2's own.
    """

    __slots__ = ("_groupindex", "_re", "flags", "source")

    def __init__(
        self,
        source: str,
        *,
        ignore_case: bool = False,
        dotall: bool = False,
        multiline: bool = False,
        capture: bool = True,
    ) -> None:
        options = re2.Options()
        options.log_errors = False  # RE2 writes a failed compile to stderr; the ValueError says it once
        options.never_capture = not capture  # no groups to fill in: RE2 need not run its slower submatch engines
        flags = ("i" if ignore_case else "") + ("s" if dotall else "") + ("m" if multiline else "")
        try:
            self._re = re2.compile(f"(?{flags}){source}" if flags else source, options)
        except re2.error as exc:
            reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else exc
            raise ValueError(str(reason)) from None
        self.source = source
        self.flags = flags
        self._groupindex: dict[str, int] = dict(self._re.groupindex)

    def __repr__(self) -> str:
        return f"Pattern({self.source!r}{', ' + self.flags if self.flags else ''})"

    @property
    def groupindex(self) -> dict[str, int]:
        """Named groups and their numbers."""
        return dict(self._groupindex)

    @property
    def groups(self) -> int:
        """How many capturing groups."""
        return int(self._re.groups)

    def index(self, group: int | str) -> int:
        """A group's number, by number or name."""
        return self._groupindex[group] if isinstance(group, str) else group

    def _found(self, subject: _Subject, spans: list[tuple[int, int]]) -> Match:
        if subject.ascii:  # byte offsets are character offsets
            return Match(subject.text, spans, self)
        # Group spans start at or after the match's start: turning the whole match first keeps the cursor local.
        converted = [(-1, -1) if s < 0 else (subject.char(s), subject.char(e)) for s, e in spans]
        return Match(subject.text, converted, self)

    def _spans(self, data: bytes, anchor: object, pos: int, endpos: int) -> list[tuple[int, int]] | None:
        spans = self._re._regexp.Match(anchor, data, pos, endpos)
        return None if spans[0][0] < 0 else spans

    def search(self, text: str, pos: int = 0, endpos: int | None = None) -> Match | None:
        """The leftmost match starting at or after `pos` and ending by `endpos`, or None."""
        return next(self.finditer(text, pos, endpos), None)

    def match(self, text: str, pos: int = 0) -> Match | None:
        """A match that starts at `pos`, or None."""
        subject = _subject(text)
        spans = self._spans(subject.data, _ANCHOR_START, subject.byte(pos), len(subject.data))
        return None if spans is None else self._found(subject, spans)

    def fullmatch(self, text: str) -> Match | None:
        """A match of the whole of `text`, or None."""
        subject = _subject(text)
        spans = self._spans(subject.data, _ANCHOR_BOTH, 0, len(subject.data))
        return None if spans is None else self._found(subject, spans)

    def finditer(self, text: str, pos: int = 0, endpos: int | None = None) -> Iterator[Match]:
        """Every non-overlapping match, left to right, as `re.finditer`: linear in the text in all."""
        subject = _subject(text)
        data = subject.data
        at = subject.byte(pos)
        end = len(data) if endpos is None or endpos >= len(text) else subject.byte(endpos)
        while at <= end:
            spans = self._spans(data, _UNANCHORED, at, end)
            if spans is None:
                return
            yield self._found(subject, spans)
            start, stop = spans[0]
            at = stop
            if stop == start:  # an empty match: go on from the next whole character
                at += 1
                while at < len(data) and data[at] & 0xC0 == 0x80:
                    at += 1

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        """`finditer`'s (start, end) of each match, for a pattern that matches no empty text, without a `Match` each
        (for callers that read only offsets) and without a search after a match that ends the text."""
        subject = _subject(text)
        data, end = subject.data, len(subject.data)
        regexp, at = self._re._regexp, 0
        while at < end:
            spans = regexp.Match(_UNANCHORED, data, at, end)
            start, stop = spans[0]
            if start < 0:
                return
            yield (start, stop) if subject.ascii else (subject.char(start), subject.char(stop))
            at = stop if stop > start else end  # (an empty match, which such a pattern has none of, ends the search)

    def findall(self, text: str) -> list[str]:
        """The text of every match (of its first group, when it has groups; "" where that group took no part)."""
        group = 1 if self.groups else 0
        return [m.group(group) or "" for m in self.finditer(text)]

    def subn(self, repl: str | Callable[[Match], str], text: str, count: int = 0) -> tuple[str, int]:
        """`text` with each match (the first `count`, when given) replaced, and how many were.

        `repl` is a function of the match, or a literal text (no group references: the callers that need a
        group's text pass a function).
        """
        pieces: list[str] = []
        at = n = 0
        for m in self.finditer(text):
            start, stop = m.span()
            pieces.append(text[at:start])
            pieces.append(repl(m) if callable(repl) else repl)
            at = stop
            n += 1
            if n == count:
                break
        if not n:
            return text, 0
        pieces.append(text[at:])
        return "".join(pieces), n

    def sub(self, repl: str | Callable[[Match], str], text: str, count: int = 0) -> str:
        """`subn` without the count."""
        return self.subn(repl, text, count)[0]


class Literals:
    """Which of several groups of literal strings occur in a text, found in one RE2 pass over it (`str`'s own
    search, one literal at a time, slows to a character a step on runs such as `----`)."""

    __slots__ = ("_set",)

    def __init__(self, groups: Sequence[Sequence[str]]) -> None:
        self._set = re2.Set.SearchSet(re2.Options())
        for group in groups:
            # encoded as texts are (a lone surrogate as U+FFFD); a group with no literal gets a pattern that cannot
            # match, keeping the indices in step
            found = [re2.escape(lit.encode("utf-8", "playbook.fffd")) for lit in group if lit]
            self._set.Add(b"|".join(found) or rb"[^\x00-\x{10FFFF}]")
        self._set.Compile()

    def present(self, text: str) -> set[int]:
        """The indices of the groups one of whose literals occurs in `text`."""
        return set(self._set.Match(_subject(text).data) or ())


class AnyOf:
    """Whether any of several patterns occurs in a text, said by one RE2 pass over its UTF-8 bytes: no groups filled
    in and no byte offset turned into a character offset. Most texts hold none of what a screen or a redactor looks
    for, and are read no further; where one does, the caller runs the detailed patterns.

    Args:
        patterns: each an RE2 source, a compiled `re2` pattern or a `Pattern` (its flags kept: each is read in a
            group of its own).
    """

    __slots__ = ("_re", "source")

    def __init__(self, *patterns: str | re2._Regexp | Pattern) -> None:
        sources = []
        for p in patterns:
            if isinstance(p, Pattern):
                sources.append(f"(?{p.flags}){p.source}" if p.flags else p.source)
            else:
                sources.append(p if isinstance(p, str) else p.pattern)
        options = re2.Options()
        options.log_errors = False
        options.never_capture = True
        self.source = "|".join(f"(?:{s})" for s in sources)
        self._re = re2.compile(self.source, options)

    def __repr__(self) -> str:
        return f"AnyOf({self.source!r})"

    def found_in(self, text: str | bytes) -> bool:
        """Whether any of the patterns matches somewhere in `text` (a `str`, or its UTF-8 already made)."""
        data = text if isinstance(text, bytes) else _subject(text).data
        return self._re._regexp.Match(_UNANCHORED, data, 0, len(data))[0][0] >= 0


def escape(text: str) -> str:
    """`text` as a pattern that matches exactly it."""
    return str(re2.escape(text))


_ANCHOR = re2._re2.RE2.Anchor
_UNANCHORED, _ANCHOR_START, _ANCHOR_BOTH = _ANCHOR.UNANCHORED, _ANCHOR.ANCHOR_START, _ANCHOR.ANCHOR_BOTH
