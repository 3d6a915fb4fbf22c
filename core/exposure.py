"""Which entries a session's agent had: what the SessionStart hook gave it (and held out of it), as the hook writes
it to an append-only ledger and as ingest reads it back.

The hook runs at the start of every Claude Code session, so it must never block one: it reads a snapshot file
(no database), decides the holdout by a hash (no state), and appends one line. A line is data from a file any
process of the user could have written: it is validated field by field and a line that does not fit is
counted and skipped, never trusted.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from fnmatch import fnmatchcase
from pathlib import PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.markdown import to_markdown
from core.models import Entry, Playbook
from core.patterns import Pattern

__all__ = [
    "HookInput",
    "LedgerLine",
    "Shown",
    "Snapshot",
    "SnapshotPlaybook",
    "about_projects",
    "context_for",
    "for_project",
    "held_out",
    "hook_output",
    "parse_ledger",
]

_ID = Pattern(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,119}")
_SESSION = Pattern(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")


def held_out(session_id: str, playbook: str, entry_id: str, share: float) -> bool:
    """True when `entry_id` is left out of this session: a hash of the three, uniform on [0, 1), below `share`.
    The same session always gets the same answer (a resumed or compacted session sees what it saw)."""
    if share <= 0:
        return False
    digest = hashlib.sha256(f"{session_id}\x00{playbook}\x00{entry_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


class HookInput(BaseModel):
    """What Claude Code sends a SessionStart hook on stdin (other fields are ignored)."""

    model_config = ConfigDict(extra="ignore")

    session_id: str
    cwd: str = ""
    source: str = "startup"
    hook_event_name: str = "SessionStart"
    transcript_path: str | None = None

    @field_validator("session_id")
    @classmethod
    def _session(cls, value: str) -> str:
        if not _SESSION.fullmatch(value):
            raise ValueError("not a session id")
        return value


class SnapshotPlaybook(BaseModel):
    """One playbook as the hook may give it: its screened, budgeted entries and the projects it is for."""

    name: str
    version: int
    globs: list[str] = Field(default_factory=list)  # a bound playbook: the projects it is for
    everywhere_else: bool = False  # the global playbook beside bound ones: every session its globs do not take
    other_globs: list[str] = Field(default_factory=list)
    entries: list[tuple[str, Entry]] = Field(default_factory=list)  # (section, entry)
    projects: dict[str, str] = Field(default_factory=dict)  # entry id -> the one project it is about

    def applies(self, cwd: str) -> bool:
        """True when a session in `cwd` should get this playbook."""
        project = PurePosixPath(cwd).name if cwd else ""

        def hit(globs: Sequence[str]) -> bool:
            return any(fnmatchcase(v, g) for g in globs for v in (project, cwd) if v)

        if self.globs:
            return hit(self.globs)
        return not hit(self.other_globs) if self.everywhere_else else True


class Snapshot(BaseModel):
    """What the hook reads: the playbooks as last exported, and the holdout share."""

    written_at: datetime
    holdout: float = 0.0
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
        return HookInput._session(value)

    @field_validator("playbooks")
    @classmethod
    def _ids(cls, value: list[Shown]) -> list[Shown]:
        for shown in value:
            for name in [shown.playbook, *shown.shown, *shown.held_out]:
                if not _ID.fullmatch(name):
                    raise ValueError(f"not an id: {name[:40]!r}")
        return value


def context_for(snapshot: Snapshot, hook: HookInput) -> tuple[str, list[Shown]]:
    """The text to give the session (its project's playbooks, without the entries held out of it) and what it
    got of each playbook; an empty text when nothing applies."""
    got: list[Shown] = []
    parts: list[str] = []
    for pb in snapshot.playbooks:
        if not pb.applies(hook.cwd):
            continue
        here = PurePosixPath(hook.cwd).name if hook.cwd else ""
        relevant = [(section, e) for section, e in pb.entries if for_project(pb.projects, e.name, here)]
        held = [e.name for _, e in relevant if held_out(hook.session_id, pb.name, e.name, snapshot.holdout)]
        kept: dict[str, list[Entry]] = {}
        for section, entry in relevant:
            if entry.name not in held:
                kept.setdefault(section, []).append(entry)
        got.append(
            Shown(playbook=pb.name, version=pb.version, shown=[e.name for v in kept.values() for e in v], held_out=held)
        )
        if kept:
            parts.append(
                to_markdown(Playbook(sections=kept), title=f"Lessons from past sessions (`{pb.name}`)", counters=False)
            )
    return "\n\n".join(parts), got


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


def for_project(bound: Mapping[str, str], entry_id: str, project: str) -> bool:
    """Whether an agent working on `project` should have the entry: another project's facts ("In api: run the
    tests with `make test`") are noise in its context. `bound`: `about_projects` of the playbook."""
    return bound.get(entry_id, project) == project


def hook_output(text: str) -> dict[str, Any]:
    """The JSON a SessionStart hook prints to add `text` to the session's context."""
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}


def parse_ledger(lines: Iterable[str]) -> tuple[list[LedgerLine], int]:
    """The valid lines of a ledger, and how many were skipped (not JSON, not a ledger line, a bad id)."""
    good: list[LedgerLine] = []
    bad = 0
    for line in lines:
        if not line.strip():
            continue
        try:
            good.append(LedgerLine.model_validate(json.loads(line)))
        except (ValueError, ValidationError, RecursionError):
            bad += 1
    return good, bad
