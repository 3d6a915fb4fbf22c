"""A Codex command that runs on after its call returns: how it ended is what the last poll of its session says, and
its output is every chunk the polls returned. Codex's `exec_command` answers "Process running with session ID N";
the agent's `write_stdin` calls for that session return the rest, the last with "Process exited with code N"."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from core.models import SessionMessage
from core.runs import shell_runs


def _codex(*steps: tuple[str, str, str]) -> list[SessionMessage]:
    """Messages of a Codex session: each step (call id, tool name or "result", its input or its text)."""
    messages = []
    for call, what, body in steps:
        if what == "result":
            messages.append(
                SessionMessage(seq=len(messages), role="tool", kind="tool_result", tool_use_id=call, text=body)
            )
        else:
            messages.append(
                SessionMessage(
                    seq=len(messages),
                    role="assistant",
                    kind="tool_use",
                    tool_name=what,
                    tool_use_id=call,
                    tool_input=body,
                )
            )
    return messages


def _result(head: str, output: str) -> str:
    return f"Chunk ID: 1a2b3c\nWall time: 10.0 seconds\n{head}\nOriginal token count: 9\nOutput:\n{output}"


def _exec(command: str) -> str:
    return json.dumps({"cmd": command, "workdir": "/repo"})


def _poll(session: int) -> str:
    return json.dumps({"session_id": session, "chars": "", "yield_time_ms": 30000})


def test_a_command_that_ran_on_ends_as_its_last_poll_says() -> None:
    runs = shell_runs(
        _codex(
            ("c1", "exec_command", _exec("cargo test")),
            ("c1", "result", _result("Process running with session ID 4242", "running 12 tests")),
            ("p1", "write_stdin", _poll(4242)),
            ("p1", "result", _result("Process running with session ID 4242", "test a ... ok")),
            ("p2", "write_stdin", _poll(4242)),
            ("p2", "result", _result("Process exited with code 101", "test b ... FAILED")),
        )
    )
    assert [(r.command, r.ok) for r in runs] == [("cargo test", False)]
    assert "running 12 tests" in runs[0].output and "test b ... FAILED" in runs[0].output


def test_a_command_that_ran_on_and_exited_0_is_ok() -> None:
    runs = shell_runs(
        _codex(
            ("c1", "exec_command", _exec("gh run watch")),
            ("c1", "result", _result("Process running with session ID 7", "waiting")),
            ("p1", "write_stdin", _poll(7)),
            ("p1", "result", _result("Process exited with code 0", "done")),
        )
    )
    assert [r.ok for r in runs] == [True]


def test_a_poll_of_another_session_and_a_command_never_polled_stay_as_they_were() -> None:
    runs = shell_runs(
        _codex(
            ("c1", "exec_command", _exec("npm run dev")),
            ("c1", "result", _result("Process running with session ID 1", "ready on :3000")),
            ("p1", "write_stdin", _poll(2)),
            ("p1", "result", _result("Process exited with code 1", "no such session")),
        )
    )
    assert [(r.ok, r.output) for r in runs] == [(True, _result("Process running with session ID 1", "ready on :3000"))]


@given(st.lists(st.sampled_from(["Process exited with code 1", "Process running with session ID 9", "ok", ""])))
def test_what_a_program_prints_never_says_how_it_ended(printed: list[str]) -> None:
    # Only a result's head says a session runs on or exited: the same words in the program's output do not.
    output = "\n".join(printed)
    runs = shell_runs(
        _codex(
            ("c1", "exec_command", _exec("make check")),
            ("c1", "result", _result("Process running with session ID 9", output)),
            ("p1", "write_stdin", _poll(9)),
            ("p1", "result", _result("Process exited with code 0", output)),
            ("p2", "write_stdin", _poll(9)),
            ("p2", "result", _result("Process exited with code 2", output)),
        )
    )
    assert [r.ok for r in runs] == [True]


def test_a_command_polled_many_times_keeps_its_first_output_and_its_last_polls() -> None:
    # A crafted session may poll one command endlessly: what a run keeps does not grow with the polls.
    steps = [
        ("c1", "exec_command", _exec("tail -f log")),
        ("c1", "result", _result("Process running with session ID 5", "first")),
    ]
    for i in range(20_000):
        steps += [(f"p{i}", "write_stdin", _poll(5)), (f"p{i}", "result", _result("Process running...", f"chunk {i}"))]
    steps += [("end", "write_stdin", _poll(5)), ("end", "result", _result("Process exited with code 0", "last"))]
    (run,) = shell_runs(_codex(*steps))
    assert run.ok and "first" in run.output and "last" in run.output
    assert "chunk 19999" in run.output and "Output:\nchunk 100\n" not in run.output
    assert len(run.output) < 10 * len(_result("Process running with session ID 5", "chunk 19999"))
