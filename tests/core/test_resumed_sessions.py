"""A resumed Claude Code session, through the CLI: the records a resume writes again (new uuids, the same tool-use
ids, message ids and times) are stored and counted once, and records that merely look alike are not merged
(issue 46: 110 tool calls / 7 errors / 12 prompts were counted where there are 65 / 5 / 6).

The resumed file is a real session (claude-code-log's JSSoundRecorder session, in data/samples, see its MANIFEST.md)
with the first half of its conversation replayed after it, as Claude Code writes it (`tests.helpers.replayed`)."""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from flows.cli import app
from tests.helpers import SAMPLES, claude_expected, claude_session, replayed
from tests.profiles import examples

runner = CliRunner()

SESSION = "7acd37a8-2745-4b58-a8a9-46164b22ad9e"
REAL = SAMPLES / "claude-code" / "claude-code-log" / "-Users-dain-workspace-JSSoundRecorder" / f"{SESSION}.jsonl"
COUNTS = ("n_messages", "n_user_prompts", "n_tool_calls", "n_tool_errors", "n_noise_records")
# Counted by hand from the file's 211 lines. Prompts: lines 46 ("OK, so this was just so you know..."), 58, 63, 98
# and 168 (line 2 is the /init command, 3 its meta text, 55 "[Request interrupted by user for tool use]"). Failed
# tool results: lines 52, 53, 54, 76 (tool uses the user rejected), 162 (a shell already killed), 207 (a string to
# replace not found). Tool calls: 71 `tool_use` blocks, 30 of them in the first 105 lines, which hold 4 of the
# prompts and 4 of the errors: counting the replay too gave 101 / 10 / 9.
HAND_COUNT = {"n_tool_calls": 71, "n_tool_errors": 6, "n_user_prompts": 5}


def cli(*args: str) -> Any:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def session(db: Path, session_id: str = SESSION) -> dict[str, Any]:
    rows = {r["session_id"]: r for r in cli("sessions", "--db", str(db))}
    assert set(rows) == {session_id}
    return rows[session_id]


def resumed(folder: Path, upto: int, *, second_file: bool = False) -> Path:
    """The real session under `folder` with its first `upto` lines replayed after it (or, `second_file`, in a file
    of their own, as a session resumed into a second file)."""
    lines = REAL.read_bytes().splitlines(keepends=True)
    main = folder / "projects" / "-Users-dain-workspace-JSSoundRecorder" / REAL.name
    main.parent.mkdir(parents=True, exist_ok=True)
    replay = b"".join(replayed(lines, upto))
    main.write_bytes(b"".join(lines) + (b"" if second_file else replay))
    if second_file:
        (main.parent / "0e0e0e0e-resumed.jsonl").write_bytes(replay)
    return folder


def test_a_resumed_session_counts_as_its_hand_count(tmp_path: Path) -> None:
    folder = resumed(tmp_path / "claude", len(REAL.read_bytes().splitlines()) // 2)
    cli("ingest", str(folder), "--db", str(tmp_path / "p.duckdb"))
    row = session(tmp_path / "p.duckdb")
    assert {k: row[k] for k in HAND_COUNT} == HAND_COUNT  # 71 / 6 / 5, not 101 / 10 / 9
    expected = claude_expected([REAL])  # the session without its replay, counted from the raw JSON
    assert {k: row[k] for k in COUNTS} == {k: expected[k] for k in COUNTS}


@pytest.mark.slow
def test_a_resumed_session_is_stored_once_however_often_it_is_ingested(tmp_path: Path) -> None:
    original_db, db = tmp_path / "original.duckdb", tmp_path / "resumed.duckdb"
    stored = cli("ingest", str(REAL), "--db", str(original_db))["messages"]
    original = session(original_db)
    folder = resumed(tmp_path / "claude", len(REAL.read_bytes().splitlines()) // 2)

    first = cli("ingest", str(folder), "--db", str(db))
    row = session(db)
    assert {k: row[k] for k in COUNTS} == {k: original[k] for k in COUNTS}
    assert (row["started_at"], row["ended_at"]) == (original["started_at"], original["ended_at"])
    assert first["messages"] == stored  # each replayed part stored once: as many as the session without its replay

    again = cli("ingest", str(folder), "--db", str(db))
    assert again["counts"]["unchanged"] == 1 and again["messages"] == 0
    assert session(db) == row

    # A second resume replays more of it (the first replay included): the file is read again, the counts stay.
    main = next(folder.rglob("*.jsonl"))
    text = main.read_bytes().splitlines(keepends=True)
    main.write_bytes(b"".join(text) + b"".join(replayed(text, 3 * len(text) // 4, resume=2)))
    grown = cli("ingest", str(folder), "--db", str(db))
    assert grown["counts"]["changed"] == 1 and grown["messages"] == stored
    assert {k: v for k, v in session(db).items() if k != "ingested_at"} == {
        k: v for k, v in row.items() if k != "ingested_at"
    }


def test_calls_and_prompts_that_look_alike_are_each_counted(tmp_path: Path) -> None:
    """The same command run twice is two calls (two ids), the same prompt typed twice is two prompts (two times),
    the same error twice is two errors; a replay of them all adds none."""
    failed = "ModuleNotFoundError: No module named 'app'"
    turns: list[tuple[str, object]] = [
        ("user", "Run the tests"),
        ("assistant", [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "pytest"}}]),
        ("user", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": failed, "is_error": True}]),
        ("user", "Run the tests"),
        ("assistant", [{"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": "pytest"}}]),
        ("user", [{"type": "tool_result", "tool_use_id": "toolu_2", "content": failed, "is_error": True}]),
        ("assistant", "The tests fail the same way twice."),
    ]
    path = tmp_path / "claude" / "alike.jsonl"
    claude_session(path, "alike", datetime(2026, 3, 2, tzinfo=UTC), turns)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines) + b"".join(replayed(lines, len(lines))))
    cli("ingest", str(path), "--db", str(tmp_path / "p.duckdb"))
    row = session(tmp_path / "p.duckdb", "alike")
    expected = {"n_user_prompts": 2, "n_tool_calls": 2, "n_tool_errors": 2, "n_messages": 5}  # 2 prompts, 3 answers
    assert {k: row[k] for k in expected} == expected


_LINES = len(REAL.read_bytes().splitlines())


@pytest.mark.slow
@settings(max_examples=examples(30), deadline=None)
@given(upto=st.integers(min_value=0, max_value=_LINES), second_file=st.booleans())
def test_a_replay_of_any_prefix_changes_no_count(upto: int, second_file: bool) -> None:
    """Whatever part of the session a resume replays, in the same file or in a second one, the session's counts are
    those of the session without it. (Noise is a count of each file's records that are no conversation: a second file
    that repeats a slash command has one more.)"""
    expected = claude_expected([REAL])
    counted = [k for k in COUNTS if not (second_file and k == "n_noise_records")]
    with tempfile.TemporaryDirectory() as tmp:
        folder = resumed(Path(tmp) / "claude", upto, second_file=second_file)
        cli("ingest", str(folder), "--db", str(Path(tmp) / "p.duckdb"))
        row = session(Path(tmp) / "p.duckdb")
    assert {k: row[k] for k in counted} == {k: expected[k] for k in counted}
