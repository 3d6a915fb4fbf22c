"""Tasks and scripts a runner is told to run by name: a routine's, the project's, a release, a database's end.

A task or a script named like a routine (`test`, `lint:ci`, `test-unit`) may run, and one the project declares when
every word of its name is a routine's, a kind of one, or setting the project up (`install-deps`, `build-docs`): a
cloned project declares `format-disk` or `test-update` as easily as `test-unit`, and a name is all a lesson shows of
what the task does, so a word outside that short vocabulary, however harmless alone (`format`, `disk`), holds the
name; any other name waits for review, one named for publishing, deploying or releasing too; a framework's task that
drops, resets or rolls back a database is refused whatever runs it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import re2

from core.program_calls import Call, Refused, clip
from core.quote_words import unadmitted_words

__all__ = [
    "JS_SCRIPTS",
    "TASK_NAME",
    "declared_task",
    "destroys_data",
    "outside_words",
    "reads_elsewhere",
    "releases",
    "routine_shaped",
    "run_elsewhere",
    "runs_in_members",
    "script_name",
    "task_refusals",
    "tasks_run",
    "unvetted_refusals",
]


# A task's or a script's name (`test:ci`), not a path or a command line.
TASK_NAME = re2.compile(r"^[a-z][a-z0-9_-]*(?::[a-z0-9_-]+)*$")
# Names task runners use beside the scripts' ones: make's, rake's, just's routines (`make check`, `rake spec`).
_TASKS = frozenset(
    "fmt ci verify all setup bootstrap spec specs tests checks docs doc html vet tidy bench style run".split()
)

# Routines' names as JavaScript projects give them to their scripts (`npm run test`), and so to any task runner's.
JS_SCRIPTS = frozenset(
    "dev start build test lint format typecheck check preview serve watch e2e clean generate prepare storybook"
    " coverage".split()
)


def script_name(word: str, call: Call) -> bool:
    """True for a project script or task named like a routine (`test`, `lint`, `test:ci`, `build:web`, and in a
    namespace, `web:lint`, `tauri:build`), or one the project declares in the words of routines, their kinds and
    setting up (`declared_task`): a name, not a path or a command line."""
    if declared_task(word, call):
        return True
    # A namespaced name: a part of the project's routine (`web:lint`, `tauri:build`: mise's and monorepos' way), the
    # part named in words the reviewed lexicon admits (`prod:test` aims the tests elsewhere), or a routine and what
    # kind of it (`test:ci`, `lint:fix`: npm's way), where only kinds known to run it whole count: `test:update`,
    # `lint:nofail`, `typecheck:loose` wait for review. A part that releases holds the whole name.
    return bool(TASK_NAME.match(word)) and routine_shaped(word) and not releases(word)


def declared_task(word: str, call: Call) -> bool:
    """True for a task or script the project declares (its Makefile, justfile, package.json or mise.toml) named only
    in the words of routines, their kinds and setting the project up (`install-deps`, `build:docs`, `setup-dev`),
    with one that is no kind: a cloned stranger's project declares what it likes (`format-disk`, `test-update`,
    `phone-home`), and a name is all a lesson shows of what the task does."""
    if word not in call.vouched or not TASK_NAME.match(word):
        return False
    words = _NAME_WORDS.split(word)
    return all(w in _DECLARED_WORDS for w in words) and any(w not in _KINDS for w in words)


def outside_words(word: str) -> list[str]:
    """The words of a task's name outside what a declared task may be named in (`format-disk`: `format`, `disk`)."""
    return [w for w in dict.fromkeys(_NAME_WORDS.split(word)) if w and w not in _DECLARED_WORDS]


def routine_shaped(name: str) -> bool:
    """True for a task's name that says a routine and no more (`test`, `lint-fix`, `test:ci`, `web:lint`): what a
    name joined with other words (`format-disk`, `lint-format-history`) does, only its recipe says."""
    parts = name.split(":")
    return (_routine(parts[-1]) and not any(unadmitted_words(p) for p in parts[:-1])) or (
        _routine(parts[0]) and all(p in _KINDS for p in parts[1:])
    )


def _routine(part: str) -> bool:
    """A routine's name, alone or joined with its kinds by `-` or `_` (`test-unit`, `lint_fix`, `ci-test`), make's
    and just's way: every word but one is a kind, so `wipe-prod-db` and `test-wipe-db` are no routine."""
    if part in JS_SCRIPTS or part in _TASKS:
        return True
    words = _JOINED.split(part)
    return len(words) > 1 and any(
        (w in JS_SCRIPTS or w in _TASKS) and all(o in _KINDS for o in words[:i] + words[i + 1 :])
        for i, w in enumerate(words)
    )


_JOINED = re2.compile(r"[_-]")
_NAME_WORDS = re2.compile(r"[:_-]")


# Kinds of a routine that run it whole: where (`ci`, `web`, `api`), which tests (`unit`, `e2e`), how it reports
# (`watch`, `coverage`), or fixing what it finds (`fix`).
_KINDS = frozenset(
    "ci unit e2e integration all fix watch coverage cov types js ts py web api app client server frontend backend ui"
    " local dev node browser docker full strict headless changed staged debug verbose".split()
)
# Setting the project up, as a declared task may say it beside its routines (`install-deps`, `setup-dev`).
_SETUP_WORDS = frozenset("install deps dependencies init compile codegen venv virtualenv".split())
_DECLARED_WORDS = JS_SCRIPTS | _TASKS | _KINDS | _SETUP_WORDS


# Words of a task's name that publish, deploy or release what the project built: irreversible, and the user's call
# (`make deploy-prod`, `just release`, `rake release`, `turbo run publish`), unless the project declares the task.
_RELEASE_WORDS = frozenset("publish release deploy upload ship submit promote rollout push".split())
_NAME_PARTS = re2.compile(r"[^a-z0-9]+")
_WORD_PARTS = re2.compile(r"[^a-z0-9/_.-]+")
_ACT_FIRST = re2.compile(r"[_-]")


def releases(name: str) -> bool:
    """True when the task or script `name` is named for publishing, deploying or releasing (`deploy-prod`)."""
    return any(part in _RELEASE_WORDS for part in _NAME_PARTS.split(name.lower()))


_TASK_RUNNERS = frozenset({"make", "just", "rake", "task"})
_PACKAGE_MANAGERS = frozenset({"npm", "pnpm", "yarn", "bun"})
# npm's own commands that run the project's script of the same name, and those that run its install scripts.
_NPM_SCRIPT_COMMANDS = {
    "test": "test",
    "t": "test",
    "tst": "test",
    "start": "start",
    "stop": "stop",
    "restart": "restart",
}
_INSTALLS = frozenset("install i ci add".split())
_INSTALL_SCRIPTS = ("preinstall", "install", "postinstall", "prepare")


def tasks_run(call: Call) -> list[str]:
    """The project's tasks `call` runs, whose recipes say what it does, each named by its runner as `core.recipes`
    names it: a task runner's targets (`make:test`; `make:` for its default, `make` alone), a package manager's script
    (`npm run X`, `npm test`, `pnpm X`, with npm's `preX` and `postX`; `npm:X`) and the scripts an install runs
    (`npm:postinstall`), `mise run X`, `node --run X`, and `poe X`, `deno task X`, `composer X`, `tox -e X`, `cargo X`
    and the Gradle and Maven wrappers' tasks."""
    reader = _OTHER_RUNNERS.get(call.family)
    if reader is not None:
        return reader(call)
    return [f"{_RECIPE_KIND.get(call.family, call.family)}:{name}" for name in _tasks_named(call)]


def _after_options(args: Sequence[str], valued: frozenset[str]) -> list[str]:
    """`args` without their options and the values of the options in `valued` (`poe -C web test` is `test`)."""
    words: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--":
            break
        elif arg.startswith("-"):
            skip = arg in valued
        else:
            words.append(arg)
    return words


def _poe_tasks(call: Call) -> list[str]:
    """`poe [options] TASK [args]`: `poe:TASK`; `poe` alone lists its tasks."""
    words = _after_options(call.args, _POE_VALUED)
    return [f"poe:{words[0]}"] if words else []


def _deno_tasks(call: Call) -> list[str]:
    """`deno task NAME`: deno.json's `deno:NAME`, and package.json's script of that name, which deno runs when
    deno.json declares none."""
    words = _after_options(call.args, _DENO_VALUED)
    if words[:1] != ["task"] or len(words) < 2:
        return []
    name = words[1]
    return [f"deno:{name}", f"npm:pre{name}", f"npm:{name}", f"npm:post{name}"]


def _composer_tasks(call: Call) -> list[str]:
    """`composer test`, `composer run-script test`: `composer:test`; an install, an update or an autoload dump, the
    scripts of the events it fires (`composer:post-install-cmd`)."""
    words = _after_options(call.args, _COMPOSER_VALUED)
    if not words:
        return []
    if words[0] in ("run-script", "run"):
        return [f"composer:{words[1]}"] if len(words) > 1 else []
    events = _COMPOSER_EVENTS.get(words[0])
    if events is not None:
        return [f"composer:{event}" for event in events]
    return [] if words[0] in _COMPOSER_COMMANDS else [f"composer:{words[0]}"]


def _tox_tasks(call: Call) -> list[str]:
    """`tox -e lint,type`: `tox:lint`, `tox:type`; `tox` alone, `-e ALL` or `-m LABEL`, every environment (`tox:`)."""
    envs: list[str] = []
    args = list(call.args)
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg in ("-e", "--env") and i + 1 < len(args):
            envs += args[i + 1].split(",")
        elif arg.startswith("--env="):
            envs += arg[len("--env=") :].split(",")
        elif arg.startswith("-e") and len(arg) > 2 and not arg.startswith("--"):
            envs += arg[2:].lstrip("=").split(",")
    words = _after_options(call.args, _TOX_VALUED)
    if words[:1] and words[0] in _TOX_READS_ONLY:
        return []
    named = [e for e in envs if e and e != "ALL"]
    return [f"tox:{e}" for e in named] if named and "ALL" not in envs else ["tox:"]


def _cargo_tasks(call: Call) -> list[str]:
    """`cargo test`: `cargo:test` (an `[alias]` of that name, and what the project's configuration makes every
    cargo command run); `cargo` alone or `cargo --version` builds nothing and runs none."""
    words = [w for w in call.positionals() if not w.startswith("+")]
    return [f"cargo:{words[0]}"] if words else []


def _uv_tasks(call: Call) -> list[str]:
    """`uv run X`, `uv sync`: they sync the project's environment first, from where the project says (`uv:`)."""
    return ["uv:"] if call.positionals()[:1] in (["run"], ["sync"]) else []


def _wrapper_tasks(call: Call) -> list[str]:
    """`./gradlew test`, `./mvnw verify`: each task named, or the wrapper's default."""
    return [f"{call.family}:{w}" for w in call.positionals()] or [f"{call.family}:"]


_POE_VALUED = frozenset("-C --directory --root -e --executor".split())
_DENO_VALUED = frozenset("--cwd -c --config -f --filter".split())
_COMPOSER_VALUED = frozenset("-d --working-dir".split())
_TOX_VALUED = frozenset("-e --env -c --conf --root --workdir -x --override".split())
_TOX_READS_ONLY = frozenset("list l config c quickstart q depends de --version".split())
# The events composer's commands fire, whose scripts they run (`post-install-cmd`, `post-autoload-dump`).
_AUTOLOAD = ("pre-autoload-dump", "post-autoload-dump")
_UPDATE = ("pre-update-cmd", "post-update-cmd", *_AUTOLOAD)
_COMPOSER_EVENTS: dict[str, tuple[str, ...]] = {
    "install": ("pre-install-cmd", "post-install-cmd", *_AUTOLOAD),
    "i": ("pre-install-cmd", "post-install-cmd", *_AUTOLOAD),
    "update": _UPDATE,
    "u": _UPDATE,
    "upgrade": _UPDATE,
    "require": _UPDATE,
    "r": _UPDATE,
    "remove": _UPDATE,
    "rm": _UPDATE,
    "dump-autoload": _AUTOLOAD,
    "dumpautoload": _AUTOLOAD,
    "status": ("pre-status-cmd", "post-status-cmd"),
    "archive": ("pre-archive-cmd", "post-archive-cmd"),
    "create-project": ("post-root-package-install", "post-create-project-cmd"),
}
# composer's own commands, which run no script of the project by their name.
_COMPOSER_COMMANDS = frozenset(
    "about audit browse home bump check-platform-reqs clear-cache clearcache config depends why diagnose exec fund"
    " global help init licenses list outdated prohibits why-not reinstall search self-update selfupdate show info"
    " suggests validate".split()
)
_OTHER_RUNNERS = {
    "poe": _poe_tasks,
    "deno": _deno_tasks,
    "composer": _composer_tasks,
    "tox": _tox_tasks,
    "cargo": _cargo_tasks,
    "gradlew": _wrapper_tasks,
    "mvnw": _wrapper_tasks,
    "mvn": _wrapper_tasks,  # `.mvn/maven.config` and `jvm.config` are read by a `mvn` run in the project too
    "uv": _uv_tasks,
}


# Whose recipes a runner reads: every package manager (and `node --run`) runs package.json's scripts.
_RECIPE_KIND = {"pnpm": "npm", "yarn": "npm", "bun": "npm", "node": "npm"}


def _tasks_named(call: Call) -> list[str]:
    words = call.positionals()
    if call.family in _TASK_RUNNERS:
        return [w for w in words if TASK_NAME.match(w)] or [""]
    if call.family == "node":
        return [call.args[1]] if call.args[:1] == ("--run",) and len(call.args) > 1 else []
    if call.family == "mise":
        return [words[1]] if words[:1] in (["run"], ["r"]) and len(words) > 1 else []
    if call.family not in _PACKAGE_MANAGERS or not words:
        return []
    if words[0] in _INSTALLS:
        return list(_INSTALL_SCRIPTS)
    if words[0] in ("run", "run-script", "rum", "urn"):
        name = words[1] if len(words) > 1 else ""
    elif call.family == "npm":
        name = _NPM_SCRIPT_COMMANDS.get(words[0], "")
    else:
        name = words[0]  # `pnpm lint`, `yarn test`: a script by its bare name
    return [f"pre{name}", name, f"post{name}"] if name else []


def task_refusals(call: Call, names: Sequence[str], what: str) -> Refused:
    """Tasks a runner is told to run by name (`make test`, `make wipe-prod-db`): a task named like a routine
    (`script_name`) or one the project declares (the user vouched for it) runs; one named for a release, and any
    other name, waits for review: what a name no one vouched for does, only its recipe says."""
    for name in names:
        if script_name(name, call):
            continue
        if releases(name):
            return [("program", f"`{what} {clip(name)}` publishes or deploys: a release is the user's call")]
        if name in call.vouched:
            words = ", ".join(outside_words(name)) or "kinds alone"
            return [("program", f"`{what} {clip(name)}` is declared, named in more than a routine's words ({words})")]
        return [("program", f"`{what} {clip(name)}` is no routine task and no task the project declares")]
    return []


# Tasks that destroy a database or its history, in the frameworks' own words.
_DESTROYS = frozenset(
    "db:drop db:reset db:purge db:schema:load db:structure:load db:setup db:wipe db:rollback ecto.drop ecto.reset"
    " ecto.rollback flush sqlflush"
    " reset_db migrate:fresh migrate:reset migrate:rollback migrate:refresh downgrade".split()
)
# The same, in two words: `dotnet ef database drop`, `prisma migrate reset`, `prisma db push --force-reset`.
_DESTROYS_PAIRS = {("database", "drop"), ("migrate", "reset"), ("db", "drop")}
_VARIABLE_SET = re2.compile(r"^[A-Z][A-Z0-9_]*=")


def destroys_data(call: Call) -> Refused:
    """A framework task that drops, resets or rolls back a database (`rails db:drop`, `mix ecto.reset`, `manage.py
    flush`, `alembic downgrade base`, `dotnet ef database drop`, `prisma migrate reset`), or a variable that lets one
    run where it must not (`DISABLE_DATABASE_ENVIRONMENT_CHECK=1`)."""
    words = call.positionals()
    pairs = set(itertools.pairwise(words))
    if _DESTROYS.intersection(words) or pairs & _DESTROYS_PAIRS or "--force-reset" in call.args:
        return [("bypass", f"`{call.family} {clip(' '.join(words[:3]))}` destroys a database")]
    if call.family in ("rails", "rake", "make", "mix") and any(_VARIABLE_SET.match(w) for w in words):
        return [("environment", f"`{call.family}` is given a variable as an argument")]
    return []


# Words that say a command ends something that lives outside the project's files (a cluster, a bucket, a database,
# an account), in the words command-line tools use for it.
# (Not `remove`: a project's own tool removes its own things, `workmux remove`; a cloud's CLI says `delete`,
# `destroy`, `terminate`, `uninstall`, `rm` of a bucket.)
_DESTROY_WORDS = frozenset(
    "destroy delete drop purge wipe prune flush flushall flushdb truncate terminate nuke teardown erase apply"
    " scale uninstall upgrade rollback rm".split()
)
# Words that open a shell or run a command inside a running system (`kubectl exec`, `heroku run`, `fly ssh console`).
_INSIDE_WORDS = frozenset("exec ssh shell console attach".split())
# Options that answer a program's own confirmation for the user, or aim it at production.
_ANSWERS_FOR_THE_USER = frozenset(
    "--yes -y --assume-yes --auto-approve -auto-approve --force --no-confirm --noconfirm --skip-confirmation"
    " --confirm --approve --quiet --prod --production".split()
)


def unvetted_refusals(call: Call) -> Refused:
    """For a program no policy knows, which the user or the project vouched for (`terraform`, `kubectl`, a cloud's
    CLI): the vouch is for running it, not for everything it can do. A command whose words release or deploy
    (`fly deploy`, `helm push`), end something outside the project (`terraform destroy`, `kubectl delete`,
    `aws s3 rm`, `psql -c 'DROP ...'`), change a running system or run commands inside it (`kubectl apply`,
    `kubectl scale`, `helm upgrade`, `kubectl exec`), and an option
    that answers the program's confirmation for the user or aims it at production (`-auto-approve`, `--yes`,
    `--prod`), waits for review; what it reads (`kubectl get pods`, `terraform plan`) runs."""
    # A subcommand says its act first (`delete-db-instance`, `deploy-prod`; `cyspbot-deploy` names a thing), a path
    # or a file names a thing (`deploy/api`, `delete_user.py`); words joined otherwise are read apart
    # (`apps:destroy`, `psql -c 'DROP TABLE t'`).
    # Every word that is no flag: which flags take a value, no table says for a program no policy knows (`gsutil -m
    # rm` is `-m` then `rm`).
    parts = (part for word in call.args if not word.startswith("-") for part in _WORD_PARTS.split(word.lower()))
    words = [_ACT_FIRST.split(part)[0] for part in parts if "/" not in part and "." not in part]
    # The program's own name, every word of it: a cloned project may declare a script `nuke-prod` or `wipe_db`.
    words = [*_NAME_PARTS.split(call.family.lower()), *words]
    named = next((w for w in words if w in _RELEASE_WORDS or w in _DESTROY_WORDS or w in _INSIDE_WORDS), None)
    if named is not None:
        what = (
            "publishes or deploys"
            if named in _RELEASE_WORDS
            else "runs commands inside a running system"
            if named in _INSIDE_WORDS
            else "changes or ends what lives outside the project"
        )
        return [("program", f"`{call.family} ... {named}` {what}: a program no policy knows, the user's call")]
    flags = [a.split("=", 1)[0] for a in call.args if a.startswith("-")]
    answered = next((f for f in flags if f in _ANSWERS_FOR_THE_USER), None)
    if answered is not None:
        return [("bypass", f"`{call.family} {answered}` answers its confirmation for the user or aims at production")]
    return []


# Options by which a runner runs the tasks of another file or folder than the project's own (`make -C docs`,
# `npm --prefix web`, `pnpm -r`): a recipe playbook did not read. Long ones may carry their value (`--file=x.mk`),
# one-letter ones on the flag (`-Cdocs`).
_ELSEWHERE = {
    "make": ("-C", "--directory", "-f", "--file", "--makefile"),
    "just": ("-f", "--justfile", "-d", "--working-directory"),
    "task": ("-d", "--dir", "-t", "--taskfile"),
    "rake": ("-f", "--rakefile", "-C", "--directory", "-R", "--rakelibdir"),
    "npm": ("--prefix", "-C", "-w", "--workspace", "-ws", "--workspaces"),
    "pnpm": ("-C", "--dir", "--filter", "-F", "-r", "--recursive"),
    "yarn": ("--cwd",),
    "bun": ("--cwd", "--filter", "-F"),
    "mise": ("-C", "--cd"),
    "poe": ("-C", "--directory", "--root"),
    "deno": ("--cwd", "-c", "--config", "-f", "--filter", "-r", "--recursive"),
    "composer": ("-d", "--working-dir"),
    "tox": ("-c", "--conf", "--root", "--workdir"),
    "cargo": ("--manifest-path", "-C", "--config"),
    "gradlew": ("-p", "--project-dir", "-b", "--build-file", "-c", "--settings-file", "-I", "--init-script"),
    # (Not maven's `-f` and `-s` alone: read as prefixes they would take `-fae` and `-ff`, failure modes.)
    "mvnw": ("--file", "--settings", "-gs", "--global-settings"),
}


# turbo's own commands that run no task; any other word is a task it runs in every member (`turbo test`).
_TURBO_COMMANDS = frozenset(
    "prune gen generate login logout link unlink bin daemon ls info telemetry scan query boundaries devtools".split()
)


def runs_in_members(call: Call) -> str | None:
    """The subcommand by which a monorepo runner runs a task in every member of the workspace (`turbo run test`,
    `turbo test`, `lerna run test`, `nx run-many -t test`, `nx affected -t test`), as `pnpm -r` does; None for one
    that runs none (`turbo ls`, `nx graph`)."""
    words = call.positionals()
    sub = words[0] if words else ""
    several = (
        (call.family == "turbo" and bool(sub) and sub not in _TURBO_COMMANDS)
        or (call.family == "lerna" and sub == "run")
        or (call.family == "nx" and (sub in ("run-many", "affected", "watch") or sub.startswith("affected:")))
    )
    return f"{call.family} {sub}" if several else None


def reads_elsewhere(call: Call) -> str | None:
    """The option (or yarn's `workspace`) by which `call` runs tasks of a file or folder other than the project's
    own, whose recipes were not read; None when it runs the project's."""
    options = _ELSEWHERE.get(call.family, ())
    for arg in call.args:
        if arg == "--":
            break
        for option in options:
            long_form = option.startswith("--")
            if arg == option or (long_form and arg.startswith(option + "=")):
                return option
            if not long_form and len(option) == 2 and arg.startswith(option) and len(arg) > 2 and option != "-w":
                return option
    words = call.positionals()
    if call.family == "yarn" and words[:1] in (["workspace"], ["workspaces"]):
        return words[0]
    return None


# The options of `_ELSEWHERE` that name one folder below the project, or one workspace member by its package name,
# whose own files playbook reads (`core.io.declared`): a task run there is judged by that place's recipes.
_PLACES = {
    "make": ("-C", "--directory"),
    # (Not npm's `-w`: it picks every member whose name or folder the value is, and those under that folder.)
    "npm": ("--prefix", "-C"),
    "pnpm": ("-C", "--dir", "--filter", "-F"),
    "yarn": ("--cwd",),
    "bun": ("--cwd", "--filter", "-F"),
}
# Options that name a workspace member by its package's name (`pnpm --filter @acme/web`); the others of `_PLACES`
# name a folder. A folder a filter names (`--filter ./apps`) picks every member under it: none is read as one.
_BY_NAME = frozenset({"--filter", "-F", "workspace"})
# A place named plainly: a package's name (`@acme/web`) or a relative folder; a selector that picks several
# (`web...`, `@acme/*`, `!api`, `^web`, `[origin/main]`) is none.
_PACKAGE = re2.compile(r"^(?:@[A-Za-z0-9._-]+/)?[A-Za-z0-9._-]+$")
_FOLDER = re2.compile(r"^[A-Za-z0-9._-]+(?:/[A-Za-z0-9._-]+)*$")


def run_elsewhere(call: Call) -> tuple[str, Call] | None:
    """The one place `call` runs its tasks in, when an option names it plainly, and the call as run there: a folder
    below the project as `./api` (`make -C api test`, `npm --prefix web test` run `make test`, `npm test` there), a
    workspace member by its package's name (`pnpm --filter @acme/web test`, `yarn workspace web test`); None for any
    other option of `_ELSEWHERE`, several, or a place named by a pattern."""
    options = _PLACES.get(call.family, ())
    found: list[tuple[str, str, int, int]] = []  # (option, value, where its words start, how many)
    args = list(call.args)
    for i, arg in enumerate(args):
        if arg == "--":
            break
        for option in options:
            if arg == option and i + 1 < len(args):
                found.append((option, args[i + 1], i, 2))
            elif option.startswith("--") and arg.startswith(option + "="):
                found.append((option, arg.partition("=")[2], i, 1))
            elif not option.startswith("--") and len(option) == 2 and arg.startswith(option) and len(arg) > 2:
                found.append((option, arg[2:], i, 1))
    words = call.positionals()
    if call.family == "yarn" and words[:1] == ["workspace"] and len(words) > 1:
        start = args.index("workspace")
        found.append(("workspace", words[1], start, args.index(words[1], start) - start + 1))
    if len(found) != 1:
        return None
    option, value, start, count = found[0]
    if option in _BY_NAME:
        if not _PACKAGE.match(value) or "..." in value or value.startswith("."):
            return None
        place = value
    else:
        folder = value.removeprefix("./").rstrip("/")
        if not _FOLDER.match(folder) or any(part in (".", "..", "...") for part in folder.split("/")):
            return None
        place = f"./{folder}"
    there = Call(call.family, tuple(args[:start] + args[start + count :]), call.vouched, call.packages)
    return None if reads_elsewhere(there) is not None else (place, there)  # `pnpm -r --filter web`: not one place
