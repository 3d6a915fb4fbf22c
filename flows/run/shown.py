"""What each session of an epoch was shown, and which entry ids its answers may name: the entries its agent had
(the hooks' and exports' exposure records), within the epoch's frozen playbook.

An epoch's sessions share its frozen playbook, so what is read from it (its ids, each entry's place) is read once
per playbook (`_placed`), and each session pays for the few entries its agent had, not for the playbook's size."""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Iterable, Iterator, Set

import duckdb

from core.models import Entry, Playbook
from core.scope import GLOBAL_PREFIX
from core.store.exposure import exposed_entries
from flows.run.run_state import RunContext

__all__ = ["KNOWN_IDS", "KnownIds", "exposed_playbooks", "exposure_names", "known_ids"]

# The request context key of the ids an answer may name: a reflection or curation naming none of them is a
# failed call (`phantom_tags`, `phantom_targets`).
KNOWN_IDS = "known_ids"


class KnownIds(Set[str]):
    """The ids one session's answers may name: the epoch's playbook's (shared by every session of the epoch, never
    copied) and those of the entries its agent had. A read-only set."""

    def __init__(self, shared: Set[str], own: Iterable[str]) -> None:
        self._shared = shared
        self._own = frozenset(n for n in own if n not in shared)  # disjoint, so the length is a sum

    def __contains__(self, name: object) -> bool:
        return name in self._shared or name in self._own

    def __iter__(self) -> Iterator[str]:
        yield from self._shared
        yield from self._own

    def __len__(self) -> int:
        return len(self._shared) + len(self._own)


_name = operator.attrgetter("name")


class _Placed:
    """Each entry of one playbook by id: its place in the playbook's order (a number, so building this allocates no
    object per entry), and where each section starts in that order."""

    def __init__(self, playbook: Playbook) -> None:
        self.playbook = playbook
        # In C (`chain`, `attrgetter`), no Python step an entry: 0.38 -> 0.34 ms at 5,000 entries, once an epoch.
        self.flat = list(itertools.chain.from_iterable(playbook.sections.values()))
        self.at = dict(zip(map(_name, self.flat), range(len(self.flat)), strict=True))
        self.ids: Set[str] = self.at.keys()
        self.starts = list(itertools.accumulate((len(items) for items in playbook.sections.values()), initial=0))
        # An id held twice (no stored version has one) is not placed by id: such a playbook is filtered whole.
        self.unique = len(self.at) == len(self.flat)


_last: list[_Placed] = []  # the playbook last asked about: an epoch's steps ask about the same frozen one


def _placed(playbook: Playbook) -> _Placed:
    """`_Placed` of `playbook`, built once while the epoch's steps ask about that very object (held, so its id is
    not another's)."""
    held = _last[0] if _last else None
    if held is not None and held.playbook is playbook:
        return held
    placed = _Placed(playbook)
    _last[:] = [placed]
    return placed


def exposed_playbooks(
    con: duckdb.DuckDBPyConnection,
    ctx: RunContext,
    frozen: Playbook,
    session_ids: list[str],
    names: dict[str, set[str]] | None = None,
) -> dict[str, Playbook]:
    """For each session: the entries of `frozen` its agent had (`exposure_names`, unless the caller has them), in
    the playbook's order, every section kept (empty ones too)."""
    names = exposure_names(con, ctx, session_ids) if names is None else names
    placed = _placed(frozen)
    found: dict[str, Playbook] = {}
    for sid in session_ids:
        found[sid] = frozen.model_copy(update={"sections": _kept(placed, frozen, names[sid])})
    return found


def _kept(placed: _Placed, frozen: Playbook, had: set[str]) -> dict[str, list[Entry]]:
    """`frozen`'s sections holding only the entries whose id is in `had`: looked up by id (as many steps as the
    agent had entries), not by a pass over the playbook."""
    if not placed.unique:
        return {s: [e for e in items if e.name in had] for s, items in frozen.sections.items()}
    titles = list(frozen.sections)
    kept: dict[str, list[Entry]] = {s: [] for s in titles}
    for i in sorted(placed.at[n] for n in had if n in placed.at):
        kept[titles[bisect.bisect_right(placed.starts, i) - 1]].append(placed.flat[i])
    return kept


def exposure_names(con: duckdb.DuckDBPyConnection, ctx: RunContext, session_ids: list[str]) -> dict[str, set[str]]:
    """For each session: the ids of the entries its agent had (`v_exposure`), the global playbook's with their
    prefix when the run curates both."""
    own = exposed_entries(con, ctx.playbook, session_ids)
    other = exposed_entries(con, ctx.config.companion, session_ids) if ctx.config.companion else {}
    return {sid: own[sid] | {GLOBAL_PREFIX + n for n in other.get(sid, ())} for sid in session_ids}


def known_ids(
    con: duckdb.DuckDBPyConnection,
    ctx: RunContext,
    frozen: Playbook,
    session_ids: list[str],
    names: dict[str, set[str]] | None = None,
) -> dict[str, KnownIds]:
    """For each session: the ids its answers may name (`KNOWN_IDS`): the epoch's playbook's, and the entries its
    agent had (`exposure_names`, unless the caller has them), which an earlier session of the same epoch may have
    added. The playbook's ids are read once and shared, not copied per session."""
    ids = _placed(frozen).ids
    had = exposure_names(con, ctx, session_ids) if names is None else names
    return {sid: KnownIds(ids, had[sid]) for sid in session_ids}
