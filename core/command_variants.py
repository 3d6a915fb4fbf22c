"""Command variants: how the command that worked differs from the one that failed, when that difference says a
rule (another program, folder or flag, an absolute path; an option, a subcommand or a wrapper the machine does not
have), and when an option it added may be what made a check pass (then it is no fix)."""

from __future__ import annotations

from pathlib import PurePosixPath

import re2

from core.lessons import Correction
from core.programs import program_family
from core.quote_words import KEEPS_THE_VERDICT
from core.runs import Parsed, category_of, command_key, key_words, relative

__all__ = ["flag_name", "relaxes", "unknown_variant", "variant"]


# What may run a program that failed on its own (`pytest` -> `python -m pytest`, `uv run pytest`).
_RUNNER_PREFIXES = frozenset(
    "python -m|python3 -m|uv run|npx|pnpm exec|pnpm|yarn|bunx|bun run|bundle exec|poetry run|pdm run|hatch run"
    "|pipenv run|rye run|npm exec|go run|cargo run --".split("|")
)


def flag_name(word: str) -> str:
    """An option's name without the value given to it (`--reg=mirror.example` is `--reg`)."""
    return word.split("=", 1)[0]


# What decides a verdict on the code: a failure of one of them is the code's, never the command's.
_CHECKS: frozenset[str | None] = frozenset({"test", "lint", "format", "typecheck"})


# Programs that run a project's checks, or its scripts (which may be checks): a name alone (`npm t`, `make check`,
# `bun run verify`) does not say which of their commands decide a verdict on the code.
_RUNS_CHECKS = frozenset(
    "npm pnpm yarn bun npx pnpx bunx deno node make just mise task cargo go gradle gradlew mvn mvnw dotnet uv uvx"
    " poetry pipenv hatch tox nox bazel bazelisk pytest python python3 php composer bundle rake mix swift".split()
)


def relaxes(lesson: Correction) -> bool:
    """True when the working command of `lesson` added options the failed one lacked, beyond those known to leave a
    check's verdict to the code (`KEEPS_THE_VERDICT`), where they may be what made it pass: after any failure
    (`npm test -- -u` rewrote the snapshots, `tsc --noCheck`, `npm ci --reg=mirror.example`), and after a usage
    error on a check or on a program that runs checks or scripts, or with a value (`--updateSnapshott` refused,
    then `--updateSnapshot`). What is left: a variant that drops options, adds only those, or spells a refused
    option right on a program that runs no checks (`gh pr list --jsonx`, then `--json`)."""
    if lesson.worked is None or lesson.how not in ("flag", "option"):
        return False
    had = {flag_name(w) for w in lesson.failed.words if w.startswith("-")}
    added = [
        w
        for w in lesson.worked.words[1:]
        if w.startswith("-") and w != "--" and flag_name(w) not in had | KEEPS_THE_VERDICT
    ]
    if not added or lesson.how == "flag":
        return bool(added)
    key = command_key(lesson.failed.words)
    program = program_family(PurePosixPath(lesson.failed.words[0]).name)
    return category_of(key) in _CHECKS or program in _RUNS_CHECKS or any("=" in w for w in added)


def unknown_variant(failed: Parsed, worked: Parsed, error: str) -> tuple[str, tuple[str, ...]] | None:
    """When the failure said an option or a command does not exist: (`option`, the options the working command
    dropped) when it is the same command without them, or (`program`, the working command's name) when it is the
    failed one without its first words (a wrapper the machine does not have: `rtk bun run test` -> `bun run test`)."""
    fk, wk = command_key(failed.words), command_key(worked.words)
    if fk == wk:
        kept = {flag_name(w) for w in worked.words[1:] if w.startswith("-")}
        dropped = tuple(
            dict.fromkeys(
                flag_name(w)
                for w in failed.words[1:]
                if w.startswith("-") and flag_name(w) not in kept and flag_name(w) in error
            )
        )
        return ("option", dropped) if dropped else None
    n, m = len(failed.words), len(worked.words)
    if 0 < m < n and tuple(failed.words[n - m :]) == tuple(worked.words) and failed.words[n - m - 1] != "--":
        program = PurePosixPath(failed.words[n - m]).name
        named = _UNKNOWN_NAME.search(error)
        # The wrapper does not know the program it was given; where the error names what it does not know, that
        # is the program (`rtk cargo test`: "unrecognized subcommand 'cargo'"), not a later word of it (`uv pip
        # index versions`: "unrecognized subcommand 'index'", `uv pip` is there; `index` is what it lacks).
        if (program == named.group(1)) if named is not None else program in error:
            return "program", key_words(wk)
    return _other_subcommand(failed, worked, error)


# The name a usage error says it does not know, where it quotes one (`unrecognized subcommand 'index'`, `no such
# command: `nextest``, `unknown command "bun"`).
_UNKNOWN_NAME = re2.compile(
    r"(?i)(?:unknown|unrecognized|unrecognised|invalid|no such) (?:sub)?command:? ['\"`\x{2018}]([\w.:+-]+)"
)


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
    if not _same_job(fk[at:], wk[at:]):
        return None
    said = set(failed.words[len(fk) :])
    if all(w.startswith("-") or w in said for w in worked.words[len(wk) :]):
        return "subcommand", ()
    return None


def _same_job(failed: tuple[str, ...], worked: tuple[str, ...]) -> bool:
    """True when the subcommand that worked does the job the refused one was asked for: a routine of the same kind,
    or any routine in place of one no kind names (`nextest run` -> `test`), or the refused name spelt right
    (`tset` -> `test`) or run together with what followed it (`diffstat` -> `diff --stat`). Not another job
    (`make test` refused, then `make fmt`: the tests never ran)."""
    if not worked:
        return False
    # (read after a stand-in program: `test` alone is the shell's test, no routine)
    done, asked = category_of(" ".join(("_", *worked))), category_of(" ".join(("_", *failed)))
    run_together = len(worked[0]) >= 3 and failed[0].startswith(worked[0])
    return (done is not None and asked in (None, done)) or _misspelt(failed[0], worked[0]) or run_together


def _misspelt(word: str, right: str) -> bool:
    """True when `word` is `right` with one letter wrong, missing, extra or two swapped (and both have 4 or more)."""
    if min(len(word), len(right)) < 4 or abs(len(word) - len(right)) > 1 or word == right:
        return False
    if len(word) == len(right):
        diff = [i for i, (a, b) in enumerate(zip(word, right, strict=True)) if a != b]
        swapped = len(diff) == 2 and diff[1] == diff[0] + 1 and word[diff[0]] == right[diff[1]]
        return len(diff) == 1 or (swapped and word[diff[1]] == right[diff[0]])
    short, long = sorted((word, right), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


_ERROR_WORD_BREAK = re2.compile(r"[^\w.:-]+")


def _error_words(error: str) -> set[str]:
    """The words of a failure's output (its head: where a program says what it did not know)."""
    return {w.strip(".:") for w in _ERROR_WORD_BREAK.split(error[:2000])}


def variant(failed: Parsed, worked: Parsed, cwd: str | None) -> tuple[str, tuple[str, ...]] | None:
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
