"""What the agent did, as triggers read it: shell calls as simple commands with their folder, and edited files."""

from __future__ import annotations

import json

from core.actions import actions
from core.models import SessionMessage


def call(seq: int, tool: str, **values: object) -> SessionMessage:
    return SessionMessage(seq=seq, role="assistant", kind="tool_use", tool_name=tool, tool_input=json.dumps(values))


def test_a_session_s_calls_are_read_as_commands_and_edits() -> None:
    found = actions(
        [
            call(1, "Bash", command="cd assets && FOO=1 /usr/local/bin/npm install --save left-pad 2>&1 | tail -5"),
            call(2, "Edit", file_path="/src/app/lib/a.py", old_string="a", new_string="b"),
            call(3, "exec_command", cmd="pnpm test", workdir="/src/app/web"),
            call(4, "Bash", command="echo $(whoami)"),
            call(5, "Read", file_path="/src/app/README.md"),
            call(6, "Bash", command="cat <<'EOF'\nline one\nEOF"),
        ]
    )
    # Claude Code's shell keeps its folder between calls: the `cd` of call 1 holds for call 6; Codex's call names its
    # own working folder and moves nothing.
    assert [(a.seq, a.kind, a.text, a.folder, a.piped_into) for a in found] == [
        (1, "command", "npm install --save left-pad", "assets", "tail"),
        (1, "command", "tail -5", "assets", None),
        (2, "edit", "/src/app/lib/a.py", None, None),
        (3, "command", "pnpm test", "/src/app/web", None),
        (6, "command", "cat", "assets", None),
    ]
