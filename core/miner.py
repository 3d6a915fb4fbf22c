"""The rules miner: lessons that rules can find reliably in a session's own record, without a model.

- *project facts*: the commands that test, lint, format, type-check, build, install and run the project,
  learned from the commands that succeeded (a quality gate once, a build, a dev server or an install twice),
  and a project's own command-line tool used again and again;
- *corrections*: a command that failed and a close variant of it that then worked, said as a rule (another
  folder, a flag added, another program, an option or a wrapper the machine does not have, a pull or a build that
  had to run first, an absolute path where a relative one broke after a `cd`), never a file
  path as the fix, never a workaround that switches a safeguard off (`--force`, `--no-verify`, `sudo`); the error's
  words are kept as evidence (`playbook why`), never written into the lesson;
- *pitfalls*: a test command that selected no test at all, a check whose failure a pipe hid, a shell that is zsh;
- *user preferences*: what the user said when they stopped a call or a plan (the reason they gave, or their next
  words), pressed Esc, or corrected the agent ("no, use pnpm", "don't add comments"), and a prompt's sentence
  that states a lasting rule ("as always never push secrets"): only where the transcript shows they typed it.

Nothing here restates what the agent's tools already enforce (read before edit, a unique string to replace, a
read too large, a sibling call that errored): only shell commands and the user's own words make a lesson.
`observe` finds every candidate of one session with its count; `mine` keeps those whose evidence, over the
session and the project's others (`History`), is enough. Every lesson is a typed value (`core.lessons`) whose
text is written from its fields: no text from the transcript is quoted but what the user typed. Commands are read
by the shell's grammar (`core.shell`). Pure: messages in, findings out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

import re2
from pydantic import BaseModel, Field

from core.allowlist import Vouched, words_refusals
from core.lessons import (
    Command,
    CommandFact,
    Correction,
    HiddenFailure,
    Lesson,
    NothingSelected,
    OwnTool,
    Preference,
    Stopped,
    ZshShell,
    project_label,
    render,
    writable,
)
from core.models import SessionMessage
from core.shell import parse_command

__all__ = [
    "MINER_VERSION",
    "Candidate",
    "Evidence",
    "Finding",
    "History",
    "Observed",
    "Run",
    "clip",
    "command_key",
    "mine",
    "observe",
    "quiet",
    "shell_runs",
]

# Stored observations carry it: a change of the rules below makes older ones be observed again.
MINER_VERSION = 3

Kind = Literal["fact", "correction", "pitfall", "preference"]
Category = Literal["test", "lint", "format", "typecheck", "build", "run", "install", "tool"]

# Claude Code's `PowerShell` (on Windows) too: its simple commands (`go test ./...`) read as the shell's grammar reads
# them; what does not (`$env:X = 1`) is left out as unreadable.
SHELL_TOOLS = frozenset(
    {"Bash", "bash", "shell", "exec_command", "local_shell_call", "run_shell_command", "PowerShell"}
)

# How many successful runs make a fact: a quality gate that passed once is the project's; a build, a dev server
# or an install is a routine only once it happened twice; a project's own tool, only after regular use.
FACT_MIN_RUNS: dict[Category, int] = {
    "test": 1,
    "lint": 1,
    "format": 1,
    "typecheck": 1,
    "build": 2,
    "run": 2,
    "install": 2,
    "tool": 4,
}
_CATEGORY_WORDS: list[tuple[Category, re2._Regexp]] = [
    (
        "format",
        re2.compile(r"\b(?:ruff format|black|prettier|gofmt|rustfmt|cargo fmt|mix format|isort|\w+ run format)\b"),
    ),
    (
        "lint",
        re2.compile(
            r"\b(?:ruff check|ruff|flake8|pylint|eslint|credo|clippy|golangci-lint|rubocop|shellcheck"
            r"|\w+ run lint|lint)\b"
        ),
    ),
    ("typecheck", re2.compile(r"\b(?:mypy|pyright|tsc|dialyzer|\w+ run typecheck|typecheck)\b")),
    (
        "test",
        re2.compile(r"\b(?:pytest|vitest|jest|mocha|rspec|phpunit|ctest|tox|nox|unittest|test|tests)\b"),
    ),
    ("run", re2.compile(r"\b(?:dev|serve|server|start|phx\.server|runserver|watch)\b")),
    ("install", re2.compile(r"^(?:\S+ )?(?:install|ci|sync|deps\.get|bundle install|get)$")),
    ("build", re2.compile(r"\b(?:build|compile|make|bundle|webpack|esbuild|build\.\w+)\b")),
]
# Programs everyone has, whose use says nothing about the project (its own tools are the others).
_COMMON = frozenset(
    "ls cat grep rg find fd sed awk head tail echo printf git cd pwd mkdir rm rmdir cp mv touch ln chmod chown which"
    " whereis sleep wc sort uniq diff xargs tee env export jq tree open kill pkill ps curl wget python python3 node"
    " npm npx pnpm yarn bun uv pip pip3 poetry cargo go mix make gh sh bash zsh true false test date file stat du df"
    " less more cut tr basename dirname realpath readlink timeout time nohup watch history source type command"
    " ruby perl java javac dotnet docker docker-compose kubectl brew apt apt-get sudo tar zip unzip gzip ssh scp"
    " rsync lsof netstat open xdg-open code vim nano emacs tmux screen mise asdf nvm direnv".split()
)
# Task runners a project declares its routines in, and toolchains whose bare commands they wrap.
_TASK_RUNNERS = ("mise run ", "make ", "just ", "task ", "npm run ", "pnpm run ", "yarn run ", "bun run ")
_TOOLCHAINS = frozenset({"go", "cargo", "dotnet", "swift", "zig"})
_INSTALLERS = frozenset({"npm", "pnpm", "yarn", "bun", "uv", "pip", "pip3", "poetry", "mix", "bundle", "cargo", "go"})
# Interpreters and runners: their first argument that is a script or a module is part of the command's name.
_RUNNERS = frozenset({"node", "python", "python3", "uv", "npx", "pnpm", "npm", "yarn", "bun", "bundle", "poetry"})
# What may run a program that failed on its own (`pytest` -> `python -m pytest`, `uv run pytest`).
_RUNNER_PREFIXES = frozenset(
    "python -m|python3 -m|uv run|npx|pnpm exec|pnpm|yarn|bunx|bun run|bundle exec|poetry run|pdm run|hatch run"
    "|pipenv run|rye run|npm exec|go run|cargo run --".split("|")
)
# Programs whose use names no routine of the project: `test` and `[` are the shell's own condition, `which` and its
# kin only look a program up.
_NOT_A_ROUTINE = frozenset(
    "git cd echo ls cat grep find sleep kill test [ true false which whereis where type command man help".split()
)
_DRIVE = re2.compile(r"^[A-Za-z]:(?:/|$)")
_SCRIPT = re2.compile(r"^[\w.-]+\.(?:js|mjs|cjs|ts|py|sh|rb)$")
_SUBCOMMAND = re2.compile(r"^[a-z][a-z0-9_:-]*(?:\.[a-z]+)?$")
_HOME_PATH = re2.compile(r"(?:/Users/|/home/|/root/)[^\s'\"`]*|~/[^\s'\"`]*|[A-Za-z]:\\[^\s'\"`]*")
_USER_HOME = re2.compile(r"(?:/Users/|/home/)[^/\s'\"`]+|/root\b")
_EXIT_ONLY = re2.compile(r"(?i)^(?:exit code:? ?-?\d+|exited with code -?\d+|error|failed|command failed)\.?$")
_INFORMATIVE = re2.compile(
    r"(?i)(error|failed|failure|exception|not found|no such|denied|invalid|cannot|can't|could not|unable|"
    r"ignored|refused|unknown|missing|not a |no upstream|permission)"
)
# Tests that ran and failed: the next run after a code change passing is work, not a correction.
_TEST_FAILURES = re2.compile(r"\d+ failed\b|\bFAILED\b|AssertionError|\d+\) test |\bFAIL\b|[Tt]ests? failed")
_NOT_FOUND = re2.compile(r"(?i)not found|no such file|cannot find|does not exist")
_NOTHING_SELECTED = re2.compile(
    r"(?i)(?:(\d+) deselected / 0 selected|collected \d+ items? / (\d+) deselected / 0 selected|no tests ran|"
    r"no tests collected|collected 0 items|0 tests? (?:ran|run)|no test files found)"
)
# Claude Code's own words when the user stops a call. Only the whole fixed text counts: the reason that follows is
# what the person typed in the dialog.
_REJECTED = re2.compile(r"^The user doesn't want to (?:proceed with this tool use|take this action)")
# The tools whose refusal text is the harness's own: another tool's error result (an MCP server's, a fetched page's)
# is written by whoever answers it, and could copy the harness's words to put its own in the user's mouth.
# Claude Code's own tools, whose refusal text is the harness's (a refused `ExitPlanMode` is a refused plan). Not
# Codex's: its shell output is the program's own, and Codex has no such refusal text.
_CLAUDE_SHELLS = frozenset({"Bash", "PowerShell"})
_HARNESS_TOOLS = _CLAUDE_SHELLS | {"Edit", "MultiEdit", "Write", "NotebookEdit", "ExitPlanMode"}
# How Claude Code frames a shell command that failed; an older version passed the program's own output through,
# which a program could open with the refusal's words.
_FRAMED_FAILURE = re2.compile(r"^Exit code -?\d+")
# The reason the user typed when they stopped a call, in the wordings Claude Code has used.
_REJECTION_REASON = re2.compile(
    r"(?s)(?:The user provided the following reason for the rejection:|To tell you how to proceed, the user said:)"
    r"\s*(?P<reason>.+)"
)
# Claude Code's marker for Esc: a user turn the harness writes, never typed.
_INTERRUPTED = re2.compile(r"^\[Request interrupted by user(?: for tool use)?\]")
# A prompt that corrects or instructs: at its start (weak cues), or anywhere (strong ones).
_CORRECTS = re2.compile(
    r"(?i)^\s*(?:no[,.!]?\s|nope\b|don'?t\b|do not\b|never\b|always\b|stop\b|instead\b|actually\b|please don'?t\b|"
    r"that'?s (?:wrong|not)\b|wrong\b|not like that\b|use \S+ instead\b|we (?:use|prefer)\b|i prefer\b|"
    r"prefer\b|let'?s not\b|why not use\b|(?:could|can|shall) we (?:just )?(?:reuse|use)\b)"
)
_STRONG = re2.compile(
    r"(?i)\b(?:i don'?t want\b|i'?d rather\b|please (?:don'?t|never|always)\b|don'?t (?:ever|assume)\b|"
    r"make (?:any )?assumptions\b|we always\b|we never\b)"
)
_CONTINUED = re2.compile(r"\\\s*\n|\[Image #\d+\]")  # a line continued with a backslash; a pasted image
_SENTENCE_END = re2.compile(r"[.!?]\s")
_PARAGRAPH = re2.compile(r"\n[ \t]*\n")
_SENTENCE_SPLIT = re2.compile(r"(?:[.!?]+|\s[-–—]\s)\s+")
# A sentence that states a lasting rule of the user's or a fact of the project, wherever it stands in a prompt.
_DURABLE = re2.compile(
    r"(?i)\b(?:as always|remember to|be sure to|from now on|going forward|in the future|every time|each time|"
    r"in this (?:repo|repository|project|codebase),? we\b|this is a public repo|"
    r"we (?:don'?t|do not) (?:need|want|use)\b|we (?:always|never|deploy|release|use|prefer)\b|"
    r"should(?:n'?t| not| only| never| always| align with| follow| match)\b|if you need to \w+ \S+,? refer to|"
    r"(?:solved|fixed|works|goes away) when (?:i|you|we)\b|^(?:avoid|never|always)\b)"
)
# The first line of pasted output rather than words: a prompt sign, a log's or a tool's line.
_PASTED = re2.compile(
    r"(?i)^(?:[❯$>#]\s|\[[\w /:-]+\]|"
    r"(?:error|warning|fatal|remote|traceback|fetching|found|download|commit [0-9a-f]{7})\b)"
)
# Words that say what to do or not to do: a question without one, after a stop, asks; it does not instruct.
_DIRECTIVE = re2.compile(
    r"(?i)\b(?:should|shouldn'?t|must|need|needs|don'?t|do not|never|always|instead|prefer|rather|want|use|"
    r"can'?t we|could we|why not|no longer|is just|not)\b"
)
_QUESTION = re2.compile(
    r"(?i)^(?:(?:wait|but|and|so|hmm|ok),? )?(?:why|what|how|when|where|which|who|should(?:n'?t)? we|can(?:'?t)? we|"
    r"could we|shall we|do we|does|did|is|are|isn'?t|aren'?t|would|will)\b"
)
# A name of code: in backticks, a flag, a dotted, slashed or snake_case name, a CamelCase word.
_CODEISH = re2.compile(r"`[^`]+`|(?:^|\s)--?[a-z]|\w[._/:]\w|\w_\w|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*")
_WORDS = re2.compile(r"^[\pL\d\s,;:'\"()`*/.!?&+-]*[\pL]{3,}[\pL\d\s,;:'\"()`*/.!?&+-]*$")
_QUOTE_MAX = 200
_MOST_CORRECTIONS = 40  # per session: more than a real session shows (see `_corrections`)
_SHORT_SESSION = 5  # tool calls: a one-prompt session with fewer did too little to teach anything
_LINK = re2.compile(r"(?i)\b(?:[a-z][a-z0-9+.-]*://|www\.)\S+")
_SHORT = 60  # an order shorter than this, with no subject of its own, leans on the sentence before it
_LEANS = re2.compile(r"(?i)^(?:avoid|never|always|don'?t|do not|please|only|instead)\b")


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


class Candidate(BaseModel):
    """A lesson one session suggests, before the evidence is weighed: its meaning (`key`, the same for the same
    lesson in any session, whatever its paths), the typed lesson, and how many times this session showed it.
    `error`: the failure it rests on, as evidence (never lesson text)."""

    key: str
    section: str
    lesson: Lesson
    trigger: str
    count: int = 1
    category: Category | None = None
    taint: str | None = None
    error: str | None = None

    @property
    def kind(self) -> Kind:
        """What kind of lesson it is: a project fact (a command or the project's own tool), a correction, a pitfall
        or the user's preference."""
        return {"tool": "fact", "hidden": "pitfall", "zsh": "pitfall"}.get(self.lesson.kind, self.lesson.kind)  # type: ignore[return-value]

    @property
    def text(self) -> str:
        """How it reads without a project."""
        return render(self.lesson, None)


class Observed(BaseModel):
    """Every candidate of one session (stored, so later runs weigh a project's sessions without reading them), and
    what the session held, to say why it taught nothing (`quiet`)."""

    version: int = MINER_VERSION
    candidates: list[Candidate] = Field(default_factory=list)
    prompts: int = 0  # what the user typed
    calls: int = 0  # tool calls of any kind
    commands: int = 0  # shell commands that ran
    failures: int = 0  # of which failed
    stops: int = 0  # calls the user stopped, and Esc presses


class Evidence(BaseModel):
    """How much supports a lesson across the project's sessions, and how the first session stated it (so the
    same lesson reads the same from any session: the engine sees a rediscovery, not a new entry)."""

    count: int = 0
    sessions: list[str] = Field(default_factory=list)
    lesson: Lesson | None = None
    trigger: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class History:
    """The candidates of a project's sessions, added up by key (this session's included)."""

    evidence: Mapping[str, Evidence]

    @classmethod
    def of(cls, observed: Iterable[tuple[str, Observed]]) -> History:
        """Add up the candidates of (session id, observed) pairs, oldest session first."""
        found: dict[str, Evidence] = {}
        for session_id, seen in observed:
            for c in seen.candidates:
                ev = found.setdefault(c.key, Evidence(lesson=c.lesson, trigger=c.trigger, error=c.error))
                ev.count += c.count
                if session_id not in ev.sessions:
                    ev.sessions.append(session_id)
        return cls(found)


class Finding(BaseModel):
    """A lesson the rules keep: its section, the typed lesson and its text (written from the lesson's fields for
    its project), the literal it rests on (`trigger`), why it must not be exported unseen (`taint`), and its
    evidence, said in words."""

    section: str
    text: str
    lesson: Lesson
    trigger: str
    taint: str | None = None
    evidence: str = ""
    kind: Kind = "fact"


# --- commands ---------------------------------------------------------------------------------------------


def _command_of(tool_input: str | None) -> tuple[str, str | None] | None:
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
    return raw.strip(), folder if isinstance(folder, str) else None


def shell_runs(messages: Sequence[SessionMessage]) -> list[Run]:
    """The main thread's shell commands, in order, each with how it ended."""
    calls: dict[str, tuple[str, str | None]] = {}
    runs: list[Run] = []
    for m in messages:
        if m.is_sidechain:
            continue
        if m.kind == "tool_use" and m.tool_use_id and m.tool_name in SHELL_TOOLS:
            found = _command_of(m.tool_input)
            if found is not None and m.tool_name == "PowerShell":
                found = (found[0].replace("\\", "/"), found[1])  # a path's separator there, not an escape
            if found is not None:
                calls[m.tool_use_id] = found
        elif m.kind == "tool_result" and m.tool_use_id in calls:
            command, folder = calls.pop(m.tool_use_id)
            text = m.text or ""
            rejected = bool(m.is_error and _REJECTED.match(text))
            reason = _REJECTION_REASON.search(text) if rejected else None
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
    return runs


@dataclass(frozen=True)
class _Parsed:
    folder: str | None  # where the command ran: `cd X && ...`, or the call's own working folder
    words: tuple[str, ...]  # the main command's words (environment assignments and redirections dropped)


def _parse(command: str, folder: str | None = None) -> _Parsed | None:
    """The main command of a shell line, as the shell's grammar reads it: the first simple command after any
    `cd DIR &&`, before pipes into pagers and filters; None when it is expanded at run time or unreadable."""
    where = folder
    for simple in parse_command(command.strip()).commands:
        if simple.piped:
            continue
        if any(w is None for w in simple.words):
            return None
        words = tuple(w for w in simple.words if w is not None)
        if words[0] == "cd":
            where = words[1] if len(words) > 1 else None
            continue
        return _Parsed(where, words)
    return None


def command_key(words: Sequence[str]) -> str:
    """A command's name without its arguments: the program and its subcommands (`uv run pytest`, `mix test`,
    `git add`, `node build.js`), stopping at the first flag, path or value."""
    if not words:
        return ""
    program = PurePosixPath(words[0]).name
    if program.startswith("python") and len(words) > 2 and words[1] == "-m":
        return " ".join([program, "-m", words[2]])  # `python -m pytest`: the module is the command
    key = [program]
    for word in words[1:4]:
        if _SUBCOMMAND.match(word):
            key.append(word)
        elif key[-1] in _RUNNERS and _SCRIPT.match(word):
            key.append(word)
            break
        else:
            break
    return " ".join(key)


def _key_words(key: str) -> tuple[str, ...]:
    return tuple(key.split(" "))


def _category(key: str) -> Category | None:
    program = key.split(" ", 1)[0]
    if program in _NOT_A_ROUTINE:
        return None
    for category, pattern in _CATEGORY_WORDS:
        if pattern.search(key):
            return category
    return None


def _relative(folder: str | None, cwd: str | None) -> str | None:
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
    if folder.startswith(("/", "~", "..")) or _DRIVE.match(folder) or _HOME_PATH.search(folder):
        return None
    return folder.strip("/") or None


def _error_line(output: str) -> str | None:
    """The line of an error that says what went wrong (not `Exit code 1`), without home paths; None if none does.
    Evidence for `playbook why`, never lesson text."""
    lines = [" ".join(line.split()) for line in output.splitlines()[:200]]
    lines = [line for line in lines if line.strip("=-_*✘ ") and not _EXIT_ONLY.match(line)]
    telling = [line for line in lines if _INFORMATIVE.search(line) and not line.lower().startswith("traceback")]
    if not telling:
        return None
    line = _USER_HOME.sub("~", telling[0][:400])  # the user's name is not the lesson
    line = line.strip(" ✘[]").removeprefix("ERROR] ").strip()
    return line if len(line) <= 120 else line[:119] + "…"


def _flat(text: str) -> str:
    """Text as a copy of a command is compared: quotes dropped, whitespace as one space (`make "release"` is a
    copy of `make release`; a doubled space must not hide one)."""
    return " ".join(text.replace('"', " ").replace("'", " ").split())


def _taint(fix: Sequence[str], read: Sequence[str], prompts: Sequence[str], *, least: int = 12) -> str | None:
    """Why the command `fix` (its words) rests only on what the agent read: it occurs in tool output before the
    agent ran it (`read`, already flat), and in none of the user's prompts (flat). A short fix (`make`) is in
    every output; `least` is the length a fix must have to count as copied."""
    needle = _flat(" ".join(fix))
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


# --- candidates ----------------------------------------------------------------------------------------------


def _facts(runs: Sequence[Run], cwd: str | None) -> list[Candidate]:
    counts: dict[tuple[Category, str | None, str], int] = {}
    subcommands: dict[str, set[str]] = {}
    for run in runs:
        if not run.ok or _FAILED.search(run.output):
            continue  # failed, or ended well only because a pipe hid its failure
        parsed = _parse(run.command, run.folder)
        if parsed is None:
            continue
        key = command_key(parsed.words)
        program = key.split(" ", 1)[0]
        where = _relative(parsed.folder, cwd)
        category = _category(key)
        if category == "install" and (program not in _INSTALLERS or len(parsed.words) > len(key.split())):
            category = None  # installing a named package is a task, not the project's routine
        if category is not None:
            counts[(category, where, key)] = counts.get((category, where, key), 0) + 1
        elif program not in _COMMON and len(key.split()) > 1 and not program.startswith((".", "/")):
            subcommands.setdefault(program, set()).add(key.split()[1])
            counts[("tool", None, program)] = counts.get(("tool", None, program), 0) + 1
    found: list[Candidate] = []
    for (category, where, key), n in counts.items():
        lesson: Lesson
        if category == "tool":
            lesson = OwnTool(program=key, subcommands=tuple(sorted(subcommands.get(key, ()))))
        else:
            lesson = CommandFact(category=category, command=Command(words=_key_words(key), folder=where))
        found.append(
            Candidate(
                key=f"fact|{category}|{where or ''}|{key}",
                section="PROJECT CONTEXT",
                lesson=lesson,
                trigger=key,
                count=n,
                category=category,
            )
        )
    return found


def _flag_name(word: str) -> str:
    return word.split("=", 1)[0]


def _unknown_variant(failed: _Parsed, worked: _Parsed, error: str) -> tuple[str, tuple[str, ...]] | None:
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
            return "program", _key_words(wk)
    return None


def _variant(failed: _Parsed, worked: _Parsed, cwd: str | None) -> tuple[str, tuple[str, ...]] | None:
    """(how `worked` differs from `failed`, the words that say it: the working program, folder or added flags)
    when it is a close variant that says a rule; None when the two are different commands or differ only in what
    they work on."""
    fk, wk = command_key(failed.words), command_key(worked.words)
    f_prog, w_prog = PurePosixPath(failed.words[0]).name, PurePosixPath(worked.words[0]).name
    f_rest, w_rest = list(failed.words[1:]), list(worked.words[1:])
    f_where, w_where = _relative(failed.folder, cwd), _relative(worked.folder, cwd)
    if failed.words[0] != worked.words[0] and f_prog == w_prog and f_rest == w_rest:
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
        # Another program for the same job, with the same arguments (`npm install` -> `pnpm install`).
        if f_rest == w_rest or (fk.split(" ", 1)[1:] == wk.split(" ", 1)[1:] and len(fk.split()) > 1):
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


# A check's output that says it failed (a count of failures that is not zero, an error line, a failed build).
_FAILED = re2.compile(
    r"\b[1-9]\d* (?:failed|failing|errors?)\b|(?m:^\s*(?:FAIL|FAILED|ERROR|error)(?:\[[\w-]+\])?[: ])|\berror TS\d+:"
    r"|\b(?:build|compilation) failed\b|\bTests? failed\b"
)
# zsh's own error lines (Claude Code runs a command through `eval` in the user's shell).
_ZSH_ERROR = re2.compile(
    r"(?m)^(?:\(eval\):\d+|zsh(?::\d+)?): (?:parse error|no matches found|unknown file attribute|bad pattern|"
    r"command not found|bad substitution|number expected)"
)
_FILTERS = frozenset({"tail", "head", "grep", "rg", "sed", "awk", "cut", "sort", "uniq", "less", "more", "tee", "wc"})
_CHECKS = frozenset({"test", "lint", "typecheck", "build"})
# What a program says when it has no such option or subcommand.
_UNKNOWN = re2.compile(
    r"(?i)(?:unknown|unrecognized|unrecognised|invalid|unexpected|no such) (?:option|flag|argument|command|subcommand|"
    r"shorthand flag)|invalid choice|is not a \S+ command|unknown command"
)
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


def _prepares(parsed: _Parsed) -> bool:
    """True for a command that gets a project ready for another (a build, an install, a pull of others' work)."""
    key = command_key(parsed.words)
    return key in _PREPARING or _category(key) in ("build", "install")


def _plain_words(words: Sequence[str]) -> tuple[str, ...]:
    """A command's words as a lesson may state them: all of them when none is a path or a value of this one run,
    else its name (`git pull --rebase origin main`; `bun run build`)."""
    return tuple(words) if all(_PLAIN_WORD.match(w) for w in words) else _key_words(command_key(words))


def _looks(parsed: _Parsed) -> bool:
    return bool(_LOOKING.match(" ".join(parsed.words)))


def _correction(how: str, part: tuple[str, ...], failed: _Parsed, worked: _Parsed) -> tuple[str, Correction]:
    """The key and the typed lesson of one correction."""
    fk = _key_words(command_key(failed.words))
    wk = _key_words(command_key(worked.words))
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
    if how == "before":
        return f"correction|before|{' '.join(fk)}|{' '.join(part)}", Correction(
            how="before", failed=Command(words=fk), worked=Command(words=part)
        )
    return "correction|absolute", Correction(how="absolute", failed=Command(words=fk))


def _corrections(
    runs: Sequence[Run], cwd: str | None, read: Sequence[str], read_before: Mapping[int, int], prompts: Sequence[str]
) -> list[Candidate]:
    """Failed commands and the variant that then worked (at most `_MOST_CORRECTIONS`: each is checked against
    everything read before it, so a session crafted with thousands of pairs costs no more than this many)."""
    found: list[Candidate] = []
    for i, run in enumerate(runs):
        if run.ok or run.rejected:
            continue
        if len(found) >= _MOST_CORRECTIONS:
            break
        failed = _parse(run.command, run.folder)
        error = _error_line(run.output)
        if failed is None or error is None or _TEST_FAILURES.search(run.output):
            continue
        prepared: _Parsed | None = None  # a build, an install or a pull that ran after the failure
        prepared_at = -1
        for later in runs[i + 1 : i + 7]:
            if not later.ok:
                continue
            worked = _parse(later.command, later.folder)
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
            key, lesson = _correction(how[0], how[1], failed, worked)
            if lesson.worked is not None and _bypasses(lesson.worked.words):
                break  # a workaround that switches a safeguard off is never a lesson
            found.append(
                Candidate(
                    key=key,
                    section="MISTAKES TO AVOID",
                    lesson=lesson,
                    trigger=clip(error, 80),
                    taint=(
                        _taint(prepared.words, read[: read_before.get(prepared_at, 0)], prompts, least=4)
                        if how[0] == "before" and prepared is not None
                        else _taint(worked.words, read[: read_before.get(later.index, 0)], prompts)
                    ),
                    error=error,
                )
            )
            break
    return found


def _pitfalls(runs: Sequence[Run]) -> list[Candidate]:
    found: list[Candidate] = []
    for run in runs:
        match = _NOTHING_SELECTED.search(run.output)
        parsed = _parse(run.command, run.folder)
        if match is None or parsed is None or _NOT_FOUND.search(run.output):
            continue
        if _category(command_key(parsed.words)) != "test":
            continue
        words = list(parsed.words)
        deselected = next((g for g in (match.group(1), match.group(2)) if g), None)
        selector = next(
            ((w, words[i + 1]) for i, w in enumerate(words[:-1]) if w in ("-m", "-k", "--grep", "-t")), None
        )
        shown = tuple(w for w in words if not w.startswith("/") and not _HOME_PATH.search(w))
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


def _hidden_failures(runs: Sequence[Run]) -> list[Candidate]:
    """Checks (tests, lint, type-check, a build) that ended well only because a pipe hid their failure: the
    pipeline's last program (`tail`, `head`, `grep`) decided its exit status, while the output says it failed."""
    found: list[Candidate] = []
    for run in runs:
        if not run.ok or "pipefail" in run.command or "PIPESTATUS" in run.command or not _FAILED.search(run.output):
            continue
        simple = [c for c in parse_command(run.command.strip()).commands if c.words and c.words[0] != "cd"]
        if len(simple) < 2 or simple[0].piped or any(w is None for w in simple[0].words):
            continue
        filters = [c.words[0] for c in simple[1:] if c.piped and c.words and c.words[0] in _FILTERS]
        parsed = _parse(run.command, run.folder)
        if not filters or parsed is None or _category(command_key(parsed.words)) not in _CHECKS:
            continue
        key = _key_words(command_key(parsed.words))
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


def _zsh(runs: Sequence[Run]) -> list[Candidate]:
    """The shell is zsh when its own errors say so (`zsh: no matches found`, `(eval):1: parse error near`)."""
    said = sum(1 for run in runs if not run.ok and _ZSH_ERROR.search(run.output))
    if not said:
        return []
    return [Candidate(key="pitfall|zsh", section="MISTAKES TO AVOID", lesson=ZshShell(), trigger="zsh", count=said)]


def clip(text: str, most: int) -> str:
    """`text` cut to at most `most` characters, never inside a `<tag>` (a trigger is matched literally: half a
    tag would match nothing the transcript says)."""
    if len(text) <= most:
        return text
    cut = text[:most]
    while (opened := cut.rfind("<")) > cut.rfind(">"):
        cut = cut[:opened]
    return cut.rstrip()


def _quote(text: str) -> str:
    """What the user typed, as one line: their home folder masked, a link said as `(a link)` (a keyless lesson
    carries none), the first sentence of a long prompt."""
    flat = " ".join(_LINK.sub("(a link)", _USER_HOME.sub("~", _CONTINUED.sub(" ", text))).split())
    if len(flat) > _QUOTE_MAX:
        end = _SENTENCE_END.search(flat)
        flat = flat[: end.start() + 1] if end else flat
    return flat if len(flat) <= _QUOTE_MAX else flat[: _QUOTE_MAX - 1] + "…"


def _stopped(message: SessionMessage) -> Stopped:
    """What a stopped call was: a shell command's name, or the kind of change (never a path, never the tool's own
    name: an MCP server names its tools as it likes)."""
    if message.tool_name in SHELL_TOOLS:
        found = _command_of(message.tool_input)
        parsed = _parse(found[0], found[1]) if found else None
        if parsed is not None:
            return Stopped(what="command", command=Command(words=_key_words(command_key(parsed.words))))
    kinds: dict[str, Literal["edit", "new_file", "notebook", "plan"]] = {
        "ExitPlanMode": "plan",
        "Edit": "edit",
        "MultiEdit": "edit",
        "Write": "new_file",
        "NotebookEdit": "notebook",
    }
    return Stopped(what=kinds.get(message.tool_name or "", "tool"))


def _sentences(text: str) -> list[str]:
    """The sentences of what the user typed (a line break ends one too)."""
    flat = _CONTINUED.sub(" ", text)
    return [" ".join(p.split()) for line in flat.splitlines() for p in _SENTENCE_SPLIT.split(line) if p.strip()]


def _cue_sentences(text: str) -> list[str]:
    """What a prompt says as a lasting rule or a fact of the project ("as always never push sensitive data", "in
    this repo we commit ...", "we don't need backward compatibility"): the whole prompt when it is short, else each
    sentence that says so, after the sentence before it when it is a short order that leans on it ("avoid inventing
    our own")."""
    sentences = _sentences(text)
    cued = [i for i, sentence in enumerate(sentences) if _DURABLE.search(sentence) and not _asks(sentence)]
    if not cued:
        return []
    whole = " ".join(_CONTINUED.sub(" ", text).split())
    if len(whole) <= _QUOTE_MAX:
        return [whole]
    said = []
    for i in cued:
        short = len(sentences[i]) < _SHORT and i > 0 and bool(_LEANS.match(sentences[i]))
        said.append(f"{sentences[i - 1]}. {sentences[i]}" if short else sentences[i])
    return said


def _pasted(text: str) -> bool:
    """True when a prompt is mostly pasted output (a log, a command's answer), not the user's own sentences."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return True
    first = lines[0]
    return bool(_PASTED.match(first)) or (len(lines) > 3 and sum(bool(_WORDS.match(x)) for x in lines) < len(lines) / 2)


def _asks(sentence: str) -> bool:
    """True when a sentence is a question (its mark, or its first words: people often leave the mark out)."""
    return sentence.rstrip().endswith("?") or bool(_QUESTION.match(sentence))


def _instructs(text: str) -> bool:
    """True unless the words are only a question: a question may still say what to do ("can't we use X?")."""
    return not text.rstrip().endswith("?") or bool(_DIRECTIVE.search(text))


def _says_something(text: str) -> bool:
    """True when the words say what to do or name a thing of the project (a command, a file, a flag, an identifier):
    "use pnpm", "set group.visible"; not "i'll take it from here"."""
    return bool(_DIRECTIVE.search(text) or _CODEISH.search(text))


def _framed_shell(messages: Sequence[SessionMessage], calls: Mapping[str, SessionMessage]) -> bool:
    """True when the session's harness frames every failed shell command (`Exit code 1` first), and at least one
    shows it: there, a shell result that opens with the refusal's words can only be the harness's. Elsewhere a
    program's output could be dressed as the user stopping it, so a stopped shell command is not the user's."""
    failures = [
        m.text or ""
        for m in messages
        if m.kind == "tool_result"
        and m.is_error
        and m.tool_use_id is not None
        and (calls[m.tool_use_id].tool_name if m.tool_use_id in calls else None) in _CLAUDE_SHELLS
        and not _REJECTED.match(m.text or "")
    ]
    return bool(failures) and all(_FRAMED_FAILURE.match(text) for text in failures)


def _typed(text: str) -> str:
    """The part of a prompt the user typed, as far as the text shows: its first paragraph, up to a line that ends
    with a colon (what follows a blank line or "the lead wrote:" is what they pasted: someone else's words)."""
    first = _PARAGRAPH.split(text.strip(), maxsplit=1)[0]
    kept: list[str] = []
    for line in first.splitlines():
        kept.append(line)
        if line.rstrip().endswith(":"):
            break
    return "\n".join(kept)


def _preferences(messages: Sequence[SessionMessage]) -> list[Candidate]:
    found: list[Candidate] = []
    calls: dict[str, SessionMessage] = {m.tool_use_id: m for m in messages if m.kind == "tool_use" and m.tool_use_id}
    framed = _framed_shell(messages, calls)
    stopped: Stopped | None = None  # the call the user stopped (or Esc) without a reason, until their next words
    for m in messages:
        if m.is_sidechain:
            continue
        if (
            m.kind == "tool_result"
            and m.is_error
            and _REJECTED.match(m.text or "")
            and m.tool_use_id in calls
            and (calls[m.tool_use_id].tool_name or "") in _HARNESS_TOOLS
            and (framed or calls[m.tool_use_id].tool_name not in _CLAUDE_SHELLS)
        ):
            what = _stopped(calls[m.tool_use_id])
            reason = _REJECTION_REASON.search(m.text or "")
            if reason:
                if _says_something(reason.group("reason")):
                    said = _quote(reason.group("reason"))
                    found.append(_preference(Preference(said=said, stopped=what, reason=True)))
                stopped = None
            else:
                stopped = what
        elif m.role == "user" and m.kind == "text" and not m.is_prompt and _INTERRUPTED.match(m.text or ""):
            stopped = stopped or Stopped(what="interrupt")
        elif m.is_prompt and m.text and m.text.strip():
            typed = _typed(m.text)
            if _pasted(m.text) or not typed.strip():
                pass  # a log or someone else's text the user pasted: not their words
            elif stopped is not None and _instructs(typed):
                found.append(_preference(Preference(said=_quote(typed), stopped=stopped)))
            elif _CORRECTS.match(typed) or _STRONG.search(typed):
                found.append(_preference(Preference(said=_quote(typed))))
            else:
                found += [_preference(Preference(said=_quote(cue))) for cue in _cue_sentences(typed)]
            stopped = None
    return found


def _preference(lesson: Preference) -> Candidate:
    return Candidate(
        key=f"preference|{' '.join(lesson.said.lower().split())}",
        section="USER PREFERENCES",
        lesson=lesson,
        trigger=clip(lesson.said, 80),
    )


def observe(messages: Sequence[SessionMessage], cwd: str | None = None) -> Observed:
    """Every candidate lesson of one session, each once with how often the session showed it. A lesson is typed:
    its text is written from its fields (`core.lessons.render`), never copied from the transcript; one whose words
    could not be written inside a code span is never made."""
    runs = shell_runs(messages)
    prompts = [m.text for m in messages if m.is_prompt and m.text]
    # What the agent had read (any tool's output: a fetched page, a command's output) before each command ran: how
    # many of the outputs in `read` came before it.
    index_of = {run.call_id: run.index for run in runs}
    read: list[str] = []
    read_before: dict[int, int] = {}
    for m in messages:
        if m.kind == "tool_result" and not m.is_sidechain:
            if m.tool_use_id in index_of:
                read_before[index_of[m.tool_use_id]] = len(read)
            read.append(_flat(m.text or ""))
    candidates = [
        *_facts(runs, cwd),
        *_corrections(runs, cwd, read, read_before, [_flat(p) for p in prompts]),
        *_pitfalls(runs),
        *_hidden_failures(runs),
        *_zsh(runs),
        *_preferences(messages),
    ]
    stops = sum(1 for r in runs if r.rejected) + sum(
        1
        for m in messages
        if m.role == "user" and m.kind == "text" and not m.is_prompt and _INTERRUPTED.match(m.text or "")
    )
    merged: dict[str, Candidate] = {}
    for c in candidates:
        if not writable(c.lesson):
            continue
        if c.key in merged:
            merged[c.key] = merged[c.key].model_copy(update={"count": merged[c.key].count + c.count})
        else:
            merged[c.key] = c
    return Observed(
        candidates=list(merged.values()),
        prompts=len(prompts),
        calls=sum(1 for m in messages if m.kind == "tool_use" and not m.is_sidechain),
        commands=len(runs),
        failures=sum(1 for r in runs if not r.ok and not r.rejected),
        stops=stops,
    )


Quiet = Literal[
    "too short", "only tool output", "no failure and no correction", "no correction", "not enough evidence yet"
]


def quiet(observed: Observed) -> Quiet:
    """Why a session taught the rules nothing: too short (one prompt, a few tool calls); only tool output (no
    command ran and the user said nothing after the task: the agent read and edited); no failure and no correction;
    failures or stops, but nothing that said what to do instead (no correction); or lessons seen too few times so
    far (a build once: not enough evidence yet)."""
    if observed.candidates:
        return "not enough evidence yet"
    if observed.prompts <= 1 and observed.calls < _SHORT_SESSION and not observed.stops:
        return "too short"
    if not observed.commands and not observed.stops and observed.prompts <= 1:
        return "only tool output"
    if not observed.failures and not observed.stops:
        return "no failure and no correction"
    return "no correction"


def _enough(c: Candidate, ev: Evidence) -> bool:
    if c.kind == "fact":
        return ev.count >= FACT_MIN_RUNS[c.category or "tool"]
    return True  # a correction, a pitfall or the user's own words stand on one occurrence


def _evidence(c: Candidate, ev: Evidence) -> str:
    what = {"fact": "successful run", "correction": "correction", "pitfall": "occurrence", "preference": "time said"}
    noun = what[c.kind]
    sessions = f"{len(ev.sessions)} session{'s' * (len(ev.sessions) != 1)}"
    said = f"{ev.count} {noun}{'s' * (ev.count != 1)} in {sessions}: {', '.join(ev.sessions[:5])}"
    error = ev.error or c.error
    return f'{said}; the failure said "{error}"' if error else said


def _runs_tasks(history: History) -> bool:
    """True when the project's sessions ran its routines through a task runner (`mise run lint`, `make test`)."""
    return any(
        key.startswith("fact|") and ev.count >= FACT_MIN_RUNS["test"] and key.split("|")[3].startswith(_TASK_RUNNERS)
        for key, ev in history.evidence.items()
        if key.count("|") >= 3
    )


def mine(observed: Observed, history: History, project: str | None = None, *, most: int = 10) -> list[Finding]:
    """The findings of one session whose evidence (over `history`, which includes this session) is enough, at most
    `most`, corrections and the user's words first. Their text is written from the typed lesson
    (`core.lessons.render`), naming `project`; a project whose name cannot be written safely (a repository named
    with a line break or a backtick) teaches nothing, since its lessons could not be bound to it."""
    if project is not None and project_label(project) is None:
        return []  # a folder name that holds a line break or a backtick: its lessons could not be bound to it
    order = {"preference": 0, "correction": 1, "pitfall": 2, "fact": 3}
    wrapped = _runs_tasks(history)
    kept: list[Finding] = []
    for c in sorted(observed.candidates, key=lambda c: (order[c.kind], -c.count)):
        ev = history.evidence.get(c.key) or Evidence(count=c.count)
        if not _enough(c, ev):
            continue
        if wrapped and isinstance(c.lesson, CommandFact) and c.lesson.command.words[0] in _TOOLCHAINS:
            continue  # the project runs its routines through a task runner: the bare toolchain was the agent's own
        lesson = ev.lesson or c.lesson
        kept.append(
            Finding(
                section=c.section,
                text=render(lesson, project),
                lesson=lesson,
                trigger=c.trigger,
                taint=c.taint,
                evidence=_evidence(c, ev),
                kind=c.kind,
            )
        )
    return kept[:most]
