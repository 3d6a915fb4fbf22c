"""Git past Codex's sandbox: a git command the sandbox refused to let write `.git` (`Operation not permitted`),
then ran again with the escalated permissions the user approves, which got past that refusal."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import PurePosixPath

import re2

from core.corrections import Found
from core.failures import error_line
from core.lessons import Command, Correction
from core.models import SessionMessage
from core.runs import Run, command_key, parse

__all__ = ["escalated", "sandboxed"]


# How Codex asks to run a shell command outside its sandbox (the user approves each such call, or a rule they
# saved does): `sandbox_permissions: require_escalated`, or `with_escalated_permissions: true` in older versions.
_ESCALATED = "require_escalated"


def escalated(messages: Sequence[SessionMessage]) -> frozenset[str]:
    """The ids of the calls that asked to run outside the agent's sandbox (Codex's escalated permissions)."""
    found: set[str] = set()
    for m in messages:
        if m.kind != "tool_use" or not m.tool_use_id or "escalated" not in (m.tool_input or ""):
            continue
        try:
            value = json.loads(m.tool_input or "")
        except ValueError:
            continue
        if isinstance(value, dict) and (
            value.get("sandbox_permissions") == _ESCALATED or value.get("with_escalated_permissions") is True
        ):
            found.add(m.tool_use_id)
    return frozenset(found)


# A write under the repository's `.git` that the sandbox refused (`cannot open '.git/FETCH_HEAD': Operation not
# permitted`, `Unable to create '.../.git/index.lock': Read-only file system`).
_GIT_READ_ONLY = re2.compile(r"\.git/[^\s'\"]*['\"]?:?\s*(?:Operation not permitted|Read-only file system)")
_MOST_RETRIES = 3  # runs after the refusal in which the same command must have asked to run outside the sandbox


def sandboxed(runs: Sequence[Run], outside: frozenset[str]) -> list[Found]:
    """A git command the sandbox refused to let write `.git`, then run again with escalated permissions (`outside`:
    the calls that asked for them), which got past that refusal: one correction a session (the sandbox keeps
    `.git` read-only for every git command that writes it). The retry need not succeed for other reasons (no
    network, a key): it is the sandbox's refusal that it got past."""
    for i, run in enumerate(runs):
        if run.ok or run.call_id in outside or ".git/" not in run.output or not _GIT_READ_ONLY.search(run.output):
            continue
        failed = parse(run.command, run.folder)
        if failed is None or PurePosixPath(failed.words[0]).name != "git" or len(failed.words) < 2:
            continue
        key = command_key(failed.words)
        for later in runs[i + 1 : i + 1 + _MOST_RETRIES]:
            again = parse(later.command, later.folder)
            if later.call_id not in outside or again is None or command_key(again.words) != key:
                continue
            if _GIT_READ_ONLY.search(later.output):
                break
            lesson = Correction(how="sandbox", failed=Command(words=("git", failed.words[1])))
            return [Found("correction|sandbox|git", lesson, error_line(run.output) or "Operation not permitted", None)]
    return []
