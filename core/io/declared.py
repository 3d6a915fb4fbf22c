"""The programs a project declares: what its own files say it runs.

A lesson may tell an agent to run a program the project itself declares: the commands of its `[project.scripts]`,
its tools' `[tool.*]` sections and dependencies (pyproject.toml), the `bin` entries and dependencies of package.json
(what `npx` finds) and its scripts, composer.json's packages and scripts, Cargo's binaries, the tools mise or asdf
pin and mise's tasks, a Makefile's targets, a justfile's recipes and a Taskfile's tasks, and the first word of each
code span of the hand-written part of its CLAUDE.md / AGENTS.md (outside playbook's own block). Files are read
bounded and parsed by their own parsers; a file that does not parse declares nothing.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import tomllib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import re2
import yaml

from core.build_wrappers import (
    gradle_properties_recipes,
    gradle_script_recipes,
    gradle_wrapper_recipes,
    maven_config_recipes,
    maven_extensions_recipes,
    maven_jvm_config_recipes,
    maven_pom_recipes,
    maven_wrapper_recipes,
    sbt_options_recipes,
)
from core.cargo_config import cargo_config_recipes, rust_toolchain_recipes
from core.dotnet_config import directory_props_recipes, global_json_recipes, nuget_config_recipes
from core.justfile import justfile_recipes
from core.makefile import makefile_recipes
from core.markdown import BLOCK_BEGIN, BLOCK_END
from core.module_sources import (
    deno_import_map,
    deno_import_recipes,
    go_mod_recipes,
    go_work_recipes,
    pubspec_recipes,
    sbt_recipes,
    swift_package_recipes,
)
from core.package_settings import (
    bun_environment_recipes,
    bunfig_recipes,
    npmrc_recipes,
    pnpm_workspace_recipes,
    pnpmfile_recipes,
    yarn_environment_recipes,
    yarnrc_recipes,
    yarnrc_yml_recipes,
)
from core.package_sources import (
    bundle_config_recipes,
    cargo_manifest_recipes,
    gemfile_recipes,
    pipfile_recipes,
    poetry_settings_recipes,
    poetry_source_recipes,
)
from core.poe_tasks import poe_recipes, poe_tasks_file_recipes
from core.program_tasks import TASK_NAME
from core.recipes import (
    NOT_PLACES,
    PLACE_DEPTH,
    Recipe,
    Tasks,
    mise_file_task,
    mise_recipes,
    package_json_recipes,
    rakefile_recipes,
    tool_versions_recipes,
    unread,
)
from core.requirements_files import requirements_lines, requirements_named
from core.script_manifests import composer_recipes, deno_recipes
from core.taskfile import taskfile_recipes
from core.tox_config import tox_ini_recipes, tox_pyproject_recipes, tox_setup_cfg_recipes, tox_toml_recipes
from core.uv_sources import uv_pyproject_recipes, uv_toml_recipes
from core.vouched import Declared

__all__ = ["Declarations", "declared_packages", "declared_programs", "declared_scripts", "declared_tasks"]

T = TypeVar("T")

_MAX_BYTES = 1 << 20  # a manifest larger than this is no manifest we read
_NAME = re2.compile(r"^[A-Za-z0-9_][A-Za-z0-9._+-]{0,63}$")
_REQUIREMENT = re2.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
# A Makefile target or a justfile recipe: a name at the start of a line, then its colon (not `:=`, an assignment).
_TARGET = re2.compile(r"(?m)^@?([A-Za-z0-9_][A-Za-z0-9_.-]*)(?:[ \t][^:=\n]*)?:(?:[^=]|$)")
_SPAN = re2.compile(r"`([A-Za-z0-9_][A-Za-z0-9._+-]{0,63})(?:[ `])")


def _read(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > _MAX_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


@dataclass
class _Reading:
    """What one pass over project folders has read, each once: files' texts, each folder's recipes (those of make's
    files, or of the others'), the folders below a folder (by depth) and the member patterns of workspaces."""

    texts: dict[Path, str | None] = field(default_factory=dict)
    recipes: dict[tuple[Path, bool], Tasks] = field(default_factory=dict)
    folders: dict[tuple[Path, int], tuple[list[Path], bool, list[Path]]] = field(default_factory=dict)
    workspaces: dict[Path, list[str] | None] = field(default_factory=dict)

    def text(self, path: Path) -> str | None:
        """The text of the file at `path` (`_read`)."""
        if path not in self.texts:
            self.texts[path] = _read(path)
        return self.texts[path]

    def below(self, root: Path, depth: int) -> tuple[list[Path], bool, list[Path]]:
        """`_below(root, depth)`."""
        if (root, depth) not in self.folders:
            self.folders[(root, depth)] = _below(root, depth)
        return self.folders[(root, depth)]

    def workspace(self, root: Path) -> list[str] | None:
        """`_workspace_patterns(root)`."""
        if root not in self.workspaces:
            self.workspaces[root] = _workspace_patterns(root, self)
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
        return frozenset(_read_all(folders, _READERS, self._reading))

    def packages(self, folders: Iterable[Path]) -> frozenset[str]:
        """Every dependency the projects in `folders` declare (pyproject, package.json, Cargo.toml): the packages a
        lesson may install or fetch by name."""
        manifests = ("pyproject.toml", "package.json", "Cargo.toml")
        readers = [(name, functools.partial(_dependencies, name)) for name in manifests]
        return frozenset(_read_all(folders, readers, self._reading))

    def tasks(self, folders: Iterable[Path]) -> Tasks:
        """What each task the projects in `folders` declare runs (`core.recipes.Tasks`): what their runners' files
        say (`_tasks`), at each folder and at the places below it a task may be sent to, their requirements files,
        and the folders below them looked at."""
        return _tasks(folders, self._reading)

    def project(self, folder: Path) -> Declared:
        """What the project folder `folder` declares, alone."""
        return Declared(str(folder), self.programs([folder]), self.packages([folder]), self.tasks([folder]))


def _names(values: Iterable[object]) -> set[str]:
    return {v for v in values if isinstance(v, str) and _NAME.match(v)}


def _requirement_names(values: Iterable[object]) -> set[str]:
    found = set()
    for value in values:
        if isinstance(value, str) and (match := _REQUIREMENT.match(value)):
            found.add(match.group(1).lower())
    return found


def _pyproject(text: str) -> set[str]:
    data = tomllib.loads(text)
    project = data.get("project", {}) if isinstance(data.get("project"), dict) else {}
    tool = data.get("tool", {}) if isinstance(data.get("tool"), dict) else {}
    found = _names(project.get("scripts", {}) or {}) | _names(project.get("gui-scripts", {}) or {})
    found |= _names(tool)  # [tool.ruff], [tool.mypy], ...: tools the project runs
    poetry = tool.get("poetry", {}) if isinstance(tool.get("poetry"), dict) else {}
    found |= _names(poetry.get("scripts", {}) or {})
    found |= _requirement_names(project.get("dependencies", []) or [])
    for group in (project.get("optional-dependencies", {}) or {}).values():
        found |= _requirement_names(group if isinstance(group, list) else [])
    for group in (data.get("dependency-groups", {}) or {}).values():
        found |= _requirement_names(group if isinstance(group, list) else [])
    return found


def _package_json(text: str) -> set[str]:
    data = json.loads(text)
    if not isinstance(data, dict):
        return set()
    found: set[str] = set()
    binaries = data.get("bin")
    if isinstance(binaries, dict):
        found |= _names(binaries)
    elif isinstance(binaries, str) and isinstance(data.get("name"), str):
        found |= _names([data["name"].rsplit("/", 1)[-1]])
    for key in ("dependencies", "devDependencies", "optionalDependencies"):
        deps = data.get(key)
        if isinstance(deps, dict):
            found |= _names(name.rsplit("/", 1)[-1] for name in deps)
    scripts = data.get("scripts")  # what `npm run NAME` may run by name
    if isinstance(scripts, dict):
        found |= {k for k in scripts if isinstance(k, str) and TASK_NAME.match(k)}
    return found


def _composer(text: str) -> set[str]:
    """composer.json's packages (their last part: `phpstan/phpstan` installs `vendor/bin/phpstan`), its `bin` files
    and its scripts (what `composer NAME` may run by name)."""
    data = json.loads(text)
    if not isinstance(data, dict):
        return set()
    found: set[str] = set()
    for key in ("require", "require-dev"):
        deps = data.get(key)
        if isinstance(deps, dict):
            found |= _names(name.rsplit("/", 1)[-1] for name in deps if isinstance(name, str) and "/" in name)
    binaries = data.get("bin")
    if isinstance(binaries, list):
        found |= _names(b.rsplit("/", 1)[-1] for b in binaries if isinstance(b, str))
    scripts = data.get("scripts")
    if isinstance(scripts, dict):
        found |= {k for k in scripts if isinstance(k, str) and TASK_NAME.match(k)}
    return found


def _cargo(text: str) -> set[str]:
    data = tomllib.loads(text)
    found: set[str] = set()
    package = data.get("package")
    if isinstance(package, dict):
        found |= _names([package.get("name")])
    bins = data.get("bin")
    if isinstance(bins, list):
        found |= _names(b.get("name") for b in bins if isinstance(b, dict))
    return found


def _pinned_tools(text: str) -> set[str]:
    """`.tool-versions` (asdf) lines, or mise.toml's `[tools]` and the names of its `[tasks]` (what `mise run`
    may run by name)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return _names(line.split()[0] for line in text.splitlines() if line.split())
    tools, tasks = data.get("tools", {}), data.get("tasks", {})
    return (_names(tools) if isinstance(tools, dict) else set()) | (
        {t for t in tasks if isinstance(t, str) and TASK_NAME.match(t)} if isinstance(tasks, dict) else set()
    )


def _targets(text: str) -> set[str]:
    """A Makefile's targets or a justfile's recipes: what `make NAME` and `just NAME` may run by name."""
    return {m.group(1) for m in _TARGET.finditer(text) if TASK_NAME.match(m.group(1))}


def _taskfile_tasks(text: str) -> set[str]:
    """A Taskfile's task names: what `task NAME` may run by name."""
    data = yaml.safe_load(text)
    tasks = data.get("tasks") if isinstance(data, dict) else None
    return {t for t in tasks if isinstance(t, str) and TASK_NAME.match(t)} if isinstance(tasks, dict) else set()


def _instructions(text: str) -> set[str]:
    """The programs the hand-written part of a CLAUDE.md or AGENTS.md names in code spans."""
    begin, end = text.find(BLOCK_BEGIN[:20]), text.find(BLOCK_END)
    if begin >= 0 and end > begin:
        text = text[:begin] + text[end + len(BLOCK_END) :]
    return {m.group(1) for m in _SPAN.finditer(text)}


# The files each runner reads, by the names it looks for them under.
_JUSTFILES = ("justfile", "Justfile", ".justfile")
_MISE_FILES = (
    "mise.toml",
    ".mise.toml",
    "mise.local.toml",
    ".mise.local.toml",
    "mise/config.toml",
    ".mise/config.toml",
    ".config/mise.toml",
    ".config/mise/config.toml",
)
_MISE_TASK_FOLDERS = ("mise-tasks", ".mise-tasks", "mise/tasks", ".mise/tasks", ".config/mise/tasks")
_TASKFILES = tuple(
    f"{stem}{dist}.{ext}" for stem in ("Taskfile", "taskfile") for dist in ("", ".dist") for ext in ("yml", "yaml")
)
_RAKEFILES = ("Rakefile", "rakefile", "Rakefile.rb", "rakefile.rb")
_READERS = (
    ("pyproject.toml", _pyproject),
    ("package.json", _package_json),
    ("Cargo.toml", _cargo),
    ("composer.json", _composer),
    (".tool-versions", _pinned_tools),
    ("mise.toml", _pinned_tools),
    ("Makefile", _targets),
    ("makefile", _targets),
    ("GNUmakefile", _targets),
    ("justfile", _targets),
    ("Justfile", _targets),
    (".justfile", _targets),
    *((name, _pinned_tools) for name in _MISE_FILES[1:]),
    *((name, _taskfile_tasks) for name in _TASKFILES),
    ("CLAUDE.md", _instructions),
    ("AGENTS.md", _instructions),
)


def _dependencies(name: str, text: str) -> set[str]:
    """The dependencies a manifest declares (what a lesson may install), by the manifest's file name."""
    found: set[str]
    if name == "pyproject.toml":
        data = tomllib.loads(text)
        project = data.get("project", {}) if isinstance(data.get("project"), dict) else {}
        found = _requirement_names(project.get("dependencies", []) or [])
        for group in (project.get("optional-dependencies", {}) or {}).values():
            found |= _requirement_names(group if isinstance(group, list) else [])
        for group in (data.get("dependency-groups", {}) or {}).values():
            found |= _requirement_names(group if isinstance(group, list) else [])
        return found
    if name == "package.json":
        data = json.loads(text)
        found = set()
        for key in ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies"):
            deps = data.get(key) if isinstance(data, dict) else None
            if isinstance(deps, dict):
                found |= {n for n in deps if isinstance(n, str)}
                found |= _names(n.rsplit("/", 1)[-1] for n in deps)
        return found
    if name == "Cargo.toml":
        data = tomllib.loads(text)
        found = set()
        for key in ("dependencies", "dev-dependencies", "build-dependencies"):
            deps = data.get(key)
            if isinstance(deps, dict):
                found |= _names(deps)
        return found
    return set()


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


def _unread_tasks(text: str) -> list[Recipe]:
    """A poe tasks file in a format not read here (YAML, JSON): every `poe` task is held."""
    return [unread("poe", "its tasks file is not read here")]


# The files bun loads into every program it runs (its docs, "Environment variables"), by `NODE_ENV`.
_BUN_ENV_FILES = tuple(
    f".env{mode}{local}" for mode in ("", ".development", ".production", ".test") for local in ("", ".local")
)
# NuGet reads its config by any of these spellings; MSBuild imports the directory files into every project below.
_NUGET_CONFIGS = ("nuget.config", "NuGet.Config", "NuGet.config", "Nuget.config")
_MSBUILD_DIRECTORY_FILES = ("Directory.Build.props", "Directory.Build.targets", "Directory.Packages.props")
_GRADLE_SCRIPTS = tuple(
    f"{folder}{stem}.gradle{kts}"
    for folder in ("", "buildSrc/")
    for stem in ("settings", "build")
    for kts in ("", ".kts")
)
_RECIPE_READERS: tuple[tuple[str, str, Callable[[str], Iterable[Recipe]]], ...] = (
    ("Makefile", "make", makefile_recipes),
    ("makefile", "make", makefile_recipes),
    ("GNUmakefile", "make", makefile_recipes),
    *((name, "just", justfile_recipes) for name in _JUSTFILES),
    ("package.json", "npm", package_json_recipes),
    (".npmrc", "npm", npmrc_recipes),
    (".yarnrc.yml", "npm", yarnrc_yml_recipes),
    (".yarnrc", "npm", yarnrc_recipes),
    ("bunfig.toml", "npm", bunfig_recipes),
    (".pnpmfile.cjs", "npm", pnpmfile_recipes),
    ("pnpm-workspace.yaml", "npm", pnpm_workspace_recipes),
    (".env.yarn", "npm", yarn_environment_recipes),
    *((name, "bun", bun_environment_recipes) for name in _BUN_ENV_FILES),
    *((name, "mise", mise_recipes) for name in _MISE_FILES),
    (".tool-versions", "mise", tool_versions_recipes),
    *((name, "task", taskfile_recipes) for name in _TASKFILES),
    *((name, "rake", rakefile_recipes) for name in _RAKEFILES),
    ("pyproject.toml", "poe", poe_recipes),
    ("poe_tasks.toml", "poe", poe_tasks_file_recipes),
    *((name, "poe", _unread_tasks) for name in ("poe_tasks.yaml", "poe_tasks.yml", "poe_tasks.json")),
    ("deno.json", "deno", deno_recipes),
    ("deno.jsonc", "deno", deno_recipes),
    ("composer.json", "composer", composer_recipes),
    ("tox.ini", "tox", tox_ini_recipes),
    ("setup.cfg", "tox", tox_setup_cfg_recipes),
    ("pyproject.toml", "tox", tox_pyproject_recipes),
    ("tox.toml", "tox", tox_toml_recipes),
    (".cargo/config.toml", "cargo", cargo_config_recipes),
    (".cargo/config", "cargo", cargo_config_recipes),
    ("pyproject.toml", "uv", uv_pyproject_recipes),
    ("uv.toml", "uv", uv_toml_recipes),
    ("rust-toolchain.toml", "cargo", rust_toolchain_recipes),
    ("rust-toolchain", "cargo", rust_toolchain_recipes),
    ("gradle/wrapper/gradle-wrapper.properties", "gradlew", gradle_wrapper_recipes),
    (".mvn/wrapper/maven-wrapper.properties", "mvnw", maven_wrapper_recipes),
    (".mvn/maven.config", "mvnw", maven_config_recipes),
    (".mvn/jvm.config", "mvnw", maven_jvm_config_recipes),
    (".mvn/extensions.xml", "mvnw", maven_extensions_recipes),
    ("pom.xml", "mvnw", maven_pom_recipes),
    ("Cargo.toml", "cargo", cargo_manifest_recipes),
    ("Gemfile", "bundle", gemfile_recipes),
    ("Pipfile", "pipenv", pipfile_recipes),
    ("pyproject.toml", "poetry", poetry_source_recipes),
    ("poetry.toml", "poetry", poetry_settings_recipes),
    (".bundle/config", "bundle", bundle_config_recipes),
    *((name, "dotnet", nuget_config_recipes) for name in _NUGET_CONFIGS),
    *((name, "dotnet", directory_props_recipes) for name in _MSBUILD_DIRECTORY_FILES),
    ("global.json", "dotnet", global_json_recipes),
    ("gradle.properties", "gradle", gradle_properties_recipes),
    *((name, "gradle", gradle_script_recipes) for name in _GRADLE_SCRIPTS),
    ("deno.json", "deno", deno_import_recipes),
    ("deno.jsonc", "deno", deno_import_recipes),
    ("go.mod", "go", go_mod_recipes),
    ("go.work", "go", go_work_recipes),
    ("pubspec.yaml", "dart", pubspec_recipes),
    ("Package.swift", "swift", swift_package_recipes),
    ("build.sbt", "sbt", sbt_recipes),
    (".jvmopts", "sbt", sbt_options_recipes),
    (".sbtopts", "sbt", sbt_options_recipes),
    ("pubspec_overrides.yaml", "dart", pubspec_recipes),
)


def _mise_file_tasks(folder: Path, reading: _Reading) -> set[Recipe]:
    """The file tasks of mise's task folders (`.mise/tasks/test/unit` is `test:unit`), bounded in number."""
    found: set[Recipe] = set()
    for tasks in _MISE_TASK_FOLDERS:
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
            {unread(runner, f"`{path.name}` is larger than {_MAX_BYTES >> 20} MB or cannot be read")}
            if there
            else set()
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
        places, cut_below, below, links = _places(folder, searched, reading)
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
    for name, runner, reader in _RECIPE_READERS:
        if (runner in _HERE_ONLY) == here_only:
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
    read[(where, here_only)] = Tasks(frozenset(found), frozenset(requirements))
    return read[(where, here_only)]


# Where a task may be run other than the project's folder (`core.program_tasks.run_elsewhere`): the folders below
# it (`make -C api`, `npm --prefix web`), by their path, and the members of the workspace it is in (`pnpm --filter
# @acme/web`), by their package's name and path; bounded, a folder or member past the bounds is not read (its
# tasks wait for review).
_MOST_FOLDERS = 20_000  # entries looked at (files too: a folder's listing costs what it holds)
_MOST_PLACES = 128  # read
# What makes a folder a place a runner may be sent to: the first part of any file a reader reads, any case.
_PLACE_NAMES = frozenset(
    name.split("/")[0].lower()
    for name in [*(n for n, _, _ in _RECIPE_READERS), *_MISE_TASK_FOLDERS, "rakelib"]  # (conf.d: under those)
)
_PACKAGE_NAME = re2.compile(r"^(?:@[A-Za-z0-9._-]+/)?[A-Za-z0-9._-]+$")  # as a filter names it: no `:`


def _places(
    folder: Path, searched: list[Path], reading: _Reading
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


def _below(root: Path, depth: int) -> tuple[list[Path], bool, list[Path]]:
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


def _workspace_patterns(root: Path, reading: _Reading) -> list[str] | None:
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


def _json(path: Path, reading: _Reading) -> object:
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


# Runners that read their files only in the folder they run in; the others (just, npm and its kin, mise, task,
# rake, poe, deno, composer, tox, cargo) look in the folders above it too, for their file or a workspace's settings.
_HERE_ONLY = frozenset({"make", "gradlew", "mvnw"})
_MOST_LEVELS = 32


_MISE_CONF_D = (".config/mise/conf.d", "mise/conf.d", ".mise/conf.d")


def _conf_d(folder: Path) -> list[Path]:
    """mise's `conf.d` config files in `folder`, a bounded number."""
    try:
        found = [
            p
            for d in (".config/mise/conf.d", "mise/conf.d", ".mise/conf.d")
            for p in sorted((folder / d).glob("*.toml"))
        ]
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
    case), read as `reader` reads them; the spellings `_RECIPE_READERS` reads already are left to it."""
    found: set[Recipe] = set()
    try:
        entries = [e for e in folder.iterdir() if e.name.lower() in names and e.name not in _JUSTFILES]
    except OSError:
        return found
    for entry in entries[:8]:
        found |= _recipes_in(entry, runner, reader, reading)
    return found


def declared_scripts(folder: Path, manifest: str) -> set[str] | None:
    """The scripts `manifest` in `folder` declares (package.json's `scripts`, a Makefile's targets, a justfile's
    recipes), or None when there is no such file; a file that does not parse declares nothing."""
    text = _read(folder / manifest)
    if text is None:
        return None
    if manifest == "package.json":
        try:
            data = json.loads(text)
        except ValueError:
            return set()
        scripts = data.get("scripts") if isinstance(data, dict) else None
        return {k for k in scripts if isinstance(k, str)} if isinstance(scripts, dict) else set()
    return {m.group(1) for m in _TARGET.finditer(text)}
