"""Paths `git add` refused because the project's .gitignore ignores them: what goes there stays out of commits,
and forcing it in is never the fix."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

import re2

from core.corrections import PROJECT_PATH, Found
from core.failures import error_line
from core.lessons import Command, Correction
from core.runs import Run, relative
from core.shell import parse_command

__all__ = ["ignored"]


# Git's own words when `git add` is given a path .gitignore ignores; the paths follow, one a line, up to its hints.
_IGNORED = re2.compile(r"The following paths are ignored by one of your \.gitignore files:\n((?:[^\n]+\n?){1,50})")
_FORCE = frozenset({"-f", "--force"})


def _adds(command: str) -> list[tuple[str, ...]]:
    """The `git add` commands of a shell line, each its words after `add`, as the agent wrote them. A line too long
    for the grammar (a commit message in a heredoc) is read a line at a time: each line that is a `git add`."""
    commands = [c.words for c in parse_command(command.strip()).commands]
    if not commands:
        for line in command.splitlines()[:_MOST_LINES]:
            if line.startswith("git add "):
                try:
                    commands.append(tuple(shlex.split(line, comments=True)))
                except ValueError:
                    continue  # an open quote: not a command on its own
    return [
        tuple(w for w in words[2:] if w is not None)
        for words in commands
        if len(words) > 2 and words[0] == "git" and words[1] == "add"
    ]


_MOST_LINES = 200


def _names(words: Sequence[str], path: str) -> bool:
    """True when one of `words` names `path`, or a file or folder inside it."""
    return any(w.removeprefix("./").rstrip("/") == path or w.removeprefix("./").startswith(path + "/") for w in words)


def ignored(runs: Sequence[Run], cwd: str | None) -> list[Found]:
    """Paths of the project that `git add` refused because .gitignore ignores them (git's own words, even where a
    later command hid the exit status), each once: only a path the agent's own `git add` named, and not one the
    session then forced in (there the ignore was the agent's to overrule, as the session shows, no rule)."""
    found: dict[str, Found] = {}
    for i, run in enumerate(runs):
        match = _IGNORED.search(run.output) if "ignored by one of your" in run.output else None
        if match is None:
            continue
        named = [w for words in _adds(run.command) for w in words if not w.startswith("-")]
        for line in match.group(1).splitlines():
            path = line.strip()
            if not path or path.startswith("hint:"):
                break
            path = (relative(path, cwd) if path.startswith("/") else path) or ""
            if not PROJECT_PATH.match(path) or path in found or not _names(named, path):
                continue
            if any(_FORCE & set(words) and _names(words, path) for later in runs[i:] for words in _adds(later.command)):
                continue
            lesson = Correction(how="ignored", failed=Command(words=("git", "add")), ignored=path)
            found[path] = Found(f"correction|ignored|{path}", lesson, error_line(run.output) or "ignored", None)
    return list(found.values())
