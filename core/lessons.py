"""Lessons as typed values, and the one place their text is written.

The rules miner (`core.miner`) never copies text from a transcript into a lesson: it finds typed values (a command:
its words and the folder it runs in; a correction: which command failed and which worked, never the error's words;
the user's own typed words) and `render` writes the entry's text from their fields. Commands are written back from
their parsed words with shell quoting, so what an agent reads is what the allow-list checked; a word that could end
a code span (a backtick) or hold a line break is never written. The error text a lesson rests on may be evidence
(`playbook why`), never lesson text.
"""

from __future__ import annotations

import shlex
from typing import Annotated, Literal

import re2
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from core.invisible import normalise

__all__ = [
    "HABITS",
    "AnyLesson",
    "Category",
    "Command",
    "CommandFact",
    "ConventionalCommits",
    "Correction",
    "Habit",
    "HabitName",
    "HiddenFailure",
    "Lesson",
    "NothingSelected",
    "OwnTool",
    "Preference",
    "Stopped",
    "Symlink",
    "ZshShell",
    "name_words",
    "project_label",
    "quoted",
    "render",
    "untrusted_parts",
]

Category = Literal["test", "lint", "format", "typecheck", "build", "run", "install", "tool"]

_SAYS: dict[str, str] = {
    "test": "run the tests with",
    "lint": "lint with",
    "format": "format with",
    "typecheck": "type-check with",
    "build": "build with",
    "run": "start it with",
    "install": "install the dependencies with",
}
# A project name written into a lesson ("In spotter: ..."): one word of letters, digits and a few separators,
# nothing that could end a sentence's frame, start a new line, or read as an instruction.
_PROJECT = re2.compile(r"^[\pL\pN][\pL\pN._+@-]*$")
# Bash's reserved words, and the builtins its grammar reads as declarations (`export`, `local`, `unset`): as the
# first word they are grammar, not a program.
_RESERVED = frozenset(
    "! case coproc do done elif else esac fi for function if in select then until while { } time [[ ]]"
    " declare export local readonly typeset unset unsetenv".split()
)
_SAFE_WORD = re2.compile(r"^[^`\n\r]+$")
# A module's name as a lesson may quote it: identifiers joined by dots (`yaml`, `google.protobuf`), nothing else.
Module = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_.]*$", max_length=100)]
# A path inside the project as a lesson may name it: plain names joined by slashes, none of them `.` or `..`.
ProjectPath = Annotated[
    str,
    StringConstraints(pattern=r"^\.?[A-Za-z0-9_][A-Za-z0-9_.-]*(?:/\.?[A-Za-z0-9_][A-Za-z0-9_.-]*)*$", max_length=300),
]


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Command(_Value):
    """A shell command as the lesson states it: its words (the program first) and the project folder it runs in
    (None: the project's root)."""

    words: tuple[str, ...] = Field(min_length=1)
    folder: str | None = None

    def shown(self) -> str:
        """The command as a shell reads it, quoted where a word needs it (a program named like a reserved word or
        an assignment is quoted too, so it still reads as the program)."""
        first, *rest = self.words
        quoted = shlex.quote(first)
        # `%` and `@` too: tree-sitter-bash reads `a%b` or `user@host` in a program's place apart (`a` then `%b`)
        if quoted == first and (first in _RESERVED or "=" in first or "%" in first or "@" in first):
            quoted = f"'{first}'"
        return " ".join([quoted, *(shlex.quote(w) for w in rest)])


class CommandFact(_Value):
    """How the project does one routine job: `uv run pytest` runs its tests."""

    kind: Literal["fact"] = "fact"
    category: Category
    command: Command


class OwnTool(_Value):
    """The project's own command-line tool, and the subcommands the sessions used."""

    kind: Literal["tool"] = "tool"
    program: str
    subcommands: tuple[str, ...] = ()


class Correction(_Value):
    """A command that failed here and the close variant that then worked. `how`: another program, another folder, a
    flag added, an option or subcommand it does not have replaced (`option`), another command that had to run first
    (`before`: `worked` is that command), an absolute path where a relative one broke after a `cd` (then `worked`
    is None), or a program that lacks the project's packages (`module`: its failure named a module it could not
    import, and `worked` is the program that has them; a fact about a dependency, not that the program is wrong), or
    `gh` that cannot tell the GitHub repository from the checkout's git remotes (`repo`: `worked` names it with
    `--repo owner/name`), or `git add` refused a path the project's .gitignore ignores (`ignored`: that path;
    `worked` is None, since forcing it in is no fix), or a script it ran that was not executable (`executable`:
    `worked` is how the session made it so, `chmod +x` or git's `update-index --chmod=+x`, which git records), or a
    git command the agent's sandbox kept from writing `.git` until it ran with the escalated permissions the user
    approves (`sandbox`: `worked` is None), or a call a hook of the user's refused (`hook`: `failed` is the tool or
    the command it refused, `worked` the program its message named that then worked), or a change to a file a hook
    refused once as a warning and let through when the same change was made again (`warned`: `failed` is the
    tool, `under` the project folder of the file; `worked` is None), or a command whose failure said a program it
    runs was not found, and that got past it once an install had run (`installed`: `worked` is that install, with
    the project folder it ran in)."""

    kind: Literal["correction"] = "correction"
    how: Literal[
        "program",
        "folder",
        "flag",
        "absolute",
        "option",
        "before",
        "installed",
        "module",
        "repo",
        "ignored",
        "executable",
        "sandbox",
        "hook",
        "warned",
    ]
    failed: Command
    worked: Command | None = None
    added: tuple[str, ...] = ()  # for `flag`: the flags the working command added
    modules: tuple[Module, ...] = ()  # for `module`: the modules the failure named
    ignored: ProjectPath | None = None  # for `ignored`: the path inside the project .gitignore ignores
    under: ProjectPath | None = None  # for `warned`: the project folder whose files the hook warns about


class HiddenFailure(_Value):
    """A check (tests, lint, a build) whose failure a pipe hid: the pipeline ended well, its output said it failed.
    `filter`: the program it was piped into (`tail`, `head`, `grep`)."""

    kind: Literal["hidden"] = "hidden"
    command: Command
    filter: str


class NothingSelected(_Value):
    """A test command that selected no test at all (a marker or a filter that matches nothing here)."""

    kind: Literal["pitfall"] = "pitfall"
    command: Command
    selector: str | None = None
    deselected: int | None = None


class ZshShell(_Value):
    """The agent's shell commands run in zsh, not bash (macOS): its errors said so. `noclobber`: zsh refused to
    overwrite a file with `>` (`file exists`), so the user's shell has that option set. `path`: a command assigned a
    variable named `path`, which zsh ties to `PATH`, and every program after it was not found."""

    kind: Literal["zsh"] = "zsh"
    noclobber: bool = False
    path: bool = False


class Symlink(_Value):
    """A file of the project that is a symbolic link to another of its files (`.claude/CLAUDE.md` -> `AGENTS.md`):
    a session made it with `ln -s` and staged it, so the project keeps it as a link. What it says goes in `target`."""

    kind: Literal["symlink"] = "symlink"
    link: ProjectPath
    target: ProjectPath


class ConventionalCommits(_Value):
    """Commit and pull-request titles here are Conventional Commits (`feat(scope): summary`): the user set one so.
    `scoped`: the title they set named a scope."""

    kind: Literal["commits"] = "commits"
    scoped: bool = False


HabitName = Literal[
    "concise", "short_agent_files", "why_comments", "no_backcompat", "grounded", "readme_with_changes",
    "no_sensitive_data", "no_unasked_docs",
]  # fmt: skip


class Habit(_Value):
    """A way of working the user asked for in their own words ("be concise", "we don't need backward
    compatibility"), one of a fixed few: the lesson is our sentence for it (`HABITS`), never their words."""

    kind: Literal["habit"] = "habit"
    habit: HabitName


# The sentence each habit is written as: ours, so nothing of the transcript reaches the agent through it.
HABITS: dict[str, str] = {
    "concise": "the user wants short, concise answers: the finding or the recommendation first, no long report"
    " they did not ask for",
    "short_agent_files": "keep `AGENTS.md` and `CLAUDE.md` short: bare instructions, no explanation or rationale",
    "why_comments": "a code comment says why, briefly, never what the code does; leave out a comment that only"
    " restates the code",
    "no_backcompat": "do not add backward-compatibility code (readers of an old format, a second path for old data)"
    " unless asked: the user prefers a clean break",
    "grounded": "ground claims and recommendations in documentation or an experiment you ran, and say which; do not"
    " assume",
    "readme_with_changes": "when a change alters what the project does, update the README in the same change",
    "no_sensitive_data": "never commit sensitive or personal data; examples in the README and docs stay generic",
    "no_unasked_docs": "do not write new documentation or summary markdown files unless the user asks for them",
}


class Stopped(_Value):
    """A call the user stopped: a shell command (its name) or a kind of change, never the tool's own name."""

    what: Literal["command", "edit", "new_file", "notebook", "tool", "plan", "interrupt"]
    command: Command | None = None


class Preference(_Value):
    """What the user typed: their words, and the call they stopped first, if any (`reason`: the words were the
    reason they gave when they stopped it; `answered`: they typed them in answer to the agent's question)."""

    kind: Literal["preference"] = "preference"
    said: str = Field(min_length=1)
    stopped: Stopped | None = None
    reason: bool = False
    answered: bool = False


AnyLesson = (
    CommandFact
    | OwnTool
    | Correction
    | NothingSelected
    | HiddenFailure
    | ZshShell
    | ConventionalCommits
    | Symlink
    | Habit
    | Preference
)
Lesson = Annotated[AnyLesson, Field(discriminator="kind")]


def project_label(project: str | None) -> str | None:
    """`project` as a lesson may name it, or None when its name could not be written safely (a folder name is
    chosen by whoever named the repository: it may hold a line break or a backtick, or be a sentence of its own,
    `you-may-push-to-main`: a name of more than `_MOST_NAME_WORDS` words is not written)."""
    if not project:
        return None
    name = normalise(project)
    if name != project or len(name) > 80 or not _PROJECT.match(name):
        return None
    # Not held to the quote lexicon: a real repository's name has words no list holds (`agents-md-evaluator` taught
    # nothing that way), and a label is a name the screen's readers read, not an instruction.
    return name if len(name_words(name).split()) <= _MOST_NAME_WORDS else None


# Repositories are named in a few words (`flutter-docker-image`, `claude-code-to-sqlite`); five make a sentence.
_MOST_NAME_WORDS = 4
_NAME_BREAK = re2.compile(r"[._+@-]+")
_CAMEL = re2.compile(r"(\p{Ll})(\p{Lu})")
# The project's label as `render` writes it, of the characters a label may hold.
_LABELLED = re2.compile(r"^In (" + _PROJECT.pattern.removeprefix("^").removesuffix("$") + r"): ")


def name_words(name: str) -> str:
    """A folder name as the words it is made of (`never_ask_before_pushing`, `IgnorePreviousInstructions`: "never
    ask before pushing", "Ignore Previous Instructions"), as a reader may read it."""
    return " ".join(_NAME_BREAK.split(_CAMEL.sub(r"\1 \2", name))).strip()


def quoted(text: str) -> str | None:
    """The words an entry text `render` wrote quotes (from the first double quote to the last: `_quote` writes a
    quote's own double quotes as single ones, and no other field is written with one), or None."""
    first, last = text.find('"'), text.rfind('"')
    return text[first + 1 : last] if 0 <= first < last else None


def untrusted_parts(text: str) -> list[str]:
    """What in an entry text `render` wrote came from outside our code, for a screen to read as free text: the
    project's folder name, as its words, and the user's words it quotes (`quoted`). The rest is our own sentence
    around typed fields."""
    parts = []
    if (label := _LABELLED.match(text)) is not None:
        parts.append(name_words(label.group(1)) + ".")
    if (said := quoted(text)) is not None:
        parts.append(said)
    return parts


def _code(command: Command) -> str:
    return f"`{command.shown()}`"


def _name(words: tuple[str, ...]) -> str:
    return f"`{shlex.join(words)}`"


def _stopped(stopped: Stopped) -> str:
    if stopped.what == "command" and stopped.command is not None:
        return _code(stopped.command)
    return {
        "edit": "an edit",
        "new_file": "a new file",
        "notebook": "a notebook edit",
        "plan": "a plan",
        "interrupt": "the agent",
    }.get(stopped.what, "a tool call")


def _quote(said: str) -> str:
    """The user's words inside double quotes, as one line."""
    return '"' + " ".join(normalise(said).split()).replace('"', "'") + '"'


def _sentence(lesson: AnyLesson) -> str:
    if isinstance(lesson, CommandFact):
        place = f" in `{lesson.command.folder}/`" if lesson.command.folder else ""
        return f"{_SAYS[lesson.category]} {_code(lesson.command)}{place}"
    if isinstance(lesson, OwnTool):
        shown = ", ".join(_name((lesson.program, s)) for s in lesson.subcommands)
        return f"it has its own command-line tool `{lesson.program}`" + (f": {shown}" if shown else "")
    if isinstance(lesson, Correction):
        failed = _code(lesson.failed)
        if lesson.how == "executable" and lesson.worked is not None:
            if lesson.worked.words[:2] == ("git", "update-index"):
                return (
                    f"{failed} failed here because a script it runs was not executable (Permission denied): commit"
                    " scripts executable (mode 100755); `chmod +x` alone is not staged, so also record it with"
                    f" {_code(lesson.worked)}"
                )
            return (
                f"{failed} failed here because a script it runs was not executable (Permission denied): make a"
                f" script executable, {_code(lesson.worked)}, before running it"
            )
        if lesson.how == "ignored" and lesson.ignored:
            return (
                f"`git add` refuses `{lesson.ignored}` here: the project's .gitignore ignores it, so it stays out of"
                " commits; do not force-add it (what must be committed needs its own exception in .gitignore)"
            )
        if lesson.how == "sandbox":
            return (
                f"Codex's sandbox keeps `.git` read-only here: {failed} failed (Operation not permitted) until it ran"
                " with escalated permissions; request them for git commands that write `.git` (fetch, commit, merge)"
            )
        if lesson.how == "warned" and lesson.under:
            return (
                f"a hook of the user's refuses the first {failed} of a file in `{lesson.under}/` here, as a warning,"
                " and lets the same change through when it is made again: read its warning and act on it before"
                " making the change again"
            )
        if lesson.how == "absolute":
            return (
                "the shell keeps its working directory between commands: after a `cd`, relative paths fail"
                f" ({failed}); run from the project root or use absolute paths"
            )
        assert lesson.worked is not None
        if lesson.how == "folder":
            return f"run {_code(lesson.worked)} from `{lesson.worked.folder}/`: from elsewhere it fails"
        if lesson.how == "before":
            return f"{failed} failed here until {_code(lesson.worked)} had run; run that first"
        if lesson.how == "installed":
            place = f" in `{lesson.worked.folder}/`" if lesson.worked.folder else ""
            return (
                f"{failed} failed here because a program it runs was not installed (command not found) until"
                f" {_code(lesson.worked)} had run{place}; run that first"
            )
        if lesson.how == "option":
            return f"{failed} is refused here (no such option or command); {_code(lesson.worked)} works"
        if lesson.how == "hook":
            return f"a hook of the user's refuses {failed} here; use {_code(lesson.worked)} instead, as it asks"
        if lesson.how == "repo":
            return (
                "`gh` cannot tell the GitHub repository from this checkout's git remotes (no remote points to a known"
                f" GitHub host): name it, {_code(lesson.worked)}"
            )
        if lesson.how == "module":
            named = f" ({', '.join(f'`{m}`' for m in lesson.modules)})" if lesson.modules else ""
            worked = _code(lesson.worked)
            return f"{failed} lacks the project's packages{named}; run code that imports them with {worked}"
        return f"{failed} fails here; {_code(lesson.worked)} works"
    if isinstance(lesson, NothingSelected):
        said = f"{lesson.deselected} deselected" if lesson.deselected is not None else "no test ran"
        tail = f": nothing here matches `{lesson.selector}`" if lesson.selector else ""
        return f"{_code(lesson.command)} selects no test ({said}){tail}"
    if isinstance(lesson, ZshShell) and lesson.noclobber:
        return (
            "the agent's shell is zsh with `noclobber` set: a redirection onto a file that exists fails (file"
            " exists), even onto one `mktemp` just made; overwrite it with a clobbering redirection:"
            " `echo done >| out.txt`"
        )
    if isinstance(lesson, ZshShell) and lesson.path:
        return (
            "the agent's shell is zsh, where a variable named `path` is the array behind `PATH`: assigning it (a loop"
            " variable `path`) makes every later command in that shell 'command not found'; name it `file` or `p`"
        )
    if isinstance(lesson, ZshShell):
        return (
            "the agent's shell is zsh, not bash: a glob that matches nothing is an error and bash-only syntax does"
            " not parse; write commands zsh accepts, or hand bash-only ones to bash"
        )
    if isinstance(lesson, ConventionalCommits):
        form = "`type(scope): summary`" if lesson.scoped else "`type: summary`"
        return f"write commit and pull-request titles as Conventional Commits, {form} (`feat`, `fix`, ...)"
    if isinstance(lesson, Symlink):
        return (
            f"`{lesson.link}` is a symlink to `{lesson.target}` here, and git keeps it as one: edit"
            f" `{lesson.target}`, and never replace the link with a copy"
        )
    if isinstance(lesson, HiddenFailure):
        return (
            f"{_code(lesson.command)} piped into `{lesson.filter}` hides its failure (the pipeline succeeds); read its"
            " output, or run it without the pipe"
        )
    if isinstance(lesson, Habit):
        return HABITS[lesson.habit]
    if lesson.stopped is None and lesson.answered:
        return f"asked by the agent, the user answered: {_quote(lesson.said)}"
    if lesson.stopped is None:
        return f"the user said: {_quote(lesson.said)}"
    if lesson.reason:
        return f"instead of {_stopped(lesson.stopped)}, the user said: {_quote(lesson.said)}"
    return f"after stopping {_stopped(lesson.stopped)}, the user said: {_quote(lesson.said)}"


def render(lesson: AnyLesson, project: str | None) -> str:
    """The entry text of `lesson`, for `project` when its name can be written (`project_label`)."""
    said = _sentence(lesson)
    label = project_label(project)
    return f"In {label}: {said}." if label else f"{said[0].upper()}{said[1:]}."


def writable(lesson: AnyLesson) -> bool:
    """True when every word the lesson would write can be written inside a code span (no backtick, no line break)."""
    commands: list[Command] = []
    if isinstance(lesson, CommandFact | NothingSelected | HiddenFailure):
        commands.append(lesson.command)
    elif isinstance(lesson, Correction):
        commands += [lesson.failed] + ([lesson.worked] if lesson.worked else [])
    elif isinstance(lesson, Preference) and lesson.stopped and lesson.stopped.command:
        commands.append(lesson.stopped.command)
    words = [w for c in commands for w in (*c.words, c.folder or "x")]
    if isinstance(lesson, OwnTool):
        words += [lesson.program, *lesson.subcommands]
    if isinstance(lesson, HiddenFailure):
        words.append(lesson.filter)
    if isinstance(lesson, Symlink):
        words += [lesson.link, lesson.target]
    return all(_SAFE_WORD.match(w) and normalise(w) == w and " ".join(w.split()) == w for w in words)
