"""A session replayed to the hooks: its prompts and shell calls in order, each as the hook input Claude Code sends
(the documented JSON), and what the hooks' answers come to (guard fires, the calls they would have caught, the
calls they fired on that then worked, the context they added). Pure: messages and answers in, values out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from core.models import SessionMessage
from core.runs import command_of

__all__ = ["EntryReplay", "Event", "SessionReplay", "hook_input", "session_events"]


@dataclass(frozen=True)
class Event:
    """One thing the session's user or agent did that a hook sees: a prompt, or a shell call and whether it
    failed."""

    kind: Literal["prompt", "bash"]
    text: str
    failed: bool = False


def session_events(messages: Sequence[SessionMessage]) -> list[Event]:
    """The main thread's prompts and Claude Code `Bash` calls, in order (a subagent's calls have hooks of their
    own session)."""
    failed = {m.tool_use_id: m.is_error for m in messages if m.kind == "tool_result" and m.tool_use_id}
    found: list[Event] = []
    for m in messages:
        if m.is_sidechain or m.is_meta:
            continue
        if m.is_prompt and m.kind == "text" and m.text and m.text.strip():
            found.append(Event("prompt", m.text))
        elif m.kind == "tool_use" and m.tool_name == "Bash":
            call = command_of(m.tool_input)
            if call is not None:
                found.append(Event("bash", call[0], bool(failed.get(m.tool_use_id or ""))))
    return found


def hook_input(event: Event | None, session_id: str, cwd: str, transcript: str = "") -> dict[str, Any]:
    """The JSON Claude Code sends the hook of `event` (None: the session's start), in the documented shapes."""
    common = {"session_id": session_id, "transcript_path": transcript, "cwd": cwd, "permission_mode": "default"}
    if event is None:
        return common | {"hook_event_name": "SessionStart", "source": "startup"}
    if event.kind == "prompt":
        return common | {"hook_event_name": "UserPromptSubmit", "prompt": event.text}
    return common | {
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": event.text, "description": ""},
        "tool_use_id": "",
    }


class EntryReplay(BaseModel):
    """One entry's guard over the replay: how often it fired, on calls that then failed (it would have caught
    them) and on calls that then worked (a false fire: it would have refused or contradicted a call that was
    fine)."""

    entry_id: str
    text: str
    fires: int = 0
    caught: int = 0
    false_fires: int = 0


class SessionReplay(BaseModel):
    """One session replayed: what the playbook learned from the sessions before it held, what the hooks gave,
    and what the whole playbook would have cost at its start."""

    session_id: str
    project: str | None
    entries_known: int  # live entries learned from earlier sessions
    prompts: int
    calls: int
    failed_calls: int
    fires: int
    caught: int
    false_fires: int
    start_tokens: int  # the SessionStart digest
    prompt_tokens: int  # what the prompt hook added
    guard_tokens: int  # what the guards added
    whole_tokens: int  # the whole playbook for the project at the start, as a SessionStart without digest gives it

    @property
    def added_tokens(self) -> int:
        """Everything the hooks added to the session."""
        return self.start_tokens + self.prompt_tokens + self.guard_tokens
