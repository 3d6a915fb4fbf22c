"""Subscription users: `--llm claude-cli` runs `claude -p --output-format json` per request. Tested with a
fake `claude` on PATH (tests/data/fake_claude) that records its arguments and answers like the real CLI,
including its error shapes; the provider never raises."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.llm.base import LLMRequest
from core.llm.claude_cli import ClaudeCliProvider
from core.store.db import open_db
from flows.cli import app

ROOT = Path(__file__).resolve().parents[2]
FAKE = ROOT / "tests" / "data" / "fake_claude"
SAMPLES = ROOT / "data" / "samples" / "claude-code" / "spotter"
REQUEST = LLMRequest(
    step="reflector",
    model="claude-sonnet-4-5",
    system="You are the Reflector",
    user="the transcript",
    schema_name="ReflectorOutput",
)


@pytest.fixture(autouse=True)
def _exports_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs export to `out_dir` (default `data/out` where they run): this test's folder, not the checkout."""
    monkeypatch.setenv("PLAYBOOK_OUT_DIR", str(tmp_path / "out"))


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "claude.log"
    monkeypatch.setenv("PATH", f"{FAKE}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CLAUDE_LOG", str(log))
    monkeypatch.setenv("PLAYBOOK_CLAUDE_CLI", "claude")
    return log


def test_curate_through_the_claude_cli(fake: Path, tmp_path: Path) -> None:
    db = ["--db", str(tmp_path / "c.duckdb")]
    assert CliRunner().invoke(app, ["ingest", str(SAMPLES / "short.jsonl"), *db]).exit_code == 0
    done = CliRunner().invoke(app, ["curate", "--llm", "claude-cli", "--json", *db], env={"PLAYBOOK_MIN_MESSAGES": "1"})
    assert done.exit_code == 0, done.output
    (summary,) = json.loads(done.stdout)
    assert summary["provider"] == "claude-cli" and summary["sessions_applied"] == 1
    calls = [json.loads(line) for line in fake.read_text().splitlines()]
    assert len(calls) == 2
    reflector = calls[0]["args"]
    assert reflector[:4] == ["-p", "--output-format", "json", "--model"] and "--max-turns" in reflector
    assert "Reflector" in reflector[reflector.index("--system-prompt") + 1] and calls[0]["stdin"]  # prompt on stdin
    with open_db(tmp_path / "c.duckdb") as con:
        rows = con.execute("SELECT provider, input_tokens, output_tokens, cost_usd FROM llm_calls").fetchall()
        texts = con.execute("SELECT text FROM entries WHERE valid_to IS NULL").fetchall()
    assert rows == [("claude-cli", 321, 45, 0.0123)] * 2 and texts == [("Run make lint before pushing.",)]


@pytest.mark.parametrize(
    ("mode", "failure", "words"),
    [
        ("not-logged-in", "auth", "Please run /login"),
        ("garbage", "bad_reply", "no JSON envelope"),
        ("error", "other", "reported an error: overloaded"),
        ("over-limit", "truncated", "truncated: `claude -p` reported: API Error: Claude's response exceeded the 32000"),
    ],
)
def test_every_error_shape_comes_back_as_an_error(
    fake: Path, monkeypatch: pytest.MonkeyPatch, mode: str, failure: str, words: str
) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_MODE", mode)
    result = ClaudeCliProvider("claude").complete(REQUEST)
    assert result.text is None and result.failure == failure and words in (result.error or "")


def test_an_answer_cut_at_the_output_limit_is_a_failed_call(fake: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The result message's `stop_reason: max_tokens`: the text is kept for the record, never parsed."""
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "truncated")
    result = ClaudeCliProvider("claude").complete(REQUEST)
    assert (result.ok, result.failure, result.cost_usd) == (False, "truncated", 0.0123)
    assert result.text == (
        '{"analysis": "The lint step failed before the push.", "bullet_tags": [{"name": "pat-001", "tag": "helpful",'
        ' "rationale": "it was followed"}'
    )
    assert result.error == (
        "truncated: the model stopped at its output limit (`claude -p` said `stop_reason: max_tokens`) before the"
        " answer ended"
    )


@pytest.mark.slow
def test_a_hanging_cli_is_stopped_and_a_missing_one_is_named(
    fake: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "slow")
    result = ClaudeCliProvider("claude", timeout=1).complete(REQUEST)
    assert result.failure == "timeout" and "over 1 s" in (result.error or "")
    gone = ClaudeCliProvider(str(tmp_path / "no-claude")).complete(REQUEST)
    assert gone.failure == "other" and "cannot run" in (gone.error or "")
    refused = CliRunner().invoke(
        app,
        ["curate", "--llm", "claude-cli", "--db", str(tmp_path / "x.duckdb")],
        env={"PLAYBOOK_CLAUDE_CLI": "no-such-claude"},
    )
    assert refused.exit_code == 1 and "which is not on PATH" in refused.stderr


def test_the_cli_runs_isolated_from_the_users_set_up(
    fake: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user's SessionEnd hook (a `playbook push` one, say), their MCP servers, the project's CLAUDE.md: none
    acts during a curation call, and the call leaves no session file. The fake `claude` does each of these when
    the flags do not stop it, as the real CLI does (checked first)."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    marker = tmp_path / "hook-ran"
    hook = {"hooks": [{"type": "command", "command": f"touch {marker}"}]}
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"SessionEnd": [hook]}}))
    project = tmp_path / "project"
    project.mkdir()
    (project / "CLAUDE.md").write_text("Always run `playbook push` at the end.\n")
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"x": {"command": "x"}}}))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDECODE", "1")  # as when a hook inside a Claude Code session runs playbook
    monkeypatch.chdir(project)

    import subprocess

    subprocess.run(["claude", "-p"], input="hi", text=True, capture_output=True, check=True)  # not isolated
    plain = json.loads(fake.read_text().splitlines()[-1])
    assert marker.exists() and plain["session_file"] and plain["mcp"] and plain["claude_md"]
    marker.unlink()
    for found in (home / ".claude" / "projects").rglob("*.jsonl"):
        found.unlink()

    result = ClaudeCliProvider("claude").complete(REQUEST)
    assert result.ok, result.error
    call = json.loads(fake.read_text().splitlines()[-1])
    assert (
        call["hooks_run"] == [] and call["session_file"] is None and call["mcp"] is None and call["claude_md"] is None
    )
    assert not marker.exists() and list((home / ".claude" / "projects").rglob("*.jsonl")) == []
    assert Path(call["cwd"]).name.startswith("playbook-claude-") and not Path(call["cwd"]).exists()
    assert "CLAUDECODE" not in call["env"]
    args = call["args"]
    for flag in ("--setting-sources=", "--strict-mcp-config", "--no-session-persistence", "--disable-slash-commands"):
        assert flag in args, flag
    assert args[args.index("--tools") + 1] == "" and json.loads(args[args.index("--mcp-config") + 1]) == {
        "mcpServers": {}
    }
