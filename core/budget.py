"""The budget of an always-loaded playbook: at most `max_entries` entries and about `max_tokens` tokens.

An agent loads the exported block at the start of every session, so every entry costs tokens in every
session, and long, restating memory files have been measured to lower agents' success. Exports keep the
entries with the best evidence (net helpful, then rediscoveries, then the most recently confirmed or
changed) until the budget is spent, in playbook order, and say how many were left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache

from pydantic import BaseModel

from core.models import Entry, Playbook
from core.tokens import estimate_tokens

__all__ = ["Budget", "BudgetUse", "budget_use", "entry_tokens", "fit_budget"]


class Budget(BaseModel):
    """A playbook's budget."""

    max_entries: int = 40
    max_tokens: int = 2000


class BudgetUse(BaseModel):
    """What a playbook uses of its budget, and what an export left out to fit it."""

    entries: int
    tokens: int
    max_entries: int
    max_tokens: int
    left_out: int = 0
    # entries the screen held (`core.screen`), never exported until released: of the whole playbook for an export
    # of all of it, else of the entries the budget would take (`fit_budget`'s `admits`)
    held: int = 0

    @property
    def over(self) -> bool:
        """True when the whole playbook does not fit."""
        return self.entries > self.max_entries or self.tokens > self.max_tokens


@lru_cache(maxsize=1 << 16)  # a run weighs every entry of the playbook each epoch; most texts are the same ones
def entry_tokens(text: str) -> int:
    """An entry's tokens as one exported bullet line: the text, plus its id and markup (about 16 characters)."""
    return estimate_tokens(text) + 4


def budget_use(playbook: Playbook, budget: Budget) -> BudgetUse:
    """What the whole playbook uses of `budget` (nothing left out)."""
    return BudgetUse(
        entries=playbook.size(),
        tokens=sum(entry_tokens(e.text) for items in playbook.sections.values() for e in items),
        max_entries=budget.max_entries,
        max_tokens=budget.max_tokens,
    )


def fit_budget(
    playbook: Playbook,
    budget: Budget,
    *,
    rediscoveries: Mapping[str, int] | None = None,
    since: Mapping[str, int] | None = None,
    admits: Callable[[Entry], bool] | None = None,
) -> tuple[Playbook, BudgetUse]:
    """The playbook cut to `budget` (the same object when it fits and nothing is held), and the use of the budget.

    Args:
        rediscoveries: how often each entry was found again.
        since: the version at which each entry's current text and counters began (recency).
        admits: whether an entry may go out (the screen, `core.playbook_screen.EntryScreen.admits`). It is asked
            only of the entries the budget would take, in rank order, until the budget is full: an entry it refuses
            is left out (counted in `held`, not in `left_out`) and the next in rank takes its place, so the result
            is the cut of the playbook without every refused entry, and what is asked is bounded by the budget.
            The use's `entries` and `tokens` then count the entries not refused.
    """
    found_again = rediscoveries or {}
    recency = since or {}
    entries = list(playbook.entries())
    use = budget_use(playbook, budget)
    if not use.over and admits is None:
        return playbook, use
    ranked = sorted(
        range(len(entries)),
        key=lambda i: (
            entries[i][1].helpful - entries[i][1].harmful,
            found_again.get(entries[i][1].name, 0),
            recency.get(entries[i][1].name, 0),
            -i,
        ),
        reverse=True,
    )
    kept: set[int] = set()
    spent = held = held_tokens = 0
    for i in ranked:
        if len(kept) >= budget.max_entries:
            break  # full: no later entry can be taken, so none is asked about
        cost = entry_tokens(entries[i][1].text)
        if spent + cost > budget.max_tokens:
            continue  # a shorter entry later in rank may still fit
        if admits is not None and not admits(entries[i][1]):
            held += 1
            held_tokens += cost
            continue
        kept.add(i)
        spent += cost
    left_out = len(entries) - held - len(kept)
    use = use.model_copy(
        update={"entries": use.entries - held, "tokens": use.tokens - held_tokens, "left_out": left_out, "held": held}
    )
    if not held and not left_out:
        return playbook, use
    names = {entries[i][1].name for i in kept}
    sections = {s: [e for e in items if e.name in names] for s, items in playbook.sections.items()}
    return playbook.model_copy(update={"sections": sections}), use
