"""The rules weigh a lesson by the project's sessions that showed it, and a run pays only for its own sessions: it
observes the sessions it takes and reads what earlier runs observed, never the rest of the store (a run of 64
sessions in a 20,000-session store used to observe every session of every project it touched)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
from typer.testing import CliRunner

from flows.cli import app
from tests.helpers import claude_session

START = datetime(2026, 3, 2, 9, tzinfo=UTC)
LESSON = "In app: start it with `pnpm dev`."


def dev_server_session(folder: Path, n: int, project: str) -> None:
    """A session of `project` that starts its dev server with `pnpm dev` (one run is not yet a routine; two are)."""
    claude_session(
        folder / project / f"s{n:02d}.jsonl",
        f"{project}-{n:02d}",
        START + timedelta(hours=n),
        [
            ("user", f"Start the dev server and check page {n}"),
            ("assistant", [{"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": "pnpm dev"}}]),
            ("user", [{"type": "tool_result", "tool_use_id": f"t{n}", "content": "ready on port 3000"}]),
            ("assistant", "The page loads."),
            ("user", "Thanks, now check the footer too"),
            ("assistant", "The footer loads as well."),
        ],
        cwd=f"/w/{project}",
    )


def cli(*args: str) -> str:
    out = Path(args[-1]).parent / "out"  # every command here ends with `--db <file>`; exports go beside it
    result = CliRunner().invoke(app, list(args), env={"PLAYBOOK_OUT_DIR": str(out)})
    assert result.exit_code == 0, result.output
    return result.output


def observed(db: Path) -> list[str]:
    with duckdb.connect(str(db), read_only=True) as con:
        return sorted(r[0] for r in con.execute("SELECT session_id FROM observations").fetchall())


def entries(db: Path) -> list[str]:
    shown = json.loads(cli("show", "--format", "json", "--db", str(db)))
    return [e["text"] for section in shown["sections"].values() for e in section]


def test_a_run_observes_its_own_sessions_and_no_other(tmp_path: Path) -> None:
    for n in range(10):  # two projects working the same days, as a team's archive holds them
        dev_server_session(tmp_path / "archive", 2 * n, "app")
        dev_server_session(tmp_path / "archive", 2 * n + 1, "site")
    db = tmp_path / "pb.duckdb"
    cli("ingest", str(tmp_path / "archive"), "--db", str(db))

    cli("curate", "--llm", "heuristic", "--limit", "3", "--db", str(db))
    assert observed(db) == ["app-00", "app-02", "site-01"]  # not the other 17 sessions of the two projects

    cli("curate", "--llm", "heuristic", "--limit", "2", "--db", str(db))
    assert observed(db) == ["app-00", "app-02", "app-04", "site-01", "site-03"]


def test_evidence_adds_up_across_runs(tmp_path: Path) -> None:
    for n in range(3):
        dev_server_session(tmp_path / "archive", n, "app")
    db = tmp_path / "pb.duckdb"
    cli("ingest", str(tmp_path / "archive"), "--db", str(db))

    cli("curate", "--llm", "heuristic", "--limit", "1", "--db", str(db))
    assert LESSON not in entries(db)  # one session: not yet the project's routine

    cli("curate", "--llm", "heuristic", "--limit", "1", "--db", str(db))
    assert LESSON in entries(db)  # the first run's session counts with this one's

    one_run = tmp_path / "one.duckdb"  # the same sessions in one run teach the same lesson
    cli("ingest", str(tmp_path / "archive"), "--db", str(one_run))
    cli("curate", "--llm", "heuristic", "--db", str(one_run))
    assert LESSON in entries(one_run)
