"""`--llm auto` uses what the machine already has: an API key, a logged-in `claude`, a logged-in `codex`, a local
server, else the rules. Through the CLI, with fake `claude` and `codex` executables on PATH that answer in the
real CLIs' documented shapes (tests/data/fake_claude, tests/data/fake_codex); no network."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.llm.base import LLMRequest
from core.llm.codex_cli import CodexCliProvider
from core.store.db import open_db
from flows.cli import app
from tests.helpers import SAMPLES, write_session

ROOT = Path(__file__).resolve().parents[2]
FAKES = f"{ROOT / 'tests' / 'data' / 'fake_claude'}:{ROOT / 'tests' / 'data' / 'fake_codex'}"
SHORT = SAMPLES / "claude-code" / "spotter" / "short.jsonl"
runner = CliRunner()


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Both CLIs installed (fakes on PATH), no API key; each test says who is logged in."""
    monkeypatch.setenv("PATH", f"{FAKES}:{os.environ['PATH']}")
    monkeypatch.setenv("PLAYBOOK_CLAUDE_CLI", "claude")
    monkeypatch.setenv("PLAYBOOK_CODEX_CLI", "codex")
    monkeypatch.setenv("FAKE_CLAUDE_LOG", str(tmp_path / "claude.log"))
    monkeypatch.setenv("FAKE_CODEX_LOG", str(tmp_path / "codex.log"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    for name in ("ANTHROPIC_API_KEY", "PLAYBOOK_ANTHROPIC_API_KEY", "PLAYBOOK_OPENAI_BASE_URL", "PLAYBOOK_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    db = str(tmp_path / "a.duckdb")
    assert runner.invoke(app, ["ingest", str(SHORT), "--db", db]).exit_code == 0
    return {"db": db, "PLAYBOOK_MIN_MESSAGES": "1"}


def picked(machine: dict[str, str], env: dict[str, str]) -> tuple[str, str]:
    """(what `doctor` says auto picks, and why)."""
    shown = runner.invoke(app, ["doctor", "--json", "--db", machine["db"]], env=env)
    provider = json.loads(shown.stdout)["provider"]
    return provider["auto_picks"], provider["why"]


@pytest.mark.slow
def test_a_logged_in_claude_comes_first_without_a_key(machine: dict[str, str], tmp_path: Path) -> None:
    env = {"FAKE_CLAUDE_LOGIN": "claude.ai", "FAKE_CODEX_LOGIN": "chatgpt"}
    assert picked(machine, env) == ("claude-cli", "`claude` is logged in (claude.ai)")
    done = runner.invoke(app, ["curate", "--json", "--db", machine["db"]], env=env | machine)
    assert done.exit_code == 0, done.output
    (summary,) = json.loads(done.stdout)
    assert summary["provider"] == "claude-cli" and summary["sessions_applied"] == 1
    assert not (tmp_path / "codex.log").exists()  # asked whether it is logged in, never to answer


@pytest.mark.slow
def test_a_logged_in_codex_answers_when_claude_is_not(machine: dict[str, str], tmp_path: Path) -> None:
    env = {"FAKE_CLAUDE_LOGIN": "none", "FAKE_CODEX_LOGIN": "chatgpt"}
    assert picked(machine, env) == ("codex-cli", "`codex` is logged in (ChatGPT)")
    config = tmp_path / "codex-home" / "config.toml"
    config.parent.mkdir()
    config.write_text('[mcp_servers.stranger]\ncommand = "stranger-mcp"\n')  # the user's own set-up
    done = runner.invoke(app, ["curate", "--json", "--db", machine["db"]], env=env | machine)
    assert done.exit_code == 0, done.output
    (summary,) = json.loads(done.stdout)
    assert summary["provider"] == "codex-cli" and summary["sessions_applied"] == 1
    calls = [json.loads(line) for line in (tmp_path / "codex.log").read_text().splitlines()]
    assert len(calls) == 2
    for call in calls:
        args = call["args"]
        assert args[:2] == ["exec", "--json"] and args[-1] == "-"  # the prompt on stdin
        assert {"--ignore-user-config", "--ignore-rules", "--ephemeral", "--skip-git-repo-check"} <= set(args)
        assert args[args.index("--sandbox") + 1] == "read-only" and call["config_loaded"] is None
        assert call["cwd"] == args[args.index("--cd") + 1] and "playbook-codex-" in call["cwd"]  # an empty folder
    assert calls[0]["stdin"].startswith("You are the Reflector") and "You are the Curator" in calls[1]["stdin"]
    with open_db(machine["db"]) as con:
        rows = con.execute(
            "SELECT provider, input_tokens, cache_read_tokens, output_tokens, cost_usd FROM llm_calls"
        ).fetchall()
        texts = con.execute("SELECT text FROM entries WHERE valid_to IS NULL").fetchall()
    assert rows == [("codex-cli", 1000, 200, 60, 0.0)] * 2
    assert texts == [("Run make check before pushing.",)]


def test_a_key_comes_before_any_cli(machine: dict[str, str]) -> None:
    env = {"ANTHROPIC_API_KEY": "sk-ant-test-000", "FAKE_CLAUDE_LOGIN": "claude.ai"}
    auto, why = picked(machine, env)
    assert auto == "anthropic" and why.startswith("an Anthropic API key is set")


def test_nothing_set_up_means_the_rules(machine: dict[str, str]) -> None:
    env = {"FAKE_CLAUDE_LOGIN": "none", "FAKE_CODEX_LOGIN": "none"}
    assert picked(machine, env)[0] == "heuristic"
    done = runner.invoke(app, ["curate", "--db", machine["db"]], env=env | machine)
    assert done.exit_code == 0, done.output
    assert "No model is set up here" in done.stderr and not Path(os.environ["FAKE_CODEX_LOG"]).exists()


@pytest.mark.slow
def test_a_subscription_run_stops_at_its_call_cap_and_the_dry_run_counts_calls(
    machine: dict[str, str], tmp_path: Path
) -> None:
    folder = tmp_path / "more"
    for i in range(3):
        write_session(folder / f"s{i}.jsonl", f"s{i}", datetime(2026, 3, 1 + i, tzinfo=UTC), error=True)
    assert runner.invoke(app, ["ingest", str(folder), "--db", machine["db"]]).exit_code == 0
    env = {"FAKE_CLAUDE_LOGIN": "none", "FAKE_CODEX_LOGIN": "chatgpt", "PLAYBOOK_MAX_CALLS": "3"}
    planned = runner.invoke(app, ["curate", "--dry-run", "--db", machine["db"]], env=env | machine)
    assert planned.exit_code == 0, planned.output
    said = " ".join(planned.stdout.split())
    assert "a ChatGPT plan: nothing is billed per token" in said and "8 calls, at most 3 a run" in said
    assert "4 run(s)" in said and "$" not in said  # one session (two calls) a run fits under 3
    made = 0
    for _night in range(4):
        done = runner.invoke(app, ["curate", "--json", "--db", machine["db"]], env=env | machine)
        assert done.exit_code == 0, done.output
        (summary,) = json.loads(done.stdout)
        assert (summary["sessions_applied"], summary["sessions_failed"]) == (1, 0)  # whole sessions, none half done
        calls = len((tmp_path / "codex.log").read_text().splitlines())
        assert 0 < calls - made <= 2  # never over the cap (an answer asked before is reused, not paid again)
        made = calls
    last = runner.invoke(app, ["curate", "--json", "--db", machine["db"]], env=env | machine)
    assert json.loads(last.stdout)[0]["status"] == "nothing-to-do"


@pytest.mark.parametrize(
    ("mode", "login", "failure", "words"),
    [
        ("turn-failed", "chatgpt", "other", "stream disconnected"),
        ("garbage", "chatgpt", "bad_reply", "codex is starting"),
        ("ok", "none", "auth", "Not logged in"),
        ("endless", "chatgpt", "bad_reply", "answer larger than 16 MiB from `codex exec`, read no further"),
    ],
)
def test_codex_failure_shapes_come_back_as_errors(
    mode: str, login: str, failure: str, words: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CODEX_LOG", str(tmp_path / "codex.log"))
    monkeypatch.setenv("FAKE_CODEX_MODE", mode)
    monkeypatch.setenv("FAKE_CODEX_LOGIN", login)
    provider = CodexCliProvider(str(ROOT / "tests" / "data" / "fake_codex" / "codex"))
    request = LLMRequest(
        step="reflector", model="m", system="You are the Reflector", user="x", schema_name="ReflectorOutput"
    )
    answer = provider.complete(request)
    assert answer.text is None and answer.failure == failure and words in (answer.error or "")


def test_codex_takes_a_large_prompt_on_stdin_never_on_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 300 KB system prompt (a large playbook) reaches `codex exec` whole, on standard input; the fake refuses
    a command line over 4 KiB."""
    monkeypatch.setenv("FAKE_CODEX_LOG", str(tmp_path / "codex.log"))
    system = "You are the Reflector.\n" + "".join(
        f"[pat-{i:04d}] Mind the build cache before a push.\n" for i in range(6500)
    )
    request = LLMRequest(
        step="reflector", model="m", system=system, user="the transcript", schema_name="ReflectorOutput"
    )
    answer = CodexCliProvider(str(ROOT / "tests" / "data" / "fake_codex" / "codex")).complete(request)
    assert answer.ok, answer.error
    (call,) = [json.loads(line) for line in (tmp_path / "codex.log").read_text().splitlines()]
    assert call["stdin"] == f"{system}\n\nthe transcript"
    assert sum(len(a.encode()) + 1 for a in call["args"]) < 1024
