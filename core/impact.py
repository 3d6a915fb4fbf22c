"""Whether a lesson helps: its trigger's rate with and without the entry, an interval and a verdict.

The trigger is the literal an entry's situation leaves in what the tools said; the rate is the share of sessions
where it came up.

Two designs, the better one the data allows:

- *holdout* (randomised): the SessionStart hook leaves each entry out of a random share of sessions
  (`holdout`); exposed and held-out sessions differ only by the entry, so the difference of their trigger rates
  is its effect. Interval: Agresti and Caffo's for a difference of two proportions (one success and one failure
  added to each arm), which keeps its coverage at small counts where the plain Wald interval does not.
- *difference in differences* (observational): without a holdout, the change in the trigger rate of the projects
  that got the entry (before it reached them -> sessions that had it) minus the change over the same time in
  projects that never had it. It assumes both groups would have moved alike without the entry (parallel trends);
  each rate is adjusted as above and the four variances are added.

Verdicts: `helps` when the whole interval is below zero (the situation comes up less often with the entry),
`hurts` when it is above, `no-effect` when it holds zero, `insufficient` when an arm has fewer than
`min_sessions` sessions. Lower is better: a lesson is there so that its situation stops happening.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel

from core.adherence import Tally
from core.budget import entry_tokens

__all__ = [
    "Z95",
    "Adherence",
    "Arm",
    "EntryImpact",
    "Estimate",
    "ImpactCounts",
    "Method",
    "Verdict",
    "did_estimate",
    "estimate_counts",
    "holdout_estimate",
    "verdict",
]

Verdict = Literal["helps", "hurts", "no-effect", "insufficient"]
Method = Literal["holdout", "diff-in-diff", "none"]
Z95 = 1.959964


class Arm(BaseModel):
    """Sessions of one group: how many, in how many the trigger came up, and their tool errors."""

    sessions: int = 0
    triggered: int = 0
    tool_errors: int = 0

    @property
    def rate(self) -> float | None:
        """The share of sessions where the trigger came up (None for no session)."""
        return self.triggered / self.sessions if self.sessions else None

    def adjusted(self) -> tuple[float, float]:
        """(rate, variance) with one success and one failure added (Agresti and Caffo)."""
        n = self.sessions + 2
        p = (self.triggered + 1) / n
        return p, p * (1 - p) / n


class Estimate(BaseModel):
    """An effect on the trigger rate (exposed minus unexposed; negative: less often with the entry)."""

    method: Method
    effect: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    verdict: Verdict = "insufficient"


def verdict(low: float, high: float) -> Verdict:
    """The verdict of an interval on (exposed - unexposed): below zero helps, above hurts, else no effect."""
    if high < 0:
        return "helps"
    if low > 0:
        return "hurts"
    return "no-effect"


def holdout_estimate(exposed: Arm, held_out: Arm, *, min_sessions: int = 20) -> Estimate:
    """The effect from a randomised holdout: exposed rate minus held-out rate, with its 95 % interval."""
    if min(exposed.sessions, held_out.sessions) < min_sessions:
        return Estimate(method="holdout")
    (p1, v1), (p0, v0) = exposed.adjusted(), held_out.adjusted()
    half = Z95 * math.sqrt(v1 + v0)
    low, high = p1 - p0 - half, p1 - p0 + half
    effect = (exposed.rate or 0.0) - (held_out.rate or 0.0)
    return Estimate(method="holdout", effect=effect, ci_low=low, ci_high=high, verdict=verdict(low, high))


def did_estimate(
    treated_before: Arm, treated_after: Arm, control_before: Arm, control_after: Arm, *, min_sessions: int = 20
) -> Estimate:
    """The effect by difference in differences: (treated after - before) - (control after - before)."""
    arms = (treated_before, treated_after, control_before, control_after)
    if min(a.sessions for a in arms) < min_sessions:
        return Estimate(method="diff-in-diff")
    (tb, vtb), (ta, vta), (cb, vcb), (ca, vca) = (a.adjusted() for a in arms)
    centre = (ta - tb) - (ca - cb)
    half = Z95 * math.sqrt(vtb + vta + vcb + vca)
    rates = [a.rate or 0.0 for a in arms]
    effect = (rates[1] - rates[0]) - (rates[3] - rates[2])
    return Estimate(
        method="diff-in-diff",
        effect=effect,
        ci_low=centre - half,
        ci_high=centre + half,
        verdict=verdict(centre - half, centre + half),
    )


class ImpactCounts(BaseModel):
    """For one live entry: its triggers, and the sessions of each arm (count, trigger seen, tool errors)."""

    entry_id: str
    text: str
    triggers: list[str]
    # randomised: sessions the hook gave the entry, and sessions it held it out of (and no exported file had it)
    hook_n: int
    hook_hit: int
    hook_err: int
    held_n: int
    held_hit: int
    held_err: int
    # observational: projects that got the entry (before it reached them, and sessions that had it), and the
    # projects that never had it, before and after its first exposure anywhere
    tb_n: int
    tb_hit: int
    tb_err: int
    ta_n: int
    ta_hit: int
    ta_err: int
    cb_n: int
    cb_hit: int
    cb_err: int
    ca_n: int
    ca_hit: int
    ca_err: int


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
