"""Entries bound to their sources, on a real folder under real git: the rules miner's entries cite the script, file
and folder they rest on; after a refactor (a script renamed, a file moved) those entries are held from the export,
`publish` and the hooks' snapshot with their reason, `revalidate` records the commit it checked, and they come back
when what they rest on is back."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from flows.cli import app
from tests.helpers import git, trust_config

runner = CliRunner()


def session(path: Path, sid: str, cwd: Path, day: int) -> None:
    """A Claude Code session in `cwd`: `pnpm dev` works; `node build.js` fails at the root and works in assets/."""
    steps = [
        ("pnpm dev", False, "VITE ready in 300 ms"),
        ("node build.js", True, f"Error: Cannot find module '{cwd}/build.js'"),
        ("cd assets && node build.js", False, "built 3 files"),
    ]
    turns: list[tuple[str, Any]] = [("user", "start the dev server and build the assets")]
    for i, (command, error, output) in enumerate(steps):
        use = {"type": "tool_use", "id": f"{sid}-{i}", "name": "Bash", "input": {"command": command}}
        result = {"type": "tool_result", "tool_use_id": f"{sid}-{i}", "content": output, "is_error": error}
        turns += [("assistant", [use]), ("user", [result])]
    turns += [("assistant", [{"type": "text", "text": "done"}]), ("user", "thanks")]
    start = datetime(2026, 3, day, tzinfo=UTC)
    lines = [
        json.dumps(
            {
                "type": role,
                "sessionId": sid,
                "uuid": f"{sid}-{i}",
                "timestamp": (start + timedelta(minutes=i)).isoformat().replace("+00:00", "Z"),
                "cwd": str(cwd),
                "message": {"role": role, "content": content},
            }
        )
        for i, (role, content) in enumerate(turns)
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def learned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.chdir(tmp_path)
    for name in ("PLAYBOOK_CONFIG", "PLAYBOOK_DB"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PLAYBOOK_HOLDOUT", "0")
    repo = tmp_path / "src" / "web"
    (repo / "assets").mkdir(parents=True)
    (repo / "package.json").write_text(json.dumps({"scripts": {"dev": "vite"}}))
    (repo / "assets" / "build.js").write_text("console.log('build')\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    for n, sid in enumerate(["w-a", "w-b"], start=1):
        session(tmp_path / "sessions" / f"{sid}.jsonl", sid, repo, n)
    db = tmp_path / "p.duckdb"
    done = runner.invoke(
        app,
        ["nightly", str(tmp_path / "sessions"), "--llm", "heuristic", "--db", str(db)],
        env={"PLAYBOOK_OUT_DIR": str(tmp_path / "out")},
    )
    assert done.exit_code == 0, done.output
    return {"db": db, "repo": repo, "tmp": tmp_path}


def exported(db: Path) -> dict[str, dict[str, Any]]:
    data = json.loads(runner.invoke(app, ["export", "--format", "json", "--db", str(db)]).stdout)
    return {e["name"]: e for items in data["sections"].values() for e in items}


def snapshot_entries(db: Path) -> set[str]:
    data = json.loads((db.parent / "hook" / f"{db.stem}-snapshot.json").read_text())
    return {e[1]["name"] for pb in data["playbooks"] for e in pb["entries"]}


@pytest.mark.slow
def test_an_entry_whose_source_is_gone_is_held_everywhere_and_comes_back(learned: dict[str, Path]) -> None:
    db, repo = learned["db"], learned["repo"]
    before = exported(db)
    script = next(n for n, e in before.items() if "`pnpm dev`" in e["text"])
    built = [n for n, e in before.items() if "`node build.js`" in e["text"]]
    assert before[script]["citations"] == ["package.json script `dev`"]
    assert all("file `assets/build.js`" in before[n]["citations"] for n in built) and built
    first = git(repo, "rev-parse", "HEAD")
    checked = json.loads(runner.invoke(app, ["revalidate", "--json", "--db", str(db)]).stdout)
    assert {c["entry_id"]: (c["status"], c["commit"]) for c in checked} == {n: ("ok", first) for n in [script, *built]}
    hooked = learned["tmp"] / "hooked"
    hooked.mkdir()
    assert runner.invoke(app, ["hook", "install", "--project", str(hooked), "--db", str(db)]).exit_code == 0
    assert {script, *built} <= snapshot_entries(db)

    # A refactor: the script renamed, the file moved.
    (repo / "package.json").write_text(json.dumps({"scripts": {"start": "vite"}}))
    git(repo, "mv", "assets/build.js", "build.mjs")
    git(repo, "commit", "-qam", "refactor")
    after = exported(db)
    assert script not in after and not set(built) & set(after)
    checked = {
        c["entry_id"]: c for c in json.loads(runner.invoke(app, ["revalidate", "--json", "--db", str(db)]).stdout)
    }
    assert (
        checked[script]["status"] == "held" and checked[script]["reason"] == "`package.json` no longer declares `dev`"
    )
    assert all(checked[n]["reason"] == "file `assets/build.js` no longer exists" for n in built)
    assert checked[script]["commit"] == git(repo, "rev-parse", "HEAD") != first
    review = json.loads(runner.invoke(app, ["review", "--json", "--db", str(db)]).stdout)
    assert set(review["outdated"]) == {script, *built}
    config = learned["tmp"] / "playbook.toml"
    config.write_text(f'[playbook_settings.default]\ntargets = [{{ kind = "claude-md", repo = "{repo}" }}]\n')
    published = runner.invoke(app, ["publish", "--db", str(db)], env={"PLAYBOOK_CONFIG": str(trust_config(config))})
    assert published.exit_code == 0, published.output
    claude_md = repo / "CLAUDE.md"
    written = claude_md.read_text() if claude_md.exists() else ""  # every entry held: no file is made for nothing
    assert not any(f"[{n}]" in written for n in [script, *built])  # held at publish
    assert not {script, *built} & snapshot_entries(db)  # and from the hooks, whose snapshot publish refreshed
    why = runner.invoke(app, ["why", script, "--db", str(db)])
    assert "held: `package.json` no longer declares `dev`" in why.stdout

    # Back as it was: the entries come back by themselves.
    (repo / "package.json").write_text(json.dumps({"scripts": {"dev": "vite"}}))
    git(repo, "mv", "build.mjs", "assets/build.js")
    git(repo, "commit", "-qam", "revert")
    assert {script, *built} <= set(exported(db))
    assert runner.invoke(app, ["publish", "--db", str(db)], env={"PLAYBOOK_CONFIG": str(config)}).exit_code == 0
    assert all(f"[{n}]" in claude_md.read_text() for n in [script, *built])
    rows = runner.invoke(app, ["sql", "SELECT count(*) AS n FROM entry_checks", "--json", "--db", str(db)])
    assert json.loads(rows.stdout)[0]["n"] == 2 * len({script, *built})  # every check is kept


def session_start(db: Path, cwd: Path) -> str:
    """What the installed SessionStart hook gives a new session in `cwd` (it reads only the snapshot)."""
    event = {"session_id": f"s-{cwd.name}", "cwd": str(cwd), "hook_event_name": "SessionStart", "source": "startup"}
    done = runner.invoke(app, ["hook", "session-start", "--db", str(db)], input=json.dumps(event))
    assert done.exit_code == 0, done.output
    return done.stdout


@pytest.mark.slow
def test_revalidate_holds_an_outdated_entry_from_the_hooks_at_once(learned: dict[str, Path]) -> None:
    """`revalidate` said an entry was held from every hook, but the hooks kept serving the snapshot the last publish
    or nightly wrote until the next one: it writes the snapshot again."""
    db, repo = learned["db"], learned["repo"]
    script = next(e["text"] for e in exported(db).values() if "`pnpm dev`" in e["text"])
    assert runner.invoke(app, ["hook", "install", "--project", str(repo), "--db", str(db)]).exit_code == 0
    assert script in session_start(db, repo)
    (repo / "package.json").write_text(json.dumps({"scripts": {"start": "vite"}}))
    git(repo, "commit", "-qam", "rename the script")
    assert runner.invoke(app, ["revalidate", "--db", str(db)]).exit_code == 0
    assert script not in session_start(db, repo)
    (repo / "package.json").write_text(json.dumps({"scripts": {"dev": "vite"}}))
    git(repo, "commit", "-qam", "back")
    assert runner.invoke(app, ["revalidate", "--db", str(db)]).exit_code == 0
    assert script in session_start(db, repo)


@pytest.mark.slow
def test_a_project_not_on_this_machine_is_not_checked_and_its_entries_go_out(learned: dict[str, Path]) -> None:
    db, repo = learned["db"], learned["repo"]
    repo.rename(repo.with_name("moved-away"))
    checked = json.loads(runner.invoke(app, ["revalidate", "--json", "--db", str(db)]).stdout)
    assert {c["status"] for c in checked} == {"unchecked"}
    assert any("`pnpm dev`" in e["text"] for e in exported(db).values())


@pytest.mark.slow
def test_a_model_s_citation_the_session_never_mentions_is_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PLAYBOOK_HOLDOUT", "0")
    repo = tmp_path / "src" / "web"
    (repo / "assets").mkdir(parents=True)
    (repo / "assets" / "build.js").write_text("x")
    session(tmp_path / "sessions" / "w-a.jsonl", "w-a", repo, 1)
    db = tmp_path / "p.duckdb"
    assert runner.invoke(app, ["ingest", str(tmp_path / "sessions"), "--db", str(db)]).exit_code == 0
    add = {
        "type": "ADD",
        "text": "Build the assets from the assets folder; the build script fails from the root.",
        "section": "PATTERNS & APPROACHES",
        "citations": ["cd assets && node build.js", "src/made_up.py", "/etc/passwd"],
    }
    replay = tmp_path / "answers.jsonl"
    replay.write_text(
        json.dumps({"session_id": "w-a", "step": "reflector", "text": json.dumps({"analysis": "a", "bullet_tags": []})})
        + "\n"
        + json.dumps(
            {"session_id": "w-a", "step": "curator", "text": json.dumps({"reasoning": "r", "operations": [add]})}
        )
        + "\n"
    )
    done = runner.invoke(app, ["curate", "--llm", f"replay:{replay}", "--db", str(db)])
    assert done.exit_code == 0, done.output
    query = "SELECT kind, value, folder, root FROM entry_citations ORDER BY kind"
    rows = runner.invoke(app, ["sql", query, "--json", "--db", str(db)])
    assert json.loads(rows.stdout) == [
        {"kind": "file", "value": "build.js", "folder": "assets", "root": str(repo)},
        {"kind": "folder", "value": "assets", "folder": None, "root": str(repo)},
    ]
    reason = runner.invoke(app, ["sql", "SELECT reason FROM operations WHERE type = 'ADD'", "--json", "--db", str(db)])
    said = json.loads(reason.stdout)[0]["reason"]
    assert "`src/made_up.py`" in said and "`/etc/passwd`" in said and "never mentions" in said


def test_unused_entries_are_proposed_never_removed_and_retiring_is_a_revertible_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    monkeypatch.chdir(tmp_path)
    book = tmp_path / "book.json"
    entries = [{"name": f"pat-00{i}", "text": f"Lesson {i}.", "helpful": 0, "harmful": 0} for i in (1, 2)]
    book.write_text(json.dumps({"version": "1.0", "sections": {"PATTERNS & APPROACHES": entries}}))
    db = tmp_path / "p.duckdb"
    assert runner.invoke(app, ["import", str(book), "--db", str(db)]).exit_code == 0
    time.sleep(0.3)
    env = {"PLAYBOOK_EXPIRE_DAYS": "0.000001"}  # a tenth of a second: both entries are older, and nobody had them
    stale = runner.invoke(app, ["stale", "--db", str(db)], env=env)
    assert stale.exit_code == 0 and "pat-001" in stale.stdout and "pat-002" in stale.stdout
    assert "no session was given it since it was added" in stale.stdout
    shown = runner.invoke(app, ["show", "--format", "json", "--db", str(db)])
    assert len(json.loads(shown.stdout)["sections"]["PATTERNS & APPROACHES"]) == 2  # proposed, not removed
    wrong = runner.invoke(app, ["retire", "pat-001", "pat-009", "--db", str(db)])
    assert wrong.exit_code == 1 and "`pat-009` is not a live entry" in wrong.output
    done = runner.invoke(app, ["retire", "pat-001", "--db", str(db)])
    assert done.exit_code == 0 and "Version 2" in done.stdout, done.output
    left = json.loads(runner.invoke(app, ["show", "--format", "json", "--db", str(db)]).stdout)
    assert [e["name"] for e in left["sections"]["PATTERNS & APPROACHES"]] == ["pat-002"]
    assert runner.invoke(app, ["revert", "1", "--db", str(db)]).exit_code == 0
    back = json.loads(runner.invoke(app, ["show", "--format", "json", "--db", str(db)]).stdout)
    assert len(back["sections"]["PATTERNS & APPROACHES"]) == 2
