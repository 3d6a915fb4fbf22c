"""`discover` finds what walking each folder with `Path.rglob` finds, in the same order and resolved the same way,
whatever the folders hold: nested folders, memory notes, subagents' meta files, links to files and to folders,
dangling links."""

from __future__ import annotations

import itertools
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.transcripts.discovery import META_SUFFIX, SUFFIXES, discover
from core.transcripts.memory import is_memory

FOLDERS = st.lists(st.sampled_from(["a", "b", "memory", "memories", "projects", ".hidden", "sub agents"]), max_size=3)
NAMES = st.sampled_from(["s.jsonl", "t.json", "agent-1.meta.json", "note.md", "x.txt", "B.jsonl", ".jsonl", "é.jsonl"])
# (kind, folder parts, name, target index): a file, a folder, or a link to an earlier entry (or to nothing)
ENTRIES = st.lists(
    st.tuples(st.sampled_from(["file", "file", "folder", "link"]), FOLDERS, NAMES, st.integers(0, 20)), max_size=14
)
_round = itertools.count()


def _rglob_reference(paths: list[Path]) -> tuple[list[Path], list[Path]]:
    """What `discover` returned when it walked with `rglob`, stat'ing and resolving each file."""
    found: list[Path] = []
    missing: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if (p.suffix in SUFFIXES or is_memory(p)) and p.is_file()))
        elif path.exists():
            found.append(path)
        else:
            missing.append(path)
    return list(dict.fromkeys(p.resolve() for p in found if not p.name.endswith(META_SUFFIX))), missing


def _build(root: Path, entries: list[tuple[str, list[str], str, int]]) -> None:
    made: list[Path] = [root / "elsewhere" / "real.jsonl"]
    made[0].parent.mkdir(parents=True)
    made[0].write_text("{}\n")
    for kind, folders, name, target in entries:
        where = root.joinpath("tree", *folders)
        if where.exists() and not where.is_dir():
            continue
        where.mkdir(parents=True, exist_ok=True)
        path = where / name
        if path.exists() or path.is_symlink():
            continue
        if kind == "file":
            path.write_text("{}\n")
        elif kind == "folder":
            path.mkdir()
        else:  # to an earlier file or folder, to the folder being walked, or dangling
            path.symlink_to(made[target] if target < len(made) else root / "tree" if target == 20 else root / "gone")
        made.append(path)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=ENTRIES, also_a_file=st.booleans())
def test_discover_finds_what_rglob_finds(
    tmp_path: Path, entries: list[tuple[str, list[str], str, int]], also_a_file: bool
) -> None:
    root = tmp_path / f"round-{next(_round)}"
    _build(root, entries)
    paths = [root / "tree", root / "missing"] + ([root / "elsewhere" / "real.jsonl"] if also_a_file else [])
    assert discover(paths) == _rglob_reference(paths)


def test_a_folder_given_through_a_link_is_walked_and_its_files_resolved(tmp_path: Path) -> None:
    (tmp_path / "real" / "p").mkdir(parents=True)
    (tmp_path / "real" / "p" / "s.jsonl").write_text("{}\n")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "p" / "again.jsonl").symlink_to(tmp_path / "real" / "p" / "s.jsonl")
    files, missing = discover([tmp_path / "link"])
    assert files == [tmp_path.resolve() / "real" / "p" / "s.jsonl"] and not missing  # the link's target, once
