"""Every transcript layout seen in the wild (tests/data/layouts, see its MANIFEST.md), ingested through the
CLI: one session per real conversation, counts derived independently from the raw JSON, every file either
ingested or named with its reason."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.store.db import open_db
from flows.cli import app
from tests.helpers import claude_expected, codex_expected, records

LAYOUTS = Path(__file__).resolve().parents[1] / "data" / "layouts"
runner = CliRunner()


def expected_claude_sessions() -> dict[str, list[Path]]:
    """Files grouped by the `sessionId` their conversation records carry; sessions with a main file only."""
    files: dict[str, list[Path]] = defaultdict(list)
    main: set[str] = set()
    for path in sorted((LAYOUTS / "claude").rglob("*.jsonl")):
        talk = [r for r in records(path) if r.get("type") in ("user", "assistant")]
        if not talk:
            continue
        files[talk[0]["sessionId"]].append(path)
        if not talk[0].get("isSidechain"):
            main.add(talk[0]["sessionId"])
    return {sid: paths for sid, paths in files.items() if sid in main}


def expected_codex_sessions() -> dict[str, Path]:
    out = {}
    for path in sorted((LAYOUTS / "codex").rglob("*.jsonl")):
        first = records(path)[0]
        out[first.get("payload", first)["id"]] = path
    return out


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    db = tmp_path_factory.mktemp("layouts") / "l.duckdb"
    result = runner.invoke(app, ["ingest", str(LAYOUTS), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    return db, json.loads(result.stdout)


def sessions(db: Path) -> dict[str, dict[str, object]]:
    result = runner.invoke(app, ["sessions", "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    return {r["session_id"]: r for r in json.loads(result.stdout)}


def test_one_session_per_real_conversation(ingested: tuple[Path, dict[str, object]]) -> None:
    db, _ = ingested
    expected = set(expected_claude_sessions()) | set(expected_codex_sessions())
    assert set(sessions(db)) == expected
    # renamed copy, resumed file and both subagent layouts joined their session; the orphan did not become one
    assert len(expected) == 6 and "0bad0bad-0000-4000-8000-000000000000" not in expected


def test_claude_counts_match_the_raw_json(ingested: tuple[Path, dict[str, object]]) -> None:
    db, _ = ingested
    rows = sessions(db)
    for session_id, paths in expected_claude_sessions().items():
        expected = claude_expected(paths)
        noise = expected.pop("n_noise_records")
        got = {k: rows[session_id][k] for k in expected}
        assert got == expected, session_id
        assert noise >= 1  # the `progress`, `file-history-snapshot`, ... records were counted, not dropped silently


def test_codex_counts_match_the_raw_json(ingested: tuple[Path, dict[str, object]]) -> None:
    db, _ = ingested
    rows = sessions(db)
    for session_id, path in expected_codex_sessions().items():
        expected = codex_expected(path)
        if "older" in path.name:
            expected.pop("n_user_prompts")  # the older layout has no event messages to count prompts from
        assert {k: rows[session_id][k] for k in expected} == expected, session_id
        assert rows[session_id]["format"] == "codex"


def test_every_file_is_ingested_or_named_with_its_reason(ingested: tuple[Path, dict[str, object]]) -> None:
    _, summary = ingested
    files = {Path(f["path"]).name: f for f in summary["files"]}  # type: ignore[union-attr,index]
    transcripts = {p.name for p in LAYOUTS.rglob("*.jsonl")}
    assert set(files) == transcripts  # every transcript is in the summary; no .meta.json is read as one
    not_ingested = {name: (f["status"], f["error"]) for name, f in files.items() if f["status"] != "new"}
    assert not_ingested == {
        "ffffffff-meta-only.jsonl": (
            "unrecognised",
            "no conversation records (holds custom-title x1, permission-mode x1)",
        )
    }
    orphan = files["agent-0rphan1.jsonl"]
    assert orphan["status"] == "new" and "whose main file has not been ingested" in orphan["note"]


def test_current_version_file_keeps_its_identity_and_counts_its_noise(ingested: tuple[Path, dict[str, object]]) -> None:
    db, _ = ingested
    with open_db(db) as con:
        noise = dict(
            con.execute(
                "SELECT record_type, n FROM v_session_noise WHERE session_id = '55604662-cf2a-4331-851a-ec234028f8ca'"
            ).fetchall()
        )
        row = con.execute(
            "SELECT source_path, project FROM sessions WHERE session_id = '55604662-cf2a-4331-851a-ec234028f8ca'"
        ).fetchone()
    assert noise["permission-mode"] == 1 and noise["file-history-snapshot"] >= 1 and noise["progress"] >= 1
    assert row is not None and not Path(row[0]).name.startswith("agent-") and row[1] == "spotter"


def test_subagents_carry_their_meta_and_counts_apart(ingested: tuple[Path, dict[str, object]]) -> None:
    db, _ = ingested
    with open_db(db) as con:
        meta = con.execute(
            "SELECT agent_id, agent_type, agent_description, is_main FROM files WHERE path LIKE '%agent-a7be2f0.jsonl'"
        ).fetchone()
        old = con.execute(
            "SELECT n_subagents, n_subagent_tool_calls, n_files FROM sessions"
            " WHERE session_id = '7acd37a8-2745-4b58-a8a9-46164b22ad9e'"
        ).fetchone()
    assert meta == ("a7be2f0", "Explore", "How Spotter lists tmux panes", False)
    assert old is not None and old[0] == 1 and old[2] == 2  # the project-root agent file joined its parent
