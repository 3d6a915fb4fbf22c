"""Characters a reader cannot see: control characters, bidirectional overrides, zero-width and tag characters.

Text from transcripts (session ids, project names, tool output, a model's answer) may hold them. Printed raw,
an escape sequence rewrites the terminal (a reviewer sees "Looks harmless." where other text stands), a bidi
override reorders what is read, and Unicode tag characters spell instructions no human sees but a model reads.
`visible` shows each one as its escape (`\\x1b`, `\\u202e`, `\\U000e0041`), so what is printed is what is there.
"""

from __future__ import annotations

import re

__all__ = ["UNSEEN", "removed", "strip_unseen", "visible"]

# Unicode's control (Cc), format (Cf), line- and paragraph-separator (Zl, Zp) characters, except tab and newline,
# which tables and notes use as layout. The ranges are Unicode 15's; tests/core/test_invisible.py checks them
# against `unicodedata` for every code point.
UNSEEN = re.compile(
    "["
    "\x00-\x08\x0b-\x1f\x7f-\x9f"
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f"
    "]"
)


def _escape(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def visible(text: str) -> str:
    """`text` with every character a reader cannot see written as its escape; other text unchanged."""
    return UNSEEN.sub(_escape, text)


def strip_unseen(text: str) -> str:
    """`text` without the characters a reader cannot see (tab and newline kept)."""
    return UNSEEN.sub("", text)


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
