"""deno.json's `tasks` and composer.json's `scripts` as command lines.

`deno task test` runs its task's string with deno's own shell (a POSIX-like command line) after its `dependencies`;
`composer test` runs each of its script's strings: a command line, `@other` (another script), `@composer ...`, while
`@php`, `@putenv` and a PHP callback (`Vendor\\Class::method`) run PHP, which no reader here reads, so they hold the
script. An install runs the scripts composer's events name (`post-install-cmd`, `post-autoload-dump`).
"""

from __future__ import annotations

import json

import re2

from core.recipes import Recipe, unread

__all__ = ["composer_recipes", "deno_recipes", "jsonc"]

_MOST_LINES = 200
_CALLBACK = re2.compile(r"^\\?[A-Za-z_][A-Za-z0-9_]*(?:\\+[A-Za-z_][A-Za-z0-9_]*)*::[A-Za-z_][A-Za-z0-9_]*$")
_SCRIPT_REF = re2.compile(r"^@([A-Za-z0-9][A-Za-z0-9:_.-]*)(?:\s+(.*))?$")


def jsonc(text: str) -> object:
    """JSON with comments (`//`, `/* */`) and trailing commas, as deno.jsonc allows, parsed."""
    out: list[str] = []
    i, n, in_string = 0, len(text), False
    while i < n:
        char = text[i]
        if in_string:
            out.append(char)
            if char == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
            out.append(char)
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise ValueError("an unclosed comment")
            i = end + 2
            continue
        else:
            out.append(char)
        i += 1
    return json.loads(_TRAILING_COMMA.sub(r"\1", "".join(out)))


_TRAILING_COMMA = re2.compile(r",(\s*[\]}])")


def deno_recipes(text: str) -> list[Recipe]:
    """deno.json's (or deno.jsonc's) tasks: a string, or `{command, dependencies}`, each `deno:NAME`."""
    data = jsonc(text)
    tasks = data.get("tasks") if isinstance(data, dict) else None
    if tasks is None:
        return []
    if not isinstance(tasks, dict):
        return [unread("deno", "`tasks` is no table")]
    found: list[Recipe] = []
    for name, task in tasks.items():
        key = f"deno:{name}"
        if isinstance(task, str):
            found.append((key, task))
            continue
        if not isinstance(task, dict):
            found.append((key, _held(f"`{name}` is no task")))
            continue
        command, deps = task.get("command"), task.get("dependencies", [])
        if command is not None:
            found.append((key, command) if isinstance(command, str) else (key, _held(f"`{name}` runs no line")))
        if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
            found.append((key, _held(f"`{name}`'s `dependencies` are no list of tasks")))
        else:
            found += [(key, f"deno task {dep}") for dep in deps[:_MOST_LINES]]
            if len(deps) > _MOST_LINES:
                found.append((key, _held(f"`{name}` depends on more than {_MOST_LINES} tasks")))
        if other := [k for k in task if k not in ("command", "dependencies", "description")]:
            found.append((key, _held(f"`{name}` sets `{other[0]}`, which changes what it runs")))
    return found


def composer_recipes(text: str) -> list[Recipe]:
    """composer.json's scripts, each `composer:NAME`: a string or a list of them, each a command line, another
    script (`@lint` as `composer run-script lint`), composer itself, or held when it runs PHP."""
    data = json.loads(text)
    found = _composer_sources(data) if isinstance(data, dict) else []
    scripts = data.get("scripts") if isinstance(data, dict) else None
    if scripts is None:
        return found
    if not isinstance(scripts, dict):
        return [*found, unread("composer", "`scripts` is no table")]
    for name, script in scripts.items():
        steps = [script] if isinstance(script, str) else script if isinstance(script, list) else [None]
        found += [(f"composer:{name}", _composer_line(str(name), step)) for step in steps[:_MOST_LINES]]
        if len(steps) > _MOST_LINES:
            found.append((f"composer:{name}", _held(f"`{name}` runs more than {_MOST_LINES} steps")))
    return found


# composer.json's `config` keys that say where and how it lays out what it installs; any other (`secure-http`,
# `disable-tls`, `cafile`, `audit`, a token) changes what an install fetches or checks.
_COMPOSER_CONFIG = frozenset(
    "sort-packages optimize-autoloader preferred-install process-timeout allow-plugins platform platform-check"
    " classmap-authoritative apcu-autoloader bin-dir vendor-dir discard-changes lock notify-on-install".split()
)
# The events an install, an update or a `require` fires first: where what they fetch is judged.
_FETCHES = ("pre-install-cmd", "pre-update-cmd")


def _composer_sources(data: dict[object, object]) -> list[Recipe]:
    """composer.json's `repositories` (other than switching packagist off) and `config` keys not known to only lay
    out what is installed: each holds what installs and updates."""
    why = []
    repositories = data.get("repositories")
    if repositories not in (None, [], {}, [{"packagist.org": False}], {"packagist.org": False}):
        why.append("fetches packages from the `repositories` it names")
    config = data.get("config")
    if isinstance(config, dict):
        why += [f"sets `config.{str(k)[:30]}`" for k in config if k not in _COMPOSER_CONFIG][:4]
    elif config is not None:
        why.append("sets a `config` that is no table")
    return [(f"composer:{event}", _held(f"composer.json {w}")) for w in why for event in _FETCHES]


def _composer_line(name: str, step: object) -> str:
    if not isinstance(step, str):
        return _held(f"`{name}` runs a step that is no command line")
    step = step.strip()
    if _CALLBACK.match(step):
        return _held(f"`{name}` calls PHP's `{step[:40]}`")
    ref = _SCRIPT_REF.match(step)
    if ref is not None:
        what, rest = ref.group(1), ref.group(2) or ""
        if what == "composer":
            return f"composer {rest}".strip()
        if what in ("php", "putenv", "additional_args"):
            return _held(f"`{name}` runs `@{what}`, which runs PHP or sets what it runs")
        return f"composer run-script {what} {rest}".strip()
    if step.startswith("@"):
        return _held(f"`{name}` runs `{step[:40]}`")
    return step


def _held(why: str) -> str:
    return unread("", why)[1]
