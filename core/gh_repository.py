"""The repository `gh` had to be told: it could not tell it from the checkout's git remotes (a mirror's or a
proxy's URL), then worked once a command named it (`--repo owner/name`, `GH_REPO`). A rule of the checkout."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath

import re2

from core.corrections import Found
from core.failures import error_line
from core.lessons import Command, Correction
from core.runs import Run, command_key, key_words
from core.shell import SimpleCommand, parse_command

__all__ = ["repository"]


# What `gh` says when no git remote of the checkout is a GitHub repository it knows (a mirror's or a proxy's URL): its
# own words, whether the command failed or a pipe hid it.
_GH_NO_REPOSITORY = re2.compile(
    r"none of the git remotes configured for this repository point to a known GitHub host|no git remotes found"
)
# A GitHub repository as `gh` takes it: `owner/name`, nothing a lesson could not quote.
_REPOSITORY = re2.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$")


def _says_no_repository(output: str) -> bool:
    # A substring test first: every output of a session is read, and most say nothing of remotes.
    return ("GitHub host" in output or "git remotes" in output) and bool(_GH_NO_REPOSITORY.search(output))


def _gh_calls(command: str) -> list[SimpleCommand]:
    """The `gh` commands of a shell line, as its grammar reads them."""
    return [
        c
        for c in parse_command(command.strip()).commands
        if c.words and c.words[0] is not None and PurePosixPath(c.words[0]).name == "gh"
    ]


def _named_repository(call: SimpleCommand) -> str | None:
    """The repository a `gh` command names (`-R o/n`, `--repo o/n`, `--repo=o/n`, `GH_REPO=o/n gh ...`), when it
    is written as one and nothing of it is expanded at run time."""
    words = call.words
    named = [a.split("=", 1)[1] for a in call.assignments if a.startswith("GH_REPO=")]
    for i, word in enumerate(words):
        if word in ("-R", "--repo") and i + 1 < len(words):
            named.append(words[i + 1] or "")
        elif word is not None and word.startswith("--repo="):
            named.append(word.split("=", 1)[1])
    return next((n.strip("'\"") for n in named if _REPOSITORY.match(n.strip("'\""))), None)


def repository(runs: Sequence[Run]) -> list[Found]:
    """`gh` that said no git remote points to a GitHub host, then worked later in the session once a command named
    the repository: one correction, the first such command with its repository (`gh pr view --repo o/n`)."""
    failed_at = next(
        (i for i, run in enumerate(runs) if _says_no_repository(run.output) and _gh_calls(run.command)), None
    )
    if failed_at is None:
        return []
    error = error_line(runs[failed_at].output) or "none of the git remotes point to a known GitHub host"
    for run in runs[failed_at + 1 :]:
        if not run.ok or "gh" not in run.command or _says_no_repository(run.output):
            continue  # (a line without `gh` in it runs no `gh`: the grammar need not read it)
        for call in _gh_calls(run.command):
            named = _named_repository(call)
            if named is None or any(w is None for w in call.words):
                continue
            key = key_words(command_key(tuple(w for w in call.words if w is not None)))
            lesson = Correction(how="repo", failed=Command(words=key), worked=Command(words=(*key, "--repo", named)))
            return [Found(f"correction|repo|gh|{named}", lesson, error, None)]
    return []
