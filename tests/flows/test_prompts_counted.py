"""Counts people can trust: slash commands, their output and IDE notes are typed by no one, so they are not prompts
(each is counted under noise by kind), and a session's first prompt, as `why` quotes it, is the first real one,
masked like every other text."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from typer.testing import CliRunner

from flows.cli import app
from tests.helpers import claude_session

runner = CliRunner()


def test_notes_are_noise_by_kind_and_the_first_prompt_is_the_first_real_one(tmp_path: Path) -> None:
    claude_session(
        tmp_path / "s" / "a.jsonl",
        "sess-a",
        datetime(2026, 3, 1, tzinfo=UTC),
        [
            ("user", "<command-name>/clear</command-name>\n<command-message>clear</command-message>"),
            ("user", "<local-command-stdout>cleared</local-command-stdout>"),
            (
                "user",
                [
                    {
                        "type": "text",
                        "text": "<ide_opened_file>The user opened /Users/alice/w/app.py</ide_opened_file>",
                    },
                    {"type": "text", "text": "fix the failing test in /Users/alice/w/app.py"},
                ],
            ),
            ("assistant", [{"type": "text", "text": "Done."}]),
            ("user", "<command-name>/model</command-name>"),
            ("user", "thanks"),
        ],
    )
    db = str(tmp_path / "p.duckdb")
    assert runner.invoke(app, ["ingest", str(tmp_path / "s"), "--db", db]).exit_code == 0
    (session,) = json.loads(runner.invoke(app, ["sessions", "--json", "--db", db]).stdout)
    assert session["n_user_prompts"] == 2 and session["n_noise_records"] == 4
    noise = runner.invoke(
        app, ["sql", "select record_type, n from file_noise order by record_type", "--json", "--db", db]
    )
    assert json.loads(noise.stdout) == [
        {"record_type": "user/command-output", "n": 1},
        {"record_type": "user/ide-note", "n": 1},
        {"record_type": "user/slash-command", "n": 2},
    ]

    answers = tmp_path / "answers.jsonl"
    add = {"type": "ADD", "section": "PATTERNS & APPROACHES", "text": "Run the failing test alone first."}
    answers.write_text(
        json.dumps({"session_id": "sess-a", "step": "reflector", "text": json.dumps({"analysis": "a"})})
        + "\n"
        + json.dumps({"session_id": "sess-a", "step": "curator", "text": json.dumps({"operations": [add]})})
        + "\n"
    )
    env = {"PLAYBOOK_MIN_MESSAGES": "1", "PLAYBOOK_OUT_DIR": str(tmp_path / "out")}
    done = runner.invoke(app, ["curate", "--llm", f"replay:{answers}", "--db", db], env=env)
    assert done.exit_code == 0, done.output
    life = json.loads(runner.invoke(app, ["why", "pat-001", "--json", "--db", db]).stdout)
    assert life["sessions"]["sess-a"]["first_prompt"] == "fix the failing test in ~/w/app.py"
