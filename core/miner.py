"""The rules miner: lessons that rules can find reliably in a session's own record, without a model.

- *project facts*: the commands that test, lint, format, type-check, build, install and run the project,
  learned from the commands that succeeded (a quality gate once, a build, a dev server or an install twice; once,
  a routine the user named in their own words), and a project's own command-line tool used again and again for
  three things or more (`core.project_facts`); a file the project keeps as a symlink to another, made with `ln -s`
  and staged (`core.symlinks`);
- *corrections*: a command that failed and a close variant of it that then worked, said as a rule (another
  folder, a flag added, another program, an option or a wrapper the machine does not have, a pull or a build that
  had to run first, an absolute path where a relative one broke after a `cd`; a program that lacks the project's
  packages where its failure named a module; a program not found until an install ran, in the folder it ran in,
  and the same command, run again, got past it), never a file path as the fix, never a workaround that switches a
  safeguard off (`--force`, `--no-verify`, `sudo`); the error's words are kept as evidence (`playbook why`), never
  written into the lesson (`core.corrections`); `gh` that could not tell the repository from the git remotes,
  then worked once a command named it (`--repo owner/name`, `core.gh_repository`); a path `git add` refused
  because .gitignore ignores it (it stays out of commits; not where the session itself forced it in,
  `core.ignored_paths`); and a script that was not executable until the session made it so (`chmod +x`, and
  `git update-index --chmod=+x` where git had to record it, `core.executable_scripts`); a git command Codex's
  sandbox kept from writing `.git` until it ran with escalated permissions (`core.sandboxed_git`); a call a hook
  of the user's refused, and the program its message named that then worked; a change to a file a hook of the
  user's refused once as a warning and let through when it was made again (`core.hook_refusals`);
- *pitfalls*: a test command that selected no test at all, a check whose failure a pipe hid, a shell that is zsh
  (its errors seen twice in the project's sessions), one with `noclobber` set, and zsh's `path` (a variable of that
  name is `PATH`) assigned by a command (`core.pitfalls`);
- *user preferences*: what the user said when they stopped a call or a plan (the reason they gave, an order
  included: "write this out as an ADR", or their next words), pressed Esc, or corrected the agent ("no, use pnpm",
  "don't add comments"), a prompt's sentence that states a lasting rule or a fact of the project ("as always never
  push secrets", "we keep our config in X"; not a hedge or a sentence about the work at hand), a step they check the
  agent took ("does the readme reflect the changes as well? if not please make it so"), what they typed in answer
  to the agent's question (not an option it offered), and the commit style of a
  title they set (Conventional Commits): only where the transcript shows they typed it (`core.said`); and a way of
  working they asked for that is one of a fixed few ("be concise", "no backward compatibility"), written as our
  sentence for it, never theirs (`core.habits`).

Some findings are held for review (`taint`, why: the screen holds them and `playbook review` lists them, never
exported unseen): a fix only tool output suggested; a routine the agent read in one of the project's own files
before running it (what `/init` writes from the repository); and a name the user chose for one thing of the change
at hand or one of the options the agent proposed (the change records it: a decision, not a rule).

Nothing here restates what the agent's tools already enforce (read before edit, a unique string to replace, a
read too large, a sibling call that errored): only shell commands and the user's own words make a lesson.
`observe` finds every candidate (`core.candidates`) of one session with its count; `mine` keeps those whose
evidence, over the session and the project's others (`History`), is enough. Every lesson is a typed value
(`core.lessons`) whose text is written from its fields: no text from the transcript is quoted but what the user
typed. Commands are read by the shell's grammar (`core.shell`), a session's calls as `core.runs` reads them. Pure:
messages in, findings out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from core.candidates import Candidate, Kind
from core.corrections import Found, corrections, flat
from core.executable_scripts import executable
from core.gh_repository import repository
from core.habits import habits
from core.hook_refusals import hooked, warned
from core.ignored_paths import ignored
from core.lessons import (
    CommandFact,
    ConventionalCommits,
    Habit,
    Lesson,
    OwnTool,
    Preference,
    Symlink,
    ZshShell,
    project_label,
    render,
    writable,
)
from core.models import SessionMessage
from core.pitfalls import hidden_failures, nothing_selected, zsh
from core.project_facts import facts, file_reads
from core.runs import Category, Run, clip, command_key, shell_runs
from core.said import chooses_among, commit_style, interrupted, names_one_thing, said, typed_words
from core.sandboxed_git import escalated, sandboxed
from core.symlinks import symlinks

__all__ = [
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
MINER_VERSION = 18  # 18: a hidden failure only where work was handed on; a wrapper only for the name it lacks


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
_SHORT_SESSION = 5  # tool calls: a one-prompt session with fewer did too little to teach anything


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


def _habit(lesson: Habit) -> Candidate:
    return Candidate(
        key=f"preference|habit|{lesson.habit}", section="USER PREFERENCES", lesson=lesson, trigger=lesson.habit
    )


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
    files = file_reads(messages)
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
        *facts(
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
        *nothing_selected(runs),
        *hidden_failures(runs),
        *zsh(runs),
        *(_preference(lesson) for lesson in said(messages)),
        *symlinks(runs, cwd),
        *_commits(commit_style(messages)),
        *(_habit(h) for h in habits(messages)),
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
    if isinstance(c.lesson, Symlink):
        return True  # the project's git keeps the link: one session that staged it is evidence enough
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
