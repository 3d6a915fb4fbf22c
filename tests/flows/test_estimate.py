"""`--dry-run` and `--max-cost`: what a run would send and cost, without calling a model or writing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.store.db import open_db
from flows.cli import app

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "data" / "samples" / "claude-code" / "spotter"
runner = CliRunner()


def counts(db: Path) -> tuple[int, int]:
    with open_db(db) as con:
        calls = con.execute("SELECT count(*) FROM llm_calls").fetchone()
        versions = con.execute("SELECT count(*) FROM versions").fetchone()
    assert calls is not None and versions is not None
    return int(calls[0]), int(versions[0])


@pytest.mark.slow
def test_dry_run_estimates_and_max_cost_refuses(tmp_path: Path) -> None:
    db = tmp_path / "e.duckdb"
    common = ["--db", str(db)]
    env = {"ANTHROPIC_API_KEY": "sk-ant-test-never-used", "PLAYBOOK_MIN_MESSAGES": "1"}
    assert runner.invoke(app, ["ingest", str(SAMPLES), *common]).exit_code == 0
    before = counts(db)
    done = runner.invoke(app, ["curate", "--llm", "anthropic", "--dry-run", "--json", *common], env=env)
    assert done.exit_code == 0, done.output
    est = json.loads(done.stdout)
    assert est["provider"] == "anthropic" and len(est["sessions"]) >= 2 and est["calls"] == 2 * len(est["sessions"])
    assert est["output_tokens"] == 600 * est["calls"] and est["input_tokens"] > 1000
    assert est["cache_read_tokens"] > 0 and 0 < est["batch_usd"] < est["live_usd"]
    assert counts(db) == before  # no call, no version

    text = runner.invoke(
        app, ["backfill", "--since", "2000-01-01", "--until", "2100-01-01", "--dry-run", *common], env=env
    )
    assert text.exit_code == 0 and "Estimated cost: $" in text.stdout and "through batches" in text.stdout

    refused = runner.invoke(app, ["curate", "--llm", "anthropic", "--max-cost", "0.0001", *common], env=env)
    assert refused.exit_code == 1 and "is above --max-cost $0.0001; nothing was sent" in refused.stderr
    assert counts(db) == before

    local = runner.invoke(
        app,
        ["curate", "--llm", "openai", "--dry-run", "--json", *common],
        env={"PLAYBOOK_OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "PLAYBOOK_MIN_MESSAGES": "1"},
    )
    assert json.loads(local.stdout)["live_usd"] == 0.0  # a local server costs nothing

    missing = runner.invoke(
        app, ["curate", "--llm", "anthropic", "--dry-run", "--db", str(tmp_path / "none.duckdb")], env=env
    )
    assert missing.exit_code == 1 and not (tmp_path / "none.duckdb").exists()


@pytest.mark.slow
def test_an_estimate_needs_no_key_and_says_the_run_will(tmp_path: Path) -> None:
    common = ["--db", str(tmp_path / "e.duckdb")]
    keyless = {"ANTHROPIC_API_KEY": None, "PLAYBOOK_ANTHROPIC_API_KEY": None, "PLAYBOOK_MIN_MESSAGES": "1"}
    assert runner.invoke(app, ["ingest", str(SAMPLES), *common]).exit_code == 0
    window = ["--since", "2000-01-01", "--until", "2100-01-01"]
    quoted = runner.invoke(app, ["backfill", *window, "--dry-run", *common], env=keyless)
    assert quoted.exit_code == 0, quoted.output
    assert "through batches" in quoted.stdout and "the run itself needs ANTHROPIC_API_KEY" in quoted.stdout
    as_json = runner.invoke(app, ["curate", "--llm", "anthropic", "--dry-run", "--json", *common], env=keyless)
    assert as_json.exit_code == 0 and json.loads(as_json.stdout)["live_usd"] > 0

    refused = runner.invoke(app, ["backfill", *window, *common], env=keyless)
    assert refused.exit_code == 1 and "needs an Anthropic API key" in refused.stderr
