"""Where `uv run` and `uv sync` install a project's packages from: its indexes and sources.

`uv run pytest` first syncs the project's environment. An index the project names as the default, or a source that
is a git repository or a URL, replaces what PyPI would give for a package by name (`requests` from a stranger's
fork): what is installed and then run is then the stranger's. Admitted: PyPI, a package from a folder of the
project, a workspace member, a commit of a public forge named by its full id (`core.pinned_git`); anything else
holds every `uv` command that syncs (`core.recipes.unread`). So do the settings that trust a host without its
certificate (`allow-insecure-host`), fetch Python itself from elsewhere (`python-install-mirror`), hand credentials to
a keyring program (`keyring-provider`), a build backend from a folder outside the project (`backend-path`), and a
dependency, an override or a constraint given by a URL (`pkg @ https://...`) that is no pinned commit of a forge.
"""

from __future__ import annotations

import tomllib

import re2

from core.pinned_git import pinned_git, pinned_git_url
from core.recipes import Recipe, unread

__all__ = ["uv_pyproject_recipes", "uv_toml_recipes"]

_PYPI = re2.compile(r"^https://(?:pypi\.org/simple|files\.pythonhosted\.org)(?:/.*)?$")
_PATH = re2.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_./-]*$")
_PATH_KEYS = frozenset({"path", "editable", "marker", "extra", "group", "package"})
_GIT_KEYS = frozenset({"git", "rev", "subdirectory", "marker", "extra", "group"})
# uv's settings that say where packages come from (uv's settings reference).
_INDEX_KEYS = ("index-url", "extra-index-url", "find-links", "index", "pip")


# Settings that trust a host whatever its certificate says, or fetch Python or credentials from elsewhere.
_HELD_KEYS = ("allow-insecure-host", "python-install-mirror", "pypy-install-mirror", "python-downloads-json-url")


def _judged(settings: object, where: str) -> list[Recipe]:
    if not isinstance(settings, dict):
        return []
    for key in _HELD_KEYS:
        if key in settings:
            return [unread("uv", f"{where} sets `{key}`")]
    if settings.get("keyring-provider", "disabled") != "disabled":
        return [unread("uv", f"{where} sets `keyring-provider`: a program uv runs for credentials")]
    for key in (
        "override-dependencies",
        "constraint-dependencies",
        "dev-dependencies",
        "build-constraint-dependencies",
    ):
        if (why := _requirements_held(settings.get(key), f"{where} `{key}`")) is not None:
            return [unread("uv", why)]
    for key in _INDEX_KEYS:
        value = settings.get(key)
        if value is None:
            continue
        urls = _urls(value)
        if urls is None or not all(_PYPI.match(url) for url in urls):
            return [unread("uv", f"{where} sets `{key}`: where uv installs packages from")]
    workspace = settings.get("workspace")
    members = workspace.get("members", []) if isinstance(workspace, dict) else []
    if not isinstance(members, list) or not all(
        isinstance(m, str) and _inside(m.removeprefix("./").replace("*", "x"))
        for m in members  # globs: `packages/*`
    ):
        return [unread("uv", f"{where} takes workspace members from outside the project")]
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


def _requirements_held(requirements: object, where: str) -> str | None:
    """Why a list of PEP 508 requirements installs from elsewhere than the registry: one given by a URL
    (`pkg @ https://host/pkg.whl`, `pkg @ git+https://...@branch`) that is no commit of a public forge by its full
    id, or a list in a shape not read; None when each is a name and a version."""
    if requirements is None:
        return None
    if not isinstance(requirements, list):
        return f"{where} is in a shape not read"
    for requirement in requirements:
        if not isinstance(requirement, str):
            return f"{where} lists a requirement in a shape not read"
        _, at, url = requirement.partition("@")
        if not at:
            continue
        url = url.split(";", 1)[0].strip()
        if pinned_git_url(url):
            continue
        return f"{where} installs `{requirement.split('@', 1)[0].strip()[:30]}` from `{url[:40]}`"
    return None


def _project_held(data: dict[str, object]) -> list[Recipe]:
    """PEP 621's dependencies, optional ones, dependency groups and the build's requirements given by URL, and a
    build backend from a folder outside the project: `uv sync` installs and builds them."""
    why: list[str] = []
    project = data.get("project")
    if isinstance(project, dict):
        why.append(_requirements_held(project.get("dependencies"), "`[project] dependencies`") or "")
        optional = project.get("optional-dependencies")
        for extra, group in optional.items() if isinstance(optional, dict) else []:
            why.append(_requirements_held(group, f"`optional-dependencies.{str(extra)[:20]}`") or "")
    groups = data.get("dependency-groups")
    for name, group in groups.items() if isinstance(groups, dict) else []:
        # A group may include another by `{include-group = "x"}`: judged where that group is.
        listed = [g for g in group if not (isinstance(g, dict) and set(g) == {"include-group"})] if isinstance(
            group, list) else group  # fmt: skip
        why.append(_requirements_held(listed, f"`dependency-groups.{str(name)[:20]}`") or "")
    build = data.get("build-system")
    if isinstance(build, dict):  # what the build installs first (round 9: a backend from a URL)
        why.append(_requirements_held(build.get("requires"), "`[build-system] requires`") or "")
    backend_path = build.get("backend-path") if isinstance(build, dict) else None
    if backend_path is not None and not (
        isinstance(backend_path, list)
        and all(isinstance(p, str) and _inside(p.removeprefix("./")) for p in backend_path)
    ):
        why.append("`[build-system] backend-path` loads the build backend from outside the project")
    return [unread("uv", f"pyproject.toml's {w}") for w in why if w][:8]


def uv_pyproject_recipes(text: str) -> list[Recipe]:
    """pyproject.toml's `[tool.uv]`, its dependencies and its build system: a line that holds every syncing `uv`
    command when it installs from elsewhere or trusts a host without its certificate."""
    data = tomllib.loads(text)
    tool = data.get("tool")
    return [
        *_judged(tool.get("uv") if isinstance(tool, dict) else None, "pyproject.toml's `[tool.uv]`"),
        *_project_held(data),
    ]


def uv_toml_recipes(text: str) -> list[Recipe]:
    """uv.toml: the same settings at its top level."""
    return _judged(tomllib.loads(text), "uv.toml")
