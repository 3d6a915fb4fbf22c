"""A session as prompt text within a token budget (seed 004_'s context contract).

Rules, in order of priority: every user message is kept; tool errors are kept whole; injected system
reminders and meta blocks are dropped; long tool output is cut to head and tail; secrets are redacted and
personal data masked
before anything else happens. When the text is still over budget, compaction steps run in order
(shorter tool output, then shorter assistant text, then tool output omitted, then long user messages cut
to head and tail) and each records what it dropped.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence

from pydantic import BaseModel, Field

from core.models import SessionMessage
from core.redact import Redactor

__all__ = ["RenderResult", "estimate_tokens", "render_session"]

_REMINDER = re.compile(r"<system-reminder>.*?(?:</system-reminder>|\Z)", re.DOTALL)
CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """Local token estimate (about 4 characters a token); no network call."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


class RenderResult(BaseModel):
    """The rendered transcript plus the accounting the context contract asks for."""

    text: str
    tokens_est: int
    budget_tokens: int
    raw_tokens_est: int
    compacted: bool = False
    dropped: dict[str, int] = Field(default_factory=dict)
    compaction_steps: list[str] = Field(default_factory=list)
    redactions: int = 0  # secrets replaced
    personal: int = 0  # personal-data spans masked (home paths, user names, e-mail, configured patterns)
    user_messages: int = 0
    tool_errors: int = 0


def _cut(text: str, limit: int) -> str:
    """Head and tail of `text` within about `limit` characters."""
    if len(text) <= limit:
        return text
    head = int(limit * 0.6)
    tail = max(limit - head, 0)
    omitted = len(text) - head - tail
    return f"{text[:head]}\n[... {omitted} characters omitted ...]\n{text[-tail:] if tail else ''}"


def _compact_input(raw: str | None, limit: int = 300) -> str:
    if not raw:
        return ""
    try:
        value = json.loads(raw)
        if isinstance(value, dict):
            raw = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in value.items())
    except ValueError:
        pass
    return _cut(raw, limit)


class _Line:
    __slots__ = ("kind", "label", "text")

    def __init__(self, kind: str, label: str, text: str) -> None:
        self.kind, self.label, self.text = kind, label, text

    def render(self) -> str:
        return f"{self.label}: {self.text}"


def render_session(
    messages: Sequence[SessionMessage],
    budget_tokens: int,
    *,
    tool_output_chars: int = 1500,
    redactor: Redactor | None = None,
) -> RenderResult:
    """Render a session's messages as `ROLE: text` lines within `budget_tokens` where possible."""
    dropped: dict[str, int] = {}
    redactions = personal = 0
    raw_chars = 0
    redactor = redactor or Redactor()

    def drop(key: str, n: int = 1) -> None:
        dropped[key] = dropped.get(key, 0) + n

    lines: list[_Line] = []
    for m in messages:
        text = m.text or ""
        raw_chars += len(text) + len(m.tool_input or "")
        if m.is_meta:
            drop("meta_blocks")
            continue
        if m.is_sidechain and not m.is_error:
            drop("subagent_blocks")
            continue
        if m.kind == "thinking":
            drop("thinking_blocks")
            continue
        if m.kind == "image":
            drop("images")
            continue
        stripped = _REMINDER.sub("", text)
        if stripped != text:
            drop("system_reminders")
            text = stripped.strip()
        text, n, k = redactor.clean(text)
        redactions, personal = redactions + n, personal + k
        if m.kind == "tool_use":
            tool_input, n, k = redactor.clean(_compact_input(m.tool_input))
            redactions, personal = redactions + n, personal + k
            lines.append(_Line("tool_use", f"TOOL CALL {m.tool_name or '?'}", tool_input))
        elif m.kind == "tool_result":
            if m.is_error:
                lines.append(_Line("tool_error", "TOOL ERROR", text))
            else:
                if len(text) > tool_output_chars:
                    drop("tool_output_chars", len(text) - tool_output_chars)
                lines.append(_Line("tool_output", "TOOL RESULT", _cut(text, tool_output_chars)))
        elif m.kind == "summary":
            lines.append(_Line("summary", "COMPACTION SUMMARY", _cut(text, 2000)))
        elif m.role == "user":
            if not text:
                continue
            lines.append(_Line("user", "USER", text))
        elif text:
            lines.append(_Line("assistant", "ASSISTANT", text))

    def total() -> int:
        return estimate_tokens("\n".join(line.render() for line in lines))

    steps: list[str] = []
    # Compaction, least valuable first; user messages and tool errors are never removed.
    for step, kinds, limit in (
        ("tool output cut to 300 characters", {"tool_output"}, 300),
        ("assistant text cut to 400 characters", {"assistant", "summary"}, 400),
        ("tool calls cut to 120 characters", {"tool_use"}, 120),
        ("tool output omitted", {"tool_output"}, 0),
        ("assistant text cut to 120 characters", {"assistant", "summary"}, 120),
        ("tool errors cut to 1,500 characters", {"tool_error"}, 1500),
        ("user messages cut to 1,500 characters", {"user"}, 1500),
        ("user messages cut to 300 characters", {"user"}, 300),
    ):
        if total() <= budget_tokens:
            break
        steps.append(step)
        for line in lines:
            if line.kind in kinds and len(line.text) > limit:
                drop(f"{line.kind}_chars", len(line.text) - limit)
                line.text = "[omitted]" if limit == 0 else _cut(line.text, limit)
    text = "\n".join(line.render() for line in lines)
    return RenderResult(
        text=text,
        tokens_est=estimate_tokens(text),
        budget_tokens=budget_tokens,
        raw_tokens_est=math.ceil(raw_chars / CHARS_PER_TOKEN),
        compacted=bool(steps),
        dropped=dropped,
        compaction_steps=steps,
        redactions=redactions,
        personal=personal,
        user_messages=sum(1 for line in lines if line.kind == "user"),
        tool_errors=sum(1 for line in lines if line.kind == "tool_error"),
    )
