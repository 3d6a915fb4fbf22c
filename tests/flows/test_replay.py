"""`playbook replay`: sessions replayed to the hooks in the order they happened, each against the playbook learned
only from the sessions before it; on crafted sessions with a known outcome and on the bundled samples."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from flows.cli import app
from tests.helpers import claude_session

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()
NPM_FAILS = ("npm install", True, "npm ERR! code EUSAGE\nnpm ERR! This project uses pnpm: run pnpm install")
PNPM_WORKS = ("pnpm install", False, "Packages: +120\nDone in 3.1s")
TESTS_PASS = ("pnpm test", False, "ok 12 tests")


def session(folder: Path, sid: str, day: int, steps: list[tuple[str, bool, str]]) -> None:
    """A Claude Code session of `app`: a prompt, then each shell call and its result."""
    turns: list[tuple[str, object]] = [("user", "please set up the project and run its checks")]
    for i, (command, error, output) in enumerate(steps):
        use = {"type": "tool_use", "id": f"{sid}-{i}", "name": "Bash", "input": {"command": command}}
        result = {"type": "tool_result", "tool_use_id": f"{sid}-{i}", "content": output, "is_error": error}
        turns += [("assistant", [use]), ("user", [result])]
    turns += [("assistant", [{"type": "text", "text": "done"}]), ("user", "thanks")]
    claude_session(folder / f"{sid}.jsonl", sid, datetime(2026, 3, day, tzinfo=UTC), turns)


def replayed(sources: Path, db: Path) -> dict[str, Any]:
    done = runner.invoke(app, ["replay", str(sources), "--json", "--db", str(db)])
    assert done.exit_code == 0, done.output
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.mark.slow
def test_a_session_meets_only_what_the_sessions_before_it_taught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two sessions learn that `app` installs with `pnpm install`; the third runs `npm install`, which then fails:
    the guard learned from the first two fires on it (caught), and fires on nothing that worked."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "sessions"
    session(folder, "s-a", 1, [NPM_FAILS, PNPM_WORKS, TESTS_PASS])
    session(folder, "s-b", 2, [NPM_FAILS, PNPM_WORKS, TESTS_PASS])
    session(folder, "s-c", 5, [NPM_FAILS, PNPM_WORKS])
    db = tmp_path / "mine.duckdb"
    result = replayed(folder, db)
    first, second, third = result["sessions"]
    assert [s["session_id"] for s in result["sessions"]] == ["s-a", "s-b", "s-c"]
    assert first["entries_known"] == 0 and first["start_tokens"] == 0 and first["fires"] == 0  # nothing before it
    assert second["entries_known"] >= 1 and second["start_tokens"] > 0
    assert third["fires"] == 1 and third["caught"] == 1 and third["false_fires"] == 0
    assert third["calls"] == 2 and third["failed_calls"] == 1
    assert result["totals"]["false_fires"] == 0
    (entry,) = [e for e in result["entries"] if e["fires"]]
    assert "`pnpm install`" in entry["text"] and entry["caught"] == 1
    assert not db.exists()  # the user's database is only read, and here there is none


@pytest.mark.slow
def test_the_bundled_sessions_replay_in_order_and_add_no_more_than_the_whole_playbook(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "data" / "samples", tmp_path / "samples")
    result = replayed(tmp_path / "samples", tmp_path / "p.duckdb")
    sessions = result["sessions"]
    assert len(sessions) == 10 and sessions[0]["entries_known"] == 0
    known = [s["entries_known"] for s in sessions]
    assert known == sorted(known) and known[-1] > 0  # learned from the sessions before, never from later ones
    totals = result["totals"]
    assert totals["calls"] == sum(s["calls"] for s in sessions) > 100
    assert totals["fires"] == totals["caught"] + totals["false_fires"]
    assert totals["start_tokens"] <= totals["whole_tokens"]  # the digest never gives more than the whole playbook
