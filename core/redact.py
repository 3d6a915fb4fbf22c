"""Redaction: nothing that looks like a credential, and no personal data, leaves the machine.

Secrets (`redact`) are replaced by a `[REDACTED:kind]` marker. Personal data (`Redactor`) is normalised:
a home directory becomes `~` (this machine's, and any `/Users/NAME`, `/home/NAME`, `C:\\Users\\NAME` in a
transcript written elsewhere), the user name inside Claude Code's encoded project folders
(`-Users-NAME-...`) becomes `USER`, e-mail addresses and the configured extra patterns (names, hosts) are
masked. Both apply before text reaches a model, a playbook entry, an export or a report.

Secrets are found by `core.secret_finder` and replaced by `core.secret_redaction` (whose names this module
re-exports: callers import one module); the personal data, the `Redactor` that cleans both out of a text, a model's
answer and a playbook are here.

Every pattern runs on RE2 (`core.patterns`), in time linear in the text. What RE2 cannot state (a value that only
names a secret, `$TOKEN` or `None`; the characters beside a token) is checked on each match in Python, a bounded
look at the match and its neighbours; a match that fails the check is passed over, and the search goes on after it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.errors import ConfigError
from core.jsonx import locate_json
from core.layered import unseen_texts
from core.models import Playbook
from core.operations import live_texts
from core.patterns import SPACE, Literals, Match, Pattern, escape
from core.secret_finder import MIXED_PAIR, MIXED_RUN, RULES, Marked, rule_shapes, secret_shapes, secret_spans
from core.secret_redaction import (
    BOUNDARY_CHARS,
    _applied,
    boundary_spans,
    redact,
    redact_boundary,
    redact_conversation,
    redact_parts,
)
from core.secret_rule import Rule, word_char

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
