"""Which reader a file needs and which session it belongs to, from the records it holds.

A file is read record by record until one decides it: a Claude Code `user` / `assistant` record (its
`sessionId` names the session, `isSidechain` marks a subagent file), a Codex `session_meta` or response
record, or a `{role, content}` message. Records of any other type (`permission-mode`,
`file-history-snapshot`, `progress`, `custom-title`, types not invented yet) never decide and never make a
file unrecognised; a file that holds no conversation at all is reported with the record types it did hold.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from core.transcripts.memory import is_memory, memory_session

__all__ = ["FORMATS", "Detected", "Format", "detect"]

Format = Literal["claude-code", "codex", "messages", "memory"]
FORMATS: tuple[Format, ...] = ("claude-code", "codex", "messages", "memory")

_CODEX_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
# Claude Code's non-conversation records: a file holding only these is a Claude Code file without a
# conversation (an abandoned session's metadata, or a titles-only file).
_CLAUDE_META_TYPES = {
    "summary",
    "progress",
    "file-history-snapshot",
    "queue-operation",
    "system",
    "permission-mode",
    "custom-title",
    "ai-title",
    "agent-name",
    "last-prompt",
    "cost-state",
    "mode",
    "worktree-state",
    "pr-link",
}
_CODEX_OLD_ITEMS = {"message", "function_call", "function_call_output", "reasoning", "local_shell_call"}
# A whole-file JSON document (a message log as one array or {"messages": [...]}) is parsed at once only up to
# this size; larger files are read line by line.
_WHOLE_FILE_LIMIT = 64 * 1024 * 1024
# How many records may pass without a decision before the file is judged by what it held so far.
_MAX_UNDECIDED = 50_000


@dataclass
class Detected:
    """What a file is: its format and session, or why it holds no conversation."""

    format: Format | None
    session_id: str | None = None
    is_main: bool = True  # False for a Claude Code subagent (sidechain) file
    agent_id: str | None = None
    reason: str | None = None  # set when format is None, or when the file holds no conversation
    seen: Counter[str] = field(default_factory=Counter)  # record types met before the decision


def _loads(line: bytes) -> Any:
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None  # malformed, not UTF-8, or nested beyond reason: a bad line, never a verdict


def _whole_document(path: Path, size: int) -> Any:
    if size > _WHOLE_FILE_LIMIT:
        return None
    with path.open("rb") as fh:
        first = fh.readline()
        while first and not first.strip():
            first = fh.readline()
        if not first.lstrip().startswith((b"[", b"{")):
            return None
        # A JSONL file's first line is a whole value with more lines after it: not one document, and
        # parsing the file as one would decode all of it only to fail at the second line.
        head = _loads(first)
        if head is None:
            return _loads(first + fh.read())
        while chunk := fh.read(64 * 1024):
            if chunk.strip():
                return None
    return head


def _codex_session(record: dict[str, Any], path: Path) -> str:
    payload = record.get("payload")
    meta = payload if isinstance(payload, dict) else record
    value = meta.get("id")
    return value if isinstance(value, str) and value else path.stem


def _message_log_id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def detect(path: Path) -> Detected:
    """Read `path` until its records say what it is (see the module docstring).

    Never raises for content: malformed lines are skipped, and a file whose records decide nothing is
    returned with `format=None` and a `reason` naming what it held.
    """
    if is_memory(path):  # an agent's memory file: its place says what it is (Markdown, no records)
        return Detected("memory", memory_session(path))
    size = path.stat().st_size
    whole = _whole_document(path, size)
    if isinstance(whole, list) and all(isinstance(r, dict) and "role" in r for r in whole[:50]):
        return Detected("messages", _message_log_id(path))
    if isinstance(whole, dict) and isinstance(whole.get("messages"), list):
        return Detected("messages", _message_log_id(path))
    seen: Counter[str] = Counter()
    claude_session: str | None = None
    codex_session: str | None = None
    with path.open("rb") as fh:
        for number, line in enumerate(fh):
            if number > _MAX_UNDECIDED:
                break
            if not line.strip():
                continue
            record = _loads(line)
            if not isinstance(record, dict):
                seen["(not a JSON object)"] += 1
                continue
            kind = record.get("type")
            label = kind if isinstance(kind, str) else "(no type)"
            session = record.get("sessionId")
            if kind in ("user", "assistant") and "message" in record and (session or "uuid" in record):
                return Detected(
                    "claude-code",
                    session if isinstance(session, str) and session else path.stem,
                    is_main=not record.get("isSidechain", False),
                    agent_id=record.get("agentId") if isinstance(record.get("agentId"), str) else None,
                    seen=seen,
                )
            if isinstance(session, str) and session:
                claude_session = claude_session or session
            elif kind in _CLAUDE_META_TYPES or "leafUuid" in record:
                claude_session = claude_session or ""
            if kind == "session_meta" or (kind in _CODEX_TYPES and isinstance(record.get("payload"), dict)):
                if kind == "session_meta":
                    codex_session = _codex_session(record, path)
                if kind in ("response_item", "event_msg", "compacted"):
                    return Detected("codex", codex_session or path.stem, seen=seen)
                seen[label] += 1
                continue
            if number == 0 and "id" in record and ("instructions" in record or "git" in record):
                codex_session = _codex_session(record, path)  # the older Codex layout's first line
                seen["(codex session header)"] += 1
                continue
            if codex_session and (kind in _CODEX_OLD_ITEMS or "record_type" in record):
                return Detected("codex", codex_session, seen=seen)
            if "role" in record and "content" in record:
                return Detected("messages", _message_log_id(path), seen=seen)
            seen[label] += 1
    if codex_session:
        return Detected("codex", codex_session, seen=seen)
    held = ", ".join(f"{t} x{n}" for t, n in seen.most_common(5)) or "nothing readable"
    if claude_session is not None:
        return Detected(None, claude_session or None, reason=f"no conversation records (holds {held})", seen=seen)
    return Detected(None, reason=f"not a known transcript format (holds {held})", seen=seen)
