"""What a project's declared tasks run: their recipes' command lines.

A task's name is all a lesson shows, and a cloned stranger's project names `clean` a recipe that runs `rm -rf ~`;
so a task the project declares is judged by what it runs. Read here, from the text of its Makefile, justfile,
package.json scripts and mise tasks: each task's command lines, as (task, line) pairs, the task named by its runner
(`make:clean`, `just:check`, `npm:test` for every package manager's scripts, `mise:lint`; `make:` and `just:` for
the default), a task it depends on as a line that runs it (`make dep`). What cannot be read before it runs (a make
function, `$(shell ...)`; a just interpolation) is kept as the shell's `$(...)`, which the command judge holds.
"""

from __future__ import annotations

import json
import tomllib

import re2

from core.patterns import Match
from core.program_tasks import TASK_NAME

__all__ = ["Recipe", "justfile_recipes", "makefile_recipes", "mise_recipes", "package_json_recipes"]

# (task, one command line it runs)
Recipe = tuple[str, str]

_MAKE_ASSIGN = re2.compile(r"^(?:override\s+|export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*(?:::?=|\?=|\+=|!=|=)\s*(.*)$")
_MAKE_VARIABLE = re2.compile(r"\$[({]([A-Za-z_][A-Za-z0-9_.-]*)[)}]")
# A recipe's first line: its name, its parameters, a colon that is no `:=` (an assignment), what it depends on.
_JUST_RECIPE = re2.compile(r"^@?([A-Za-z_][A-Za-z0-9_-]*)(?:\s+[^:=]*?)?\s*:(?:([^=].*)|)$")
_MOST_LINES = 200  # a task runs no more lines than this that we read


def _joined(text: str) -> list[str]:
    """`text`'s lines, a line ending in a backslash joined with the next (make's and the shell's continuation)."""
    lines: list[str] = []
    pending = ""
    for line in text.splitlines():
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        lines.append(pending + line)
        pending = ""
    if pending:
        lines.append(pending)
    return lines


def _expanded(line: str, variables: dict[str, str], target: str, depth: int = 0) -> str:
    """`line` with the file's own variables set (`$(PYTHON)`) and the others empty, as make reads an unset one,
    `$(MAKE)` as `make`, `$@` as the target and `$$` as `$`; a function (`$(shell ...)`, `$(wildcard ...)`) is left
    for the judge, which holds what make or the shell computes when it runs."""

    def value(match: Match) -> str:
        name = match.group(1)
        if name in ("MAKE", "MAKE_COMMAND"):
            return "make"
        if name in variables and depth < 5:
            return _expanded(variables[name], variables, target, depth + 1)
        return "" if name not in variables else match.group(0) or ""  # unset, as make reads it: empty

    line = _MAKE_VARIABLE.sub(value, line)
    return line.replace("$@", target).replace("$$", "$")


def makefile_recipes(text: str) -> list[Recipe]:
    """A Makefile's targets with their recipe lines (the `@`, `-` and `+` that only say how make runs a line taken
    off), a line `make DEP` for each target a target depends on, and the default goal as the task "" (`make`)."""
    variables: dict[str, str] = {}
    raw: dict[str, list[str]] = {}
    deps: dict[str, list[str]] = {}
    current: list[str] = []
    for line in _joined(text):
        if line.startswith("\t"):
            for target in current:
                raw.setdefault(target, []).append(line[1:])
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        colon, equals = stripped.find(":"), stripped.find("=")
        # An assignment has its `=` first, or right after its colons (`CC := gcc`, `X ?= a:b`); a rule its colon.
        if equals >= 0 and (colon < 0 or equals < colon or stripped[colon:equals].strip(":") == ""):
            if (assign := _MAKE_ASSIGN.match(stripped)) is not None:
                variables[assign.group(1)] = assign.group(2).strip()
            current = []
            continue
        if colon > 0 and not stripped.startswith(("define ", "ifeq", "ifneq", "ifdef", "ifndef", "include ")):
            targets, _, rest = stripped.partition(":")
            rest = rest.lstrip(":")
            prerequisites, _, inline = rest.partition(";")
            current = [t for t in targets.split() if TASK_NAME.match(t)]
            for target in current:
                deps.setdefault(target, []).extend(prerequisites.split("|")[0].split())
                raw.setdefault(target, [])
                if inline.strip():
                    raw[target].append(inline)
            continue
        current = []
    found: list[Recipe] = []
    for target, lines in raw.items():
        found += [(f"make:{target}", f"make {dep}") for dep in deps.get(target, []) if dep in raw]
        for line in lines[:_MOST_LINES]:
            command = _expanded(line.strip(), variables, target).lstrip("@-+ \t")
            if command:
                found.append((f"make:{target}", command))
    return found + _default("make", next(iter(raw), None), found)


def _default(runner: str, first: str | None, found: list[Recipe]) -> list[Recipe]:
    """The first task's lines again as the runner's default (`make`, `just` alone run it)."""
    return [(f"{runner}:", line) for task, line in found if task == f"{runner}:{first}"] if first else []


def justfile_recipes(text: str) -> list[Recipe]:
    """A justfile's recipes with their lines (indented under the recipe's name), a line `just DEP` for each recipe it
    depends on, and the first recipe as the task "" (`just`); an interpolation (`{{name}}`) is read as the shell's
    `$(name)`, a value known only when it runs."""
    found: list[Recipe] = []
    current: str | None = None
    first: str | None = None
    for line in _joined(text):
        if line[:1] in (" ", "\t") and current is not None:
            command = line.strip().lstrip("@-")
            if command and not command.startswith("#"):
                found.append((f"just:{current}", command.replace("{{", "$(").replace("}}", ")")))
            continue
        current = None
        recipe = _JUST_RECIPE.match(line)
        if recipe is not None and TASK_NAME.match(recipe.group(1)):
            current = recipe.group(1)
            first = first or current
            deps = (recipe.group(2) or "").split()
            found += [(f"just:{current}", f"just {dep}") for dep in deps if TASK_NAME.match(dep)]
    return found + _default("just", first, found)


def package_json_recipes(text: str) -> list[Recipe]:
    """package.json's scripts, each its one line."""
    data = json.loads(text)
    scripts = data.get("scripts") if isinstance(data, dict) else None
    if not isinstance(scripts, dict):
        return []
    return [(f"npm:{name}", line) for name, line in scripts.items() if isinstance(name, str) and isinstance(line, str)]


def mise_recipes(text: str) -> list[Recipe]:
    """mise.toml's tasks: their `run` lines and a line `mise run DEP` for each task in `depends`."""
    tasks = tomllib.loads(text).get("tasks", {})
    found: list[Recipe] = []
    if not isinstance(tasks, dict):
        return found
    for name, task in tasks.items():
        if not isinstance(name, str):
            continue
        if isinstance(task, str):
            task = {"run": task}
        if not isinstance(task, dict):
            continue
        run = task.get("run")
        lines = [run] if isinstance(run, str) else run if isinstance(run, list) else []
        found += [(f"mise:{name}", line) for line in lines if isinstance(line, str)]
        depends = task.get("depends")
        found += [(f"mise:{name}", f"mise run {dep}") for dep in depends or [] if isinstance(dep, str)]
        if not lines and not depends:
            found.append((f"mise:{name}", "$(mise task file)"))  # a task run from a file of its own: not read here
    return found
