"""A lesson about one project (`In api: ...`, given only to that project's agents) is judged by the tasks of that
project (and of the repositories it is written into), not by every project's at once: a measured leak (issue 41) had one project's unreadable `mise run lint` hold the
same task in every other project of the run, and one project's harmless recipe would have vouched for another's.
Through the CLI, on real folders: two projects with a `make test` each, one of which deletes the home folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from tests.helpers import bash, session, trust_config

runner = CliRunner()


def _learnt(folder: Path, sid: str, cwd: Path, day: int) -> None:
    """A session in `cwd` whose `pytest` fails and whose `make test` works: the miner learns `make test` there."""
    turns: list[tuple[str, object]] = [("user", "run the tests")]
    turns += bash(1, sid, "pytest", "bash: pytest: command not found", error=True)
    turns += bash(2, sid, "make test", "3 passed")
    session(folder, sid, str(cwd), turns, day=day)


@pytest.mark.slow
def test_a_lesson_is_judged_by_the_tasks_of_the_project_it_is_about(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PLAYBOOK_CONFIG", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")
    safe, wiper = tmp_path / "safe", tmp_path / "wiper"
    for folder, recipe in ((safe, "pytest -q"), (wiper, "rm -rf ~")):
        folder.mkdir()
        (folder / "Makefile").write_text(f"test:\n\t{recipe}\n")
    (tmp_path / "playbook.toml").write_text(
        f'db = "{tmp_path / "p.duckdb"}"\nmin_messages = 1\nidle_minutes = 0\nnear_duplicates = "off"\n'
        f'out_dir = "{tmp_path / "out"}"\n'
    )
    trust_config(tmp_path / "playbook.toml")
    transcripts = tmp_path / "t"
    _learnt(transcripts, "s1", safe, 0)
    _learnt(transcripts, "s2", wiper, 1)
    done = runner.invoke(app, ["nightly", str(transcripts), "--llm", "heuristic"])
    assert done.exit_code == 0, done.output
    book = json.loads(runner.invoke(app, ["show", "--format", "json"]).stdout)
    entries = [e["text"] for items in book["sections"].values() for e in items]
    assert any(e.startswith("In safe: ") and "`make test`" in e for e in entries), entries
    assert any(e.startswith("In wiper: ") and "`make test`" in e for e in entries), entries
    out = tmp_path / "CLAUDE.md"
    exported = runner.invoke(app, ["export", "--format", "claude-md", "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    text = out.read_text()
    assert "In safe: " in text and "`make test`" in text  # its own project's `test` runs pytest
    assert "In wiper: " not in text  # its own project's `test` deletes the home folder
    review = runner.invoke(app, ["review", "--json"])
    assert "rm -rf ~" in review.stdout  # held, with what the recipe runs


@pytest.mark.slow
def test_projects_whose_names_read_alike_are_judged_together(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Round 8b: `a/api` and `b/API` taught one lesson, "In api: ...", judged by the harmless one alone."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PLAYBOOK_CONFIG", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")
    safe, wiper = tmp_path / "a" / "api", tmp_path / "b" / "API"
    for folder, recipe in ((safe, "pytest -q"), (wiper, "rm -rf ~")):
        folder.mkdir(parents=True)
        (folder / "Makefile").write_text(f"test:\n\t{recipe}\n")
    (tmp_path / "playbook.toml").write_text(
        f'db = "{tmp_path / "p.duckdb"}"\nmin_messages = 1\nidle_minutes = 0\nnear_duplicates = "off"\n'
    )
    trust_config(tmp_path / "playbook.toml")
    _learnt(tmp_path / "t", "s1", safe, 0)
    _learnt(tmp_path / "t", "s2", wiper, 1)
    assert runner.invoke(app, ["nightly", str(tmp_path / "t"), "--llm", "heuristic"]).exit_code == 0
    book = json.loads(runner.invoke(app, ["show", "--format", "json"]).stdout)
    assert any("`make test`" in e["text"] for items in book["sections"].values() for e in items)  # learnt
    out = tmp_path / "CLAUDE.md"
    runner.invoke(app, ["export", "--format", "claude-md", "--out", str(out)])
    assert "`make test`" not in (out.read_text() if out.exists() else "")
