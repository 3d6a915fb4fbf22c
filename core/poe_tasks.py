"""Poe the Poet's tasks (`[tool.poe.tasks]` in pyproject.toml, or a `poe_tasks.toml`) as command lines.

`poe test` runs what its task says: a `cmd` or `shell` string is a command line, a `ref` or a dependency runs another
task (`poe other`), a sequence runs its items; a Python `script` or `expr`, a `switch`, a task's `envfile` or
`capture_stdout`, an executor or an interpreter this reader does not know, and any key it does not know, hold the
task, with the reason.
"""

from __future__ import annotations

import tomllib

from core.recipes import EVERY, Recipe, environment_lines, shell_command, unread

__all__ = ["poe_recipes", "poe_tasks_file_recipes"]

# The global keys that say how poe shows itself or which task type a bare string is, never what a task runs; `tasks`,
# `env`, the executor and the shell are read on their own.
_GLOBAL_KEYS = frozenset("tasks env executor shell_interpreter default_task_type default_array_type verbosity".split())
# A task's keys that describe it or take the arguments a lesson passes, never what it runs.
_TASK_KEYS = frozenset("help args ignore_fail verbosity use_exec".split())
_LINE_TYPES = ("cmd", "shell")
_EXECUTORS = frozenset({"auto", "poetry", "uv", "simple", "virtualenv"})
_MOST_LINES = 200


def poe_recipes(text: str) -> list[Recipe]:
    """pyproject.toml's `[tool.poe]`: its tasks' lines as `poe:NAME`, its `env` as lines of `poe:*`; a pyproject
    without it declares no poe task."""
    tool = tomllib.loads(text).get("tool", {})
    poe = tool.get("poe") if isinstance(tool, dict) else None
    return _poe(poe) if poe is not None else []


def poe_tasks_file_recipes(text: str) -> list[Recipe]:
    """A `poe_tasks.toml`: `[tool.poe]`'s keys at its top."""
    return _poe(tomllib.loads(text))


def _poe(poe: object) -> list[Recipe]:
    if not isinstance(poe, dict):
        return [unread("poe", "`[tool.poe]` is no table")]
    found = [unread("poe", f"`[tool.poe]` sets `{k}`, which changes what tasks run") for k in poe
             if k not in _GLOBAL_KEYS]  # fmt: skip
    found += [(f"poe:{EVERY}", line) for line in environment_lines(poe.get("env", {}), "`[tool.poe] env`")]
    executor = poe.get("executor", "auto")
    kind = executor.get("type", "auto") if isinstance(executor, dict) else executor
    if kind not in _EXECUTORS or (isinstance(executor, dict) and set(executor) - {"type"}):
        found.append(unread("poe", "its executor is not one poe ships run as it ships"))
    interpreter = poe.get("shell_interpreter", "posix")
    if not _shell(interpreter):
        found.append(unread("poe", f"its shell tasks run with `{str(interpreter)[:40]}`"))
    default = poe.get("default_task_type", "cmd")
    if default not in _LINE_TYPES:
        default = "unread"
    sequence = poe.get("default_array_type", "sequence") == "sequence"
    tasks = poe.get("tasks", {})
    if not isinstance(tasks, dict):
        return [*found, unread("poe", "`[tool.poe.tasks]` is no table")]
    for name, task in tasks.items():
        found += [(f"poe:{name}", line) for line in _task(str(name), task, default, sequence, 0)]
    return found


def _shell(interpreter: object) -> bool:
    """A shell poe runs `shell` tasks with whose lines the command judge reads (`posix`, `bash`)."""
    names = [interpreter] if isinstance(interpreter, str) else interpreter if isinstance(interpreter, list) else [None]
    return all(n == "posix" or (isinstance(n, str) and shell_command([n])) for n in names)


def _task(name: str, task: object, default: str, sequence: bool, depth: int) -> list[str]:
    """The lines task `name` runs, or one `unread` line saying why they cannot be read."""
    if depth > 4:
        return [_held(f"`{name}` nests tasks too deep")]
    if isinstance(task, str):
        return [task] if default in _LINE_TYPES else [_held(f"`{name}` is a `{default}` task")]
    if isinstance(task, list):
        return _sequence(name, task, "ref", depth) if sequence else [_held(f"`{name}` runs its steps in parallel")]
    if not isinstance(task, dict):
        return [_held(f"`{name}` is no task")]
    kinds = [k for k in task if k in (*_LINE_TYPES, "ref", "sequence", "script", "expr", "switch", "parallel")]
    if len(kinds) != 1:
        return [_held(f"`{name}` is no task poe's types describe")]
    kind, lines = kinds[0], []
    value = task[kind]
    if kind in _LINE_TYPES and isinstance(value, str):
        lines = [value] if kind == "cmd" else _shell_lines(value)
        if kind == "shell" and not _shell(task.get("interpreter", "posix")):
            lines.append(_held(f"`{name}` runs its lines with `{str(task.get('interpreter'))[:40]}`"))
    elif kind == "ref" and isinstance(value, str):
        lines = [f"poe {value}"]
    elif kind == "sequence" and isinstance(value, list):
        lines = _sequence(name, value, str(task.get("default_item_type", "ref")), depth)
    else:
        return [_held(f"`{name}` is a `{kind}` task, which runs Python or picks what it runs as it runs")]
    deps = task.get("deps", [])
    lines += [f"poe {d}" for d in deps if isinstance(d, str)] if isinstance(deps, list) else [_held("its `deps`")]
    lines += environment_lines(task.get("env", {}), f"`{name}`'s `env`")
    other = [k for k in task if k not in {kind, "deps", "env", "interpreter", "default_item_type", *_TASK_KEYS}]
    if other:
        lines.append(_held(f"`{name}` sets `{other[0]}`, which changes what it runs"))
    if len(lines) > _MOST_LINES:  # what is past them is not judged: held
        return [*lines[:_MOST_LINES], _held(f"`{name}` runs more than {_MOST_LINES} lines")]
    return lines


def _sequence(name: str, items: list[object], item_type: str, depth: int) -> list[str]:
    """A sequence's steps: a string is a task's name (`ref`, poe's default) or a line of its item type."""
    lines: list[str] = [_held(f"`{name}` runs more than {_MOST_LINES} steps")] if len(items) > _MOST_LINES else []
    for item in items[:_MOST_LINES]:
        if isinstance(item, str) and item_type == "ref":
            lines.append(f"poe {item}")
        elif isinstance(item, str) and item_type in _LINE_TYPES:
            lines += [item] if item_type == "cmd" else _shell_lines(item)
        else:
            lines += _task(name, item, item_type, True, depth + 1)
    return lines


def _shell_lines(script: str) -> list[str]:
    """A `shell` task's script, one line a command line."""
    return [line.strip() for line in script.splitlines() if line.strip() and not line.strip().startswith("#")]


def _held(why: str) -> str:
    return unread("", why)[1]
