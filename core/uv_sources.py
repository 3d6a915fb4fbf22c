"""Where `uv run` and `uv sync` install a project's packages from: its indexes and sources.

`uv run pytest` first syncs the project's environment. An index the project names as the default, or a source that
is a git repository or a URL, replaces what PyPI would give for a package by name (`requests` from a stranger's
fork): what is installed and then run is then the stranger's. Admitted: PyPI, a package from a folder of the
project, a workspace member, a commit of a public forge named by its full id (`core.pinned_git`); anything else
holds every `uv` command that syncs (`core.recipes.unread`).
"""

from __future__ import annotations

import tomllib

import re2

from core.pinned_git import pinned_git
from core.recipes import Recipe, unread

__all__ = ["uv_pyproject_recipes", "uv_toml_recipes"]

_PYPI = re2.compile(r"^https://(?:pypi\.org/simple|files\.pythonhosted\.org)(?:/.*)?$")
_PATH = re2.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_./-]*$")
_PATH_KEYS = frozenset({"path", "editable", "marker", "extra", "group", "package"})
_GIT_KEYS = frozenset({"git", "rev", "subdirectory", "marker", "extra", "group"})
# uv's settings that say where packages come from (uv's settings reference).
_INDEX_KEYS = ("index-url", "extra-index-url", "find-links", "index", "pip")


def _judged(settings: object, where: str) -> list[Recipe]:
    if not isinstance(settings, dict):
        return []
    for key in _INDEX_KEYS:
        value = settings.get(key)
        if value is None:
            continue
        urls = _urls(value)
        if urls is None or not all(_PYPI.match(url) for url in urls):
            return [unread("uv", f"{where} sets `{key}`: where uv installs packages from")]
    sources = settings.get("sources")
    if isinstance(sources, dict):
        for package, source in sources.items():
            if not _admitted_source(source):
                return [unread("uv", f"{where} takes `{str(package)[:40]}` from a source other than PyPI")]
    elif sources is not None:
        return [unread("uv", f"{where} sets `sources` in a shape not read")]
    return []


def _urls(value: object) -> list[str] | None:
    """The URLs an index setting names (a string, a list, a table or a list of tables with `url`), None when it has
    another shape or a table says more (`default = true` for a URL that is not PyPI is caught by its URL)."""
    values = value if isinstance(value, list) else [value]
    urls = []
    for item in values:
        if isinstance(item, str):
            urls.append(item)
        elif isinstance(item, dict) and isinstance(item.get("url"), str):
            urls.append(item["url"])
        else:
            return None
    return urls


def _admitted_source(source: object) -> bool:
    """A workspace member, a folder inside the project, or a commit of a public forge."""
    for one in source if isinstance(source, list) else [source]:
        if not isinstance(one, dict):
            return False
        if one.get("workspace") is True and set(one) <= {"workspace", "marker", "extra", "group"}:
            continue
        path = one.get("path")
        if isinstance(path, str) and _inside(path) and set(one) <= _PATH_KEYS:
            continue
        subdirectory = one.get("subdirectory", "")
        if (
            pinned_git(one.get("git"), one.get("rev"))
            and set(one) <= _GIT_KEYS
            and isinstance(subdirectory, str)
            and (not subdirectory or _inside(subdirectory))
        ):
            continue
        return False
    return True


def _inside(path: str) -> bool:
    """A relative path that stays inside the project (`packages/lib`, not `../x` nor `/opt/x`)."""
    return bool(_PATH.match(path)) and ".." not in path.split("/")


def uv_pyproject_recipes(text: str) -> list[Recipe]:
    """pyproject.toml's `[tool.uv]`: a line that holds every syncing `uv` command when it installs from elsewhere."""
    tool = tomllib.loads(text).get("tool")
    return _judged(tool.get("uv") if isinstance(tool, dict) else None, "pyproject.toml's `[tool.uv]`")


def uv_toml_recipes(text: str) -> list[Recipe]:
    """uv.toml: the same settings at its top level."""
    return _judged(tomllib.loads(text), "uv.toml")
