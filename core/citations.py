"""Citations: what a lesson rests on in the repository, read from its typed lesson, and whether that still holds.

A command lesson names things a repository has: the folder it runs in (`assets`), a file it runs (`assets/build.js`),
a script or target the project declares (`pnpm dev`: the `dev` script of package.json; `make test`: the Makefile's
`test` target; `just lint`), or a program of the project's own (`./gradlew`, `bin/dev`). When one of them is gone the
lesson no longer holds: `stale_reason` says which, and the entry is not delivered until it is back. A program of the
machine (`uv`, `pnpm`) is no citation: the machine that runs the nightly need not be the one the agent works on.
Pure: lessons and what the repository declares in, citations and reasons out.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict

from core.lessons import AnyLesson, Command, CommandFact, Correction, HiddenFailure, NothingSelected
from core.runs import parse

__all__ = ["Citation", "citations_from_words", "citations_of", "stale_reason"]

# Package managers that run a package.json script by name (`pnpm dev`), and their own subcommands (no script).
_SCRIPT_RUNNERS = frozenset({"npm", "pnpm", "yarn", "bun"})
_OWN = frozenset(
    "add audit bin cache ci config create dedupe dlx exec help i info init install link list login logout ls outdated"
    " pack prune publish rebuild remove rm root search set store uninstall unlink up update upgrade version view why"
    " x whoami".split()
)
_NPM_SCRIPTS = frozenset({"test", "start", "stop", "restart"})  # what `npm X` runs as a script without `run`
_FILES = (".js", ".mjs", ".cjs", ".ts", ".py", ".sh", ".rb", ".pl", ".php")
# Manifests whose names a script citation is checked against.
Manifest = Literal["package.json", "Makefile", "justfile"]


class Citation(BaseModel):
    """One thing a lesson rests on: a `file` or `folder` (a path inside the project), a `script` a `manifest`
    declares, or a `program` of the project's own (a path: `./gradlew`)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["file", "folder", "script", "program"]
    value: str
    manifest: Manifest | None = None
    folder: str | None = None  # where the manifest or the relative path is, inside the project

    def shown(self) -> str:
        """How `why` and `show --sources` write it."""
        where = f"{self.folder}/" if self.folder else ""
        if self.kind == "script":
            return f"{self.manifest} script `{self.value}`" + (f" (in `{where}`)" if where else "")
        return f"{self.kind} `{posixpath.join(self.folder, self.value) if self.folder else self.value}`"


def _inside(path: str) -> bool:
    return bool(path) and not path.startswith(("/", "~", "$")) and ".." not in path.split("/") and "\n" not in path


def _script(words: tuple[str, ...]) -> tuple[Manifest, str] | None:
    program = posixpath.basename(words[0])
    rest = [w for w in words[1:] if not w.startswith("-")]
    if program in _SCRIPT_RUNNERS and rest:
        if rest[0] == "run" and len(rest) > 1:
            return "package.json", rest[1]
        if program == "npm":
            return ("package.json", rest[0]) if rest[0] in _NPM_SCRIPTS else None
        return ("package.json", rest[0]) if rest[0] not in _OWN else None
    if program in ("make", "just") and rest and "=" not in rest[0]:
        return ("Makefile" if program == "make" else "justfile"), rest[0]
    return None


def _of_command(command: Command) -> list[Citation]:
    folder = command.folder if command.folder and _inside(command.folder) else None
    found: list[Citation] = [Citation(kind="folder", value=folder)] if folder else []
    first = command.words[0]
    if "/" in first and _inside(first.removeprefix("./")):
        found.append(Citation(kind="program", value=first.removeprefix("./"), folder=folder))
    script = _script(command.words)
    if script is not None:
        found.append(Citation(kind="script", value=script[1], manifest=script[0], folder=folder))
    for word in command.words[1:]:
        if word.endswith(_FILES) and not word.startswith("-") and _inside(word.removeprefix("./")):
            found.append(Citation(kind="file", value=word.removeprefix("./"), folder=folder))
    return found


def citations_of(lesson: AnyLesson) -> list[Citation]:
    """What `lesson` rests on in the repository: the command that works (a correction's failing command is what
    the lesson warns about, not what it rests on)."""
    if isinstance(lesson, CommandFact | NothingSelected | HiddenFailure):
        commands = [lesson.command]
    elif isinstance(lesson, Correction) and lesson.worked is not None:
        commands = [lesson.worked]
    else:
        commands = []
    found: list[Citation] = []
    for command in commands:
        for citation in _of_command(command):
            if citation not in found:
                found.append(citation)
    return found


def citations_from_words(values: list[str]) -> list[Citation]:
    """The citations a model's operation names (`citations`: paths and commands as the session wrote them): a
    command (`npm run build`, `make test`) cites what it runs, a path inside the project (`assets/build.js`,
    `docs/`) cites that file or folder; anything else (an absolute path, a URL, a word) cites nothing."""
    found: list[Citation] = []
    for value in values:
        words = tuple(value.split())
        if not words or len(value) > 300 or "\n" in value:
            continue
        command = parse(value) if len(words) > 1 else None  # as the shell reads it: `cd assets && node build.js`
        cited = _of_command(Command(words=command.words, folder=command.folder)) if command else []
        path_like = "/" in words[0] or "." in words[0].lstrip(".")  # a bare word (`pytest`) is no path
        if not cited and len(words) == 1 and path_like and _inside(words[0].removeprefix("./")) and ":" not in words[0]:
            path = words[0].removeprefix("./")
            kind: Literal["file", "folder"] = "folder" if path.endswith("/") else "file"
            cited = [Citation(kind=kind, value=path.rstrip("/"))]
        found += [c for c in cited if c not in found]
    return found


def stale_reason(
    citations: list[Citation], exists: Callable[[str], bool], scripts: Mapping[tuple[str | None, str], set[str] | None]
) -> str | None:
    """Why the citations no longer hold, or None: `exists(path)` says whether a path inside the project exists;
    `scripts[(folder, manifest)]` what that manifest declares (None: there is no such manifest)."""
    for c in citations:
        path = posixpath.join(c.folder, c.value) if c.folder and c.kind != "folder" else c.value
        if c.kind in ("file", "folder", "program") and not exists(path):
            return f"{c.kind} `{path}` no longer exists"
        if c.kind == "script" and c.manifest is not None:
            declared = scripts.get((c.folder, c.manifest))
            where = posixpath.join(c.folder, c.manifest) if c.folder else c.manifest
            if declared is None:
                return f"`{where}` no longer exists (it declared `{c.value}`)"
            if c.value not in declared:
                return f"`{where}` no longer declares `{c.value}`"
    return None
