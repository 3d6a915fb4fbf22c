"""A playbook larger than the prompt budget still works: at the default `max_input_tokens` a 5,000-entry playbook
is cut, in each curator request, to the entries the session's findings are about (the rest counted), so its
sessions are applied instead of refused; the request the (fake) `claude` CLI receives shows it."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.tokens import estimate_tokens
from flows.cli import app
from tests.helpers import write_session

ROOT = Path(__file__).resolve().parents[2]
FAKES = ROOT / "tests" / "data" / "fake_claude"
runner = CliRunner()
VOCABULARY = "build cache deploy schema index retry timeout parser fixture migration branch module package".split()


@pytest.mark.slow
def test_five_thousand_entries_at_the_default_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entries = [
        {"name": f"oth-{i:04d}", "text": f"Lesson {i}: mind the {VOCABULARY[i % 13]} {VOCABULARY[(i // 13) % 13]}."}
        for i in range(5000)
    ]
    # The one lesson the fake reflector's finding ("The lint step failed before the push.") is about.
    entries[4321] = {"name": "oth-4321", "text": "Run the lint step before every push."}
    book = tmp_path / "big.json"
    book.write_text(json.dumps({"version": "1.0", "sections": {"OTHERS": entries}}))
    db = str(tmp_path / "big.duckdb")
    assert runner.invoke(app, ["import", str(book), "--db", db]).exit_code == 0
    for i in range(2):
        write_session(tmp_path / "t" / f"s{i}.jsonl", f"s{i}", datetime(2026, 5, 1 + i, tzinfo=UTC), error=True)
    assert runner.invoke(app, ["ingest", str(tmp_path / "t"), "--db", db]).exit_code == 0

    monkeypatch.setenv("PATH", f"{FAKES}:{os.environ['PATH']}")
    log = tmp_path / "claude.log"
    env = {
        "PLAYBOOK_CLAUDE_CLI": "claude",
        "FAKE_CLAUDE_LOG": str(log),
        "PLAYBOOK_MIN_MESSAGES": "1",
        "PLAYBOOK_OUT_DIR": str(tmp_path / "out"),
        "PLAYBOOK_NEAR_DUPLICATES": "lexical",
    }
    done = runner.invoke(app, ["curate", "--llm", "claude-cli", "--json", "--db", db], env=env)
    assert done.exit_code == 0, done.output
    (summary,) = json.loads(done.stdout)
    assert summary["sessions_applied"] == 2 and summary["sessions_failed"] == 0
    asked = [json.loads(line) for line in log.read_text().splitlines()]
    curator = [a["system"] for a in asked if a["system"].startswith("You are the Curator")]
    assert len(curator) == 2
    for system in curator:
        assert "[oth-4321] helpful=0 harmful=0 :: Run the lint step before every push." in system
        assert "entries are shown: the ones this session's findings are about" in system
        assert system.count("[oth-") < 1000 and estimate_tokens(system) < 24_000  # within the default budget
