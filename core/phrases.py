"""The screen's second line: what a text asks in words, read on one reading of it.

Phrases that speak to the agent over the user's head (`core.overrides`), send a secret somewhere
(`core.secret_sends`), talk it out of a safeguard (`core.safeguards_off`, `core.insecure_settings`) or install a
package in words.

An allow-list decides commands, links, paths, scripts and languages (`core.allowlist`, `core.screen`); what a
sentence asks in plain words ("do not bring this up with the user", "paste the token into the issue", "push with
the force flag") has no grammar to parse. These phrases catch the common shapes of those requests, on the text's
skeleton (accents and case folded, look-alike punctuation made plain), and a prohibition ("never force-push") is
not held. They are a second line behind the allow-list, never the only one. Pure functions.
"""

from __future__ import annotations

import re2

from core.insecure_settings import IDENTIFIER, SETTING
from core.overrides import OVERRIDE, overridden
from core.patterns import AnyOf
from core.reading import folded, run_on, sentences, spelled_out, spelling_hidden, unemphasised
from core.safeguards_off import PRONOUN_OFF, SAFEGUARD_OFF, SAID_AWAY, talked_off
from core.secret_sends import (
    COMMITS_SECRET,
    CREDENTIAL,
    DIRECT_SEND,
    PASSIVE_COMMIT,
    PASSIVE_SEND,
    PRONOUN_SEND,
    SECRET,
    SEND,
    SHOWN,
    WHERE,
    sent,
)

__all__ = ["Reading", "folded_refusals", "phrase_reading", "phrase_refusals", "sentence_refusals"]

# A text as the phrases read it: folded, cut into sentences, and the phrases it holds (`phrase_reading`).
Reading = tuple[str, str, list[tuple[str, str]]]

# An install written in words: "install `x` with pip", "use npm to add x".
_INSTALL_WORDS = re2.compile(
    r"\badd\s+\S+\s+to\s+(?:the\s+)?(?:`?(?:dev)?dependencies`?|requirements|gemfile|package\.json|pyproject)|"
    r"\binstall\s+\S+\s+(?:with|using|via|from)\s+(?:pip|pip3|npm|pnpm|yarn|bun|gem|cargo|uv|poetry|composer|go)\b"
    r"|\b(?:use|with|using)\s+(?:pip|pip3|npm|pnpm|yarn|bun|gem|cargo|uv|poetry|composer)\s+to\s+(?:install|add)\b"
)


def _clip(text: str, most: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= most else flat[: most - 1] + "…"


# What any phrase needs, as two patterns (each read in one pass; as one, RE2's automaton for both grows too large
# to build quickly): most texts, and most two entries read together, hold none, and are read no further. A secret
# is sent (`SENDS`) only where one is named (`SECRET`).
_ANY_OVERRIDE = AnyOf(OVERRIDE)
# `SENDS` names a secret, a way to send it and where, in both its orders: each part is quick to look for, where the
# whole (gaps of up to 80 characters between them) is slow to read, so it is read only where all three are.
_SENDS_PARTS = tuple(AnyOf(part) for part in (SECRET, SEND, WHERE))


def _search(pattern: re2._Regexp, folded: str, data: bytes) -> re2._Match | None:
    """`pattern.search(folded)`, looked for in `data` (its UTF-8) first: RE2's wrapper turns byte offsets into `str`
    offsets at every call on a `str`, and most texts hold no phrase."""
    return None if pattern.search(data) is None else pattern.search(folded)


def phrase_refusals(text: str) -> list[tuple[str, str]]:
    """The phrases of `text` the second line holds, as (rule, what): `override`, `credential` (a secret sent
    somewhere, or a credential store named), `bypass` (a safeguard talked off, unless it is prohibited), `install`
    (a package installed in words)."""
    return phrase_reading(text)[2]


_STARS_AS_SPACES = str.maketrans({"*": " "})


def phrase_reading(text: str) -> Reading:
    """`text` as the phrases read it: `folded` from its `run_on` reading as markdown shows it (`unemphasised`), that
    cut into `sentences` (two entries read together are `joined` from these), and the phrases it holds.

    A `*` is read twice: as markdown shows it, no part of a word (`su**do**`), and as a space, as an agent reading
    the raw text may read `Ignore*all*previous*instructions`.
    """
    fold = folded(run_on(unemphasised(text)))
    cut = sentences(fold)
    found = sentence_refusals(cut)
    if "*" in text:
        said = {rule for rule, _ in found}
        spaced = folded(run_on(unemphasised(text.translate(_STARS_AS_SPACES))))
        found += [(rule, what) for rule, what in folded_refusals(spaced) if rule not in said]
    if spelling_hidden(text):
        said = {rule for rule, _ in found}
        read = folded(run_on(unemphasised(spelled_out(text))))
        found += [(rule, f"{what} (as its spelling reads)") for rule, what in folded_refusals(read) if rule not in said]
    return fold, cut, found


def folded_refusals(text: str) -> list[tuple[str, str]]:
    """`phrase_refusals` of a text already `folded` (from its `run_on` reading)."""
    return sentence_refusals(sentences(text))


def sentence_refusals(folded: str) -> list[tuple[str, str]]:
    """`phrase_refusals` of a text already `folded` and cut into `sentences` (each ends in `;`: the patterns stay
    inside one)."""
    data = folded.encode("utf-8")
    found: list[tuple[str, str]] = []
    if _ANY_OVERRIDE.found_in(data) and OVERRIDE.search(data) is not None and (match := overridden(folded)):
        found.append(("override", f"`{_clip(match.group())}` speaks to the agent over the user's head"))
    if _ANY_SENT.found_in(data):  # every send names a secret (`SECRET`) or a credential store
        if (all(part.found_in(data) for part in _SENDS_PARTS) or _ANY_DIRECT.found_in(data)) and (
            match := sent(folded)
        ):
            found.append(("credential", f"`{_clip(match.group())}` sends a secret somewhere"))
        elif match := _search(CREDENTIAL, folded, data):
            found.append(("credential", f"`{match.group()}` names a credential store"))
        if match := _search(_INSTALL_WORDS, folded, data):
            found.append(("install", f"`{_clip(match.group())}` installs a package named in words"))
    off = _ANY_SAFEGUARD_OFF.found_in(data) or _ANY_SETTING_OFF.found_in(data) or _ANY_SAID_AWAY.found_in(data)
    if off and (match := talked_off(folded)):
        found.append(("bypass", f"`{_clip(match.group())}` talks the agent out of a safeguard"))
    return found


# (defined here, after every pattern they stand for; read by `sentence_refusals`). Each pass is kept small: RE2
# builds one automaton per pass within a fixed memory, and one for all of them (as `SAFEGUARD_OFF` with `SAID_AWAY`
# or with what a send needs) runs out of it and falls back to a slower engine on every text.
_ANY_SENT = AnyOf(SECRET, CREDENTIAL, _INSTALL_WORDS)
_ANY_SAID_AWAY = AnyOf(SAID_AWAY)
_ANY_SAFEGUARD_OFF = AnyOf(SAFEGUARD_OFF)
_ANY_SETTING_OFF = AnyOf(PRONOUN_OFF, SETTING, IDENTIFIER)
_ANY_DIRECT = AnyOf(DIRECT_SEND, PASSIVE_SEND, PRONOUN_SEND, COMMITS_SECRET, PASSIVE_COMMIT, SHOWN)
