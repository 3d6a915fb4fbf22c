"""A keyless run (the rules, no model) writes one version per epoch, not one per session, and every change in it
still names the session that made it: `playbook why`, the ledger and the sessions each version applied. It renders
no prompt (no model reads one): nothing is fitted to a budget or counted as redacted by a rendering. What the rules
found is stored as their findings, not as model exchanges."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.miner import MINER_VERSION
from core.selection import SessionFilter
from core.store.db import open_db
from core.store.history import history, version_changes
from core.store.ingest import ingest
from core.store.provenance import entry_life
from flows.cli import app
from flows.config import Settings
from flows.run.curation import run_curation
from flows.workspace import Workspace
from tests.helpers import claude_session

START = datetime(2026, 4, 1, 9, tzinfo=UTC)
SESSIONS = 10


# A command of its own for each project, and the one that works where it fails (lessons too alike would be taken for
# near-duplicates of one another and skipped).
COMMANDS = [
    ("pytest", "python -m pytest"),
    ("cargo build", "cargo build --release"),
    ("npm start", "npm run dev"),
    ("make docs", "mkdocs build"),
    ("go vet", "go vet ./..."),
    ("bundle exec rake", "rake spec"),
    ("gradle assemble", "./gradlew assemble"),
    ("tox", "nox -s lint"),
    ("deno task serve", "deno run main.ts"),
    ("mix compile", "mix deps.get"),
]


def failing_then_fixed(path: Path, session_id: str, start: datetime, project: str, number: int) -> None:
    """A session in its own project: its command fails, another one works."""
    fails, works = COMMANDS[number]
    claude_session(
        path,
        session_id,
        start,
        [
            ("user", "Run the tests please"),
            ("assistant", [{"type": "tool_use", "id": f"{session_id}-1", "name": "Bash", "input": {"command": fails}}]),
            (
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": f"{session_id}-1",
                        "content": f"{fails.split()[0]}: error: no such target",
                        "is_error": True,
                    }
                ],
            ),
            (
                "assistant",
                [
                    {
                        "type": "tool_use",
                        "id": f"{session_id}-2",
                        "name": "Bash",
                        "input": {"command": works},
                    }
                ],
            ),
            ("user", [{"type": "tool_result", "tool_use_id": f"{session_id}-2", "content": "3 passed"}]),
            ("assistant", "All tests pass now."),
        ],
        cwd=f"/w/{project}",
    )


@pytest.mark.slow
def test_a_keyless_epoch_writes_one_version_and_each_entry_names_its_session(tmp_path: Path) -> None:
    db = tmp_path / "k.duckdb"
    projects = {f"s{i}": f"proj{i}" for i in range(SESSIONS)}  # session s3 works in project proj3
    for i, (sid, project) in enumerate(projects.items()):
        failing_then_fixed(tmp_path / "t" / f"{sid}.jsonl", sid, START + timedelta(hours=i), project, i)
    with open_db(db) as con:
        ingest(con, [tmp_path / "t"])
    ws = Workspace.of(Settings(db=db, out_dir=tmp_path / "out", min_messages=1))
    summary = run_curation(ws, "default", ws.provider("heuristic"), chosen=SessionFilter(epoch_size=SESSIONS))
    assert summary.sessions_applied == SESSIONS and summary.epochs == 1

    with open_db(db) as con:
        rows = [r for r in history(con, "default") if r.source == "session"]
        applied = dict(
            con.execute("SELECT session_id, version FROM applied_sessions WHERE status = 'applied'").fetchall()
        )
        held = [r[0] for r in con.execute("SELECT session_id FROM version_sessions ORDER BY session_id").fetchall()]
        names = [r[0] for r in con.execute("SELECT name FROM entries WHERE valid_to IS NULL").fetchall()]
        lives = {name: entry_life(con, "default", name) for name in names}
        changed = version_changes(con, "default", 0, rows[0].version)
        exchanges = con.execute("SELECT count(*) FROM llm_calls").fetchone()
        found = con.execute(
            "SELECT session_id, run_id, playbook_version, miner_version, json_extract_string(reflection, '$.analysis'),"
            " curation IS NOT NULL, error FROM rules_findings ORDER BY session_id"
        ).fetchall()
        rendered = con.execute("SELECT count(*) FROM sessions WHERE n_secrets_redacted IS NOT NULL").fetchone()
    assert len(rows) == 1  # one version for the epoch's ten sessions
    (version,) = rows
    # Each session that taught a lesson taught it about its own project; `why` names that session for it.
    taught: set[str] = set()
    for life in lives.values():
        adds = [e for e in life["events"] if e["event"] == "ADD"]
        assert len(adds) == 1 and adds[0]["version"] == version.version, life
        sid = adds[0]["session_id"]
        assert f"In {projects[sid]}:" in (life["now"] or {})["text"], life
        assert set(life["sessions"]) == {sid}
        taught.add(sid)
    assert len(taught) >= 3 and len(names) > len(taught)  # several sessions, one of them with two lessons
    assert version.session_id is None and version.note == f"{len(taught)} sessions of one epoch"
    assert held == sorted(taught) and changed.sessions == len(taught) and changed.versions == 1
    # The ledger: every session applied at that version (the quiet ones came after the first that taught).
    assert applied == dict.fromkeys(projects, version.version)
    assert rendered == (0,)  # no prompt rendered for the rules, so none fitted to a budget or redacted
    # The rules' results are their findings, one row a session, not model exchanges with a prompt, tokens and a cost.
    assert exchanges == (0,)
    assert [r[:4] for r in found] == [(sid, summary.run_id, 0, MINER_VERSION) for sid in sorted(projects)]
    assert all(r[4] and r[5] and r[6] is None for r in found)

    told = CliRunner().invoke(app, ["why", names[0], "--json", "--db", str(db)])
    assert told.exit_code == 0, told.output
    sessions = json.loads(told.stdout)["sessions"]
    assert set(sessions) == {lives[names[0]]["events"][0]["session_id"]}
    ((sid, said),) = sessions.items()  # what the rules found in it, read from their findings
    full = " ".join(dict((r[0], r[4]) for r in found)[sid].split())
    assert said["analysis"] and said["analysis"][:60] == full[:60]
