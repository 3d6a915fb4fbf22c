"""The Prefect flows end to end, against the session's real Prefect server."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.store.db import open_db
from flows.cli import app
from flows.config import Settings
from flows.workspace import Workspace

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _exports_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs export to `out_dir` (default `data/out` where they run): this test's folder, not the checkout."""
    monkeypatch.setenv("PLAYBOOK_OUT_DIR", str(tmp_path / "out"))


def ingest_into(db: Path, paths: list[Path]) -> None:
    # In a function of its own: a test's frame can outlive it (a failed flow's traceback keeps frames), and
    # a connection object left in one is reported as leaked when the interpreter exits.
    from core.store.ingest import ingest

    with open_db(db) as con:
        ingest(con, paths)


@pytest.fixture
def harness(prefect_api: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The session's real Prefect server, as a user configures one (`PREFECT_API_URL`): runs go through the flows."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from flows.run._runtime import local_run

    monkeypatch.setenv("PREFECT_API_URL", prefect_api)
    with temporary_settings(updates={PREFECT_API_URL: prefect_api}), local_run():
        yield


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    target = tmp_path / "archive"
    shutil.copytree(ROOT / "data" / "samples" / "claude-code" / "spotter", target / "spotter")
    shutil.copytree(ROOT / "data" / "samples" / "codex", target / "codex")
    return target


def test_nightly_flow_end_to_end(harness: None, archive: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from flows.run.pipeline import nightly_flow

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("PLAYBOOK_OUT_DIR", str(tmp_path / "out"))
    db = tmp_path / "nightly.duckdb"
    settings = Workspace.of(Settings(db=db, out_dir=tmp_path / "out", anthropic_api_key=None))
    reports = nightly_flow(settings, settings.provider("auto"), transcripts=[archive])
    (report,) = reports
    assert report.provider == "heuristic" and report.status == "ok"
    assert report.notices[0].startswith("No model is set up here: using the rules (heuristic provider).")
    assert report.sessions_applied >= 1 and report.sessions_applied + report.sessions_skipped == 6
    exported = json.loads((tmp_path / "out" / "default.json").read_text())
    assert set(exported) == {"contract_version", "version", "last_updated", "sections"}
    assert (tmp_path / "out" / "default.md").read_text().startswith("# Playbook `default`")
    again = nightly_flow(settings, settings.provider("auto"), transcripts=[archive])
    assert (again[0].status, again[0].sessions_considered, again[0].calls_made) == ("nothing-to-do", 0, 0)
    with open_db(db) as con:
        runs = con.execute("SELECT kind, status FROM runs ORDER BY started_at").fetchall()
    assert runs == [("nightly", "ok"), ("nightly", "nothing-to-do")]
    # the second nightly copied the database aside before writing (the first found no database yet)
    assert len(list((tmp_path / "nightly.duckdb.backups").glob("*.duckdb"))) == 1


def test_nightly_consolidates_when_the_duplicate_rate_is_too_high(
    harness: None, archive: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flows.run.pipeline import nightly_flow

    lessons = json.loads((ROOT / "data" / "lessons" / "paraphrases.json").read_text())["lessons"]
    entries = [  # two wordings of one lesson, kept from before near-duplicates were detected
        {"name": "pat-001", "text": lessons[1][0], "helpful": 1, "harmful": 0},
        {"name": "pat-002", "text": lessons[1][3], "helpful": 0, "harmful": 0},
    ]
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"version": "1.0", "sections": {"PATTERNS & APPROACHES": entries}}))
    db = tmp_path / "nightly.duckdb"
    assert runner.invoke(app, ["import", str(path), "--db", str(db)]).exit_code == 0
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    settings = Workspace.of(Settings(db=db, out_dir=tmp_path / "out", anthropic_api_key=None, min_messages=1))
    (report,) = nightly_flow(settings, settings.provider("auto"), transcripts=[archive])
    assert report.sessions_applied >= 1
    notice = next(n for n in report.notices if n.startswith("Consolidated because duplicate rate"))
    assert "1 cluster(s) merged" in notice
    with open_db(db) as con:
        kinds = con.execute("SELECT kind, status FROM runs ORDER BY started_at").fetchall()
        live = con.execute("SELECT text FROM entries WHERE valid_to IS NULL").fetchall()
    assert kinds == [("nightly", "ok"), ("consolidate", "ok")]
    assert (lessons[1][0],) in live and (lessons[1][3],) not in live  # pat-001 had the better evidence
    assert lessons[1][3] not in (tmp_path / "out" / "default.md").read_text()  # the export came after


def test_curate_flow_with_replay_and_artifact(
    harness: None, archive: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prefect.client.orchestration import get_client

    from flows.run.pipeline import curate_flow

    monkeypatch.setenv("PLAYBOOK_OUT_DIR", str(tmp_path / "out"))
    db = tmp_path / "curate.duckdb"
    ingest_into(db, [archive / "spotter" / "short.jsonl"])
    replay = tmp_path / "r.jsonl"
    replay.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {
                    "session_id": "55604662-cf2a-4331-851a-ec234028f8ca",
                    "step": "reflector",
                    "text": '{"analysis": "server did not start", "bullet_tags": []}',
                },
                {
                    "session_id": "55604662-cf2a-4331-851a-ec234028f8ca",
                    "step": "curator",
                    "text": '{"reasoning": "r", "operations": [{"type": "ADD", '
                    '"text": "Check the port before mix phx.server."}]}',
                },
            ]
        )
    )
    monkeypatch.setenv("PLAYBOOK_MIN_MESSAGES", "1")
    settings = Workspace.of(Settings(db=db, out_dir=tmp_path / "out"))
    report = curate_flow(settings, settings.provider(f"replay:{replay}"), settings.playbook)
    assert (report.sessions_applied, report.ops["ADD"]["applied"]) == (1, 1)

    async def latest() -> str:
        async with get_client() as client:
            artifact = await client.read_latest_artifacts()
            return "\n".join(str(a.data) for a in artifact if a.key == "playbook-curate-report")

    import asyncio

    assert "playbook curate run" in asyncio.run(latest())


def test_nightly_with_no_configuration_finds_the_claude_folder(
    harness: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layouts = ROOT / "tests" / "data" / "layouts" / "claude" / "projects"
    home = tmp_path / "home"
    shutil.copytree(layouts / "-home-marco-projects-spotter", home / ".claude" / "projects" / "spotter")
    for name in (
        "PLAYBOOK_TRANSCRIPTS",
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "ANTHROPIC_API_KEY",
        "PLAYBOOK_DB",
        "PLAYBOOK_OUT_DIR",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PLAYBOOK_MIN_MESSAGES", "1")
    monkeypatch.chdir(tmp_path)  # the default database and exports land in ./data
    result = runner.invoke(app, ["nightly", "--llm", "auto"])
    assert result.exit_code == 0, result.output
    assert "heuristic" in result.stdout and "1 applied" in result.stdout
    assert (tmp_path / "data" / "out" / "default.md").exists()


def test_exit_codes_and_flow_state_say_what_happened(
    harness: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.sorting import FlowRunSort

    monkeypatch.setenv("PLAYBOOK_MIN_MESSAGES", "1")
    db = tmp_path / "codes.duckdb"
    samples = ROOT / "data" / "samples" / "claude-code"
    ingest_into(db, [samples / "spotter" / "short.jsonl", samples / "claude-code-viewer"])
    short, viewer = "55604662-cf2a-4331-851a-ec234028f8ca", "fe5e1c67-53e7-4862-81ae-d0e013e3270b"
    answers = {
        "reflector": '{"analysis": "a", "bullet_tags": []}',
        "curator": '{"reasoning": "r", "operations": [{"type": "ADD", "text": "Check the port first."}]}',
    }
    nothing = tmp_path / "nothing.jsonl"
    nothing.write_text("")  # no recorded answer at all: every call fails
    common = ["curate", "--db", str(db), "--json"]
    failed = runner.invoke(app, [*common, "--llm", f"replay:{nothing}"])
    assert failed.exit_code == 1
    assert failed.stderr.strip().splitlines()[-1].startswith("Error: Every session this run attempted failed (2)")
    assert json.loads(failed.stdout)[0]["status"] == "failed"  # the summary is still printed

    async def last_state() -> str:
        async with get_client() as client:
            (run,) = await client.read_flow_runs(sort=FlowRunSort.START_TIME_DESC, limit=1)
            return str(run.state_type.value if run.state_type else "")

    import asyncio

    assert asyncio.run(last_state()) == "FAILED"  # Prefect (and cron) see the failure too
    half = tmp_path / "half.jsonl"
    half.write_text("\n".join(json.dumps({"session_id": short, "step": s, "text": t}) for s, t in answers.items()))
    partial = runner.invoke(app, [*common, "--llm", f"replay:{half}"])
    assert partial.exit_code == 3 and json.loads(partial.stdout)[0]["status"] == "partial"
    assert viewer in json.loads(partial.stdout)[0]["failures"]
    assert asyncio.run(last_state()) == "COMPLETED"
