"""RE2 screens for Python patterns: DuckDB finds the texts a pattern may match.

An RE2 pattern from `superset` matches wherever the Python pattern does, so DuckDB can screen text before Python
scans it.

DuckDB's `regexp_matches` is RE2: no lookarounds, no back-references, ASCII `\\s`, `\\d`, `\\w` and `\\b`.
`superset` rewrites a compiled Python pattern into RE2 syntax from Python's own parse tree, widening where RE2
cannot say the same thing: zero-width assertions (`\\b`, `^`, `(?=...)`, `(?<!...)`) are dropped, a
back-reference becomes the pattern of the group it names, a long bounded repeat becomes unbounded, and
Python's Unicode classes become classes RE2 builds cheaply (any non-ASCII character a word character or a
digit; Python's whitespace listed). Each step only widens, so a text the Python pattern matches anywhere, the
RE2 one matches too; the reverse need not hold (a screen, not a replacement).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # typeshed describes the parser under its old names
    import sre_constants as _c
    import sre_parse as _p
else:  # the same modules; importing them by the old names warns since Python 3.11
    from re import _constants as _c
    from re import _parser as _p

__all__ = ["superset"]

# Python's classes are Unicode; spelled out exactly (`\p{L}`), they make RE2 programs that take tens of
# milliseconds to build, once per query. So each is widened to a cheap superset: any non-ASCII character is a
# word character or a digit, and `\s` is Python's whitespace (`str.isspace`) listed. Inside a negated class
# (`[^\s"']`) a category must shrink instead, to its ASCII part, which Python's contains.
_SPACE = r"\t-\r\x{1c}-\x{20}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}"
_NON_ASCII = r"\x{80}-\x{10ffff}"
_WIDE = {_c.CATEGORY_DIGIT: f"0-9{_NON_ASCII}", _c.CATEGORY_SPACE: _SPACE, _c.CATEGORY_WORD: f"0-9A-Za-z_{_NON_ASCII}"}
_NARROW = {_c.CATEGORY_DIGIT: "0-9", _c.CATEGORY_SPACE: r"\t-\r\x{1c}-\x{20}", _c.CATEGORY_WORD: "0-9A-Za-z_"}
_ALONE = {
    _c.CATEGORY_DIGIT: f"[{_WIDE[_c.CATEGORY_DIGIT]}]",
    _c.CATEGORY_NOT_DIGIT: f"[^{_NARROW[_c.CATEGORY_DIGIT]}]",
    _c.CATEGORY_SPACE: f"[{_SPACE}]",
    _c.CATEGORY_NOT_SPACE: f"[^{_NARROW[_c.CATEGORY_SPACE]}]",
    _c.CATEGORY_WORD: f"[{_WIDE[_c.CATEGORY_WORD]}]",
    _c.CATEGORY_NOT_WORD: f"[^{_NARROW[_c.CATEGORY_WORD]}]",
}
# A bounded repeat is unrolled by RE2 (`[^\n]{0,160}` is 160 states); above this bound it becomes unbounded.
_MAX_UNROLLED = 16
_SHORT = {"{0,}": "*", "{1,}": "+", "{0,1}": "?"}


def _char(code: int) -> str:
    ch = chr(code)
    return ch if ch.isascii() and ch.isalnum() else f"\\x{{{code:x}}}"


def _class(items: list[tuple[Any, Any]]) -> str:
    if len(items) == 1 and items[0][0] is _c.CATEGORY:  # `\S+` parses as a class of one category
        return _ALONE[items[0][1]]
    negate = bool(items) and items[0][0] is _c.NEGATE
    body = []
    for op, av in items[1:] if negate else items:
        if op is _c.LITERAL:
            body.append(_char(av))
        elif op is _c.RANGE:
            body.append(f"{_char(av[0])}-{_char(av[1])}")
        elif op is _c.CATEGORY and av in _WIDE:
            body.append((_NARROW if negate else _WIDE)[av])
        else:  # a negated category inside a larger class has no RE2 spelling
            raise ValueError(f"no RE2 superset for the class item {op} {av}")
    return ("[^" if negate else "[") + "".join(body) + "]"


def _emit(items: Any, groups: dict[int, Any], dotall: bool) -> str:
    out = []
    for op, av in items:
        if op is _c.LITERAL:
            out.append(_char(av))
        elif op is _c.NOT_LITERAL:
            out.append(f"[^{_char(av)}]")
        elif op is _c.ANY:
            out.append("(?s:.)" if dotall else r"[^\n]")
        elif op is _c.IN:
            out.append(_class(av))
        elif op is _c.CATEGORY:
            out.append(_ALONE[av])
        elif op in (_c.AT, _c.ASSERT, _c.ASSERT_NOT):
            continue  # zero-width: without it the pattern matches at least where it did
        elif op is _c.SUBPATTERN:
            group, add, _, sub = av
            if group is not None:
                groups[group] = sub
            inner = _emit(sub, groups, dotall or bool(add & re.DOTALL))
            out.append(f"(?i:{inner})" if add & re.IGNORECASE else f"(?:{inner})")
        elif op is _c.GROUPREF:  # the text the group matched is one its pattern matches
            out.append(f"(?:{_emit(groups[av], groups, dotall)})")
        elif op is _c.BRANCH:
            out.append("(?:" + "|".join(_emit(alt, groups, dotall) for alt in av[1]) + ")")
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT):
            low, high, sub = av
            unbounded = high is _c.MAXREPEAT or high > max(low, _MAX_UNROLLED)
            count = f"{{{low},}}" if unbounded else f"{{{low},{high}}}"
            lazy = "?" if op is _c.MIN_REPEAT else ""
            out.append(f"(?:{_emit(sub, groups, dotall)}){_SHORT.get(count, count)}{lazy}")
        else:  # conditionals, atomic groups, possessive repeats: not used by our patterns, refused rather than guessed
            raise ValueError(f"no RE2 superset for {op}")
    return "".join(out)


def superset(pattern: re.Pattern[str], *, ignore_case: bool = False) -> str:
    """An RE2 pattern matching every text `pattern` matches (searched anywhere), and perhaps more.

    `ignore_case`: the pattern is meant for the text lower-cased (as `core.redact` matches its case-blind
    rules); the RE2 one then ignores case on the original text, which matches at least the same texts.

    Raises:
        ValueError: the pattern uses a construct with no RE2 superset here.
    """
    tree = _p.parse(pattern.pattern, pattern.flags)
    body = _emit(tree, {}, bool(pattern.flags & re.DOTALL))
    return f"(?i:{body})" if ignore_case or pattern.flags & re.IGNORECASE else body
