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
import shlex
import tomllib
from dataclasses import dataclass

import re2

from core.program_tasks import TASK_NAME

__all__ = [
    "EVERY",
    "FALLBACK",
    "NOT_PLACES",
    "PLACE_DEPTH",
    "PROGRAM_SETTINGS",
    "SHELL",
    "Recipe",
    "Tasks",
    "default_recipes",
    "environment_lines",
    "joined_lines",
    "mise_file_task",
    "mise_recipes",
    "package_json_recipes",
    "physical_lines",
    "rakefile_recipes",
    "scanned_folder",
    "shell_command",
    "shell_options",
    "templated",
    "tool_versions_recipes",
    "unread",
]

# (task, one command line it runs)
Recipe = tuple[str, str]
# A task's name for lines every task of its runner runs (`make:*`: what an `include` or a `SHELL` does to every
# target), and for lines a task with no recipe of its own runs (`make:%`: a pattern rule, `.DEFAULT`).
EVERY = "*"
FALLBACK = "%"
# The runner of every command in the folder, a task or not (`shell:*`): what mise's `[env]` sets there reaches every
# program the agent runs once mise is active in its shell (`mise activate`, which a session's shell inherits) or its
# shims run a tool (`npm` through mise's shim loads `[env]` first); round 8 published `npm test` under a mise
# `NODE_OPTIONS=--require ./x.js`.
SHELL = "shell"

# A shell that reads a recipe's lines as the command judge reads them, and its options that stop on an error or
# trace, never read a profile or take commands from elsewhere (`-l`, `-i`, `--rcfile` wait for review).
_SHELLS = frozenset({"sh", "bash", "dash", "zsh"})
_SHELL_OPTION = re2.compile(r"^(?:-[ceuxvo]+|-o|pipefail|errexit|nounset|xtrace|--noprofile|--norc|-S)$")


def shell_command(words: list[str]) -> bool:
    """True for a command that runs lines as a POSIX shell would, with only options that stop on errors or trace
    (`["bash", "-euo", "pipefail", "-c"]`, `/usr/bin/env bash`), by its name or from the system's folders: its
    lines can be judged as shell lines."""
    if words and _system(words[0], {"env"}):
        words = words[1:]
    if not words or not _system(words[0], _SHELLS):
        return False
    return all(_SHELL_OPTION.match(word) for word in words[1:])


def _system(program: str, names: set[str] | frozenset[str]) -> bool:
    """True for one of `names` by its bare name or in the system's program folders (`/bin/bash`), never one a
    project ships (`./tools/bash`)."""
    folder, _, name = program.rpartition("/")
    return name in names and folder in ("", "/bin", "/usr/bin", "/usr/local/bin", "/opt/homebrew/bin")


def shell_options(line: str) -> bool:
    """True for a script's line that only sets the shell's options to stop on an error or trace (`set -euo
    pipefail`): it changes no command the script runs, and a script read line by line need not judge it."""
    words = line.split()
    return words[:1] == ["set"] and len(words) > 1 and shell_command(["sh", *words[1:]])


def physical_lines(text: str) -> list[str]:
    """`text`'s lines as make, just and a shell split them: at each newline, a carriage return before it dropped.
    Not `str.splitlines`, which also splits at a form feed or U+2028 where the runner sees one line (and a reader
    that ends a recipe there would miss the lines the runner runs after it)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines] if "\r" in text else lines


def joined_lines(text: str) -> list[str]:
    """`text`'s lines, a line ending in a backslash joined with the next (make's and the shell's continuation)."""
    if "\\\n" not in text and "\\\r\n" not in text and not text.endswith(("\\", "\\\r")):
        return physical_lines(text)  # no line ends in a backslash: nothing to join, in one pass instead of two
    lines: list[str] = []
    pending = ""
    for line in physical_lines(text):
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        lines.append(pending + line)
        pending = ""
    if pending:
        lines.append(pending)
    return lines


# The folders below a project whose runners' files are read (`core.io.declared`), as a task sent there is judged
# (`make -C api`, `cd api && make test`): this deep, none hidden or of installed or built code. Past a bound on how
# many are read, `Tasks.places_cut` says so, and a task sent to a folder not read is held.
PLACE_DEPTH = 3
NOT_PLACES = frozenset({"node_modules", "vendor", "target", "dist", "build", "__pycache__"})


@dataclass(frozen=True)
class Tasks:
    """What the tasks of project folders run, as `core.io.declared` read them and `core.task_judge` judges by: their
    recipes, what an install from each requirements file installs, and which folders below them were looked at."""

    # (task, command line): the task named by its runner (`make:test`), or by its runner and the place below the
    # folder it is run at (`make@./api:test`, `npm@@acme/web:build`: a folder's path or a workspace member's name).
    recipes: frozenset[Recipe] = frozenset()
    # (place, file, line): what an install from the requirements file `file` is judged by (`core.requirements_files`:
    # `""`, read and admitted), at `place` as the recipes name places (`""`: the folder's own).
    requirements: frozenset[tuple[str, str, str]] = frozenset()
    # The folders below that were looked at, and the links among them, which are not followed: a task sent to a
    # folder is judged by the top's files only where that folder was seen and holds no runner's file.
    places_seen: frozenset[str] = frozenset()
    places_linked: frozenset[str] = frozenset()
    # Whether the bounds cut the folders looked at short: a task sent to a folder not read is held.
    places_cut: bool = False

    def __bool__(self) -> bool:
        """Whether anything was read: with nothing, a task is judged by its name alone."""
        return bool(self.recipes or self.requirements or self.places_seen or self.places_linked or self.places_cut)

    def union(self, *others: Tasks) -> Tasks:
        """What these and `others` run, together (the tasks of several folders)."""
        return Tasks(
            self.recipes.union(*(o.recipes for o in others)),
            self.requirements.union(*(o.requirements for o in others)),
            self.places_seen.union(*(o.places_seen for o in others)),
            self.places_linked.union(*(o.places_linked for o in others)),
            self.places_cut or any(o.places_cut for o in others),
        )

    def at(self, place: str) -> Tasks:
        """What the tasks run at `place` run, keyed as the folder's own are (`runner:task`, place `""`); empty where
        playbook read no file there."""
        recipes = set()
        for task, line in self.recipes:
            runner, _, named = task.partition(":")
            base, at, where = runner.partition("@")
            if at and where == place:
                recipes.add((f"{base}:{named}", line))
        requirements = frozenset(("", file, line) for where, file, line in self.requirements if where == place)
        return Tasks(frozenset(recipes), requirements)


def scanned_folder(folder: str) -> bool:
    """Whether the relative `folder` (`web/app`) is one whose runners' files are read when it has any."""
    parts = folder.split("/")
    return 0 < len(parts) <= PLACE_DEPTH and not any(not p or p.startswith(".") or p in NOT_PLACES for p in parts)


def unread(runner: str, why: str) -> Recipe:
    """A line every task of `runner` runs, saying what in its file cannot be read before it runs (`include x.mk`):
    the judge holds every such task. Written as the shell's `$(...)`, which the command judge holds anyway."""
    return (f"{runner}:{EVERY}", f"$(unread: {why})")


def default_recipes(runner: str, first: str | None, found: list[Recipe]) -> list[Recipe]:
    """The first task's lines again as the runner's default (`make`, `just` alone run it)."""
    if not first:
        return []
    name, default = f"{runner}:{first}", f"{runner}:"  # built once, not once per line found
    return [(default, line) for task, line in found if task == name]


def package_json_recipes(text: str) -> list[Recipe]:
    """package.json's scripts, each its one line; a `packageManager` that is no release by its version (corepack
    downloads and runs what it names for every yarn or pnpm command) holds every script."""
    data = json.loads(text)
    manager = data.get("packageManager") if isinstance(data, dict) else None
    held = (
        []
        if manager is None or (isinstance(manager, str) and _PACKAGE_MANAGER.match(manager))
        else [
            unread("npm", f"corepack runs `packageManager` `{str(manager)[:60]}`, which is no release by its version")
        ]
    )
    held += _fetched_dependencies(data)
    held += _dev_engines_manager(data)
    scripts = data.get("scripts") if isinstance(data, dict) else None
    if not isinstance(scripts, dict):
        return held
    return held + [
        (f"npm:{name}", line) for name, line in scripts.items() if isinstance(name, str) and isinstance(line, str)
    ]


def _fetched_dependencies(data: object) -> list[Recipe]:
    """A line that holds installs (`npm:preinstall`, which every install runs first) when a dependency is fetched
    from somewhere other than the registry by its name (`github:x/y`, a tarball's URL, `git+ssh://`): an install runs
    what it fetches (its install scripts) from a stranger's host."""
    if not isinstance(data, dict):
        return []
    for key in ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies"):
        deps = data.get(key)
        for name, spec in deps.items() if isinstance(deps, dict) else []:
            if not (isinstance(spec, str) and _REGISTRY_SPEC.match(spec)):
                return [("npm:preinstall", unread("", f"`{str(name)[:40]}` is fetched from `{str(spec)[:50]}`")[1])]
    return []


def _dev_engines_manager(data: object) -> list[Recipe]:
    """package.json's `devEngines.packageManager` (one or a list) whose `version` is no range of releases (a URL, a
    git address): the package manager fetches and runs what it names for every script (round 9)."""
    engines = data.get("devEngines") if isinstance(data, dict) else None
    managers = engines.get("packageManager") if isinstance(engines, dict) else None
    for manager in managers if isinstance(managers, list) else [] if managers is None else [managers]:
        version = manager.get("version", "") if isinstance(manager, dict) else None
        if not (isinstance(version, str) and _VERSION_RANGE.match(version)):
            return [unread("npm", f"`devEngines.packageManager` names `{str(version)[:60]}`, no range of releases")]
    return []


_VERSION_RANGE = re2.compile(r"^[0-9A-Za-z.*^~<>=|+ -]*$")


# A dependency the registry gives by name: a version or range, a tag, an alias of another package by name
# (`npm:x@^1`), a workspace's or a catalog's, or a folder inside the project (`file:packages/x`).
_REGISTRY_SPEC = re2.compile(
    r"^(?:[0-9A-Za-z.*^~<>=|+ -]*|npm:(?:@[a-z0-9._-]+/)?[a-z0-9._-]+(?:@[0-9A-Za-z.*^~<>=|+ -]*)?"
    r"|workspace:[0-9A-Za-z.*^~<>=|+ -]*|catalog:[A-Za-z0-9_-]*|(?:file|link):(?:\./)?[A-Za-z0-9_][A-Za-z0-9_./-]*)$"
)


# `name@version` with corepack's optional `+sha512.<hex>` hash: a release of a package manager by its version.
_PACKAGE_MANAGER = re2.compile(
    r"^(?:npm|yarn|pnpm|bun)@[0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z.-]+)?(?:\+sha(?:1|224|256|384|512)\.[0-9a-f]+)?$"
)


# mise.toml's tables that say which tools a task finds or how mise shows itself, never what a task runs; `[env]`,
# `[tasks]` and `[settings]` are read on their own.
_MISE_TABLES = frozenset("tools tasks env vars min_version redactions settings".split())
_MISE_SETTINGS = frozenset("experimental jobs quiet verbose color lockfile paranoid".split())
# A task's keys that describe it, say when it is up to date, or wait for another, never what it runs.
_MISE_TASK_KEYS = frozenset(
    "description alias aliases hide sources outputs wait_for quiet silent raw usage confirm tools timeout".split()
)
_MOST_LINES = 200  # a task runs no more lines than this that we read

# Variables a session's environment gives every program (the login shell's), and those programs other than the
# project's own code read for where to find programs, code and settings (`NODE_OPTIONS`, `GIT_*`, `BUN_*`): a
# Makefile that sets one sets it for its recipes' programs (make exports a variable the environment had), and
# a `.env` bun loads sets it for every script. A name not here (`DATABASE_URL`) is the project's own setting.
PROGRAM_SETTINGS = re2.compile(
    r"^(?:PATH|HOME|USER|LOGNAME|TMPDIR|TMP|TEMP|PWD|OLDPWD|CDPATH|IFS|ENV|BASH_ENV|EDITOR|VISUAL|PAGER|LANG|TERM"
    r"|MAIL|HOSTNAME|PS[1-4]|PROMPT_COMMAND|CLASSPATH|MANPATH|VIRTUAL_ENV|CONDA_PREFIX|PYTHON[A-Z]+|NODE_OPTIONS"
    r"|NODE_PATH|RUBYOPT|RUBYLIB|GEM_HOME|GEM_PATH|PERL5LIB|PERL5OPT|JAVA_HOME|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS"
    r"|GOPATH|GOROOT|GOFLAGS|GOPROXY|GOTOOLCHAIN|CARGO_HOME|RUSTUP_HOME|RUSTC_WRAPPER|RUSTFLAGS|KUBECONFIG"
    r"|DOCKER_HOST|DOCKER_CONFIG|AWS_PROFILE|SSH_AUTH_SOCK|(?:LD|DYLD|LC|XDG|GIT|NPM_CONFIG|npm_config|BUN|DENO)_[A-Za-z0-9_]*"
    # How programs reach the network and whom they trust there (round 8b: a `.env` bun loads that switched TLS off
    # or sent the traffic through another's proxy): proxies, certificate files and switches, any case.
    r"|NODE_[A-Z_]+|(?i:(?:https?|all|no|ftp|socks)_proxy)|SSL_[A-Z_]+|REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE"
    r"|[A-Z_]*(?:CA_CERTS?|CA_BUNDLE|CAFILE|CA_FILE|CERT_FILE|TLS|SSL|INSECURE)[A-Z_]*)$"
)


def environment_lines(variables: object, why: str) -> list[str]:
    """The variables a runner sets for every task (mise's `[env]`, a Taskfile's `env:`), each as a line
    `NAME=value true` the command judge reads as it reads a variable set before a command, or an `unread` line for one
    whose value is no plain string (a command, a file to load)."""
    if not isinstance(variables, dict):
        return [unread("", f"{why} is no table")[1]]
    if len(variables) > _MOST_LINES:
        return [unread("", f"{why} sets more than {_MOST_LINES} variables")[1]]
    lines: list[str] = []
    for name, value in variables.items():
        if value is False:
            continue  # unsets it
        if isinstance(value, bool | int | float):
            value = str(value).lower() if isinstance(value, bool) else str(value)
        if not isinstance(name, str) or not isinstance(value, str) or not TASK_NAME.match(name.lower()):
            lines.append(unread("", f"{why} sets `{str(name)[:40]}` from a command or a file")[1])
            continue
        lines.append(f"{name}={shlex.quote(templated(value))} true")
    return lines


def templated(line: str) -> str:
    """`line` with a template's `{{...}}` (just's, mise's Tera, a Taskfile's Go templates) read as the shell's `$(...)`:
    a value known only when it runs, which the command judge holds."""
    return line.replace("{{", "$(").replace("}}", ")")


def mise_recipes(text: str) -> list[Recipe]:
    """mise.toml's tasks: their `run` lines, a line `mise run DEP` for each task in `depends` or `depends_post`, and
    the variables of `[env]` as lines of `mise:*`, those programs read as lines of `shell:*` (every command's,
    `SHELL`); a table or a task's key that changes what runs in a way not read here (`[hooks]`, `_.source`,
    `file =`, `shell = "python"`) holds the tasks it reaches."""
    data = tomllib.loads(text)
    found: list[Recipe] = [unread("mise", f"the mise file declares `[{t}]`") for t in data if t not in _MISE_TABLES]
    env = data.get("env", {})
    if isinstance(env, dict) and "_" in env:
        directives = env["_"] if isinstance(env["_"], dict) else {"": None}
        found.append(unread(SHELL, f"mise's `[env]` loads `{', '.join(f'_.{k}' for k in directives)}`"))
        env = {k: v for k, v in env.items() if k != "_"}
    # A variable programs read (`NODE_OPTIONS`, `PATH`) reaches every command; the project's own (`DATABASE_URL`),
    # only its code, which its tasks run.
    if isinstance(env, dict):
        programs = {k: v for k, v in env.items() if isinstance(k, str) and PROGRAM_SETTINGS.match(k)}
        found += [(f"{SHELL}:{EVERY}", line) for line in environment_lines(programs, "mise's `[env]`")]
        env = {k: v for k, v in env.items() if k not in programs}
    found += [("mise:" + EVERY, line) for line in environment_lines(env, "its `[env]`")]
    found += [unread("mise", why) for why in _mise_tools(data.get("tools"), "its `[tools]`")]
    settings = data.get("settings", {})
    if isinstance(settings, dict) and any(k not in _MISE_SETTINGS for k in settings):
        found.append(unread("mise", "its `[settings]` change how mise runs tasks"))
    tasks = data.get("tasks", {})
    if not isinstance(tasks, dict):
        return found
    for name, task in tasks.items():
        if not isinstance(name, str):
            continue
        found += _mise_task(name, task)
    return found


def _mise_tools(tools: object, where: str) -> list[str]:
    """Why the tools mise installs before it runs a task change what runs: one from a backend that builds or fetches
    anything (`ubi:someone/pytest`, `cargo:x`, `npm:x`), or one with a `postinstall` or another key than its version
    and the options of its release; a core tool by its version (`python = "3.12"`) installs what its name says."""
    if tools is None:
        return []
    if not isinstance(tools, dict):
        return [f"{where} is no table"]
    for name, version in tools.items():
        if not isinstance(name, str) or ":" in name or not TASK_NAME.match(name):
            return [f"{where} installs `{str(name)[:40]}` from a backend that fetches what it is told"]
        for one in version if isinstance(version, list) else [version]:
            if isinstance(one, dict) and not set(one) <= {"version", "os"}:
                return [f"{where} installs `{name}` with `{next(iter(set(one) - {'version', 'os'}))}`"]
            if not isinstance(one, str | dict):
                return [f"{where} names `{name}` in a shape not read"]
    return []


def tool_versions_recipes(text: str) -> list[Recipe]:
    """`.tool-versions` (mise reads it as asdf does): a tool from a backend (`npm:x`, `cargo:x`) holds every task."""
    names = [line.split()[0] for line in physical_lines(text) if line.split() and not line.lstrip().startswith("#")]
    return [unread("mise", why) for why in _mise_tools(dict.fromkeys(names, ""), "`.tool-versions`")]


def _mise_task(name: str, task: object) -> list[Recipe]:
    key = f"mise:{name}"
    if isinstance(task, str | list):
        task = {"run": task}
    if not isinstance(task, dict):
        return [(key, unread("", "its task is no table")[1])]
    found: list[Recipe] = []
    for field in ("run", "run_windows"):
        run = task.get(field)
        runs = [run] if isinstance(run, str | dict) else run if isinstance(run, list) else []
        if len(runs) > _MOST_LINES:
            found.append((key, unread("", f"`{field}` runs more than {_MOST_LINES} lines")[1]))
        for line in runs[:_MOST_LINES]:
            if isinstance(line, str):
                found.append((key, templated(line)))
            elif isinstance(line, dict) and set(line) <= {"task", "tasks"}:
                named = line.get("tasks", [line.get("task")])
                found += (
                    [(key, f"mise run {t}") for t in named if isinstance(t, str)] if isinstance(named, list) else []
                )
            else:
                found.append((key, unread("", f"`{name}` runs a step that is no command line")[1]))
    for field in ("depends", "depends_post"):
        depends = task.get(field)
        depends = [depends] if isinstance(depends, str) else depends if isinstance(depends, list) else []
        found += [(key, f"mise run {dep}") for dep in depends if isinstance(dep, str)]
    found += [(key, line) for line in environment_lines(task.get("env", {}), f"`{name}`'s `env`")]
    found += [(key, unread("", why)[1]) for why in _mise_tools(task.get("tools"), f"`{name}`'s `tools`")]
    for field in ("alias", "aliases"):  # `mise run ALIAS` runs this task
        aliases = task.get(field)
        aliases = [aliases] if isinstance(aliases, str) else aliases if isinstance(aliases, list) else []
        found += [(f"mise:{alias}", f"mise run {name}") for alias in aliases if isinstance(alias, str)]
    shell = task.get("shell")
    if shell is not None and not (isinstance(shell, str) and shell_command(shell.split())):
        found.append((key, unread("", f"`{name}` runs its lines with `{str(shell)[:40]}`")[1]))
    directory = task.get("dir")
    if directory is not None and not (isinstance(directory, str) and _PROJECT_FOLDER.match(directory)):
        found.append((key, unread("", f"`{name}` runs in `{str(directory)[:40]}`")[1]))
    other = [k for k in task if k not in _MISE_TASK_KEYS | {"run", "run_windows", "depends", "depends_post", "env"}]
    if [k for k in other if k not in ("shell", "dir")]:
        found.append((key, unread("", f"`{name}` sets `{other[0]}`, which changes what it runs")[1]))
    if not found:
        found.append((key, "$(mise task file)"))  # a task run from a file of its own: not read here
    return found


def mise_file_task(name: str, text: str) -> list[Recipe]:
    """A mise file task (`.mise/tasks/lint`, `mise-tasks/test/unit` as `test:unit`): a shell script's lines, or held
    when it is a script for another program or carries `#MISE` directives (what it depends on, where it runs)."""
    key = f"mise:{name}"
    lines = physical_lines(text)
    if lines and lines[0].startswith("#!") and not shell_command(lines[0][2:].split()):
        return [(key, unread("", f"`{name}` is a script for `{lines[0][2:].strip()[:40]}`, not shell")[1])]
    if any(_MISE_DIRECTIVE.match(line) for line in lines):
        return [(key, unread("", f"`{name}` carries `#MISE` directives (what it runs first, where, with what)")[1])]
    commands = [line.strip() for line in joined_lines(text) if line.strip() and not line.strip().startswith("#")]
    commands = [line for line in commands if not shell_options(line)]
    if len(commands) > _MOST_LINES:
        return [(key, unread("", f"`{name}` runs more than {_MOST_LINES} lines")[1])]
    return [(key, line) for line in commands] or [(key, "true")]


def rakefile_recipes(text: str) -> list[Recipe]:
    """A Rakefile's tasks: Ruby, whose tasks run what Ruby computes (`sh`, backticks, `system`, any library), so
    nothing in it is read as command lines and every `rake` task is held."""
    return [unread("rake", "a Rakefile is Ruby: what its tasks run is known only when they run")]


_PROJECT_FOLDER = re2.compile(r"^(?:\{\{\s*config_root\s*\}\}/?)?(?:[A-Za-z0-9_][A-Za-z0-9_.-]*/?)*$")
_MISE_DIRECTIVE = re2.compile(r"^\s*(?:#|//)\s*\[?(?i:mise)\]?\s")
