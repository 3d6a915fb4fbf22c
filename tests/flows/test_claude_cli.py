"""Subscription users: `--llm claude-cli` runs `claude -p --output-format json` per request. Tested with a
fake `claude` on PATH (tests/data/fake_claude) that records its arguments and answers like the real CLI,
including its error shapes; the provider never raises. The system prompt (the playbook) goes in a private file,
never on the command line (the fake refuses one over 4 KiB), and the CLI's output is read up to 16 MiB."""

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
from tests.helpers import peak_mib

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
    assert "--system-prompt" not in reflector and calls[0]["stdin"]  # the prompt on stdin, its system part in a file
    assert calls[0]["system"].startswith("You are the Reflector") and calls[0]["system_mode"] == 0o600
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


def test_a_large_system_prompt_goes_in_a_private_file_never_on_the_command_line(fake: Path) -> None:
    """300 KB of system prompt (a large playbook): as an argument, past the kernel's bound of 128 KiB for one, every
    call failed with "Argument list too long"."""
    system = "You are the Reflector.\n" + "".join(
        f"[pat-{i:04d}] Mind the build cache before a push.\n" for i in range(6500)
    )
    assert len(system.encode()) > 300_000
    result = ClaudeCliProvider("claude").complete(REQUEST.model_copy(update={"system": system}))
    assert result.ok, result.error
    (call,) = [json.loads(line) for line in fake.read_text().splitlines()]
    assert call["system"] == system and call["stdin"] == REQUEST.user
    assert call["system_mode"] == 0o600  # only this user reads the playbook
    args = call["args"]
    named = Path(args[args.index("--system-prompt-file") + 1])
    assert named.parent == Path(call["cwd"]) and not named.parent.exists()  # in the call's own folder, gone after
    assert sum(len(a.encode()) + 1 for a in args) < 1024


@pytest.mark.slow
def test_a_300_entry_playbook_is_curated_through_the_claude_cli(fake: Path, tmp_path: Path) -> None:
    """The issue's case: 300 entries with `max_input_tokens = 100000` make a curator system prompt over 128 KiB,
    which failed every curator call with "Argument list too long" while it was an argument."""
    words = "build cache deploy schema index retry timeout parser fixture migration branch module package".split()
    entries = [
        {"name": f"oth-{i:04d}", "text": f"Lesson {i}: " + " ".join(words[(i + k) % 13] for k in range(70))[:460]}
        for i in range(300)
    ]
    book = tmp_path / "big.json"
    book.write_text(json.dumps({"version": "1.0", "sections": {"OTHERS": entries}}))
    db = ["--db", str(tmp_path / "big.duckdb")]
    assert CliRunner().invoke(app, ["import", str(book), *db]).exit_code == 0
    assert CliRunner().invoke(app, ["ingest", str(SAMPLES / "short.jsonl"), *db]).exit_code == 0
    env = {"PLAYBOOK_MIN_MESSAGES": "1", "PLAYBOOK_MAX_INPUT_TOKENS": "100000", "PLAYBOOK_NEAR_DUPLICATES": "lexical"}
    done = CliRunner().invoke(app, ["curate", "--llm", "claude-cli", "--json", *db], env=env)
    assert done.exit_code == 0, done.output
    (summary,) = json.loads(done.stdout)
    assert (summary["sessions_applied"], summary["sessions_failed"]) == (1, 0)
    calls = [json.loads(line) for line in fake.read_text().splitlines()]
    (curator,) = [call["system"] for call in calls if call["system"].startswith("You are the Curator")]
    assert all(f"[oth-{i:04d}]" in curator for i in range(300))  # the whole playbook, nothing left out
    assert len(curator.encode()) > 128 * 1024  # past the kernel's bound for one argument (MAX_ARG_STRLEN)


def test_endless_output_is_read_up_to_16_mib_and_the_cli_is_stopped(
    fake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`claude -p` printing without end: before, all of it was read into memory until the timeout (300 s)."""
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "endless")
    before = peak_mib()
    result = ClaudeCliProvider("claude", timeout=60).complete(REQUEST)
    assert (result.text, result.failure) == (None, "bad_reply")
    assert result.error == (
        "bad reply: answer larger than 16 MiB from `claude -p`, read no further (an answer of `max_tokens` is a few"
        " hundred KB at most)"
    )
    assert result.latency_ms < 30_000  # stopped at the bound, not at the timeout
    (call,) = [json.loads(line) for line in fake.read_text().splitlines()]
    with pytest.raises(ProcessLookupError):
        os.kill(call["pid"], 0)  # killed and reaped, not left printing
    assert peak_mib() - before < 200
