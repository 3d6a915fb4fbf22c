"""What project folders declare, read in one pass: their programs, packages and what their tasks run.

Which files are read, and how, is `core.io.project_readers`; where a task may be sent, `core.io.task_places`. A pass
reads each file, folder listing and workspace once however many folders ask for it.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import yaml

from core.dotnet_config import directory_props_recipes
from core.io.project_readers import (
    HERE_ONLY,
    JUSTFILES,
    MAX_BYTES,
    MISE_CONF_D,
    MISE_TASK_FOLDERS,
    PACKAGE_READERS,
    PROGRAM_READERS,
    RECIPE_READERS,
    TARGET,
    read_bounded,
)
from core.io.pytest_configs import pytest_config_recipes
from core.io.task_places import folders_below, task_places, workspace_patterns
from core.justfile import justfile_recipes
from core.module_sources import deno_import_map, deno_import_recipes, sbt_recipes
from core.recipes import Recipe, Tasks, mise_file_task, mise_recipes, rakefile_recipes, unread
from core.requirements_files import requirements_lines, requirements_named
from core.vouched import Declared

__all__ = ["Declarations", "declared_packages", "declared_programs", "declared_scripts", "declared_tasks"]

T = TypeVar("T")


@dataclass
class _Reading:
    """What one pass over project folders has read, each once: files' texts, each folder's recipes (those of make's
    files, or of the others'), the folders below a folder (by depth) and the member patterns of workspaces."""

    texts: dict[Path, str | None] = field(default_factory=dict)
    recipes: dict[tuple[Path, bool], Tasks] = field(default_factory=dict)
    folders: dict[tuple[Path, int], tuple[list[Path], bool, list[Path]]] = field(default_factory=dict)
    workspaces: dict[Path, list[str] | None] = field(default_factory=dict)

    def text(self, path: Path) -> str | None:
        """The text of the file at `path` (`read_bounded`)."""
        if path not in self.texts:
            self.texts[path] = read_bounded(path)
        return self.texts[path]

    def below(self, root: Path, depth: int) -> tuple[list[Path], bool, list[Path]]:
        """`folders_below(root, depth)`."""
        if (root, depth) not in self.folders:
            self.folders[(root, depth)] = folders_below(root, depth)
        return self.folders[(root, depth)]

    def workspace(self, root: Path) -> list[str] | None:
        """`workspace_patterns(root)`."""
        if root not in self.workspaces:
            self.workspaces[root] = workspace_patterns(root, self)
        return self.workspaces[root]


class Declarations:
    """What project folders declare, read in one pass: each file, folder listing and workspace read once however
    many of the folders ask for it (an export's session folders share their parents' files and their workspace's
    members). One pass, one instance: what it read is kept while it lives."""

    def __init__(self) -> None:
        self._reading = _Reading()

    def programs(self, folders: Iterable[Path]) -> frozenset[str]:
        """Every program the projects in `folders` declare; a folder that is gone, or a file that does not parse,
        declares nothing."""
        return frozenset(_read_all(folders, PROGRAM_READERS, self._reading))

    def packages(self, folders: Iterable[Path]) -> frozenset[str]:
        """Every dependency the projects in `folders` declare (pyproject, package.json, Cargo.toml): the packages a
        lesson may install or fetch by name."""
        return frozenset(_read_all(folders, PACKAGE_READERS, self._reading))

    def tasks(self, folders: Iterable[Path]) -> Tasks:
        """What each task the projects in `folders` declare runs (`core.recipes.Tasks`): what their runners' files
        say (`_tasks`), at each folder and at the places below it a task may be sent to, their requirements files,
        and the folders below them looked at."""
        return _tasks(folders, self._reading)

    def project(self, folder: Path) -> Declared:
        """What the project folder `folder` declares, alone."""
        return Declared(str(folder), self.programs([folder]), self.packages([folder]), self.tasks([folder]))


def declared_packages(folders: Iterable[Path]) -> frozenset[str]:
    """Every dependency the projects in `folders` declare (`Declarations.packages`, in a pass of its own)."""
    return Declarations().packages(folders)


def declared_programs(folders: Iterable[Path]) -> frozenset[str]:
    """Every program the projects in `folders` declare (`Declarations.programs`, in a pass of its own)."""
    return Declarations().programs(folders)


def _read_all(
    folders: Iterable[Path], readers: Sequence[tuple[str, Callable[[str], Iterable[T]]]], reading: _Reading
) -> set[T]:
    """What `readers` (file name, reader of its text) find in the files of `folders`: a folder that is gone, or a
    file that does not parse, adds nothing."""
    found: set[T] = set()
    for folder in folders:
        for name, reader in readers:
            text = reading.text(folder / name)
            if text is None:
                continue
            try:
                found.update(reader(text))
            except (ValueError, tomllib.TOMLDecodeError, yaml.YAMLError, AttributeError, TypeError, RecursionError):
                continue
    return found


_MOST_FILE_TASKS = 200  # a project's mise file tasks we read


def _mise_file_tasks(folder: Path, reading: _Reading) -> set[Recipe]:
    """The file tasks of mise's task folders (`.mise/tasks/test/unit` is `test:unit`), bounded in number."""
    found: set[Recipe] = set()
    for tasks in MISE_TASK_FOLDERS:
        root = folder / tasks
        try:
            files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []
        except OSError:
            continue
        for path in files[:_MOST_FILE_TASKS]:
            text = reading.text(path)
            name = ":".join(path.relative_to(root).with_suffix("").parts)
            found.update(mise_file_task(name, text if text is not None else "#!unreadable"))
    return found


def _recipes_in(path: Path, runner: str, reader: Callable[[str], Iterable[Recipe]], reading: _Reading) -> set[Recipe]:
    """What the file at `path` says its runner's tasks run; a file that is there and cannot be read, a line that
    holds them all."""
    text = reading.text(path)
    if text is None:
        try:
            there = path.exists()
        except OSError:
            there = True
        return (
            {unread(runner, f"`{path.name}` is larger than {MAX_BYTES >> 20} MB or cannot be read")} if there else set()
        )
    try:
        return set(reader(text))
    except (ValueError, tomllib.TOMLDecodeError, yaml.YAMLError, AttributeError, TypeError, RecursionError):
        return {unread(runner, f"`{path.name}` does not parse")}


def declared_tasks(folders: Iterable[Path]) -> Tasks:
    """What each task the projects in `folders` declare runs (`Declarations.tasks`, in a pass of its own)."""
    return _tasks(folders, _Reading())


def _tasks(folders: Iterable[Path], reading: _Reading) -> Tasks:
    """What each task the projects in `folders` declare runs (`core.recipes.Tasks`): (task, command line) pairs of
    their Makefiles, justfiles, package.json scripts (and the package managers' settings beside it), mise tasks,
    Taskfiles, Rakefiles (`core.recipes`), poe's and tox's tasks, deno.json's and composer.json's, cargo's
    configuration and the Gradle and Maven wrappers' downloads, at each folder and at the places below them a task
    may be sent to; their requirements files; the folders below them looked at. A file that is there but is too
    large to read or does not parse holds every task of its runner: a reader that gave up must not leave its tasks
    to run by their names (a Makefile padded past 1 MB)."""
    recipes: set[Recipe] = set()
    requirements: set[tuple[str, str, str]] = set()
    seen: set[str] = set()
    linked: set[str] = set()
    cut = False
    for folder in folders:
        searched = _searched(folder)
        own = _recipes_of(folder, searched, reading)
        recipes |= own.recipes
        requirements |= own.requirements
        places, cut_below, below, links = task_places(folder, searched, reading)
        seen.update(p.relative_to(folder).as_posix() for p in below)
        linked.update(p.relative_to(folder).as_posix() for p in links)
        cut = cut or cut_below
        for place, names in places.items():
            between = [p for p in place.parents if p != folder and folder in p.parents]
            there = _recipes_of(place, [place, *between, *searched], reading)
            for name in names:
                for task, line in there.recipes:
                    runner, _, named = task.partition(":")
                    recipes.add((f"{runner}@{name}:{named}", line))
                requirements.update((name, file, line) for _, file, line in there.requirements)
    return Tasks(frozenset(recipes), frozenset(requirements), frozenset(seen), frozenset(linked), cut)


_MOST_REQUIREMENTS = 64


def _requirements_files(folder: Path, reading: _Reading) -> set[tuple[str, str, str]]:
    """pip's requirements files in `folder` (`*requirements*.txt`, `*constraints*.txt`, `requirements/*.txt`), each
    with what it installs and from where (`core.requirements_files`), the files it names read with it: one that
    holds, or that names a file outside the folder or not there, holds it too."""
    try:
        files = sorted(
            p
            for p in [*folder.glob("*.txt"), *(folder / "requirements").glob("*.txt")]
            if "requirements" in p.as_posix().lower() or "constraints" in p.name.lower()
        )[:_MOST_REQUIREMENTS]
    except OSError:
        return set()
    found: set[tuple[str, str, str]] = set()
    for path in files:
        name = path.relative_to(folder).as_posix()
        found |= {("", name, line) for line in _install_lines(folder, path, set(), reading)}
    return found


def _install_lines(folder: Path, path: Path, seen: set[Path], reading: _Reading) -> set[str]:
    """The lines an install from `path` is judged by: its own (`""`: read and admitted), and those of the files it
    names, `_MOST_REQUIREMENTS` files at most."""
    name = path.relative_to(folder).as_posix() if folder in path.parents else path.name
    text = reading.text(path)
    if text is None:
        return {unread("", f"`{name}` is not there, too large, or cannot be read")[1]}
    lines = set(requirements_lines(name, text))
    seen.add(path)
    for nested in requirements_named(text):
        target = (path.parent / nested).resolve()
        if folder.resolve() not in target.parents or len(seen) >= _MOST_REQUIREMENTS:
            lines.add(unread("", f"`{name}` reads `{nested[:40]}`, outside the project or past what is read")[1])
        elif target not in seen:
            lines |= _install_lines(folder.resolve(), target, seen, reading)
    return lines


def _recipes_of(folder: Path, searched: list[Path], reading: _Reading) -> Tasks:
    """What the tasks run in `folder` run: the files of `folder` its runners read there alone (make's), and of
    each folder in `searched` (itself and those above it) the others read; each folder's files read once."""
    own = _folder_recipes(folder, True, reading)
    return own.union(*(_folder_recipes(where, False, reading) for where in searched))


def _folder_recipes(where: Path, here_only: bool, reading: _Reading) -> Tasks:
    """The recipes of the files in `where` of the runners that read only the folder they run in (`here_only`), or
    of the others (and, with make's, its requirements files)."""
    read = reading.recipes
    if (where, here_only) in read:
        return read[(where, here_only)]
    found: set[Recipe] = set()
    requirements: set[tuple[str, str, str]] = set()
    for name, runner, reader in RECIPE_READERS:
        if (runner in HERE_ONLY) == here_only:
            found |= _recipes_in(where / name, runner, reader, reading)
    if here_only:
        requirements = _requirements_files(where, reading)
    if not here_only:
        found |= _mise_file_tasks(where, reading)
        for conf in _conf_d(where):  # mise reads every file of `conf.d` as a config of its own
            found |= _recipes_in(conf, "mise", mise_recipes, reading)
        found |= _any_case(
            where, runner="just", names=("justfile", ".justfile"), reader=justfile_recipes, reading=reading
        )
        if (where / "rakelib").is_dir():
            found.update(rakefile_recipes(""))
        for build in _globbed(where, ("project/*.sbt", "project/*.scala")):  # sbt loads every one of them
            found |= _recipes_in(build, "sbt", sbt_recipes, reading)
        for project in _globbed(where, ("*.csproj", "*.fsproj", "*.vbproj")):  # restore properties, as the props'
            found |= _recipes_in(project, "dotnet", directory_props_recipes, reading)
        found |= _deno_import_maps(where, reading)
        found |= pytest_config_recipes(where, reading.text)  # pytest reads the first it finds, here or above
    read[(where, here_only)] = Tasks(frozenset(found), frozenset(requirements))
    return read[(where, here_only)]


_MOST_LEVELS = 32


def _conf_d(folder: Path) -> list[Path]:
    """mise's `conf.d` config files in `folder`, a bounded number."""
    try:
        found = [p for d in MISE_CONF_D for p in sorted((folder / d).glob("*.toml"))]
    except OSError:
        return []
    return found[:_MOST_FILE_TASKS]


def _deno_import_maps(folder: Path, reading: _Reading) -> set[Recipe]:
    """The import map files deno.json (or deno.jsonc) in `folder` names, judged as its own `imports` are: a map inside
    the project that maps a specifier to a host is as remote as one named by URL."""
    found: set[Recipe] = set()
    for name in ("deno.json", "deno.jsonc"):
        text = reading.text(folder / name)
        try:
            path = deno_import_map(text) if text is not None else None
        except (ValueError, AttributeError, TypeError, RecursionError):
            continue  # the file itself is judged unparsed by its reader
        if path is None:
            continue
        if reading.text(folder / path) is None:
            found.add(unread("deno", f"deno.json's import map `{path[:40]}` is not there or cannot be read"))
        else:
            found |= _recipes_in(folder / path, "deno", deno_import_recipes, reading)
    return found


def _globbed(folder: Path, patterns: tuple[str, ...]) -> list[Path]:
    """The files of `folder` matching `patterns` (sbt's `project/*.sbt`, a `*.csproj`), a bounded number."""
    try:
        return sorted(p for pattern in patterns for p in folder.glob(pattern))[:_MOST_FILE_TASKS]
    except OSError:
        return []


def _searched(folder: Path) -> list[Path]:
    """`folder` and the folders above it, up to the user's home folder (whose files are the user's own, not a
    cloned project's) or the root: where a runner that searches upward may find its file (a parent's justfile, a
    workspace root's .npmrc, every parent's mise config)."""
    try:
        home: Path | None = Path.home().resolve()
    except (RuntimeError, OSError):
        home = None
    searched = [folder]
    for parent in list(folder.parents)[:_MOST_LEVELS]:
        if home is not None and (parent == home or parent in home.parents):
            break
        searched.append(parent)
    return searched


def _any_case(
    folder: Path,
    *,
    runner: str,
    names: tuple[str, ...],
    reader: Callable[[str], Iterable[Recipe]],
    reading: _Reading,
) -> set[Recipe]:
    """The files of `folder` named one of `names` in another case (`JUSTFILE`: just matches its file's name in any
    case), read as `reader` reads them; the spellings `RECIPE_READERS` reads already are left to it."""
    found: set[Recipe] = set()
    try:
        entries = [e for e in folder.iterdir() if e.name.lower() in names and e.name not in JUSTFILES]
    except OSError:
        return found
    for entry in entries[:8]:
        found |= _recipes_in(entry, runner, reader, reading)
    return found


def declared_scripts(folder: Path, manifest: str) -> set[str] | None:
    """The scripts `manifest` in `folder` declares (package.json's `scripts`, a Makefile's targets, a justfile's
    recipes), or None when there is no such file; a file that does not parse declares nothing."""
    text = read_bounded(folder / manifest)
    if text is None:
        return None
    if manifest == "package.json":
        try:
            data = json.loads(text)
        except ValueError:
            return set()
        scripts = data.get("scripts") if isinstance(data, dict) else None
        return {k for k in scripts if isinstance(k, str)} if isinstance(scripts, dict) else set()
    return {m.group(1) for m in TARGET.finditer(text)}
