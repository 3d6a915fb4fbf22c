"""The screen of a playbook, whole or entry by entry as an export's budget takes them (`EntryScreen`): each entry's
text read once (`core.screen`), what two entries say read one after the other, what each entry rests on (`Support`:
tainted, quorum, withdrawn), the releases a person approved, and the keys a verdict is kept under between runs
(`core.store.screen_verdicts`), so a screen reads again only what changed. Pure functions.
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
from core.models import Entry, Playbook
from core.phrases import Reading, phrase_reading, sentence_refusals
from core.reading import joined
from core.recipes import Tasks
from core.safeguard_talk import safeguard_refusals, safeguard_refusals_after
from core.screen import MAX_SCREENED, Hold, reading_holds, text_holds

__all__ = [
    "EntryScreen",
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
    # The folders of the one project it is delivered to (its text opens with `In <project>: `, and agents of other
    # projects never have it), whose declarations it is judged by; empty: every project's.
    folders: frozenset[str] = frozenset()


def text_key(text: str) -> str:
    """The key a release is recorded under: it approves this text, not whatever the entry says later."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def vouched_key(vouched: Vouched) -> str:
    """A fingerprint of everything in `vouched`: a kept verdict is read again only under the very same."""
    fields = (vouched.programs, vouched.packages, vouched.hosts, vouched.scripts, vouched.languages)
    return _digest("vouched", *(_digest(*sorted(f)) for f in fields), str(vouched.links), _tasks_key(vouched.tasks))


def _tasks_key(tasks: Tasks) -> str:
    """A fingerprint of everything in `tasks`."""
    return _digest(
        _digest(*sorted(f"{task}\n{line}" for task, line in tasks.recipes)),
        _digest(*sorted(_digest(*requirement) for requirement in tasks.requirements)),
        _digest(*sorted(tasks.places_seen)),
        _digest(*sorted(tasks.places_linked)),
        str(tasks.places_cut),
    )


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
    """What is vouched for one entry: a keyless one may name no link at all; its tasks are those of the projects
    its sessions ran in (`Vouched.projects`), where it was learnt, and those every entry is judged by."""
    vouched = vouched or Vouched()
    if vouched.projects:
        vouched = _learnt_in(vouched, support.folders if support else frozenset())
    return replace(vouched, links=False) if _keyless(support) else vouched


def _learnt_in(vouched: Vouched, folders: frozenset[str]) -> Vouched:
    """What is vouched for an entry learnt in `folders`: what those projects declare beside what every entry has
    (the user's prompts, the repositories the export writes into), or, where a folder is not among the projects
    read (or none is known), what every project declares."""
    projects = {p.folder: p for p in vouched.projects}
    if not folders or not all(f in projects for f in folders):
        folders = frozenset(projects)
    chosen = [projects[f] for f in sorted(folders)]
    return replace(
        vouched,
        programs=vouched.programs.union(*(p.programs for p in chosen)),
        packages=vouched.packages.union(*(p.packages for p in chosen)),
        tasks=vouched.tasks.union(*(p.tasks for p in chosen)),
        projects=(),
    )


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
    keys_of = _Keys(vouched)
    keys = [_verdict_key(e.text, keys_of.key(support.get(e.name)), rules) for e in entries]
    typed = [_keyless(support.get(e.name)) for e in entries]
    pairs = zip(itertools.pairwise(entries), itertools.pairwise(typed), strict=True)
    return keys + [pair_key(a.text, b.text, rules, typed=ta or tb) for (a, b), (ta, tb) in pairs]


class _Keys:
    """What is vouched for each kind of entry, and its fingerprint, found once per kind: keyless (it may name no
    link) or a model's (what it says of a safeguard is read, `core.safeguard_talk`), and learnt in which folders."""

    def __init__(self, vouched: Vouched | None) -> None:
        self.vouched = vouched
        self.found: dict[tuple[bool, frozenset[str]], tuple[Vouched, str]] = {}

    def _of(self, support: Support | None) -> tuple[Vouched, str]:
        kind = (_keyless(support), support.folders if support is not None else frozenset())
        if kind not in self.found:
            said = _entry_vouched(self.vouched, Support(keyless=kind[0], folders=kind[1]))
            self.found[kind] = (said, _digest(vouched_key(said), "typed" if kind[0] else "model"))
        return self.found[kind]

    def vouched_for(self, support: Support | None) -> Vouched:
        """What is vouched for an entry that rests on `support`."""
        return self._of(support)[0]

    def key(self, support: Support | None) -> str:
        """The fingerprint of `vouched_for(support)`."""
        return self._of(support)[1]


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
    reader = _Reader([e for _, e in playbook.entries()], vouched, support, known, rules)
    text_keys = [reader.text(i) for i in range(len(reader.entries))]
    pair_keys = [reader.pair(i) for i in range(len(reader.entries) - 1)]
    return text_keys, pair_keys, reader.found


class _Reader:
    """The verdicts on a playbook's entries (`entries`, in the playbook's order) and on each two of them one after the
    other, each read at most once and only when asked for: the whole screen asks for all of them, an export only for
    those the budget would take (`EntryScreen`). Each text is normalised and folded once, for itself and its pairs."""

    def __init__(
        self,
        entries: list[Entry],
        vouched: Vouched | None,
        support: Mapping[str, Support],
        known: Mapping[str, list[Hold]],
        rules: str,
    ) -> None:
        self.entries = entries
        self.keyless = [_keyless(support.get(e.name)) for e in entries]
        self.supports = [support.get(e.name) for e in entries]
        self.keys = _Keys(vouched)
        self.known = known
        self.rules = rules
        self.found: dict[str, list[Hold]] = {}  # key -> verdict, taken from `known` or read now
        self.text_keys: dict[int, str] = {}
        self.pair_keys: dict[int, str] = {}  # i -> the key of entries i and i + 1
        # text -> (its folded form, that form's `sentences`, its phrases alone)
        self.read: dict[str, Reading] = {}
        self.plain: dict[str, str] = {}  # text -> `normalise(text)`, for its own holds and its phrases
        self.talks: dict[str, bool] = {}  # text -> whether what it says of a safeguard alone is held

    def alone(self, text: str) -> Reading:
        if text not in self.read:
            if text not in self.plain:
                self.plain[text] = normalise(text)
            self.read[text] = phrase_reading(self.plain[text])
        return self.read[text]

    def text(self, i: int) -> str:
        """The key of entry `i`'s own verdict, read (or taken from `known`) into `found`."""
        if i in self.text_keys:
            return self.text_keys[i]
        entry, keyless = self.entries[i], self.keyless[i]
        key = _verdict_key(entry.text, self.keys.key(self.supports[i]), self.rules)
        self.text_keys[i] = key
        if key not in self.found:  # a verdict kept by an earlier run, or read now
            known = self.known
            reading = self.alone(entry.text) if key not in known and len(entry.text) <= MAX_SCREENED else None
            self.found[key] = (
                known[key]
                if key in known
                else reading_holds(
                    entry.text,
                    self.keys.vouched_for(self.supports[i]),
                    reading,
                    self.plain.get(entry.text),
                    typed=keyless,
                )
            )
        # A model's text read whole (not too long) whose verdict holds nothing it says of a safeguard says nothing
        # held alone (its verdict read that and more): its pairs need not read it again to know. (A hold says less:
        # it may come from the text's `&...;` references shown, or a fenced block read as a lesson.)
        stored = self.plain.get(entry.text)
        if not keyless and stored is not None and len(stored) <= MAX_SCREENED:
            if all(hold.rule != "safeguard" for hold in self.found[key]):
                self.talks.setdefault(entry.text, False)
        return key

    def talks_alone(self, text: str) -> bool:
        if text not in self.talks:
            self.talks[text] = bool(safeguard_refusals(self.alone(text)[1]))
        return self.talks[text]

    def pair(self, i: int) -> str:
        """The key of the verdict on entries `i` and `i + 1` read one after the other, read into `found`."""
        if i in self.pair_keys:
            return self.pair_keys[i]
        a, b = self.entries[i], self.entries[i + 1]
        typed = self.keyless[i] or self.keyless[i + 1]
        key = pair_key(a.text, b.text, self.rules, typed=typed)
        self.pair_keys[i] = key
        if key in self.known and key not in self.found:
            self.found[key] = self.known[key]
        if key in self.found:
            return key
        (fold_a, cut_a, alone_a), (_, cut_b, alone_b) = self.alone(a.text), self.alone(b.text)
        # folded(x + " " + y) is folded(x) + " " + folded(y), and its sentences are those of each (`joined`): the
        # pair is read without folding or cutting it again. Sentence by sentence only: two entries are two bullets,
        # and read whole 9 of 20,000 pairs of ordinary lessons were held (a `.env` rule beside a commit-message rule).
        said = {r for r, _ in alone_a + alone_b}
        together = joined(fold_a, cut_a, cut_b)
        split = [(rule, detail) for rule, detail in sentence_refusals(together) if rule not in said]
        if not split and not typed and not self.talks_alone(a.text) and not self.talks_alone(b.text):
            # "The pre-push hook is slow." then "Skip it.": a pronoun whose safeguard the entry before names
            split = safeguard_refusals_after(cut_a, cut_b, together[len(cut_a) : len(together) - len(cut_b)])
        self.found[key] = [Hold(rule=split[0][0], detail=split[0][1])] if split else []  # type: ignore[arg-type]
        return key


class EntryScreen:
    """The screen of a playbook read entry by entry, as far as it is asked: whether an entry may reach an agent
    (`admits`) reads its own verdict and those of its pairs with both its neighbours in the playbook's order (a pair
    that speaks over the user's head holds both its entries), and nothing else; `whole` reads every entry. An export
    asks only for the entries its budget would take (`core.budget.fit_budget`), so what it screens is bounded by the
    budget, not the playbook. An entry whose exact text was released (`released`: (entry id, `text_key`) pairs)
    stays. `known`: verdicts an earlier run kept under the same `rules` (`screen_verdicts`); what an entry rests on
    is read from `support` every time."""

    def __init__(
        self,
        playbook: Playbook,
        vouched: Vouched | None,
        support: Mapping[str, Support],
        released: Iterable[tuple[str, str]],
        *,
        shared: bool = False,
        min_contributors: int = 2,
        known: Mapping[str, list[Hold]] | None = None,
        rules: str = "",
    ) -> None:
        listed = playbook.entries()
        self._playbook = playbook
        self._sections = [section for section, _ in listed]
        self._known = known or {}
        self._reader = _Reader([e for _, e in listed], vouched, support, self._known, rules)
        self._index = {e.name: i for i, (_, e) in enumerate(listed)}
        self._support = support
        self._shared = shared
        self._min_contributors = min_contributors
        self._approved = set(released)
        self._verdict: dict[int, bool] = {}  # i -> whether entry i may go
        self._held: dict[int, Screened] = {}

    def admits(self, entry: Entry) -> bool:
        """Whether `entry` (an entry of the playbook, by its id) may reach an agent: no hold, or released."""
        return self._admits(self._index[entry.name])

    def _admits(self, i: int) -> bool:
        if i in self._verdict:
            return self._verdict[i]
        reader, entry = self._reader, self._reader.entries[i]
        # a new list: the verdicts (and those `known` gave) are read, never changed
        holds = reader.found[reader.text(i)] + _support_holds(
            self._support.get(entry.name), shared=self._shared, min_contributors=self._min_contributors
        )
        split = self._split(i)
        if split is not None and not any(h.rule == split.rule for h in holds):
            holds.append(split)
        self._verdict[i] = not holds or (entry.name, text_key(entry.text)) in self._approved
        if not self._verdict[i]:
            self._held[i] = Screened(name=entry.name, section=self._sections[i], text=entry.text, holds=holds)
        return self._verdict[i]

    def _split(self, i: int) -> Hold | None:
        """The hold a pair puts on entry `i` (an instruction split across two entries): the pair with the entry
        after it, else the pair with the entry before it, naming the other."""
        reader, names = self._reader, [e.name for e in self._reader.entries[max(i - 1, 0) : i + 2]]
        if i + 1 < len(reader.entries):
            for hold in reader.found[reader.pair(i)]:
                return Hold(rule=hold.rule, detail=f"read with `{names[-1]}` after it: {hold.detail}")
        if i > 0:
            for hold in reader.found[reader.pair(i - 1)]:
                return Hold(rule=hold.rule, detail=f"read with `{names[0]}` before it: {hold.detail}")
        return None

    def whole(self) -> tuple[Playbook, list[Screened]]:
        """The playbook without its held entries, and the held ones with their holds (every entry read)."""
        count = len(self._reader.entries)
        # Every text first, then every pair: a text's own verdict says whether it talks of a safeguard alone, which
        # its pairs need (`_Reader.talks_alone`).
        for i in range(count):
            self._reader.text(i)
        for i in range(count - 1):
            self._reader.pair(i)
        admitted = [self._admits(i) for i in range(count)]
        if all(admitted):
            return self._playbook, []
        go = iter(admitted)
        sections = {s: [e for e in items if next(go)] for s, items in self._playbook.sections.items()}
        return self._playbook.model_copy(update={"sections": sections}), self.held

    @property
    def held(self) -> list[Screened]:
        """The entries found held so far, in the playbook's order."""
        return [self._held[i] for i in sorted(self._held)]

    @property
    def read_now(self) -> dict[str, list[Hold]]:
        """The verdicts read so far that `known` did not give, by key (for the next run to keep)."""
        return {k: v for k, v in self._reader.found.items() if k not in self._known}


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
    """`playbook` without its held entries, and the held ones with their holds (`EntryScreen.whole`). An entry whose
    exact text was released (`released`: (entry id, `text_key`) pairs) stays. `verdicts`: what `screen_verdicts` gave
    under the same `rules` (read now for any key it lacks); what an entry rests on is read from `support` every time."""
    return EntryScreen(
        playbook,
        vouched,
        support,
        released,
        shared=shared,
        min_contributors=min_contributors,
        known=verdicts,
        rules=rules,
    ).whole()
