"""A transcript file redacted record by record, as `push` sends it to a team's bucket: secrets and personal data out
of every string value and object key (ids, timestamps and types kept), a secret cut across two records' message
texts found too, and the user names its home paths show masked everywhere in it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from core.patterns import Pattern
from core.redact import Marked, Redactor, boundary_spans

__all__ = ["distinct_keys", "keys_kept_apart", "redact_transcript"]


# A user name as home paths show it; "USER" (already masked) and shared homes are not names.
_HOME_NAMES = Pattern(r"(?:/(?:Users|home)/|-(?:Users|home)-)([A-Za-z0-9_.]+)")
_NOT_NAMES = {"user", "shared", "guest", "public"}

# Keys whose values identify records (ids, timestamps, types): never rewritten where the formats write them (the
# record, its message and content blocks, Codex's payload: `_FRAME_KEYS`), so a redacted transcript is the same
# sessions and messages as the original. Below any other key (a tool's `input`, Claude Code's `toolUseResult`) they are
# what an agent or a tool wrote, `{"id": "<token>"}` among them, and are cleaned like any value.
_IDENTITY_KEYS = frozenset(
    {
        "uuid", "parentUuid", "leafUuid", "sessionId", "session_id", "id", "tool_use_id", "call_id", "requestId",
        "timestamp", "type", "role", "model", "agentId", "version", "signature",
    }
)  # fmt: skip


# The keys from a record down to where its ids are: its message, the message's content blocks, Codex's payload.
_FRAME_KEYS = frozenset({"message", "content", "payload"})


# Where a record keeps its message's text (Claude Code's `text` blocks and `content`, Codex's `text` and `message`): a
# secret may run from one record's last such string into the next one's first.
_TEXT_KEYS = frozenset({"text", "content", "message"})


def _text_slots(record: Any) -> list[tuple[dict[str, Any], str]]:
    """The (object, key) of each message string in `record`, in the order they are written."""
    slots: list[tuple[dict[str, Any], str]] = []

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(value, str):
                    if key in _TEXT_KEYS:
                        slots.append((node, key))
                else:
                    visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(record)
    return slots


def distinct_keys(keys: Sequence[str | None], cleaned: Sequence[str]) -> list[str]:
    """One object's `keys` (in order) as `cleaned` (the same keys redacted), still distinct.

    Two keys may clean to the same text (two tokens as keys both become `[REDACTED:github_token]`, or a token and a
    key that already reads like its marker). Keeping one would drop the other's value without a word, so every key
    that cleaning changed and that meets a key already taken gets a suffix ` #2`, ` #3`, ...: the keys cleaning left
    alone are taken first and never renamed, so the record keeps its ordinary keys as written. A key given as None
    (not known) counts as changed.
    """
    taken = {c for k, c in zip(keys, cleaned, strict=True) if c == k}
    out: list[str] = []
    for key, new in zip(keys, cleaned, strict=True):
        if new != key:
            base, n = new, 1
            while new in taken:
                n += 1
                new = f"{base} #{n}"
            taken.add(new)
        out.append(new)
    return out


class _Pairs(list[tuple[str, Any]]):
    """A JSON object as read, its keys in order, a key given twice kept twice."""


def _pairs(text: str) -> Any:
    """`text` read as JSON with every object as its `_Pairs`; None when it is no JSON (or nests beyond reading)."""
    try:
        return json.loads(text, object_pairs_hook=_Pairs)
    except (ValueError, RecursionError):
        return None


def _has_twin_keys(node: Any) -> bool:
    if isinstance(node, _Pairs):
        keys = [k for k, _ in node]
        return len(set(keys)) < len(keys) or any(_has_twin_keys(v) for _, v in node)
    return isinstance(node, list) and any(_has_twin_keys(v) for v in node)


def keys_kept_apart(original: str, redacted: str) -> str:
    """`redacted` (the JSON text `original` with its secrets replaced as text, as ingest redacts a tool's input)
    with the keys of each object kept apart as `redact_transcript` keeps them (`distinct_keys`): two secrets used as
    keys of one object read as one key after redaction, and a reader keeps the last, losing the other's value
    without a word. Each key is matched with the original's at its place (objects of the same keys in the same
    order; where redaction changed an object's shape, every key counts as changed; a key the original gives twice
    stays as it was). `redacted` as it is when it is no JSON or no key needs renaming (nearly always); else written
    again, compact."""
    after = _pairs(redacted)
    if not _has_twin_keys(after):
        return redacted
    renamed = False

    def apart(before: Any, node: Any) -> str:
        nonlocal renamed
        if isinstance(node, _Pairs):
            aligned = isinstance(before, _Pairs) and len(before) == len(node)
            keys = distinct_keys([k for k, _ in before] if aligned else [None] * len(node), [k for k, _ in node])
            renamed = renamed or keys != [k for k, _ in node]
            values = [apart(before[i][1] if aligned else None, v) for i, (_, v) in enumerate(node)]
            return "{" + ",".join(f"{_dumps(k)}:{v}" for k, v in zip(keys, values, strict=True)) + "}"
        if isinstance(node, list):
            aligned = isinstance(before, list) and not isinstance(before, _Pairs) and len(before) == len(node)
            return "[" + ",".join(apart(before[i] if aligned else None, v) for i, v in enumerate(node)) + "]"
        return _dumps(node)

    written = apart(_pairs(original), after)
    return written if renamed else redacted


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def redact_transcript(text: str, redactor: Redactor) -> tuple[str, int, int, int]:
    """A JSONL transcript with secrets and personal data removed from every string value and object key of every
    record (ids, timestamps and types kept; keys that clean to the same text stay apart, `distinct_keys`), one line
    per line; a line that is not JSON is cleaned as text. A secret cut where one record's message text ends and the
    next one's begins is found too (`boundary_spans`): the records between two that carry text wait, so the file is
    still read once, record by record.

    User names are personal data even where no path shows them (`ls -l` output, prompts): the names seen in
    the file's home paths (`/Users/NAME`, `/home/NAME`, Claude Code's `-Users-NAME-` folders) and this
    machine's own are masked as words everywhere in it.

    A record nested deeper than the JSON reader (or this walk) goes is left out, and counted: no reader of ours
    would take it, and walking it must not end the push.

    Returns:
        (text, secrets replaced, personal spans masked, records left out).
    """
    names = {m for m in _HOME_NAMES.findall(text) if len(m) >= 3 and m.lower() not in _NOT_NAMES}
    if redactor.home:
        names.add(redactor.home.rstrip("/").rsplit("/", 1)[-1])
    names -= {"", "~", "root"}
    if names:
        redactor = replace(redactor, names=(*redactor.names, *sorted(names)))
    secrets = personal = 0
    more: dict[tuple[int, str], list[Marked]] = {}  # by (id of the object, key): spans across a boundary

    def clean_key(key: str) -> str:
        nonlocal secrets, personal
        if key in _IDENTITY_KEYS:
            return key
        cleaned, n, k = redactor.clean(key)
        secrets, personal = secrets + n, personal + k
        return cleaned

    def walk(value: Any, key: str | None = None, owner: Any = None, framed: bool = True) -> Any:
        """`value` cleaned; `framed`: it is where the formats write ids (`_FRAME_KEYS`), so an id there is kept."""
        nonlocal secrets, personal
        if isinstance(value, str):
            if framed and key in _IDENTITY_KEYS:
                return value
            cleaned, n, k = redactor.clean(value, more.pop((id(owner), key or ""), ()))
            secrets, personal = secrets + n, personal + k
            return cleaned
        if isinstance(value, dict):
            walked = (walk(v, k, value, framed and (key is None or key in _FRAME_KEYS)) for k, v in value.items())
            keys = list(value)
            return dict(zip(distinct_keys(keys, [clean_key(k) for k in keys]), walked, strict=True))
        if isinstance(value, list):
            return [walk(v, key, None, framed) for v in value]
        return value

    out: list[str] = []
    waiting: list[Any] = []  # records read since the last one with a message text, that one first
    last: tuple[dict[str, Any], str] | None = None

    dropped = 0

    def flush() -> None:
        nonlocal dropped
        for record in waiting:
            try:
                out.append(json.dumps(walk(record), ensure_ascii=False, separators=(",", ":")))
            except RecursionError:
                dropped += 1
        waiting.clear()

    for line in text.splitlines():
        try:
            record = json.loads(line)
        except RecursionError:  # nested beyond reason: no reader of ours takes it
            dropped += 1
            continue
        except ValueError:
            flush()
            last = None
            cleaned, n, k = redactor.clean(line)
            secrets, personal = secrets + n, personal + k
            out.append(cleaned)
            continue
        slots = _text_slots(record)
        if slots:
            if last is not None:
                (owner, key), (first_owner, first_key) = last, slots[0]
                in_left, in_right = boundary_spans(owner[key], first_owner[first_key])
                more.setdefault((id(owner), key), []).extend(in_left)
                more.setdefault((id(first_owner), first_key), []).extend(in_right)
            flush()
            last = slots[-1]
        waiting.append(record)
    flush()
    return "\n".join(out) + ("\n" if text.endswith("\n") else ""), secrets, personal, dropped
