"""Where the manifests of cargo, bundler, pipenv and poetry say installs fetch from.

Beside npm's, pip's, uv's, composer's and Maven's (round 8b): Cargo.toml's git, registry and patch dependencies
(cargo builds them, and runs their build scripts, for every `cargo test`; one pinned to a commit of a public forge
by its full id is admitted, `core.pinned_git`), a Gemfile's sources and git gems
(`bundle install`), a Pipfile's sources (`pipenv install`) and poetry's (`poetry install`). Only the public
registry of each, over https, is admitted; any other source holds every command of that tool
(`core.recipes.unread`).
"""

from __future__ import annotations

import tomllib

import re2

from core.pinned_git import pinned_git
from core.recipes import Recipe, unread

__all__ = ["cargo_manifest_recipes", "gemfile_recipes", "pipfile_recipes", "poetry_source_recipes"]

_DEPENDENCY_TABLES = ("dependencies", "dev-dependencies", "build-dependencies")
_ELSEWHERE_KEYS = ("git", "registry", "registry-index")
# What a git dependency pinned to a commit may say beside it: which crate of the repository, and how it is built.
_PINNED_KEYS = frozenset({"git", "rev", "package", "version", "features", "default-features", "optional"})
_MOST = 8


def cargo_manifest_recipes(text: str) -> list[Recipe]:
    """Cargo.toml: a dependency fetched from git (but a public forge's commit, by its full id) or another registry,
    one from a path outside the project, and any `[patch]` hold every cargo command."""
    data = tomllib.loads(text)
    why: list[str] = []
    tables = [data.get(t) for t in _DEPENDENCY_TABLES]
    for target in (data.get("target") or {}).values() if isinstance(data.get("target"), dict) else []:
        if isinstance(target, dict):
            tables += [target.get(t) for t in _DEPENDENCY_TABLES]
    workspace = data.get("workspace")
    if isinstance(workspace, dict):
        tables.append(workspace.get("dependencies"))
    for table in tables:
        for name, spec in table.items() if isinstance(table, dict) else []:
            if isinstance(spec, dict) and _pinned(spec):
                continue
            if isinstance(spec, dict) and (
                any(k in spec for k in _ELSEWHERE_KEYS) or ".." in str(spec.get("path", "")).split("/")
            ):
                why.append(f"Cargo.toml fetches `{str(name)[:30]}` from elsewhere than crates.io")
    if data.get("patch"):
        why.append("Cargo.toml patches dependencies (`[patch]`)")
    return [unread("cargo", w) for w in why[:_MOST]]


def _pinned(spec: dict[str, object]) -> bool:
    """A git dependency pinned to a commit of a public forge, and nothing else said of where it comes from."""
    return set(spec) <= _PINNED_KEYS and pinned_git(spec.get("git"), spec.get("rev"))


_GEM_SOURCE = re2.compile(r"""^\s*source\s*\(?\s*['"]([^'"]*)['"]""")
_GEM_ELSEWHERE = re2.compile(r"""(?:\bgit|\bgithub|\bgist|\bbitbucket|\bpath|\bsource)\s*(?::|=>)""")
_GEM_CODE = re2.compile(r"^\s*(?:git_source|eval_gemfile|instance_eval|eval|load|require|system)\b|`")


def gemfile_recipes(text: str) -> list[Recipe]:
    """A Gemfile: a source other than rubygems.org, a gem from git or a path, and Ruby that runs or reads more
    (`eval_gemfile`, `git_source`) hold every `bundle` command."""
    why: list[str] = []
    for line in text.splitlines()[:5000]:
        stripped = line.split("#", 1)[0]
        if (source := _GEM_SOURCE.match(stripped)) is not None:
            if source.group(1).rstrip("/") != "https://rubygems.org":
                why.append(f"the Gemfile fetches from `{source.group(1)[:40]}`")
        elif stripped.lstrip().startswith("gem") and _GEM_ELSEWHERE.search(stripped):
            why.append(f"the Gemfile fetches a gem from elsewhere: `{stripped.strip()[:40]}`")
        elif _GEM_CODE.search(stripped):
            why.append(f"the Gemfile runs Ruby: `{stripped.strip()[:40]}`")
    return [unread("bundle", w) for w in why[:_MOST]]


def pipfile_recipes(text: str) -> list[Recipe]:
    """A Pipfile: a `[[source]]` other than PyPI over https with its certificate checked holds every `pipenv`
    command."""
    data = tomllib.loads(text)
    sources = data.get("source", [])
    why = [
        f"the Pipfile fetches from `{str(s.get('url', ''))[:40] if isinstance(s, dict) else s}`"
        for s in (sources if isinstance(sources, list) else [sources])
        if not isinstance(s, dict)
        or str(s.get("url", "")).rstrip("/") != "https://pypi.org/simple"
        or s.get("verify_ssl", True) is not True
    ]
    return [unread("pipenv", w) for w in why[:_MOST]]


def poetry_source_recipes(text: str) -> list[Recipe]:
    """pyproject.toml's `[[tool.poetry.source]]`: any source holds every `poetry` command."""
    data = tomllib.loads(text)
    tool = data.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    sources = poetry.get("source") if isinstance(poetry, dict) else None
    if not sources:
        return []
    return [unread("poetry", "pyproject.toml names a poetry source: where its installs fetch from")]
