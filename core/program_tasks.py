"""Tasks and scripts a runner is told to run by name: a routine's, the project's, a release, a database's end.

A task or a script named like a routine (`test`, `lint:ci`) or one the project declares (the user vouched for it) may
run; one named for publishing, deploying or releasing is the user's call unless the project declares it; a
framework's task that drops, resets or rolls back a database is refused whatever runs it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import re2

from core.program_calls import Call, Refused, clip

__all__ = ["JS_SCRIPTS", "TASK_NAME", "destroys_data", "releases", "script_name", "task_refusals"]


# A task's or a script's name (`test:ci`), not a path or a command line.
TASK_NAME = re2.compile(r"^[a-z][a-z0-9_-]*(?::[a-z0-9_-]+)*$")
_TASKS = frozenset("fmt ci verify all setup bootstrap".split())  # names task runners use beside the scripts' ones

# Routines' names as JavaScript projects give them to their scripts (`npm run test`), and so to any task runner's.
JS_SCRIPTS = frozenset(
    "dev start build test lint format typecheck check preview serve watch e2e clean generate prepare storybook"
    " coverage".split()
)


def script_name(word: str, call: Call) -> bool:
    """True for a project script or task named like a routine (`test`, `lint`, `test:ci`, `build:web`), or one the
    project declares: a name, not a path or a command line."""
    base = word.split(":", 1)[0]
    if word in call.vouched:
        return bool(TASK_NAME.match(word))
    return bool(TASK_NAME.match(word)) and (base in JS_SCRIPTS or base in _TASKS) and not releases(word)


# Words of a task's name that publish, deploy or release what the project built: irreversible, and the user's call
# (`make deploy-prod`, `just release`, `rake release`, `turbo run publish`), unless the project declares the task.
_RELEASE_WORDS = frozenset("publish release deploy upload ship submit promote rollout push".split())
_NAME_PARTS = re2.compile(r"[^a-z0-9]+")


def releases(name: str) -> bool:
    """True when the task or script `name` is named for publishing, deploying or releasing (`deploy-prod`)."""
    return any(part in _RELEASE_WORDS for part in _NAME_PARTS.split(name.lower()))


def task_refusals(call: Call, names: Sequence[str], what: str) -> Refused:
    """Tasks a runner is told to run by name (`make deploy-prod`): one named for a release is held, unless the
    project declares it (the user vouched for it)."""
    for name in names:
        if releases(name) and name not in call.vouched:
            return [("program", f"`{what} {clip(name)}` publishes or deploys: a release is the user's call")]
    return []


# Tasks that destroy a database or its history, in the frameworks' own words.
_DESTROYS = frozenset(
    "db:drop db:reset db:purge db:schema:load db:wipe db:rollback ecto.drop ecto.reset ecto.rollback flush sqlflush"
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
