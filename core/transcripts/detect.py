"""Which reader a file needs, and which session it belongs to, from its path and first bytes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Literal

__all__ = ["FORMATS", "Format", "detect_format", "session_id_for"]

Format = Literal["claude-code", "codex", "messages"]
FORMATS: tuple[Format, ...] = ("claude-code", "codex", "messages")

_CLAUDE_TYPES = {"user", "assistant", "summary", "progress", "file-history-snapshot", "queue-operation", "system"}
_CODEX_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}


def _first_object(head: bytes) -> dict[str, object] | list[object] | None:
    text = head.decode("utf-8", errors="replace").lstrip()
    if text.startswith("["):
        return []  # a JSON array: only message logs look like that
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue  # a bad or truncated first line: try the next one
        if isinstance(value, dict):
            return value
    return None


def detect_format(path: Path, head: bytes) -> Format | None:
    """Guess the format of a transcript from its path and first bytes; None when unrecognised."""
    if path.parent.name == "subagents" and path.name.startswith("agent-"):
        return "claude-code"
    first = _first_object(head)
    if isinstance(first, list):
        return "messages"
    if first is None:
        return _sniff(head)
    kind = first.get("type")
    if kind in _CODEX_TYPES or (path.name.startswith("rollout-") and "instructions" in first):
        return "codex"
    if kind in _CLAUDE_TYPES and (
        "sessionId" in first or "uuid" in first or "leafUuid" in first or "messageId" in first
    ):
        return "claude-code"
    if "role" in first and "content" in first:
        return "messages"
    if "messages" in first:
        return "messages"
    if path.name.startswith("rollout-"):
        return "codex"
    return None


def _sniff(head: bytes) -> Format | None:
    """Key-based guess for a first line too long to parse from the head (lines reach megabytes)."""
    text = head[:4096].decode("utf-8", errors="replace")
    if '"sessionId"' in text and re.search(r'"type"\s*:\s*"(user|assistant|summary|progress|system)"', text):
        return "claude-code"
    if re.search(r'"type"\s*:\s*"(session_meta|response_item|event_msg|turn_context)"', text):
        return "codex"
    if '"role"' in text and '"content"' in text:
        return "messages"
    return None


def session_id_for(path: Path, fmt: Format, head: bytes) -> str:
    """The session a file belongs to.

    Claude Code names files `<session>.jsonl` and puts subagents in `<session>/subagents/`; Codex
    records the id in `session_meta` (or the older first line); message logs use folder/stem.
    """
    if fmt == "claude-code":
        if path.parent.name == "subagents":
            return path.parent.parent.name
        return path.stem
    if fmt == "codex":
        first = _first_object(head)
        if isinstance(first, dict):
            payload = first.get("payload")
            meta = payload if isinstance(payload, dict) else first
            if isinstance(meta.get("id"), str) and (first.get("type") == "session_meta" or "payload" not in first):
                return str(meta["id"])
        return path.stem
    return f"{path.parent.name}/{path.stem}"
