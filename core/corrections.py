"""Corrections: a command that failed and the close variant of it that then worked, said as a rule (another folder,
a flag added, another program, an option or a wrapper the machine does not have, a pull or a build that had to run
first, an absolute path where a relative one broke after a `cd`, a program not found until an install ran, in the
folder it ran in, however many tries came between). Never a file path as the fix, never a workaround that switches
a safeguard off; the error's words are evidence, never lesson text; a fix that only tool output
suggested is marked (`taint`). A failure of an interpreter (`python3`, `node`, `ruby`) that named a module it
could not import (`No module named 'yaml'`, `Cannot find module`, `cannot load such file`) is a fact about that
dependency, not about the program, whose other calls may import nothing of the kind: where another program then
worked, the lesson is that the first lacks the project's packages (`module`), naming the module only when its name
is a plain dotted identifier. A tool (`pytest`) loads the same code on every call: its correction stays one.

Here too what every correction shares (`Found`, what is never the fix, a path a lesson may name). How the two
commands differ is `core.command_variants`; what a failure's output says, `core.failures`. The other families each
have their module: `gh` told the repository (`core.gh_repository`), a path .gitignore ignores
(`core.ignored_paths`), a script made executable (`core.executable_scripts`), git past Codex's sandbox
(`core.sandboxed_git`), a call or a change a user's hook refused (`core.hook_refusals`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import NamedTuple

import re2

from core.allowlist import Vouched, words_refusals
from core.command_variants import flag_name, relaxes, unknown_variant, variant
from core.failures import UNKNOWN, error_line, hid_failure, missing_program
from core.lessons import Command, Correction
from core.runs import Parsed, Run, category_of, command_key, key_words, parse, relative

__all__ = ["PROJECT_PATH", "Found", "bypasses", "corrections", "flat"]


class Found(NamedTuple):
    """One correction: its key (the same lesson in any session), the typed lesson, the failure's line (evidence),
    and why it must not be exported unseen (None: nothing)."""

    key: str
    lesson: Correction
    error: str
    taint: str | None


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


def bypasses(words: Sequence[str]) -> bool:
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


# A path inside the project as a lesson may name it: plain names joined by slashes, none of them `.` or `..`.
PROJECT_PATH = re2.compile(r"^\.?[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}(?:/\.?[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}){0,5}$")


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


def _plain_words(words: Sequence[str]) -> tuple[str, ...] | None:
    """A command's words as a lesson may state them: all of them when none is a path or a value of this one run,
    else its name (`git pull --rebase origin main`; `bun run build`); None when its name alone would say another
    command than ran: a program without its subcommand (`make` for `make -C ../.. clean`) or a variable set for it
    left out (`make clean` for `make clean PREFIX=/`)."""
    if all(_PLAIN_WORD.match(w) for w in words):
        return tuple(words)
    key = key_words(command_key(words))
    setting = any("=" in w and not w.startswith("-") for w in words[1:])
    return key if len(key) > 1 and not setting else None


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
        had = {flag_name(w) for w in failed.words}
        added = tuple(w for w in worked.words[len(wk) :] if w.startswith("-") and flag_name(w) not in had)
        return f"correction|option|{' '.join(fk)}|{' '.join(part)}", Correction(
            how="option",
            failed=Command(words=fk + part),
            worked=Command(words=wk + tuple(dict.fromkeys(flag_name(w) for w in added))),
        )
    if how == "subcommand":  # the same program, another of its commands: said as an option it does not have
        had = {flag_name(w) for w in failed.words}
        added = tuple(
            dict.fromkeys(
                flag_name(w) for w in worked.words[len(wk) :] if w.startswith("-") and flag_name(w) not in had
            )
        )
        return f"correction|option|{' '.join(fk)}|{' '.join(wk)}", Correction(
            how="option", failed=Command(words=fk), worked=Command(words=wk + added)
        )
    if how == "before":
        return f"correction|before|{' '.join(fk)}|{' '.join(part)}", Correction(
            how="before", failed=Command(words=fk), worked=Command(words=part)
        )
    if how == "installed":  # `part`: the install's words, then the folder it ran in ("" for the project's root)
        *words, where = part
        return f"correction|installed|{' '.join(fk)}|{' '.join(words)}|{where}", Correction(
            how="installed", failed=Command(words=fk), worked=Command(words=tuple(words), folder=where or None)
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
        error = error_line(run.output)
        if failed is None or error is None or _TEST_FAILURES.search(run.output):
            continue
        if (installed := _installed(runs, i, failed, cwd)) is not None:
            # Never held as copied from tool output: a bare install names no package, so no stranger's text chose it.
            key, lesson = _correction("installed", (*installed.words, installed.folder or ""), failed, failed)
            found.append(Found(key, lesson, error, None))
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
            stated = _plain_words(prepared.words) if prepared is not None else None
            if stated is not None and command_key(worked.words) == command_key(failed.words):
                how = ("before", stated)
            elif UNKNOWN.search(run.output):
                how = unknown_variant(failed, worked, run.output)
            if how is None:
                how = variant(failed, worked, cwd)
            if how is None:
                if (
                    prepared is None
                    and _prepares(worked)
                    and command_key(worked.words) != command_key(failed.words)
                    and not bypasses(worked.words)
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
            if lesson.worked is not None and (bypasses(lesson.worked.words) or relaxes(lesson)):
                break  # a workaround that switches a safeguard off, or a check's verdict, is never a lesson
            taint = (
                _taint(prepared.words, read[: read_before.get(prepared_at, 0)], prompts, least=4)
                if how[0] == "before" and prepared is not None
                else _taint(worked.words, read[: read_before.get(later.index, 0)], prompts)
            )
            found.append(Found(key, lesson, error, taint))
            break
    return found


# Later commands in which a command whose program was missing may be run again after an install (a session tries a
# few things first: the install at the root, then in the folder whose package declares the program).
_RETRY_WINDOW = 20


def _installed(runs: Sequence[Run], i: int, failed: Parsed, cwd: str | None) -> Parsed | None:
    """The install after which the command of `runs[i]`, whose failure said a program it runs was not found, ran
    again in the same folder and no longer missed it: the last command before that retry but those that only look,
    with its folder inside the project. Only a bare install of what the project declares (`pnpm install`, `uv sync
    --frozen`: options, no package named, not global): one that names a package or installs for the whole machine
    says the project lacks a dependency, which is no routine to repeat. None when the failure missed no program,
    the retry missed it still, or what ran last before the retry was no such install (an edit by command, a
    workaround): then nothing says what fixed it."""
    missing = missing_program(runs[i].output)
    if missing is None:
        return None
    key, where = command_key(failed.words), relative(failed.folder, cwd)
    for j in range(i + 1, min(len(runs), i + 1 + _RETRY_WINDOW)):
        again = parse(runs[j].command, runs[j].folder)
        if again is None or command_key(again.words) != key or relative(again.folder, cwd) != where:
            continue
        if runs[j].rejected or missing_program(runs[j].output) == missing:
            return None  # it still misses the program: a later install may be the fix, read from that failure
        for k in range(j - 1, i, -1):
            prior = parse(runs[k].command, runs[k].folder)
            if prior is not None and _looks(prior):
                continue
            if (
                prior is None
                or not runs[k].ok
                or hid_failure(runs[k])
                or category_of(command_key(prior.words)) != "install"
                or not _bare(prior.words)
                or bypasses(prior.words)
            ):
                return None
            inside = relative(prior.folder, cwd)
            if prior.folder and inside is None and prior.folder.rstrip("/") != (cwd or "").rstrip("/"):
                return None  # it ran outside the project: no folder of it a lesson may name
            if inside is not None and not PROJECT_PATH.match(inside):
                return None
            return Parsed(inside, prior.words)
        return None
    return None


_GLOBAL = frozenset({"-g", "--global", "--system", "--user"})


def _bare(words: Sequence[str]) -> bool:
    """True for an install that names no package and installs for the project alone: every word after its name is
    a plain option (`--frozen-lockfile`), none that installs for the machine or the user (`-g`)."""
    rest = words[len(key_words(command_key(words))) :]
    return all(w.startswith("-") and _PLAIN_WORD.match(w) and w not in _GLOBAL for w in rest)
