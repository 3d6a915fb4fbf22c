"""Which files of a project declare what it runs, and the reader of each.

A lesson may tell an agent to run a program the project itself declares: the commands of its `[project.scripts]`,
its tools' `[tool.*]` sections and dependencies (pyproject.toml), the `bin` entries and dependencies of package.json
(what `npx` finds) and its scripts, composer.json's packages and scripts, Cargo's binaries, the tools mise or asdf
pin and mise's tasks, a Makefile's targets, a justfile's recipes and a Taskfile's tasks, and the first word of each
code span of the hand-written part of its CLAUDE.md / AGENTS.md (outside playbook's own block); and a task it
declares is judged by what its runner's files say it runs (`RECIPE_READERS`). Files are read bounded and parsed by
their own parsers; a file that does not parse declares nothing. `core.io.declared` reads them, in one pass.
"""

from __future__ import annotations

import functools
import json
import tomllib
from collections.abc import Callable, Iterable
from pathlib import Path

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
    Recipe,
    mise_recipes,
    package_json_recipes,
    rakefile_recipes,
    tool_versions_recipes,
    unread,
)
from core.script_manifests import composer_recipes, deno_recipes
from core.taskfile import taskfile_recipes
from core.tox_config import tox_ini_recipes, tox_pyproject_recipes, tox_setup_cfg_recipes, tox_toml_recipes
from core.uv_sources import uv_pyproject_recipes, uv_toml_recipes

__all__ = [
    "HERE_ONLY",
    "JUSTFILES",
    "MAX_BYTES",
    "MISE_CONF_D",
    "MISE_TASK_FOLDERS",
    "PACKAGE_READERS",
    "PROGRAM_READERS",
    "RECIPE_READERS",
    "TARGET",
    "read_bounded",
]

MAX_BYTES = 1 << 20  # a manifest larger than this is no manifest we read
_NAME = re2.compile(r"^[A-Za-z0-9_][A-Za-z0-9._+-]{0,63}$")
_REQUIREMENT = re2.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
# A Makefile target or a justfile recipe: a name at the start of a line, then its colon (not `:=`, an assignment).
TARGET = re2.compile(r"(?m)^@?([A-Za-z0-9_][A-Za-z0-9_.-]*)(?:[ \t][^:=\n]*)?:(?:[^=]|$)")
_SPAN = re2.compile(r"`([A-Za-z0-9_][A-Za-z0-9._+-]{0,63})(?:[ `])")


def read_bounded(path: Path) -> str | None:
    """The text of the file at `path`, or None where it is not a file, is larger than `MAX_BYTES` or cannot be read."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


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
    return {m.group(1) for m in TARGET.finditer(text) if TASK_NAME.match(m.group(1))}


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
JUSTFILES = ("justfile", "Justfile", ".justfile")
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
MISE_TASK_FOLDERS = ("mise-tasks", ".mise-tasks", "mise/tasks", ".mise/tasks", ".config/mise/tasks")
_TASKFILES = tuple(
    f"{stem}{dist}.{ext}" for stem in ("Taskfile", "taskfile") for dist in ("", ".dist") for ext in ("yml", "yaml")
)
_RAKEFILES = ("Rakefile", "rakefile", "Rakefile.rb", "rakefile.rb")
PROGRAM_READERS = (
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
RECIPE_READERS: tuple[tuple[str, str, Callable[[str], Iterable[Recipe]]], ...] = (
    ("Makefile", "make", makefile_recipes),
    ("makefile", "make", makefile_recipes),
    ("GNUmakefile", "make", makefile_recipes),
    *((name, "just", justfile_recipes) for name in JUSTFILES),
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


# Runners that read their files only in the folder they run in; the others (just, npm and its kin, mise, task,
# rake, poe, deno, composer, tox, cargo) look in the folders above it too, for their file or a workspace's settings.
HERE_ONLY = frozenset({"make", "gradlew", "mvnw"})
MISE_CONF_D = (".config/mise/conf.d", "mise/conf.d", ".mise/conf.d")


# What `Declarations.packages` reads: the manifests whose dependencies a lesson may install or fetch by name.
PACKAGE_READERS: tuple[tuple[str, Callable[[str], Iterable[str]]], ...] = tuple(
    (name, functools.partial(_dependencies, name)) for name in ("pyproject.toml", "package.json", "Cargo.toml")
)
