"""Failures: what a command's output says of its failure. The line that says what went wrong (evidence for
`playbook why`, never lesson text), a usage error (no such option, command or task), a check's own words that it
failed, and a failure a pipe hid (the pipeline's last program decided its exit status)."""

from __future__ import annotations

import re2

from core.runs import USER_HOME, Run
from core.shell import parse_command

__all__ = ["FAILED", "UNKNOWN", "error_line", "hid_failure", "missing_program"]


# What a program says when it has no such option or subcommand, as the common argument parsers word it (getopt,
# argparse, clap, cobra, Go's flag package, Node), and a task runner with no such task (npm's script, make's
# target, just's recipe, mise's task).
UNKNOWN = re2.compile(
    r"(?i)(?:unknown|unrecognized|unrecognised|invalid|unexpected|no such) (?:option|flag|argument|command|subcommand|"
    r"shorthand flag)|invalid choice|is not a \S+ command|unknown command|flag provided but not defined|bad option"
    r"|which wasn'?t expected|missing script|script not found|no rule to make target|does not contain recipe"
    r"|no task \S+ found|task not found"
)


_EXIT_ONLY = re2.compile(r"(?i)^(?:exit code:? ?-?\d+|exited with code -?\d+|error|failed|command failed)\.?$")


_INFORMATIVE = re2.compile(
    r"(?i)(error|failed|failure|exception|not found|no such|denied|invalid|cannot|can't|could not|unable|"
    r"ignored|refused|unknown|missing|not a |no upstream|permission)"
)


def error_line(output: str) -> str | None:
    """The line of an error that says what went wrong (not `Exit code 1`), without home paths; None if none does.
    Evidence for `playbook why`, never lesson text."""
    lines = [" ".join(line.split()) for line in output.splitlines()[:200]]
    lines = [line for line in lines if line.strip("=-_*✘ ") and not _EXIT_ONLY.match(line)]
    telling = [
        line
        for line in lines
        if (_INFORMATIVE.search(line) or UNKNOWN.search(line)) and not line.lower().startswith("traceback")
    ]
    if not telling:
        return None
    line = USER_HOME.sub("~", telling[0][:400])  # the user's name is not the lesson
    line = line.strip(" ✘[]").removeprefix("ERROR] ").strip()
    return line if len(line) <= 120 else line[:119] + "…"


# A shell's words for a program it could not find (bash, zsh, sh): the command failed, whatever the pipe said.
_NO_PROGRAM = re2.compile(r"(?m)(?:^|: )(?:command not found|zsh: command not found: \S+)$|: not found$")


_SAID_AT = 2_000


# The program a shell said it could not find, as bash, sh and zsh word it (`bash: line 1: vite: command not found`,
# `sh: 1: tsc: not found`, `zsh: command not found: tauri`, `(eval):1: command not found: tauri`).
_MISSING_PROGRAM = re2.compile(
    r"(?m)(?:^|: )([\w.+-]{1,100}): (?:command )?not found$|(?:^|: )command not found: ([\w.+-]{1,100})$"
)


def missing_program(output: str) -> str | None:
    """The program a shell said it could not find in `output` (read at its head and its tail, where a pipe into
    `tail` leaves it), or None."""
    said = output if len(output) <= 2 * _SAID_AT else output[:_SAID_AT] + "\n" + output[-_SAID_AT:]
    found = _MISSING_PROGRAM.search(said)
    return None if found is None else found.group(1) or found.group(2)


def hid_failure(run: Run) -> bool:
    """True when a command ended well only because a pipe hid its failure (`tool --bad 2>&1 | head`: the last
    program of the pipeline decided its exit status): its output says an option or a command does not exist, or
    the shell found no such program, and its line pipes one command into another."""
    if not run.ok or "|" not in run.command or "pipefail" in run.command:
        return False
    # A usage error or a missing program is said at once, before any other output: the head is read (and the tail,
    # where `| tail` leaves it), not all of a long output a filter passed through.
    said = run.output if len(run.output) <= 2 * _SAID_AT else run.output[:_SAID_AT] + "\n" + run.output[-_SAID_AT:]
    if not (UNKNOWN.search(said) or _NO_PROGRAM.search(said)):
        return False
    return any(c.piped for c in parse_command(run.command.strip()).commands)


# A check's output that says it failed (a count of failures that is not zero, an error line, a failed build), and
# a task runner's word that the task it ran failed: mise's `[lint] ERROR task failed`, pnpm's `ELIFECYCLE`, npm's
# `npm ERR!` / `npm error`, make's `make: *** [test] Error 2`, just's `error: Recipe `test` failed`.
FAILED = re2.compile(
    r"\b[1-9]\d* (?:failed|failing|errors?)\b|(?m:^\s*(?:FAIL|FAILED|ERROR|error)(?:\[[\w-]+\])?[: ])|\berror TS\d+:"
    r"|\b(?:build|compilation) failed\b|\bTests? failed\b"
    r"|(?m:^\[[\w:.-]+\] ERROR task failed)|\bELIFECYCLE\b|(?m:^npm (?:ERR!|error) )"
    r"|(?m:^g?make(?:\[\d+\])?: \*\*\* .* Error \d+)"
)
