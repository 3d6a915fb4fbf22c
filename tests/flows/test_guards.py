"""Lessons at the moment they matter, on the bundled sessions: the rules miner's command lessons become guards, the
hooks `hook install` writes answer Claude Code's documented inputs (tests/data/hooks) as a shell command, a rule the
user made hard refuses its command, a held-out session gets no guard and the ledger says so, bad input gets nothing
and exit 0, and the triggers of command lessons are counted from what the agent ran."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from flows.cli import app

ROOT = Path(__file__).resolve().parents[2]
HOOKS = ROOT / "tests" / "data" / "hooks"
runner = CliRunner()


def recorded(name: str, **change: object) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((HOOKS / f"{name}.json").read_text())
    return event | change


def installed(repo: Path, event: str) -> str:
    (group,) = json.loads((repo / ".claude" / "settings.json").read_text())["hooks"][event]
    (hook,) = group["hooks"]
    return str(hook["command"])


def run(command: str, event: dict[str, Any] | str, cwd: Path) -> dict[str, Any] | None:
    """The hook as Claude Code runs it: a shell command in the session's folder, the event as JSON on stdin."""
    stdin = event if isinstance(event, str) else json.dumps(event)
    done = subprocess.run(command, shell=True, input=stdin, capture_output=True, text=True, cwd=cwd, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def bash(command: str, repo: Path, **change: object) -> dict[str, Any]:
    return recorded("pre_tool_use_bash", cwd=str(repo), tool_input={"command": command, "description": "x"}) | change


@pytest.fixture(scope="module")
def learned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database the keyless nightly learned from the bundled sessions."""
    work = tmp_path_factory.mktemp("learned")
    shutil.copytree(ROOT / "data" / "samples", work / "samples")
    db = work / "p.duckdb"
    env = {"PLAYBOOK_HOLDOUT": "0", "PLAYBOOK_OUT_DIR": str(work / "out")}
    done = runner.invoke(app, ["nightly", str(work / "samples"), "--llm", "heuristic", "--db", str(db)], env=env)
    assert done.exit_code == 0, done.output
    return db


@pytest.fixture
def project(learned: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.chdir(tmp_path)
    for name in ("PLAYBOOK_CONFIG", "PLAYBOOK_DB"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PLAYBOOK_HOLDOUT", "0")
    db = tmp_path / "p.duckdb"
    shutil.copy(learned, db)
    repo = tmp_path / "src" / "claude-code-log"
    repo.mkdir(parents=True)
    assert runner.invoke(app, ["hook", "install", "--project", str(repo), "--db", str(db)]).exit_code == 0
    return {"db": db, "repo": repo}


def ledger(db: Path) -> list[dict[str, Any]]:
    path = db.parent / "hook" / f"{db.stem}-exposure.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.slow
def test_a_command_lesson_is_given_before_its_command_and_a_hard_rule_refuses_it(project: dict[str, Path]) -> None:
    db, repo = project["db"], project["repo"]
    guards = json.loads(runner.invoke(app, ["hook", "guards", "--json", "--db", str(db)]).stdout)
    by_entry = {g["entry"]: g for g in guards}
    wrapper = next(g["entry"] for g in guards if g["unless"] == ["uv", "run", "pytest"])
    selector = next(g["entry"] for g in guards if g["contains"] == ["-m", "unit"])

    pre = installed(repo, "PreToolUse")
    answer = run(pre, bash("cd tests && pytest -q", repo), repo)
    assert answer is not None and answer["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert f"[{wrapper}]" in context and "`uv run pytest`" in context
    assert "permissionDecision" not in answer["hookSpecificOutput"]  # a soft lesson never refuses
    assert run(pre, bash("uv run pytest -q", repo), repo) is None  # the form the lesson asks for
    assert run(pre, bash("pnpm install", repo), repo) is None

    made = runner.invoke(app, ["review", "--hard", selector, "--db", str(db)])
    assert made.exit_code == 0 and "refuses the command it names" in made.stdout, made.output
    refused = run(pre, bash("uv run pytest tests -m unit", repo), repo)
    assert refused is not None
    out = refused["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and by_entry[selector]["text"] in out["permissionDecisionReason"]
    assert runner.invoke(app, ["review", "--soft", selector, "--db", str(db)]).exit_code == 0
    softened = run(pre, bash("uv run pytest tests -m unit", repo), repo)
    assert softened is not None and "permissionDecision" not in softened["hookSpecificOutput"]
    refusal = runner.invoke(app, ["review", "--hard", "pat-999", "--db", str(db)])
    assert refusal.exit_code != 0 and "`pat-999` is not an entry" in refusal.output

    lines = [x for x in ledger(db) if x["source"] == "PreToolUse"]
    assert [x["playbooks"][0]["shown"] for x in lines] == [[wrapper], [selector], [selector]]
    assert runner.invoke(app, ["ingest", str(repo), "--db", str(db)]).exit_code in (0, 1)
    rows = runner.invoke(
        app,
        [
            "sql",
            "SELECT entry_id, source FROM exposures WHERE source = 'PreToolUse' ORDER BY 1",
            "--json",
            "--db",
            str(db),
        ],
    )
    assert {(r["entry_id"], r["source"]) for r in json.loads(rows.stdout)} == {
        (wrapper, "PreToolUse"),
        (selector, "PreToolUse"),
    }


@pytest.mark.slow
def test_a_held_out_session_gets_no_guard_and_the_ledger_says_so(project: dict[str, Path]) -> None:
    from core.hooks import held_out

    db, repo = project["db"], project["repo"]
    env = {"PLAYBOOK_HOLDOUT": "0.5"}
    assert runner.invoke(app, ["hook", "install", "--project", str(repo), "--db", str(db)], env=env).exit_code == 0
    guards = json.loads(runner.invoke(app, ["hook", "guards", "--json", "--db", str(db)]).stdout)
    wrapper = next(g["entry"] for g in guards if g["unless"] == ["uv", "run", "pytest"])
    kept = next(f"s-{i}" for i in range(100) if not held_out(f"s-{i}", "default", wrapper, 0.5))
    held = next(f"s-{i}" for i in range(100) if held_out(f"s-{i}", "default", wrapper, 0.5))
    assert run(installed(repo, "PreToolUse"), bash("pytest -q", repo, session_id=kept), repo) is not None
    assert run(installed(repo, "PreToolUse"), bash("pytest -q", repo, session_id=held), repo) is None
    given, withheld = ledger(db)
    assert given["playbooks"][0]["shown"] == [wrapper] and given["playbooks"][0]["held_out"] == []
    assert withheld["session_id"] == held and withheld["playbooks"][0] == {
        "playbook": "default",
        "version": given["playbooks"][0]["version"],
        "shown": [],
        "held_out": [wrapper],
    }


@pytest.mark.slow
def test_bad_input_or_no_snapshot_gets_nothing_and_exit_zero(project: dict[str, Path]) -> None:
    db, repo = project["db"], project["repo"]
    for event in ("PreToolUse", "UserPromptSubmit", "SessionStart"):
        command = installed(repo, event)
        for bad in ("", "not json", "[]", '{"session_id": "../../etc"}', json.dumps({"session_id": "s" * 500})):
            assert run(command, bad, repo) is None
    assert run(installed(repo, "PreToolUse"), bash("pytest", repo, tool_name="Write"), repo) is None
    for part in ("snapshot", "prompt", "guards"):
        (db.parent / "hook" / f"{db.stem}-{part}.json").unlink()
    assert run(installed(repo, "PreToolUse"), bash("pytest -q", repo), repo) is None
    assert ledger(db) == []


@pytest.mark.slow
def test_a_prompt_gets_the_entries_it_calls_up_beyond_the_start_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PLAYBOOK_HOLDOUT", "0")
    texts = [f"Lesson number {i} about the {word} module." for i, word in enumerate(["alpha", "beta", "gamma"] * 6)]
    texts.append("The staging database is reset every night at 02:00; never keep fixtures there.")
    book = tmp_path / "book.json"
    entries = [{"name": f"oth-{i:03d}", "text": t, "helpful": 0, "harmful": 0} for i, t in enumerate(texts)]
    book.write_text(json.dumps({"version": "1.0", "sections": {"OTHERS": entries}}))
    db = tmp_path / "p.duckdb"
    assert runner.invoke(app, ["import", str(book), "--db", str(db)]).exit_code == 0
    repo = tmp_path / "src" / "api"
    repo.mkdir(parents=True)
    assert runner.invoke(app, ["hook", "install", "--project", str(repo), "--db", str(db)]).exit_code == 0

    start = run(installed(repo, "SessionStart"), recorded("session_start_startup", cwd=str(repo)), repo)
    assert start is not None
    digest = start["hookSpecificOutput"]["additionalContext"]
    assert digest.count("- **[") == 12 and "staging database" not in digest
    prompt = recorded(
        "user_prompt_submit", cwd=str(repo), prompt="Why did my fixtures vanish from the staging database?"
    )
    answer = run(installed(repo, "UserPromptSubmit"), prompt, repo)
    assert answer is not None and answer["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert "[oth-018]" in answer["hookSpecificOutput"]["additionalContext"]
    assert run(installed(repo, "UserPromptSubmit"), recorded("user_prompt_submit", cwd=str(repo)), repo) is None
    sources = [x["source"] for x in ledger(db)]
    assert sources == ["startup", "UserPromptSubmit"]


@pytest.mark.slow
def test_the_triggers_of_command_lessons_are_counted_from_what_the_agent_ran(learned: Path, tmp_path: Path) -> None:
    db = tmp_path / "p.duckdb"
    shutil.copy(learned, db)
    rows = json.loads(runner.invoke(app, ["triggers", "--json", "--db", str(db)]).stdout)
    seen = {r["triggers"]: r["seen_before"] + r["seen_after"] for r in rows}
    # `uv run pytest` is in no message text of the sessions, only in the commands the agent ran.
    assert seen["uv run pytest"] >= 1 and seen["ruff check"] >= 1


def test_a_command_trigger_matches_the_program_it_names_and_not_another(tmp_path: Path) -> None:
    """`npm install` is the first words of `npm install left-pad`, never of `pnpm install` (a substring of the line
    would take one for the other); a trigger naming a file matches the session that edited it."""
    from datetime import UTC, datetime

    from core.store.db import open_db
    from core.store.ingest import ingest
    from tests.helpers import claude_session

    def shell(session: str, command: str) -> None:
        use = {"type": "tool_use", "id": f"{session}-t", "name": "Bash", "input": {"command": command}}
        edit = {
            "type": "tool_use",
            "id": f"{session}-e",
            "name": "Edit",
            "input": {"file_path": f"/w/app/{session}.py"},
        }
        claude_session(
            tmp_path / "p" / f"{session}.jsonl",
            session,
            datetime(2026, 3, 1, tzinfo=UTC),
            [("user", "set it up"), ("assistant", [use, edit])],
        )

    shell("npm", "cd web && npm install left-pad")
    shell("pnpm", "pnpm install")
    with open_db(tmp_path / "d.duckdb") as con:
        ingest(con, [tmp_path / "p"])
        con.execute(
            "INSERT INTO entry_triggers VALUES ('default', 'mis-001', 'npm install', 1),"
            " ('default', 'mis-002', 'pnpm install', 1), ('default', 'mis-003', 'npm.py', 1)"
        )
        hits = con.execute("SELECT pat, session_id FROM v_action_hits ORDER BY 1, 2").fetchall()
    assert hits == [("npm install", "npm"), ("npm.py", "npm"), ("pnpm install", "pnpm")]


@pytest.mark.slow
def test_impact_says_whether_a_command_lesson_was_followed_where_its_situation_came_up(
    learned: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session that had the wrapper lesson and ran `uv run pytest` followed it; `impact --json` counts it."""
    from datetime import UTC, datetime

    from tests.helpers import claude_session

    monkeypatch.chdir(tmp_path)
    db = tmp_path / "p.duckdb"
    shutil.copy(learned, db)
    guards = json.loads(runner.invoke(app, ["hook", "guards", "--json", "--db", str(db)]).stdout)
    wrapper = next(g["entry"] for g in guards if g["unless"] == ["uv", "run", "pytest"])
    # A session after the lesson was learned (a hook gives only what exists when a session starts) runs the tests
    # as the lesson says.
    ran = "n-1"
    call = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "uv run pytest -q"}}
    turns = [("user", "run the tests"), ("assistant", [call])]
    claude_session(tmp_path / "new" / "n.jsonl", ran, datetime.now(UTC), turns, cwd="/w/claude-code-log")
    line = {"session_id": ran, "at": datetime.now(UTC).isoformat(), "cwd": "/w/claude-code-log", "source": "startup"}
    line["playbooks"] = [{"playbook": "default", "version": 1, "shown": [wrapper], "held_out": []}]
    (tmp_path / "hook").mkdir()
    (tmp_path / "hook" / "p-exposure.jsonl").write_text(json.dumps(line) + "\n")
    assert runner.invoke(app, ["ingest", str(tmp_path / "new"), "--db", str(db)]).exit_code == 0  # merges the ledger
    (row,) = json.loads(runner.invoke(app, ["impact", wrapper, "--json", "--db", str(db)]).stdout)
    assert row["adherence"]["exposed"] == {"sessions": 1, "fired": 1, "followed": 1}
    assert row["adherence"]["held_out"] == {"sessions": 0, "fired": 0, "followed": 0}
    others = json.loads(runner.invoke(app, ["impact", "--json", "--db", str(db)]).stdout)
    assert all(r["adherence"] is None for r in others if r["entry_id"] not in {g["entry"] for g in guards})


def test_install_replaces_an_earlier_install_s_session_start_hook_and_keeps_the_rest(
    learned: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "p.duckdb"
    shutil.copy(learned, db)
    settings = tmp_path / "repo" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    earlier = {"type": "command", "command": f"/opt/bin/playbook hook session-start --db {db}", "timeout": 10}
    theirs = {"type": "command", "command": "echo hello"}
    settings.write_text(json.dumps({"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [earlier, theirs]}]}}))
    done = runner.invoke(app, ["hook", "install", "--project", str(settings.parents[1]), "--db", str(db)])
    assert done.exit_code == 0, done.output
    start = json.loads(settings.read_text())["hooks"]["SessionStart"]
    commands = [h["command"] for g in start for h in g["hooks"]]
    assert commands[0] == "echo hello" and len(commands) == 2
    assert "flows.delivery.hookrun session-start" in commands[1] and "--digest" in commands[1]
    gone = runner.invoke(app, ["hook", "uninstall", "--project", str(settings.parents[1])])
    assert gone.exit_code == 0
    assert json.loads(settings.read_text()) == {"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [theirs]}]}}


@pytest.mark.slow
def test_a_hostile_event_or_snapshot_costs_little_and_writes_nothing_it_should_not(project: dict[str, Path]) -> None:
    """Found by attacking the hooks: a huge event, a snapshot that is a device, a huge or non-string cwd, a forged
    SessionStart source."""
    import time

    db, repo = project["db"], project["repo"]
    pre = installed(repo, "PreToolUse")
    big = json.dumps(bash("pytest -q", repo) | {"padding": "x" * (3 << 20)})  # 3 MB: no event of Claude Code's
    started = time.perf_counter()
    assert run(pre, big, repo) is None and time.perf_counter() - started < 5
    start = installed(repo, "SessionStart")
    huge = recorded("session_start_startup", cwd="a" * 100_000, source="MCP")
    run(start, huge, repo)  # answered as a session of no project (every entry here is one project's)
    (line,) = ledger(db)
    assert line["cwd"] == "" and line["source"] == "startup"  # neither the huge cwd nor the forged source is kept
    guards = db.parent / "hook" / f"{db.stem}-guards.json"
    guards.unlink()
    guards.symlink_to("/dev/zero")  # read whole, it would never end
    started = time.perf_counter()
    assert run(pre, bash("pytest -q", repo), repo) is None and time.perf_counter() - started < 5
