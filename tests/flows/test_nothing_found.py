"""Seed 003: when the reflector finds nothing, the curator is not called (no call, no cost); the
reflection's tags still apply."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.compat import llm as seeds
from core.llm.base import LLMRequest, LLMResponse
from core.store.db import open_db
from flows.cli import app
from tests.helpers import expose, write_session

runner = CliRunner()


@pytest.fixture(autouse=True)
def _exports_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs export to `out_dir` (default `data/out` where they run): this test's folder, not the checkout."""
    monkeypatch.setenv("PLAYBOOK_OUT_DIR", str(tmp_path / "out"))


def test_an_empty_reflection_gets_no_curator_call(tmp_path: Path) -> None:
    write_session(tmp_path / "t" / "s.jsonl", "s0", datetime(2026, 5, 1, tzinfo=UTC), error=False)
    book = tmp_path / "p.json"
    entry = {"name": "pat-001", "text": "Run the linter first.", "helpful": 0, "harmful": 0}
    book.write_text(json.dumps({"version": "1.0", "sections": {"PATTERNS & APPROACHES": [entry]}}))
    db = ["--db", str(tmp_path / "n.duckdb")]
    assert runner.invoke(app, ["import", str(book), *db]).exit_code == 0
    assert runner.invoke(app, ["ingest", str(tmp_path / "t"), *db]).exit_code == 0
    expose(tmp_path / "n.duckdb", {"s0": ["pat-001"]})  # its agent had the entry, so the tag counts
    reflection = {"analysis": "  ", "bullet_tags": [{"name": "pat-001", "tag": "helpful", "rationale": "used"}]}
    replay = tmp_path / "r.jsonl"  # no curator answer at all: a call would fail the session
    replay.write_text(json.dumps({"session_id": "s0", "step": "reflector", "text": json.dumps(reflection)}) + "\n")
    done = runner.invoke(
        app, ["curate", "--llm", f"replay:{replay}", "--json", *db], env={"PLAYBOOK_MIN_MESSAGES": "1"}
    )
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)[0]["sessions_applied"] == 1
    with open_db(tmp_path / "n.duckdb") as con:
        steps = con.execute("SELECT step FROM llm_calls").fetchall()
        helpful = con.execute("SELECT helpful FROM entries WHERE valid_to IS NULL").fetchall()
        (note,) = con.execute("SELECT note FROM versions WHERE source = 'session'").fetchone()
    assert steps == [("reflector",)] and helpful == [(1,)]
    assert note == "no curator call: the reflector found nothing"  # recorded as such


def test_the_hook_script_api_skips_the_call_too() -> None:
    calls: list[LLMRequest] = []

    class Recorder:
        name = "recorder"
        cacheable = False
        warm_cache_first = False
        batches = False

        def complete(self, request: LLMRequest) -> LLMResponse:
            calls.append(request)
            return LLMResponse(text='{"reasoning": "r", "operations": []}', provider="recorder", model="m")

    playbook = {"version": "1.0", "sections": {}}
    empty = seeds.run_curator_sync({"analysis": "", "bullet_tags": []}, playbook, provider=Recorder())
    assert empty == {"reasoning": "", "operations": []} and calls == []
    seeds.run_curator_sync({"analysis": "Something went wrong.", "bullet_tags": []}, playbook, provider=Recorder())
    assert len(calls) == 1
