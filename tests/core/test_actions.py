"""What the agent did, as triggers read it: shell calls as simple commands with their folder, and edited files."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from itertools import count
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.actions import actions
from core.models import SessionMessage
from core.store.db import connect
from core.store.ingest import ingest
from tests.helpers import claude_session
from tests.profiles import examples


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


_CALLS = st.sampled_from(
    [
        ("Bash", {"command": "cd sub"}),
        ("Bash", {"command": "cd /w/other && npm test 2>&1 | tail -3"}),
        ("Bash", {"command": "git status"}),
        ("exec_command", {"cmd": "pnpm install", "workdir": "/w/web"}),
        ("Edit", {"file_path": "/w/app/a.py", "old_string": "a", "new_string": "b"}),
        ("Write", {"file_path": "/w/app/b.py", "content": "print(1)\n" * 50}),
        ("Read", {"file_path": "/w/app/README.md"}),
        ("Grep", {"pattern": "cd sub"}),
        ("TodoWrite", {"todos": [{"content": "run npm test", "status": "pending"}]}),
    ]
)


@pytest.mark.slow  # an ingest an example
def test_the_actions_ingest_stores_are_those_every_call_of_the_file_gives(tmp_path: Path) -> None:
    # Ingest reads only the calls `actions` reads (shell and edit tools): whatever other calls stand between them, what
    # it stores is what `actions` makes of all of the file's calls.
    con = connect(tmp_path / "store.duckdb")
    files = count()

    @settings(max_examples=examples(25), deadline=None)
    @given(st.lists(_CALLS, min_size=1, max_size=8))
    def check(calls: list[tuple[str, dict[str, object]]]) -> None:
        n = next(files)
        turns: list[tuple[str, object]] = [("user", "go")]
        for i, (tool, values) in enumerate(calls):
            block = {"type": "tool_use", "id": f"t{n}-{i}", "name": tool, "input": values}
            turns += [("assistant", [block]), ("user", [{"type": "tool_result", "tool_use_id": f"t{n}-{i}"}])]
        path = tmp_path / f"s{n}.jsonl"
        claude_session(path, f"session-{n}", datetime(2026, 1, 1, tzinfo=UTC), turns)
        ingest(con, [path])
        every_call = [call(i * 2 + 2, tool, **values) for i, (tool, values) in enumerate(calls)]
        stored = con.execute(
            "SELECT seq, kind, text, folder, piped_into FROM actions WHERE source_path = ? ORDER BY seq, rowid",
            [str(path)],
        ).fetchall()
        assert stored == [(a.seq, a.kind, a.text, a.folder, a.piped_into) for a in actions(every_call)]

    check()
    con.close()
