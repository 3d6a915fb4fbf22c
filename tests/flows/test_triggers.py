"""Evidence that a lesson mattered: an ADD's trigger (the heuristic provider's error text, or a model's) is
kept with the entry, inherited through MERGE, and counted in sessions before and after the entry was first
exported, on a crafted history whose counts are known."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.store.db import open_db
from flows.cli import app
from flows.insight.evolution import write_evolution_report
from tests.helpers import ERROR, write_session


@pytest.fixture(autouse=True)
def _exports_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs export to `out_dir` (default `data/out` where they run): this test's folder, not the checkout."""
    monkeypatch.setenv("PLAYBOOK_OUT_DIR", str(tmp_path / "out"))


@pytest.mark.slow
def test_trigger_recurrence_before_and_after_the_first_export(tmp_path: Path) -> None:
    runner = CliRunner()
    folder = tmp_path / "t"
    db = tmp_path / "r.duckdb"
    common = ["--db", str(db)]
    past = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    # Before the export: 4 sessions, the error in 3 of them.
    for i, error in enumerate([True, True, False, True]):
        write_session(folder / f"before-{i}.jsonl", f"before-{i}", past + timedelta(days=i), error=error)
    assert runner.invoke(app, ["ingest", str(folder), *common]).exit_code == 0
    done = runner.invoke(app, ["curate", "--llm", "heuristic", *common], env={"PLAYBOOK_MIN_MESSAGES": "1"})
    assert done.exit_code == 0, done.output
    with open_db(db) as con:
        triggers = con.execute("SELECT DISTINCT trigger FROM entry_triggers").fetchall()
        entry = con.execute(
            "SELECT entry_id FROM entry_triggers WHERE trigger = ? ORDER BY version LIMIT 1", [ERROR]
        ).fetchone()
    assert (ERROR,) in triggers and entry is not None
    entry_id = entry[0]

    # `curate` ends by writing the exports under out_dir: that is the entry's first export.
    listed = runner.invoke(app, ["triggers", entry_id, "--json", *common])
    (row,) = json.loads(listed.stdout)
    assert (row["seen_before"], row["sessions_before"], row["sessions_after"]) == (3, 4, 0)
    assert row["first_exported_at"] is not None

    claude = tmp_path / "CLAUDE.md"
    assert runner.invoke(app, ["export", "--format", "claude-md", "--out", str(claude), *common]).exit_code == 0
    assert f"[{entry_id}]" in claude.read_text()
    # After the export (sessions dated after now): 3 sessions, the error in 1.
    later = datetime.now(UTC) + timedelta(days=30)
    for i, error in enumerate([False, True, False]):
        write_session(folder / f"after-{i}.jsonl", f"after-{i}", later + timedelta(days=i), error=error)
    assert runner.invoke(app, ["ingest", str(folder), *common]).exit_code == 0

    (row,) = json.loads(runner.invoke(app, ["triggers", entry_id, "--json", *common]).stdout)
    assert (row["seen_before"], row["sessions_before"], row["seen_after"], row["sessions_after"]) == (3, 4, 1, 3)
    text = runner.invoke(app, ["triggers", *common], env={"COLUMNS": "200"}).stdout
    assert "seen in 3 of 4 sessions before, 1 of 3 after" in text
    with open_db(db) as con:  # the view answers the same for SQL users
        view = con.execute(
            "SELECT seen_before, sessions_before, seen_after, sessions_after FROM v_trigger_recurrence"
            " WHERE entry_id = ?",
            [entry_id],
        ).fetchone()
    assert view == (3, 4, 1, 3)
    page = write_evolution_report(db, "default", tmp_path / "report").index.read_text()
    assert f"<code>{entry_id}</code>" in page and "3 of 4 (75%)" in page and "1 of 3 (33%)" in page
    assert "% of entries have a trigger" in page  # the newest run's quality figures


def test_a_merged_entry_keeps_the_triggers_of_its_sources(tmp_path: Path) -> None:
    from core.models import ApplyReport, OpOutcome
    from core.operations import apply_operations, empty_playbook
    from core.store.published import trigger_recurrence
    from core.store.registry import ensure_playbook
    from core.store.versions import write_version

    ops = [
        {"type": "ADD", "text": "Use python -m pytest so the package imports.", "trigger": f"  {ERROR}\n"},
        {"type": "ADD", "text": "Install the package in editable mode first.", "trigger": "No module named"},
        {"type": "ADD", "text": "A lesson without a trigger.", "trigger": "x"},
    ]
    added, report = apply_operations(empty_playbook(), ops)
    assert [o.trigger for o in report.outcomes] == [ERROR, "No module named", None]  # cleaned; too short dropped
    ids = [o.entry_id for o in report.outcomes]
    merged, merge_report = apply_operations(
        added, [{"type": "MERGE", "source_ids": ids[:2], "merged_text": "Import errors: use python -m pytest."}]
    )
    with open_db(tmp_path / "m.duckdb") as con:
        ensure_playbook(con, "default")
        write_version(con, "default", added, source="session", report=report)
        write_version(con, "default", merged, source="session", report=merge_report)
        new_id = merge_report.outcomes[0].entry_id
        got = con.execute("SELECT trigger FROM entry_triggers WHERE entry_id = ? ORDER BY trigger", [new_id]).fetchall()
        recurrence = trigger_recurrence(con, "default", new_id)
    assert got == [(ERROR,), ("No module named",)]
    assert recurrence[0].first_exported_at is None
    shown = CliRunner().invoke(app, ["triggers", new_id, "--db", str(tmp_path / "m.duckdb")])
    assert shown.exit_code == 0 and "not exported yet" in shown.stdout
    assert isinstance(merge_report.outcomes[0], OpOutcome) and isinstance(report, ApplyReport)
