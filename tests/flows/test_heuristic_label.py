"""Honest about the heuristic: entries written by rules (no model) are labelled in every output (exports,
every export target, `show`, the report, the run summary), are phrased as instructions, and `recurate`
hands their sessions to a model later, as new versions, history kept; a model run never reuses an answer
the heuristic wrote."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.store.db import open_db
from flows.cli import app
from flows.insight.evolution import write_evolution_report
from tests.helpers import trust_config, write_session

runner = CliRunner()
LABEL = "written by rules, without a model (the heuristic provider)"


@pytest.mark.slow
def test_heuristic_entries_are_labelled_everywhere_and_recurated_by_a_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "t"
    for i in range(2):
        write_session(folder / f"s{i}.jsonl", f"s{i}", datetime(2026, 2, 1, tzinfo=UTC) + timedelta(days=i), error=True)
    repo = tmp_path / "repo"
    config = tmp_path / "playbook.toml"
    config.write_text(
        f'db = "{tmp_path / "h.duckdb"}"\nout_dir = "{tmp_path / "out"}"\nmin_messages = 1\n'
        f'[playbook_settings.default]\ntargets = [{{ kind = "agents-md", repo = "{repo}" }},'
        f' {{ kind = "cursor", repo = "{repo}" }}]\n'
    )
    monkeypatch.setenv("PLAYBOOK_CONFIG", str(trust_config(config)))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert runner.invoke(app, ["ingest", str(folder)]).exit_code == 0
    done = runner.invoke(app, ["curate", "--llm", "heuristic"], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    assert "heuristic (rules, no model" in done.stdout  # the run summary

    shown = runner.invoke(app, ["show", "--format", "markdown"])
    assert "`pytest` fails here" in shown.stdout and LABEL in shown.stderr  # a rule, and labelled
    claude = tmp_path / "CLAUDE.md"
    assert runner.invoke(app, ["export", "--format", "claude-md", "--out", str(claude)]).exit_code == 0
    assert "2 of these entries were " + LABEL in claude.read_text()  # the correction and the test command
    assert LABEL in (tmp_path / "out" / "default.md").read_text()  # curate's own export
    assert runner.invoke(app, ["publish"]).exit_code == 0
    assert LABEL in (repo / "AGENTS.md").read_text() and LABEL in (repo / ".cursor/rules/playbook.mdc").read_text()
    page = write_evolution_report(tmp_path / "h.duckdb", "default", tmp_path / "report").index.read_text()
    assert "2 live entries were " + LABEL in page

    refused = runner.invoke(app, ["recurate", "--since", "2026-01-01"])
    assert refused.exit_code == 1 and "recurate needs a model" in refused.stderr
    planned = runner.invoke(app, ["recurate", "--since", "2026-01-01", "--dry-run", "--json"])
    assert json.loads(planned.stdout) == {"sessions": ["s0", "s1"], "dry_run": True}

    better = "Run the tests with `python -m pytest` so the package is importable."
    replay = tmp_path / "model.jsonl"
    replay.write_text(
        "\n".join(
            json.dumps({"session_id": sid, "step": step, "text": json.dumps(text)})
            for sid in ("s0", "s1")
            for step, text in (
                ("reflector", {"analysis": f"model analysis of {sid}", "bullet_tags": []}),
                (
                    "curator",
                    {
                        "reasoning": "state it as an instruction",
                        "operations": [{"type": "UPDATE", "target_id": "mis-001", "text": better}],
                    },
                ),
            )
        )
        + "\n"
    )
    again = runner.invoke(app, ["recurate", "--since", "2026-01-01", "--llm", f"replay:{replay}", "--json"])
    assert again.exit_code == 0, again.output
    (summary,) = json.loads(again.stdout)
    assert summary["sessions_applied"] == 2 and summary["provider"].startswith("replay")
    with open_db(tmp_path / "h.duckdb") as con:
        calls = con.execute("SELECT provider, count(*) FROM llm_calls GROUP BY ALL ORDER BY ALL").fetchall()
        found = con.execute("SELECT count(*) FROM rules_findings").fetchone()
        texts = con.execute("SELECT text FROM entries WHERE valid_to IS NULL").fetchall()
    # The model answered every step itself; the rules' two sessions are their findings, not exchanges.
    assert calls == [("replay", 4)] and found == (2,)
    assert sorted(texts) == sorted([(better,), ("Run the tests with `python -m pytest`.",)])
    life = json.loads(runner.invoke(app, ["why", "mis-001", "--json"]).stdout)
    assert [e["event"] for e in life["events"]] == ["ADD", "UPDATE", "UPDATE"]  # history kept
    claude.unlink()
    assert runner.invoke(app, ["export", "--format", "claude-md", "--out", str(claude)]).exit_code == 0
    assert "1 of these entries were " + LABEL in claude.read_text()  # a model wrote mis-001's text now
