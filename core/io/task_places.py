"""The folders a project's task may be sent to: those below it, and the members of its workspace."""

from __future__ import annotations

import fnmatch
import functools
import json
from pathlib import Path
from typing import Protocol

import re2
import yaml

from core.io.project_readers import MISE_TASK_FOLDERS, RECIPE_READERS
from core.pytest_config import PYTEST_FILES
from core.recipes import NOT_PLACES, PLACE_DEPTH

__all__ = ["Reading", "folders_below", "task_places", "workspace_patterns"]


class Reading(Protocol):
    """What a pass over project folders has read, each once (`core.io.declared`)."""

    def text(self, path: Path) -> str | None:
        """The text of the file at `path`, or None where it is not there or cannot be read."""

    def below(self, root: Path, depth: int) -> tuple[list[Path], bool, list[Path]]:
        """`folders_below(root, depth)`."""

    def workspace(self, root: Path) -> list[str] | None:
        """`workspace_patterns(root, self)`."""


# Where a task may be run other than the project's folder (`core.program_tasks.run_elsewhere`): the folders below
# it (`make -C api`, `npm --prefix web`), by their path, and the members of the workspace it is in (`pnpm --filter
# @acme/web`), by their package's name and path; bounded, a folder or member past the bounds is not read (its
# tasks wait for review).
_MOST_FOLDERS = 20_000  # entries looked at (files too: a folder's listing costs what it holds)
_MOST_PLACES = 128  # read
# What makes a folder a place a runner may be sent to: the first part of any file a reader reads, any case
# (mise's conf.d: under its folders).
_PLACE_NAMES = frozenset(
    name.split("/")[0].lower()
    for name in [*(n for n, _, _ in RECIPE_READERS), *MISE_TASK_FOLDERS, *PYTEST_FILES, "rakelib"]
)
_PACKAGE_NAME = re2.compile(r"^(?:@[A-Za-z0-9._-]+/)?[A-Za-z0-9._-]+$")  # as a filter names it: no `:`


def task_places(
    folder: Path, searched: list[Path], reading: Reading
) -> tuple[dict[Path, set[str]], bool, list[Path], list[Path]]:
    """The folders a task may be sent to from `folder`, each with the names it is known by there; whether the
    bounds cut the folders below it short (some were not looked at); the folders below it looked at, and the links
    among them (not followed)."""
    places: dict[Path, set[str]] = {}
    below, cut, linked = reading.below(folder, PLACE_DEPTH)
    for place in below:
        if _has_runner_files(place):
            places.setdefault(place, set()).add(f"./{place.relative_to(folder).as_posix()}")
    workspace = next(((w, p) for w in searched if (p := reading.workspace(w)) is not None), None)
    if workspace is not None:
        root, patterns = workspace
        for member in reading.below(root, PLACE_DEPTH + 1)[0]:
            relative = member.relative_to(root).as_posix()
            if not _member(relative, patterns):
                continue
            data = _json(member / "package.json", reading)
            name = data.get("name") if isinstance(data, dict) else None
            names = places.setdefault(member, set())
            if isinstance(name, str) and _PACKAGE_NAME.match(name):
                names.add(name)
    return dict(list(places.items())[:_MOST_PLACES]), cut or len(places) > _MOST_PLACES, below, linked


def _has_runner_files(folder: Path) -> bool:
    """Whether `folder` holds a file (or folder) a runner reads its tasks or settings from."""
    try:
        return any(entry.name.lower() in _PLACE_NAMES for entry in folder.iterdir())
    except OSError:
        return True  # unreadable: read as a place, whose reading then holds what it cannot read


def folders_below(root: Path, depth: int) -> tuple[list[Path], bool, list[Path]]:
    """The folders under `root`, `depth` deep, but hidden ones and those of installed or built code (as
    `core.recipes.scanned_folder` says); whether a bound cut them short; and the links found among them, which
    are not followed (a link may lead anywhere: a task sent through one waits)."""
    found: list[Path] = []
    linked: list[Path] = []
    level = [root]
    visited = 0
    for _ in range(depth):
        next_level = []
        for parent in level:
            try:
                entries = sorted(parent.iterdir())
            except OSError:
                continue
            for entry in entries:
                visited += 1
                if visited > _MOST_FOLDERS:
                    return found, True, linked
                if entry.is_symlink():
                    linked.append(entry)
                    continue
                if entry.name.startswith(".") or entry.name in NOT_PLACES:
                    continue
                if entry.is_dir():
                    next_level.append(entry)
        found += next_level
        level = next_level
    return found, False, linked


def workspace_patterns(root: Path, reading: Reading) -> list[str] | None:
    """The member patterns of the workspace `root` declares (pnpm-workspace.yaml's `packages`, package.json's
    `workspaces` as npm, yarn and bun read it), or None where it declares none."""
    text = reading.text(root / "pnpm-workspace.yaml")
    if text is not None:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError:
            return None
        packages = data.get("packages") if isinstance(data, dict) else None
        return [p for p in packages if isinstance(p, str)] if isinstance(packages, list) else None
    data = _json(root / "package.json", reading)
    workspaces = data.get("workspaces") if isinstance(data, dict) else None
    if isinstance(workspaces, dict):
        workspaces = workspaces.get("packages")
    return [p for p in workspaces if isinstance(p, str)] if isinstance(workspaces, list) else None


def _json(path: Path, reading: Reading) -> object:
    text = reading.text(path)
    try:
        return json.loads(text) if text is not None else None
    except ValueError:
        return None


def _member(relative: str, patterns: list[str]) -> bool:
    """Whether the folder at `relative` is a member by the workspace's `patterns` (globs, `!` ones excluding; a
    pattern past `_MOST_SEGMENTS` matches nothing)."""
    patterns = [p for p in patterns[:_MOST_PATTERNS] if p.count("/") < _MOST_SEGMENTS]
    included = any(_glob(relative, p.removeprefix("./").rstrip("/")) for p in patterns if not p.startswith("!"))
    return included and not any(_glob(relative, p[1:].removeprefix("./").rstrip("/")) for p in patterns if p[:1] == "!")


_MOST_PATTERNS = 64
_MOST_SEGMENTS = 16


def _glob(relative: str, pattern: str) -> bool:
    """`relative` matches `pattern` segment by segment, `**` standing for any number of segments."""
    return _segments(tuple(relative.split("/")), tuple(pattern.split("/")))


@functools.lru_cache(maxsize=4096)
def _segments(parts: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    # Cached: each (parts, pattern) pair is decided once, so `**/**/**` reads in time polynomial in its length.
    if not pattern:
        return not parts
    if pattern[0] == "**":
        return any(_segments(parts[i:], pattern[1:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatch.fnmatchcase(parts[0], pattern[0]) and _segments(parts[1:], pattern[1:])
