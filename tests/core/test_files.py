"""The one atomic writer (`core.io.files`): what it replaces keeps its mode and owner, a link stays a link,
a new file is 0644 less the umask, and a failed write leaves the old file and no temporary file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import PlaybookFileError
from core.io.files import copy_atomic, write_atomic
from tests.profiles import examples


@settings(max_examples=examples(200))
@given(st.integers(min_value=0, max_value=0o7777), st.binary(max_size=64))
def test_the_mode_of_what_is_replaced_is_kept(tmp_path_factory: pytest.TempPathFactory, mode: int, data: bytes) -> None:
    folder = tmp_path_factory.mktemp("mode")
    path = folder / "CLAUDE.md"
    path.write_bytes(b"old")
    path.chmod(mode)
    write_atomic(path, data)
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert path.read_bytes() == data and os.listdir(folder) == ["CLAUDE.md"]


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
