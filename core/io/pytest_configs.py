"""Where a project's pytest configuration leads: its paths, plugins and modules judged against the folder.

`core.pytest_config` reads what each configuration file names; here each is judged where it is: a path must stay
inside the file's folder, links followed (`pythonpath = lib` where `lib` links out leads out); a plugin or module
loaded by name (`-p xdist`, a `filterwarnings` class) must be one the project declares as a dependency (its
pyproject.toml, its requirements files), the project itself, one of pytest's own, or a module inside the folder; a
plugin it requires must be declared. Anything else holds every `pytest` command (`core.recipes.unread`), run
directly or through a wrapper (`uv run pytest`, `python -m pytest`).
"""

from __future__ import annotations

import configparser
import sys
import tomllib
from collections.abc import Callable, Iterable
from pathlib import Path

import re2

from core.pytest_config import PYTEST_FILES, PytestLoads, distribution_name, pytest_loads
from core.recipes import Recipe, unread

__all__ = ["pytest_config_recipes"]

_REQUIREMENT = re2.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_MOST_FILES = 64  # requirements files, and the paths a `testpaths` glob matches, looked at
# pytest's own modules, and its own plugins by the names `-p` takes them by (`_pytest.config.builtin_plugins`).
_PYTEST_OWN = frozenset(
    "pytest _pytest mark main runner fixtures helpconfig python terminal debugging unittest capture skipping"
    " legacypath tmpdir monkeypatch recwarn pastebin assertion junitxml doctest cacheprovider freeze_support"
    " setuponly setupplan stepwise unraisableexception threadexception warnings logging reports python_path"
    " faulthandler pytester pytester_assertions".split()
)


def pytest_config_recipes(folder: Path, text: Callable[[Path], str | None]) -> set[Recipe]:
    """What holds every `pytest` command in `folder` for its configuration files (`core.pytest_config.PYTEST_FILES`,
    each read by `text`): one line per thing that leads outside the project; a file that is there and cannot be read
    or does not parse holds them too."""
    found: set[Recipe] = set()
    declared: frozenset[str] | None = None
    for name in PYTEST_FILES:
        path = folder / name
        body = text(path)
        if body is None:
            if _there(path):
                found.add(unread("pytest", f"`{name}` is too large or cannot be read"))
            continue
        try:
            loads = pytest_loads(name, body)
        except (ValueError, tomllib.TOMLDecodeError, configparser.Error, RecursionError):
            found.add(unread("pytest", f"`{name}` does not parse"))
            continue
        if loads is None:
            continue
        if declared is None:
            declared = _declared(folder, text)
        found.update(unread("pytest", f"`{name}` {why}") for why in _held(folder, loads, declared))
    return found


def _there(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return True


def _held(folder: Path, loads: PytestLoads, declared: frozenset[str]) -> list[str]:
    """Why what `loads` names, in `folder`, leads outside the project."""
    held = list(loads.held)
    roots = [folder, folder / "src"]
    for setting, path in loads.paths:
        if not all(_inside(folder, p) for p in _matched(folder, path)):
            held.append(f"sets `{setting}` to `{path[:40]}`, which leads outside the project through a link")
        elif setting == "pythonpath":
            roots.append(folder / path)
    for setting, module in loads.modules:
        if not _admitted_module(folder, roots, setting, module, declared):
            held.append(f"loads `{module[:40]}` by `{setting}`, a module the project neither declares nor holds")
    for setting, plugin in loads.plugins:
        if distribution_name(plugin) not in declared and plugin.lower() != "pytest":
            held.append(f"`{setting}` names `{plugin[:40]}`, a plugin the project does not declare")
    return held


def _matched(folder: Path, path: str) -> list[Path]:
    """The paths `path` names: itself, or what it matches as a glob (`testpaths = tests/*`), a bounded number."""
    if not any(c in path for c in "*?["):
        return [folder / path]
    try:
        return [folder, *sorted(folder.glob(path))[:_MOST_FILES]]
    except (OSError, ValueError, NotImplementedError):
        return [folder.parent]  # a glob not read: held, as outside


def _inside(folder: Path, path: Path) -> bool:
    """Whether `path` is `folder` or inside it, its links followed."""
    try:
        root, target = folder.resolve(), path.resolve()
    except (OSError, RuntimeError):
        return False
    return target == root or root in target.parents


def _admitted_module(folder: Path, roots: list[Path], setting: str, module: str, declared: frozenset[str]) -> bool:
    """Whether the module `module` (`setting` loads it by name) is known safe: pytest's own, a plugin or package the
    project declares (`-p xdist` is `pytest-xdist`'s), a module of the standard library that names a warning's class,
    or a module inside the project (its own code)."""
    top = module.split(".")[0]
    name = distribution_name(top)
    if top in _PYTEST_OWN or name in declared or f"pytest-{name}" in declared:
        return True
    if setting != "addopts -p" and top in sys.stdlib_module_names:
        return True  # `filterwarnings = error::warnings.X`: a class of Python's own
    parts = module.split(".")
    for root in roots:
        candidate = root.joinpath(*parts)
        for target in (candidate.with_name(f"{parts[-1]}.py"), candidate):
            try:
                exists = target.is_file() if target.suffix == ".py" else target.is_dir()
            except OSError:
                exists = False
            if exists and _inside(folder, target):
                return True
    return False


def _declared(folder: Path, text: Callable[[Path], str | None]) -> frozenset[str]:
    """The distributions the project in `folder` declares, by their PEP 503 names: its pyproject.toml's name and
    dependencies (PEP 621, its optional ones, dependency groups, poetry's), and its requirements files' names."""
    names: set[str] = set()
    body = text(folder / "pyproject.toml")
    if body is not None:
        try:
            names |= _pyproject_names(tomllib.loads(body))
        except (tomllib.TOMLDecodeError, ValueError):
            pass
    try:
        files = sorted(p for p in folder.glob("*.txt") if "requirements" in p.name.lower())[:_MOST_FILES]
    except OSError:
        files = []
    for path in files:
        body = text(path)
        if body is not None:
            names |= _requirement_names(line for line in body.splitlines() if not line.lstrip().startswith("-"))
    return frozenset(distribution_name(n) for n in names)


def _pyproject_names(data: dict[str, object]) -> set[str]:
    project = data.get("project")
    project = project if isinstance(project, dict) else {}
    names = {project["name"]} if isinstance(project.get("name"), str) else set()
    groups: list[object] = [project.get("dependencies")]
    extras = project.get("optional-dependencies")
    groups += list(extras.values()) if isinstance(extras, dict) else []
    dependency_groups = data.get("dependency-groups")
    groups += list(dependency_groups.values()) if isinstance(dependency_groups, dict) else []
    for group in groups:
        names |= _requirement_names(group if isinstance(group, list) else [])
    tool = data.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    if isinstance(poetry, dict):
        names |= {poetry["name"]} if isinstance(poetry.get("name"), str) else set()
        tables = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
        poetry_groups = poetry.get("group")
        if isinstance(poetry_groups, dict):
            tables += [g.get("dependencies") for g in poetry_groups.values() if isinstance(g, dict)]
        for table in tables:
            names |= {k for k in table if isinstance(k, str)} if isinstance(table, dict) else set()
    return names


def _requirement_names(values: Iterable[object]) -> set[str]:
    return {m.group(1) for v in values if isinstance(v, str) and (m := _REQUIREMENT.match(v))}
