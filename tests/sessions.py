"""Sessions built call by call for the miner's tests: the user's prompts, and tools' calls with their outcome, as
the readers store them (`SessionMessage`); and what the miner keeps of one on its own evidence."""

from __future__ import annotations

import json

from core.lessons import HABITS
from core.miner import History, mine, observe
from core.models import SessionMessage


class Session:
    """A session built call by call: shell commands with their outcome, other tools, and the user's prompts."""

    def __init__(self) -> None:
        self.messages: list[SessionMessage] = []

    def _add(self, **fields: object) -> None:
        self.messages.append(SessionMessage(seq=len(self.messages), **fields))  # type: ignore[arg-type]

    def prompt(self, text: str) -> Session:
        self._add(role="user", kind="text", is_prompt=True, text=text)
        return self

    def tool(self, name: str, tool_input: dict[str, object], output: str, *, error: bool = False) -> Session:
        call = f"c{len(self.messages)}"
        self._add(
            role="assistant", kind="tool_use", tool_name=name, tool_use_id=call, tool_input=json.dumps(tool_input)
        )
        self._add(role="tool", kind="tool_result", tool_use_id=call, is_error=error, text=output)
        return self

    def run(self, command: str, output: str = "ok", *, error: bool = False) -> Session:
        return self.tool("Bash", {"command": command}, output, error=error)


def lessons(session: Session, cwd: str | None = None) -> list[str]:
    """The texts of what `mine` keeps of one session, on its own evidence."""
    seen = observe(session.messages, cwd)
    return [f.text for f in mine(seen, History.of([("s", seen)]))]


def habit_text(name: str) -> str:
    """The text `mine` writes for a habit (`core.lessons.HABITS`) with no project named."""
    return HABITS[name][0].upper() + HABITS[name][1:] + "."
