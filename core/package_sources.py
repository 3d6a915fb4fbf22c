"""Where the manifests of cargo, bundler, pipenv and poetry say installs fetch from.

Beside npm's, pip's, uv's, composer's and Maven's (round 8b): Cargo.toml's git, registry and patch dependencies
(cargo builds them, and runs their build scripts, for every `cargo test`; one pinned to a commit of a public forge
by its full id is admitted, `core.pinned_git`), a Gemfile's sources and git gems
(`bundle install`), a Pipfile's sources (`pipenv install`) and poetry's (`poetry install`). Only the public
registry of each, over https, is admitted; any other source holds every command of that tool
(`core.recipes.unread`). Their settings files hold the same when they change where or how securely the tool fetches:
bundler's `.bundle/config` (a mirror, `BUNDLE_SSL_VERIFY_MODE`), poetry.toml (`certificates`, `repositories`); and
Cargo.toml's build script from a path outside the project (`build = "../x.rs"`) holds every cargo command.
"""

from __future__ import annotations

import tomllib

import re2
import yaml

from core.module_sources import inside_project
from core.pinned_git import pinned_git
from core.recipes import Recipe, unread

__all__ = [
    "bundle_config_recipes",
    "cargo_manifest_recipes",
    "gemfile_recipes",
    "pipfile_recipes",
    "poetry_settings_recipes",
    "poetry_source_recipes",
]

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
    package = data.get("package")
    build = package.get("build") if isinstance(package, dict) else None
    if build is not None and not isinstance(build, bool) and not inside_project(build):
        why.append(f"Cargo.toml's build script is `{str(build)[:40]}`, outside the project")
    for kind in ("lib", "bin", "test", "bench", "example"):
        targets = data.get(kind)
        for target in targets if isinstance(targets, list) else [targets]:
            path = target.get("path") if isinstance(target, dict) else None
            if path is not None and not inside_project(path):
                why.append(f"Cargo.toml builds `[{kind}]` from `{str(path)[:40]}`, outside the project")
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
                any(k in spec for k in _ELSEWHERE_KEYS) or ("path" in spec and not inside_project(spec["path"]))
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
    """A Pipfile: a `[[source]]` other than PyPI over https with its certificate checked, and a package from git (but
    a public forge's commit), a URL or a folder outside the project, hold every `pipenv` command."""
    data = tomllib.loads(text)
    sources = data.get("source", [])
    why = [
        f"the Pipfile fetches from `{str(s.get('url', ''))[:40] if isinstance(s, dict) else s}`"
        for s in (sources if isinstance(sources, list) else [sources])
        if not isinstance(s, dict)
        or str(s.get("url", "")).rstrip("/") != "https://pypi.org/simple"
        or s.get("verify_ssl", True) is not True
    ]
    for table in ("packages", "dev-packages"):
        packages = data.get(table)
        for name, spec in packages.items() if isinstance(packages, dict) else []:
            if _elsewhere(spec, "ref"):
                why.append(f"the Pipfile fetches `{str(name)[:30]}` from elsewhere than PyPI")
    return [unread("pipenv", w) for w in why[:_MOST]]


def _elsewhere(spec: object, rev_key: str) -> bool:
    """A Python dependency (Pipfile's, poetry's) from git but a public forge's commit, a URL or file, or a folder
    outside the project; a version, extras and markers are the registry's."""
    for one in spec if isinstance(spec, list) else [spec]:
        if not isinstance(one, dict):
            continue
        if "git" in one and not pinned_git(one.get("git"), one.get(rev_key)):
            return True
        if "path" in one and not inside_project(one["path"]):
            return True
        if any(k in one for k in ("url", "file", "hg", "svn", "bzr")):
            return True
    return False


def poetry_source_recipes(text: str) -> list[Recipe]:
    """pyproject.toml's `[[tool.poetry.source]]`, and a poetry dependency from git (but a public forge's commit), a
    URL or a folder outside the project: any holds every `poetry` command."""
    data = tomllib.loads(text)
    tool = data.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    if not isinstance(poetry, dict):
        return []
    why = ["pyproject.toml names a poetry source: where its installs fetch from"] if poetry.get("source") else []
    tables = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
    groups = poetry.get("group")
    tables += (
        [g.get("dependencies") for g in groups.values() if isinstance(g, dict)] if isinstance(groups, dict) else []
    )
    for table in tables:
        for name, spec in table.items() if isinstance(table, dict) else []:
            if _elsewhere(spec, "rev"):
                why.append(f"pyproject.toml's poetry dependency `{str(name)[:30]}` is fetched from elsewhere than PyPI")
    return [unread("poetry", w) for w in why[:_MOST]]


# bundler's settings that say how it lays out, groups, caches or reports gems, never where it fetches them from or
# whom it trusts; the ones naming a folder must name one inside the project.
_BUNDLE_ADMITTED = frozenset(
    "BUNDLE_FROZEN BUNDLE_DEPLOYMENT BUNDLE_WITHOUT BUNDLE_WITH BUNDLE_ONLY BUNDLE_JOBS BUNDLE_RETRY"
    " BUNDLE_DISABLE_SHARED_GEMS BUNDLE_CACHE_ALL BUNDLE_CACHE_ALL_PLATFORMS BUNDLE_SILENCE_ROOT_WARNING BUNDLE_CLEAN"
    " BUNDLE_NO_PRUNE BUNDLE_DISABLE_VERSION_CHECK BUNDLE_FORCE_RUBY_PLATFORM BUNDLE_SPECIFIC_PLATFORM"
    " BUNDLE_NO_INSTALL BUNDLE_SILENCE_DEPRECATIONS BUNDLE_IGNORE_MESSAGES"
    " BUNDLE_PATH__SYSTEM BUNDLE_AUTO_CLEAN_WITHOUT_PATH BUNDLE_LOCKFILE_CHECKSUMS".split()
)
_BUNDLE_FOLDERS = frozenset({"BUNDLE_PATH", "BUNDLE_BIN", "BUNDLE_CACHE_PATH"})


def bundle_config_recipes(text: str) -> list[Recipe]:
    """.bundle/config: a mirror (`BUNDLE_MIRROR__*`), certificate checking off (`BUNDLE_SSL_VERIFY_MODE`), another
    Gemfile, and any key not known to only lay out or report holds every `bundle` command."""
    data = yaml.safe_load(text)
    if data is None:
        return []
    if not isinstance(data, dict):
        return [unread("bundle", ".bundle/config is in a shape not read")]
    why: list[str] = []
    for key, value in data.items():
        name = str(key).upper()
        if name in _BUNDLE_ADMITTED:
            continue
        if name in _BUNDLE_FOLDERS and inside_project(str(value).removeprefix("./")):
            continue
        why.append(f".bundle/config sets `{str(key)[:40]}`")
    return [unread("bundle", w) for w in why[:_MOST]]


# poetry.toml's settings (poetry's configuration reference) that say where the environment lives and how the
# installer works, never where it fetches from or whom it trusts.
_POETRY_ADMITTED = frozenset(
    "virtualenvs.in-project virtualenvs.create virtualenvs.options.always-copy virtualenvs.options.no-pip"
    " virtualenvs.options.no-setuptools virtualenvs.options.system-site-packages virtualenvs.prefer-active-python"
    " virtualenvs.use-poetry-python virtualenvs.prompt installer.parallel installer.max-workers installer.re-resolve"
    " installer.modern-installation installer.no-binary installer.only-binary solver.lazy-wheel requests.max-retries"
    " keyring.enabled".split()
)


def _flattened(table: dict[str, object], prefix: str = "") -> dict[str, object]:
    found: dict[str, object] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if (
            isinstance(value, dict)
            and value
            and name not in ("certificates", "repositories", "http-basic", "pypi-token")
        ):
            found.update(_flattened(value, f"{name}."))
        else:
            found[name] = value
    return found


def poetry_settings_recipes(text: str) -> list[Recipe]:
    """poetry.toml: `certificates` (a host's certificate unchecked, or another authority), `repositories`, and any
    setting not known to only place the environment or tune the installer holds every `poetry` command."""
    settings = _flattened(tomllib.loads(text))
    why = [f"poetry.toml sets `{key[:40]}`" for key in settings if key not in _POETRY_ADMITTED]
    if settings.get("keyring.enabled", False) is not False:
        why.append("poetry.toml enables a keyring")
    return [unread("poetry", w) for w in why[:_MOST]]
