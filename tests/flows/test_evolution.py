"""The evolution report: empty, one-version and long histories; and a real headless browser."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from core.models import CuratorOutput, ReflectorOutput
from core.operations import apply_session
from core.store.db import open_db
from core.store.registry import ensure_playbook
from core.store.versions import load_version, write_version
from flows.insight.evolution import CHARTS, write_evolution_report
from tests.helpers import long_history, one_version


@pytest.mark.slow
@pytest.mark.parametrize("history", ["empty", "one", "long"])
def test_report_for_any_history(tmp_path: Path, history: str) -> None:
    db = tmp_path / "r.duckdb"
    if history == "empty":
        with open_db(db) as con:
            ensure_playbook(con, "default")
    elif history == "one":
        one_version(db)
    else:
        long_history(db, 3000)
    result = write_evolution_report(db, "default", tmp_path / "out")
    page = result.index.read_text()
    assert page.count("<img ") == len(CHARTS) == 8
    assert all(p.stat().st_size > 5000 and p.read_bytes()[:4] == b"\x89PNG" for p in result.charts)
    assert "http://" not in page and "https://" not in page  # opens from disk with no network
    expected = {
        "empty": "1 version (0 to 0)",
        "one": "2 versions (0 to 1) · 1 operations applied",
        "long": "3001 versions (0 to 3000)",  # as many as `history --limit 0` lists
    }[history]
    assert expected in page
    if history == "long":
        assert "<code>mis-" in page  # most helpful / harmful tables filled


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@pytest.mark.slow
@pytest.mark.parametrize("history", ["empty", "long"])
def test_report_renders_in_a_real_headless_browser(tmp_path: Path, history: str) -> None:
    """Every chart of a report with data, and of an empty one, decodes and shows in a real browser."""
    browser = chromium()
    if browser is None:
        pytest.skip("no chromium on this machine (.ci/run installs Debian's `chromium`); browser check skipped")
    db = tmp_path / "b.duckdb"
    if history == "long":
        long_history(db, 500)
    else:
        with open_db(db) as con:
            ensure_playbook(con, "default")
    result = write_evolution_report(db, "default", tmp_path / "out")
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    dom = subprocess.run(
        [browser, *flags, "--virtual-time-budget=5000", "--dump-dom", result.index.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    rendered = re.search(r'data-rendered-charts="(\d+)"', dom)
    assert rendered is not None, dom[:500]
    assert int(rendered.group(1)) == len(CHARTS)
    shot = tmp_path / "screenshot.png"
    subprocess.run(
        [browser, *flags, "--window-size=1000,2400", f"--screenshot={shot}", result.index.as_uri()],
        capture_output=True,
        timeout=120,
    )
    assert shot.exists() and shot.stat().st_size > 10_000


def test_skips_are_grouped_by_code_in_the_chart_the_view_and_the_run_summary(tmp_path: Path) -> None:
    from core.runsummary import RunSummary
    from core.store.analytics import evolution_data

    db = tmp_path / "codes.duckdb"
    summary = RunSummary(run_id="r", kind="curate")
    with open_db(db) as con:
        ensure_playbook(con, "default")
        current = load_version(con, "default")
        sessions = [
            [{"type": "ADD", "text": "Run the narrowest test first."}, {"type": "DELETE", "target_id": "ghost-1"}],
            [
                {"type": "ADD", "text": "Run the narrowest test first."},  # duplicate text
                {"type": "ADD", "text": "Read the error before editing."},
                {"type": "DELETE", "target_id": "ghost-2"},
            ],
            [{"type": "ADD", "text": "Read the error before editing."}],  # another duplicate, another text
        ]
        for i, ops in enumerate(sessions):
            current, report = apply_session(current, ReflectorOutput(), CuratorOutput(operations=ops))
            version = write_version(con, "default", current, source="session", session_id=f"s{i}", report=report)
            summary.add_apply(report, version)
        data = evolution_data(con, "default")
        stored = con.execute(
            "SELECT type, code, count(*) FROM operations WHERE status = 'skipped' GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        view = con.execute("SELECT type, code, sum(n)::INT FROM v_skip_reasons GROUP BY ALL ORDER BY ALL").fetchall()
    assert stored == [("ADD", "duplicate_text", 2), ("DELETE", "not_found", 2)]
    assert view == [("ADD", "duplicate_text", 2), ("DELETE", "not_found", 2)]
    # two duplicate-text skips of different texts are one bar; two missing ids are one bar
    assert sorted(data.skip_reasons) == [("ADD: duplicate text", 2), ("DELETE: not found", 2)]
    assert summary.skip_reasons == {"DELETE: not found": 2, "ADD: duplicate text": 2}
