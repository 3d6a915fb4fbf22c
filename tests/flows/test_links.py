"""No write through a link playbook did not make, through the CLI on real files: a real git repository that commits
`CLAUDE.md` as a link out of itself (to a fake `.bashrc`) is refused by `publish` and `publish --git` while the
other targets go out, and a dotfiles link in the home folder is still followed; a `<db>.lock` planted as a link
fails the command in one line; a ledger planted as a link is never appended to, and the hook still exits 0. Every
file a link leads to keeps its bytes, mode and mtime."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from tests.helpers import git

runner = CliRunner()
BASHRC = b"# my shell\nexport PATH=$HOME/bin:$PATH\n"
HAND = "# App\n\nHand-written: run make check before pushing.\n"
ENTRIES = {"PATTERNS & APPROACHES": [{"name": "pat-001", "text": "Pin the toolchain version in CI.", "helpful": 2}]}


@pytest.fixture(autouse=True)
def _exports_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs export to `out_dir` (default `data/out` where they run): this test's folder, not the checkout."""
    monkeypatch.setenv("PLAYBOOK_OUT_DIR", str(tmp_path / "out"))


def victim(path: Path, data: bytes = BASHRC, mode: int = 0o640) -> tuple[bytes, int, int]:
    """A file someone else's link leads to, with an mtime in the past (so a touch would show); what it holds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(mode)
    os.utime(path, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    return state(path)


def state(path: Path) -> tuple[bytes, int, int]:
    """Bytes, mode and mtime of `path` (followed, as a reader of the file sees it)."""
    found = path.stat()
    return path.read_bytes(), found.st_mode, found.st_mtime_ns


# Each shape: how a committed CLAUDE.md leads to `target` (outside the repository), made inside `repo`.
LinkShape = Callable[[Path, Path], None]


def _absolute(repo: Path, target: Path) -> None:
    (repo / "CLAUDE.md").symlink_to(target)


def _relative(repo: Path, target: Path) -> None:
    (repo / "CLAUDE.md").symlink_to(os.path.relpath(target, repo))


def _dotdot_chain(repo: Path, target: Path) -> None:
    # Up past the root (where `..` stays), then down: the same file from wherever the repository is checked out.
    (repo / "CLAUDE.md").symlink_to("../" * 40 + str(target).lstrip("/"))


def _link_to_a_link(repo: Path, target: Path) -> None:
    (repo / "docs").mkdir()
    (repo / "docs" / "CLAUDE.md").symlink_to(target)  # the first hop stays inside; the second leaves
    (repo / "CLAUDE.md").symlink_to("docs/CLAUDE.md")


def _linked_folder(repo: Path, target: Path) -> None:
    # CLAUDE.md is a plain name in a folder that is itself the link: `docs -> <target's folder>`.
    (repo / "docs").symlink_to(target.parent)
    (repo / "CLAUDE.md").symlink_to(f"docs/{target.name}")


SHAPES: dict[str, LinkShape] = {
    "absolute": _absolute,
    "relative": _relative,
    "dotdot-chain": _dotdot_chain,
    "link-to-a-link": _link_to_a_link,
    "linked-folder": _linked_folder,
}


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A home folder with a `.bashrc` and a dotfiles setup (`~/.claude/CLAUDE.md -> ~/dotfiles/claude.md`, the home
    folder itself a git working copy), and a cloned repository whose targets playbook.toml configures."""
    home, repo = tmp_path / "home", tmp_path / "src" / "app"
    monkeypatch.setenv("HOME", str(home))
    (home / "dotfiles").mkdir(parents=True)
    (home / "dotfiles" / "claude.md").write_text("# Me\n")
    (home / ".claude").mkdir()
    (home / ".claude" / "CLAUDE.md").symlink_to(home / "dotfiles" / "claude.md")
    git(home, "init", "--quiet")  # some keep their dotfiles in a repository at ~: their links are still their own
    repo.mkdir(parents=True)
    git(repo, "init", "--quiet", "-b", "main")
    (repo / "AGENTS.md").write_text(HAND)
    # The user's own settings file (every key of it applies), named by PLAYBOOK_CONFIG as well.
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    config = home / ".config" / "playbook" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        f'db = "{tmp_path / "p.duckdb"}"\nplaybooks = ["app"]\n[playbook_settings.app]\ntargets = ['
        f'{{ kind = "claude-md", repo = "{repo}" }}, {{ kind = "agents-md", repo = "{repo}" }},'
        f' {{ kind = "claude-md", path = "{home / ".claude" / "CLAUDE.md"}" }}]\n'
    )
    monkeypatch.setenv("PLAYBOOK_CONFIG", str(config))
    monkeypatch.chdir(tmp_path)
    book = tmp_path / "app.json"
    book.write_text(json.dumps({"version": "1.0", "sections": ENTRIES}))
    assert runner.invoke(app, ["import", str(book), "-p", "app"]).exit_code == 0
    return {"home": home, "repo": repo, "tmp": tmp_path}


def committed(repo: Path, shape: LinkShape, target: Path) -> None:
    """The repository commits the link (and whatever the shape made on the way) as its author made it."""
    shape(repo, target)
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "start")


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_publish_refuses_a_committed_link_out_of_the_repository(hostile: dict[str, Path], shape: LinkShape) -> None:
    home, repo = hostile["home"], hostile["repo"]
    bashrc = home / ".bashrc"
    before = victim(bashrc)
    committed(repo, shape, bashrc)
    link = os.readlink(repo / "CLAUDE.md")

    done = runner.invoke(app, ["publish", "--json"])
    assert done.exit_code == 3, done.output  # a target was refused
    by_kind = {(Path(r["path"]).parent.name, r["kind"]): r for r in json.loads(done.stdout)}
    refused = by_kind[("app", "claude-md")]
    assert refused["status"] == "refused" and "\n" not in refused["message"]
    assert refused["message"].startswith("Refusing to write through `"), refused["message"]
    assert f"outside its repository `{repo}`" in refused["message"] and refused["message"].endswith(
        "Nothing was written."
    )
    assert by_kind[("app", "agents-md")]["status"] == "written"  # the other targets still go out
    assert by_kind[(".claude", "claude-md")]["status"] == "written"  # and the home dotfiles link is followed
    assert state(bashrc) == before  # byte for byte, its mode and its mtime
    assert os.readlink(repo / "CLAUDE.md") == link  # the link stays as its author made it
    assert "Pin the toolchain" in (repo / "AGENTS.md").read_text() and (repo / "AGENTS.md").read_text().startswith(HAND)
    assert (home / ".claude" / "CLAUDE.md").is_symlink() and "Pin the toolchain" in (
        home / "dotfiles" / "claude.md"
    ).read_text()
    shown = runner.invoke(app, ["publish"])  # the table: one row refused, with its reason
    assert shown.exit_code == 3 and shown.stdout.count("refused: Refusing to write") == 1
    assert state(bashrc) == before

    # Through code review: the same in a worktree of the repository; AGENTS.md is committed, CLAUDE.md is not.
    reviewed = runner.invoke(app, ["publish", "--git", str(repo), "--json"])
    assert reviewed.exit_code == 3, reviewed.output
    out = json.loads(reviewed.stdout)
    files = {r["kind"]: r for r in out["files"]}
    assert files["claude-md"]["status"] == "refused" and files["agents-md"]["status"] == "written"
    assert files["claude-md"]["message"].startswith("Refusing to write through `")
    assert out["commit"] and git(repo, "diff", "--name-only", "main", "playbook/update") == "AGENTS.md"
    assert git(repo, "ls-tree", "playbook/update", "CLAUDE.md").startswith("120000 ")  # still the link, unchanged
    assert state(bashrc) == before
    assert git(repo, "branch", "--show-current") == "main"


def test_a_dangling_link_out_of_the_repository_creates_nothing(hostile: dict[str, Path]) -> None:
    home, repo = hostile["home"], hostile["repo"]
    planted = home / ".local" / "autostart" / "run.desktop"  # does not exist: following the link would create it
    committed(repo, _absolute, planted)
    done = runner.invoke(app, ["publish", "--json"])
    assert done.exit_code == 3, done.output
    assert not (home / ".local").exists()
    reviewed = runner.invoke(app, ["publish", "--git", str(repo), "--json"])
    assert reviewed.exit_code == 3 and not (home / ".local").exists()


def test_links_that_stay_inside_the_repository_are_followed(hostile: dict[str, Path]) -> None:
    """`CLAUDE.md -> AGENTS.md`, as many repositories have it: both targets write the one file."""
    repo = hostile["repo"]
    committed(repo, lambda r, t: (r / "CLAUDE.md").symlink_to("AGENTS.md"), repo / "AGENTS.md")
    done = runner.invoke(app, ["publish", "--json"])
    assert done.exit_code == 0, done.output
    assert (repo / "CLAUDE.md").is_symlink() and "Pin the toolchain" in (repo / "AGENTS.md").read_text()


def _lock_link_to_a_link(lock: Path, target: Path) -> None:
    (lock.parent / "middle").symlink_to(target)
    lock.symlink_to("middle")


LOCK_SHAPES: dict[str, Callable[[Path, Path], None]] = {
    "absolute": lambda lock, target: lock.symlink_to(target),
    "relative": lambda lock, target: lock.symlink_to(os.path.relpath(target, lock.parent)),
    "link-to-a-link": _lock_link_to_a_link,
    "hard-link": lambda lock, target: os.link(target, lock),
}


@pytest.mark.parametrize("shape", LOCK_SHAPES.values(), ids=LOCK_SHAPES.keys())
def test_a_lock_planted_as_a_link_fails_in_one_line_and_its_target_keeps_its_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: Callable[[Path, Path], None]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PLAYBOOK_CONFIG", raising=False)
    db = tmp_path / "p.duckdb"
    book = tmp_path / "book.json"
    book.write_text(json.dumps({"version": "1.0", "sections": ENTRIES}))
    assert runner.invoke(app, ["import", str(book), "--db", str(db)]).exit_code == 0
    stored = db.read_bytes()
    target = tmp_path / "elsewhere" / "notes.txt"
    before = victim(target, b"mine, not playbook's\n", 0o600)
    lock = tmp_path / "p.duckdb.lock"
    lock.unlink()  # the one the import left, empty
    shape(lock, target)

    done = runner.invoke(app, ["new", "other", "--db", str(db)])
    assert done.exit_code == 1
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"Error: `{lock}` "), line
    assert line.endswith(
        ("remove the link and run again. Nothing was written through it.", "Nothing was written to it.")
    )
    assert state(target) == before and db.read_bytes() == stored

    lock.unlink()  # what the message says to do
    assert runner.invoke(app, ["new", "other", "--db", str(db)]).exit_code == 0
    assert state(target) == before and not lock.is_symlink()


def test_a_dangling_lock_link_creates_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PLAYBOOK_CONFIG", raising=False)
    lock = tmp_path / "p.duckdb.lock"
    lock.symlink_to(tmp_path / "profile.d" / "evil.sh")
    (tmp_path / "profile.d").mkdir()
    done = runner.invoke(app, ["new", "other", "--db", str(tmp_path / "p.duckdb")])
    assert done.exit_code == 1 and "is a symbolic link (to `" in done.stderr
    assert os.listdir(tmp_path / "profile.d") == [] and not (tmp_path / "p.duckdb").exists()


@pytest.fixture
def hooked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A database with a playbook and the hook installed in a project (its snapshot written)."""
    monkeypatch.chdir(tmp_path)
    for name in ("PLAYBOOK_CONFIG", "PLAYBOOK_DB", "PLAYBOOK_HOLDOUT"):
        monkeypatch.delenv(name, raising=False)
    db = tmp_path / "p.duckdb"
    book = tmp_path / "book.json"
    book.write_text(json.dumps({"version": "1.0", "sections": ENTRIES}))
    assert runner.invoke(app, ["import", str(book), "--db", str(db)]).exit_code == 0
    project = tmp_path / "src" / "api"
    project.mkdir(parents=True)
    done = runner.invoke(app, ["hook", "install", "--project", str(project), "--db", str(db)])
    assert done.exit_code == 0, done.output
    return {"db": db, "project": project, "ledger": tmp_path / "hook" / "p-exposure.jsonl", "tmp": tmp_path}


def _dangling(ledger: Path, target: Path) -> None:
    target.unlink()  # following the link would create it
    ledger.symlink_to(target)


def _ledger_folder(ledger: Path, target: Path) -> None:
    """The ledger's folder (`hook/`, which playbook makes) planted as a link to the target's folder."""
    for part in ("snapshot", "prompt", "guards"):  # the hooks still find their snapshot
        (ledger.parent / f"p-{part}.json").rename(target.parent / f"p-{part}.json")
    ledger.parent.rmdir()
    ledger.parent.symlink_to(target.parent)
    (target.parent / ledger.name).symlink_to(target)


LEDGER_SHAPES: dict[str, Callable[[Path, Path], None]] = {
    "absolute": lambda ledger, target: ledger.symlink_to(target),
    "relative": lambda ledger, target: ledger.symlink_to(os.path.relpath(target, ledger.parent)),
    "dangling": _dangling,
    "hard-link": lambda ledger, target: os.link(target, ledger),
    "linked-folder": _ledger_folder,
}


@pytest.mark.parametrize("shape", LEDGER_SHAPES.values(), ids=LEDGER_SHAPES.keys())
def test_the_hook_never_appends_through_a_link_and_still_exits_0(
    hooked: dict[str, Path], shape: Callable[[Path, Path], None]
) -> None:
    target = hooked["tmp"] / "elsewhere" / "history.jsonl"
    victim(target, b'{"mine": true}\n', 0o600)
    shape(hooked["ledger"], target)
    before = state(target) if target.exists() else None
    event = {"session_id": "s-1", "cwd": str(hooked["project"]), "source": "startup"}

    done = runner.invoke(app, ["hook", "session-start", "--db", str(hooked["db"])], input=json.dumps(event))
    assert done.exit_code == 0
    assert "Pin the toolchain" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]  # fails open
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("playbook hook: exposure not recorded: `"), line
    assert (state(target) if target.exists() else None) == before  # nothing appended, nothing created


def test_the_installed_hook_run_as_claude_code_does_skips_a_linked_ledger(hooked: dict[str, Path]) -> None:
    target = hooked["tmp"] / "home" / ".bashrc"
    before = victim(target)
    hooked["ledger"].symlink_to(target)
    (group,) = json.loads((hooked["project"] / ".claude" / "settings.json").read_text())["hooks"]["SessionStart"]
    event = {"session_id": "s-1", "cwd": str(hooked["project"]), "source": "startup"}
    done = subprocess.run(
        group["hooks"][0]["command"], shell=True, input=json.dumps(event), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    assert state(target) == before and hooked["ledger"].is_symlink()
