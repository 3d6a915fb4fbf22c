"""Pitfalls: what trips an agent's commands up in a project or its shell. A test command that selected no test at
all, a check whose failure a pipe hid from the work that followed (committed before the check ran again), a shell
that is zsh (its own errors), one with `noclobber` set, and zsh's `path` (a variable of that name is `PATH`)
assigned by a command."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

import re2

from core.candidates import Candidate
from core.failures import FAILED, hid_failure
from core.lessons import Command, HiddenFailure, NothingSelected, ZshShell
from core.runs import HOME_PATH, Run, category_of, command_key, key_words, parse
from core.shell import SimpleCommand, parse_command

__all__ = ["hidden_failures", "nothing_selected", "zsh"]


_NOT_FOUND = re2.compile(r"(?i)not found|no such file|cannot find|does not exist")
_NOTHING_SELECTED = re2.compile(
    r"(?i)(?:(\d+) deselected / 0 selected|collected \d+ items? / (\d+) deselected / 0 selected|no tests ran|"
    r"no tests collected|collected 0 items|0 tests? (?:ran|run)|no test files found)"
)
# zsh's own error lines (Claude Code runs a command through `eval` in the user's shell), for what bash would take
# (not "command not found": bash says that too, and the lesson is about globs and syntax).
_ZSH_ERROR = re2.compile(
    r"(?m)^(?:\(eval\):\d+|zsh(?::\d+)?): (?:parse error|no matches found|unknown file attribute|bad pattern|"
    r"bad substitution|number expected)"
)
# zsh refusing `>` onto a file that exists: only with its `noclobber` option set (bash words it otherwise).
_ZSH_NOCLOBBER = re2.compile(r"(?m)^(?:\(eval\):\d+|zsh(?::\d+)?): file exists: ")
# A command that sets a shell variable named `path` (zsh ties it to `PATH`), and zsh's own word that a program was
# then not found. (The grammar's reading leaves a loop's body and a bare assignment out: the text is read.)
_ASSIGNS_PATH = re2.compile(
    r"(?:^|[\s;&|({])(?:(?:local|export|typeset|declare|readonly)\s+)?path=|\bfor\s+path\s+in\b"
)
_ZSH_NOT_FOUND = re2.compile(r"(?m)^(?:\(eval\):\d+|zsh(?::\d+)?): command not found: ")
_FILTERS = frozenset({"tail", "head", "grep", "rg", "sed", "awk", "cut", "sort", "uniq", "less", "more", "tee", "wc"})
_CHECKS = frozenset({"test", "lint", "typecheck", "build"})


def nothing_selected(runs: Sequence[Run]) -> list[Candidate]:
    """Test commands whose output says they selected no test at all (`0 selected`, `no tests ran`), with the
    selector that matched nothing (`-k`, `-m`, `--grep`, `-t`) and how many tests it deselected."""
    found: list[Candidate] = []
    for run in runs:
        match = _NOTHING_SELECTED.search(run.output)
        parsed = parse(run.command, run.folder)
        if match is None or parsed is None or _NOT_FOUND.search(run.output):
            continue
        if category_of(command_key(parsed.words)) != "test":
            continue
        words = list(parsed.words)
        deselected = next((g for g in (match.group(1), match.group(2)) if g), None)
        selector = next(
            ((w, words[i + 1]) for i, w in enumerate(words[:-1]) if w in ("-m", "-k", "--grep", "-t")), None
        )
        # The command's name and the selector, nothing else it was given: an option's value may be a secret
        # (`--api-token ...`, round 9), and no other word says why nothing was selected.
        shown = key_words(command_key(words)) + (selector or ())
        if any(w.startswith("/") or HOME_PATH.search(w) for w in shown):
            continue
        lesson = NothingSelected(
            command=Command(words=shown),
            selector=" ".join(selector) if selector else None,
            deselected=int(deselected) if deselected else None,
        )
        found.append(
            Candidate(
                key=f"pitfall|nothing-selected|{command_key(words)}|{' '.join(selector) if selector else ''}",
                section="MISTAKES TO AVOID",
                lesson=lesson,
                trigger=" ".join(selector) if selector else command_key(words),
            )
        )
    return found


def hidden_failures(runs: Sequence[Run]) -> list[Candidate]:
    """Checks (tests, lint, type-check, a build) that ended well only because a pipe hid their failure: the
    pipeline's last program (`tail`, `head`, `grep`) decided its exit status, while the output says it failed; and
    the session then committed, pushed or opened a pull request before it ran the check again (`_went_on`)."""
    found: list[Candidate] = []
    for at, run in enumerate(runs):
        if not run.ok or "pipefail" in run.command or "PIPESTATUS" in run.command or not FAILED.search(run.output):
            continue
        if hid_failure(run):
            continue  # a usage error (no such option or command): the check never ran; the correction reads it
        simple = [c for c in parse_command(run.command.strip()).commands if c.words and c.words[0] != "cd"]
        # The check is the command the pipe reads (`ruff check && ty check | tail`: `ty check`), not the line's first.
        piped_at = next((i for i, c in enumerate(simple) if c.piped), 0)
        producer = simple[piped_at - 1] if piped_at else None
        if producer is None or producer.piped or any(w is None for w in producer.words):
            continue
        filters = [c.words[0] for c in simple[piped_at:] if c.piped and c.words and c.words[0] in _FILTERS]
        parsed = parse(" ".join(shlex.quote(str(w)) for w in producer.words), run.folder)
        if not filters or parsed is None or category_of(command_key(parsed.words)) not in _CHECKS:
            continue
        key = key_words(command_key(parsed.words))
        if not _went_on(runs, at, key, simple[piped_at:]):
            continue  # the check was run again before any work was handed on: its failure was read, not hidden
        lesson = HiddenFailure(command=Command(words=key), filter=str(filters[-1]))
        found.append(
            Candidate(
                key=f"pitfall|hidden|{' '.join(key)}|{filters[-1]}",
                section="MISTAKES TO AVOID",
                lesson=lesson,
                trigger=" ".join(key),
            )
        )
    return found


# How far after a hidden failure the session is read for what it did next (a crafted session of thousands of piped
# failures costs no more than this many runs each).
_WENT_ON_WINDOW = 100


# git's options that take the next word as their value (`git -C dir commit`).
_GIT_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})


def _hands_on(words: Sequence[str | None]) -> bool:
    """True for a command that hands work on as done: a commit, a push, a pull request opened (git's subcommand
    read past its own options: `git -C dir commit`, never `git stash push`)."""
    plain = [w for w in words if w is not None]
    if plain[:1] == ["git"]:
        rest = plain[1:]
        while rest and rest[0].startswith("-"):
            rest = rest[2:] if rest[0] in _GIT_VALUED else rest[1:]
        return rest[:1] in (["commit"], ["push"])
    return plain[:3] == ["gh", "pr", "create"]


def _went_on(runs: Sequence[Run], at: int, key: Sequence[str], after: Sequence[SimpleCommand]) -> bool:
    """True when, after the check `key` of `runs[at]` failed behind a pipe, the session committed, pushed or opened a
    pull request (in the same line after the pipe, or in a later run) before it ran that check again: the pipe hid
    the failure from the work that followed. A check run again first was read and looked at again (a session that
    runs failing tests on purpose, to see them fail, is not misled): nothing says the pipe hid anything."""
    if any(c.words and _hands_on(c.words) for c in after):
        return True
    check = " ".join(key)
    for later in runs[at + 1 : at + 1 + _WENT_ON_WINDOW]:
        if later.rejected:
            continue
        for c in parse_command(later.command.strip()).commands:
            if c.words and _hands_on(c.words):
                return True
            if check in " ".join(str(w) for w in c.words):
                return False
    return False


def zsh(runs: Sequence[Run]) -> list[Candidate]:
    """The shell is zsh when its own errors say so (`zsh: no matches found`, `(eval):1: parse error near`); it has
    `noclobber` set when zsh refused a redirection onto a file that exists (`(eval):1: file exists: /tmp/x`)."""
    said = sum(1 for run in runs if not run.ok and _ZSH_ERROR.search(run.output))
    tied = sum(
        1
        for run in runs
        if "path" in run.command and _ASSIGNS_PATH.search(run.command) and _ZSH_NOT_FOUND.search(run.output)
    )
    clobber = sum(1 for run in runs if not run.ok and "file exists" in run.output and _ZSH_NOCLOBBER.search(run.output))
    seen = (
        ("pitfall|zsh", ZshShell(), "zsh", said),
        ("pitfall|zsh|path", ZshShell(path=True), "command not found", tied),
        ("pitfall|zsh|noclobber", ZshShell(noclobber=True), "file exists", clobber),
    )
    return [
        Candidate(key=key, section="MISTAKES TO AVOID", lesson=lesson, trigger=trigger, count=count)
        for key, lesson, trigger, count in seen
        if count
    ]
