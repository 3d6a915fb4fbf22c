"""Layered mappings: a copy of a dict that costs what changes (reads fall through to a shared base, writes stay in a
layer), and which of its keys are new to a caller without a pass over the base. The apply engine
(`core.operations`) carries each playbook's lookup tables this way from one session to the next."""

from __future__ import annotations

from collections.abc import Container, Iterator, Mapping, MutableMapping
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")

# A layer is folded into a new plain dict once it holds this many changes, or an eighth of its base's size: each
# session then copies its few changes instead of the whole dict, and a fold's pass over the dict comes once per
# thousands of changes at 5,000 entries.
_FOLD_MIN = 256


class Layered(MutableMapping[K, V]):
    """A copy of a dict that costs what changes: reads fall through to `base` (shared, never changed), writes stay
    in this layer. It reads, and iterates, as `dict(base)` changed in the same way would: a key removed and set
    again comes last."""

    __slots__ = ("base", "gone", "over", "tail")

    def __init__(self, base: Mapping[K, V]) -> None:
        if isinstance(base, Layered) and base.changes() <= max(_FOLD_MIN, len(base.base) // 8):
            self.base: Mapping[K, V] = base.base
            self.over: dict[K, V] = dict(base.over)  # base keys with another value, in place
            self.gone: set[K] = set(base.gone)  # base keys removed (and maybe set again, in `tail`)
            self.tail: dict[K, V] = dict(base.tail)  # keys set that `base` does not hold live, in order
        else:
            self.base = dict(base) if isinstance(base, Layered) else base
            self.over, self.gone, self.tail = {}, set(), {}

    def changes(self) -> int:
        """How many keys this layer holds apart from its base."""
        return len(self.over) + len(self.gone) + len(self.tail)

    def __getitem__(self, key: K) -> V:
        if key in self.tail:
            return self.tail[key]
        if key in self.gone:
            raise KeyError(key)
        return self.over[key] if key in self.over else self.base[key]

    def __contains__(self, key: object) -> bool:
        return key in self.tail or (key not in self.gone and key in self.base)

    def __setitem__(self, key: K, value: V) -> None:
        if key in self.tail or key in self.gone or key not in self.base:
            self.tail[key] = value
        else:
            self.over[key] = value

    def __delitem__(self, key: K) -> None:
        if key in self.tail:
            del self.tail[key]
        elif key in self.gone or key not in self.base:
            raise KeyError(key)
        else:
            self.gone.add(key)
            self.over.pop(key, None)

    def __iter__(self) -> Iterator[K]:
        gone = self.gone
        yield from (k for k in self.base if k not in gone) if gone else self.base
        yield from self.tail

    def __len__(self) -> int:
        return len(self.base) - len(self.gone) + len(self.tail)


def unseen_texts(live: Mapping[str, int], done: Container[str], covered: list[Mapping[str, int]]) -> list[str]:
    """The texts of `live` (`live_texts`, or what a `NearFinder` is given) not in `done`, which only ever grows (texts
    a caller embedded, or found clean): without a pass over every text when `live` layers a session's changes on
    texts that were all in `done` when last asked. `covered` is the caller's record of those (it keeps it between
    calls). May name texts a session removed, once per such record."""
    if not isinstance(live, Layered):
        return [t for t in live if t not in done]
    base = live.base
    if not any(b is base for b in covered):
        fresh = [t for t in base if t not in done]
        if fresh:
            return fresh + [t for t in live.tail if t not in done]
        covered[:] = [*covered[-1:], base]  # every text of it is done: only its layers' own can be new
    return [t for t in live.tail if t not in done]
