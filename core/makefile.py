"""What a Makefile's targets run: their recipe lines, read as GNU make reads them.

`core.recipes` says why a declared task is judged by its recipe. A Makefile says more than its recipes: an
`include`, a `SHELL`, a variable that runs a program when make reads the file change what every target runs; what
cannot be read before make runs is held (`core.recipes.unread`).
"""

from __future__ import annotations

import re2

from core.patterns import Match
from core.program_tasks import TASK_NAME
from core.recipes import Recipe, default_recipes, joined_lines

__all__ = ["makefile_recipes"]

_MAKE_ASSIGN = re2.compile(r"^(?:override\s+|export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*(?:::?=|\?=|\+=|!=|=)\s*(.*)$")
_MAKE_VARIABLE = re2.compile(r"\$[({]([A-Za-z_][A-Za-z0-9_.-]*)[)}]")
_MOST_LINES = 200  # a task runs no more lines than this that we read


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
    for line in joined_lines(text):
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
    return found + default_recipes("make", next(iter(raw), None), found)
