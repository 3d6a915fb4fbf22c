"""What the database says of single entries: an entry's whole life (`why`), the entries to retire (`stale`) and
whether their triggers recur (`triggers`). Each opens the database once and returns a typed result."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from core.errors import StoreError
from core.impact import EntryImpact, estimate_counts
from core.redact import Redactor
from core.store.exposure import impact_counts
from core.store.provenance import entry_life
from core.store.published import (
    StaleEntry,
    TriggerRecurrence,
    UnusedEntry,
    stale_entries,
    trigger_recurrence,
    unused_entries,
)
from core.store.registry import require_playbook
from flows.delivery.sources import sources_of
from flows.insight.impact import adherence_of
from flows.workspace import Workspace

__all__ = ["Stale", "stale_of", "triggers_of", "why"]


class Stale(BaseModel):
    """The entries no session confirmed within `window` days (0: staleness off), and the entries that enough
    sessions show to hurt or to make no difference (`playbook impact`), with what they cost in context."""

    window: float
    entries: list[StaleEntry]
    ineffective: list[EntryImpact] = []
    # command lessons proposed for retirement: never followed when their situation came up, or followed with no
    # difference from the sessions that did not have them
    unfollowed: list[EntryImpact] = []
    # entries no session was given for `expire_days`, or whose trigger never came up: proposed for retirement
    unused: list[UnusedEntry] = []


def stale_of(ws: Workspace, playbook: str, days: float | None = None) -> Stale:
    """Live entries unconfirmed for `days` (default: `stale_after_days`), those whose impact is `hurts` or
    `no-effect`, costliest first, and the command lessons agents do not follow (their situation came up in
    `impact_min_sessions` sessions that had them, and none followed them) or follow to no effect (the sessions
    without them did as well)."""
    window = days if days is not None else ws.settings.stale_after_days
    least = ws.settings.impact_min_sessions
    with ws.database(playbook).read() as con:
        require_playbook(con, playbook)
        rows = stale_entries(con, playbook, window) if window else []
        expire = ws.settings.expire_days
        unused = unused_entries(con, playbook, expire) if expire else []
        counts = impact_counts(con, playbook)
        followed = adherence_of(con, playbook, least)
    judged = [estimate_counts(c, least).model_copy(update={"adherence": followed.get(c.entry_id)}) for c in counts]
    ineffective = sorted((j for j in judged if j.verdict in ("hurts", "no-effect")), key=lambda j: -j.context_tokens)
    unfollowed = [
        j
        for j in judged
        if j.adherence is not None
        and j.adherence.exposed.fired >= least
        and (j.adherence.exposed.followed == 0 or j.adherence.verdict == "no-effect")
    ]
    return Stale(window=window, entries=rows, ineffective=ineffective, unfollowed=unfollowed, unused=unused)


def triggers_of(ws: Workspace, playbook: str, entry: str | None = None) -> list[TriggerRecurrence]:
    """For each live entry with a trigger (or `entry`), the sessions where it occurs before and after its first
    export."""
    with ws.database(playbook).read() as con:
        require_playbook(con, playbook)
        return trigger_recurrence(con, playbook, entry)


def why(ws: Workspace, playbook: str, entry: str) -> dict[str, Any]:
    """An entry's whole life (`core.store.provenance.entry_life`).

    Raises:
        StoreError: there is no such entry in `playbook`, and never was.
    """
    with ws.database(playbook).read() as con:
        life = entry_life(con, playbook, entry)
        counts = impact_counts(con, playbook, entry) if life["now"] is not None else []
        found = sources_of(con, playbook).get(entry) if life["now"] is not None else None
    life["rests_on"] = found.model_dump() if found is not None else None
    life["impact"] = estimate_counts(counts[0], ws.settings.impact_min_sessions).model_dump() if counts else None
    if not life["events"] and life["now"] is None:
        raise StoreError(f"No entry `{entry}` in playbook `{playbook}`; `playbook show` lists the ids.")
    _mask_prompts(life, ws.redactor)
    return life


def _mask_prompts(life: dict[str, Any], redactor: Redactor) -> None:
    """A session's first prompt, as `why` quotes it, masked like every other text (home paths, names)."""
    for info in life["sessions"].values():
        if info.get("first_prompt"):
            info["first_prompt"] = redactor.text(info["first_prompt"])
    for source in life["sources"]:
        _mask_prompts(source, redactor)
