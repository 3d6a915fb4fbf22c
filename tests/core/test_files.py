"""The one atomic writer (`core.io.files`): what it replaces keeps its mode and owner, a link stays a link,
a new file is 0644 less the umask, and a failed write leaves the old file and no temporary file. No write goes
through a link out of its git working copy, and the files opened in place (`open_own`: the run lock, the hook's
ledger) are never opened through a link at all."""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import PlaybookFileError
from core.io.files import append_line, copy_atomic, open_own, read_text, write_atomic
from tests.profiles import examples


@settings(max_examples=examples(200))
@given(st.integers(min_value=0, max_value=0o7777).map(lambda mode: mode | stat.S_IWUSR), st.binary(max_size=64))
def test_the_mode_of_what_is_replaced_is_kept(tmp_path_factory: pytest.TempPathFactory, mode: int, data: bytes) -> None:
    folder = tmp_path_factory.mktemp("mode")
    path = folder / "CLAUDE.md"
    path.write_bytes(b"old")
    path.chmod(mode)
    write_atomic(path, data)
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert path.read_bytes() == data and os.listdir(folder) == ["CLAUDE.md"]


@pytest.mark.parametrize("mode", [0o444, 0o400, 0o555, 0o044])
def test_a_file_its_owner_made_read_only_is_left_as_it_was(tmp_path: Path, mode: int) -> None:
    # round 9: as root, an export rewrote a 0444 CLAUDE.md (a rename replaces a file whatever its mode)
    path = tmp_path / "CLAUDE.md"
    path.write_text("mine\n")
    path.chmod(mode)
    with pytest.raises(PlaybookFileError, match=rf"^Cannot write `.*CLAUDE\.md`: it is read-only \(mode {mode:04o}\)"):
        write_atomic(path, "new")
    assert path.read_text() == "mine\n" and stat.S_IMODE(path.stat().st_mode) == mode
    assert os.listdir(tmp_path) == ["CLAUDE.md"]


def test_a_fifo_where_a_file_is_read_or_written_is_refused_at_once(tmp_path: Path) -> None:
    # round 9: a FIFO at CLAUDE.md made `export --out` wait for a writer forever
    path = tmp_path / "CLAUDE.md"
    os.mkfifo(path)
    with pytest.raises(PlaybookFileError, match=r"not a regular file"):
        read_text(path)
    with pytest.raises(PlaybookFileError, match=r"not a regular file"):
        write_atomic(path, "new")
    assert stat.S_ISFIFO(path.lstat().st_mode) and os.listdir(tmp_path) == ["CLAUDE.md"]


def test_a_chain_of_links_stays_and_the_last_target_is_written(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "CLAUDE.md"
    real.parent.mkdir()
    real.write_text("old")
    middle = tmp_path / "middle.md"
    middle.symlink_to(real)
    link = tmp_path / "CLAUDE.md"
    link.symlink_to(middle)
    write_atomic(link, "new")
    assert link.is_symlink() and middle.is_symlink() and real.read_text() == "new"
    dangling = tmp_path / "AGENTS.md"
    dangling.symlink_to(tmp_path / "dotfiles" / "AGENTS.md")  # the dotfile does not exist yet: it is created
    write_atomic(dangling, "made")
    assert dangling.is_symlink() and (tmp_path / "dotfiles" / "AGENTS.md").read_text() == "made"


@settings(max_examples=examples(100))
@given(st.binary(max_size=3 * 1024), st.binary(max_size=3 * 1024), st.sampled_from([0o600, 0o644, 0o664]))
def test_a_hard_linked_file_is_written_in_place_so_every_link_shows_it(
    tmp_path_factory: pytest.TempPathFactory, old: bytes, data: bytes, mode: int
) -> None:
    # atk10: CLAUDE.md hard-linked as AGENTS.md became two files after a publish (a rename gives a new inode)
    folder = tmp_path_factory.mktemp("links")
    path, other = folder / "CLAUDE.md", folder / "AGENTS.md"
    path.write_bytes(old)
    path.chmod(mode)
    os.link(path, other)
    inode = path.stat().st_ino
    write_atomic(other, data)
    assert path.stat().st_ino == other.stat().st_ino == inode and path.stat().st_nlink == 2
    assert path.read_bytes() == other.read_bytes() == data
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert sorted(os.listdir(folder)) == ["AGENTS.md", "CLAUDE.md"]  # no temporary file left


def test_a_link_to_a_hard_linked_file_stays_a_link_and_the_links_stay_one_file(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "claude.md"
    real.parent.mkdir()
    real.write_text("old, and longer than the new text\n")
    os.link(real, tmp_path / "dotfiles" / "backup.md")
    link = tmp_path / "CLAUDE.md"
    link.symlink_to(real)
    copy_atomic(_written(tmp_path / "source.md", "new\n"), link)
    assert link.is_symlink() and (tmp_path / "dotfiles" / "backup.md").read_text() == "new\n"
    assert real.stat().st_nlink == 2


def _written(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary_file(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "CLAUDE.md"
    path.write_text("old")
    folder.chmod(0o500)
    try:
        if os.access(folder, os.W_OK):  # root writes anyway: nothing to show here
            pytest.skip("this user can write into a read-only folder")
        with pytest.raises(PlaybookFileError, match=r"^Cannot write `.*CLAUDE\.md`: Permission denied"):
            write_atomic(path, "new")
    finally:
        folder.chmod(0o700)
    assert path.read_text() == "old" and os.listdir(folder) == ["CLAUDE.md"]


def test_a_copy_is_whole_and_a_missing_source_is_one_line(tmp_path: Path) -> None:
    source = tmp_path / "db.duckdb"
    source.write_bytes(b"x" * 3_000_000)
    target = tmp_path / "backups" / "copy.duckdb"
    copy_atomic(source, target)
    assert target.read_bytes() == source.read_bytes() and os.listdir(target.parent) == ["copy.duckdb"]
    with pytest.raises(PlaybookFileError, match=r"^Cannot read `.*nothing\.duckdb`: No such file or directory\.$"):
        copy_atomic(tmp_path / "nothing.duckdb", target)
    assert target.read_bytes() == source.read_bytes()


def _world(tmp: Path) -> dict[str, Path]:
    """A real git working copy, a file outside it, and a home folder that is a working copy of its own."""
    repo, outside, home = tmp / "repo", tmp / "outside", tmp / "home"
    for folder in (repo, outside, home):
        folder.mkdir()
    for folder in (repo, home):
        subprocess.run(["git", "init", "--quiet", str(folder)], check=True)
    (outside / "victim.txt").write_text("victim")
    (repo / "AGENTS.md").write_text("agents")
    return {"repo": repo, "outside": outside, "home": home, "victim": outside / "victim.txt"}


def _link(path: Path, to: str | Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(to)
    return path


# Each shape makes a link and returns the path written; True when the write must be refused.
SHAPES: dict[str, tuple[Callable[[dict[str, Path]], Path], bool]] = {
    "absolute out": (lambda w: _link(w["repo"] / "CLAUDE.md", w["victim"]), True),
    "relative out": (lambda w: _link(w["repo"] / "CLAUDE.md", "../outside/victim.txt"), True),
    "dotdot chain out": (lambda w: _link(w["repo"] / "CLAUDE.md", "../" * 40 + str(w["victim"]).lstrip("/")), True),
    "link to a link out": (
        lambda w: (_link(w["repo"] / "b.md", w["victim"]), _link(w["repo"] / "CLAUDE.md", "b.md"))[1],
        True,
    ),
    "dangling out": (lambda w: _link(w["repo"] / "CLAUDE.md", w["outside"] / "new.txt"), True),
    "linked folder out": (
        lambda w: _link(w["repo"] / ".github", w["outside"]) / "victim.txt",
        True,
    ),
    "loop": (
        lambda w: (_link(w["repo"] / "a.md", "b.md"), _link(w["repo"] / "b.md", "a.md"))[0],
        True,
    ),
    "inside": (lambda w: _link(w["repo"] / "CLAUDE.md", "AGENTS.md"), False),
    "out and back in": (
        lambda w: (
            _link(w["outside"] / "back.md", w["repo"] / "AGENTS.md"),
            _link(w["repo"] / "CLAUDE.md", w["outside"] / "back.md"),
        )[1],
        False,
    ),
    "home dotfiles": (lambda w: _link(w["home"] / ".claude" / "CLAUDE.md", w["victim"]), False),
    "no repository": (lambda w: _link(w["outside"] / "plain" / "CLAUDE.md", w["victim"]), False),
    "repository reached through the user's link": (
        lambda w: _link(w["home"] / "src", w["repo"]) / "AGENTS.md",
        False,
    ),
}


@pytest.mark.parametrize(("shape", "refused"), SHAPES.values(), ids=SHAPES.keys())
def test_no_write_through_a_link_out_of_its_working_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: Callable[[dict[str, Path]], Path], refused: bool
) -> None:
    world = _world(tmp_path)
    monkeypatch.setenv("HOME", str(world["home"]))
    path = shape(world)
    files = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and ".git" not in p.parts}
    if not refused:
        write_atomic(path, "new")
        assert path.read_text() == "new" and (path.is_symlink() or path.parent.is_symlink())  # the link stays
        return
    with pytest.raises(PlaybookFileError, match=r"^(Refusing to write through `|Cannot write `).*`[^`]*$") as caught:
        write_atomic(path, "new")
    assert "\n" not in str(caught.value)
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert after == files  # nothing written, nothing created (a dangling link's target included)


def _linked_folder(path: Path, victim: Path) -> None:
    path.parent.rmdir()
    path.parent.symlink_to(victim.parent)


OWN_SHAPES: dict[str, tuple[Callable[[Path, Path], object], str]] = {
    "link": (lambda path, victim: path.symlink_to(victim), r"^`.*/p-exposure\.jsonl` is a symbolic link \(to `"),
    "dangling link": (
        lambda path, victim: path.symlink_to(victim.with_name("new.txt")),
        r"^`.*/p-exposure\.jsonl` is a symbolic link \(to `",
    ),
    "hard link": (lambda path, victim: os.link(victim, path), r"^`.*/p-exposure\.jsonl` has 2 hard links, so playbook"),
    "fifo": (lambda path, victim: os.mkfifo(path), r"^Cannot write `.*/p-exposure\.jsonl`: No such device"),
    "folder": (lambda path, victim: path.mkdir(), r"^Cannot write `.*/p-exposure\.jsonl`: Is a directory"),
    "linked folder": (
        _linked_folder,
        r"^`.*/hook` is a symbolic link \(to `.*`\), not a folder playbook made",
    ),
}


@pytest.mark.parametrize(("shape", "said"), OWN_SHAPES.values(), ids=OWN_SHAPES.keys())
def test_a_file_opened_in_place_is_never_opened_through_a_link(
    tmp_path: Path, shape: Callable[[Path, Path], object], said: str
) -> None:
    victim = tmp_path / "outside" / "victim.txt"
    victim.parent.mkdir()
    victim.write_text("victim")
    victim.chmod(0o600)
    path = tmp_path / "hook" / "p-exposure.jsonl"
    path.parent.mkdir()
    shape(path, victim)
    with pytest.raises(PlaybookFileError, match=said):
        append_line(path, "line\n")
    with pytest.raises(PlaybookFileError):  # the run lock's way in (read and write) is refused as well
        os.close(open_own(path, os.O_RDWR))
    assert victim.read_text() == "victim" and stat.S_IMODE(victim.stat().st_mode) == 0o600
    assert sorted(os.listdir(victim.parent)) == ["victim.txt"]


def test_append_line_creates_and_appends(tmp_path: Path) -> None:
    path = tmp_path / "hook" / "ledger.jsonl"
    old = os.umask(0o022)
    try:
        append_line(path, "one\n")
        append_line(path, "two\n")
    finally:
        os.umask(old)
    assert path.read_text() == "one\ntwo\n" and stat.S_IMODE(path.stat().st_mode) == 0o644
