"""The sessions commands' library calls: the sessions ingested, those a playbook could not process, and letting
them (or the sessions the rules applied) be curated again."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from core.errors import ConfigError
from core.store.ledger import FailedSession, failed_sessions, release_failures, requeue_sessions, sessions_applied_by
from core.store.registry import require_playbook
from core.store.sessions import SessionRow, list_sessions
from flows.workspace import Workspace

__all__ = ["failed_of", "requeue", "retry", "sessions_of"]


def sessions_of(
    ws: Workspace, *, project: str | None = None, since: datetime | None = None, limit: int = 1000
) -> list[SessionRow]:
    """Ingested sessions, newest first."""
    with ws.store.read() as con:
        return list_sessions(con, project=project, since=since, limit=limit)


def failed_of(ws: Workspace, playbook: str) -> list[FailedSession]:
    """The sessions `playbook` failed to process or holds (a configured playbook may not exist yet)."""
    with ws.database(playbook).read() as con:
        if playbook not in ws.playbooks:
            require_playbook(con, playbook)
        return failed_sessions(con, playbook)


def retry(ws: Workspace, playbook: str, session_ids: list[str], *, every: bool = False) -> int:
    """Let quarantined or held sessions (those named, or `every` one) be curated again by the next run; how many.

    Raises:
        ConfigError: neither sessions nor `every` were given.
    """
    if not session_ids and not every:
        raise ConfigError("Name the sessions to retry, or pass `--all`; `playbook sessions --failed` lists them.")
    with ws.database(playbook).write("playbook retry", create=False) as con:
        require_playbook(con, playbook)
        return release_failures(con, playbook, None if every else session_ids)


def requeue(
    ws: Workspace, playbook: str, since: datetime, source: Literal["heuristic", "any"], *, dry_run: bool = False
) -> list[str]:
    """The sessions `playbook` applied in runs of the rules (or any run) since `since`, made pending again unless
    `dry_run`."""
    with ws.database(playbook).write("playbook recurate", create=False) as con:
        require_playbook(con, playbook)
        ids = sessions_applied_by(con, playbook, None if source == "any" else "heuristic", since)
        if not dry_run:
            requeue_sessions(con, playbook, ids)
    return ids
