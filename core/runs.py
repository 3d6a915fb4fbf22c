"""A session's shell commands as the rules read them: each call with how it ended (ok, failed, or stopped by the
user), the command the shell's grammar reads in it, and a command's name without its arguments."""

from __future__ import annotations

import collections
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

import re2
from pydantic import BaseModel

from core.lessons import Category
from core.models import SessionMessage
from core.program_tasks import routine_shaped
from core.shell import SimpleCommand, parse_command

__all__ = [
    "REJECTED",
    "REJECTION_REASON",
    "SHELL_TOOLS",
    "USER_HOME",
    "Parsed",
    "Run",
    "command_key",
    "command_of",
    "key_words",
    "parse",
    "shell_runs",
    "whole_text",
]


# Claude Code's `PowerShell` (on Windows) too: its simple commands (`go test ./...`) read as the shell's grammar reads
# them; what does not (`$env:X = 1`) is left out as unreadable.
SHELL_TOOLS = frozenset(
    {"Bash", "bash", "shell", "exec_command", "local_shell_call", "run_shell_command", "PowerShell"}
)

# Interpreters and runners: their first argument that is a script or a module is part of the command's name.
_RUNNERS = frozenset({"node", "python", "python3", "uv", "npx", "pnpm", "npm", "yarn", "bun", "bundle", "poetry"})

# Runners that fetch a package to run it, and the flags that only answer their install prompt.
_FETCHING_RUNNERS = frozenset({"npx", "bunx", "pnpx"})
_RUNNER_YES = frozenset({"-y", "--yes", "-q", "--quiet"})

_SCRIPT = re2.compile(r"^[\w.-]+\.(?:js|mjs|cjs|ts|py|sh|rb)$")

_SUBCOMMAND = re2.compile(r"^[a-z][a-z0-9_:-]*(?:\.[a-z]+)?$")
# A file's name, by its extension, where a dotted subcommand (`mix phx.server`) could be read: `gen5.md` is a file.
_FILE_NAME = re2.compile(r"\.(?:md|markdown|txt|rst|json|jsonl|ya?ml|toml|ini|cfg|csv|html?|css|lock|log|xml|sql)$")

USER_HOME = re2.compile(r"(?:/Users/|/home/)[^/\s'\"`]+|/root\b")

# Claude Code's own words when the user stops a call. Only the whole fixed text counts: the reason that follows is
# what the person typed in the dialog.
REJECTED = re2.compile(r"^The user doesn't want to (?:proceed with this tool use|take this action)")

# The reason the user typed when they stopped a call, in the wordings Claude Code has used; without the note a later
# version appends to every refusal ("Note: The user's next message may contain a correction ..."), its words not theirs.
REJECTION_REASON = re2.compile(
    r"(?s)(?:The user provided the following reason for the rejection:|To tell you how to proceed, the user said:)"
    r"\s*(?P<reason>.+?)(?:\s*Note: The user's next message may contain a correction or preference\..*)?\z"
)


class Run(BaseModel):
    """One shell command and how it ended: `ok`, failed (`output` holds the error), or `rejected` by the user
    (with the reason they gave, if any)."""

    index: int
    call_id: str = ""
    command: str
    folder: str | None = None  # the working folder the call named (Codex's `workdir`)
    ok: bool
    output: str = ""
    rejected: bool = False
    reason: str | None = None


def whole_text(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD. Half of a UTF-16 pair escaped alone in a JSON string
    ("\ud800") is text no UTF-8 holds, so a line or folder that names one is read with it replaced rather than
    refused where it is stored (one crafted call stopped an ingest: "cannot encode str as UTF-8")."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def command_of(tool_input: str | None) -> tuple[str, str | None] | None:
    """(command, folder) of a shell tool's input: Claude Code's `command`, Codex's `cmd` or argv list."""
    try:
        value = json.loads(tool_input or "")
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    raw = value.get("command", value.get("cmd"))
    if isinstance(raw, list) and raw:  # ["bash", "-lc", "cmd"]
        raw = raw[-1] if len(raw) >= 3 and str(raw[-2]).startswith("-") else " ".join(map(str, raw))
    if not isinstance(raw, str) or not raw.strip():
        return None
    folder = value.get("workdir")
    return whole_text(raw.strip()), whole_text(folder) if isinstance(folder, str) else None


# Codex's `exec_command` answers after a while even when the command runs on: its result says "Process running with
# session ID N", and the agent's `write_stdin` calls for that session return the rest of its output, the last one
# with "Process exited with code N". Read from a result's head (the lines before "Output:"), never from the output.
_RUNNING = re2.compile(r"(?m)^Process running with session ID (\d+)$")
_EXITED = re2.compile(r"(?m)^Process exited with code (-?\d+)$")
_POLL = "write_stdin"
_POLLS_KEPT = 8  # the last polls' output a run keeps: where a long command ends, and how


def _head(text: str) -> str:
    """A Codex tool result's lines before its output."""
    return text.split("\nOutput:", 1)[0] if "\nOutput:" in text else text[:300]


def _session_of(tool_input: str | None) -> str | None:
    """The session a `write_stdin` call writes to."""
    try:
        found = json.loads(tool_input or "")
    except ValueError:
        return None
    session = found.get("session_id") if isinstance(found, dict) else None
    return str(session) if isinstance(session, int | str) and not isinstance(session, bool) else None


def shell_runs(messages: Sequence[SessionMessage]) -> list[Run]:
    """The main thread's shell commands, in order, each with how it ended (for a Codex command that ran on after
    its call returned, as the last poll of its session said, with the output every poll returned)."""
    calls: dict[str, tuple[str, str | None]] = {}
    runs: list[Run] = []
    running: dict[str, int] = {}  # a Codex session still running -> the index of its run
    polls: dict[str, int] = {}  # a `write_stdin` call -> the index of the run it polls
    polled: dict[int, collections.deque[str]] = {}  # a run's index -> what its last polls returned
    for m in messages:
        if m.is_sidechain:
            continue
        if m.kind == "tool_use" and m.tool_use_id and m.tool_name in SHELL_TOOLS:
            found = command_of(m.tool_input)
            if found is not None and m.tool_name == "PowerShell":
                found = (found[0].replace("\\", "/"), found[1])  # a path's separator there, not an escape
            if found is not None:
                calls[m.tool_use_id] = found
        elif m.kind == "tool_use" and m.tool_use_id and m.tool_name == _POLL:
            session = _session_of(m.tool_input)
            if session is not None and session in running:
                polls[m.tool_use_id] = running[session]
        elif m.kind == "tool_result" and m.tool_use_id in polls:
            at = polls.pop(m.tool_use_id or "")
            text = m.text or ""
            polled.setdefault(at, collections.deque(maxlen=_POLLS_KEPT)).append(text)
            if (exited := _EXITED.search(_head(text))) is not None:
                runs[at] = runs[at].model_copy(update={"ok": exited.group(1) == "0"})
                running = {s: i for s, i in running.items() if i != at}
        elif m.kind == "tool_result" and m.tool_use_id in calls:
            command, folder = calls.pop(m.tool_use_id)
            text = m.text or ""
            rejected = bool(m.is_error and REJECTED.match(text))
            reason = REJECTION_REASON.search(text) if rejected else None
            if (still := _RUNNING.search(_head(text))) is not None and not m.is_error:
                running[still.group(1)] = len(runs)
            runs.append(
                Run(
                    index=len(runs),
                    call_id=m.tool_use_id or "",
                    command=command,
                    folder=folder,
                    ok=not m.is_error,
                    output=text,
                    rejected=rejected,
                    reason=" ".join(reason.group("reason").split()) if reason else None,
                )
            )
    # A command's output and the last polls' (a crafted session may poll one command ten thousand times)
    for at, chunks in polled.items():
        runs[at] = runs[at].model_copy(update={"output": "\n".join([runs[at].output, *chunks])})
    return runs


@dataclass(frozen=True)
class Parsed:
    folder: str | None  # where the command ran: `cd X && ...`, or the call's own working folder
    words: tuple[str, ...]  # the main command's words (environment assignments and redirections dropped)


_ENV_NAME = re2.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _without_env(words: tuple[str, ...]) -> tuple[str, ...]:
    """The command `env` runs (`env PATH=... node --run test` runs `node --run test`), as the shell's own
    assignments before a command are dropped; `env` alone, or with an option it could read otherwise, stays."""
    if PurePosixPath(words[0]).name != "env":
        return words
    rest = list(words[1:])
    while rest and (_ENV_NAME.match(rest[0]) or rest[0] in ("-i", "--ignore-environment", "--")):
        rest.pop(0)
    return tuple(rest) if rest and not rest[0].startswith("-") else words


# Programs that only feed the next command of a pipeline its answers (`yes | pnpm install`, `echo y | npx x`): the
# line's command is the one they feed, not them.
_FEEDERS = frozenset({"yes", "echo", "printf"})
# Programs that only read what the command before them wrote: fed by a feeder, the line is that feeder's own.
_READERS = frozenset({"tail", "head", "grep", "rg", "sed", "awk", "cut", "sort", "uniq", "less", "more", "tee", "wc"})


def _program(simple: SimpleCommand) -> str | None:
    return simple.words[0] if simple.words else None


def _feeds(simples: Sequence[SimpleCommand], at: int) -> bool:
    """True when the command at `at` only feeds answers to the next one, which is no reader of its output."""
    after = _program(simples[at + 1]) if at + 1 < len(simples) and simples[at + 1].piped else None
    return _program(simples[at]) in _FEEDERS and after is not None and after not in _READERS


def parse(command: str, folder: str | None = None) -> Parsed | None:
    """The main command of a shell line, as the shell's grammar reads it: the first simple command after any
    `cd DIR &&`, before pipes into pagers and filters (after a feeder of answers, `yes |`, the command it feeds);
    None when it is expanded at run time or unreadable."""
    where = folder
    simples = parse_command(command.strip()).commands
    for at, simple in enumerate(simples):
        if (simple.piped and not (at > 0 and _feeds(simples, at - 1))) or _feeds(simples, at):
            continue
        if any(w is None for w in simple.words):
            return None
        words = _without_env(tuple(w for w in simple.words if w is not None))
        if words[0] == "cd":
            where = words[1] if len(words) > 1 else None
            continue
        return Parsed(where, words)
    return None


def command_key(words: Sequence[str]) -> str:
    """A command's name without its arguments: the program and its subcommands (`uv run pytest`, `mix test`,
    `git add`, `node build.js`), stopping at the first flag, path or value."""
    if not words:
        return ""
    program = PurePosixPath(words[0]).name
    if program.startswith("python") and len(words) > 2 and words[1] == "-m":
        return " ".join([program, "-m", words[2]])  # `python -m pytest`: the module is the command
    if program == "node" and len(words) > 2 and words[1] == "--run" and _SUBCOMMAND.match(words[2]):
        return f"node --run {words[2]}"  # Node's own script runner (`node --run test`): the script is the command
    rest = list(words[1:])
    if program in _FETCHING_RUNNERS:
        while rest and rest[0] in _RUNNER_YES:
            rest.pop(0)  # `npx -y vitest run`: the flag only answers the install prompt; the tool is the command
    key = [program]
    for word in rest[:3]:
        if _SUBCOMMAND.match(word) and not _FILE_NAME.search(word):
            key.append(word)
        elif key[-1] in _RUNNERS and _SCRIPT.match(word):
            key.append(word)
            break
        else:
            break
    return " ".join(key)


def key_words(key: str) -> tuple[str, ...]:
    return tuple(key.split(" "))


_CATEGORY_WORDS: list[tuple[Category, re2._Regexp]] = [
    (
        "format",
        re2.compile(
            r"\b(?:ruff format|black|prettier|gofmt|rustfmt|cargo fmt|mix format|isort|\w+ run format)\b"
            r"|--run format\b"
        ),
    ),
    (
        "lint",
        re2.compile(
            r"\b(?:ruff check|ruff|flake8|pylint|eslint|credo|clippy|golangci-lint|rubocop|shellcheck"
            r"|\w+ run lint|\w*lint)\b"
        ),
    ),
    ("typecheck", re2.compile(r"\b(?:mypy|pyright|tsc|dialyzer|ty check|\w+ run typecheck|typecheck)\b")),
    (
        "test",
        re2.compile(r"\b(?:pytest|vitest|jest|mocha|rspec|phpunit|ctest|tox|nox|unittest|test|tests)\b"),
    ),
    ("run", re2.compile(r"\b(?:dev|serve|server|start|phx\.server|runserver|watch)\b")),
    ("install", re2.compile(r"^(?:\S+ )?(?:install|ci|sync|deps\.get|bundle install|get)$")),
    ("build", re2.compile(r"\b(?:build|compile|make|bundle|webpack|esbuild|build\.\w+)\b")),
]


# Programs whose use names no routine of the project: `test` and `[` are the shell's own condition, `which` and its
# kin only look a program up.
_NOT_A_ROUTINE = frozenset(
    "git cd echo ls cat grep find sleep kill test [ true false which whereis where type command man help".split()
)


_DRIVE = re2.compile(r"^[A-Za-z]:(?:/|$)")


HOME_PATH = re2.compile(r"(?:/Users/|/home/|/root/)[^\s'\"`]*|~/[^\s'\"`]*|[A-Za-z]:\\[^\s'\"`]*")


# An install naming what it installs (`npm install eslint-plugin-x`, `pip install ruff`): setting a package up,
# whatever its name says, never the project's routine.
_NAMED_INSTALL = re2.compile(r"^\S+(?: pip)? (?:install|i|add) \S")
# Programs whose words are the project's own tasks' names (`make test-unit`), as a script's are after `run`.
_TASKERS = frozenset({"make", "just", "rake", "task"})
# A script's or task's name joined from words (`format-disk`, `lint:nofail`, `test-unit`).
_JOINED_NAME = re2.compile(r"[a-z0-9][_:-][a-z0-9]")


def category_of(key: str) -> Category | None:
    """The routine a command's key (`npm run lint`, `make test-unit`) runs, or None: a name joined from words says a
    routine only when it is shaped like one (`core.program_tasks.routine_shaped`: `lint-fix`, not `format-disk`),
    and an install that names its package is none."""
    words = key.split(" ")
    if words[0] in _NOT_A_ROUTINE or _NAMED_INSTALL.match(key):
        return None
    named = [w for i, w in enumerate(words[1:], 1) if words[i - 1] in ("run", "run-script") or words[0] in _TASKERS]
    if any(_JOINED_NAME.search(w) and not routine_shaped(w) for w in named):
        return None
    for category, pattern in _CATEGORY_WORDS:
        if pattern.search(key):
            return category
    return None


def relative(folder: str | None, cwd: str | None) -> str | None:
    """`folder` as a path inside the project (`assets`), or None for the project root, outside, or unknown. A
    Windows path (`D:\\repo\\src`) is read with forward slashes, its drive letter in either case."""
    if not folder or folder in (".", "./"):
        return None
    folder = folder.replace("\\", "/")
    root = (cwd or "").replace("\\", "/").rstrip("/")
    if root and _DRIVE.match(root) and folder[:1].lower() == root[:1].lower():
        folder = root[:1] + folder[1:]  # the drive letter in the session's case
    if root and folder.startswith(root + "/"):
        folder = folder[len(root) + 1 :]
    elif root and folder == root:
        return None
    if folder.startswith(("/", "~", "..")) or _DRIVE.match(folder) or HOME_PATH.search(folder):
        return None
    return folder.strip("/") or None


def clip(text: str, most: int) -> str:
    """`text` cut to at most `most` characters, never inside a `<tag>` (a trigger is matched literally: half a
    tag would match nothing the transcript says)."""
    if len(text) <= most:
        return text
    cut = text[:most]
    while (opened := cut.rfind("<")) > cut.rfind(">"):
        cut = cut[:opened]
    return cut.rstrip()
