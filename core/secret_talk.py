"""What a model's text may do to a secret (`core.safeguard_talk` reads it for every clause that names one): an
imperative whose object is a secret keeps it only by an act that keeps it (rotate, read, use, or put it where secrets
are kept), with no one between the act and the secret, and only where every place it is taken keeps secrets; a fact
may not say a secret shows ("must be tracked in git", "the changelog should include it"). Pure functions.
"""

from __future__ import annotations

import re2

from core.safeguard_words import (
    BE,
    CHECK_ACT,
    DETERMINERS,
    EXPOSED,
    FACT,
    HANDS_OVER,
    KEEP_ONLY_WITH,
    MODALS,
    NAMES_OPEN,
    NEED,
    NEEDS_A_PLACE,
    NEGATION,
    NO_PLACE,
    NOT_AN_OBJECT,
    NOWHERE_KEPT,
    OF_A_SECRET,
    PLACE,
    QUALIFIED,
    READS,
    REPORTS,
    SAFEGUARD,
    SECRET_CARE,
    SECRET_KEEP,
    SECRET_NAMED,
    SECRET_ONLY_WITH,
    SECRET_PLACING,
    TAKES_IN,
    VERBS,
    WHERE,
    WORD,
    is_a,
    lemmas,
    words_in,
)
from core.secret_sends import keeps_secrets

__all__ = ["only_secrets", "said_of_a_secret", "secret_act", "secret_named_in"]


def only_secrets(clause: str) -> bool:
    """True when no safeguard but a secret (or nothing) is named in `clause`: "check" said as an act ("check it into
    the repo", "echo it to check it is set") names no check."""
    return SAFEGUARD.search(SECRET_NAMED.sub("x", CHECK_ACT.sub("", clause))) is None


def secret_named_in(text: str) -> re2._Match | None:
    """The first secret `text` names, passing over a secret's name that qualifies something else ("a password reset
    link", "the token's expiry"), unless a secret's name follows ("password reset tokens")."""
    for secret in SECRET_NAMED.finditer(text):
        after = text[secret.end() :].lstrip()
        if (qualified := QUALIFIED.match(after)) is None:
            return secret
        rest = after[qualified.end() :].lstrip()
        if SECRET_NAMED.match(rest) or re2.match(r"(?:'s\s+)?(?:contents?|values?|text|plaintext)\b", rest):
            return secret  # "password reset tokens", "the password field's contents"
    return None


def secret_act(clause: str, words: list[str]) -> bool | None:
    """Whether `clause`, an imperative whose object is a secret, keeps it (`SECRET_KEEP`, or `SECRET_PLACING` into
    places that keep secrets); None when it opens with no act on one (a fact said of the secret, a name, "write tests
    for the token refresh")."""
    first = words[0]
    secret = secret_named_in(clause)
    if secret is None or first in NAMES_OPEN or first in BE or first[0].isdigit() or SECRET_NAMED.match(clause):
        return None  # "add a password reset link", "record the token's expiry date": no secret is acted on
    between = words_in(clause[: secret.start()])[1:]
    following = words_in(clause[secret.end() :])[:1]
    known = VERBS | SECRET_KEEP | SECRET_PLACING
    if not between and not is_a(first, known) and following and (following[0] in BE or following[0] in FACT):
        return None  # "kubernetes secrets are managed by ...": the secret is the subject, the first word its kind
    if NOT_AN_OBJECT.intersection(between) or OF_A_SECRET.intersection(between[-3:]):
        return None  # "write tests for the token refresh", "log a hash of it": the secret is no object of the verb
    if any(w in BE or (w in FACT and w != "live") or w in NEED for w in between):  # "the live key": no verb
        return None  # the secret is no object of the first word, or a fact is said of it ("1password holds ...")
    hands = is_a(first, HANDS_OVER | SECRET_PLACING)
    if NOWHERE_KEPT.search(clause) or HANDS_OVER.intersection(between) or (hands and _recipient(between, clause)):
        return False  # "put it somewhere everyone can grab it", "use the README to share it", "send the intern a copy"
    if "with" in between and is_a(first, SECRET_PLACING | NEEDS_A_PLACE):  # "update the README with the password"
        return keeps_secrets(" ".join(between[: between.index("with")]))
    placing = is_a(first, SECRET_PLACING | NEEDS_A_PLACE)
    if not is_a(first, SECRET_CARE | REPORTS) and not _places_keep(
        clause[len(first) :], placing=placing, reads=is_a(first, READS)
    ):
        return False  # "check it into the repo", "use it in the public notebook", "pass it to the contractor"
    if is_a(first, NEEDS_A_PLACE) and PLACE.search(clause) is None:
        return False  # "add the .env file too, then push"
    if is_a(first, SECRET_PLACING):
        return True
    if not is_a(first, SECRET_KEEP):
        return False  # "share it with the contractors", "print it at startup", "hand it over"
    only_with = SECRET_ONLY_WITH | KEEP_ONLY_WITH
    rule = next((only_with[w] for w in lemmas(first) if w in only_with), None)
    return rule is None or rule.search(clause) is not None


def _recipient(between: list[str], clause: str) -> bool:
    """True when someone stands between a verb that hands a secret over and the secret ("send the new contractor the
    password", "send the intern a copy"): a name with its determiner before the secret's own, or any before a secret
    named by a pronoun."""
    determiners = [i for i, w in enumerate(between) if w in DETERMINERS]
    named = secret_named_in(clause)
    secret = clause[named.start() :] if named is not None else ""
    if secret.startswith("secret ") or secret == "secret":
        if not between or between[-1] not in DETERMINERS:
            return bool(determiners)  # a pronoun read as "secret" has no determiner of its own
    return len(determiners) >= 2 and determiners[-1] - determiners[0] >= 2


def said_of_a_secret(clause: str) -> bool | None:
    """Whether a fact said of a secret keeps it: False where it says the secret shows ("the .env file must be tracked
    in git", "it goes out in the weekly newsletter", "is available on the public status page"); None when `clause`
    says nothing of one, or nothing of where it is."""
    secret = secret_named_in(clause)
    if secret is None:
        return None
    before = words_in(clause[: secret.start()])
    taker = next((i for i, w in enumerate(before) if i and w in TAKES_IN and before[i - 1] in MODALS), None)
    if taker is not None:  # "the README should include the staging password": the subject is where it goes
        subject = " ".join(w for w in before[:taker] if w not in MODALS and w not in BE)
        return keeps_secrets(subject)
    if NOWHERE_KEPT.search(clause):
        return False
    verb = next(
        (
            m
            for m in WORD.finditer(clause, secret.end())
            if m.group() in BE or m.group() in WHERE or m.group() in MODALS
        ),
        None,
    )
    if verb is None:
        return None
    rest = words_in(clause[verb.end() :])
    if NEGATION.intersection(rest) or any(w.endswith("n't") for w in rest):
        return None
    state = [w for w in rest if w not in ("be", "been", "always", "also", "only", "still", "to", "get", "got")]
    if state[:1] and state[0] in EXPOSED:
        return False
    return None if _places_keep(clause[verb.end() :], placing=False) else False


def _places_keep(said: str, placing: bool = True, reads: bool = False) -> bool:
    """True when every place `said` names a secret goes (in, into, to, through, over, by, as, with ...) keeps secrets.
    After a verb that places nothing ("use", "call"), "to" names a place only before a determiner or a person ("to
    the contractor", not "to call the API"), and "with" none ("generate it with openssl"); after one that reads it
    (`reads`), only "into", "onto" and "to" do."""
    for place in PLACE.finditer(said):
        preposition = place.group(1) or place.group(2)
        after = said[place.end(1) if place.group(1) else place.start(2) + 2 :].lstrip()
        if NO_PLACE.match(after) or (preposition in ("with", "as") and not placing):
            continue
        if reads and preposition not in ("into", "onto", "to"):
            continue
        if preposition == "by":
            return False  # "by text message", "by email": a channel, never a place that keeps a secret
        if preposition == "to" and is_a(after.split()[0] if after.split() else "", VERBS | SECRET_KEEP):
            continue  # "to call the API": what for, not where
        if (
            preposition == "to"
            and not placing
            and re2.match(r"(?:the|a|an|our|your|their|them|him|her|whoever|any)\b", after) is None
        ):
            continue
        if not keeps_secrets(after):
            return False
    return True
