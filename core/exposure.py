"""Which entries a session's agent had: what the hooks gave it (and held out of it), as they write it to an
append-only ledger and as ingest reads it back, and the snapshot they read.

The hooks run at every session start, prompt and shell call, so they must never block one: they read a snapshot
file (no database), decide the holdout by a hash (no state), and append one line (`core.hooks` decides). A line
is data from a file any process of the user could have written: it is validated field by field and a line that
does not fit is counted and skipped, never trusted.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.guards import Guard
from core.hooks import SESSION_ID
from core.models import Entry
from core.patterns import Pattern

__all__ = [
    "DIGEST_ENTRIES",
    "FeedbackLine",
    "LedgerLine",
    "Shown",
    "Snapshot",
    "SnapshotPlaybook",
    "about_projects",
    "parse_feedback",
    "parse_ledger",
]

_ID = Pattern(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,119}")
_SESSION = Pattern(SESSION_ID)


def session_id(value: str) -> str:
    """`value` when it has the shape of a session id (`core.hooks.SESSION_ID`); a ValueError else."""
    if not _SESSION.fullmatch(value):
        raise ValueError("not a session id")
    return value


DIGEST_ENTRIES = 12  # what SessionStart gives of a playbook when the prompt hook gives the rest as prompts call it up


class SnapshotPlaybook(BaseModel):
    """One playbook as the hook may give it: its screened, budgeted entries and the projects it is for."""

    name: str
    version: int
    globs: list[str] = Field(default_factory=list)  # a bound playbook: the projects it is for
    everywhere_else: bool = False  # the global playbook beside bound ones: every session its globs do not take
    other_globs: list[str] = Field(default_factory=list)
    entries: list[tuple[str, Entry]] = Field(default_factory=list)  # (section, entry)
    projects: dict[str, str] = Field(default_factory=dict)  # entry id -> the one project it is about
    index: dict[str, Any] = Field(default_factory=dict)  # BM25 over the entries, in their order (`core.hooks`)
    guards: list[Guard] = Field(default_factory=list)
    # entry id -> what `get_lesson` (the MCP server) adds to its text: the sessions it rests on, its impact verdict,
    # what it cites in its project
    details: dict[str, dict[str, Any]] = Field(default_factory=dict)


class Snapshot(BaseModel):
    """What the hooks read (`core.hooks`, as plain JSON): the playbooks as last exported, the holdout share, and how
    much a prompt may call up."""

    written_at: datetime
    holdout: float = 0.0
    digest_entries: int = (
        DIGEST_ENTRIES  # of each playbook, what SessionStart gives when the prompt hook gives the rest
    )
    prompt_entries: int = 5
    prompt_chars: int = 1600
    playbooks: list[SnapshotPlaybook] = Field(default_factory=list)


class Shown(BaseModel):
    """What one session got of one playbook."""

    playbook: str
    version: int
    shown: list[str] = Field(default_factory=list)
    held_out: list[str] = Field(default_factory=list)


class LedgerLine(BaseModel):
    """One line of the exposure ledger: a session's start and what it was given."""

    model_config = ConfigDict(extra="ignore")

    session_id: str
    at: datetime
    cwd: str = ""
    source: str = "startup"
    playbooks: list[Shown] = Field(default_factory=list)

    @field_validator("session_id")
    @classmethod
    def _session(cls, value: str) -> str:
        return session_id(value)

    @field_validator("playbooks")
    @classmethod
    def _ids(cls, value: list[Shown]) -> list[Shown]:
        for shown in value:
            for name in [shown.playbook, *shown.shown, *shown.held_out]:
                if not _ID.fullmatch(name):
                    raise ValueError(f"not an id: {name[:40]!r}")
        return value


def about_projects(entries: Iterable[tuple[str, Entry]], projects: Iterable[str]) -> dict[str, str]:
    """The entries that are about one of `projects`: their text opens with `In <project>: `, as the rules miner
    states a project's facts and corrections. Entry id -> project."""
    by_prefix = {f"In {p}: ": p for p in projects if p}
    found: dict[str, str] = {}
    for _, entry in entries:
        head, sep, _rest = entry.text.partition(": ")
        project = by_prefix.get(head + sep) if sep else None
        if project is not None:
            found[entry.name] = project
    return found


_Line = TypeVar("_Line", "LedgerLine", "FeedbackLine")


class FeedbackLine(BaseModel):
    """One outcome an agent reported through `playbook mcp`: the entry, helped / hurt / wrong, and its note (at
    most 2,000 characters; redacted before it is stored)."""

    model_config = ConfigDict(extra="ignore")

    session_id: str
    at: datetime
    entry_id: str
    outcome: Literal["helped", "hurt", "wrong"]
    note: str = Field(default="", max_length=2000)

    @field_validator("session_id")
    @classmethod
    def _session(cls, value: str) -> str:
        return session_id(value)

    @field_validator("entry_id")
    @classmethod
    def _entry(cls, value: str) -> str:
        if not _ID.fullmatch(value):
            raise ValueError("not an id")
        return value


def _parse(model: type[_Line], lines: Iterable[str]) -> tuple[list[_Line], int]:
    good: list[_Line] = []
    bad = 0
    for line in lines:
        if not line.strip():
            continue
        try:
            good.append(model.model_validate(json.loads(line)))
        except (ValueError, ValidationError, RecursionError):
            bad += 1
    return good, bad


def parse_ledger(lines: Iterable[str]) -> tuple[list[LedgerLine], int]:
    """The valid lines of a ledger, and how many were skipped (not JSON, not a ledger line, a bad id)."""
    return _parse(LedgerLine, lines)


def parse_feedback(lines: Iterable[str]) -> tuple[list[FeedbackLine], int]:
    """The valid lines of a feedback file, and how many were skipped."""
    return _parse(FeedbackLine, lines)
