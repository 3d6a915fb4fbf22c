"""One vocabulary for a run's counts: a call reached a model or it did not (the rules answering is no model
call), and the duplicate rate names what measured it and counts only pairs a consolidation could merge."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from tests.helpers import SAMPLES

runner = CliRunner()


@pytest.mark.slow
def test_a_keyless_nightly_calls_no_model_and_asks_for_no_empty_consolidation(tmp_path: Path) -> None:
    samples = tmp_path / "samples"
    shutil.copytree(SAMPLES, samples)
    common = ["--db", str(tmp_path / "p.duckdb")]
    env = {"ANTHROPIC_API_KEY": None, "PLAYBOOK_OUT_DIR": str(tmp_path / "out")}
    done = runner.invoke(app, ["nightly", str(samples), "--llm", "heuristic", "--json", *common], env=env)
    assert done.exit_code == 0, done.output
    (run,) = json.loads(done.stdout)
    assert run["sessions_applied"] >= 5 and run["calls_made"] == 0 and run["calls_cached"] == 0
    assert run["rule_steps"] >= run["sessions_applied"]  # a reflector and a curator step each, answered by rules
    assert run["tokens_by_step"] == {} and run["cost_usd"] == 0
    # Every entry is the rules' (distinct by meaning, never merged): no pair to merge, so no consolidation.
    assert run["quality"]["duplicate_rate"] == 0 and run["duplicate_measure"]
    assert not any(n.startswith("Consolidated") for n in run["notices"])

    shown = runner.invoke(app, ["runs", *common], env=env)
    assert shown.exit_code == 0
    report = runner.invoke(app, ["report", "--out", str(tmp_path / "report"), *common], env=env)
    assert report.exit_code == 0, report.output
    page = (tmp_path / "report" / "index.html").read_text()
    assert f"duplicate rate 0.0% (by {run['duplicate_measure']})" in page


@pytest.mark.slow
def test_the_run_table_says_no_model_was_called(tmp_path: Path) -> None:
    samples = tmp_path / "samples"
    shutil.copytree(SAMPLES / "claude-code" / "spotter", samples)
    env = {"ANTHROPIC_API_KEY": None, "PLAYBOOK_OUT_DIR": str(tmp_path / "out"), "PLAYBOOK_MIN_MESSAGES": "1"}
    done = runner.invoke(
        app, ["nightly", str(samples), "--llm", "heuristic", "--db", str(tmp_path / "p.duckdb")], env=env
    )
    assert done.exit_code == 0, done.output
    row = next(line for line in done.stdout.splitlines() if "model calls" in line)
    assert "none: the rules answered" in row and "made" not in row


def test_a_sessions_secret_count_is_what_its_files_had_masked(tmp_path: Path) -> None:
    common = ["--db", str(tmp_path / "p.duckdb")]
    ingested = runner.invoke(app, ["ingest", str(SAMPLES), "--json", *common])
    assert ingested.exit_code == 0, ingested.output
    per_file: dict[str, int] = {}
    for f in json.loads(ingested.stdout)["files"]:
        if f["session_id"]:
            per_file[f["session_id"]] = per_file.get(f["session_id"], 0) + f["secrets"]
    listed = json.loads(runner.invoke(app, ["sessions", "--json", *common]).stdout)
    assert {s["session_id"]: s["n_secrets_redacted"] for s in listed} == per_file
    assert sum(per_file.values()) > 0  # the samples hold secrets, masked before they were stored
