"""Entries bound to their sources, on a real folder under real git: the rules miner's entries cite the script, file
and folder they rest on; after a refactor (a script renamed, a file moved) those entries are held from the export,
`publish` and the hooks' snapshot with their reason, `revalidate` records the commit it checked, and they come back
when what they rest on is back."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from flows.cli import app
from tests.helpers import trust_config

runner = CliRunner()


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


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


@pytest.mark.slow
def test_a_project_not_on_this_machine_is_not_checked_and_its_entries_go_out(learned: dict[str, Path]) -> None:
    db, repo = learned["db"], learned["repo"]
    repo.rename(repo.with_name("moved-away"))
    checked = json.loads(runner.invoke(app, ["revalidate", "--json", "--db", str(db)]).stdout)
    assert {c["status"] for c in checked} == {"unchecked"}
    assert any("`pnpm dev`" in e["text"] for e in exported(db).values())
