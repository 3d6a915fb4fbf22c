"""Project and global playbooks: sessions are routed by project (globs over project or cwd), one model call
per session serves both playbooks, each operation lands where it says, PROJECT CONTEXT never goes global,
and sessions of unbound projects go to the global playbook only."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.store.db import open_db
from flows.cli import app
from tests.helpers import expose, trust_config

runner = CliRunner()


def write_session(folder: Path, session_id: str, cwd: str, start: datetime) -> None:
    lines = []
    for i, (role, text) in enumerate([("user", "Please fix the failing build"), ("assistant", "Fixed it.")] * 2):
        ts = (start + timedelta(minutes=i)).isoformat().replace("+00:00", "Z")
        record = {"type": role, "sessionId": session_id, "uuid": f"{session_id}-{i}", "timestamp": ts, "cwd": cwd}
        lines.append(json.dumps(record | {"message": {"role": role, "content": text}}))
    path = folder / cwd.replace("/", "-") / f"{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def answers(session_id: str, tags: list[dict], ops: list[dict]) -> list[str]:
    return [
        json.dumps(
            {"session_id": session_id, "step": "reflector", "text": json.dumps({"analysis": "a", "bullet_tags": tags})}
        ),
        json.dumps(
            {"session_id": session_id, "step": "curator", "text": json.dumps({"reasoning": "r", "operations": ops})}
        ),
    ]


@pytest.mark.slow
def test_sessions_are_routed_and_one_call_serves_both_playbooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "projects"
    start = datetime(2026, 4, 1, tzinfo=UTC)
    write_session(folder, "api-1", "/home/u/src/api", start)
    write_session(folder, "api-2", "/home/u/src/api", start + timedelta(days=1))
    write_session(folder, "web-1", "/home/u/src/web", start + timedelta(days=2))
    config = tmp_path / "playbook.toml"
    config.write_text(
        f'db = "{tmp_path / "s.duckdb"}"\nout_dir = "{tmp_path / "out"}"\nmin_messages = 1\nnear_duplicates = "off"\n'
        'playbooks = ["global", "api"]\n[playbook_settings.api]\nprojects = ["*/src/api"]\n'
    )
    monkeypatch.setenv("PLAYBOOK_CONFIG", str(trust_config(config)))
    lines = (
        answers(
            "api-1",
            [],
            [
                {"type": "ADD", "text": "Run make build before the API tests.", "section": "PATTERNS & APPROACHES"},
                {
                    "type": "ADD",
                    "text": "Read the first error of a traceback.",
                    "section": "PATTERNS & APPROACHES",
                    "scope": "global",
                },
                {
                    "type": "ADD",
                    "text": "The API listens on port 8080.",
                    "section": "PROJECT CONTEXT",
                    "scope": "global",
                },
            ],
        )
        + answers(
            "api-2",
            [{"name": "global/pat-001", "tag": "helpful", "rationale": "it read the first error"}],
            [
                {
                    "type": "UPDATE",
                    "target_id": "global/pat-001",
                    "text": "Read the first error of a traceback, not the last.",
                }
            ],
        )
        + answers("web-1", [], [{"type": "ADD", "text": "Check the browser console first.", "section": "OTHERS"}])
    )
    replay = tmp_path / "replay.jsonl"
    replay.write_text("\n".join(lines) + "\n")
    assert runner.invoke(app, ["ingest", str(folder)]).exit_code == 0
    expose(tmp_path / "s.duckdb", {"api-2": ["pat-001"]}, playbook="global")  # api-2's agent had the global lesson

    api = runner.invoke(app, ["curate", "-p", "api", "--llm", f"replay:{replay}", "--json"])
    assert api.exit_code == 0, api.output
    assert json.loads(api.stdout)[0]["sessions_applied"] == 2  # web-1 is not the API's
    glob = runner.invoke(app, ["curate", "-p", "global", "--llm", f"replay:{replay}", "--json"])
    assert json.loads(glob.stdout)[0]["sessions_applied"] == 1  # only web-1: API sessions were served already

    def live(name: str) -> dict[str, str]:
        shown = json.loads(runner.invoke(app, ["show", "-p", name, "--format", "json"]).stdout)["sections"]
        return {e["name"]: (section, e["text"], e["helpful"]) for section, items in shown.items() for e in items}

    assert live("api") == {
        "pat-001": ("PATTERNS & APPROACHES", "Run make build before the API tests.", 0),
        "ctx-001": ("PROJECT CONTEXT", "The API listens on port 8080.", 0),  # never global
    }
    assert live("global") == {
        "pat-001": ("PATTERNS & APPROACHES", "Read the first error of a traceback, not the last.", 1),
        "oth-001": ("OTHERS", "Check the browser console first.", 0),
    }
    with open_db(tmp_path / "s.duckdb") as con:
        calls = con.execute("SELECT session_id, count(*) FROM llm_calls GROUP BY ALL ORDER BY ALL").fetchall()
        applied = con.execute(
            "SELECT playbook, session_id FROM applied_sessions WHERE status = 'applied' ORDER BY ALL"
        ).fetchall()
    assert calls == [("api-1", 2), ("api-2", 2), ("web-1", 2)]  # one reflector and one curator call each
    assert applied == [
        ("api", "api-1"),
        ("api", "api-2"),
        ("global", "api-1"),
        ("global", "api-2"),
        ("global", "web-1"),
    ]


def test_the_curator_prompt_shows_both_playbooks_and_the_scope_rule() -> None:
    from core.curator import curator_request
    from core.models import Entry, Playbook, ReflectorOutput
    from core.prompts import load_template
    from core.scope import combine, scope_note
    from core.sections import DEFAULT_SECTIONS

    project = Playbook(sections={"PROJECT CONTEXT": [Entry(name="ctx-001", text="The API listens on port 8080.")]})
    shared = Playbook(sections={"OTHERS": [Entry(name="oth-001", text="Read the first error.")]})
    request = curator_request(
        load_template("curator"),
        ReflectorOutput(analysis="a"),
        combine(project, shared),
        DEFAULT_SECTIONS,
        model="m",
        session_id="s",
        note=scope_note("global"),
    )
    assert "[ctx-001]" in request.system and "[global/oth-001]" in request.system
    assert 'An ADD goes to this project unless it has "scope": "global"' in request.system
