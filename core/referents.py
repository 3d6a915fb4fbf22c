"""What a pronoun stands for, for the safeguard gate (`core.safeguard_talk`): "it", "them", "that file", "its
contents" followed back to the subject of a statement or the object of an imperative in the nearest piece that names
something, read as a secret, a safeguard, a person or a thing. Pure functions.
"""

from __future__ import annotations

import itertools

import re2

from core.reading import ANTECEDENT_REACH
from core.safeguard_words import (
    BE,
    DETERMINERS,
    FACT,
    MODALS,
    NAVIGATES,
    PEOPLE,
    PIECE_CUT,
    PREPOSITIONS,
    REFERRER,
    SAFEGUARD,
    SECRET_KEEP,
    SECRET_NAMED,
    SECRET_PLACING,
    SPAN_ENDS,
    SUBORDINATE,
    THINGS,
    VERBS,
    WHERE,
    is_a,
    words_in,
)
from core.secret_talk import secret_named_in

__all__ = ["antecedent"]


def _head(words: list[str]) -> str | None:
    """What the noun a pronoun most likely stands for in a piece (`words`) is: "secret", "safeguard", "thing" (a
    container, a server, a cache: "the dev server proxies calls to staging with your token; if it hangs, kill it"),
    "person", or None when no noun decides. The noun is an imperative's object ("run the tests inside the
    container": the tests) or a statement's subject ("the CI runner image is cached": the image), its last word its
    head."""
    if is_a(words[0], VERBS | SECRET_KEEP | SECRET_PLACING) and words[0] not in DETERMINERS:
        span = list(itertools.takewhile(lambda w: w not in PREPOSITIONS and w not in SPAN_ENDS, words[1:]))
    else:
        verb = next(
            (i for i, w in enumerate(words) if i and _verb_like(w, i) and not SECRET_NAMED.match(words[i - 1])),
            len(words),
        )  # "a secret scan" is one noun
        span = words[:verb]
    while span and span[-1] in ("that", "which", "who"):
        span.pop()
    if not span:
        return None
    phrase = " ".join(span)
    if secret_named_in(phrase) is not None:
        return "secret"
    if span[-1] in THINGS:
        return "thing"
    if span[-1] in PEOPLE:
        return "person"
    return "safeguard" if SAFEGUARD.search(phrase) is not None else None


def _verb_like(word: str, at: int) -> bool:
    """Whether `word`, the `at`-th of a statement, reads as its verb."""
    if word in BE or word in MODALS or word in FACT or word in WHERE:
        return True
    return at >= 2 and word.endswith("s") and not word.endswith(("ss", "us", "is")) and word not in THINGS


def antecedent(before: str, noun: str = "", pronoun: str = "") -> str | None:
    """What a pronoun (or "that file", "its contents") after `before` refers to, when it is a secret ("secret") or a
    safeguard ("safeguard"): what the nearest piece that names something names (`_head`), passing over pieces that
    only go somewhere ("open the config file"), only refer back themselves ("export it; attach that file") or are
    subordinate ("the e2e tests are flaky; when in a hurry, ..."). None when that piece names a person ("tell the user
    so they can revoke it") or a thing ("start the dev server; stop it"), unless a secret was named before the thing
    ("secret") or a safeguard ("ambiguous": "the sandbox blocks writes; start a new terminal session and flip it" may
    stand for either, and only an act that weakens nothing is admitted). `noun`: the referrer's own noun ("that
    value"), read first in the nearest piece that names it ("read the value of GITHUB_TOKEN; open a gist; the gist
    body is that value"); `pronoun`: the referrer ("they" and "them" may stand for a person a condition names)."""
    *pieces, _own = PIECE_CUT.split(before[-2 * ANTECEDENT_REACH :])
    if noun and noun not in ("copy", "copies"):
        stem = noun.rstrip("s")
        named = next((p for p in reversed(pieces) if re2.search(rf"\b{stem}s?\b", p)), None)
        if named is not None and secret_named_in(named) is not None:
            return "secret"
    for at, piece in reversed(list(enumerate(pieces))):
        words = words_in(piece)
        if not words or piece.strip().isdigit():
            continue
        navigates = words[0] in NAVIGATES or words[:2] in (["go", "to"], ["log", "in"], ["log", "into"], ["sign", "in"])
        if not navigates and (head := _head(words)) is not None:
            if head == "thing":
                return _earlier(pieces[:at])
            if head != "person":
                return head
            if SUBORDINATE.match(piece) is None or pronoun in ("they", "them"):
                return None  # "tell the user so they can revoke it"; not "if a teammate asks for the key, give it"
        if secret_named_in(piece) is not None:
            return "secret"
        if SECRET_NAMED.search(piece) is not None and SAFEGUARD.search(SECRET_NAMED.sub("x", piece)) is None:
            return None  # "the password policy", "the token's expiry"
        if SAFEGUARD.search(piece) is not None:
            return "safeguard"  # a safeguard named beside a secret ("a secret scan") is what the piece is about
        # a piece decides when it names a thing ("start the dev server"); a bare act ("push"), a condition or a
        # piece that only refers back itself is passed over
        refers = REFERRER.search(piece) is not None or "its" in words or "their" in words
        if SUBORDINATE.match(piece) is None and not refers and not navigates and DETERMINERS.intersection(words):
            return _earlier(pieces[:at])
    return None


def _earlier(pieces: list[str]) -> str | None:
    """What a pronoun may stand for when the piece nearest it names a thing, but an earlier one names a secret
    ("secret": the strict reading of a secret is the safe one) or a safeguard ("ambiguous"); None otherwise."""
    if any(secret_named_in(p) is not None for p in pieces):
        return "secret"
    return "ambiguous" if any(SAFEGUARD.search(p) for p in pieces) else None
