"""Scripts made executable: a command that failed on a script without the execute bit, then worked once the
session made it so (`chmod +x`, or `git update-index --chmod=+x` where git records it)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath

import re2

from core.corrections import Found
from core.failures import error_line
from core.lessons import Command, Correction
from core.runs import Run, command_key, key_words, parse
from core.shell import parse_command

__all__ = ["executable"]


# A shell's or a runner's words for a script it could not execute: the script's path (a relative one: the project's).
_NOT_EXECUTABLE = re2.compile(r"(?m)(?:^|[\s:])(\.{0,2}/?[\w.-]+(?:/[\w.-]+)*): Permission denied\s*$")
_MOST_AFTER = 12  # runs after the failure in which the script must have been made executable and the command worked


def _makes_executable(command: str, script: str) -> tuple[str, ...] | None:
    """`chmod +x` or `git update-index --chmod=+x`, as a lesson states it, when a command of the line makes
    `script` executable (named by its path, or a glob or folder that holds it is not enough: its own name)."""
    name = PurePosixPath(script).name
    found: tuple[str, ...] | None = None
    for c in parse_command(command.strip()).commands:
        words = [w for w in c.words if w is not None]
        if not any(PurePosixPath(w).name == name for w in words[1:]):
            continue
        if words[:2] == ["chmod", "+x"] or (words[:1] == ["chmod"] and "u+x" in words):
            found = found or ("chmod", "+x")
        elif words[:2] == ["git", "update-index"] and "--chmod=+x" in words:
            found = ("git", "update-index", "--chmod=+x")  # what git records: the stronger lesson
    return found


def executable(runs: Sequence[Run]) -> list[Found]:
    """A command that failed because a script it ran was not executable (`./script/x.sh: Permission denied`, even
    where a pipe hid the exit status), then worked once the session made that script executable: one correction
    per command, said as the session made it so."""
    found: dict[str, Found] = {}
    for i, run in enumerate(runs):
        match = _NOT_EXECUTABLE.search(run.output) if "Permission denied" in run.output else None
        failed = parse(run.command, run.folder) if match else None
        if match is None or failed is None or match.group(1).startswith("/") or "~" in match.group(1):
            continue
        key = key_words(command_key(failed.words))
        made: tuple[str, ...] | None = None
        for later in runs[i + 1 : i + 1 + _MOST_AFTER]:
            step = _makes_executable(later.command, match.group(1)) if later.ok else None
            if step is not None:
                made = step if made is None or step[0] == "git" else made
                continue
            again = parse(later.command, later.folder)
            if made is None or again is None or key_words(command_key(again.words)) != key:
                continue
            if later.ok and not _NOT_EXECUTABLE.search(later.output) and " ".join(key) not in found:
                lesson = Correction(how="executable", failed=Command(words=key), worked=Command(words=made))
                error = error_line(run.output) or "Permission denied"
                found[" ".join(key)] = Found(f"correction|executable|{' '.join(key)}", lesson, error, None)
            break
    return list(found.values())
