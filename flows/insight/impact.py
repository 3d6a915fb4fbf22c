"""`playbook impact`: per live entry, how often its situation comes up in sessions that had it against sessions that
did not (`core.impact`), what it costs in context (its tokens in every session that loaded it), and a verdict."""

from __future__ import annotations

import duckdb

from core.adherence import tally
from core.errors import StoreError
from core.impact import Adherence, Arm, EntryImpact, estimate_counts, holdout_estimate
from core.store.actions import session_commands
from core.store.exposure import exposure_arms, impact_counts
from core.store.guards import entry_guards
from core.store.registry import require_playbook
from flows.workspace import Workspace

__all__ = ["adherence_of", "entry_impact"]


def adherence_of(
    con: duckdb.DuckDBPyConnection, playbook: str, min_sessions: int, entry_id: str | None = None
) -> dict[str, Adherence]:
    """The adherence of every live command lesson of `playbook` (or of `entry_id`)."""
    guards = {e: [g.model_dump() for g in found] for e, found in entry_guards(con, playbook).items()}
    if entry_id is not None:
        guards = {e: g for e, g in guards.items() if e == entry_id}
    arms = exposure_arms(con, playbook)
    wanted = {s for e in guards for group in arms.get(e, (set(), set())) for s in group}
    commands = session_commands(con, sorted(wanted))
    found: dict[str, Adherence] = {}
    for entry, compiled in guards.items():
        shown, held = arms.get(entry, (set(), set()))
        had, kept = tally(compiled, shown, commands), tally(compiled, held, commands)
        est = holdout_estimate(
            Arm(sessions=had.fired, triggered=had.fired - had.followed),
            Arm(sessions=kept.fired, triggered=kept.fired - kept.followed),
            min_sessions=min_sessions,
        )
        found[entry] = Adherence(
            exposed=had, held_out=kept, effect=est.effect, ci_low=est.ci_low, ci_high=est.ci_high, verdict=est.verdict
        )
    return found


def entry_impact(ws: Workspace, playbook: str, entry_id: str | None = None) -> list[EntryImpact]:
    """The impact of every live entry of `playbook` (or of `entry_id`).

    Raises:
        StoreError: the playbook or the entry does not exist.
    """
    least = ws.settings.impact_min_sessions
    with ws.database(playbook).read() as con:
        require_playbook(con, playbook)
        counts = impact_counts(con, playbook, entry_id)
        followed = adherence_of(con, playbook, least, entry_id)
    if entry_id is not None and not counts:
        raise StoreError(f"No live entry `{entry_id}` in playbook `{playbook}`; `playbook show` lists the ids.")
    return [estimate_counts(c, least).model_copy(update={"adherence": followed.get(c.entry_id)}) for c in counts]
