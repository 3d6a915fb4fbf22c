"""Project facts: the project's routines (its tests, lint, format, type-check, build, install and run) and its
own command-line tool, learned from the commands that succeeded. One the agent read in the project's own files
before it ran it is held for review (`DOCUMENTED`); one the user named is theirs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

from core.candidates import Candidate
from core.corrections import flat
from core.failures import FAILED, hid_failure
from core.lessons import Command, CommandFact, Lesson, OwnTool
from core.models import SessionMessage
from core.runs import SHELL_TOOLS, Category, Run, category_of, command_key, command_of, key_words, parse, relative

__all__ = ["DOCUMENTED", "facts", "file_reads"]


# Programs everyone has, whose use says nothing about the project (its own tools are the others).
_COMMON = frozenset(
    "ls cat grep rg find fd sed awk head tail echo printf git cd pwd mkdir rm rmdir cp mv touch ln chmod chown which"
    " whereis sleep wc sort uniq diff xargs tee env export jq tree open kill pkill ps curl wget python python3 node"
    " npm npx pnpm yarn bun uv pip pip3 poetry cargo go mix make gh sh bash zsh true false test date file stat du df"
    " less more cut tr basename dirname realpath readlink timeout time nohup watch history source type command"
    " ruby perl java javac dotnet docker docker-compose kubectl brew apt apt-get sudo tar zip unzip gzip ssh scp"
    " rsync lsof netstat open xdg-open code vim nano emacs tmux screen mise asdf nvm direnv".split()
)
_INSTALLERS = frozenset({"npm", "pnpm", "yarn", "bun", "uv", "pip", "pip3", "poetry", "mix", "bundle", "cargo", "go"})


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


def facts(
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


def file_reads(messages: Sequence[SessionMessage]) -> set[str]:
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
