"""Delivery through Claude Code's SessionStart hook and what it records: the hook as `hook install` writes it into
`.claude/settings.json`, run as Claude Code runs it (a shell command, the recorded hook input of
tests/data/hooks on stdin), the ledger merged at ingest, the reflector shown only what the agent had, and tags on
anything else refused."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core.store.db import open_db
from flows.cli import app
from tests.helpers import claude_session
from tests.servers import lock_holder

ROOT = Path(__file__).resolve().parents[2]
HOOKS = ROOT / "tests" / "data" / "hooks"
FAKES = ROOT / "tests" / "data" / "fake_claude"
runner = CliRunner()
ENTRIES = {
    "PATTERNS & APPROACHES": [
        {"name": "pat-001", "text": "Run the failing test alone first with `pytest -x`.", "helpful": 0, "harmful": 0},
        {"name": "pat-002", "text": "Read the whole traceback before editing.", "helpful": 0, "harmful": 0},
    ],
    "MISTAKES TO AVOID": [
        {
            "name": "mis-001",
            "text": "`npm ci` fails here without a lockfile; use `pnpm install`.",
            "helpful": 0,
            "harmful": 0,
        }
    ],
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A database with a three-entry playbook, a project folder, and no settings of the machine's."""
    monkeypatch.chdir(tmp_path)
    for name in ("PLAYBOOK_CONFIG", "PLAYBOOK_DB", "PLAYBOOK_HOLDOUT"):
        monkeypatch.delenv(name, raising=False)
    book = tmp_path / "book.json"
    book.write_text(json.dumps({"version": "1.0", "sections": ENTRIES}))
    db = tmp_path / "p.duckdb"
    assert runner.invoke(app, ["import", str(book), "--db", str(db)]).exit_code == 0
    repo = tmp_path / "src" / "api"
    repo.mkdir(parents=True)
    return {"db": db, "repo": repo, "tmp": tmp_path}


def installed_command(repo: Path) -> str:
    (group,) = json.loads((repo / ".claude" / "settings.json").read_text())["hooks"]["SessionStart"]
    (hook,) = group["hooks"]
    assert hook["type"] == "command" and hook["timeout"] == 10
    return str(hook["command"])


def run_hook(command: str, event: dict[str, object], cwd: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run the hook as Claude Code does: a shell command in the session's folder, the event as JSON on stdin."""
    started = time.perf_counter()
    done = subprocess.run(
        command, shell=True, input=json.dumps(event), capture_output=True, text=True, cwd=cwd, timeout=60
    )
    return done, time.perf_counter() - started


def recorded(name: str, **change: object) -> dict[str, object]:
    event: dict[str, object] = json.loads((HOOKS / f"session_start_{name}.json").read_text())
    return event | change


def ledger(db: Path) -> list[dict[str, object]]:
    path = db.parent / "hook" / f"{db.stem}-exposure.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.slow
def test_install_run_as_claude_code_does_and_uninstall_restores_the_file(project: dict[str, Path]) -> None:
    repo, db = project["repo"], project["db"]
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {"model": "opus", "hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "echo bye"}]}]}}
    original = json.dumps(mine, indent=4) + "\n"
    settings.write_text(original)
    settings.chmod(0o640)

    done = runner.invoke(
        app, ["hook", "install", "--project", str(repo), "--db", str(db)], env={"PLAYBOOK_HOLDOUT": "0"}
    )
    assert done.exit_code == 0, done.output
    assert "Installed the SessionStart, UserPromptSubmit and PreToolUse hooks" in done.stdout
    kept = json.loads(settings.read_text())
    assert kept["model"] == "opus" and kept["hooks"]["SessionEnd"] == mine["hooks"]["SessionEnd"]
    assert kept["hooks"]["PreToolUse"][0]["matcher"] == "Bash" and "matcher" not in kept["hooks"]["UserPromptSubmit"][0]
    assert stat.S_IMODE(settings.stat().st_mode) == 0o640
    again = runner.invoke(
        app, ["hook", "install", "--project", str(repo), "--db", str(db)], env={"PLAYBOOK_HOLDOUT": "0"}
    )
    assert "already" in again.stdout
    assert all(len(groups) == 1 for groups in json.loads(settings.read_text())["hooks"].values())

    command = installed_command(repo)
    for name in ("startup", "resume"):
        event = recorded(name, cwd=str(repo))
        answer, _ = run_hook(command, event, repo)
        assert answer.returncode == 0 and answer.stderr == ""
        out = json.loads(answer.stdout)
        assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        context = out["hookSpecificOutput"]["additionalContext"]
        assert "[pat-001]" in context and "[mis-001]" in context and "use `pnpm install`" in context
    lines = ledger(db)
    assert [(x["session_id"], x["source"]) for x in lines] == [
        ("00893aaf-19fa-41d2-8238-13269b9b3ca0", "startup"),
        ("abc123", "resume"),
    ]
    assert lines[0]["playbooks"] == [
        {"playbook": "default", "version": 1, "shown": ["pat-001", "pat-002", "mis-001"], "held_out": []}
    ]

    gone = runner.invoke(app, ["hook", "uninstall", "--project", str(repo)])
    assert gone.exit_code == 0 and "Removed" in gone.stdout
    assert json.loads(settings.read_text()) == mine and stat.S_IMODE(settings.stat().st_mode) == 0o640
    assert "nothing changed" in runner.invoke(app, ["hook", "uninstall", "--project", str(repo)]).stdout


def test_a_settings_file_that_is_not_json_is_refused_and_left_as_it_was(project: dict[str, Path]) -> None:
    settings = project["repo"] / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {,}')
    done = runner.invoke(app, ["hook", "install", "--project", str(project["repo"]), "--db", str(project["db"])])
    assert done.exit_code == 1
    assert done.stderr.startswith("Error: ") and "is not valid JSON (line 1)" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert settings.read_text() == '{"hooks": {,}'


@pytest.mark.slow
def test_the_hook_never_blocks_a_session(project: dict[str, Path]) -> None:
    repo, db = project["repo"], project["db"]
    assert runner.invoke(app, ["hook", "install", "--project", str(repo), "--db", str(db)]).exit_code == 0
    command = installed_command(repo)
    # A nightly run holds the database: the hook never opens it, so it answers all the same.
    with lock_holder(db):
        answer, seconds = run_hook(command, recorded("startup", cwd=str(repo)), repo)
    assert answer.returncode == 0 and "additionalContext" in answer.stdout and seconds < 30
    # Input that is not a hook event, or an id that could be anything: no output, exit 0, nothing recorded.
    before = len(ledger(db))
    for junk in ("not json", json.dumps({"session_id": "../../etc\x1b[2J"}), json.dumps([1, 2])):
        done = subprocess.run(command, shell=True, input=junk, capture_output=True, text=True, cwd=repo, timeout=60)
        assert (done.returncode, done.stdout) == (0, "")
    assert len(ledger(db)) == before
    # No snapshot (a database never exported to the hook): nothing to give, and the session starts.
    (db.parent / "hook" / f"{db.stem}-snapshot.json").unlink()
    answer, _ = run_hook(command, recorded("startup", cwd=str(repo)), repo)
    assert (answer.returncode, answer.stdout) == (0, "")


@pytest.mark.slow
def test_a_session_gets_its_own_projects_facts_and_no_other_projects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rules miner states a project's facts as `In <project>: ...`; a session in another project's folder is
    not given them (they would be noise in its context), and the ledger records only what was given."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PLAYBOOK_OUT_DIR", str(tmp_path / "out"))
    monkeypatch.setenv("PLAYBOOK_HOLDOUT", "0")
    db = tmp_path / "p.duckdb"
    assert runner.invoke(app, ["ingest", str(ROOT / "data" / "samples"), "--db", str(db)]).exit_code == 0
    assert runner.invoke(app, ["curate", "--llm", "heuristic", "--db", str(db)]).exit_code == 0
    given: dict[str, str] = {}
    # A worktree Claude Code made (`--worktree`) is its project's: named for the folder that holds it.
    folders = {"worktree": "claude-code-log/.claude/worktrees/bright-fox"}
    for name in ("claude-code-log", "spotter-fum", "elsewhere", "worktree"):
        repo = tmp_path / "src" / folders.get(name, name)
        repo.mkdir(parents=True)
        assert runner.invoke(app, ["hook", "install", "--project", str(repo), "--db", str(db)]).exit_code == 0
        answer, _ = run_hook(installed_command(repo), recorded("startup", session_id=name, cwd=str(repo)), repo)
        assert answer.returncode == 0, answer.stderr
        given[name] = json.loads(answer.stdout)["hookSpecificOutput"]["additionalContext"] if answer.stdout else ""
    assert "In claude-code-log: run the tests with `uv run pytest`" in given["claude-code-log"]
    assert "In spotter-fum: " not in given["claude-code-log"] and "In JSSoundRecorder: " not in given["claude-code-log"]
    assert "In spotter-fum: build with `mix compile`" in given["spotter-fum"]
    assert "In claude-code-log: " not in given["spotter-fum"]
    assert given["elsewhere"] == ""  # every mined lesson is about a project of its own
    assert given["worktree"] == given["claude-code-log"]
    shown = {line["session_id"]: line["playbooks"][0]["shown"] for line in ledger(db)}
    assert shown["elsewhere"] == [] and len(shown["claude-code-log"]) == given["claude-code-log"].count("- **[")


@pytest.mark.slow
def test_the_holdout_leaves_entries_out_at_random_and_logs_it(project: dict[str, Path]) -> None:
    repo, db = project["repo"], project["db"]
    env = {"PLAYBOOK_HOLDOUT": "0.5"}
    assert runner.invoke(app, ["hook", "install", "--project", str(repo), "--db", str(db)], env=env).exit_code == 0
    command = installed_command(repo)
    held = shown = 0
    for i in range(12):
        answer, _ = run_hook(command, recorded("startup", session_id=f"s-{i}", cwd=str(repo)), repo)
        got = ledger(db)[-1]["playbooks"][0]
        context = json.loads(answer.stdout)["hookSpecificOutput"]["additionalContext"] if answer.stdout else ""
        assert all(f"[{e}]" not in context for e in got["held_out"])
        assert all(f"[{e}]" in context for e in got["shown"])
        held, shown = held + len(got["held_out"]), shown + len(got["shown"])
        again, _ = run_hook(command, recorded("resume", session_id=f"s-{i}", cwd=str(repo)), repo)
        assert again.stdout == answer.stdout  # a resumed session sees what it saw
    assert held + shown == 36 and 8 <= held <= 28


def test_ingest_merges_the_ledger_once_and_skips_lines_that_are_not_its_own(project: dict[str, Path]) -> None:
    db, tmp = project["db"], project["tmp"]
    folder = tmp / "t"
    start = datetime(2026, 3, 1, tzinfo=UTC)
    for sid in ("s1", "s2"):
        claude_session(
            folder / f"{sid}.jsonl", sid, start, [("user", "fix it"), ("assistant", [{"type": "text", "text": "ok"}])]
        )
    path = db.parent / "hook" / f"{db.stem}-exposure.jsonl"
    path.parent.mkdir()
    good = {
        "session_id": "s1",
        "at": "2026-03-01T00:00:00+00:00",
        "playbooks": [{"playbook": "default", "version": 1, "shown": ["pat-001"], "held_out": ["pat-002"]}],
    }
    bad = [
        "not json",
        json.dumps(good | {"session_id": "s1\x1b[31m"}),
        json.dumps(good | {"playbooks": [{"playbook": "default", "version": 1, "shown": ["pat 001; DROP"]}]}),
        json.dumps(good | {"pad": "x" * 300_000}),
    ]
    path.write_text(
        "\n".join([json.dumps(good), *bad]) + "\n" + json.dumps(good | {"session_id": "s2"})
    )  # last: unfinished
    done = runner.invoke(app, ["ingest", str(folder), "--db", str(db)])
    assert done.exit_code == 0, done.output
    assert "exposures from the hook" in done.stdout and "hook ledger lines skipped (not valid)" in done.stdout
    rows = json.loads(
        runner.invoke(app, ["sql", "select * from exposures order by entry_id", "--json", "--db", str(db)]).stdout
    )
    assert [(r["session_id"], r["entry_id"], r["shown"]) for r in rows] == [
        ("s1", "pat-001", True),
        ("s1", "pat-002", False),
    ]
    with path.open("a") as fh:
        fh.write("\n")  # the unfinished line is complete now
    assert runner.invoke(app, ["ingest", str(folder), "--db", str(db)]).exit_code == 0
    query = "select session_id, entry_id from exposures where shown order by session_id"
    seen = json.loads(runner.invoke(app, ["sql", query, "--json", "--db", str(db)]).stdout)
    assert seen == [{"session_id": "s1", "entry_id": "pat-001"}, {"session_id": "s2", "entry_id": "pat-001"}]
    skipped = runner.invoke(app, ["sql", "select skipped_lines from exposure_ledgers", "--json", "--db", str(db)])
    assert json.loads(skipped.stdout) == [{"skipped_lines": 4}]


def test_an_exported_claude_md_exposes_the_sessions_that_start_after_it_in_its_folder(project: dict[str, Path]) -> None:
    db, repo, tmp = project["db"], project["repo"], project["tmp"]
    target = repo / "CLAUDE.md"
    assert runner.invoke(app, ["export", "--format", "claude-md", "--out", str(target), "--db", str(db)]).exit_code == 0
    now = datetime.now(UTC)
    turns = [("user", "fix it"), ("assistant", [{"type": "text", "text": "ok"}])]
    for sid, when, cwd in (
        ("before", now - timedelta(days=1), repo),
        ("after", now + timedelta(minutes=5), repo / "web"),
        ("elsewhere", now + timedelta(minutes=5), tmp),
    ):
        claude_session(tmp / "t" / f"{sid}.jsonl", sid, when, turns)
        text = (tmp / "t" / f"{sid}.jsonl").read_text().replace('"cwd": "/w/app"', f'"cwd": "{cwd}"')
        (tmp / "t" / f"{sid}.jsonl").write_text(text)
    assert runner.invoke(app, ["ingest", str(tmp / "t"), "--db", str(db)]).exit_code == 0
    seen = json.loads(
        runner.invoke(
            app,
            ["sql", "select session_id, entry_id, source from v_exposure order by entry_id", "--json", "--db", str(db)],
        ).stdout
    )
    assert seen == [
        {"session_id": "after", "entry_id": e, "source": "export"} for e in ("mis-001", "pat-001", "pat-002")
    ]


@pytest.mark.slow
def test_the_reflector_is_shown_only_what_the_agent_had_and_other_tags_are_refused(
    project: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, repo, tmp = project["db"], project["repo"], project["tmp"]
    start = datetime(2026, 3, 1, tzinfo=UTC)
    turns = [("user", "run the tests"), ("assistant", [{"type": "text", "text": "They pass."}])] * 2
    for sid in ("had", "never"):
        claude_session(tmp / "t" / f"{sid}.jsonl", sid, start, turns)
    env = {"PLAYBOOK_HOLDOUT": "0"}
    assert runner.invoke(app, ["hook", "install", "--project", str(repo), "--db", str(db)], env=env).exit_code == 0
    answer, _ = run_hook(installed_command(repo), recorded("startup", session_id="had", cwd=str(repo)), repo)
    assert "[pat-002]" in answer.stdout
    assert runner.invoke(app, ["ingest", str(tmp / "t"), "--db", str(db)]).exit_code == 0

    # What the reflector is shown, as the (fake) `claude` CLI receives it.
    monkeypatch.setenv("PATH", f"{FAKES}:{os.environ['PATH']}")
    log = tmp / "claude.log"
    cli_env = {"PLAYBOOK_CLAUDE_CLI": "claude", "FAKE_CLAUDE_LOG": str(log), "PLAYBOOK_MIN_MESSAGES": "1"}
    shown = runner.invoke(app, ["curate", "--llm", "claude-cli", "--db", str(db), "--limit", "2"], env=cli_env)
    assert shown.exit_code == 0, shown.output
    asked = [json.loads(line) for line in log.read_text().splitlines()]
    reflector = {s: a["stdin"] for a in asked for s in ("had", "never") if a["stdin"].startswith(f"Session: {s}")}
    assert "[pat-001]" in reflector["had"] and "[mis-001]" in reflector["had"]
    assert "(none: the agent had no playbook entry" in reflector["never"] and "[pat-001]" not in reflector["never"]

    # A model's tags on entries the agent never had are refused; on the ones it had, they count.
    replay = tmp / "r.jsonl"
    tags = [
        {"name": "pat-001", "tag": "helpful", "rationale": "r"},
        {"name": "mis-001", "tag": "harmful", "rationale": "r"},
    ]
    claude_session(tmp / "t2" / "had2.jsonl", "had2", start + timedelta(days=1), turns)
    claude_session(tmp / "t2" / "never2.jsonl", "never2", start + timedelta(days=1), turns)
    run_hook(installed_command(repo), recorded("startup", session_id="had2", cwd=str(repo)), repo)
    assert runner.invoke(app, ["ingest", str(tmp / "t2"), "--db", str(db)]).exit_code == 0
    replay.write_text(
        "".join(
            json.dumps(
                {"session_id": sid, "step": "reflector", "text": json.dumps({"analysis": "a", "bullet_tags": tags})}
            )
            + "\n"
            + json.dumps({"session_id": sid, "step": "curator", "text": json.dumps({"operations": []})})
            + "\n"
            for sid in ("had2", "never2")
        )
    )
    done = runner.invoke(
        app, ["curate", "--llm", f"replay:{replay}", "--db", str(db)], env={"PLAYBOOK_MIN_MESSAGES": "1"}
    )
    assert done.exit_code == 0, done.output
    with open_db(db) as con:
        statuses = con.execute(
            "SELECT session_id, name, status FROM evaluations WHERE session_id IN ('had2', 'never2')"
            " ORDER BY session_id, name"
        ).fetchall()
        counters = con.execute(
            "SELECT name, helpful, harmful FROM entries WHERE valid_to IS NULL ORDER BY name"
        ).fetchall()
    assert statuses == [
        ("had2", "mis-001", "applied"),
        ("had2", "pat-001", "applied"),
        ("never2", "mis-001", "unexposed"),
        ("never2", "pat-001", "unexposed"),
    ]
    # pat-001: helpful from had2, and from `had` (the fake `claude` tags it in the session whose agent had it)
    assert counters[:3] == [("mis-001", 0, 1), ("pat-001", 2, 0), ("pat-002", 0, 0)]  # then the fake's own lesson


def test_install_refuses_a_settings_file_nested_too_deep_in_one_line_and_leaves_it(project: dict[str, Path]) -> None:
    """A cloned repository's settings.json of 100,000 brackets (200 KB) was a 69-line RecursionError (round 10)."""
    repo, db = project["repo"], project["db"]
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    for text in ('{"hooks":' + "[" * 100_000 + "]" * 100_000 + "}", '{"hooks": {}, "x": ' + "[" * 70 + "]" * 70 + "}"):
        settings.write_text(text)
        settings.chmod(0o640)
        done = runner.invoke(app, ["hook", "install", "--project", str(repo), "--db", str(db)])
        assert done.exit_code == 1 and "Traceback" not in done.output, done.output
        assert done.stderr.strip() == (
            f"Error: `{settings}` is not a settings file: it nests arrays or objects more than 64 deep; it was left"
            " untouched."
        )
        assert settings.read_text() == text and stat.S_IMODE(settings.stat().st_mode) == 0o640


def test_install_in_a_repository_whose_playbook_toml_nests_too_deep_says_so_in_one_line(
    project: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, db = project["repo"], project["db"]
    (repo / "playbook.toml").write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    monkeypatch.chdir(repo)
    done = runner.invoke(app, ["hook", "install", "--db", str(db)])
    assert done.exit_code == 1 and "Traceback" not in done.output, done.output
    assert len(done.stderr.strip().splitlines()) == 1 and "nests arrays or tables too deep" in done.stderr
    assert not (repo / ".claude").exists()
