"""Where a text holds secrets: the rules one set pass chooses, and random tokens.

The rules are the plain ones (`core.secret_rules`) and base64 of a credential, checked by decoding. `secret_spans` is
what the redactor (`core.secret_redaction`, `core.redact`) replaces; `rule_shapes` and
`secret_shapes` are the same rules as ingest's SQL asks DuckDB for them, a necessary condition for a span.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from functools import cache

from core.patterns import SPACE, Match, Pattern
from core.random_token import Verdicts, token_spans
from core.secret_rule import Rule, Span
from core.secret_rule_set import RuleSet
from core.secret_rules import PLAIN_RULES

__all__ = [
    "MIXED_PAIR",
    "MIXED_RUN",
    "RULES",
    "ChosenRules",
    "Marked",
    "RuleChoice",
    "chosen_rules",
    "chosen_spans",
    "rule_shapes",
    "secret_shapes",
    "secret_spans",
]

Marked = tuple[int, int, str]  # (start, end, marker): the marker replaces the span ("" removes it)


# Base64 of printable ASCII, quad by quad (3 bytes from 0x20 to 0x7e each): the first three characters of a quad can
# only be these. And a quad holding a `:` (as byte 1, 2 or 3) only one of these: a run without one decodes to no
# `user:password`, and RE2 passes it over (a text dense with base64 costs no decoding).
_B64_QUAD = "[I-Za-f][C-HS-Xi-ny-z0-3][AEIMQUYcgkosw048BFJNRVZdhlptx159][A-Za-z0-9+/_-]"
_B64_COLON = (
    "(?:O[i-n][AEIMQUYcgkosw048BFJNRVZdhlptx159][A-Za-z0-9+/_-]|[I-Za-f][DTjz][op][A-Za-z0-9+/_-]"
    "|[I-Za-f][C-HS-Xi-ny-z0-3][AEIMQUYcgkosw048]6)"
)
_USER_PASS = Pattern(r"[A-Za-z0-9._@+\-]{1,64}:[^\s:/][^\s]{2,127}")


def _base64_credential(m: Match, span: Span) -> Span | None:
    """A base64 run that decodes to `user:password` or to text holding a secret (Basic auth, Docker's `auth`,
    `echo -n user:pw | base64`)."""
    if m.before() and (m.before().isalnum() or m.before() in "+/_-"):
        return None  # the run starts before the match: its quads are not these
    run = m.group() or ""
    if m.after() and (m.after().isalnum() or m.after() in "+/_-"):
        return None
    raw = run.rstrip("=")
    if len(raw) % 4 == 1:
        return None
    try:
        alphabet = b"-_" if ("-" in raw or "_" in raw) else None
        decoded = base64.b64decode(raw + "=" * (-len(raw) % 4), altchars=alphabet, validate=True).decode("ascii")
    except (binascii.Error, ValueError):
        return None
    if not decoded.isprintable():
        return None
    if _USER_PASS.fullmatch(decoded) or secret_spans(decoded, base64=False):
        return span
    return None


RULES: list[Rule] = [
    *PLAIN_RULES,
    # Base64 of printable text (each quad's first three characters say so), checked by decoding.
    Rule(
        "base64_credential",
        Pattern(
            rf"(?:(?:{_B64_QUAD})+{_B64_COLON}|{_B64_COLON}{_B64_QUAD})(?:{_B64_QUAD})*(?:[A-Za-z0-9+/_-]{{2,3}})?={{0,2}}"
        ),
        "[REDACTED:secret]",
        (),
        check=_base64_credential,
        # Only where a run starts (as the check wants it): live at a word's start, not at each of its letters.
        shape=rf"(?:^|[^A-Za-z0-9+/_-])(?:(?:{_B64_QUAD})+{_B64_COLON}|{_B64_COLON}{_B64_QUAD})",
    ),
]

_RULES_BY_NAME = {rule.name: rule for rule in RULES}


@cache
def rule_shapes() -> tuple[str, ...]:
    """Each rule's shape for DuckDB's RE2, in `RULES` order: where a rule's shape is not, the rule finds nothing.

    A rule's pattern is RE2 already, so its shape is the pattern itself (case-blind for an `ignore_case` rule:
    DuckDB sees the text as it is) unless the rule names a narrower one (`Rule.shape`); the rule's checks only
    ever drop a match.
    """
    shapes = []
    for rule in RULES:
        flags = rule.pattern.flags + ("i" if rule.ignore_case else "")
        own = f"(?{flags}:{rule.pattern.source})" if flags else rule.pattern.source
        # Python's whitespace excluded from a class becomes ASCII's: a wider class (a superset still), and a far
        # smaller program; all the shapes in one pattern must fit RE2's DFA, or it falls back to a slower engine.
        shapes.append((rule.shape or own).replace(f"[^{SPACE}", "[^\\t-\\r\\x1c- "))
    return tuple(shapes)


@cache
def secret_shapes() -> str:
    """The first half of a necessary condition for `secret_spans` to find anything, for SQL (ingest asks DuckDB
    which records meet it and hands only those to the redactor): any rule's shape (`rule_shapes`).

    Each rule's trigger alone is far wider: `key`, `pass` and `://` are in 6 of 10 characters of a coding
    transcript, a rule's whole shape in under 1 in 20.
    """
    return "|".join(rule_shapes())


# The second half, for SQL: a run of token characters holding an upper-case letter and a digit, in either order (as the
# regular expression finds it, the whole run), which the SQL keeps when it is 32 characters or more and holds a
# lower-case letter too (what `is_random_token` needs), or is 34 characters starting `AC` or `SK` (a Twilio SID, whose
# 32 hex digits may all be digits). Ids, hashes, UUIDs and paths in one case never do, and they are most of a
# transcript's long runs.
_TOKEN = r"[A-Za-z0-9+/_\-]"
MIXED_RUN = f"{_TOKEN}*[A-Z]{_TOKEN}*[0-9]{_TOKEN}*|{_TOKEN}*[0-9]{_TOKEN}*[A-Z]{_TOKEN}*"
# Where `MIXED_RUN` finds a run, this finds part of it: a cheaper test of whether there is one.
MIXED_PAIR = f"[A-Z]{_TOKEN}*[0-9]|[0-9]{_TOKEN}*[A-Z]"


# A random token's necessary conditions, for the rule set: a run of 32 token characters, and in it an upper-case letter
# and a digit (`is_random_token`) or a Twilio SID's hex (`core.random_token`; its digits may all be letters).
_RUNS = (f"{MIXED_PAIR}|(?:AC|SK)[0-9a-f]{{32}}",)
_RULE_SET = RuleSet(RULES, _RUNS)  # built here: the base64 rule's check calls `secret_spans`


# Which rules `secret_spans` runs: True, every rule whose triggers the text holds; False, none (the caller knows no
# rule can match: `secret_shapes()` does not); or the rules that may match, in `RULES` order (the caller knows the
# text holds their shapes, `rule_shapes()`, and no other rule's).
RuleChoice = bool | Sequence[Rule]


def secret_spans(
    text: str, *, rules: RuleChoice = True, base64: bool = True, verdicts: Verdicts | None = None
) -> list[tuple[int, int, str]]:
    """Where `text` holds secrets: sorted, non-overlapping (start, end, marker). `rules`: see `RuleChoice`; random
    tokens are always looked for. `base64`: False leaves out the base64 rule (it runs this on what it decodes).
    `verdicts`: runs of token characters already judged, shared by the calls on windows of one text (`token_spans`)."""
    return chosen_spans(text, chosen_rules(text, rules), base64, verdicts)


ChosenRules = tuple[list[tuple[Rule, str]], bool]  # `RuleSet.chosen`: the rules to run, and whether tokens may be there


def chosen_rules(text: str, rules: RuleChoice) -> ChosenRules:
    return ([], True) if rules is False else _RULE_SET.chosen(text, None if rules is True else rules)


def chosen_spans(text: str, choice: ChosenRules, base64: bool, verdicts: Verdicts | None) -> list[Marked]:
    """`secret_spans` once the rules are chosen (`chosen_rules`)."""
    found: list[tuple[int, int, str]] = []
    chosen, tokens = choice
    for rule, subject in chosen:
        if base64 or rule.triggers:
            found += rule.spans(subject)
    if tokens:
        found += token_spans(text, verdicts)
    if len(found) < 2:
        return found
    # Rules listed first win where spans overlap (a vendor's key inside a URL is that vendor's key).
    found.sort(key=lambda s: s[0])
    merged: list[tuple[int, int, str]] = []
    for start, end, marker in found:
        if merged and start < merged[-1][1]:
            last = merged[-1]
            merged[-1] = (last[0], max(last[1], end), last[2])
        else:
            merged.append((start, end, marker))
    return merged
