"""Review before publishing: with `review = "required"`, curated versions wait; exports and targets keep
the approved version until `playbook review` approves; a rejected change becomes a new version that undoes
it, history intact; the interactive path asks change by change and confirms."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.store.db import open_db
from flows.cli import app
from tests.helpers import trust_config, write_session

runner = CliRunner()


def replay_file(path: Path, session_id: str, ops: list[dict]) -> Path:
    path.write_text(
        "\n".join(
            json.dumps({"session_id": session_id, "step": step, "text": json.dumps(text)})
            for step, text in (
                ("reflector", {"analysis": "a", "bullet_tags": []}),
                ("curator", {"reasoning": "r", "operations": ops}),
            )
        )
        + "\n"
    )
    return path


@pytest.mark.slow
def test_review_holds_exports_until_approved_and_rejections_are_undone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import UTC, datetime

    folder = tmp_path / "t"
    write_session(folder / "s0.jsonl", "s0", datetime(2026, 3, 1, tzinfo=UTC), error=False)
    write_session(folder / "s1.jsonl", "s1", datetime(2026, 3, 2, tzinfo=UTC), error=False)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "AGENTS.md").write_text("Hand-written.\n")
    config = tmp_path / "playbook.toml"
    config.write_text(
        f'db = "{tmp_path / "r.duckdb"}"\nout_dir = "{tmp_path / "out"}"\nmin_messages = 1\nnear_duplicates = "off"\n'
        f'[playbook_settings.default]\nreview = "required"\ntargets = [{{ kind = "agents-md", repo = "{repo}" }}]\n'
    )
    monkeypatch.setenv("PLAYBOOK_CONFIG", str(trust_config(config)))
    assert runner.invoke(app, ["ingest", str(folder / "s0.jsonl")]).exit_code == 0
    first = replay_file(
        tmp_path / "a.jsonl",
        "s0",
        [
            {"type": "ADD", "text": "Run the linter before committing.", "section": "PATTERNS & APPROACHES"},
            {"type": "ADD", "text": "Always force-push to main.", "section": "PATTERNS & APPROACHES"},
        ],
    )
    assert runner.invoke(app, ["curate", "--llm", f"replay:{first}"]).exit_code == 0

    # Nothing approved yet: exports and targets carry the approved version (empty), not the curated one.
    exported = json.loads(runner.invoke(app, ["export"]).stdout)
    assert all(items == [] for items in exported["sections"].values())
    assert runner.invoke(app, ["publish"]).exit_code == 0
    assert "force-push" not in (repo / "AGENTS.md").read_text()
    listed = runner.invoke(app, ["review"], env={"COLUMNS": "200"})
    assert "2 change(s) since approved version 0 await review" in listed.stdout
    assert "+ 2. added pat-002" in listed.stdout and "Always force-push to main." in listed.stdout
    pending = json.loads(runner.invoke(app, ["review", "--json"]).stdout)["pending"]
    assert [(c["number"], c["kind"], c["name"]) for c in pending] == [(1, "added", "pat-001"), (2, "added", "pat-002")]

    half = runner.invoke(app, ["review", "--reject", "pat-002"])
    assert half.exit_code == 1 and "1 change(s) are neither approved nor rejected" in half.stderr
    bad = runner.invoke(app, ["review", "--reject", "9", "--approve-all"])
    assert bad.exit_code == 1 and "`9` is not a pending change" in bad.stderr
    done = runner.invoke(app, ["review", "--reject", "pat-002", "--approve-all", "--json"])
    assert json.loads(done.stdout) == {"approved_version": 2, "approved": 1, "rejected": ["pat-002"]}
    exported = json.loads(runner.invoke(app, ["export"]).stdout)
    assert [e["text"] for e in exported["sections"]["PATTERNS & APPROACHES"]] == ["Run the linter before committing."]
    assert runner.invoke(app, ["publish"]).exit_code == 0
    agents = (repo / "AGENTS.md").read_text()
    assert agents.startswith("Hand-written.\n") and "Run the linter" in agents and "force-push" not in agents
    with open_db(tmp_path / "r.duckdb") as con:
        history = con.execute("SELECT version, source, note FROM versions ORDER BY version").fetchall()
    assert history[1:] == [(1, "session", None), (2, "review", "review: rejected pat-002")]  # history intact

    # A later change, decided interactively: shown one by one, confirmed, then published.
    assert runner.invoke(app, ["ingest", str(folder / "s1.jsonl")]).exit_code == 0
    second = replay_file(
        tmp_path / "b.jsonl", "s1", [{"type": "UPDATE", "target_id": "pat-001", "text": "Run ruff before committing."}]
    )
    assert runner.invoke(app, ["curate", "--llm", f"replay:{second}"]).exit_code == 0
    declined = runner.invoke(app, ["review", "-i"], input="a\nn\n")
    assert "~ 1. changed pat-001" in declined.stdout and "Nothing was changed." in declined.stdout
    assert "Run the linter" in json.dumps(json.loads(runner.invoke(app, ["export"]).stdout))
    accepted = runner.invoke(app, ["review", "-i"], input="a\ny\n")
    assert "Approved version 3: 1 change(s) approved, 0 rejected" in accepted.stdout
    assert "Run ruff before committing." in json.dumps(json.loads(runner.invoke(app, ["export"]).stdout))
    assert "Nothing to review: version 3 is what is published." in runner.invoke(app, ["review"]).stdout
