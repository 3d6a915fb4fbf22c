"""Redaction: nothing that looks like a credential, and no personal data, leaves the machine.

Secrets (`redact`) are replaced by a `[REDACTED:kind]` marker. Personal data (`Redactor`) is normalised:
a home directory becomes `~` (this machine's, and any `/Users/NAME`, `/home/NAME`, `C:\\Users\\NAME` in a
transcript written elsewhere), the user name inside Claude Code's encoded project folders
(`-Users-NAME-...`) becomes `USER`, e-mail addresses and the configured extra patterns (names, hosts) are
masked. Both apply before text reaches a model, a playbook entry, an export or a report.

Every pattern runs on RE2 (`core.patterns`), in time linear in the text. What RE2 cannot state (a value that only
names a secret, `$TOKEN` or `None`; the characters beside a token) is checked on each match in Python, a bounded
look at the match and its neighbours; a match that fails the check is passed over, and the search goes on after it.
"""

from __future__ import annotations

import base64
import binascii
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from core.errors import ConfigError
from core.jsonx import locate_json
from core.layered import unseen_texts
from core.models import Playbook
from core.operations import live_texts
from core.patterns import SPACE, Literals, Match, Pattern, escape
from core.random_token import Verdicts, judge_join, reads_past, token_spans
from core.secret_rule import Rule, Span, word_char
from core.secret_rule_set import RuleSet
from core.secret_rules import PLAIN_RULES

__all__ = [
    "BOUNDARY_CHARS",
    "MIXED_PAIR",
    "MIXED_RUN",
    "PERSONAL_PATTERNS",
    "RULES",
    "Marked",
    "Redactor",
    "Rule",
    "boundary_spans",
    "mask_playbook",
    "redact",
    "redact_answer",
    "redact_boundary",
    "redact_conversation",
    "redact_parts",
    "rule_shapes",
    "secret_shapes",
    "secret_spans",
]


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
    return _found(text, _chosen(text, rules), base64, verdicts)


_Chosen = tuple[list[tuple[Rule, str]], bool]  # `RuleSet.chosen`: the rules to run, and whether tokens may be there


def _chosen(text: str, rules: RuleChoice) -> _Chosen:
    return ([], True) if rules is False else _RULE_SET.chosen(text, None if rules is True else rules)


def _found(text: str, choice: _Chosen, base64: bool, verdicts: Verdicts | None) -> list[Marked]:
    """`secret_spans` once the rules are chosen (`_chosen`)."""
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


Marked = tuple[int, int, str]  # (start, end, marker): the marker replaces the span ("" removes it)
BOUNDARY_CHARS = 96  # how much of each side of a boundary `boundary_spans` reads (ingest's SQL reads the same)


def redact(text: str, *, rules: RuleChoice = True) -> tuple[str, int]:
    """`text` with every secret-looking span replaced, and how many were replaced (`rules`: see `secret_spans`)."""
    return _replaced(text, secret_spans(text, rules=rules))  # sorted and apart already: `_applied`'s merge is done


def _applied(text: str, spans: Sequence[Marked]) -> tuple[str, int]:
    """`text` with `spans` replaced (overlapping ones as one, the first one's marker, a removal first), and how many
    markers went in."""
    if len(spans) < 2:
        return _replaced(text, spans)
    merged: list[Marked] = []
    for start, end, marker in sorted(spans, key=lambda s: (s[0], s[2] != "")):
        if merged and start < merged[-1][1]:
            last = merged[-1]
            merged[-1] = (last[0], max(last[1], end), last[2])
        else:
            merged.append((start, end, marker))
    return _replaced(text, merged)


def _replaced(text: str, spans: Sequence[Marked]) -> tuple[str, int]:
    """`text` with `spans` (sorted, none overlapping) replaced, and how many markers went in."""
    if not spans:
        return text, 0
    if len(spans) == 1:  # the commonest case, without the lists
        start, end, marker = spans[0]
        return text[:start] + marker + text[end:], 1 if marker else 0
    out: list[str] = []
    at = 0
    for start, end, marker in spans:
        out.append(text[at:start])
        out.append(marker)
        at = end
    out.append(text[at:])
    return "".join(out), sum(1 for _, _, marker in spans if marker)


def boundary_spans(
    left: str,
    right: str,
    rules: RuleChoice = True,
    known: tuple[Sequence[Marked], Sequence[Marked]] | None = None,
    verdicts: Verdicts | None = None,
    ruled: tuple[bool, bool] | None = None,
) -> tuple[list[Marked], list[Marked]]:
    """The secrets that only show where `left` ends and `right` begins: a token cut in two (two content blocks, a
    paste split over two messages), or a line continued in the next ("the password is" / "hunter2x!").

    The last line of `left` and the first line of `right` (at most `BOUNDARY_CHARS` of each, beside the boundary) are
    joined as they are and with a space between; a secret found in a join that neither side holds alone is returned
    for both sides: its part in `left` with its marker, its part in `right` with the marker too, or with nothing ("")
    when the secret began in `left`. A longer secret cut in two is found in each half alone (a key's prefix, a random
    run), so the window costs a few hundred characters a boundary, however long the lines. `known`: what
    `secret_spans(left)` and `secret_spans(right)` found (with the same `rules`), when the caller has them: a side
    that is its line whole is not scanned again. `verdicts`: see `secret_spans`. `ruled`: whether any rule was run
    on each side of `known` (a side without one found random tokens alone).

    The spaced join is not scanned where it can find only what each side finds alone: where no rule's pattern
    matches it, its runs of token characters are each side's (the space ends a run), so its spans are each side's
    random tokens, which are each side's spans too where no rule ran on that side either.
    """
    cut = max(left.rfind("\n") + 1, len(left) - BOUNDARY_CHARS)
    stop = right.find("\n")
    tail, head = left[cut:], right[: min(len(right) if stop < 0 else stop, BOUNDARY_CHARS)]
    if not tail.strip() or not head.strip():
        return [], []
    n = len(tail)
    # Each side's own rules, chosen once: a side that is its block whole has them from the caller (`ruled`).
    sides: list[_Chosen | None] = [None, None]
    whole = (known is not None and cut == 0, known is not None and len(head) == len(right))

    def side_chosen(i: int) -> _Chosen:
        choice = sides[i]
        if choice is None:
            choice = sides[i] = _chosen((tail, head)[i], rules)
        return choice

    def side_ruled(i: int) -> bool:
        return ruled[i] if whole[i] and ruled is not None else bool(side_chosen(i)[0])

    if verdicts:  # a run cut in two, each half judged a random token on its side: the join is judged from them
        judge_join(tail, head, verdicts)
    found: list[Marked] = []
    for gap in (0, 1):  # tail + head, tail + " " + head; offsets back in tail + head
        window = tail + " " * gap + head
        choice = _chosen(window, rules)
        if gap and not choice[0] and (not choice[1] or not (reads_past(tail) or side_ruled(0) or side_ruled(1))):
            break  # the spaced join finds only what each side finds alone (see above)
        for start, end, marker in _found(window, choice, True, verdicts):
            a = start if start < n else max(start - gap, n)
            b = end if end <= n else max(end - gap, n)
            if b > a and "[REDACTED" not in window[start:end]:  # never a marker's parts
                found.append((a, b, marker))
    if not found:
        return [], []
    # A span across the boundary is in neither side alone: a side is scanned alone only when a span lies within it
    # (a secret found in a join mostly crosses it, and each scan is a pass of every rule the side triggers).
    alone: set[tuple[int, int]] = set()
    if any(b <= n for _, b, _ in found):
        own = known[0] if known is not None and whole[0] else _found(tail, side_chosen(0), True, verdicts)
        alone |= {(a, b) for a, b, _ in own}
    if any(a >= n for a, _, _ in found):
        own = known[1] if known is not None and whole[1] else _found(head, side_chosen(1), True, verdicts)
        alone |= {(a + n, b + n) for a, b, _ in own}
    in_left: list[Marked] = []
    in_right: list[Marked] = []
    for a, b, marker in found:
        if (a, b) in alone:
            continue
        if a < n:
            in_left.append((cut + a, cut + min(b, n), marker))
        if b > n:
            in_right.append((max(a, n) - n, b - n, "" if a < n else marker))
    return in_left, in_right


def redact_boundary(left: str, right: str, *, rules: RuleChoice = True) -> tuple[str, str, int]:
    """`left` and `right` without the secrets that only show where one ends and the next begins (see
    `boundary_spans`): (left, right, secrets replaced)."""
    in_left, in_right = boundary_spans(left, right, rules)
    new_left, n = _applied(left, in_left)
    new_right, k = _applied(right, in_right)
    return new_left, new_right, n + k


def redact_parts(
    parts: Sequence[str],
    *,
    rules: RuleChoice = True,
    extra: dict[int, list[Marked]] | None = None,
    verdicts: Verdicts | None = None,
) -> tuple[list[str], int]:
    """`redact` over the blocks of one message, catching a secret cut across two blocks (`rules`: see
    `secret_spans`, for every block and join).

    Every span is found in the texts as they are: each block's own, and each boundary's (`boundary_spans`); then
    each block is redacted once. `extra`: more spans, by block (those of message boundaries, `redact_conversation`).
    A run of token characters is judged once however many of the texts hold it (`verdicts`: see `secret_spans`; one
    for this call when not given).
    """
    verdicts = {} if verdicts is None else verdicts
    choices = [_chosen(part, rules) for part in parts]
    own = [_found(part, choice, True, verdicts) for part, choice in zip(parts, choices, strict=True)]
    ruled = [bool(chosen) for chosen, _ in choices]
    spans = [list(found) for found in own]
    for i in range(len(parts) - 1):
        in_left, in_right = boundary_spans(
            parts[i], parts[i + 1], rules, (own[i], own[i + 1]), verdicts, (ruled[i], ruled[i + 1])
        )
        spans[i] += in_left
        spans[i + 1] += in_right
    for i, more in (extra or {}).items():
        spans[i] += more
    out: list[str] = []
    total = 0
    for part, found in zip(parts, spans, strict=True):
        text, n = _applied(part, found)
        out.append(text)
        total += n
    return out, total


def redact_conversation(messages: Sequence[Sequence[str]]) -> tuple[list[list[str]], int]:
    """`redact_parts` over each message's text blocks, with the secrets that show only where one message's last block
    ends and the next message's first begins (`boundary_spans`): what ingest stores of a file's prompts (the user's
    text messages, in order, whatever came between them; a message without a text block is passed over)."""
    extra: list[dict[int, list[Marked]]] = [{} for _ in messages]
    verdicts: Verdicts = {}
    previous: int | None = None
    for i, blocks in enumerate(messages):
        if not blocks:
            continue
        if previous is not None:
            last = len(messages[previous]) - 1
            in_left, in_right = boundary_spans(messages[previous][last], blocks[0], verdicts=verdicts)
            extra[previous].setdefault(last, []).extend(in_left)
            extra[i].setdefault(0, []).extend(in_right)
        previous = i
    out: list[list[str]] = []
    total = 0
    for blocks, more in zip(messages, extra, strict=True):
        texts, n = redact_parts(blocks, extra=more, verdicts=verdicts)
        out.append(texts)
        total += n
    return out, total


_PATH_END = f"[^/\\\\{SPACE}\"'`:;,()\\[\\]{{}}<>]+"
_PATH_BEFORE = frozenset(".~-")


def _path_start(m: Match) -> bool:
    # Python's `(?<![\w.~-])`
    before = m.before()
    return not before or not (word_char(before) or before in _PATH_BEFORE)


def _home(m: Match) -> str | None:
    return "~" if _path_start(m) else None


def _root(m: Match) -> str | None:
    return "~/" if _path_start(m) else None


def _encoded_home(m: Match) -> str | None:
    # Claude Code's project folders: `-Users-NAME-...`; the dashes around it are looked at, not taken
    return f"{m.group(1)}-USER" if m.before() == "-" and m.after() == "-" else None


def _email(m: Match) -> str | None:
    return None if m.group(1) == "git" else "[REDACTED:email]"  # `git@github.com:...` is an SSH address


# (name, pattern, replacement) for personal data in text written on any machine: the replacement is a function of
# the match, None where a condition the pattern cannot state leaves it alone.
PERSONAL_PATTERNS: list[tuple[str, Pattern, Callable[[Match], str | None]]] = [
    ("home_path", Pattern(r"/(?:Users|home)/" + _PATH_END), _home),
    ("root_home", Pattern(r"/root/"), _root),
    ("windows_home", Pattern(r"\b[A-Za-z]:\\\\?(?:Users|Documents and Settings)\\\\?" + _PATH_END), lambda m: "~"),
    ("encoded_home", Pattern(r"(Users|home)-[A-Za-z0-9_.]+"), _encoded_home),
    (
        "email",
        Pattern(r"\b([A-Za-z0-9._%+-]+)@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"),
        _email,
    ),
]
# A pattern runs only where its literal is: one substring scan is far cheaper than a call into RE2.
_PERSONAL_LITERALS = {"home_path": ("/Users/", "/home/"), "root_home": ("/root/",), "windows_home": (":\\",)}
_PERSONAL_LITERALS |= {"encoded_home": ("Users-", "home-"), "email": ("@",)}


def _masked(pattern: Pattern, text: str, replace: Callable[[Match], str | None]) -> tuple[str, int]:
    pieces: list[str] = []
    at = n = 0
    for m in pattern.finditer(text):
        new = replace(m)
        if new is None:
            continue
        pieces.append(text[at : m.start()])
        pieces.append(new)
        at = m.end()
        n += 1
    if not n:
        return text, 0
    pieces.append(text[at:])
    return "".join(pieces), n


def _name_alone(m: Match) -> str | None:
    # a user name as a word: `(?<![\w.-])NAME(?![\w-])`
    before, after = m.before(), m.after()
    if (before and (word_char(before) or before in ".-")) or (after and (word_char(after) or after == "-")):
        return None
    return "[REDACTED:personal]"


def _compiled(source: str) -> Pattern:
    try:
        return Pattern(source, ignore_case=True, capture=False)
    except ValueError as exc:
        raise ConfigError(
            f"personal_patterns entry `{source}` is not a pattern RE2 can run ({exc}); rewrite it without"
            " lookarounds or back-references, or remove it."
        ) from None


@dataclass(frozen=True)
class Redactor:
    """Secrets and personal data out of text; built once per run from the settings.

    Raises:
        ConfigError: an `extra` pattern RE2 cannot compile, in one line naming it.
    """

    home: str | None = None  # this machine's home directory, masked as `~` wherever it appears
    extra: Sequence[str] = ()  # configured patterns (regular expressions, RE2's syntax): names, hosts, addresses
    names: Sequence[str] = ()  # user names, masked wherever they stand as words
    _extra: tuple[Pattern, ...] = field(init=False, repr=False, compare=False)
    _names: Pattern | None = field(init=False, repr=False, compare=False)
    _present: Literals = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_extra", tuple(_compiled(p) for p in self.extra))
        # One pass for which personal patterns' literals are there (mostly none), the home folder last.
        groups = [*(_PERSONAL_LITERALS[name] for name, _, _ in PERSONAL_PATTERNS), [self.home or ""]]
        object.__setattr__(self, "_present", Literals(groups))
        words = "|".join(escape(n) for n in sorted(set(self.names), key=len, reverse=True) if n)
        object.__setattr__(self, "_names", Pattern(f"(?:{words})", ignore_case=True) if words else None)

    def personal(self, text: str) -> tuple[str, int]:
        """`text` with personal data normalised, and how many spans were."""
        total = 0
        present = self._present.present(text)
        if self.home and len(self.home) > 1 and len(PERSONAL_PATTERNS) in present:
            total += text.count(self.home)
            text = text.replace(self.home, "~")
        # (a replacement writes `~`, `~/`, `Users-USER` or a marker: no other family's literal)
        for i, (_, pattern, replacement) in enumerate(PERSONAL_PATTERNS):
            if i in present:
                text, n = _masked(pattern, text, replacement)
                total += n
        if self._names is not None:
            text, n = _masked(self._names, text, _name_alone)
            total += n
        for pattern in self._extra:
            text, n = pattern.subn("[REDACTED:personal]", text)
            total += n
        return text, total

    def clean(self, text: str, more: Sequence[Marked] = ()) -> tuple[str, int, int]:
        """`text` without secrets and personal data: (text, secrets replaced, personal spans masked). `more`: secrets
        found where `text` meets its neighbour (`boundary_spans`)."""
        text, secrets = _applied(text, [*secret_spans(text), *more]) if more else redact(text)
        text, personal = self.personal(text)
        return text, secrets, personal

    def text(self, text: str) -> str:
        """`clean` for callers that need only the text."""
        return self.clean(text)[0]


def redact_answer(text: str, redactor: Redactor) -> str:
    """A model's answer without secrets or personal data, its JSON still JSON: the object the parser would take
    (`core.jsonx.locate_json`) is cleaned value by value and written again, the prose around it as text.

    A marker put straight into the raw text could swallow an escaped quote (`Bearer $TOKEN\\"` in a JSON
    string) and leave an answer that no longer parses, for this run and every rerun that reuses it.
    """
    found = locate_json(text)
    if found is None:
        return redactor.text(text)
    value, start, end = found

    def walk(node: Any) -> Any:
        if isinstance(node, str):
            return redactor.text(node)
        if isinstance(node, dict):
            return {redactor.text(k): walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    cleaned = walk(value)
    middle = text[start:end] if cleaned == value else json.dumps(cleaned, ensure_ascii=False)
    return redactor.text(text[:start]) + middle + redactor.text(text[end:])


# Texts each redactor passed unchanged in this process (by its settings: the code is this process's), so an export
# after a run, or the next run of a long-lived process, scans only what changed. Bounded: past it, forgotten.
_PASSED: dict[tuple[str | None, tuple[str, ...], tuple[str, ...]], set[str]] = {}
_PASSED_MOST = 200_000
_PASSED_LOCK = threading.Lock()
# The callers' `clean` sets and what `unseen_texts` keeps for each (held, so an id stays theirs), the last few.
_COVERED: list[tuple[set[str], list[Mapping[str, int]]]] = []


def _passed(redactor: Redactor) -> set[str]:
    key = (redactor.home, tuple(redactor.extra), tuple(redactor.names))
    with _PASSED_LOCK:
        held = _PASSED.get(key)
        if held is None or len(held) > _PASSED_MOST:
            held = _PASSED[key] = set()
        return held


def _covered(clean: set[str]) -> list[Mapping[str, int]]:
    with _PASSED_LOCK:
        for held, covered in _COVERED:
            if held is clean:
                return covered
        _COVERED[:] = [*_COVERED[-3:], (clean, [])]
        return _COVERED[-1][1]


def mask_playbook(playbook: Playbook, redactor: Redactor, clean: set[str] | None = None) -> Playbook:
    """`playbook` with every entry text cleaned; the very same object when nothing needed it.

    `clean`: texts this redactor already passed unchanged, which the caller keeps between calls (a run's
    sessions) so that only new texts are scanned; the texts found clean here are added to it. Either way a text
    this redactor passed before in this process is not scanned again (the same text, the same settings: the same
    answer).
    """
    passed = _passed(redactor)
    if clean is not None:  # a session changes a few texts: only those are scanned, the rest passed before
        new = set(unseen_texts(live_texts(playbook), clean, _covered(clean)))
        clean.update(new & passed)
        found = {t for t in new - clean if redactor.text(t) == t}
        clean.update(found)
        passed.update(found)
        if new <= clean:
            return playbook
    changed = False
    sections = {}
    for name, items in playbook.sections.items():
        cleaned = []
        for entry in items:
            if entry.text in passed or (clean is not None and entry.text in clean):
                cleaned.append(entry)
                continue
            text = redactor.text(entry.text)
            if text == entry.text:
                passed.add(text)
                if clean is not None:
                    clean.add(text)
            changed = changed or text != entry.text
            cleaned.append(entry if text == entry.text else entry.model_copy(update={"text": text}))
        sections[name] = cleaned
    return playbook.model_copy(update={"sections": sections}) if changed else playbook
