"""Seed 004's context contract through the product: every request is estimated whole (instructions, playbook,
transcript) against `max_input_tokens`; a long session is compacted to fit and the exchange stores what was
dropped; a request that cannot fit is refused before any call, with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.store.db import open_db
from flows.cli import app
from tests.helpers import SAMPLES

runner = CliRunner()


@pytest.fixture(autouse=True)
def _exports_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs export to `out_dir` (default `data/out` where they run): this test's folder, not the checkout."""
    monkeypatch.setenv("PLAYBOOK_OUT_DIR", str(tmp_path / "out"))


def _curate(db: Path, budget: int) -> tuple[int, str]:
    """The bundled samples curated within `budget` by a model that finds nothing in any session (a replay; the rules
    read no prompt, so no budget applies to them)."""
    assert runner.invoke(app, ["ingest", str(SAMPLES), "--db", str(db)]).exit_code == 0
    listed = runner.invoke(app, ["sessions", "--json", "--db", str(db)])
    nothing = json.dumps({"analysis": "", "bullet_tags": []})
    replay = db.with_suffix(".replay.jsonl")
    replay.write_text(
        "".join(
            json.dumps({"session_id": s["session_id"], "step": "reflector", "text": nothing}) + "\n"
            for s in json.loads(listed.stdout)
        )
    )
    env = {"PLAYBOOK_MAX_INPUT_TOKENS": str(budget), "PLAYBOOK_MIN_MESSAGES": "1"}
    done = runner.invoke(app, ["curate", "--llm", f"replay:{replay}", "--json", "--db", str(db)], env=env)
    return done.exit_code, done.output


@pytest.mark.slow
def test_long_sessions_are_compacted_and_the_exchange_says_what_was_dropped(tmp_path: Path) -> None:
    db = tmp_path / "b.duckdb"
    code, output = _curate(db, 4_000)
    assert code == 0, output
    with open_db(db) as con:
        rows = con.execute(
            "SELECT step, payload_tokens_est, payload_budget_tokens, payload_compacted, dropped_fields,"
            " compaction_reason FROM llm_calls"
        ).fetchall()
    assert rows and {r[0] for r in rows} >= {"reflector"}
    for _step, est, budget, compacted, dropped, reason in rows:
        assert budget == 4_000 and 0 < est <= budget  # the whole request, within its budget
        assert compacted == bool(dropped) == (reason is not None)  # dropped_fields non-empty exactly when compacted
    compacted_rows = [r for r in rows if r[3]]
    assert compacted_rows, "the bundled sessions are far longer than 4,000 tokens"
    assert all("left for it" in r[5] for r in compacted_rows)
    assert any("middle_turn_lines" in r[4] or "tool_output_chars" in r[4] for r in compacted_rows)


def _stored(db: Path) -> tuple[int, int, int, str]:
    with open_db(db) as con:
        row = con.execute(
            "SELECT (SELECT count(*) FROM llm_calls), (SELECT count(*) FROM versions WHERE source = 'session'),"
            " count(*), min(reason) FROM session_failures"
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2]), str(row[3])


@pytest.mark.slow
def test_a_request_that_cannot_fit_is_refused_before_any_call(tmp_path: Path) -> None:
    db = tmp_path / "tiny.duckdb"
    code, output = _curate(db, 300)  # less than the reflector's instructions alone
    assert code == 1
    assert "refused before any call" in output and "max_input_tokens" in output
    assert "Traceback" not in output
    calls, versions, failures, reason = _stored(db)
    assert calls == 0 and versions == 0
    assert failures >= 1 and "refused before any call" in reason
    listed = runner.invoke(app, ["sessions", "--failed", "--json", "--db", str(db)])
    assert listed.exit_code == 0 and "refused before any call" in listed.output
    assert json.loads(listed.stdout)
