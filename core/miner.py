"""The rules miner: lessons that rules can find reliably in a session's own record, without a model.

- *project facts*: the commands that test, lint, format, type-check, build, install and run the project,
  learned from the commands that succeeded (a quality gate once, a build, a dev server or an install twice; once,
  a routine the user named in their own words), and a project's own command-line tool used again and again for
  three things or more;
- *corrections*: a command that failed and a close variant of it that then worked, said as a rule (another
  folder, a flag added, another program, an option or a wrapper the machine does not have, a pull or a build that
  had to run first, an absolute path where a relative one broke after a `cd`; a program that lacks the project's
  packages where its failure named a module), never a file path as the fix, never a workaround that switches a
  safeguard off (`--force`, `--no-verify`, `sudo`); the error's words are kept as evidence (`playbook why`), never
  written into the lesson (`core.corrections`); `gh` that could not tell the repository from the git remotes,
  then worked once a command named it (`--repo owner/name`); a path `git add` refused because .gitignore ignores
  it (it stays out of commits; not where the session itself forced it in); and a script that was not executable
  until the session made it so (`chmod +x`, and `git update-index --chmod=+x` where git had to record it); a git
  command Codex's sandbox kept from writing `.git` until it ran with escalated permissions; a call a hook of the
  user's refused, and the program its message named that then worked; a change to a file a hook of the user's
  refused once as a warning and let through when it was made again;
- *pitfalls*: a test command that selected no test at all, a check whose failure a pipe hid, a shell that is zsh
  (its errors seen twice in the project's sessions), one with `noclobber` set, and zsh's `path` (a variable of that
  name is `PATH`) assigned by a command;
- *user preferences*: what the user said when they stopped a call or a plan (the reason they gave, an order
  included: "write this out as an ADR", or their next words), pressed Esc, or corrected the agent ("no, use pnpm",
  "don't add comments"), a prompt's sentence that states a lasting rule or a fact of the project ("as always never
  push secrets", "we keep our config in X"; not a hedge or a sentence about the work at hand), a step they check the
  agent took ("does the readme reflect the changes as well? if not please make it so"), what they typed in answer
  to the agent's question (not an option it offered), and the commit style of a
  title they set (Conventional Commits): only where the transcript shows they typed it (`core.said`).

Some findings are held for review (`taint`, why: the screen holds them and `playbook review` lists them, never
exported unseen): a fix only tool output suggested; a routine the agent read in one of the project's own files
before running it (what `/init` writes from the repository); and a name the user chose for one thing of the change
at hand or one of the options the agent proposed (the change records it: a decision, not a rule).

Nothing here restates what the agent's tools already enforce (read before edit, a unique string to replace, a
read too large, a sibling call that errored): only shell commands and the user's own words make a lesson.
`observe` finds every candidate of one session with its count; `mine` keeps those whose evidence, over the
session and the project's others (`History`), is enough. Every lesson is a typed value (`core.lessons`) whose
text is written from its fields: no text from the transcript is quoted but what the user typed. Commands are read
by the shell's grammar (`core.shell`), a session's calls as `core.runs` reads them. Pure: messages in, findings out.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

import re2
from pydantic import BaseModel, Field

from core.corrections import Found, corrections, flat
from core.executable_scripts import executable
from core.failures import FAILED, hid_failure
from core.gh_repository import repository
from core.hook_refusals import hooked, warned
from core.ignored_paths import ignored
from core.lessons import (
    Command,
    CommandFact,
    ConventionalCommits,
    HiddenFailure,
    Lesson,
    NothingSelected,
    OwnTool,
    Preference,
    ZshShell,
    project_label,
    render,
    writable,
)
from core.models import SessionMessage
from core.runs import (
    HOME_PATH,
    SHELL_TOOLS,
    Category,
    Run,
    category_of,
    clip,
    command_key,
    command_of,
    key_words,
    parse,
    relative,
    shell_runs,
)
from core.said import chooses_among, commit_style, interrupted, names_one_thing, said, typed_words
from core.sandboxed_git import escalated, sandboxed
from core.shell import parse_command

__all__ = [
    "DOCUMENTED",
    "MINER_VERSION",
    "NAME_CHOSEN",
    "OPTION_CHOSEN",
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
MINER_VERSION = 14  # 14: a check that passed only by added options, an option given a value: no fix (issue 41)

Kind = Literal["fact", "correction", "pitfall", "preference"]


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
# A tool the project works with is used for several things (a tracker's `create`, `show`, `close`): one
# subcommand run again and again (a deploy retried, a proxy every command went through) is one task's command.
TOOL_MIN_SUBCOMMANDS = 3
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
_TASK_RUNNERS = (
    "mise run ",
    "make ",
    "just ",
    "task ",
    "npm run ",
    "pnpm run ",
    "yarn run ",
    "bun run ",
    "node --run ",
)
_TOOLCHAINS = frozenset({"go", "cargo", "dotnet", "swift", "zig"})
_INSTALLERS = frozenset({"npm", "pnpm", "yarn", "bun", "uv", "pip", "pip3", "poetry", "mix", "bundle", "cargo", "go"})
_NOT_FOUND = re2.compile(r"(?i)not found|no such file|cannot find|does not exist")
_NOTHING_SELECTED = re2.compile(
    r"(?i)(?:(\d+) deselected / 0 selected|collected \d+ items? / (\d+) deselected / 0 selected|no tests ran|"
    r"no tests collected|collected 0 items|0 tests? (?:ran|run)|no test files found)"
)
_SHORT_SESSION = 5  # tool calls: a one-prompt session with fewer did too little to teach anything


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
    asked: bool = False  # a routine the user named in a prompt: their words, one run is evidence enough

    @property
    def kind(self) -> Kind:
        """What kind of lesson it is: a project fact (a command or the project's own tool), a correction, a pitfall
        or the user's preference."""
        return {"tool": "fact", "hidden": "pitfall", "zsh": "pitfall", "commits": "preference"}.get(
            self.lesson.kind, self.lesson.kind
        )  # type: ignore[return-value]

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


# --- candidates ----------------------------------------------------------------------------------------------


def _asks(words: Sequence[str]) -> Literal["help", "version"] | None:
    """What a command only asks its program, if that is all it does: its help (`--help`, `bd help`) or its
    version (`--version`, a bare `entire version`)."""
    if "--help" in words or (len(words) > 1 and words[1] == "help"):
        return "help"
    if "--version" in words or tuple(words[1:]) == ("version",):
        return "version"
    return None


@dataclass(frozen=True)
class _Said:
    """What the user typed of each prompt, as `names` reads it."""

    prompts: tuple[str, ...]

    def names(self, key: str) -> bool:
        """True when the user named the command `key` (`node --run format:check`) as a whole: of two words or more
        anywhere, with no word's character glued on either side; a single word only at a code span's start (a lone
        `make` is a word of any sentence: "make sure"). Searched at C speed: most prompts name no command."""
        if " " not in key:
            return any(f"`{key}`" in p or f"`{key} " in p for p in self.prompts)
        for prompt in self.prompts:
            at = prompt.find(key)
            while at >= 0:
                end = at + len(key)
                before, after = prompt[at - 1 : at], prompt[end : end + 1]
                if not _glued(before) and (
                    not _glued(after) or (after in ".:" and not _glued(prompt[end + 1 : end + 2]))
                ):
                    return True
                at = prompt.find(key, at + 1)
        return False


def _glued(char: str) -> bool:
    """True for a character that would make the text around it one word with a command's (`-`, `/`, `=`, ...)."""
    return bool(char) and (char.isalnum() or char in "-_/=.:@~$")


def _facts(
    runs: Sequence[Run],
    cwd: str | None,
    read: Sequence[str],
    read_before: Mapping[int, int],
    prompts: Sequence[str] = (),
) -> list[Candidate]:
    """The project's routines the session ran (`FACT_MIN_RUNS`); one the agent had read in the project's own files
    (a README, package.json, a Makefile, AGENTS.md) before it first ran it is held: `DOCUMENTED`. One the user
    named in a prompt (`prompts`: "run the checks, at minimum node --run format:check") is theirs: it is never held
    as what the files say, and one run of it is evidence enough."""
    counts: dict[tuple[Category, str | None, str], int] = {}
    first: dict[tuple[Category, str | None, str], int] = {}  # the index of each routine's first run
    subcommands: dict[str, set[str]] = {}
    learning: set[str] = set()  # programs whose help the session read
    for run in runs:
        if not run.ok or FAILED.search(run.output) or hid_failure(run):
            continue  # failed, or ended well only because a pipe hid its failure
        parsed = parse(run.command, run.folder)
        if parsed is None:
            continue
        asked = _asks(parsed.words)
        if asked is not None:
            # Asking a program for its help or version runs nothing of the project: no use of it. And an agent
            # that had to read a tool's help was learning it: this session is no evidence of a routine.
            if asked == "help":
                learning.add(PurePosixPath(parsed.words[0]).name)
            continue
        key = command_key(parsed.words)
        program = key.split(" ", 1)[0]
        where = relative(parsed.folder, cwd)
        category = category_of(key)
        if category == "install" and (program not in _INSTALLERS or len(parsed.words) > len(key.split())):
            category = None  # installing a named package is a task, not the project's routine
        if category is not None:
            counts[(category, where, key)] = counts.get((category, where, key), 0) + 1
            first.setdefault((category, where, key), run.index)
        elif program not in _COMMON and len(key.split()) > 1 and not program.startswith((".", "/")):
            subcommands.setdefault(program, set()).add(key.split()[1])
            counts[("tool", None, program)] = counts.get(("tool", None, program), 0) + 1
    found: list[Candidate] = []
    # The routines run most, checked against what was read: a real session has a handful; a crafted one with
    # thousands of distinct commands costs no more than this many searches of what it read.
    checked = set(sorted(counts, key=lambda k: -counts[k])[:_MOST_DOCUMENTED])
    corpus = _Read.of(read)
    said = _Said(tuple(prompts))
    for (category, where, key), n in counts.items():
        lesson: Lesson
        if category == "tool" and key in learning:
            continue
        if category == "tool":
            lesson = OwnTool(program=key, subcommands=tuple(sorted(subcommands.get(key, ()))))
        else:
            lesson = CommandFact(category=category, command=Command(words=key_words(key), folder=where))
        named = category != "tool" and (category, where, key) in checked and said.names(key)
        documented = (
            category != "tool"
            and not named
            and (category, where, key) in checked
            and corpus.holds(flat(key), before=read_before.get(first[(category, where, key)], 0))
        )
        found.append(
            Candidate(
                key=f"fact|{category}|{where or ''}|{key}",
                section="PROJECT CONTEXT",
                lesson=lesson,
                trigger=key,
                count=n,
                category=category,
                taint=DOCUMENTED if documented else None,
                asked=named,
            )
        )
    return found


# Why a project fact is held for review: the project's own files say it (the agent read it there before it ran it),
# so it is what `/init` writes from the repository, and the repository already tells every agent.
DOCUMENTED = "the project's own files already say it (the agent read one before running it): what /init writes"


_MOST_DOCUMENTED = 20

# Programs that show a file's text: their output is the file's, as a read of it is.
_SHOWS_FILES = frozenset({"cat", "head", "tail", "sed", "less", "more", "bat", "nl", "jq"})
# Harness tools that read a file (Claude Code's `Read`, Gemini's and others' `read_file`).
_READ_TOOLS = frozenset({"Read", "read_file", "view", "NotebookRead"})


def _file_reads(messages: Sequence[SessionMessage]) -> set[str]:
    """The ids of the calls that read one of the project's files (a read tool, `cat README.md`), not a page, a
    search or a command's own output: what the project's own files say."""
    found: set[str] = set()
    for m in messages:
        if m.kind != "tool_use" or not m.tool_use_id or m.is_sidechain:
            continue
        if m.tool_name in _READ_TOOLS:
            found.add(m.tool_use_id)
        elif m.tool_name in SHELL_TOOLS and (call := command_of(m.tool_input)) is not None:
            parsed = parse(call[0], call[1])
            if parsed is not None and PurePosixPath(parsed.words[0]).name in _SHOWS_FILES and len(parsed.words) > 1:
                found.add(m.tool_use_id)
    return found


@dataclass(frozen=True)
class _Read:
    """What the agent read, in order (each text `flat`), as one string searched at C speed."""

    text: str
    starts: tuple[int, ...]  # where each read text begins in `text`, and its end

    @classmethod
    def of(cls, read: Sequence[str]) -> _Read:
        """The texts of `read`, in order."""
        starts, at = [0], 0
        for text in read:
            at += len(text) + 1
            starts.append(at)
        return cls("\x00".join(read) + "\x00", tuple(starts))

    def holds(self, needle: str, *, before: int) -> bool:
        """True when `needle` is in one of the first `before` texts."""
        return bool(needle) and self.text.find(needle, 0, self.starts[min(before, len(self.starts) - 1)]) >= 0


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


def _pitfalls(runs: Sequence[Run]) -> list[Candidate]:
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
        shown = tuple(w for w in words if not w.startswith("/") and not HOME_PATH.search(w))
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
    """The shell is zsh when its own errors say so (`zsh: no matches found`, `(eval):1: parse error near`); it has
    `noclobber` set when zsh refused a redirection onto a file that exists (`(eval):1: file exists: /tmp/x`)."""
    found: list[Candidate] = []
    said = sum(1 for run in runs if not run.ok and _ZSH_ERROR.search(run.output))
    if said:
        found.append(
            Candidate(key="pitfall|zsh", section="MISTAKES TO AVOID", lesson=ZshShell(), trigger="zsh", count=said)
        )
    tied = sum(
        1
        for run in runs
        if "path" in run.command and _ASSIGNS_PATH.search(run.command) and _ZSH_NOT_FOUND.search(run.output)
    )
    if tied:
        found.append(
            Candidate(
                key="pitfall|zsh|path",
                section="MISTAKES TO AVOID",
                lesson=ZshShell(path=True),
                trigger="command not found",
                count=tied,
            )
        )
    clobber = sum(1 for run in runs if not run.ok and "file exists" in run.output and _ZSH_NOCLOBBER.search(run.output))
    if clobber:
        found.append(
            Candidate(
                key="pitfall|zsh|noclobber",
                section="MISTAKES TO AVOID",
                lesson=ZshShell(noclobber=True),
                trigger="file exists",
                count=clobber,
            )
        )
    return found


def _correction(found: Found) -> Candidate:
    return Candidate(
        key=found.key,
        section="MISTAKES TO AVOID",
        lesson=found.lesson,
        trigger=clip(found.error, 80),
        taint=found.taint,
        error=found.error,
    )


def _commits(lesson: ConventionalCommits | None) -> list[Candidate]:
    if lesson is None:
        return []
    return [Candidate(key="preference|commits", section="USER PREFERENCES", lesson=lesson, trigger="commit title")]


# Why a preference is held for review (`playbook review`) rather than exported unseen: a name chosen for one thing
# of the change at hand, or one of the options the agent proposed, is that change's decision, which the code
# already records (`core.said.names_one_thing`, `core.said.chooses_among`).
NAME_CHOSEN = "the user chose a name for one thing of the work at hand: a decision the change records, not a rule"
OPTION_CHOSEN = "the user chose one of the options the agent proposed: a decision of the work at hand, not a rule"


def _decision(said: str) -> str | None:
    """Why a preference is a decision of the change at hand rather than a rule (None: it may be a rule)."""
    if names_one_thing(said):
        return NAME_CHOSEN
    return OPTION_CHOSEN if chooses_among(said) else None


def _preference(lesson: Preference) -> Candidate:
    return Candidate(
        key=f"preference|{' '.join(lesson.said.lower().split())}",
        section="USER PREFERENCES",
        lesson=lesson,
        trigger=clip(lesson.said, 80),
        taint=_decision(lesson.said),
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
    # What the harness put before the agent as the project's instructions (Codex's AGENTS.md): read before anything.
    injected = [flat(m.text or "") for m in messages if m.role == "user" and m.is_meta and m.text]
    files = _file_reads(messages)
    read: list[str] = []
    docs: list[str] = []  # the same outputs, each kept only where it is a file the agent read (else empty)
    read_before: dict[int, int] = {}
    for m in messages:
        if m.kind == "tool_result" and not m.is_sidechain:
            if m.tool_use_id in index_of:
                read_before[index_of[m.tool_use_id]] = len(read)
            read.append(flat(m.text or ""))
            docs.append(read[-1] if m.tool_use_id in files else "")
    candidates = [
        *_facts(
            runs,
            cwd,
            [*injected, *docs],
            {i: n + len(injected) for i, n in read_before.items()},
            [typed for p in prompts if (typed := typed_words(p))],
        ),
        *(_correction(found) for found in corrections(runs, cwd, read, read_before, [flat(p) for p in prompts])),
        *(_correction(found) for found in repository(runs)),
        *(_correction(found) for found in ignored(runs, cwd)),
        *(_correction(found) for found in executable(runs)),
        *(_correction(found) for found in sandboxed(runs, escalated(messages))),
        *(_correction(found) for found in hooked(messages, runs)),
        *(_correction(found) for found in warned(messages, cwd)),
        *_pitfalls(runs),
        *_hidden_failures(runs),
        *_zsh(runs),
        *(_preference(lesson) for lesson in said(messages)),
        *_commits(commit_style(messages)),
    ]
    stops = sum(1 for r in runs if r.rejected) + sum(1 for m in messages if interrupted(m))
    merged: dict[str, Candidate] = {}
    for c in candidates:
        if not writable(c.lesson):
            continue
        if c.key in merged:
            was = merged[c.key]
            merged[c.key] = was.model_copy(update={"count": was.count + c.count, "asked": was.asked or c.asked})
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


# zsh's error that a glob matched nothing or a line did not parse, seen once, may be one command's slip; zsh's
# errors seen again in the project's sessions (that one, or its `noclobber` or `path` ones, which say more on their
# own) say it is the shell the agent keeps writing for.
ZSH_MIN_ERRORS = 2
_ZSH_KEYS = ("pitfall|zsh", "pitfall|zsh|noclobber", "pitfall|zsh|path")


def _zsh_errors(history: History) -> int:
    """How many of zsh's own errors the project's sessions showed."""
    return sum(history.evidence[k].count for k in _ZSH_KEYS if k in history.evidence)


def _enough(c: Candidate, ev: Evidence, zsh_errors: int = 0) -> bool:
    if isinstance(c.lesson, ZshShell) and not (c.lesson.noclobber or c.lesson.path):
        return max(ev.count, zsh_errors) >= ZSH_MIN_ERRORS
    if isinstance(c.lesson, OwnTool):
        used = ev.lesson if isinstance(ev.lesson, OwnTool) else c.lesson
        return ev.count >= FACT_MIN_RUNS["tool"] and len(used.subcommands) >= TOOL_MIN_SUBCOMMANDS
    if c.kind == "fact":
        return c.asked or ev.count >= FACT_MIN_RUNS[c.category or "tool"]
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
    zsh_errors = _zsh_errors(history)
    kept: list[Finding] = []
    for c in sorted(observed.candidates, key=lambda c: (order[c.kind], -c.count)):
        ev = history.evidence.get(c.key) or Evidence(count=c.count)
        if not _enough(c, ev, zsh_errors):
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
