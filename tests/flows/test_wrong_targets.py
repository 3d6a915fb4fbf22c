"""Wrong targets fail early and cleanly: a path that does not exist, a folder with no transcript, a nightly with
nothing to read are each one line and exit 1, and create nothing (no database, no lock file); a `--llm` that
names no provider is a usage error (exit 2) with the closest name; a mistyped `llm` setting is one line naming
the setting; `doctor` reports what a run would refuse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from tests.helpers import trust_config

runner = CliRunner()


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("PLAYBOOK_CONFIG", "PLAYBOOK_DB", "ANTHROPIC_API_KEY", "PLAYBOOK_LLM"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("not a transcript")
    return tmp_path


def one_error(result: object, start: str) -> None:
    lines = result.stderr.strip().splitlines()  # type: ignore[attr-defined]
    assert result.exit_code == 1 and len(lines) == 1 and lines[0].startswith(f"Error: {start}"), lines  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (["ingest", "nowhere/projects"], "Transcript path `nowhere/projects` does not exist"),
        (["ingest", "empty"], "No transcript files (*.jsonl, *.json) in `empty`"),
        (["nightly", "empty", "--llm", "heuristic"], "No transcript files (*.jsonl, *.json) in `empty`"),
        (["nightly", "nowhere", "--llm", "heuristic"], "Transcript path `nowhere` does not exist"),
    ],
)
def test_a_wrong_source_is_one_line_and_creates_nothing(here: Path, command: list[str], said: str) -> None:
    before = sorted(p.name for p in here.iterdir())
    one_error(runner.invoke(app, [*command, "--db", "p.duckdb"]), said)
    assert sorted(p.name for p in here.iterdir()) == before  # no database, no lock, no data/out


def test_a_nightly_with_nothing_configured_says_so(here: Path) -> None:
    done = runner.invoke(app, ["nightly", "--llm", "heuristic", "--db", "p.duckdb"], env={"PLAYBOOK_TRANSCRIPTS": ""})
    one_error(done, "No transcript folders given")
    assert not (here / "p.duckdb").exists()


def test_an_unknown_provider_flag_is_a_usage_error_with_the_closest_name(here: Path) -> None:
    for command in (["curate"], ["nightly", "empty"], ["backfill", "--since", "2026-01-01", "--until", "2026-02-01"]):
        done = runner.invoke(app, [*command, "--llm", "antrhopic", "--db", "p.duckdb"], env={"COLUMNS": "200"})
        assert done.exit_code == 2 and "did you mean `anthropic`?" in done.stderr, done.stderr
    assert not (here / "p.duckdb").exists()


def test_a_mistyped_provider_setting_is_one_line_naming_it_and_doctor_reports_what_a_run_would_refuse(
    here: Path,
) -> None:
    done = runner.invoke(app, ["doctor", "--db", "p.duckdb"], env={"PLAYBOOK_LLM": "antrhopic"})
    one_error(done, "Invalid value for `llm` in PLAYBOOK_LLM")
    assert "did you mean `anthropic`?" in done.stderr
    (here / "playbook.toml").write_text('llm = "heurstic"\n')
    trust_config(here / "playbook.toml")
    one_error(runner.invoke(app, ["sessions", "--db", "p.duckdb"]), "Invalid value for `llm` in")
    (here / "playbook.toml").write_text('llm = "anthropic"\n')
    trust_config(here / "playbook.toml")
    shown = runner.invoke(app, ["doctor", "--json", "--db", "p.duckdb"])
    problems = json.loads(shown.stdout)["problems"]
    assert any(p.startswith("The `anthropic` provider needs an Anthropic API key") for p in problems)
    assert shown.exit_code == 1
