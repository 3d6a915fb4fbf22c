"""`playbook impact`: per live entry, how often its situation comes up in sessions that had it against sessions that
did not (`core.impact`), what it costs in context (its tokens in every session that loaded it), and a verdict."""

from __future__ import annotations

import duckdb
from pydantic import BaseModel

from core.adherence import Tally, tally
from core.budget import entry_tokens
from core.errors import StoreError
from core.impact import Arm, Estimate, Method, Verdict, did_estimate, holdout_estimate
from core.store.actions import session_commands
from core.store.exposure import ImpactCounts, exposure_arms, impact_counts
from core.store.guards import entry_guards
from core.store.registry import require_playbook
from flows.workspace import Workspace

__all__ = ["Adherence", "EntryImpact", "adherence_of", "entry_impact", "estimate_counts"]


class Adherence(BaseModel):
    """Whether agents did what a command lesson says when its situation came up (`core.adherence`): among the
    sessions that had it and those the holdout kept it from, how many ran a command it is about and how many of
    those followed it; the effect on the share ignored (negative: ignored less with the entry) with its interval."""

    exposed: Tally
    held_out: Tally
    effect: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    verdict: Verdict = "insufficient"

    @property
    def followed_share(self) -> float | None:
        """Of the sessions that had it and where its situation came up, the share that followed it."""
        return self.exposed.followed / self.exposed.fired if self.exposed.fired else None


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


class EntryImpact(BaseModel):
    """One entry's effect: the arms compared, the effect on its trigger's rate with its 95 % interval, the verdict,
    and its context cost (tokens x sessions that loaded it)."""

    entry_id: str
    text: str
    triggers: list[str]
    method: Method
    exposed: Arm
    unexposed: Arm
    arms: dict[str, Arm]
    effect: float | None
    ci_low: float | None
    ci_high: float | None
    verdict: Verdict
    tokens: int
    sessions_loaded: int
    context_tokens: int
    why: str
    adherence: Adherence | None = None  # for a command lesson (one with guards)


def _arms(c: ImpactCounts) -> dict[str, Arm]:
    return {
        name: Arm(
            sessions=getattr(c, f"{key}_n"), triggered=getattr(c, f"{key}_hit"), tool_errors=getattr(c, f"{key}_err")
        )
        for name, key in (
            ("hook_shown", "hook"),
            ("held_out", "held"),
            ("before", "tb"),
            ("after", "ta"),
            ("control_before", "cb"),
            ("control_after", "ca"),
        )
    }


def estimate_counts(c: ImpactCounts, min_sessions: int) -> EntryImpact:
    """The estimate for one entry's counts: the holdout when the hook held it out of some session, else the
    difference in differences when some session had it, else nothing to compare."""
    arms = _arms(c)
    if not c.triggers:
        est, why = Estimate(method="none"), "it has no trigger: nothing says when its situation comes up"
        exposed, unexposed = arms["after"], arms["before"]
    elif arms["held_out"].sessions:
        exposed, unexposed = arms["hook_shown"], arms["held_out"]
        est = holdout_estimate(exposed, unexposed, min_sessions=min_sessions)
        why = f"randomised: {exposed.sessions} sessions had it, {unexposed.sessions} had it held out"
    elif arms["after"].sessions:
        exposed = arms["after"]
        unexposed = Arm(
            sessions=sum(arms[k].sessions for k in ("before", "control_before", "control_after")),
            triggered=sum(arms[k].triggered for k in ("before", "control_before", "control_after")),
            tool_errors=sum(arms[k].tool_errors for k in ("before", "control_before", "control_after")),
        )
        est = did_estimate(
            arms["before"], arms["after"], arms["control_before"], arms["control_after"], min_sessions=min_sessions
        )
        why = "observational (no holdout): projects that got it, before and after, against projects that never had it"
    else:
        est, why = Estimate(method="none"), "no session has had it yet"
        exposed, unexposed = arms["after"], arms["before"]
    if est.verdict == "insufficient" and est.method != "none":
        why += f"; fewer than {min_sessions} sessions in an arm"
    tokens = entry_tokens(c.text)
    return EntryImpact(
        entry_id=c.entry_id,
        text=c.text,
        triggers=c.triggers,
        method=est.method,
        exposed=exposed,
        unexposed=unexposed,
        arms=arms,
        effect=est.effect,
        ci_low=est.ci_low,
        ci_high=est.ci_high,
        verdict=est.verdict,
        tokens=tokens,
        sessions_loaded=arms["after"].sessions,
        context_tokens=tokens * arms["after"].sessions,
        why=why,
    )


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
