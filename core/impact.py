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

__all__ = ["Z95", "Arm", "Estimate", "Method", "Verdict", "did_estimate", "holdout_estimate", "verdict"]

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
