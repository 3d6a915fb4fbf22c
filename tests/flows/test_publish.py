"""`playbook publish`: every configured target of every playbook, from playbook.toml; hand-written text is
kept, a file playbook did not write is refused (exit 3) and left as it was, and a second publish is a no-op."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from tests.helpers import trust_config

runner = CliRunner()


@pytest.mark.slow
def test_publish_writes_every_configured_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "api"
    (repo / ".claude" / "rules").mkdir(parents=True)
    (repo / "CLAUDE.md").write_text("# API\n\nHand-written: never push to main.\n")
    (repo / ".claude" / "rules" / "playbook.md").write_text("my own rules, not generated\n")
    home_claude = tmp_path / "home" / ".claude" / "CLAUDE.md"
    config = tmp_path / "playbook.toml"
    config.write_text(
        f"""
db = "{tmp_path / "p.duckdb"}"
playbooks = ["global", "api"]

[playbook_settings.global]
targets = [{{ kind = "claude-md", path = "{home_claude}" }}]

[playbook_settings.api]
max_entries = 1
targets = [
  {{ kind = "claude-md", repo = "{repo}" }},
  {{ kind = "agents-md", repo = "{repo}" }},
  {{ kind = "cursor", repo = "{repo}" }},
  {{ kind = "claude-rules", repo = "{repo}" }},
]
"""
    )
    monkeypatch.setenv("PLAYBOOK_CONFIG", str(trust_config(config)))
    entries = [{"name": f"pat-00{i}", "text": f"Lesson {i} for the API.", "helpful": i} for i in (1, 2)]
    book = tmp_path / "api.json"
    book.write_text(json.dumps({"version": "1.0", "sections": {"PATTERNS & APPROACHES": entries}}))
    assert runner.invoke(app, ["import", str(book), "-p", "api"]).exit_code == 0
    assert runner.invoke(app, ["new", "global"]).exit_code == 0

    done = runner.invoke(app, ["publish", "--json"])
    assert done.exit_code == 3, done.output  # one target refused
    results = {(r["playbook"], Path(r["path"]).name): r for r in json.loads(done.stdout)}
    assert {k: r["status"] for k, r in results.items()} == {
        ("global", "CLAUDE.md"): "empty",  # the global playbook has no entry yet: no file is created
        ("api", "CLAUDE.md"): "written",
        ("api", "AGENTS.md"): "written",
        ("api", "playbook.mdc"): "written",
        ("api", "playbook.md"): "refused",
    }
    assert "was not written by playbook" in results[("api", "playbook.md")]["message"]
    assert (repo / ".claude" / "rules" / "playbook.md").read_text() == "my own rules, not generated\n"
    claude = (repo / "CLAUDE.md").read_text()
    assert claude.startswith("# API\n\nHand-written: never push to main.\n\n<!-- playbook:begin")
    assert "[pat-002]" in claude and "[pat-001]" not in claude  # api's own budget: 1 entry, the most helpful
    assert "1 more entry left out to fit the budget" in claude
    mdc = (repo / ".cursor" / "rules" / "playbook.mdc").read_text()
    assert mdc.startswith("---\ndescription: Lessons learned from past agent sessions (playbook api)\n")
    assert not home_claude.exists()

    (repo / ".claude" / "rules" / "playbook.md").unlink()  # the user moved their file away
    again = runner.invoke(app, ["publish", "--json"])
    assert again.exit_code == 0, again.output
    assert sorted(r["status"] for r in json.loads(again.stdout)) == ["empty"] + ["unchanged"] * 3 + ["written"]
    shown = runner.invoke(app, ["publish", "-p", "api"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0 and shown.stdout.count("unchanged") == 4

    # The api playbook loses its entries: its agents are told nothing, and what was hand-written stays as it was.
    book = tmp_path / "emptied.json"
    book.write_text(json.dumps({"version": "1.0", "sections": {}}))
    assert runner.invoke(app, ["import", str(book), "-p", "api", "--replace"]).exit_code == 0
    emptied = runner.invoke(app, ["publish", "-p", "api", "--json"])
    assert emptied.exit_code == 0, emptied.output
    assert (repo / "CLAUDE.md").read_text() == "# API\n\nHand-written: never push to main.\n\n"
    assert "<!--" not in (repo / "AGENTS.md").read_text()
    mdc = (repo / ".cursor" / "rules" / "playbook.mdc").read_text()
    assert "pat-00" not in mdc and "empty" not in mdc and mdc.rstrip().endswith("-->")  # its header only


def test_publish_without_targets_writes_the_playbooks_own_files_and_says_how_to_add_targets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no playbook.toml here, and none named
    monkeypatch.delenv("PLAYBOOK_CONFIG", raising=False)
    (tmp_path / "CLAUDE.md").write_text("# Mine\n")
    db = str(tmp_path / "p.duckdb")
    book = tmp_path / "book.json"
    entries = [{"name": "pat-001", "text": "Run the tests with `make test`.", "helpful": 2}]
    book.write_text(json.dumps({"version": "1.0", "sections": {"PATTERNS & APPROACHES": entries}}))
    assert runner.invoke(app, ["import", str(book), "--db", db]).exit_code == 0

    done = runner.invoke(app, ["publish", "--db", db, "--json"])
    assert done.exit_code == 0, done.output
    assert [(Path(r["path"]).name, r["status"]) for r in json.loads(done.stdout)] == [
        ("default.md", "written"),
        ("default.json", "written"),
    ]
    assert done.stderr.count("\n") == 1 and "No export targets are configured" in done.stderr
    assert "under `[playbook_settings.default]` in playbook.toml" in done.stderr  # no markup eats the table name
    assert "`make test`" in (tmp_path / "data" / "out" / "default.md").read_text()
    assert (tmp_path / "CLAUDE.md").read_text() == "# Mine\n"  # a file nobody named is never touched


def test_a_typo_in_a_target_is_one_clear_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "playbook.toml"
    config.write_text('[playbook_settings.api]\ntargets = [{ kind = "claude", repo = "/r" }]\n')
    monkeypatch.setenv("PLAYBOOK_CONFIG", str(trust_config(config)))
    done = runner.invoke(app, ["publish", "--db", str(tmp_path / "p.duckdb")])
    assert done.exit_code == 1
    assert "Invalid value for `playbook_settings.api.targets.0.kind`" in done.stderr
    assert "'claude-md'" in done.stderr and "Traceback" not in done.output


@pytest.mark.slow
def test_a_repositorys_files_carry_its_own_projects_facts_and_no_other_projects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rules miner states a project's facts as `In <project>: ...`: a repository's CLAUDE.md gets its own and
    none of another project's; a file named by `path` (the user's ~/.claude/CLAUDE.md) serves every project."""
    samples = Path(__file__).resolve().parents[2] / "data" / "samples"
    ccl, other = tmp_path / "src" / "claude-code-log", tmp_path / "src" / "elsewhere"
    for repo in (ccl, other):
        repo.mkdir(parents=True)
    home_claude = tmp_path / "home" / ".claude" / "CLAUDE.md"
    config = tmp_path / "playbook.toml"
    config.write_text(
        f"""
db = "{tmp_path / "p.duckdb"}"
out_dir = "{tmp_path / "out"}"

[playbook_settings.default]
targets = [
  {{ kind = "claude-md", repo = "{ccl}" }},
  {{ kind = "agents-md", repo = "{other}" }},
  {{ kind = "claude-md", path = "{home_claude}" }},
]
"""
    )
    monkeypatch.setenv("PLAYBOOK_CONFIG", str(trust_config(config)))
    assert runner.invoke(app, ["ingest", str(samples)]).exit_code == 0
    assert runner.invoke(app, ["curate", "--llm", "heuristic"]).exit_code == 0
    done = runner.invoke(app, ["publish", "--json"])
    assert done.exit_code == 0, done.output
    mine, home = (ccl / "CLAUDE.md").read_text(), home_claude.read_text()
    assert "In claude-code-log: run the tests with `uv run pytest`" in mine
    assert "In spotter-fum: " not in mine and "In JSSoundRecorder: " not in mine
    # No lesson is for the other repository: its agents are told nothing, and no AGENTS.md is created there.
    assert not (other / "AGENTS.md").exists()
    statuses = {Path(r["path"]).parent.name: r["status"] for r in json.loads(done.stdout)}
    assert statuses == {"claude-code-log": "written", "elsewhere": "empty", ".claude": "written"}
    assert "In claude-code-log: " in home and "In spotter-fum: " in home
    # The note each file ends with counts what that file carries.
    assert "written by rules" in mine
    # What a session in the repository loads is what counts as its exposure: only the entries its file carried.
    carried = json.loads(
        runner.invoke(
            app, ["sql", f"select entry_ids from exports where target = '{ccl / 'CLAUDE.md'}'", "--json"]
        ).stdout
    )
    assert carried and all(f"[{e}]" in mine for e in carried[0]["entry_ids"])


def test_publish_keeps_modes_and_links_of_what_it_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """atk10: a CLAUDE.md hard-linked as AGENTS.md stays one file (one block), a 0600 file stays 0600, a link stays a
    link; the hand-written text is kept in each."""
    hand = "# Mine\nkeep-a hand line\n"
    linked, private, symlinked = tmp_path / "linked", tmp_path / "private", tmp_path / "symlinked"
    for repo in (linked, private, symlinked):
        repo.mkdir()
        (repo / "CLAUDE.md").write_text(hand)
    os.link(linked / "CLAUDE.md", linked / "AGENTS.md")
    (private / "CLAUDE.md").chmod(0o600)
    (symlinked / "AGENTS.md").symlink_to("CLAUDE.md")
    targets = ", ".join(
        f'{{ kind = "{kind}", repo = "{repo}" }}'
        for repo in (linked, private, symlinked)
        for kind in ("claude-md", "agents-md")
    )
    config = tmp_path / "playbook.toml"
    config.write_text(f'db = "{tmp_path / "p.duckdb"}"\n[playbook_settings.default]\ntargets = [{targets}]\n')
    monkeypatch.setenv("PLAYBOOK_CONFIG", str(trust_config(config)))
    book = tmp_path / "book.json"
    entries = [{"name": "pat-001", "text": "Run the tests with `make test`.", "helpful": 2}]
    book.write_text(json.dumps({"version": "1.0", "sections": {"PATTERNS & APPROACHES": entries}}))
    assert runner.invoke(app, ["import", str(book)]).exit_code == 0
    inode = (linked / "CLAUDE.md").stat().st_ino
    for _ in range(2):
        done = runner.invoke(app, ["publish"])
        assert done.exit_code == 0, done.output
    assert (linked / "CLAUDE.md").stat().st_ino == (linked / "AGENTS.md").stat().st_ino == inode
    assert stat.S_IMODE((private / "CLAUDE.md").stat().st_mode) == 0o600
    assert (symlinked / "AGENTS.md").is_symlink()
    for repo in (linked, private, symlinked):
        text = (repo / "CLAUDE.md").read_text()
        assert text.startswith(hand) and "`make test`" in text and text.count("playbook:begin") == 1
