"""A session as prompt text within a token budget: what is always left out, and what compaction drops, in order.

Rules that always apply (`filtered`, not compaction): injected system reminders, meta blocks, thinking,
images and sidechain chatter are left out; tool output is cut to head and tail; secrets are redacted and
personal data masked before anything else happens.

When the text is over budget, compaction runs in this order and stops as soon as it fits, recording what
each step dropped (`dropped`, non-empty exactly when `compacted`):

1. long outputs cut to head and tail (tool output 300 characters, assistant text 400, tool calls 120): the
   turn keeps its shape at a small cost, so this goes first;
2. whole middle turns dropped, oldest first: assistant text, tool calls and tool output outside the first
   8 and last 12 lines (tool errors and user messages stay);
3. tool output omitted, assistant text cut to 120 characters;
4. tool errors and user messages cut to 1,500 characters, then tool errors to 300;
5. tool errors in the middle dropped, oldest first (the first 2 and last 3 stay);
6. the oldest user messages beyond the first 2 and the last 3 dropped, oldest first;
7. user messages cut to 300 characters.

A session that still does not fit comes back with `fits=False`: the caller fails closed before any call.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

from core.models import SessionMessage
from core.patterns import Pattern
from core.redact import Redactor
from core.tokens import NEWLINE_UNITS, estimate_tokens, token_units

__all__ = ["RenderResult", "render_session"]

_REMINDER = Pattern(r"<system-reminder>.*?(?:</system-reminder>|$)", dotall=True)


class RenderResult(BaseModel):
    """The rendered transcript plus the accounting the context contract asks for."""

    text: str
    tokens_est: int
    budget_tokens: int
    raw_tokens_est: int
    compacted: bool = False  # compaction dropped something (then `dropped` is non-empty)
    fits: bool = True  # tokens_est <= budget_tokens; False: the caller must not send it
    dropped: dict[str, int] = Field(default_factory=dict)  # by compaction, to fit the budget
    filtered: dict[str, int] = Field(default_factory=dict)  # by the rules that always apply
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
    __slots__ = ("kind", "label", "text", "units")

    def __init__(self, kind: str, label: str, text: str) -> None:
        self.kind, self.label, self.text = kind, label, text
        self.units = token_units(self.render())

    def set_text(self, text: str) -> int:
        """Replace the text; the change in `units`."""
        before = self.units
        self.text = text
        self.units = token_units(self.render())
        return self.units - before

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
    filtered: dict[str, int] = {}
    redactions = personal = 0
    raw_units = 0
    redactor = redactor or Redactor()

    def drop(key: str, n: int = 1, into: dict[str, int] = filtered) -> None:
        into[key] = into.get(key, 0) + n

    lines: list[_Line] = []
    for m in messages:
        text = m.text or ""
        raw_units += token_units(text) + (token_units(m.tool_input) if m.tool_input else 0)
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
                    drop("tool_output_chars", len(text) - tool_output_chars)  # a rule: always, not compaction
                lines.append(_Line("tool_output", "TOOL RESULT", _cut(text, tool_output_chars)))
        elif m.kind == "summary":
            lines.append(_Line("summary", "COMPACTION SUMMARY", _cut(text, 2000)))
        elif m.role == "user":
            if not text:
                continue
            lines.append(_Line("user", "USER", text))
        elif text:
            lines.append(_Line("assistant", "ASSISTANT", text))

    steps = _compact(lines, budget_tokens, lambda key, n: drop(key, n, dropped))
    text = "\n".join(line.render() for line in lines)
    tokens = estimate_tokens(text)
    return RenderResult(
        text=text,
        tokens_est=tokens,
        budget_tokens=budget_tokens,
        raw_tokens_est=-(-raw_units // 100),
        compacted=bool(dropped),
        fits=tokens <= budget_tokens,
        dropped=dropped,
        filtered=filtered,
        compaction_steps=steps,
        redactions=redactions,
        personal=personal,
        user_messages=sum(1 for line in lines if line.kind == "user"),
        tool_errors=sum(1 for line in lines if line.kind == "tool_error"),
    )


_HEAD_LINES, _TAIL_LINES = 8, 12  # lines around the middle that step 2 never drops
_FIRST, _LAST = 2, 3  # user messages (and tool errors) that steps 5 and 6 never drop


def _compact(lines: list[_Line], budget_tokens: int, drop: Callable[[str, int], None]) -> list[str]:
    """Shorten `lines` in place, in the module's documented order, until they fit; the steps that changed
    something, in order."""
    # the joined text's estimate, in hundredths of a token: line by line, plus the newlines that join them
    size = sum(line.units for line in lines) + NEWLINE_UNITS * max(len(lines) - 1, 0)
    steps: list[str] = []

    def fits() -> bool:
        return -(-size // 100) <= budget_tokens

    def trim(step: str, kinds: set[str], limit: int) -> None:
        nonlocal size
        if fits():
            return
        changed = False
        for line in lines:
            if line.kind not in kinds or len(line.text) <= limit:
                continue
            shorter = "[omitted]" if limit == 0 else _cut(line.text, limit)
            if len(shorter) >= len(line.text):  # the head-and-tail marker would cost more than it saves
                continue
            drop(f"{line.kind}_chars", len(line.text) - len(shorter))
            size += line.set_text(shorter)
            changed = True
        if changed:
            steps.append(step)

    def remove(step: str, candidates: list[_Line], key: str) -> None:
        nonlocal size
        gone: set[int] = set()
        for line in candidates:  # oldest first
            if fits():
                break
            gone.add(id(line))
            size -= line.units + NEWLINE_UNITS
            drop(key, 1)
        if gone:
            lines[:] = [line for line in lines if id(line) not in gone]
            size = sum(line.units for line in lines) + NEWLINE_UNITS * max(len(lines) - 1, 0)
            steps.append(step)

    def middle(kinds: set[str], first: int, last: int) -> list[_Line]:
        chosen = [line for line in lines if line.kind in kinds]
        return chosen[first : len(chosen) - last] if len(chosen) > first + last else []

    trim("tool output cut to 300 characters", {"tool_output"}, 300)
    trim("assistant text cut to 400 characters", {"assistant", "summary"}, 400)
    trim("tool calls cut to 120 characters", {"tool_use"}, 120)
    turns = {"assistant", "summary", "tool_use", "tool_output"}
    remove(
        "middle turns dropped",
        [line for line in lines[_HEAD_LINES : max(len(lines) - _TAIL_LINES, _HEAD_LINES)] if line.kind in turns],
        "middle_turn_lines",
    )
    trim("tool output omitted", {"tool_output"}, 0)
    trim("assistant text cut to 120 characters", {"assistant", "summary"}, 120)
    trim("tool errors cut to 1,500 characters", {"tool_error"}, 1500)
    trim("user messages cut to 1,500 characters", {"user"}, 1500)
    trim("tool errors cut to 300 characters", {"tool_error"}, 300)
    remove("middle tool errors dropped", middle({"tool_error"}, _FIRST, _LAST), "tool_errors")
    remove("oldest user messages dropped", middle({"user"}, _FIRST, _LAST), "user_messages")
    trim("user messages cut to 300 characters", {"user"}, 300)
    return steps
