"""`playbook publish --git`: the export targets land as a commit on a review branch of the team repository
(real `git`, a local bare repository as the remote), never on the default branch, never in the developer's
checkout, with a message that sums up what changed since the last publish; nothing is committed when
nothing changed."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from tests.helpers import git, trust_config, write_session

runner = CliRunner()
HAND = "# Team\n\nHand-written: run make check before pushing.\n"


@pytest.fixture(autouse=True)
def _exports_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs export to `out_dir` (default `data/out` where they run): this test's folder, not the checkout."""
    monkeypatch.setenv("PLAYBOOK_OUT_DIR", str(tmp_path / "out"))


@pytest.fixture
def team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """(bare remote, developer checkout on main with a hand-written CLAUDE.md, a database with one playbook)."""
    remote, work = tmp_path / "team.git", tmp_path / "work"
    git(tmp_path, "init", "--quiet", "--bare", "-b", "main", str(remote))
    git(tmp_path, "clone", "--quiet", str(remote), str(work))
    (work / "CLAUDE.md").write_text(HAND)
    git(work, "add", "CLAUDE.md")
    git(work, "commit", "--quiet", "-m", "start")
    git(work, "push", "--quiet", "origin", "HEAD:main")
    config = tmp_path / "playbook.toml"
    config.write_text(
        f'db = "{tmp_path / "p.duckdb"}"\nplaybook = "team"\nplaybooks = ["team"]\nmin_messages = 1\n'
        # A path target is not part of the repository: --git leaves it out.
        f'[playbook_settings.team]\ntargets = [{{ kind = "claude-md", repo = "{tmp_path / "elsewhere"}" }},'
        f' {{ kind = "agents-md", repo = "{tmp_path / "elsewhere"}" }},'
        f' {{ kind = "claude-md", path = "{tmp_path / "home" / "CLAUDE.md"}" }}]\n'
    )
    monkeypatch.setenv("PLAYBOOK_CONFIG", str(trust_config(config)))
    entry = {"name": "pat-001", "text": "Pin the toolchain version in CI.", "helpful": 2, "harmful": 0}
    book = tmp_path / "team.json"
    book.write_text(json.dumps({"version": "1.0", "sections": {"PATTERNS & APPROACHES": [entry]}}))
    assert runner.invoke(app, ["import", str(book), "-p", "team"]).exit_code == 0
    return remote, work, tmp_path


def publish(work: Path, *extra: str) -> dict:
    done = runner.invoke(app, ["publish", "--git", str(work), "--json", *extra])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


@pytest.mark.slow
def test_publish_commits_on_a_review_branch_and_pushes_it(team: tuple[Path, Path, Path]) -> None:
    remote, work, tmp = team
    main_before = git(remote, "rev-parse", "main")

    first = publish(work)
    assert first["branch"] == "playbook/update" and first["pushed_to"] == "origin" and first["commit"]
    assert {Path(f["path"].split(" (")[0]).name for f in first["files"]} == {"CLAUDE.md", "AGENTS.md"}
    assert git(remote, "rev-parse", "playbook/update") == first["commit"]  # pushed to the bare repository
    assert git(remote, "rev-parse", "main") == main_before  # the default branch is never touched
    claude = git(remote, "show", "playbook/update:CLAUDE.md")
    assert claude.startswith(HAND.strip()) and "Pin the toolchain version in CI." in claude  # hand-written kept
    assert "Pin the toolchain" in git(remote, "show", "playbook/update:AGENTS.md")
    message = git(remote, "log", "-1", "--format=%B", "playbook/update")
    assert message.startswith("playbook: team v1") and "team: version 0 -> 1" in message
    assert "Playbook-Version: team=1" in message
    # The developer's checkout: still on main, clean, its CLAUDE.md as it was; the path target not written.
    assert git(work, "branch", "--show-current") == "main" and git(work, "status", "--porcelain") == ""
    assert (work / "CLAUDE.md").read_text() == HAND
    assert not (tmp / "home" / "CLAUDE.md").exists() and not (tmp / "elsewhere").exists()
    assert len(git(work, "worktree", "list").splitlines()) == 1  # the temporary worktree is gone

    again = publish(work)  # nothing changed: no commit, the branch stays where it was
    assert again["commit"] is None and again["message"] == "nothing changed since the last publish"
    assert git(remote, "rev-parse", "playbook/update") == first["commit"]

    # A curated session adds a lesson: the next commit grows the branch and sums up only what is new.
    write_session(tmp / "t" / "s.jsonl", "s0", datetime(2026, 5, 1, tzinfo=UTC), error=True)
    replay = tmp / "replay.jsonl"
    answers = [
        ("reflector", {"analysis": "Tests failed until run as a module.", "bullet_tags": []}),
        ("curator", {"reasoning": "r", "operations": [{"type": "ADD", "text": "Run tests with python -m pytest."}]}),
    ]
    replay.write_text(
        "".join(json.dumps({"session_id": "s0", "step": s, "text": json.dumps(a)}) + "\n" for s, a in answers)
    )
    assert runner.invoke(app, ["ingest", str(tmp / "t")]).exit_code == 0
    curated = runner.invoke(app, ["curate", "--llm", f"replay:{replay}"])
    assert curated.exit_code == 0, curated.output
    second = publish(work)
    assert second["commit"] and git(remote, "rev-parse", "playbook/update") == second["commit"]
    assert git(remote, "rev-parse", f"{second['commit']}^") == first["commit"]  # a fast-forward, no rewrite
    message = git(remote, "log", "-1", "--format=%B", "playbook/update")
    assert "team: version 1 -> 2 (1 new version), 1 ADD, from 1 session" in message
    assert "Playbook-Version: team=2" in message


def test_the_default_branch_and_a_non_repository_are_refused(team: tuple[Path, Path, Path]) -> None:
    remote, work, tmp = team
    refused = runner.invoke(app, ["publish", "--git", str(work), "--branch", "main"])
    assert refused.exit_code == 1 and "Refusing to publish on `main`" in refused.output
    assert "Traceback" not in refused.output
    plain = tmp / "plain"
    plain.mkdir()
    missing = runner.invoke(app, ["publish", "--git", str(plain)])
    assert missing.exit_code == 1 and "is not a git working copy" in missing.output
    assert git(remote, "branch", "--list", "playbook/update") == ""  # nothing was pushed


def test_without_a_remote_the_branch_is_committed_locally(team: tuple[Path, Path, Path]) -> None:
    _, work, _ = team
    git(work, "remote", "remove", "origin")
    done = publish(work)
    assert done["commit"] and done["pushed_to"] is None
    assert git(work, "rev-parse", "playbook/update") == done["commit"]
    assert git(work, "branch", "--show-current") == "main"


def _new_lesson(tmp: Path, text: str) -> None:
    book = tmp / "more.json"
    entry = {"name": "pat-009", "text": text, "helpful": 1, "harmful": 0}
    book.write_text(json.dumps({"version": "1.0", "sections": {"PATTERNS & APPROACHES": [entry]}}))
    assert runner.invoke(app, ["import", str(book), "-p", "team", "--merge"]).exit_code == 0


def _commit_on_branch(work: Path, name: str) -> str:
    """A commit of the developer's own on the local review branch, not pushed."""
    git(work, "checkout", "--quiet", "playbook/update")
    (work / name).write_text("reviewer's note\n")
    git(work, "add", name)
    git(work, "commit", "--quiet", "-m", f"note {name}")
    tip = git(work, "rev-parse", "HEAD")
    git(work, "checkout", "--quiet", "main")
    return tip


def test_local_commits_on_the_review_branch_are_built_on_never_orphaned(team: tuple[Path, Path, Path]) -> None:
    remote, work, tmp = team
    first = publish(work)
    git(work, "fetch", "--quiet", "origin")
    git(work, "branch", "--quiet", "--force", "playbook/update", "origin/playbook/update")
    mine = _commit_on_branch(work, "NOTES.md")  # local, ahead of the remote
    _new_lesson(tmp, "Run the linters before the tests.")
    second = publish(work)
    assert second["commit"] and git(work, "rev-parse", f"{second['commit']}^") == mine
    assert git(work, "rev-parse", "playbook/update") == second["commit"]
    assert git(remote, "rev-parse", "playbook/update") == second["commit"]  # pushed, with the local commit
    assert git(remote, "show", "playbook/update:NOTES.md") == "reviewer's note"
    assert git(remote, "merge-base", "--is-ancestor", first["commit"], second["commit"]) == ""


def test_a_diverged_review_branch_is_refused_and_left_alone(team: tuple[Path, Path, Path]) -> None:
    remote, work, tmp = team
    publish(work)
    git(work, "fetch", "--quiet", "origin")
    git(work, "branch", "--quiet", "--force", "playbook/update", "origin/playbook/update")
    other = tmp / "other"  # a teammate pushes to the review branch from another clone
    git(tmp, "clone", "--quiet", "-b", "playbook/update", str(remote), str(other))
    (other / "THEIRS.md").write_text("theirs\n")
    git(other, "add", "THEIRS.md")
    git(other, "commit", "--quiet", "-m", "theirs")
    git(other, "push", "--quiet", "origin", "playbook/update")
    theirs = git(remote, "rev-parse", "playbook/update")
    mine = _commit_on_branch(work, "MINE.md")  # and a local commit the remote lacks
    _new_lesson(tmp, "Run the linters before the tests.")
    done = runner.invoke(app, ["publish", "--git", str(work)])
    assert done.exit_code == 1, done.output
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("Error: Local branch `playbook/update` and `origin/playbook/update` have diverged")
    assert git(work, "rev-parse", "playbook/update") == mine and git(remote, "rev-parse", "playbook/update") == theirs
    assert len(git(work, "worktree", "list").splitlines()) == 1


def _repo_state(work: Path) -> tuple[str, str, str, str]:
    """Every ref, the checked-out branch, HEAD and the working tree's status: what a refused publish leaves alone."""
    refs = git(work, "for-each-ref", "--format=%(refname) %(objectname)")
    return refs, git(work, "symbolic-ref", "HEAD"), git(work, "rev-parse", "HEAD"), git(work, "status", "--porcelain")


@pytest.mark.parametrize(
    "branch",
    ["-m", "-c", "-f", "--edit-description", "--force", "refs/heads/main", "heads/main", "origin/main", "origin/playbook/update",
     "HEAD", "@", "@{-1}", "MAIN", "Master", "+main", "x:main", "main@{0}", "main~0", " main", "a\nb", "../main",
     "main.lock", "%6dain", ""],
)  # fmt: skip
def test_a_branch_name_that_is_an_option_a_ref_or_a_disguise_is_refused_with_nothing_changed(
    team: tuple[Path, Path, Path], branch: str
) -> None:
    remote, work, _ = team
    git(work, "checkout", "--quiet", "-b", "feature")  # -m would rename the checked-out branch
    (work / "CLAUDE.md").write_text(HAND + "an uncommitted edit\n")
    before, remote_before = _repo_state(work), git(remote, "for-each-ref")
    done = runner.invoke(app, ["publish", "--git", str(work), "--branch", branch])
    assert done.exit_code == 1, done.output
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("Error:") and "Traceback" not in done.output
    assert _repo_state(work) == before and git(remote, "for-each-ref") == remote_before


def test_a_plain_branch_name_is_admitted(team: tuple[Path, Path, Path]) -> None:
    remote, work, _ = team
    done = publish(work, "--branch", "lessons/team-2.x_1")
    assert git(remote, "rev-parse", "lessons/team-2.x_1") == done["commit"]


def test_the_checked_out_review_branch_is_refused_with_a_way_out(team: tuple[Path, Path, Path]) -> None:
    """A checkout on `playbook/update` (a clone of an empty remote has no remote HEAD, so that branch is also the
    default branch's only guess): the refusal says it is checked out and names another branch to pass."""
    _, work, tmp = team
    publish(work)
    git(work, "fetch", "--quiet", "origin")
    git(work, "checkout", "--quiet", "playbook/update")
    git(work, "remote", "set-head", "origin", "--delete")
    (work / "CLAUDE.md").write_text(git(work, "show", "HEAD:CLAUDE.md") + "\nmy review note\n")
    _new_lesson(tmp, "Run the linters before the tests.")
    before = _repo_state(work)
    done = runner.invoke(app, ["publish", "--git", str(work)])
    assert done.exit_code == 1, done.output
    (line,) = done.stderr.strip().splitlines()
    assert "`playbook/update`: it is checked out in" in line and "the default branch" not in line
    assert "pass --branch playbook/lessons" in line
    assert _repo_state(work) == before
