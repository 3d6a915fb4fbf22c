"""`playbook why`: the whole life of an entry on a crafted history (ADD, a helpful tag, UPDATE, MERGE of two
entries), with the sessions behind each step and what the reflector and the curator said; JSON export
with `sources`."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from tests.helpers import expose, write_session

runner = CliRunner()


def reply(session_id: str, analysis: str, tags: list[dict], reasoning: str, ops: list[dict]) -> list[str]:
    return [
        json.dumps(
            {
                "session_id": session_id,
                "step": "reflector",
                "text": json.dumps({"analysis": analysis, "bullet_tags": tags}),
            }
        ),
        json.dumps(
            {
                "session_id": session_id,
                "step": "curator",
                "text": json.dumps({"reasoning": reasoning, "operations": ops}),
            }
        ),
    ]


@pytest.mark.slow
def test_why_tells_the_whole_life_of_a_merged_entry(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    start = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    for i in range(3):
        write_session(folder / f"s{i}.jsonl", f"s{i}", start + timedelta(days=i), error=True)
    lines = (
        reply(
            "s0",
            "The agent ran pytest outside the venv.",
            [],
            "Two new lessons.",
            [
                {
                    "type": "ADD",
                    "text": "Run tests with python -m pytest.",
                    "section": "MISTAKES TO AVOID",
                    "trigger": "No module named",
                },
                {"type": "ADD", "text": "Activate the venv before running tests.", "section": "MISTAKES TO AVOID"},
            ],
        )
        + reply(
            "s1",
            "mis-001 applied and saved a retry.",
            [{"name": "mis-001", "tag": "helpful", "rationale": "the agent used python -m pytest at once"}],
            "Sharpen mis-001.",
            [{"type": "UPDATE", "target_id": "mis-001", "text": "Run tests with python -m pytest from the repo root."}],
        )
        + reply(
            "s2",
            "Both lessons say the same thing.",
            [],
            "Merge the two test lessons.",
            [
                {
                    "type": "MERGE",
                    "source_ids": ["mis-001", "mis-002"],
                    "merged_text": "Run tests inside the venv with python -m pytest from the repo root.",
                }
            ],
        )
    )
    replay = tmp_path / "replay.jsonl"
    replay.write_text("\n".join(lines) + "\n")
    db = tmp_path / "w.duckdb"
    common = ["--db", str(db)]
    env = {"PLAYBOOK_MIN_MESSAGES": "1", "PLAYBOOK_EPOCH_SIZE": "1", "PLAYBOOK_NEAR_DUPLICATES": "off"}
    env["PLAYBOOK_OUT_DIR"] = str(tmp_path / "out")  # the run exports: inside this test's folder
    assert runner.invoke(app, ["ingest", str(folder), *common]).exit_code == 0
    expose(db, {"s1": ["mis-001"]})  # its agent had the entry it tags (the hook's record)
    done = runner.invoke(app, ["curate", "--llm", f"replay:{replay}", *common], env=env)
    assert done.exit_code == 0, done.output

    life = json.loads(runner.invoke(app, ["why", "mis-003", "--json", *common]).stdout)
    assert life["now"]["text"] == "Run tests inside the venv with python -m pytest from the repo root."
    assert life["now"]["helpful"] == 1  # the tag on a source was summed into the merge
    assert [(e["event"], e["session_id"]) for e in life["events"]] == [("MERGE", "s2")]
    assert life["sessions"]["s2"]["first_prompt"] == "Run the tests please"
    assert life["sessions"]["s2"]["analysis"] == "Both lessons say the same thing."
    assert life["sessions"]["s2"]["reasoning"] == "Merge the two test lessons."
    first, second = life["sources"]
    assert [(e["event"], e["session_id"]) for e in first["events"]] == [
        ("ADD", "s0"),
        ("TAG", "s1"),
        ("UPDATE", "s1"),
        ("MERGED INTO", "s2"),
    ]
    tag = first["events"][1]
    assert (tag["rating"], tag["rationale"]) == ("helpful", "the agent used python -m pytest at once")
    assert first["events"][0]["trigger"] == "No module named" and first["now"] is None
    assert first["events"][2]["old_text"] == "Run tests with python -m pytest."
    assert [e["event"] for e in second["events"]] == ["ADD", "MERGED INTO"]
    assert life["triggers"][0]["triggers"] == "No module named"  # inherited through the merge

    text = runner.invoke(app, ["why", "mis-003", *common], env={"COLUMNS": "250"}).stdout
    for words in (
        "merged from mis-001, mis-002",
        "helpful: the agent used python -m pytest at once",
        "session s0",
        "'Run the tests please'",
        "reflector: The agent ran pytest outside the venv.",
        "curator: Sharpen mis-001.",
        "source of the merge",
    ):
        assert words in text, words

    exported = json.loads(runner.invoke(app, ["export", "--format", "json", "--sources", *common]).stdout)
    (entry,) = exported["sections"]["MISTAKES TO AVOID"]
    assert entry["sources"] == ["s2", "s0", "s1"]

    missing = runner.invoke(app, ["why", "mis-404", *common])
    assert missing.exit_code == 1 and "No entry `mis-404` in playbook `default`" in missing.stderr
