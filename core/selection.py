"""Which sessions a run takes: the filter a command gives (project, dates, how many, epoch size), and the rules
that keep a session from any model (too short to hold a lesson, or consent withdrawn). A run and its estimate
both choose with `choose`."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from core.scope import in_scope

__all__ = ["Consent", "PendingSession", "SessionFilter", "choose", "excluded", "skip_reason", "too_short"]


class SessionFilter(BaseModel):
    """Which pending sessions a run takes: one project, started within [since, until), at most `limit`, and
    how many are judged against one frozen playbook (`epoch_size`; None: the setting)."""

    model_config = ConfigDict(frozen=True)

    project: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int | None = None
    epoch_size: int | None = None

    def within_calls(self, max_calls: int | None) -> SessionFilter:
        """At most the sessions `max_calls` model calls can finish (two each: reflector and curator), so a capped
        run applies whole sessions instead of starting more than it can end."""
        if max_calls is None:
            return self
        most = max(1, max_calls // CALLS_PER_SESSION)
        return self.model_copy(update={"limit": most if self.limit is None else min(self.limit, most)})


CALLS_PER_SESSION = 2


class PendingSession(BaseModel):
    """A session a playbook has not handled (or that grew since), as the ledger hands it to selection."""

    session_id: str
    project: str | None = None
    cwd: str | None = None
    started_at: datetime | None = None
    n_messages: int = 0
    n_user_prompts: int = 0
    n_tool_calls: int = 0
    n_tool_errors: int = 0
    contributor: str | None = None


class Consent(BaseModel):
    """What the user keeps from every model: contributors who withdrew, and projects (globs)."""

    model_config = ConfigDict(frozen=True)

    exclude_contributors: tuple[str, ...] = ()
    exclude_projects: tuple[str, ...] = ()


def too_short(n_messages: int, n_user_prompts: int, min_messages: int) -> str | None:
    """The skip reason when a session has fewer than `min_messages` messages or no user prompt, else None."""
    if n_messages < min_messages or n_user_prompts == 0:
        return (
            f"too short: {n_messages} messages, {n_user_prompts} user prompts"
            f" (minimum {min_messages} messages and 1 prompt)"
        )
    return None


def excluded(consent: Consent, project: str | None, cwd: str | None, contributor: str | None) -> str | None:
    """Why consent keeps a session from any model (`exclude_contributors`, `exclude_projects`), or None."""
    if contributor and contributor in consent.exclude_contributors:
        return "excluded: its contributor is in exclude_contributors"
    if consent.exclude_projects and in_scope(list(consent.exclude_projects), project, cwd):
        return "excluded: its project matches exclude_projects"
    return None


def skip_reason(session: PendingSession, min_messages: int, consent: Consent) -> str | None:
    """Why `session` gets no model call (too short, then consent), or None: the one rule a run and its estimate
    share."""
    return too_short(session.n_messages, session.n_user_prompts, min_messages) or excluded(
        consent, session.project, session.cwd, session.contributor
    )


def choose(
    pending: Iterable[PendingSession],
    *,
    scope: tuple[list[str], bool] | None,
    min_messages: int,
    consent: Consent,
    left_out: Collection[str] = (),
) -> tuple[list[PendingSession], dict[str, str]]:
    """The sessions a run takes from `pending`, in order, and those it skips with their reason. Sessions of
    another playbook's scope (`scope`: globs, inside) and those in `left_out` (an open epoch holds them) are
    neither."""
    taken: list[PendingSession] = []
    skipped: dict[str, str] = {}
    for session in pending:
        if session.session_id in left_out:
            continue
        if scope is not None and in_scope(scope[0], session.project, session.cwd) != scope[1]:
            continue  # another playbook's session (project vs global)
        reason = skip_reason(session, min_messages, consent)
        if reason is None:
            taken.append(session)
        else:
            skipped[session.session_id] = reason
    return taken, skipped
