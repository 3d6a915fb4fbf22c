"""What a justfile's recipes run: their lines, and what the file says beyond them that changes what every recipe runs.

`core.recipes` says why a declared task is judged by its recipe. A justfile says more than its recipes: a setting
(`set shell`, `set dotenv-load`, `set export`), an `import` or a `mod`, a backtick in an assignment (run when just reads
the file), an exported variable, a recipe that is a script in another language. Read here what is read exactly (an
alias as the task it runs, an exported plain value as the variable it sets, a `#!/bin/sh` recipe as shell), admit the
settings known not to change what runs, and hold the rest (`core.recipes.unread`): a line the reader does not know
holds every task.
"""

from __future__ import annotations

import shlex

import re2

from core.recipes import EVERY, FALLBACK, Recipe, default_recipes, joined_lines, shell_command, shell_options, unread

__all__ = ["justfile_recipes"]

# Settings that change how just shows, checks or echoes recipes, or which of two same-named recipes or variables wins
# (the reader reads both), never what a recipe line runs: just's settings table (just 1.57).
_ADMITTED_SETTINGS = frozenset(
    "allow-duplicate-recipes allow-duplicate-variables ignore-comments positional-arguments quiet no-exit-message"
    " unstable lazy minimum-version no-cd".split()
)
# A recipe's attributes that choose when it shows or runs (its platform, a confirmation), never what its lines run.
_ADMITTED_ATTRIBUTES = frozenset(
    "private no-exit-message exit-message confirm doc group linux macos unix windows openbsd freebsd netbsd dragonfly"
    " android positional-arguments no-quiet parallel default metadata arg no-cd extension".split()
)
_SET = re2.compile(r"^set\s+([A-Za-z][A-Za-z0-9_-]*)\s*(?::=\s*(.*))?$")
_ALIAS = re2.compile(r"^alias\s+([A-Za-z_][A-Za-z0-9_-]*)\s*:=\s*([A-Za-z_][A-Za-z0-9_-]*)\s*(?:#.*)?$")
_ASSIGN = re2.compile(r"^(export\s+)?([A-Za-z_][A-Za-z0-9_-]*)\s*:=\s*(.*)$")
_UNEXPORT = re2.compile(r"^unexport\s+[A-Za-z_][A-Za-z0-9_-]*\s*$")
_INCLUDES = re2.compile(r"^(?:import|mod)\??\s")
# A recipe header's name (`@` before it quiets the recipe): read with string methods, not a pattern, as a file of
# many short recipes is mostly headers and a pattern's match costs several times more per line.
_NAME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_0123456789-"
_ATTRIBUTE = re2.compile(r"(?:^\[|,)\s*([a-z][a-z0-9-]*)\s*(?:\(([^)]*)\))?")
_STRING = re2.compile(r"^(?:\"([^\"\\`]*)\"|'([^'`]*)')\s*(?:#.*)?$")
_QUOTED = re2.compile(r"\"([^\"]*)\"|'([^']*)'")
_SHEBANG = re2.compile(r"^#!\s*(\S+)(.*)$")


def _shebang_shell(line: str) -> bool:
    match = _SHEBANG.match(line)
    return match is not None and shell_command([match.group(1), *match.group(2).split()])


def _setting(name: str, value: str | None) -> str | None:
    """Why a `set NAME := value` changes what every recipe runs, or None for one that does not."""
    if name in _ADMITTED_SETTINGS or (value is not None and value.strip() == "false"):
        return None  # a setting known to change nothing that runs, or one switched off (just's default)
    if name == "shell" and value is not None and shell_command([a or b for a, b in _QUOTED.findall(value)]):
        return None
    if name == "script-interpreter":
        return None  # it says how a `[script]` recipe runs, judged with that recipe
    if name.startswith("dotenv"):
        return f"`set {name}` loads a .env file into every recipe"
    if name == "export":
        return None  # every assignment is then exported: each is read as the variable it sets
    return f"`set {name}` changes how every recipe runs"


def _exported(name: str, value: str) -> str | None:
    """A line that sets the variable `name` as its exported value does (judged by the variables the command judge
    admits), or None when the value is no plain string (a concatenation, a function, `env('X')`)."""
    literal = _STRING.match(value.strip())
    if literal is None:
        return None
    text = literal.group(1) if literal.group(1) is not None else literal.group(2)
    return f"{name}={shlex.quote(text)} true"


# What a header's dependencies may hold besides letters and digits when they are only names between spaces and tabs.
_PLAIN_MARKS = str.maketrans("", "", "_-: \t")
# What opens a quote, a parenthesis or a comment in a header: before its colon, such a header is read char by char.
_OPENERS = str.maketrans("", "", "\"'`()#")


def _header(line: str) -> tuple[str, str, str] | None:
    """A recipe header's name (`@`, which quiets the recipe, dropped), parameters and what follows its colon
    (`a b="x": dep (other "y")`), or None for a line that starts with no name or has no colon outside quotes and
    parentheses that is no `:=`."""
    start = 1 if line[:1] == "@" else 0
    rest = line[start:].lstrip(_NAME_CHARS)  # the longest run of a name's characters, as a greedy pattern takes
    name = line[start : len(line) - len(rest)]
    if name[:1] <= "9":
        return None  # no name, or one starting with a digit or `-` (below `9` in code order, letters and `_` above)
    params, colon, after = rest.partition(":")
    if colon and after[:1] != "=" and params.translate(_OPENERS) == params:
        return name, params, after  # no quote, parenthesis or comment before its first colon, no `:=`
    parts = _split_header(rest)
    return None if parts is None else (name, *parts)


def _split_header(rest: str) -> tuple[str, str] | None:
    """What follows a recipe's name split at its colon: its parameters and what follows the colon, or None."""
    quote, depth = "", 0
    for i, char in enumerate(rest):
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'`":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "#" and depth == 0:
            return None
        elif char == ":" and depth == 0 and rest[i + 1 : i + 2] != "=":
            return rest[:i], rest[i + 1 :]
    return None


def _dependencies(text: str) -> list[str]:
    """The recipes a header runs before and after (`dep`, `(dep "arg")`, `&& after`), by name."""
    if text.replace(" ", "").isalnum():
        return text.split()  # names of letters and digits between spaces: the loop below reads them as they are
    letters = text.translate(_PLAIN_MARKS)
    if not letters or letters.isalnum():
        return text.split()  # names between spaces and tabs only (no quote, parenthesis, `&&` or comment)
    names: list[str] = []
    quote, depth, word, at_open = "", 0, "", False
    for char in text + " ":
        if quote:
            quote = "" if char == quote else quote
            continue
        if char in "\"'`":
            quote = char
        elif char == "#" and depth == 0:
            break
        elif char.isalnum() or char in "_-:":
            word += char
            continue
        if word and (depth == 0 or at_open):
            names.append(word)
        at_open = False
        word = ""
        if char == "(":
            depth, at_open = depth + 1, True
        elif char == ")":
            depth -= 1
    return [n for n in names if n != "&&"]


def justfile_recipes(text: str) -> list[Recipe]:
    """A justfile's recipes with their lines (indented under the recipe's name), a line `just DEP` for each recipe it
    runs before or after, an alias as a line `just TARGET`, and the first recipe (or the `[default]` one) as the task
    "" (`just`); an interpolation (`{{name}}`) is read as the shell's `$(name)`, a value known only when it runs.
    What changes every recipe is a line of `just:*`: an exported plain value as `NAME=value true`, the rest held."""
    found: list[Recipe] = []
    variables: list[tuple[bool, str, str]] = []  # (exported, name, value)
    scripts: dict[str, str | None] = {}  # `[script]` recipes, by name: their interpreter, None for just's default
    interpreter_is_shell, export_all = True, False
    current: str | None = None
    reading = False  # the current recipe's lines are shell
    task = ""  # the current recipe's task (`just:NAME`)
    body = False  # the current recipe has a line so far
    first: str | None = None
    default: str | None = None
    pending: list[tuple[str, str]] = []  # the attributes above the next recipe

    def hold(why: str, task: str | None = None) -> None:
        found.append((f"just:{task}", unread("just", why)[1]) if task is not None else unread("just", why))

    for line in joined_lines(text):
        indented = line[:1] in (" ", "\t")
        if indented and current is not None:
            command = line.strip()
            if not body and command.startswith("#!") and current not in scripts and not _shebang_shell(command):
                hold(f"`{current}` is a script for `{command[2:].strip()[:40]}`, not shell", current)
                reading = False
            body = True
            command = command.lstrip("@-")
            # `command[:3]` first: most lines are no `set`, and `shell_options` splits the line to say so.
            if reading and command and command[0] != "#" and not (command[:3] == "set" and shell_options(command)):
                if "{{" in command or "}}" in command:
                    command = command.replace("{{", "$(").replace("}}", ")")
                found.append((task, command))
            continue
        stripped = line.strip()
        if not stripped:
            continue  # a blank line: a recipe's body goes on past it
        current, lead = None, stripped[0]
        keyword = lead in "saium"  # a line that can start with `set`, `alias`, `unexport`, `import` or `mod`
        if "`" in stripped and lead != "#":
            hold(f"a backtick runs a program as just reads the file: {stripped}")
        if indented:
            hold("a line indented outside any recipe (a value over several lines)")
        elif lead == "#":
            continue
        elif lead == "[":
            # An attribute and its arguments' words (`script("bash", "-eu")`: `bash -eu`).
            pending += [
                (m[0], " ".join(a or b for a, b in _QUOTED.findall(m[1]))) for m in _ATTRIBUTE.findall(stripped)
            ]
            continue
        # Each pattern below is tried only on a line that can match it (its first word, or `:=`): a line that
        # cannot is no slower to turn away, as a file of many short recipes is mostly such lines.
        elif keyword and stripped.startswith("set") and (setting := _SET.match(stripped)) is not None:
            name, value = setting.group(1), setting.group(2)
            if (why := _setting(name, value)) is not None:
                # `set fallback` runs a parent folder's justfile for a recipe this one lacks.
                found.append(
                    ("just:" + FALLBACK, unread("just", why)[1]) if name == "fallback" else unread("just", why)
                )
            export_all = export_all or (name == "export" and (value is None or value.strip() == "true"))
            if name == "script-interpreter":
                interpreter_is_shell = value is not None and shell_command([a or b for a, b in _QUOTED.findall(value)])
        elif keyword and stripped.startswith("alias") and (alias := _ALIAS.match(stripped)) is not None:
            found.append((f"just:{alias.group(1)}", f"just {alias.group(2)}"))
        elif keyword and stripped.startswith("unexport") and _UNEXPORT.match(stripped):
            pass  # takes a variable away from the recipes
        elif keyword and stripped.startswith(("import", "mod")) and _INCLUDES.match(stripped):
            hold(f"`{stripped.split()[0]}` reads recipes from another file")
        elif "'''" in stripped or '"""' in stripped:
            hold(f"a value over several lines: {stripped[:60]}")
        elif ":=" in stripped and (assign := _ASSIGN.match(stripped)) is not None:
            if "shell(" in assign.group(3):
                hold(f"`shell()` runs a program as just reads the file: {stripped}")
            variables.append((bool(assign.group(1)), assign.group(2), assign.group(3)))
        elif (header := _header(stripped)) is not None:
            current, params, deps = header
            body, reading, task = False, True, f"just:{current}"
            first = first or current
            if params and ("shell(" in params or "$" in params):
                hold(f"a parameter runs a program or is exported as a variable: {stripped[:60]}", current)
            if words := deps.split():
                # Names between spaces, most headers' dependencies, read without the reader's call.
                for dep in words if deps.replace(" ", "").isalnum() else _dependencies(deps):
                    found.append((task, f"just {dep}"))
            for attribute, argument in pending:
                default = current if attribute == "default" else default
                if attribute == "script":
                    scripts[current] = argument
                elif attribute not in _ADMITTED_ATTRIBUTES:
                    hold(f"`[{attribute}]` changes how `{current}` runs", current)
        else:
            hold(f"a line the reader does not know: {stripped[:60]}")
        if pending:
            pending = []  # spent on this line; most lines have none to spend
    for exported, name, value in variables:
        if exported or export_all:
            assigned = _exported(name, value)
            found.append(
                unread("just", f"`{name}` is exported as no plain value")
                if assigned is None
                else (f"just:{EVERY}", assigned)
            )
    for recipe, interpreter in scripts.items():
        if not (shell_command(interpreter.split()) if interpreter else interpreter_is_shell):
            hold(f"`{recipe}` is a `[script]` for `{interpreter or 'set script-interpreter'}`, not shell", recipe)
    return found + default_recipes("just", default or first, found)
