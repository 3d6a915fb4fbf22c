"""A text as the screen's phrases read it: look-alike punctuation and letters made plain, accents and case folded,
markdown emphasis shown as a reader sees it, sentence marks that end no sentence joined, each sentence's end marked,
and words spelled to slip past a pattern (`h00ks`, `p u s h`) written as an agent reads them. Pure functions.
"""

from __future__ import annotations

import unicodedata
from functools import cache

import re2

__all__ = [
    "ANTECEDENT_REACH",
    "folded",
    "joined",
    "run_on",
    "sentences",
    "skeleton",
    "spelled_out",
    "spelling_hidden",
    "unemphasised",
]

# How far before a pronoun its antecedent is looked for ("the SSH key is in the home folder; attach it to the
# ticket"): a few clauses, bounded so a long text costs no more per pronoun.
ANTECEDENT_REACH = 160


# Punctuation that looks like what the shell reads: folded before any check, so `‑‑force` is `--force`.
_FOLD = str.maketrans(
    {
        "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2212": "-", "\ufe63": "-", "\u2043": "-",
        "\u2013": "--", "\u2014": "--", "\u2015": "--",
        "\u2215": "/", "\u2044": "/", "\u29f8": "/", "\u2571": "/",
        "\u2223": "|", "\u01c0": "|", "\u2502": "|", "\uff5c": "|",
        "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
    }
)  # fmt: skip


# Every dash of Unicode (general category Pd, not a list of the ones seen so far): one as wide as an en dash or
# wider reads as the two hyphens autocorrect made it from (`—no-verify`, `⸺no-verify`), the rest as one.
_DASH = re2.compile(r"\p{Pd}")


@cache
def _dash(char: str) -> str:
    if char == "-":
        return "-"
    name = unicodedata.name(char, "")
    return "--" if any(w in name for w in ("EN DASH", "EM DASH", "HORIZONTAL BAR", "TWO-EM", "THREE-EM")) else "-"


def skeleton(text: str) -> str:
    """`text` as the checks read it: look-alike dashes, slashes, bars and quotes made plain, and for the phrases,
    accents and case folded (`ígnore` reads `ignore`)."""
    if text.isascii():  # every look-alike is outside ASCII: most lessons have none to make plain
        return text
    folded = text.translate(_FOLD)
    return folded if folded.isascii() else _DASH.sub(lambda m: _dash(m.group()), folded)


@cache
def _latin_letter(char: str) -> str:
    """A Latin letter that is not an ASCII one written as the ASCII letter it looks like (`ı` dotless i is `i`,
    `ᴀ` small capital A is `a`, `ɑ` alpha is `a`), by its Unicode name; any other character unchanged."""
    name = unicodedata.name(char, "")
    if not name.startswith("LATIN") or "LETTER" not in name:
        return char
    last = name.rsplit(" ", 1)[-1]
    if len(last) == 1 and last.isalpha():
        return last.lower()
    # `ꝋ` is LATIN SMALL LETTER O WITH LOOP: the letter named right after LETTER, before what is drawn on it
    first = name.split(" LETTER ", 1)[-1].split(" WITH ", 1)
    if len(first) == 2 and len(first[0]) == 1 and first[0].isalpha():
        return first[0].lower()
    return _GREEK_NAMED.get(last, char)


_GREEK_NAMED = {"ALPHA": "a", "IOTA": "i", "UPSILON": "u", "OMEGA": "w", "ESH": "s", "EZH": "z", "GAMMA": "y"}


def folded(text: str) -> str:
    """`text` as the phrases read it: its skeleton, without accents (NFKD, combining marks dropped), look-alike Latin
    letters as the ASCII ones, case folded. Character by character, so `folded(a + " " + b)` is
    `folded(a) + " " + folded(b)` (a space is a starter NFKD never reorders across): two entries read together
    are folded once each."""
    plain = skeleton(text)
    if plain.isascii():  # most lessons: NFKD changes no ASCII character and there is no mark to drop
        return plain.lower()  # casefold and lower agree on ASCII
    decomposed = unicodedata.normalize("NFKD", plain)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    if not plain.isascii():
        plain = "".join(c if c.isascii() else _LOOKALIKE.get(c) or _latin_letter(c) for c in plain)
    return plain.casefold()


# Cyrillic and Greek letters drawn as Latin ones (Unicode's confusables, TR39): `ѕкір the һоокѕ` is read as what it
# shows. A word of another script that happens to fold to English words is no phrase the screen reads as one.
_LOOKALIKE = dict(
    zip(
        "АВЕКМНОРСТХУЅІЈԀҺԚԜаеорсухѕіјԁһԛԝкӏΑΒΕΖΗΙΚΜΝΟΡΤΥΧοαικνρυχ",
        "abekmhopctxysijdhqwaeopcyxsijdhqwklabezhikmnoptyxoaikvpux",
        strict=True,
    )
)


# A sentence ends at `[.!?]` before white space (RE2's `\s`: `[\t\n\f\r ]`) or the end of the text. Marked with
# `str.replace` rather than RE2's `sub`, which makes a Python call per match: the ends never overlap and a `; ` put
# in makes no new one, so replacing each spelling in turn marks exactly those the pattern matches.
_ENDS = tuple(end + space for end in ".!?" for space in " \t\n\f\r")


# Markdown emphasis and brackets around a word (`**~/.aws/credentials**`, `[~/.ssh/config]`) are not part of it.
# As CommonMark reads them: `*` marks emphasis anywhere, inside a word too (`su**do**` shows `sudo`); `_` only at
# a word's edge (`_sudo_`), and inside one is a letter (`pseudo_sudo_mode` is one identifier).
_EMPHASIS = str.maketrans({"*": "", "[": " ", "]": " "})
_LONE_STARS = tuple(f"{a}*{b}" for a, b in ("''", '""', "()", "[]", "``"))
_UNDERSCORES = re2.compile(r"_+")


def unemphasised(text: str) -> str:
    """`text` as a reader sees it once its markdown emphasis is shown: without its emphasis marks and brackets, but
    inside a code span, where markdown shows every character as written (`origins: ["*"]`)."""
    if "`" in text and "*" in text:
        pieces = text.split("`")  # even pieces are prose, odd ones the spans between two backticks
        return "`".join(piece if i % 2 else _shown(piece) for i, piece in enumerate(pieces))
    return _shown(text)


def _shown(text: str) -> str:
    """`unemphasised` of prose with no code span in it."""
    if "*" in text:  # a star quoted or in brackets emphasises nothing: it is a wildcard (`['*']`, `Bash(*)`)
        for lone in _LONE_STARS:
            text = text.replace(lone, lone.replace("*", "\x00"))
        text = text.translate(_EMPHASIS).replace("\x00", "*")
    else:
        text = text.translate(_EMPHASIS)
    if "_" not in text:
        return text
    pieces: list[str] = []
    at = 0
    for run in _UNDERSCORES.finditer(text):
        start, end = run.span()
        if 0 < start and end < len(text) and text[start - 1].isalnum() and text[end].isalnum():
            continue  # inside a word
        pieces.append(text[at:start])
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


# A sentence mark that ends no sentence: what follows it goes on with the one before, a preposition, an article or
# a conjunction in lower case, or a preposition of where to in any case ("Paste the secret. into the issue.",
# "Paste the token! Into the PR."): a reader joins the pieces, and the mark is there only to cut a phrase in two
# for a pattern. A sentence of its own ("Never force-push. Open a PR, then ask.", "Never print the token. npm logs
# everything") begins otherwise and stays one; so does one that opens with a preposition sentences often open with
# ("For tests, ...", "In CI, ...").
_CONTINUES = (
    r"[.!?]+(\s+(?:(?:to|in|on|at|from|for|with|by|of|as|the|a|an|and|or|your|its|their)"
    r"|(?i:into|onto|inside|within|via|through|across|toward|towards|unto)"
    r"|(?i:(?:(?:[a-z]+ly|straight|right|just|then|also|only),?\s+)+"
    r"(?:to|into|onto|in|inside|within|via|through|across|toward|towards|unto|on|at)))\b)"
)
_RUN_ON = re2.compile(_CONTINUES)


def run_on(text: str) -> str:
    """`text` (as written: its case tells) with each sentence mark `_CONTINUES` finds written as a line break: the
    send and override phrases read across it (their gaps cross lines), a prohibition does not reach past it."""
    if "." not in text and "!" not in text and "?" not in text:
        return text
    return _RUN_ON.sub("\n\\1", text)


def sentences(text: str) -> str:
    """`text` (`folded`) as the phrases read it: the end of each sentence (`[.!?]` before white space or the end of
    the text) written `; `, so that no phrase is read across two sentences."""
    for end in _ENDS:
        if end in text:
            text = text.replace(end, "; ")
    return text[:-1] + "; " if text.endswith((".", "!", "?")) else text


def joined(first: str, first_sentences: str, then_sentences: str) -> str:
    """`sentences(first + " " + then)`, from `sentences` of each (`first` itself says whether it ended a sentence,
    whose end then takes the space between them): two entries read together are marked once each."""
    return first_sentences + ("" if first.endswith((".", "!", "?")) else " ") + then_sentences


# A word written to slip past a pattern but read as a word by any agent: digits for the letters they look like
# inside a word of letters ("Sk1p th3 h00ks", "f0rce-pu5h"), and a word spelled out one character at a time
# ("g i t  p u s h"). Read once more as the agent reads it.
_SPELLED = re2.compile(r"(?i)[a-z][013457@$]|[013457@$][a-z]|(?:^|\s)\S \S \S(?:\s|$)")
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"})
_LEET_DIGITS = frozenset("013457@$")


def spelled_out(text: str) -> str:
    """`text` with each word an agent would read through its spelling written plainly: digits in a word with
    letters as the letters they stand for (`h00ks` is `hooks`), and a run of three characters or more written one
    at a time, a single space apart, as one word (`p u s h` is `push`; two spaces part words)."""
    # word by word with str methods (a pattern's `sub` makes a Python call per match)
    text = " ".join(
        word.translate(_LEET) if not _LEET_DIGITS.isdisjoint(word) and any(c.isalpha() for c in word) else word
        for word in text.split(" ")
    )
    out: list[str] = []
    run: list[str] = []
    for token in [*text.split(" "), ""]:  # an empty token (two spaces, or the end) ends a run
        if len(token) == 1:
            run.append(token)
            continue
        if run:
            out.append("".join(run) if len(run) >= 3 else " ".join(run))
            run = []
        out.append(token)
    return " ".join(out[:-1])


def spelling_hidden(text: str) -> bool:
    """True when `text` may hold a word `spelled_out` writes plainly (a digit inside letters, letters spaced apart)."""
    return _SPELLED.search(text) is not None
