"""What a Taskfile's tasks run (`task test`): their `cmds`, what they run first, and what the file sets for every task.

`core.recipes` says why a declared task is judged by its recipe. A Taskfile is YAML (read with `safe_load`, and walked
bounded: an alias makes a graph far larger than its text); a task's lines are its `cmds`, `preconditions` and `status`
(each runs as shell), a task it runs (`deps`, `{task: x}`) is a line `task x`, a Go template (`{{.X}}`) is the shell's
`$(X)`, a value known only when it runs; `env:` is read as the variables it sets. What is not read exactly holds: an
`includes`, a `dotenv`, a variable computed by a command (`sh:`), a `dir` outside the project, a shell option not
known to leave commands as they are.
"""

from __future__ import annotations

import yaml

from core.recipes import EVERY, FALLBACK, Recipe, default_recipes, environment_lines, templated, unread

__all__ = ["taskfile_recipes"]

_MOST_TASKS = 500  # a Taskfile declares no more tasks than this that we read
_MOST_LINES = 200  # nor a task more lines
# The file's keys that say how tasks report, when they count as up to date, or which version of the format it is.
_FILE_KEYS = frozenset("version output method silent run interval tasks env vars set shopt".split())
# A task's keys that describe it, say when it is up to date or whether it may run, never what it runs.
_TASK_KEYS = frozenset(
    "desc summary prompt aliases label sources generates method silent internal ignore_error interactive run watch"
    " platforms requires cmds cmd deps preconditions status env vars dir set shopt prefix".split()
)
# Shell options (Task runs its commands in a POSIX shell interpreter) that stop on an error, trace, or widen a glob.
_OPTIONS = frozenset("e errexit u nounset x xtrace pipefail globstar nullglob failglob".split())


def _shown(value: object) -> str:
    """A value as a reason shows it: a string's start, else its kind (an alias graph's text is far too large)."""
    return value[:40] if isinstance(value, str) else f"a {type(value).__name__}"


def _lines(name: str, values: object, what: str) -> list[Recipe]:
    """A task's steps as lines: a command (a string, `{cmd: ...}`, `{defer: ...}`), a task it runs (`{task: x}`),
    a precondition's `{sh: ...}`; a step read no other way (`for:` loops) holds the task."""
    key = f"task:{name}"
    steps = values if isinstance(values, list) else [values] if values is not None else []
    found: list[Recipe] = []
    if len(steps) > _MOST_LINES:
        found.append((key, unread("", f"{what}s past {_MOST_LINES}")[1]))
    for step in steps[:_MOST_LINES]:
        if isinstance(step, dict) and "defer" in step:
            step = step["defer"]
        if isinstance(step, str):
            found.append((key, templated(step)))
        elif isinstance(step, dict) and isinstance(step.get("task"), str) and "for" not in step:
            found.append((key, f"task {templated(step['task'])}"))
            if "vars" in step:
                found.append((key, unread("", f"`{name}` gives the task it runs variables")[1]))
        elif (
            isinstance(step, dict) and "for" not in step and isinstance(command := step.get("cmd", step.get("sh")), str)
        ):
            found.append((key, templated(command)))
            found += _options(name, step)
        else:
            found.append((key, unread("", f"`{name}` has {what} the reader does not read: {_shown(step)}")[1]))
    return found


def _options(name: str, entry: dict[object, object]) -> list[Recipe]:
    """The shell options (`set:`, `shopt:`) of the file (`name` "*") or of a task: those not known to leave commands
    as they are hold what they reach."""
    found: list[Recipe] = []
    for field in ("set", "shopt"):
        options = entry.get(field)
        options = options if isinstance(options, list) else [] if options is None else [options]
        unknown = [o for o in options if not (isinstance(o, str) and o in _OPTIONS)]
        if unknown:
            found.append((f"task:{name}", unread("", f"`{field}: {_shown(unknown[0])}` changes how lines run")[1]))
    return found


def _task(name: str, task: object) -> list[Recipe]:
    key = f"task:{name}"
    if isinstance(task, str | list):
        task = {"cmds": task}
    if not isinstance(task, dict):
        return [(key, unread("", f"`{name}` is no task the reader reads")[1])]
    found = _lines(name, task.get("cmds"), "a command") + _lines(name, task.get("cmd"), "a command")
    deps = task.get("deps")
    deps = deps if isinstance(deps, list) else [] if deps is None else [deps]
    if len(deps) > _MOST_LINES:
        found.append((key, unread("", f"dependencies past {_MOST_LINES}")[1]))
    for dep in deps[:_MOST_LINES]:
        found += [(key, f"task {templated(dep)}")] if isinstance(dep, str) else _lines(name, dep, "a dependency")
    found += _lines(name, task.get("preconditions"), "a precondition")
    found += _lines(name, task.get("status"), "a status check")
    found += [(key, line) for line in environment_lines(task.get("env", {}), f"`{name}`'s `env`")]
    found += _options(name, task)
    if isinstance(task.get("aliases"), list):
        found += [(f"task:{alias}", f"task {name}") for alias in task["aliases"] if isinstance(alias, str)]
    variables = task.get("vars")
    if isinstance(variables, dict) and any(isinstance(v, dict) for v in variables.values()):
        found.append((key, unread("", f"`{name}` computes a variable with a command (`sh:`)")[1]))
    directory = task.get("dir")
    if directory is not None and (
        not isinstance(directory, str) or directory.startswith(("/", "~")) or ".." in directory
    ):
        found.append((key, unread("", f"`{name}` runs in `{_shown(directory)}`")[1]))
    unknown = [k for k in task if k not in _TASK_KEYS]
    if unknown:
        found.append((key, unread("", f"`{name}` sets `{_shown(unknown[0])}`, which changes what it runs")[1]))
    return found


def taskfile_recipes(text: str) -> list[Recipe]:
    """A Taskfile's tasks with their lines (`task:NAME`, `task:` for `default`), what every task runs as `task:*`
    (the file's `env:` as `NAME=value true`, the rest held), and a task named with a wildcard (`start:*`) as what a
    task with no recipe of its own may run."""
    data = yaml.safe_load(text)
    if not isinstance(data, dict):
        return []
    found: list[Recipe] = []
    for key in data:
        if key not in _FILE_KEYS:
            found.append(unread("task", f"the Taskfile declares `{_shown(key)}` (another file, a .env, a setting)"))
    found += [("task:" + EVERY, line) for line in environment_lines(data.get("env", {}), "its `env:`")]
    variables = data.get("vars")
    if isinstance(variables, dict) and any(isinstance(v, dict) for v in variables.values()):
        found.append(unread("task", "a Taskfile variable is computed by a command (`sh:`)"))
    found += [("task:" + EVERY, line) for _, line in _options(EVERY, data)]
    tasks = data.get("tasks")
    if not isinstance(tasks, dict):
        return found
    if len(tasks) > _MOST_TASKS:
        found.append(unread("task", f"the Taskfile declares more than {_MOST_TASKS} tasks"))
    for name, task in list(tasks.items())[:_MOST_TASKS]:
        if not isinstance(name, str):
            continue
        if "*" in name:
            found.append(("task:" + FALLBACK, unread("", f"a task named with a wildcard (`{name[:30]}`)")[1]))
            continue
        found += _task(name, task)
    return found + default_recipes("task", "default" if "default" in tasks else None, found)
