"""The screen of a whole playbook: each entry's text read once (`core.screen`), what two entries say read one after
the other, what each entry rests on (`Support`: tainted, quorum, withdrawn), the releases a person approved, and the
keys a verdict is kept under between runs (`core.store.screen_verdicts`), so an export reads again only what changed.
Pure functions.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import lru_cache

from pydantic import BaseModel, Field

import core.screen as text_screen
from core.allowlist import Vouched
from core.invisible import normalise
from core.models import Playbook
from core.phrases import Reading, phrase_reading, sentence_refusals
from core.reading import joined
from core.safeguard_talk import safeguard_refusals, safeguard_refusals_after
from core.screen import MAX_SCREENED, Hold, reading_holds, text_holds

__all__ = [
    "Screened",
    "Support",
    "entry_holds",
    "pair_key",
    "screen_keys",
    "screen_playbook",
    "screen_verdicts",
    "text_key",
    "verdict_key",
    "vouched_key",
]


class Screened(BaseModel):
    """One held entry, as `playbook review` lists it."""

    name: str
    section: str
    text: str
    holds: list[Hold]


class Support(BaseModel):
    """What an entry rests on, from the store: the contributors of the sessions behind it (None for sessions of
    this machine), whether its text came only from what the agent read, whether every session behind it was
    withdrawn by its contributor, and whether rules wrote it without a model (`keyless`: such a lesson carries no
    link at all)."""

    contributors: set[str | None] = Field(default_factory=set)
    tainted: str | None = None
    withdrawn: str | None = None
    keyless: bool = False


def text_key(text: str) -> str:
    """The key a release is recorded under: it approves this text, not whatever the entry says later."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def vouched_key(vouched: Vouched) -> str:
    """A fingerprint of everything in `vouched`: a kept verdict is read again only under the very same."""
    fields = (vouched.programs, vouched.packages, vouched.hosts, vouched.scripts, vouched.languages)
    return _digest("vouched", *(_digest(*sorted(f)) for f in fields), str(vouched.links))


@lru_cache(maxsize=1 << 14)  # an export looks each key up, then reads it, for the same texts (and strings)
def _key(*parts: str) -> str:
    """`_digest`, remembered: every part it depends on is an argument (the version too, read at each call)."""
    return _digest(*parts)


def _digest(*parts: str) -> str:
    # Each part led by its length, so no other parts read the same; a lone surrogate is kept as it is (surrogatepass).
    return hashlib.sha256("".join([f"{len(p)}:{p}" for p in parts]).encode("utf-8", "surrogatepass")).hexdigest()


def verdict_key(text: str, vouched: Vouched, rules: str = "", *, typed: bool = False) -> str:
    """The key of the holds on `text` under `vouched` (`text_holds`, `typed` as it was read), as a run keeps them
    for the next: its exact text, what is vouched for it, the screen's version and `rules` (the fingerprint of the
    screen's code the store gives, `core.store.screen_verdicts`)."""
    return _verdict_key(text, _digest(vouched_key(vouched), "typed" if typed else "model"), rules)


def _verdict_key(text: str, vouched: str, rules: str) -> str:
    """`verdict_key` with the fingerprint of what is vouched read once for a whole playbook."""
    return _key("text", str(text_screen.SCREEN_VERSION), rules, vouched, text)  # read at each call


def pair_key(first: str, then: str, rules: str = "", *, typed: bool = True) -> str:
    """The key of what two entries say read one after the other (`first`, then `then`, exact texts; `typed`: either
    was written by our own code from a typed lesson, so what they say of a safeguard together is not read)."""
    return _key("pair", str(text_screen.SCREEN_VERSION), rules, "typed" if typed else "model", first, then)


def _entry_vouched(vouched: Vouched | None, support: Support | None) -> Vouched:
    """What is vouched for one entry: a keyless one may name no link at all."""
    vouched = vouched or Vouched()
    return replace(vouched, links=False) if _keyless(support) else vouched


def _support_holds(support: Support | None, *, shared: bool, min_contributors: int) -> list[Hold]:
    """The holds on what an entry rests on (never kept between runs: read from `support` each time)."""
    if support is None:
        return []
    holds: list[Hold] = []
    if support.tainted:
        holds.append(Hold(rule="tainted", detail=support.tainted))
    if support.withdrawn:
        holds.append(Hold(rule="withdrawn", detail=support.withdrawn))
    elif shared and support.contributors and len(support.contributors) < min_contributors:
        who = ", ".join(sorted(c or "this machine" for c in support.contributors))
        holds.append(
            Hold(
                rule="quorum",
                detail=f"supported by {len(support.contributors)} contributor(s) ({who}); {min_contributors} needed",
            )
        )
    return holds


def entry_holds(
    text: str, vouched: Vouched | None, support: Support | None, *, shared: bool, min_contributors: int
) -> list[Hold]:
    """Every hold on one entry: what its text says, and what it rests on (`support`; `shared`: the playbook
    learns from several contributors' sessions, so one contributor alone may not put a lesson in it)."""
    holds = text_holds(text, _entry_vouched(vouched, support), typed=_keyless(support))
    return holds + _support_holds(support, shared=shared, min_contributors=min_contributors)


def screen_keys(
    playbook: Playbook, vouched: Vouched | None, support: Mapping[str, Support], *, rules: str = ""
) -> list[str]:
    """Every key `screen_verdicts` gives a verdict under for `playbook` (to look up those a run kept)."""
    entries = [e for _, e in playbook.entries()]
    key_of = _keys_of(vouched)
    keys = [_verdict_key(e.text, key_of[_keyless(support.get(e.name))], rules) for e in entries]
    typed = [_keyless(support.get(e.name)) for e in entries]
    pairs = zip(itertools.pairwise(entries), itertools.pairwise(typed), strict=True)
    return keys + [pair_key(a.text, b.text, rules, typed=ta or tb) for (a, b), (ta, tb) in pairs]


def _keys_of(vouched: Vouched | None) -> dict[bool, str]:
    """The fingerprint of what is vouched for a keyless entry (True) and for a model's (False): a keyless entry may
    name no link, and what a model's says of a safeguard is read (`core.safeguard_talk`)."""
    return {
        flag: _digest(vouched_key(_entry_vouched(vouched, Support(keyless=flag))), "typed" if flag else "model")
        for flag in (False, True)
    }


def _keyless(support: Support | None) -> bool:
    return support is not None and support.keyless


def screen_verdicts(
    playbook: Playbook,
    vouched: Vouched | None,
    support: Mapping[str, Support],
    known: Mapping[str, list[Hold]] | None = None,
    *,
    rules: str = "",
) -> dict[str, list[Hold]]:
    """Every verdict the screen of `playbook` reads, by key: the holds on each entry's text under what is vouched
    for it (`verdict_key`), and for each two entries one after the other, the phrase they say only together
    (`pair_key`: [] or one hold). Those in `known` (kept by an earlier run under the same keys) are taken as they
    are; the rest are read now. Each text is normalised and folded once, for itself and for both its pairs."""
    return _screen(playbook, vouched, support, known or {}, rules)[2]


def _screen(
    playbook: Playbook,
    vouched: Vouched | None,
    support: Mapping[str, Support],
    known: Mapping[str, list[Hold]],
    rules: str,
) -> tuple[list[str], list[str], dict[str, list[Hold]]]:
    """`screen_verdicts`, with the key of each entry's text and of each pair, in the playbook's order."""
    entries = [e for _, e in playbook.entries()]
    vouch = {flag: _entry_vouched(vouched, Support(keyless=flag)) for flag in (False, True)}
    key_of = _keys_of(vouched)
    found: dict[str, list[Hold]] = {}
    # text -> (its folded form, that form's `sentences`, its phrases alone)
    read: dict[str, tuple[str, str, list[tuple[str, str]]]] = {}
    plain: dict[str, str] = {}  # text -> `normalise(text)`, for its own holds and its phrases

    def alone(text: str) -> Reading:
        if text not in read:
            if text not in plain:
                plain[text] = normalise(text)
            read[text] = phrase_reading(plain[text])
        return read[text]

    text_keys = []
    talks: dict[str, bool] = {}  # text -> whether what it says of a safeguard alone is held
    for entry in entries:
        keyless = _keyless(support.get(entry.name))
        key = _verdict_key(entry.text, key_of[keyless], rules)
        text_keys.append(key)
        if key not in found:  # a verdict kept by an earlier run, or read now
            reading = alone(entry.text) if key not in known and len(entry.text) <= MAX_SCREENED else None
            found[key] = (
                known[key]
                if key in known
                else reading_holds(entry.text, vouch[keyless], reading, plain.get(entry.text), typed=keyless)
            )
        # A model's text read whole (not too long) whose verdict holds nothing it says of a safeguard says nothing
        # held alone (its verdict read that and more): its pairs need not read it again to know. (A hold says less:
        # it may come from the text's `&...;` references shown, or a fenced block read as a lesson.)
        stored = plain.get(entry.text)
        if not keyless and stored is not None and len(stored) <= MAX_SCREENED:
            if all(hold.rule != "safeguard" for hold in found[key]):
                talks.setdefault(entry.text, False)
    pair_keys = []

    def talks_alone(text: str) -> bool:
        if text not in talks:
            talks[text] = bool(safeguard_refusals(alone(text)[1]))
        return talks[text]

    for a, b in itertools.pairwise(entries):
        typed = _keyless(support.get(a.name)) or _keyless(support.get(b.name))
        key = pair_key(a.text, b.text, rules, typed=typed)
        pair_keys.append(key)
        if key in known and key not in found:
            found[key] = known[key]
        if key in found:
            continue
        (fold_a, cut_a, alone_a), (_, cut_b, alone_b) = alone(a.text), alone(b.text)
        # folded(x + " " + y) is folded(x) + " " + folded(y), and its sentences are those of each (`joined`): the
        # pair is read without folding or cutting it again. Sentence by sentence only: two entries are two bullets,
        # and read whole 9 of 20,000 pairs of ordinary lessons were held (a `.env` rule beside a commit-message rule).
        said = {r for r, _ in alone_a + alone_b}
        together = joined(fold_a, cut_a, cut_b)
        split = [(rule, detail) for rule, detail in sentence_refusals(together) if rule not in said]
        if not split and not typed and not talks_alone(a.text) and not talks_alone(b.text):
            # "The pre-push hook is slow." then "Skip it.": a pronoun whose safeguard the entry before names
            split = safeguard_refusals_after(cut_a, cut_b, together[len(cut_a) : len(together) - len(cut_b)])
        found[key] = [Hold(rule=split[0][0], detail=split[0][1])] if split else []  # type: ignore[arg-type]
    return text_keys, pair_keys, found


def _split_overrides(names: list[str], pairs: list[list[Hold]]) -> dict[str, Hold]:
    """Entries that say nothing alone but speak over the user's head read one after the other (an instruction
    split across two entries): each of the pair, with a hold naming the other (`pairs`: the verdict on each two
    entries `names` has one after the other)."""
    found: dict[str, Hold] = {}
    for (a, b), said in zip(itertools.pairwise(names), pairs, strict=True):
        for hold in said:
            found[a] = Hold(rule=hold.rule, detail=f"read with `{b}` after it: {hold.detail}")
            found[b] = Hold(rule=hold.rule, detail=f"read with `{a}` before it: {hold.detail}")
    return found


def screen_playbook(
    playbook: Playbook,
    vouched: Vouched | None,
    support: Mapping[str, Support],
    released: Iterable[tuple[str, str]],
    *,
    shared: bool = False,
    min_contributors: int = 2,
    verdicts: Mapping[str, list[Hold]] | None = None,
    rules: str = "",
) -> tuple[Playbook, list[Screened]]:
    """`playbook` without its held entries, and the held ones with their holds. An entry whose exact text was
    released (`released`: (entry id, `text_key`) pairs) stays. `verdicts`: what `screen_verdicts` gave under the
    same `rules` (read now for any key it lacks); what an entry rests on is read from `support` every time."""
    approved = set(released)
    text_keys, pair_keys, found = _screen(playbook, vouched, support, verdicts or {}, rules)
    split = _split_overrides([e.name for _, e in playbook.entries()], [found[k] for k in pair_keys])
    held: list[Screened] = []
    sections = {}
    keys = iter(text_keys)  # in the order of `entries()`: section by section
    for name, items in playbook.sections.items():
        kept = []
        for entry in items:
            entry_support = support.get(entry.name)
            # a new list: the verdicts (and those `verdicts` gave) are read, never changed
            holds = found[next(keys)] + _support_holds(entry_support, shared=shared, min_contributors=min_contributors)
            if entry.name in split and not any(h.rule == split[entry.name].rule for h in holds):
                holds.append(split[entry.name])
            if holds and (entry.name, text_key(entry.text)) not in approved:
                held.append(Screened(name=entry.name, section=name, text=entry.text, holds=holds))
            else:
                kept.append(entry)
        sections[name] = kept
    if not held:
        return playbook, []
    return playbook.model_copy(update={"sections": sections}), held
