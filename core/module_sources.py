"""Where go, deno, dart, swift and sbt fetch a project's modules from, as their manifests say.

Round 9 published "run the tests with `go test ./...`" (and `deno test`, `dart test`, `swift test`, `sbt test`) while
the project's manifest sent what the tool fetches and builds elsewhere: go.mod's `replace` to a folder outside the
project or to another module, go.work's `use` of an outside folder, deno.json's import map from a host, a pubspec's
git or plain-http package, Package.swift's package from a host of its own, build.sbt's plain-http resolver. Each tool
builds and runs what it fetches for every command, so only the public registry (or a public forge over https), and
folders inside the project, are admitted; anything else holds every command of that tool (`core.recipes.unread`).
"""

from __future__ import annotations

import re2
import yaml

from core.pinned_git import pinned_git
from core.recipes import Recipe, unread
from core.script_manifests import jsonc

__all__ = [
    "deno_import_map",
    "deno_import_recipes",
    "go_mod_recipes",
    "go_work_recipes",
    "inside_project",
    "pubspec_recipes",
    "sbt_recipes",
    "swift_package_recipes",
]

_MOST = 8
_PATH = re2.compile(r"^(?:\./)?[A-Za-z0-9_.@+-][A-Za-z0-9_.@+/-]*$")


def inside_project(path: object) -> bool:
    """A relative path that stays inside the project (`packages/lib`, `./lib`; not `../x`, `/opt/x`, `~/x`)."""
    return (
        isinstance(path, str)
        and bool(_PATH.match(path))
        and ".." not in path.split("/")
        and not path.startswith(("/", "~"))
    )


# `replace old [v] => new [v]`, one a line or in a `replace ( ... )` block; `use ./x` likewise.
_GO_DIRECTIVE = re2.compile(r"^\s*(replace|use)\b\s*(.*)$")


def _go_directives(text: str) -> list[tuple[str, str]]:
    """go.mod's or go.work's `replace` and `use` directives, each (directive, what it says), blocks unfolded."""
    found: list[tuple[str, str]] = []
    block = ""
    for raw in text.splitlines()[:20_000]:
        line = raw.split("//", 1)[0].strip()
        if block:
            if line.startswith(")"):
                block = ""
            elif line:
                found.append((block, line))
            continue
        match = _GO_DIRECTIVE.match(line)
        if match is None:
            continue
        rest = match.group(2).strip()
        if rest.startswith("("):
            block = match.group(1)
            if rest[1:].strip():
                found.append((block, rest[1:].strip()))
        else:
            found.append((match.group(1), rest))
    return found


def _go_judged(text: str, file: str) -> list[Recipe]:
    why: list[str] = []
    for directive, said in _go_directives(text):
        if directive == "use":
            target = said.strip('"`')
            if not inside_project(target):
                why.append(f"{file} uses `{target[:40]}`, a folder outside the project")
            continue
        _, arrow, new = said.partition("=>")
        words = new.split()
        # Only a folder inside the project replaces a module with the project's own code (`=> ./lib`): a folder
        # outside it, or another module (`=> github.com/someone/fork v1.0.0`), builds what the project chose.
        if not arrow or len(words) != 1 or not words[0].startswith(".") or not inside_project(words[0].strip('"`')):
            why.append(f"{file} replaces a module with `{new.strip()[:40]}`")
    return [unread("go", w) for w in why[:_MOST]]


def go_mod_recipes(text: str) -> list[Recipe]:
    """go.mod: a `replace` by anything but a folder inside the project holds every `go` command."""
    return _go_judged(text, "go.mod")


def go_work_recipes(text: str) -> list[Recipe]:
    """go.work: a `use` of a folder outside the project, or a `replace` as go.mod's, holds every `go` command."""
    return _go_judged(text, "go.work")


# A specifier deno resolves from its registries (`jsr:@std/assert@1`, `npm:chalk@5`), or a folder of the project.
_DENO_SPECIFIER = re2.compile(r"^(?:jsr|npm):[A-Za-z0-9@/._^~<>=*+ -]*$")


def _deno_target(value: object) -> bool:
    if not isinstance(value, str):
        return False
    if _DENO_SPECIFIER.match(value):
        return True
    return value.startswith(("./", "../")) and inside_project(value.removeprefix("./"))


def deno_import_map(text: str) -> str | None:
    """The import map file deno.json names (`"importMap": "./import_map.json"`), when it is one inside the project:
    its `imports` and `scopes` are judged as deno.json's own (`deno_import_recipes`)."""
    data = jsonc(text)
    path = data.get("importMap") if isinstance(data, dict) else None
    return path if isinstance(path, str) and inside_project(path.removeprefix("./")) else None


def deno_import_recipes(text: str) -> list[Recipe]:
    """deno.json's `importMap`, `imports` and `scopes`: an import map that is no file inside the project, or a
    specifier mapped to a URL or a folder outside it, holds every `deno` command (what `deno test` runs is then what
    that host serves)."""
    data = jsonc(text)
    if not isinstance(data, dict):
        return []
    why: list[str] = []
    import_map = data.get("importMap")
    if import_map is not None and not inside_project(
        import_map.removeprefix("./") if isinstance(import_map, str) else None
    ):
        why.append(f"deno.json's `importMap` is `{str(import_map)[:40]}`")
    maps = [data.get("imports")]
    scopes = data.get("scopes")
    if isinstance(scopes, dict):
        maps += list(scopes.values())
    elif scopes is not None:
        why.append("deno.json's `scopes` is no table")
    for table in maps:
        if table is None:
            continue
        if not isinstance(table, dict):
            why.append("deno.json maps imports in a shape not read")
            continue
        why += [f"deno.json maps `{str(k)[:30]}` to `{str(v)[:40]}`" for k, v in table.items() if not _deno_target(v)]
    return [unread("deno", w) for w in why[:_MOST]]


_PUB_HOSTS = frozenset({"https://pub.dev", "https://pub.dartlang.org"})


def _pub_admitted(spec: object) -> bool:
    """A dependency of pubspec.yaml pub gives by name (a version), from pub.dev, the SDK, a folder inside the
    project, or a commit of a public forge."""
    if spec is None or isinstance(spec, str | int | float):
        return True
    if not isinstance(spec, dict):
        return False
    if set(spec) <= {"version"} or set(spec) == {"sdk"}:
        return True
    if set(spec) == {"path"}:
        return inside_project(spec["path"])
    if "hosted" in spec and set(spec) <= {"hosted", "version"}:
        hosted = spec["hosted"]
        url = hosted.get("url") if isinstance(hosted, dict) else hosted
        return isinstance(url, str) and url.rstrip("/") in _PUB_HOSTS
    if set(spec) == {"git"}:
        git = spec["git"]
        return (
            isinstance(git, dict) and set(git) <= {"url", "ref", "path"} and pinned_git(git.get("url"), git.get("ref"))
        )
    return False


def pubspec_recipes(text: str) -> list[Recipe]:
    """pubspec.yaml: a dependency (or an override) from git (but a public forge's commit), a host other than pub.dev
    over https, or a folder outside the project holds every `dart` and `flutter` command."""
    data = yaml.safe_load(text)
    if not isinstance(data, dict):
        return []
    why: list[str] = []
    for table in ("dependencies", "dev_dependencies", "dependency_overrides"):
        deps = data.get(table)
        if deps is None:
            continue
        if not isinstance(deps, dict):
            why.append(f"pubspec.yaml's `{table}` is in a shape not read")
            continue
        why += [
            f"pubspec.yaml's `{table}` fetches `{str(name)[:30]}` from elsewhere than pub.dev"
            for name, spec in deps.items()
            if not _pub_admitted(spec)
        ]
    return [unread("dart", w) for w in why[:_MOST]]


_SWIFT_PACKAGE = re2.compile(r"\.package\s*\(([^)]*)\)")
_SWIFT_URL = re2.compile(r"""\burl\s*:\s*"([^"]*)\"""")
_SWIFT_PATH = re2.compile(r"""\bpath\s*:\s*"([^"]*)\"""")
_SWIFT_FORGE = re2.compile(r"^https://(?:github\.com|gitlab\.com)/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


def swift_package_recipes(text: str) -> list[Recipe]:
    """Package.swift: a `.package(url:)` other than a repository of GitHub or GitLab over https, or a `path:` outside
    the project, holds every `swift` command (it builds and runs what it fetches, its plugins too)."""
    why: list[str] = []
    for match in _SWIFT_PACKAGE.finditer(text):
        args = match.group(1)
        url, path = _SWIFT_URL.search(args), _SWIFT_PATH.search(args)
        if url is not None and _SWIFT_FORGE.match(url.group(1)):
            continue
        if url is None and path is not None and inside_project(path.group(1).removeprefix("./")):
            continue
        why.append(f"Package.swift fetches a package from `{(url or path).group(1)[:40] if url or path else '?'}`")
    return [unread("swift", w) for w in why[:_MOST]]


_SBT_HTTP = re2.compile(r"""["']http://""")
_SBT_RESOLVER = re2.compile(r"\bResolver\s*\.\s*(?:url|ssh|sftp|file)\s*\(|\bwithAllowInsecureProtocol\b")


def sbt_recipes(text: str) -> list[Recipe]:
    """build.sbt and project/*.sbt: a resolver over plain http, or one by `Resolver.url(...)`, `ssh`, `sftp`, `file`
    or with insecure protocols allowed, holds every `sbt` command."""
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    why = []
    if _SBT_HTTP.search(code):
        why.append("the sbt build fetches over plain http")
    if (match := _SBT_RESOLVER.search(code)) is not None:
        why.append(f"the sbt build adds a resolver by `{match.group(0)[:30]}`")
    return [unread("sbt", w) for w in why]
