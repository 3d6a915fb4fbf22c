"""What the agent did, as a lesson's trigger reads it: each shell call's simple commands (the program and its
arguments, and the folder it ran in) and the file each edit changed.

A command lesson ("run the tests with `uv run pytest`", "`npm install` fails here; `pnpm install` works") is about
what the agent runs, which its tool calls say and no message text does; a substring of the raw command line would
take `pnpm install` for `npm install`. So a call is read by the shell's grammar (`core.shell`), and a trigger matches
a command when its words are the first words of one simple command (`command_matches`). Each command also keeps its
words and here document as the PreToolUse hook reads the line (`core.hooks.simple_commands`), so adherence judges a
stored command as the guard judged the live one. Pure: messages in, values out.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Literal, NamedTuple

from core.hooks import Simple, simple_commands
from core.models import SessionMessage
from core.runs import SHELL_TOOLS, command_of, whole_text
from core.shell import parse_command

__all__ = [
    "EDIT_TOOLS",
    "Action",
    "ActionRow",
    "Call",
    "action_rows",
    "actions",
    "call_actions",
    "command_matches",
    "command_text",
    "read_call",
]

# Claude Code's tools that change a file, and Codex's patch tool (its paths are in the patch text).
EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
# (No `=`: the grammar reads a word like `a=b` after a command's name as an assignment where the hooks read an
# argument, `a=b - a=b -`, so such a line is read both ways.)
_PLAIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 _./:,+@%-&|;")


@dataclass(frozen=True)
class Action:
    """One thing the agent did: a simple command (`text`: its program's name and its arguments, one space between
    words) run in `folder` (None: where the session started) and piped into `piped_into`, or a file an edit
    changed (`text`: its path). A command keeps its `words` and the text a here document feeds it (`stdin`) as the
    guards read them (`core.hooks.simple_commands`): `text` joins the words with spaces, so `python3 -c "import
    yaml"` cannot be split back into the code `-c` is given."""

    seq: int
    kind: Literal["command", "edit"]
    text: str
    folder: str | None = None
    piped_into: str | None = None
    words: tuple[str, ...] = ()
    stdin: str | None = None


def command_text(words: Sequence[str]) -> str:
    """A command as triggers compare it: the program's name without its folder, then the arguments, one space
    apart (`/usr/bin/npm  install` -> `npm install`)."""
    return " ".join([_program(words[0]), *words[1:]]) if words else ""


@lru_cache(maxsize=4096)
def _program(word: str) -> str:
    """A program's name without its folder; the same few programs run thousands of times an ingest."""
    return PurePosixPath(word).name


def command_matches(trigger: str, command: str) -> bool:
    """True when `trigger`'s words are the first words of `command` (both as `command_text` writes them): `npm
    install` matches `npm install left-pad`, never `pnpm install`."""
    want = command_text(trigger.split())
    return bool(want) and (command == want or command.startswith(want + " "))


# A simple command as `actions` stores it, without the call it came from: (text, folder, piped into, words, stdin).
_Command = tuple[str, str | None, str | None, tuple[str, ...], str | None]


@lru_cache(maxsize=4096)
def _commands(line: str, folder: str | None) -> tuple[tuple[_Command, ...], str | None]:
    """The simple commands of one shell call run in `folder`, and the folder the shell is left in (a `cd` that is
    not piped moves it, for the rest of the call and, in Claude Code, for the calls after it). Kept for the last few
    thousand (line, folder) pairs: a session runs the same lines in the same folder again and again, and building
    its commands again cost as much as parsing them."""
    found: list[_Command] = []
    where = folder
    parsed = parse_command(line)
    simples = parsed.commands
    # A line the grammar reads whole, of bare words and `&&`, `||`, `;` and pipes (no quote, escape, expansion,
    # redirection, here document, comment or line break: a third of the lines) is split alike by both readings;
    # lexing it again would cost 70 us a line.
    plain = parsed.readable and _PLAIN.issuperset(line)
    read = () if plain else _as_guards_read(line)
    at = 0  # the guards' commands before this one were matched to earlier ones
    for i, simple in enumerate(simples):
        if not simple.words or any(w is None for w in simple.words):
            continue  # expanded at run time: no trigger names it
        words = [w for w in simple.words if w is not None]
        if words[0] == "cd" and not simple.piped:
            target = words[1] if len(words) > 1 else None
            where = posixpath.normpath(posixpath.join(where, target)) if where and target else target
            continue
        after = simples[i + 1] if i + 1 < len(simples) else None
        piped = after.program if after is not None and after.piped and after.program else None
        text = command_text(words)
        # The same command as the guards read it, the next of theirs with this program: the grammar's words lose a
        # here document (`python3 - <<'EOF'` is `python3` alone to it) and a line break in quotes, and a pipe after
        # a here document; where the two readings find no common command (or the line is plain), the grammar's words
        # are all there is.
        program = _program(words[0])
        j = next((k for k in range(at, len(read)) if read[k].words[0] == program), None)
        if j is None:
            guard_view = Simple((program, *words[1:]), None, _program(piped) if piped else None)
        else:
            guard_view, at = read[j], j + 1
        found.append((text, where, guard_view.piped_into, guard_view.words, guard_view.stdin))
    return tuple(found), where


@lru_cache(maxsize=4096)
def _as_guards_read(line: str) -> tuple[Simple, ...]:
    """The simple commands of `line` as the PreToolUse hook reads them (a session runs the same lines again and
    again)."""
    return tuple(s for s in simple_commands(line) if s.words)


def actions(messages: Sequence[SessionMessage]) -> list[Action]:
    """The session's actions in order: each shell call's simple commands (after `cd DIR` they run in DIR, in that
    call and, where the call names no working folder of its own, in the calls after it: Claude Code's shell keeps
    its folder between calls) and each edited file. A call the grammar cannot read gives none."""
    return call_actions((m.seq, m.tool_name, m.tool_input) for m in messages if m.kind == "tool_use" and m.tool_name)


def call_actions(calls: Iterable[tuple[int, str | None, str | None]]) -> list[Action]:
    """`actions` of a session's tool calls as (seq, tool name, tool input), in order: what the store reads, without a
    message object for each call (building them was a quarter of reading the actions at 1 GB)."""
    read = [read_call(seq, tool_name, tool_input) for seq, tool_name, tool_input in calls]
    return [Action(*row) for row in action_rows(c for c in read if c is not None)]


class Call(NamedTuple):
    """What a tool call gives `actions`: a shell line (`kind` "command", `text` the line, `folder` the working
    folder it names) or an edited file (`kind` "edit", `text` its path as the input names it). The store takes these
    values out of the stored inputs itself (`core.store.actions`); `read_call` is the same reading in Python."""

    seq: int
    kind: Literal["command", "edit"]
    text: str
    folder: str | None = None


def read_call(seq: int, tool_name: str | None, tool_input: str | None) -> Call | None:
    """The `Call` of one tool call: a shell tool's line and working folder (`core.runs.command_of`), an edit tool's
    `file_path` (or `notebook_path`); None for any other call, or one whose input does not name them."""
    if tool_name in SHELL_TOOLS:
        line = command_of(tool_input)
        return None if line is None else Call(seq, "command", line[0], line[1])
    if tool_name in EDIT_TOOLS:
        try:
            value = json.loads(tool_input or "")
        except ValueError:
            return None
        path = value.get("file_path", value.get("notebook_path")) if isinstance(value, dict) else None
        return Call(seq, "edit", whole_text(path)) if isinstance(path, str) else None
    return None


# An action as the store writes it: (seq, kind, text, folder, piped into, words, stdin), the fields of `Action`.
ActionRow = tuple[int, Literal["command", "edit"], str, str | None, str | None, tuple[str, ...], str | None]


def action_rows(calls: Iterable[Call]) -> list[ActionRow]:
    """`actions` of a session's calls, in order, as rows (the fields of `Action`): a shell line with nothing but
    blanks and an edited path that is blank or spans lines give none."""
    found: list[ActionRow] = []
    kept: str | None = None
    for seq, kind, text, folder in calls:
        if kind == "command":
            line = text.strip()
            if not line:
                continue
            commands, left_in = _commands(line, folder or kept)
            found += [(seq, "command", *command) for command in commands]
            if folder is None:
                kept = left_in
        elif text.strip() and "\n" not in text:
            found.append((seq, "edit", text.strip(), None, None, (), None))
    return found
