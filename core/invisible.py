"""Characters a reader cannot see, and text in the one form the screen and the store keep.

Text from transcripts (session ids, project names, tool output, a model's answer) may hold characters no reader
sees: control characters, bidirectional overrides, zero-width and tag characters, variation selectors. Printed raw,
an escape sequence rewrites the terminal (a reviewer sees "Looks harmless." where other text stands), a bidi
override reorders what is read, and tag characters or variation selectors spell a whole sentence no human sees but
a model reads. The set is defined by Unicode properties, not by a list of known tricks: every Default_Ignorable_Code_
Point and every control (Cc), format (Cf), line- and paragraph-separator (Zl, Zp) character but tab and newline.

`normalise` is what every entry's text goes through before it is screened and stored: NFKC (so full-width,
ligature and other compatibility spellings become the one plain spelling) and then none of those characters.
`visible` shows each one as its escape (`\\x1b`, `\\u202e`, `\\U000e0041`), so what is printed is what is there.
"""

from __future__ import annotations

import unicodedata

import re2

from core.patterns import AnyOf

__all__ = ["UNSEEN", "normalise", "removed", "strip_unseen", "visible"]

# Default_Ignorable_Code_Point | Cc | Cf | Zl | Zp, but tab and newline (which tables and notes use as layout), as
# Unicode ranges: RE2 has the categories but not the binary property, so the union is spelled out once here, and
# tests/core/test_invisible.py checks it against the `regex` module's own property tables for every code point.
_RANGES = (
    r"\x{0}-\x{8}\x{B}-\x{1F}\x{7F}-\x{9F}\x{AD}\x{34F}\x{600}-\x{605}\x{61C}\x{6DD}\x{70F}\x{890}-\x{891}\x{8E2}"
    r"\x{115F}-\x{1160}\x{17B4}-\x{17B5}\x{180B}-\x{180F}\x{200B}-\x{200F}\x{2028}-\x{202E}\x{2060}-\x{206F}"
    r"\x{3164}\x{FE00}-\x{FE0F}\x{FEFF}\x{FFA0}\x{FFF0}-\x{FFFB}\x{110BD}\x{110CD}\x{13430}-\x{1343F}"
    r"\x{1BCA0}-\x{1BCA3}\x{1D173}-\x{1D17A}\x{E0000}-\x{E0FFF}"
)
UNSEEN = re2.compile(f"[{_RANGES}]")
_ANY_UNSEEN = AnyOf(UNSEEN)
_SURROGATE = range(0xD800, 0xE000)


def _escape(match: re2._Match) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def _lone_surrogates(text: str, instead: str | None) -> str:
    """`text` with each lone surrogate (what `json.loads` makes of a `\\ud800` escape: no character, and not UTF-8,
    so RE2 cannot read it) written as its escape, or as `instead`."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join(
            (c.encode("unicode_escape").decode("ascii") if instead is None else instead) if ord(c) in _SURROGATE else c
            for c in text
        )
    return text


def visible(text: str) -> str:
    """`text` with every character a reader cannot see written as its escape; other text unchanged."""
    text = _lone_surrogates(text, None)
    if UNSEEN.search(text) is None:
        return text
    return UNSEEN.sub(_escape, text)


def strip_unseen(text: str) -> str:
    """`text` without the characters a reader cannot see (tab and newline kept), lone surrogates included."""
    text = _lone_surrogates(text, "")
    # Most texts hold no such character (every entry's text is normalised at each export): one pass says so.
    if not _ANY_UNSEEN.found_in(text):
        return text
    return UNSEEN.sub("", text)


def normalise(text: str) -> str:
    """`text` as the screen reads it and the store keeps it: NFKC, then without the characters a reader cannot see
    (NFKC first: a compatibility character may decompose into one of them)."""
    return strip_unseen(unicodedata.normalize("NFKC", text))


def removed(text: str) -> str | None:
    """What `strip_unseen` takes out of `text`, for people (`U+202E ×1, U+E0049 ×2`), or None when nothing."""
    found: dict[str, int] = {}
    for match in UNSEEN.finditer(text):
        code = f"U+{ord(match.group()):04X}"
        found[code] = found.get(code, 0) + 1
    if not found:
        return None
    shown = [f"{code} ×{n}" for code, n in sorted(found.items())]
    return ", ".join(shown[:6]) + (f" and {len(shown) - 6} more" if len(shown) > 6 else "")
