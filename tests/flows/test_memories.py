"""Agents' own memory files as evidence: a fake HOME with Claude Code's auto memory and Codex's memories; `ingest`
finds them by default (no folder named), reads each as one note of its own kind, redacts it like any transcript,
keeps it as the developer's, and a memory file changed later is read again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app

runner = CliRunner()
KEY = "AKIA" + "Q3EGRZ7YJXU4NDPK"  # the shape of an AWS access key id (built here so no scanner flags this file)


def sql(db: Path, query: str) -> list[dict[str, object]]:
    done = runner.invoke(app, ["sql", query, "--json", "--db", str(db)])
    assert done.exit_code == 0, done.output
    rows: list[dict[str, object]] = json.loads(done.stdout)
    return rows


def test_memory_files_in_home_are_ingested_redacted_and_kept_as_the_developer_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    claude = home / ".claude" / "projects" / "-home-ann-src-api" / "memory"
    claude.mkdir(parents=True)
    (claude / "MEMORY.md").write_text(f"# api\n- Tests run with `uv run pytest -q`.\n- deploy key {KEY}\n")
    (claude / "notes.txt").write_text("not a memory file")
    codex = home / ".codex" / "memories"
    codex.mkdir(parents=True)
    (codex / "prefs.md").write_text("Prefer pnpm over npm in web projects.\n")
    with (codex / "huge.md").open("wb") as fh:  # sparse: 5 MB on paper, read whole it would be hashed whole
        fh.truncate(5 << 20)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "p.duckdb"
    done = runner.invoke(app, ["ingest", "--json", "--db", str(db)])
    assert done.exit_code == 0, done.output
    sessions = sql(db, "SELECT session_id, format FROM sessions ORDER BY 1")
    assert sessions == [
        {"session_id": "memory.claude.-home-ann-src-api.MEMORY", "format": "memory"},
        {"session_id": "memory.codex.prefs", "format": "memory"},
    ]
    (text,) = [r["text"] for r in sql(db, "SELECT text FROM messages WHERE session_id LIKE 'memory.claude%'")]
    assert isinstance(text, str) and "uv run pytest -q" in text and KEY not in text  # redacted at ingest
    keys = sql(db, "SELECT contributor FROM session_keys ORDER BY session_id")
    assert [k["contributor"] for k in keys] == ["", ""]  # this machine's developer, like their own transcripts
    assert sql(db, "SELECT count(*) AS n FROM files WHERE path LIKE '%notes.txt' OR path LIKE '%huge.md'") == [{"n": 0}]

    (codex / "prefs.md").write_text("Prefer pnpm over npm in web projects.\nRun `pnpm lint` before pushing.\n")
    assert runner.invoke(app, ["ingest", "--db", str(db)]).exit_code == 0
    (again,) = [r["text"] for r in sql(db, "SELECT text FROM messages WHERE session_id = 'memory.codex.prefs'")]
    assert isinstance(again, str) and "pnpm lint" in again
