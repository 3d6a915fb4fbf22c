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

from core.program_tasks import TASK_NAME

__all__ = [
    "EVERY",
    "FALLBACK",
    "Recipe",
    "default_recipes",
    "joined_lines",
    "justfile_recipes",
    "mise_recipes",
    "package_json_recipes",
    "unread",
]

# (task, one command line it runs)
Recipe = tuple[str, str]
# A task's name for lines every task of its runner runs (`make:*`: what an `include` or a `SHELL` does to every
# target), and for lines a task with no recipe of its own runs (`make:%`: a pattern rule, `.DEFAULT`).
EVERY = "*"
FALLBACK = "%"

# A recipe's first line: its name, its parameters, a colon that is no `:=` (an assignment), what it depends on.
_JUST_RECIPE = re2.compile(r"^@?([A-Za-z_][A-Za-z0-9_-]*)(?:\s+[^:=]*?)?\s*:(?:([^=].*)|)$")


def joined_lines(text: str) -> list[str]:
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


def unread(runner: str, why: str) -> Recipe:
    """A line every task of `runner` runs, saying what in its file cannot be read before it runs (`include x.mk`):
    the judge holds every such task. Written as the shell's `$(...)`, which the command judge holds anyway."""
    return (f"{runner}:{EVERY}", f"$(unread: {why})")


def default_recipes(runner: str, first: str | None, found: list[Recipe]) -> list[Recipe]:
    """The first task's lines again as the runner's default (`make`, `just` alone run it)."""
    return [(f"{runner}:", line) for task, line in found if task == f"{runner}:{first}"] if first else []


def justfile_recipes(text: str) -> list[Recipe]:
    """A justfile's recipes with their lines (indented under the recipe's name), a line `just DEP` for each recipe it
    depends on, and the first recipe as the task "" (`just`); an interpolation (`{{name}}`) is read as the shell's
    `$(name)`, a value known only when it runs."""
    found: list[Recipe] = []
    current: str | None = None
    first: str | None = None
    for line in joined_lines(text):
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
    return found + default_recipes("just", first, found)


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
