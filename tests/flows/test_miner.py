"""The rules miner scored on real transcripts nobody here wrote (data/samples) against the labelled set of
data/lessons/mined.json, through the CLI as a user runs it: `ingest`, `curate --llm heuristic`, `export`."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from flows.cli import app
from tests.helpers import SAMPLES
from tests.labelled import labelled, score

runner = CliRunner()


@pytest.fixture(scope="module")
def entries(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The entry texts the miner writes from every bundled transcript."""
    tmp = tmp_path_factory.mktemp("miner")
    db = str(tmp / "m.duckdb")
    env = {"PLAYBOOK_OUT_DIR": str(tmp / "out"), "ANTHROPIC_API_KEY": ""}
    assert runner.invoke(app, ["ingest", str(SAMPLES), "--db", db], env=env).exit_code == 0
    done = runner.invoke(app, ["curate", "--llm", "heuristic", "--db", db], env=env)
    assert done.exit_code == 0, done.output
    out = tmp / "pb.json"
    assert runner.invoke(app, ["export", "--format", "json", "--out", str(out), "--db", db], env=env).exit_code == 0
    exported = json.loads(out.read_text())
    return [e["text"] for section in exported["sections"].values() for e in section]


def test_the_labelled_set_covers_every_bundled_session() -> None:
    sessions = labelled()["sessions"]
    lessons = [lesson for s in sessions.values() for lesson in s["lessons"]]
    assert len(sessions) == 10 and len(lessons) == 19
    assert len({lesson["id"] for lesson in lessons}) == len(lessons)


def test_the_miner_finds_half_the_labelled_lessons_and_writes_little_else(entries: list[str]) -> None:
    found = score(entries)
    assert found.recall >= 0.5, f"recall {found.recall:.0%}: found {found.found}"
    assert found.precision >= 0.7, f"precision {found.precision:.0%}: {set(entries) - set(found.matching)}"
    assert found.junk == {}


def test_no_entry_names_a_home_folder_or_comes_from_a_session_with_nothing_to_learn(entries: list[str]) -> None:
    assert not any("/Users/" in e or "/home/" in e for e in entries)
    quiet = {s["project"] for s in labelled()["sessions"].values() if not s["lessons"]}
    taught = {s["project"] for s in labelled()["sessions"].values() if s["lessons"]}
    assert not any(e.startswith(f"In {p}:") for p in quiet - taught for e in entries)
