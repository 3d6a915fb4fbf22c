"""Candidates: a lesson one session suggests, before the evidence of the project's sessions is weighed (what each
of the miner's signals returns: `core.project_facts`, `core.pitfalls`, the corrections, the user's words)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from core.lessons import Lesson, render
from core.runs import Category

__all__ = ["Candidate", "Kind"]

Kind = Literal["fact", "correction", "pitfall", "preference"]


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
        return {
            "tool": "fact",
            "symlink": "fact",
            "hidden": "pitfall",
            "zsh": "pitfall",
            "commits": "preference",
            "habit": "preference",
        }.get(self.lesson.kind, self.lesson.kind)  # type: ignore[return-value]

    @property
    def text(self) -> str:
        """How it reads without a project."""
        return render(self.lesson, None)
