"""Corrections: a command that failed and the close variant of it that then worked, said as a rule (another folder,
a flag added, another program, an option or a wrapper the machine does not have, a pull or a build that had to run
first, an absolute path where a relative one broke after a `cd`). Never a file path as the fix, never a workaround
that switches a safeguard off; the error's words are evidence, never lesson text; a fix that only tool output
suggested is marked (`taint`). A failure of an interpreter (`python3`, `node`, `ruby`) that named a module it
could not import (`No module named 'yaml'`, `Cannot find module`, `cannot load such file`) is a fact about that
dependency, not about the program, whose other calls may import nothing of the kind: where another program then
worked, the lesson is that the first lacks the project's packages (`module`), naming the module only when its name
is a plain dotted identifier. A tool (`pytest`) loads the same code on every call: its correction stays one. And
`gh` that could not tell the GitHub repository from the checkout's git remotes (a mirror's or a proxy's URL), then
worked once told which (`--repo owner/name`, `GH_REPO`), is a rule of the checkout (`repository`); so is a folder
`git add` refused because the project's .gitignore ignores it (`ignored`): what goes there stays out of commits,
and forcing it in is never the fix; and a script a command ran that was not executable until the session made it
so (`executable`), as git records it where the session did (`git update-index --chmod=+x`); and a git command
Codex's sandbox refused to let write `.git` (`Operation not permitted`) that got past it once it ran with the
escalated permissions the user approves (`sandboxed`); and a call a hook the user configured refused, naming
another program, that then worked in the shell (`hooked`)."""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import NamedTuple

import re2

from core.allowlist import Vouched, words_refusals
from core.lessons import Command, Correction
from core.models import SessionMessage
from core.programs import INTERPRETERS, RUNS_ANYTHING, SHELLS, program_family
from core.runs import (
    SHELL_TOOLS,
    USER_HOME,
    Parsed,
    Run,
    category_of,
    command_key,
    command_of,
    key_words,
    parse,
    relative,
)
from core.shell import SimpleCommand, parse_command

__all__ = [
    "Found",
    "corrections",
    "escalated",
    "executable",
    "flat",
    "hid_failure",
    "hooked",
    "ignored",
    "repository",
    "sandboxed",
    "warned",
]


class Found(NamedTuple):
    """One correction: its key (the same lesson in any session), the typed lesson, the failure's line (evidence),
    and why it must not be exported unseen (None: nothing)."""

    key: str
    lesson: Correction
    error: str
    taint: str | None


# What may run a program that failed on its own (`pytest` -> `python -m pytest`, `uv run pytest`).
_RUNNER_PREFIXES = frozenset(
    "python -m|python3 -m|uv run|npx|pnpm exec|pnpm|yarn|bunx|bun run|bundle exec|poetry run|pdm run|hatch run"
    "|pipenv run|rye run|npm exec|go run|cargo run --".split("|")
)


_EXIT_ONLY = re2.compile(r"(?i)^(?:exit code:? ?-?\d+|exited with code -?\d+|error|failed|command failed)\.?$")


_INFORMATIVE = re2.compile(
    r"(?i)(error|failed|failure|exception|not found|no such|denied|invalid|cannot|can't|could not|unable|"
    r"ignored|refused|unknown|missing|not a |no upstream|permission)"
)


# What Python, Node and Ruby say when a program cannot import a module; the name it could not load (evidence: only
# a name `_MODULE_NAME` admits is ever written into a lesson).
_MISSING_MODULE = re2.compile(
    r"No module named '([^'\n]{1,200})'|No module named ([^\s']{1,200})"
    r"|Cannot find (?:module|package) '([^'\n]{1,200})'|cannot load such file -- (\S{1,200})"
)
_MODULE_NAME = re2.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")
# Programs that run the code they are given: what one call imports says nothing of the next.
_INTERPRETER = re2.compile(r"^(?:python(?:\d+(?:\.\d+)*)?|node|ruby)$")


def _missing_modules(output: str) -> tuple[str, ...] | None:
    """None when the failure does not say a module could not be imported; else the module its last such line named,
    when that name is a plain dotted identifier (else nothing: the name is not quoted). A path (`Cannot find module
    './build.js'`) is a missing file, not a dependency: None."""
    found = [next((g for g in m if g), "") for m in _MISSING_MODULE.findall(output[-20_000:])]
    if not found:
        return None
    name = found[-1]  # the error that ended the run: a traceback ends with it, so the output is read from its end
    if name.startswith((".", "/", "~")):
        return None
    return (name,) if _MODULE_NAME.match(name) else ()


# Tests that ran and failed: the next run after a code change passing is work, not a correction.
_TEST_FAILURES = re2.compile(r"\d+ failed\b|\bFAILED\b|AssertionError|\d+\) test |\bFAIL\b|[Tt]ests? failed")


_MOST_CORRECTIONS = 40  # per session: more than a real session shows (see `_corrections`)


def _error_line(output: str) -> str | None:
    """The line of an error that says what went wrong (not `Exit code 1`), without home paths; None if none does.
    Evidence for `playbook why`, never lesson text."""
    lines = [" ".join(line.split()) for line in output.splitlines()[:200]]
    lines = [line for line in lines if line.strip("=-_*✘ ") and not _EXIT_ONLY.match(line)]
    telling = [
        line
        for line in lines
        if (_INFORMATIVE.search(line) or _UNKNOWN.search(line)) and not line.lower().startswith("traceback")
    ]
    if not telling:
        return None
    line = USER_HOME.sub("~", telling[0][:400])  # the user's name is not the lesson
    line = line.strip(" ✘[]").removeprefix("ERROR] ").strip()
    return line if len(line) <= 120 else line[:119] + "…"


def flat(text: str) -> str:
    """Text as a copy of a command is compared: quotes dropped, whitespace as one space (`make "release"` is a
    copy of `make release`; a doubled space must not hide one)."""
    return " ".join(text.replace('"', " ").replace("'", " ").split())


def _taint(fix: Sequence[str], read: Sequence[str], prompts: Sequence[str], *, least: int = 12) -> str | None:
    """Why the command `fix` (its words) rests only on what the agent read: it occurs in tool output before the
    agent ran it (`read`, already flat), and in none of the user's prompts (flat). A short fix (`make`) is in
    every output; `least` is the length a fix must have to count as copied."""
    needle = flat(" ".join(fix))
    if len(needle) < least or any(needle in p for p in prompts):
        return None
    if any(needle in r for r in read):
        return f"its fix `{needle[:60]}` was copied from tool output, not from anything the user wrote"
    return None


def _bypasses(words: Sequence[str]) -> bool:
    """True when running `words` would switch a safeguard off or run as another user: a workaround of that kind is
    never a lesson (`git push --force` worked, `sudo npm` worked, `mvn package -DskipTests` worked). Besides what
    the allow-list knows of each program, any option shaped like forcing, skipping, ignoring or disabling is one:
    a rule cannot tell which of those is harmless, so none is taught as the fix."""
    if any(_WEAKENING.match(w) for w in words[1:]):
        return True
    compose = tuple(words[:3]) == ("docker", "compose", "down") or tuple(words[:2]) == ("docker-compose", "down")
    if compose and {"-v", "--volumes"} & set(words):
        return True  # it worked by deleting the services' data: a way to reset, never the fix of a failure
    return any(r.rule in ("bypass", "privilege") for r in words_refusals(words, Vouched()))


def _flag_name(word: str) -> str:
    return word.split("=", 1)[0]


# A check's options known to leave its verdict to the code: fixing or writing the code it found wrong, saying more,
# refusing to write snapshots (`--ci`). Any other added option may be what made it pass.
_KEEPS_THE_VERDICT = frozenset({"--fix", "--write", "--verbose", "-v", "--ci"})
# What decides a verdict on the code: a failure of one of them is the code's, never the command's.
_CHECKS: frozenset[str | None] = frozenset({"test", "lint", "format", "typecheck"})


# Programs that run a project's checks, or its scripts (which may be checks): a name alone (`npm t`, `make check`,
# `bun run verify`) does not say which of their commands decide a verdict on the code.
_RUNS_CHECKS = frozenset(
    "npm pnpm yarn bun npx pnpx bunx deno node make just mise task cargo go gradle gradlew mvn mvnw dotnet uv uvx"
    " poetry pipenv hatch tox nox bazel bazelisk pytest python python3 php composer bundle rake mix swift".split()
)


def _relaxes(lesson: Correction) -> bool:
    """True when the working command of `lesson` added options the failed one lacked, beyond those known to leave a
    check's verdict to the code (`_KEEPS_THE_VERDICT`), where they may be what made it pass: after any failure
    (`npm test -- -u` rewrote the snapshots, `tsc --noCheck`, `npm ci --reg=mirror.example`), and after a usage
    error on a check or on a program that runs checks or scripts, or with a value (`--updateSnapshott` refused,
    then `--updateSnapshot`). What is left: a variant that drops options, adds only those, or spells a refused
    option right on a program that runs no checks (`gh pr list --jsonx`, then `--json`)."""
    if lesson.worked is None or lesson.how not in ("flag", "option"):
        return False
    had = {_flag_name(w) for w in lesson.failed.words if w.startswith("-")}
    added = [
        w
        for w in lesson.worked.words[1:]
        if w.startswith("-") and w != "--" and _flag_name(w) not in had | _KEEPS_THE_VERDICT
    ]
    if not added or lesson.how == "flag":
        return bool(added)
    key = command_key(lesson.failed.words)
    program = program_family(PurePosixPath(lesson.failed.words[0]).name)
    return category_of(key) in _CHECKS or program in _RUNS_CHECKS or any("=" in w for w in added)


def _unknown_variant(failed: Parsed, worked: Parsed, error: str) -> tuple[str, tuple[str, ...]] | None:
    """When the failure said an option or a command does not exist: (`option`, the options the working command
    dropped) when it is the same command without them, or (`program`, the working command's name) when it is the
    failed one without its first words (a wrapper the machine does not have: `rtk bun run test` -> `bun run test`)."""
    fk, wk = command_key(failed.words), command_key(worked.words)
    if fk == wk:
        kept = {_flag_name(w) for w in worked.words[1:] if w.startswith("-")}
        dropped = tuple(
            dict.fromkeys(
                _flag_name(w)
                for w in failed.words[1:]
                if w.startswith("-") and _flag_name(w) not in kept and _flag_name(w) in error
            )
        )
        return ("option", dropped) if dropped else None
    n, m = len(failed.words), len(worked.words)
    if 0 < m < n and tuple(failed.words[n - m :]) == tuple(worked.words) and failed.words[n - m - 1] != "--":
        if any(PurePosixPath(w).name in error for w in failed.words[n - m : n - m + 1]):
            return "program", key_words(wk)
    return _other_subcommand(failed, worked, error)


# What only asks a program about itself: a variant that does this found out what to run, it is not the fix.
_ASKS_HELP = frozenset({"--help", "-h", "help"})


def _other_subcommand(failed: Parsed, worked: Parsed, error: str) -> tuple[str, tuple[str, ...]] | None:
    """(`subcommand`, ()) when the failure said a command does not exist, named the subcommand the failed command
    used (`cargo nextest run`: "no such command: `nextest`"), and the working command is the same program with
    another subcommand on the same things (`cargo test -p core`): nothing of its own but options."""
    fk, wk = key_words(command_key(failed.words)), key_words(command_key(worked.words))
    if failed.words[0] != worked.words[0] or _ASKS_HELP & set(worked.words[1:]):
        return None
    at = next((i for i, (f, w) in enumerate(zip(fk, wk, strict=False)) if f != w), min(len(fk), len(wk)))
    if at == 0 or at >= len(fk) or fk[at] not in _error_words(error):
        return None
    said = set(failed.words[len(fk) :])
    if all(w.startswith("-") or w in said for w in worked.words[len(wk) :]):
        return "subcommand", ()
    return None


_ERROR_WORD_BREAK = re2.compile(r"[^\w.:-]+")


def _error_words(error: str) -> set[str]:
    """The words of a failure's output (its head: where a program says what it did not know)."""
    return {w.strip(".:") for w in _ERROR_WORD_BREAK.split(error[:2000])}


def _variant(failed: Parsed, worked: Parsed, cwd: str | None) -> tuple[str, tuple[str, ...]] | None:
    """(how `worked` differs from `failed`, the words that say it: the working program, folder or added flags)
    when it is a close variant that says a rule; None when the two are different commands or differ only in what
    they work on."""
    fk, wk = command_key(failed.words), command_key(worked.words)
    f_prog, w_prog = PurePosixPath(failed.words[0]).name, PurePosixPath(worked.words[0]).name
    f_rest, w_rest = list(failed.words[1:]), list(worked.words[1:])
    f_where, w_where = relative(failed.folder, cwd), relative(worked.folder, cwd)
    if failed.words[0] != worked.words[0] and f_prog == w_prog and f_rest == w_rest:
        if worked.words[0].startswith(("/", "~", "$")):
            return None  # where this one machine keeps it (`/Users/me/.cache/.../node`): no rule of the project
        return "program", (worked.words[0],)  # the same program from elsewhere: `pytest` -> `.venv/bin/pytest`
    n, m = len(failed.words), len(worked.words)
    if (
        m > n
        and worked.words[m - n] == failed.words[0]
        and list(worked.words[m - n + 1 :]) == f_rest
        and " ".join(worked.words[: m - n]) in _RUNNER_PREFIXES
    ):
        return "program", tuple(worked.words[: m - n + 1])  # `pytest` -> `python -m pytest`
    if f_prog != w_prog:
        # Another program for the same job, with the same arguments (`npm install` -> `pnpm install`); two programs
        # run bare share nothing (`yes` failed, `pwd` worked): no job in common says the one replaces the other.
        if (f_rest and f_rest == w_rest) or (fk.split(" ", 1)[1:] == wk.split(" ", 1)[1:] and len(fk.split()) > 1):
            return "program", tuple(worked.words[: len(wk.split())])
        return None
    if w_where and w_where != f_where:
        # The same command from another folder; the failed one named that folder in a path instead.
        names = {PurePosixPath(w).name for w in w_rest}
        if fk == wk or any(PurePosixPath(w).name in names for w in f_rest):
            return "folder", (w_where,)
    if fk != wk:
        return None
    added = [w for w in w_rest if w.startswith("-") and w not in f_rest]
    if added and {w for w in w_rest if not w.startswith("-")} <= {w for w in f_rest if not w.startswith("-")}:
        return "flag", tuple(added)  # the flag, on the same things (or some of them)
    pairs = [(f, w) for f, w in zip(f_rest, w_rest, strict=False) if f != w]
    if (
        len(f_rest) == len(w_rest)
        and pairs
        and all(
            w.startswith("/") and not f.startswith("/") and w.endswith("/" + f.removeprefix("./")) for f, w in pairs
        )
    ):
        return "absolute", ()
    return None


# What a program says when it has no such option or subcommand, as the common argument parsers word it (getopt,
# argparse, clap, cobra, Go's flag package, Node), and a task runner with no such task (npm's script, make's
# target, just's recipe, mise's task).
_UNKNOWN = re2.compile(
    r"(?i)(?:unknown|unrecognized|unrecognised|invalid|unexpected|no such) (?:option|flag|argument|command|subcommand|"
    r"shorthand flag)|invalid choice|is not a \S+ command|unknown command|flag provided but not defined|bad option"
    r"|which wasn'?t expected|missing script|script not found|no rule to make target|does not contain recipe"
    r"|no task \S+ found|task not found"
)


# A shell's words for a program it could not find (bash, zsh, sh): the command failed, whatever the pipe said.
_NO_PROGRAM = re2.compile(r"(?m)(?:^|: )(?:command not found|zsh: command not found: \S+)$|: not found$")


_SAID_AT = 2_000


def hid_failure(run: Run) -> bool:
    """True when a command ended well only because a pipe hid its failure (`tool --bad 2>&1 | head`: the last
    program of the pipeline decided its exit status): its output says an option or a command does not exist, or
    the shell found no such program, and its line pipes one command into another."""
    if not run.ok or "|" not in run.command or "pipefail" in run.command:
        return False
    # A usage error or a missing program is said at once, before any other output: the head is read (and the tail,
    # where `| tail` leaves it), not all of a long output a filter passed through.
    said = run.output if len(run.output) <= 2 * _SAID_AT else run.output[:_SAID_AT] + "\n" + run.output[-_SAID_AT:]
    if not (_UNKNOWN.search(said) or _NO_PROGRAM.search(said)):
        return False
    return any(c.piped for c in parse_command(run.command.strip()).commands)


# Options shaped like switching something off: forcing, skipping, ignoring, disabling, "no-" anything, exiting 0.
_WEAKENING = re2.compile(
    r"(?i)^(?:-f+|--force\S*|--no-\S+|--skip\S*|-D\S*skip\S*|--ignore\S*|--disable\S*|--unsafe\S*|--insecure"
    r"|--allow-\S+|--exit-zero|--yes|-y|--accept-\S+|--dangerously\S*|--bypass\S*|--without-\S+)$"
)


# Commands that bring in others' work: a push refused until a pull ran.
_PREPARING = frozenset({"git pull", "git fetch"})


_PLAIN_WORD = re2.compile(r"^[\w.:@=+-]+$")


# Commands that only look: one of them between a failure and its variant does not explain the variant working.
_LOOKING = re2.compile(
    r"^(?:ls|cat|head|tail|grep|rg|find|fd|pwd|which|echo|wc|tree|stat|file"
    r"|git (?:status|log|diff|show|ls-files|branch)|\S+ --help|\S+ --version)\b"
)


def _prepares(parsed: Parsed) -> bool:
    """True for a command that gets a project ready for another (a build, an install, a pull of others' work)."""
    key = command_key(parsed.words)
    return key in _PREPARING or category_of(key) in ("build", "install")


def _plain_words(words: Sequence[str]) -> tuple[str, ...]:
    """A command's words as a lesson may state them: all of them when none is a path or a value of this one run,
    else its name (`git pull --rebase origin main`; `bun run build`)."""
    return tuple(words) if all(_PLAIN_WORD.match(w) for w in words) else key_words(command_key(words))


def _looks(parsed: Parsed) -> bool:
    return bool(_LOOKING.match(" ".join(parsed.words)))


def _correction(
    how: str, part: tuple[str, ...], failed: Parsed, worked: Parsed, modules: tuple[str, ...] = ()
) -> tuple[str, Correction]:
    """The key and the typed lesson of one correction."""
    fk = key_words(command_key(failed.words))
    wk = key_words(command_key(worked.words))
    if how == "module":  # one lesson per program and its fix, whichever module a session found missing first
        return f"correction|module|{fk[0]}|{' '.join(part)}", Correction(
            how="module", failed=Command(words=fk[:1]), worked=Command(words=part), modules=modules
        )
    if how == "program":
        return f"correction|program|{' '.join(fk)}|{' '.join(part)}", Correction(
            how="program", failed=Command(words=fk), worked=Command(words=part)
        )
    if how == "folder":
        return f"correction|folder|{' '.join(wk)}|{part[0]}", Correction(
            how="folder", failed=Command(words=wk), worked=Command(words=wk, folder=part[0])
        )
    if how == "flag":
        return f"correction|flag|{' '.join(fk)}|{' '.join(part)}", Correction(
            how="flag", failed=Command(words=fk), worked=Command(words=fk + part), added=part
        )
    if how == "option":
        had = {_flag_name(w) for w in failed.words}
        added = tuple(w for w in worked.words[len(wk) :] if w.startswith("-") and _flag_name(w) not in had)
        return f"correction|option|{' '.join(fk)}|{' '.join(part)}", Correction(
            how="option",
            failed=Command(words=fk + part),
            worked=Command(words=wk + tuple(dict.fromkeys(_flag_name(w) for w in added))),
        )
    if how == "subcommand":  # the same program, another of its commands: said as an option it does not have
        had = {_flag_name(w) for w in failed.words}
        added = tuple(
            dict.fromkeys(
                _flag_name(w) for w in worked.words[len(wk) :] if w.startswith("-") and _flag_name(w) not in had
            )
        )
        return f"correction|option|{' '.join(fk)}|{' '.join(wk)}", Correction(
            how="option", failed=Command(words=fk), worked=Command(words=wk + added)
        )
    if how == "before":
        return f"correction|before|{' '.join(fk)}|{' '.join(part)}", Correction(
            how="before", failed=Command(words=fk), worked=Command(words=part)
        )
    return "correction|absolute", Correction(how="absolute", failed=Command(words=fk))


def corrections(
    runs: Sequence[Run], cwd: str | None, read: Sequence[str], read_before: Mapping[int, int], prompts: Sequence[str]
) -> list[Found]:
    """Failed commands and the variant that then worked (at most `_MOST_CORRECTIONS`: each is checked against
    everything read before it, so a session crafted with thousands of pairs costs no more than this many)."""
    found: list[Found] = []
    for i, run in enumerate(runs):
        if (run.ok and not hid_failure(run)) or run.rejected:
            continue
        if len(found) >= _MOST_CORRECTIONS:
            break
        failed = parse(run.command, run.folder)
        error = _error_line(run.output)
        if failed is None or error is None or _TEST_FAILURES.search(run.output):
            continue
        missing = _missing_modules(run.output) if _INTERPRETER.match(PurePosixPath(failed.words[0]).name) else None
        prepared: Parsed | None = None  # a build, an install or a pull that ran after the failure
        prepared_at = -1
        for later in runs[i + 1 : i + 7]:
            if not later.ok or hid_failure(later):
                continue
            worked = parse(later.command, later.folder)
            if worked is None:
                continue
            how: tuple[str, tuple[str, ...]] | None = None
            if prepared is not None and command_key(worked.words) == command_key(failed.words):
                how = ("before", _plain_words(prepared.words))
            elif _UNKNOWN.search(run.output):
                how = _unknown_variant(failed, worked, run.output)
            if how is None:
                how = _variant(failed, worked, cwd)
            if how is None:
                if (
                    prepared is None
                    and _prepares(worked)
                    and command_key(worked.words) != command_key(failed.words)
                    and not _bypasses(worked.words)
                ):
                    prepared = worked  # the same command may work after it: then it is what this one needs first
                    prepared_at = later.index
                    continue
                if not _looks(worked):
                    break  # something else changed in between (an install, an edit by command): not the fix
                continue
            if how[0] == "program" and missing is not None:
                how = ("module", how[1])  # the program worked for what needs no module: it lacks one, not wrong
            key, lesson = _correction(how[0], how[1], failed, worked, missing or ())
            if lesson.worked is not None and (_bypasses(lesson.worked.words) or _relaxes(lesson)):
                break  # a workaround that switches a safeguard off, or a check's verdict, is never a lesson
            taint = (
                _taint(prepared.words, read[: read_before.get(prepared_at, 0)], prompts, least=4)
                if how[0] == "before" and prepared is not None
                else _taint(worked.words, read[: read_before.get(later.index, 0)], prompts)
            )
            found.append(Found(key, lesson, error, taint))
            break
    return found


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
    error = _error_line(runs[failed_at].output) or "none of the git remotes point to a known GitHub host"
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


# Git's own words when `git add` is given a path .gitignore ignores; the paths follow, one a line, up to its hints.
_IGNORED = re2.compile(r"The following paths are ignored by one of your \.gitignore files:\n((?:[^\n]+\n?){1,50})")
# A path inside the project as a lesson may name it: plain names joined by slashes, none of them `.` or `..`.
_PROJECT_PATH = re2.compile(r"^\.?[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}(?:/\.?[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}){0,5}$")
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
            if not _PROJECT_PATH.match(path) or path in found or not _names(named, path):
                continue
            if any(_FORCE & set(words) and _names(words, path) for later in runs[i:] for words in _adds(later.command)):
                continue
            lesson = Correction(how="ignored", failed=Command(words=("git", "add")), ignored=path)
            found[path] = Found(f"correction|ignored|{path}", lesson, _error_line(run.output) or "ignored", None)
    return list(found.values())


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
                error = _error_line(run.output) or "Permission denied"
                found[" ".join(key)] = Found(f"correction|executable|{' '.join(key)}", lesson, error, None)
            break
    return list(found.values())


# How Codex asks to run a shell command outside its sandbox (the user approves each such call, or a rule they
# saved does): `sandbox_permissions: require_escalated`, or `with_escalated_permissions: true` in older versions.
_ESCALATED = "require_escalated"


def escalated(messages: Sequence[SessionMessage]) -> frozenset[str]:
    """The ids of the calls that asked to run outside the agent's sandbox (Codex's escalated permissions)."""
    found: set[str] = set()
    for m in messages:
        if m.kind != "tool_use" or not m.tool_use_id or "escalated" not in (m.tool_input or ""):
            continue
        try:
            value = json.loads(m.tool_input or "")
        except ValueError:
            continue
        if isinstance(value, dict) and (
            value.get("sandbox_permissions") == _ESCALATED or value.get("with_escalated_permissions") is True
        ):
            found.add(m.tool_use_id)
    return frozenset(found)


# A write under the repository's `.git` that the sandbox refused (`cannot open '.git/FETCH_HEAD': Operation not
# permitted`, `Unable to create '.../.git/index.lock': Read-only file system`).
_GIT_READ_ONLY = re2.compile(r"\.git/[^\s'\"]*['\"]?:?\s*(?:Operation not permitted|Read-only file system)")
_MOST_RETRIES = 3  # runs after the refusal in which the same command must have asked to run outside the sandbox


def sandboxed(runs: Sequence[Run], outside: frozenset[str]) -> list[Found]:
    """A git command the sandbox refused to let write `.git`, then run again with escalated permissions (`outside`:
    the calls that asked for them), which got past that refusal: one correction a session (the sandbox keeps
    `.git` read-only for every git command that writes it). The retry need not succeed for other reasons (no
    network, a key): it is the sandbox's refusal that it got past."""
    for i, run in enumerate(runs):
        if run.ok or run.call_id in outside or ".git/" not in run.output or not _GIT_READ_ONLY.search(run.output):
            continue
        failed = parse(run.command, run.folder)
        if failed is None or PurePosixPath(failed.words[0]).name != "git" or len(failed.words) < 2:
            continue
        key = command_key(failed.words)
        for later in runs[i + 1 : i + 1 + _MOST_RETRIES]:
            again = parse(later.command, later.folder)
            if later.call_id not in outside or again is None or command_key(again.words) != key:
                continue
            if _GIT_READ_ONLY.search(later.output):
                break
            lesson = Correction(how="sandbox", failed=Command(words=("git", failed.words[1])))
            return [Found("correction|sandbox|git", lesson, _error_line(run.output) or "Operation not permitted", None)]
    return []


# Claude Code's words when a PreToolUse hook refused a call: the tool, the hook's command in brackets, then the
# hook's own message. Claude Code writes it in place of the call's result (a shell command that failed begins
# `Exit code N` instead), so a program's output cannot pass for it.
_HOOK_REFUSED = re2.compile(r"^PreToolUse:(\w+) hook (?:error|blocking error)[^:\n]*: (?:\[[^\]\n]*\]: )?")
_HOOK_WORD = re2.compile(r"[\w.-]+")


def hooked(messages: Sequence[SessionMessage], runs: Sequence[Run]) -> list[Found]:
    """A call a hook of the user's refused (their configuration: the hook's message is theirs, not a page's), whose
    message named a program the agent then ran in the shell (`runs`, the session's), and it worked within the next
    few commands: one
    correction per refused tool or command, said as the program that worked (`WebFetch` -> `defuddle parse`)."""
    if not any(m.is_error and m.kind == "tool_result" and (m.text or "").startswith("PreToolUse:") for m in messages):
        return []  # most sessions: no hook refused anything
    calls = {m.tool_use_id: m for m in messages if m.kind == "tool_use" and m.tool_use_id and not m.is_sidechain}
    by_call = {run.call_id: run for run in runs}
    found: dict[str, Found] = {}
    refused: tuple[tuple[str, ...], set[str], str] | None = None  # what was refused, the message's words, its line
    after = 0
    for m in messages:
        if m.kind != "tool_result" or m.is_sidechain or m.tool_use_id not in calls:
            continue
        call = calls[m.tool_use_id]
        hook = _HOOK_REFUSED.match(m.text or "") if m.is_error else None
        if hook is not None and hook.group(1) == call.tool_name:
            what: tuple[str, ...] = (hook.group(1),)
            if call.tool_name in SHELL_TOOLS and (shell := command_of(call.tool_input)) is not None:
                parsed = parse(*shell)
                what = key_words(command_key(parsed.words)) if parsed is not None else what
            message = (m.text or "")[hook.end() :]
            refused, after = (what, set(_HOOK_WORD.findall(message)), _error_line(message) or "refused by a hook"), 0
            continue
        run = by_call.get(m.tool_use_id or "")
        if refused is None or run is None:
            continue
        after += 1
        worked = parse(run.command, run.folder) if run.ok else None
        if (
            worked is not None
            and _instead(refused[0], worked.words)
            and PurePosixPath(worked.words[0]).name in refused[1]
        ):
            key = " ".join(refused[0])
            lesson = Correction(
                how="hook", failed=Command(words=refused[0]), worked=Command(words=key_words(command_key(worked.words)))
            )
            found.setdefault(key, Found(f"correction|hook|{key}", lesson, refused[2], _HOOK_NAMED))
            refused = None
        elif after >= _MOST_RETRIES:
            refused = None
    return list(found.values())


# A hook's message is configuration, the user's or a repository's (`.claude/settings.json` comes with a clone), and
# may name any program: what it asked for waits for a person (`curl`, `scp`, `nc` were named in an attack).
_HOOK_NAMED = "the program came from a hook's message, which a cloned repository may have written: a person reads it"


def _instead(refused: Sequence[str], words: Sequence[str]) -> bool:
    """True when `words`, a command a hook's message named, may be taught as what to use instead of the `refused`
    call: another program than the refused one (the same program with other arguments is the hook's policy for that
    program, `git push origin feature:main`, which only the user may state), no shell or interpreter (which runs
    whatever it is given), and nothing that switches a safeguard off."""
    family = program_family(PurePosixPath(words[0]).name)
    if family in SHELLS or family in INTERPRETERS or family in RUNS_ANYTHING:
        return False
    return family != program_family(PurePosixPath(refused[0]).name) and not _bypasses(words)


# Claude Code's tools that change one file, and the field that names it.
_FILE_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
_FILE_FIELDS = ("file_path", "notebook_path")


def _file_of(tool_input: str | None) -> str | None:
    try:
        value = json.loads(tool_input or "")
    except ValueError:
        return None
    found = next((value.get(f) for f in _FILE_FIELDS if isinstance(value, dict) and f in value), None)
    return found if isinstance(found, str) else None


def warned(messages: Sequence[SessionMessage], cwd: str | None) -> list[Found]:
    """A change to a file of the project that a hook of the user's refused (Claude Code's `PreToolUse:Write hook
    error`), then let through when the agent made it again with the same tool on the same file: the hook warns
    once. One correction per project folder, said with the tool it refused first."""
    if not any(m.is_error and m.kind == "tool_result" and (m.text or "").startswith("PreToolUse:") for m in messages):
        return []  # most sessions: no hook refused anything
    calls = {m.tool_use_id: m for m in messages if m.kind == "tool_use" and m.tool_use_id and not m.is_sidechain}
    refused: dict[tuple[str, str], str] = {}  # (tool, file) -> the hook's line (evidence)
    found: dict[str, Found] = {}
    for m in messages:
        call = calls.get(m.tool_use_id or "") if m.kind == "tool_result" and not m.is_sidechain else None
        if call is None or call.tool_name not in _FILE_TOOLS or (path := _file_of(call.tool_input)) is None:
            continue
        hook = _HOOK_REFUSED.match(m.text or "") if m.is_error else None
        if hook is not None and hook.group(1) == call.tool_name:
            refused.setdefault((call.tool_name, path), _error_line((m.text or "")[hook.end() :]) or "refused by a hook")
            continue
        said = refused.pop((call.tool_name, path), None)
        folder = relative(str(PurePosixPath(path).parent), cwd) if said is not None and not m.is_error else None
        if said is None or folder is None or not _PROJECT_PATH.match(folder) or folder in found:
            continue
        lesson = Correction(how="warned", failed=Command(words=(call.tool_name,)), under=folder)
        found[folder] = Found(f"correction|warned|{folder}", lesson, said, None)
    return list(found.values())
