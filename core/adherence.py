"""Adherence: when a command lesson's situation came up in a session, did the agent do what it says?

A command lesson is about a few commands (`core.guards.Guard.about`: `npm install` and `pnpm install`; bare `pytest`
and `uv run pytest`). In a session, the first of the agent's commands that is one of them is where its situation came
up; the lesson was *followed* there unless its guard fires on that command (the failing form, outside the folder,
piped into `tail`, ...), else *ignored*. A session that never ran one has no verdict. Sessions that had the entry
against sessions the holdout kept it from give its effect on the share ignored (`core.impact`: lower is better).
Pure: guards and commands in, outcomes out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from core.hooks import Simple, fires

__all__ = ["Outcome", "Tally", "outcome", "simple_of", "tally"]

Outcome = Literal["followed", "ignored"]


def simple_of(
    words: Sequence[str], folder: str | None, piped_into: str | None = None, stdin: str | None = None
) -> Simple:
    """A stored command (`core.actions.Action`: its words, folder, pipe and here document, as the guards read the
    line it was in) as the guards read a command."""
    return Simple(tuple(words), folder, piped_into, stdin)


def _about(guard: Mapping[str, Any], simple: Simple) -> bool:
    forms: Iterable[Sequence[str]] = guard.get("about") or [guard.get("words") or ()]
    return any(form and tuple(simple.words[: len(form)]) == tuple(form) for form in forms)


def outcome(guards: Sequence[Mapping[str, Any]], commands: Iterable[Simple], cwd: str) -> Outcome | None:
    """Whether the session whose commands are `commands` (in order; it started in `cwd`) followed the lesson whose
    guards are `guards` the first time its situation came up, or None when it never came up."""
    for simple in commands:
        if any(_about(g, simple) for g in guards):
            return "ignored" if any(fires(g, [simple], cwd) for g in guards) else "followed"
    return None


class Tally(BaseModel):
    """Of a group of sessions: how many, in how many the situation came up, and in how many it was followed."""

    sessions: int
    fired: int
    followed: int


def tally(
    guards: Sequence[Mapping[str, Any]],
    sessions: Iterable[str],
    commands: Mapping[str, tuple[str, Sequence[tuple[Sequence[str], str | None, str | None, str | None]]]],
) -> Tally:
    """The adherence of `sessions` to the lesson whose guards are `guards`; `commands`: each session's starting
    folder and its stored commands (words, folder, piped into, here document), in order."""
    chosen = list(sessions)
    found = [
        outcome(guards, (simple_of(*c) for c in commands[sid][1]), commands[sid][0])
        for sid in chosen
        if sid in commands
    ]
    return Tally(sessions=len(chosen), fired=sum(o is not None for o in found), followed=found.count("followed"))
