"""The deterministic engine: apply curator operations, evaluations and pruning to a playbook.

The rules, to the edge cases:

- at most the first 10 operations of a call are considered; the rest are `truncated`;
- operations apply in list order, each seeing the state the previous ones left;
- an invalid operation is skipped with a reason, never raised;
- the caller's playbook is never mutated: entries are immutable and a list is copied before it changes, so an
  unexpected exception simply returns the caller's object unchanged; an empty operation
  list returns the very same object.

Functions here take values and return values; nothing is written anywhere.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import (
    Callable,
    Collection,
    Iterable,
    Mapping,
    MutableMapping,
    Sequence,
)
from dataclasses import dataclass
from typing import Any, NamedTuple

import re2

from core.agent_reports import applied_merges, reports_carried
from core.invisible import normalise, removed, strip_unseen
from core.language import mixed_words
from core.layered import Layered
from core.models import (
    MAX_COUNTER,
    MAX_OPERATIONS,
    OP_TYPES,
    TRUNCATED_TYPE,
    AddOp,
    ApplyReport,
    BulletTag,
    CuratorOutput,
    DeleteOp,
    Entry,
    EvaluationOutcome,
    Guards,
    MergeOp,
    OpOutcome,
    Playbook,
    PruneRecord,
    ReflectorOutput,
    SkipCode,
    UpdateOp,
)
from core.sections import DEFAULT_SECTIONS, SectionSet

__all__ = [
    "PRUNE_MIN_HARMFUL",
    "NearFinder",
    "Skip",
    "apply_evaluations",
    "apply_operations",
    "apply_session",
    "clean_entry_text",
    "clean_trigger",
    "empty_playbook",
    "next_entry_id",
    "normalize_playbook",
    "parse_operation",
    "prune",
    "removed_entries",
    "should_prune",
    "without_unseen",
]

PRUNE_MIN_HARMFUL = 3

# Finds the live text a proposed text says again: (that text, similarity) or None; the live texts are given with
# how many entries hold each. Built by the shell from a sentence model (`core.llm.embed`); the engine only asks
# it, and names the first entry in playbook order that holds the text found.
NearFinder = Callable[[str, Mapping[str, int]], tuple[str, float] | None]


class Skip(NamedTuple):
    """Why a raw operation is invalid: a machine code and the seeds' human wording."""

    code: SkipCode
    reason: str


def _op_type(raw: object) -> str:
    """The operation's type as reported: one of OP_TYPES, else `unknown`."""
    raw_type = raw.get("type", "") if isinstance(raw, dict) else ""
    return raw_type if raw_type in OP_TYPES else "unknown"


def empty_playbook(sections: SectionSet = DEFAULT_SECTIONS) -> Playbook:
    """A playbook with every section of `sections` and no entries."""
    return Playbook(sections={name: [] for name in sections.names})


def normalize_playbook(playbook: Playbook, sections: SectionSet = DEFAULT_SECTIONS) -> Playbook:
    """Return `playbook` with exactly the canonical sections, in order.

    Missing sections are added empty; entries of a non-canonical section move to the section its name
    resolves to (the fallback when it resolves to none). Returns the same object when nothing changes.
    """
    if list(playbook.sections) == sections.names:
        return playbook
    new: dict[str, list[Entry]] = {name: [] for name in sections.names}
    for raw_name, items in playbook.sections.items():
        new[sections.resolve(raw_name)].extend(items)
    return playbook.model_copy(update={"sections": new})


def next_entry_id(existing: Iterable[str], slug: str) -> str:
    """`{slug}-NNN` with NNN one above the highest number used among `existing` ids.

    Zero-padded to three digits; past 999 the number simply grows (`pat-1000`).
    """
    return f"{slug}-{max(_numbers(existing, slug), default=0) + 1:03d}"


def _id_number(name: str, slug: str) -> int | None:
    """The number of id `name` when it is `{slug}-NNN`, else None."""
    number = name.removeprefix(f"{slug}-") if name.startswith(f"{slug}-") else ""
    return int(number) if number.isascii() and number.isdigit() else None


def should_prune(entry: Entry, reported: int = 0) -> bool:
    """The seeds' pruning rule: harmful >= 3 and harmful > helpful (so never a 0/0 entry).

    `reported`: how many of the harmful tags are agents' own reports (`playbook mcp`). They weigh against helpful,
    but the 3 must come from elsewhere: an agent that read a hostile page can report `wrong` in session after
    session, and a lesson (a guard's, say) would be gone with no person involved. Such an entry stays until a
    person retires it; the run's summary names it.
    """
    return entry.harmful - reported >= PRUNE_MIN_HARMFUL and entry.harmful > entry.helpful


def spared_by_reports(playbook: Playbook, reported: Mapping[str, int]) -> list[str]:
    """The entries of `playbook` the pruning rule would take but for agents' reports (`reported`, by entry id):
    kept for a person to decide (`playbook review` lists them, each run's summary names them)."""
    if not reported:
        return []
    return [
        e.name
        for items in playbook.sections.values()
        for e in items
        if e.name in reported and should_prune(e) and not should_prune(e, reported[e.name])
    ]


# --- validation ---------------------------------------------------------------------------------


def _nonempty_str(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


TRIGGER_CHARS = (4, 120)


def clean_trigger(value: object) -> str | None:
    """A model's `trigger` as a literal worth searching for: invisible characters removed, whitespace collapsed,
    at most 120 characters; None
    when missing or shorter than 4 characters (a trigger like "a" would be found in every session)."""
    if not isinstance(value, str):
        return None
    text = " ".join(strip_unseen(value).split())[: TRIGGER_CHARS[1]]
    return text if len(text) >= TRIGGER_CHARS[0] else None


def parse_operation(raw: object) -> AddOp | UpdateOp | MergeOp | DeleteOp | Skip:
    """Validate one raw operation (untrusted model output).

    Returns:
        The typed operation, or a `Skip` (code and the seeds' wording) when it is invalid.
    """
    if not isinstance(raw, dict):
        return Skip("not_object", f"Operation is not an object: {type(raw).__name__}")
    op_type = raw.get("type", "")
    if op_type == "ADD":
        if not _nonempty_str(raw.get("text")):
            return Skip("empty_field", "ADD: empty or missing text")
        section = raw.get("section")
        return AddOp(
            text=raw["text"],
            section=section if isinstance(section, str) else None,
            trigger=clean_trigger(raw.get("trigger")),
        )
    if op_type == "UPDATE":
        if not _nonempty_str(raw.get("target_id")):
            return Skip("empty_field", "UPDATE: empty or missing target_id")
        if not _nonempty_str(raw.get("text")):
            return Skip("empty_field", "UPDATE: empty or missing text")
        return UpdateOp(target_id=raw["target_id"], text=raw["text"])
    if op_type == "MERGE":
        source_ids = raw.get("source_ids")
        if not isinstance(source_ids, list) or len(source_ids) < 2:
            return Skip("too_few_sources", "MERGE: source_ids has fewer than 2 entries")
        if not _nonempty_str(raw.get("merged_text")):
            return Skip("empty_field", "MERGE: empty or missing merged_text")
        section = raw.get("section")
        # Non-string ids can never name an entry; keep them visible as "not found" below.
        return MergeOp(
            source_ids=[s if isinstance(s, str) else repr(s) for s in source_ids],
            merged_text=raw["merged_text"],
            section=section if isinstance(section, str) else None,
        )
    if op_type == "DELETE":
        if not _nonempty_str(raw.get("target_id")):
            return Skip("empty_field", "DELETE: empty or missing target_id")
        reason = raw.get("reason", "")
        return DeleteOp(target_id=raw["target_id"], reason=reason if isinstance(reason, str) else str(reason))
    return Skip("unknown_type", f"Unknown operation type: {op_type!r}")


# Every character a reader cannot see (`core.invisible`: controls, C1, bidi overrides, zero-width and tag
# characters; tab and newline become spaces), and HTML comments: an entry holding `<!-- playbook:end -->`
# would end the exported block early and grow CLAUDE.md on every export.
_COMMENT = re2.compile(r"(?s)<!--.*?(?:-->|\z)|-->")
_SPACE = re2.compile(r"\s+")


def without_unseen(playbook: Playbook) -> tuple[Playbook, dict[str, str]]:
    """`playbook` with invisible characters taken out of every id and text (an imported file's, which no guard
    cleaned), and for each entry changed, what was taken out (`core.invisible.removed`)."""
    changed: dict[str, str] = {}
    sections = {}
    for section, items in playbook.sections.items():
        kept = []
        for entry in items:
            found = removed(entry.name + entry.text)
            if found:
                name, text = strip_unseen(entry.name), strip_unseen(entry.text)
                if not text.strip() or not name.strip():  # nothing a reader could see: not an entry
                    changed[name or entry.name.encode("unicode_escape").decode()] = (
                        f"{found}; nothing visible was left, dropped"
                    )
                    continue
                changed[name] = found
                entry = entry.model_copy(update={"name": name, "text": text})
            kept.append(entry)
        sections[section] = kept
    return (playbook.model_copy(update={"sections": sections}), changed) if changed else (playbook, {})


def clean_entry_text(text: str) -> str:
    """An entry's text as one paragraph, in the form the screen reads and the store keeps: NFKC, no invisible or
    control characters (`core.invisible.normalise`), no HTML comments, whitespace collapsed."""
    return _SPACE.sub(" ", _COMMENT.sub(" ", normalise(text))).strip()


def _guard_text(
    op: AddOp | UpdateOp | MergeOp | DeleteOp, guards: Guards
) -> AddOp | UpdateOp | MergeOp | DeleteOp | Skip:
    """`op` with its text cleaned, or a skip when the text is empty after cleaning, too long, or holds a word whose
    letters mix scripts (`pаypal` with a Cyrillic `а`: spelled to pass for another word, never stored)."""
    if isinstance(op, DeleteOp):
        return op
    field = "merged_text" if isinstance(op, MergeOp) else "text"
    text = clean_entry_text(getattr(op, field))
    name = "MERGE" if isinstance(op, MergeOp) else "ADD" if isinstance(op, AddOp) else "UPDATE"
    if not text:
        return Skip("empty_field", f"{name}: empty or missing {field}")
    if len(text) > guards.max_entry_chars:
        return Skip("too_long", f"{name}: {field} is {len(text):,} characters, over the {guards.max_entry_chars} limit")
    mixed = mixed_words(text)
    if mixed:
        word, scripts = mixed[0]
        return Skip(
            "mixed_script",
            f"{name}: the word {word.encode('unicode_escape').decode('ascii')!r} mixes"
            f" {' and '.join(sorted(scripts))} letters",
        )
    return op.model_copy(update={field: text})


# --- working state ------------------------------------------------------------------------------


@dataclass(slots=True)
class _Index:
    """What the engine looks up in one playbook: each entry's section, how many entries hold each text (and the id
    of one that does), and per (section, slug) the id numbers in use. Built once per playbook object and carried to
    the playbook each step returns (sessions apply one after another, each to the last one's result), so a step
    costs what it changes, not a pass over every entry. Valid only for the very `sections` dict it was built for;
    playbooks are values, never changed in place, and so are the mappings here (a step layers its changes on
    them, `Layered`)."""

    sections: dict[str, list[Entry]]
    where: Mapping[str, str]
    texts: Mapping[str, int]
    numbers: dict[tuple[str, str], Counter[int]]
    doomed: set[str]  # entries the pruning rule removes (`should_prune`): usually none
    holders: Mapping[str, str]  # text -> the id of an entry holding it (any one; absent when unknown)


_RECENT: OrderedDict[int, _Index] = OrderedDict()  # by id() of the indexed `sections` dict, which it holds
_RECENT_LOCK = threading.Lock()
_RECENT_MAX = 8


def _indexed(playbook: Playbook) -> _Index:
    """The index of `playbook`: the one carried to it, else built now (one pass) and kept."""
    key = id(playbook.sections)
    with _RECENT_LOCK:
        found = _RECENT.get(key)
        if found is not None and found.sections is playbook.sections:
            _RECENT.move_to_end(key)
            return found
    where = {e.name: section for section, items in playbook.sections.items() for e in items}
    texts = Counter(e.text for items in playbook.sections.values() for e in items)
    holders = {e.text: e.name for items in playbook.sections.values() for e in items}
    doomed = {e.name for items in playbook.sections.values() for e in items if should_prune(e)}
    return _remember(_Index(playbook.sections, where, texts, {}, doomed, holders))


def _remember(index: _Index) -> _Index:
    with _RECENT_LOCK:
        _RECENT[id(index.sections)] = index
        _RECENT.move_to_end(id(index.sections))
        while len(_RECENT) > _RECENT_MAX:
            _RECENT.popitem(last=False)
    return index


def _numbers(names: Iterable[str], slug: str) -> Counter[int]:
    """How many of `names` carry each number of the `{slug}-NNN` ids (as `_id_number` reads each)."""
    prefix = f"{slug}-"
    cut = len(prefix)
    # Inline, not `_id_number` a name: a call each was most of the pass (~3 ms of 5,000 ids).
    return Counter(
        int(rest) for name in names if name.startswith(prefix) and (rest := name[cut:]).isascii() and rest.isdigit()
    )


def live_texts(playbook: Playbook) -> Mapping[str, int]:
    """The texts of `playbook`'s entries, each with how many entries hold it (from its index when carried)."""
    return _indexed(playbook).texts


class _State:
    """Mutable working copy: the playbook's lists (each copied before its first change) plus lookup indexes."""

    def __init__(self, playbook: Playbook, sections: SectionSet) -> None:
        self.sections = sections
        if list(playbook.sections) == sections.names:
            index = _indexed(playbook)
            self.lists: dict[str, list[Entry]] = dict(playbook.sections)
            self._owned: set[str] = set()
            # Layered on the index's own: a session copies what it changes, not the thousands of ids and texts.
            self.where: MutableMapping[str, str] = Layered(index.where)
            self.texts: MutableMapping[str, int] = Layered(index.texts)
            self.holders: MutableMapping[str, str] = Layered(index.holders)
            # Shared with the index, each copied on its first change (`_count`): a session changes one or two.
            self.numbers = dict(index.numbers)
            self._own_numbers: set[tuple[str, str]] = set()
            self.doomed = set(index.doomed)
            return
        self.lists = {name: [] for name in sections.names}
        for raw_name, items in playbook.sections.items():
            self.lists[sections.resolve(raw_name)].extend(items)
        self._owned = set(self.lists)
        self.where = {e.name: name for name, items in self.lists.items() for e in items}
        self.texts = Counter(e.text for items in self.lists.values() for e in items)
        self.holders = {e.text: e.name for items in self.lists.values() for e in items}
        self.numbers = {}
        self._own_numbers = set()
        self.doomed = {e.name for items in self.lists.values() for e in items if should_prune(e)}

    def _own(self, section: str) -> list[Entry]:
        if section not in self._owned:  # the caller's list is never changed: copied on first write
            self.lists[section] = list(self.lists[section])
            self._owned.add(section)
        return self.lists[section]

    def entry(self, name: str) -> Entry:
        section = self.where[name]
        return next(e for e in self.lists[section] if e.name == name)

    def holding(self, text: str) -> Entry:
        """The first entry, in playbook order, whose text is `text` (one that is live): the one entry holding it,
        found by id, or when several do (or its holder is not known) the first of a pass in order."""
        name = self.holders.get(text)
        if name is not None and self.texts.get(text) == 1:
            return self.entry(name)
        return next(e for items in self.lists.values() for e in items if e.text == text)

    def _numbers_of(self, section: str) -> Counter[int]:
        key = (section, self.sections.slug_of(section))
        if key not in self.numbers:
            self.numbers[key] = _numbers((e.name for e in self.lists[section]), key[1])
            self._own_numbers.add(key)
        return self.numbers[key]

    def new_id(self, section: str) -> str:
        slug = self.sections.slug_of(section)
        # As `next_entry_id` over the section's ids, from the numbers the state keeps count of.
        candidate = f"{slug}-{max(self._numbers_of(section), default=0) + 1:03d}"
        # Ids must stay unique across sections even if a hand-edited file put `pat-007` elsewhere.
        while candidate in self.where:
            candidate = next_entry_id([candidate], slug)
        return candidate

    def _count(self, section: str, entry: Entry, step: int) -> None:
        if step > 0 and should_prune(entry):
            self.doomed.add(entry.name)
        elif step < 0:
            self.doomed.discard(entry.name)
        count = self.texts.get(entry.text, 0) + step
        if count:
            self.texts[entry.text] = count
        else:
            del self.texts[entry.text]
        if step > 0 and count == 1:
            self.holders[entry.text] = entry.name
        elif self.holders.get(entry.text) == entry.name:  # it no longer holds it: another holder is not known
            del self.holders[entry.text]
        key = (section, self.sections.slug_of(section))
        used = self.numbers.get(key)
        if used is not None and (number := _id_number(entry.name, key[1])) is not None:
            if key not in self._own_numbers:  # the index's, which earlier playbooks share: copied before a change
                used = self.numbers[key] = Counter(used)
                self._own_numbers.add(key)
            used[number] += step
            if not used[number]:
                del used[number]

    def append(self, section: str, entry: Entry) -> None:
        self._own(section).append(entry)
        self.where[entry.name] = section
        self._count(section, entry, 1)

    def remove(self, name: str) -> Entry:
        section = self.where.pop(name)
        kept: list[Entry] = []
        removed: Entry | None = None
        for e in self.lists[section]:
            if e.name == name and removed is None:
                removed = e
            else:
                kept.append(e)
        assert removed is not None
        self.lists[section] = kept
        self._owned.add(section)
        self._count(section, removed, -1)
        return removed

    def replace(self, name: str, new: Entry) -> None:
        section = self.where[name]
        items = self._own(section)
        for i, e in enumerate(items):
            if e.name == name:
                self._count(section, e, -1)
                items[i] = new
                self._count(section, new, 1)
                return

    def playbook(self, template: Playbook) -> Playbook:
        """The playbook the state now holds, with the state's indexes carried to it."""
        result = template.model_copy(update={"sections": self.lists})
        _remember(_Index(result.sections, self.where, self.texts, self.numbers, self.doomed, self.holders))
        return result


def _preview(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _apply_one(
    state: _State,
    index: int,
    raw: object,
    guards: Guards | None,
    near: NearFinder | None = None,
    aliases: Mapping[str, str] | None = None,
) -> OpOutcome:
    """Apply one raw operation to `state`, returning what happened to it: parsed and guarded here, then applied
    by the function of its kind."""
    op = parse_operation(raw)
    if guards is not None and not isinstance(op, Skip):
        op = _guard_text(op, guards)
    if isinstance(op, Skip):
        return OpOutcome(index=index, type=_op_type(raw), status="skipped", code=op.code, reason=op.reason, raw=raw)
    if isinstance(op, AddOp):
        return _add(state, index, op, raw, near, aliases)
    if isinstance(op, UpdateOp):
        return _update(state, index, op, raw)
    if isinstance(op, MergeOp):
        return _merge(state, index, op, raw)
    return _delete(state, index, op, raw)


def _add(
    state: _State,
    index: int,
    op: AddOp,
    raw: object,
    near: NearFinder | None,
    aliases: Mapping[str, str] | None,
) -> OpOutcome:
    """ADD: a new entry, unless a live one already says it (word for word, a merged wording of it, or near enough:
    then a rediscovery of that one)."""
    section = state.sections.resolve(op.section)
    if state.texts.get(op.text, 0) > 0:
        return OpOutcome(
            index=index,
            type="ADD",
            status="skipped",
            code="duplicate_text",
            entry_id=state.holding(op.text).name,  # found again, word for word: a rediscovery of it
            similarity=1.0,
            section=section,
            new_text=op.text,
            reason=f'ADD: duplicate text "{_preview(op.text)}"',
            raw=raw,
        )
    twin = aliases.get(op.text) if aliases else None
    if twin is not None and twin in state.where:
        reason, similarity = f'ADD: a wording merged into {twin}: "{_preview(op.text)}"', 1.0
    elif (found := near(op.text, state.texts) if near is not None and state.texts else None) is not None:
        twin, similarity = state.holding(found[0]).name, found[1]
        reason = f'ADD: near-duplicate of {twin} (similarity {similarity:.2f}): "{_preview(op.text)}"'
    else:
        twin = None
    if twin is not None:
        return OpOutcome(
            index=index,
            type="ADD",
            status="skipped",
            code="near_duplicate",
            entry_id=twin,
            section=state.where.get(twin),
            new_text=op.text,
            similarity=round(similarity, 4),
            reason=reason,
            raw=raw,
        )
    new_id = state.new_id(section)
    state.append(section, Entry(name=new_id, text=op.text))
    return OpOutcome(
        index=index,
        type="ADD",
        status="applied",
        entry_id=new_id,
        section=section,
        new_text=op.text,
        trigger=op.trigger,
        raw=raw,
    )


def _not_found(index: int, kind: str, target_id: str, raw: object) -> OpOutcome:
    """An UPDATE or DELETE of an entry the playbook does not hold: skipped, saying which."""
    return OpOutcome(
        index=index,
        type=kind,
        status="skipped",
        code="not_found",
        target_ids=[target_id],
        reason=f"{kind}: target_id {target_id!r} not found",
        raw=raw,
    )


def _update(state: _State, index: int, op: UpdateOp, raw: object) -> OpOutcome:
    """UPDATE: the entry's text replaced, its id and counters kept."""
    if op.target_id not in state.where:
        return _not_found(index, "UPDATE", op.target_id, raw)
    old = state.entry(op.target_id)
    state.replace(op.target_id, old.model_copy(update={"text": op.text}))
    return OpOutcome(
        index=index,
        type="UPDATE",
        status="applied",
        entry_id=op.target_id,
        target_ids=[op.target_id],
        section=state.where[op.target_id],
        old_text=old.text,
        new_text=op.text,
        raw=raw,
    )


def _merge(state: _State, index: int, op: MergeOp, raw: object) -> OpOutcome:
    """MERGE: a new entry with the merged text and the sources' counters summed (each source once); the sources
    removed. At least two sources must exist."""
    valid: list[str] = []
    missing: list[str] = []
    for sid in op.source_ids:
        if sid in state.where:
            # A repeated id must not count its counters twice (a merge sums each source once).
            if sid not in valid:
                valid.append(sid)
        else:
            missing.append(sid)
    notes = "; ".join(f"MERGE: source_id {sid!r} not found" for sid in missing)
    if len(valid) < 2:
        reason = "MERGE: fewer than 2 valid source_ids remain after filtering"
        return OpOutcome(
            index=index,
            type="MERGE",
            status="skipped",
            code="not_found" if missing else "too_few_sources",
            target_ids=list(op.source_ids),
            reason=f"{reason} ({notes})" if notes else reason,
            raw=raw,
        )
    section = state.sections.lookup(op.section) or state.where[valid[0]]
    sources = [state.entry(sid) for sid in valid]
    new_id = state.new_id(section)
    state.append(
        section,
        Entry(
            name=new_id,
            text=op.merged_text,
            # Counters stop at MAX_COUNTER, what the store keeps (the model refuses more).
            helpful=min(sum(e.helpful for e in sources), MAX_COUNTER),
            harmful=min(sum(e.harmful for e in sources), MAX_COUNTER),
        ),
    )
    for sid in valid:
        state.remove(sid)
    return OpOutcome(
        index=index,
        type="MERGE",
        status="applied",
        entry_id=new_id,
        target_ids=valid,
        section=section,
        new_text=op.merged_text,
        reason=notes,
        old_text="\n".join(e.text for e in sources),
        raw=raw,
    )


def _delete(state: _State, index: int, op: DeleteOp, raw: object) -> OpOutcome:
    """DELETE: the entry removed."""
    if op.target_id not in state.where:
        return _not_found(index, "DELETE", op.target_id, raw)
    section = state.where[op.target_id]
    removed = state.remove(op.target_id)
    return OpOutcome(
        index=index,
        type="DELETE",
        status="applied",
        entry_id=op.target_id,
        target_ids=[op.target_id],
        section=section,
        old_text=removed.text,
        reason=op.reason,
        raw=raw,
    )


def apply_operations(
    playbook: Playbook,
    operations: Sequence[Any],
    *,
    sections: SectionSet = DEFAULT_SECTIONS,
    limit: int | None = MAX_OPERATIONS,
    guards: Guards | None = None,
    near: NearFinder | None = None,
    aliases: Mapping[str, str] | None = None,
    proposed: int | None = None,
) -> tuple[Playbook, ApplyReport]:
    """Apply curator operations (ADD, UPDATE, MERGE, DELETE) in order.

    Args:
        playbook: the current playbook; never mutated.
        operations: raw operations as the model proposed them (validated here, one by one).
        sections: the playbook's section set.
        limit: how many operations are considered; None only for the seeds'
            legacy `new_key_points` path, which never had a limit.
        guards: when given, texts are cleaned (`clean_entry_text`) and bounded in length.
        near: when given, an ADD that a live entry already says is skipped (`near_duplicate`) and names it.
        aliases: texts merged away into an entry (text -> entry id, `merged_wordings`): an ADD of one of them
            while that entry lives is skipped as a `near_duplicate` of it (similarity 1), not added again.
        proposed: how many operations the model proposed, when its list was already cut to the limit where it
            was parsed (`core.curator.parse_curator`); the report counts and notes the truncation the same way.

    Returns:
        The new playbook and the report. With an empty list, the very same playbook object. If an
        unexpected exception occurs, the caller's playbook unchanged and `report.rolled_back` set.
    """
    size = playbook.size()
    if not operations:
        return playbook, ApplyReport(entries_before=size, entries_after=size)
    total = max(len(operations), proposed or 0)
    report = ApplyReport(proposed=total, entries_before=size)
    considered = operations if limit is None else operations[:limit]
    try:
        state = _State(playbook, sections)
        for index, raw in enumerate(considered):
            report.outcomes.append(_apply_one(state, index, raw, guards, near, aliases))
        if limit is not None and total > limit:
            # One outcome for everything past the limit (the summary's truncation note): an answer of 10,000
            # operations costs what one of 11 does.
            report.truncated_from = total
            report.outcomes.append(
                OpOutcome(
                    index=limit,
                    type=TRUNCATED_TYPE,
                    status="truncated",
                    code="truncated",
                    reason=f"Operations list truncated from {total} to {limit}",
                    raw={"dropped": total - limit},
                )
            )
        result = state.playbook(playbook)
    except Exception as exc:
        return playbook, ApplyReport(
            proposed=total,
            truncated_from=total if limit is not None and total > limit else None,
            rolled_back=f"{type(exc).__name__}: {exc}",
            entries_before=size,
            entries_after=size,
        )
    report.entries_after = result.size()
    return result, report


def _evaluation_fields(item: object) -> tuple[str, str, str] | None:
    """(name, rating, rationale) of an evaluation in either shape, or None when malformed."""
    if isinstance(item, BulletTag):
        return item.name, item.tag, item.rationale
    if not isinstance(item, dict):
        return None
    name = item.get("name")
    rating = item.get("rating", item.get("tag"))
    rationale = item.get("rationale", "")
    if not isinstance(name, str) or not isinstance(rating, str):
        return None
    return name, rating, rationale if isinstance(rationale, str) else str(rationale)


def apply_evaluations(
    playbook: Playbook, evaluations: Sequence[Any], exposed: Collection[str] | None = None
) -> tuple[Playbook, list[EvaluationOutcome]]:
    """Count helpful/harmful verdicts on existing entries.

    Accepts `{name, rating}` (the seeds' evaluations) and `{name, tag, rationale}` (bullet tags).
    helpful or harmful add one to that counter; neutral and unknown values change nothing; names that
    match no entry are reported. With `exposed` (the entries the session's agent had), a verdict on any other
    entry is refused as `unexposed`. Never mutates `playbook`.
    """
    outcomes: list[EvaluationOutcome] = []
    deltas: dict[str, list[int]] = {}
    if not evaluations:
        return playbook, outcomes
    index = _indexed(playbook)
    ids = index.where
    for item in evaluations:
        fields = _evaluation_fields(item)
        if fields is None:
            outcomes.append(EvaluationOutcome(name=str(item)[:80], rating="", status="invalid"))
            continue
        name, rating, rationale = fields
        verdict = rating.strip().casefold()
        if name not in ids:
            outcomes.append(EvaluationOutcome(name=name, rating=rating, status="unknown_name", rationale=rationale))
            continue
        if exposed is not None and name not in exposed:
            outcomes.append(EvaluationOutcome(name=name, rating=rating, status="unexposed", rationale=rationale))
            continue
        if verdict not in ("helpful", "harmful"):
            outcomes.append(EvaluationOutcome(name=name, rating=rating, status="ignored", rationale=rationale))
            continue
        delta = deltas.setdefault(name, [0, 0])
        delta[0 if verdict == "helpful" else 1] += 1
        outcomes.append(EvaluationOutcome(name=name, rating=verdict, status="applied", rationale=rationale))
    if not deltas:
        return playbook, outcomes
    new_sections = dict(playbook.sections)  # the sections without a tagged entry keep their very list
    doomed = index.doomed - deltas.keys()

    def counted(e: Entry) -> Entry:
        helpful, harmful = (
            min(n + d, MAX_COUNTER) for n, d in zip((e.helpful, e.harmful), deltas[e.name], strict=True)
        )
        new = e.model_copy(update={"helpful": helpful, "harmful": harmful})
        if should_prune(new):
            doomed.add(new.name)
        return new

    for section in {ids[name] for name in deltas}:
        new_sections[section] = [counted(e) if e.name in deltas else e for e in playbook.sections[section]]
    result = playbook.model_copy(update={"sections": new_sections})
    _remember(_Index(result.sections, index.where, index.texts, index.numbers, doomed, index.holders))  # same texts
    return result, outcomes


def prune(playbook: Playbook, reported: Mapping[str, int] | None = None) -> tuple[Playbook, list[PruneRecord]]:
    """Remove every entry with harmful >= 3 and harmful > helpful, not counting agents' reports (`reported`, by
    entry id) toward the 3 (`should_prune`); never mutates `playbook`."""
    if not _indexed(playbook).doomed:  # known from the index carried along: no pass over the entries
        return playbook, []
    reported = reported or {}
    pruned = [
        PruneRecord(name=e.name, section=s, text=e.text, helpful=e.helpful, harmful=e.harmful)
        for s, items in playbook.sections.items()
        for e in items
        if should_prune(e, reported.get(e.name, 0))
    ]
    if not pruned:
        return playbook, []
    gone = {p.name for p in pruned}
    new_sections = {s: [e for e in items if e.name not in gone] for s, items in playbook.sections.items()}
    return playbook.model_copy(update={"sections": new_sections}), pruned


def apply_session(
    playbook: Playbook,
    reflector: ReflectorOutput,
    curator: CuratorOutput,
    *,
    sections: SectionSet = DEFAULT_SECTIONS,
    guards: Guards | None = None,
    near: NearFinder | None = None,
    aliases: Mapping[str, str] | None = None,
    exposed: Collection[str] | None = None,
    reported: Mapping[str, int] | None = None,
) -> tuple[Playbook, ApplyReport]:
    """One session's full apply step: bullet tags, then operations, then pruning (`reported`: the harmful tags
    that are agents' own reports, by entry id, which alone never prune: `should_prune`).

    Tags come first because the reflector judged the entries of the frozen playbook; applying them
    before a MERGE means the merged entry inherits those verdicts in its summed counters. `exposed`: the
    entries the session's agent had; tags on others are refused (`unexposed`). None: no restriction (the hook
    scripts' API, which runs inside the session that had the playbook).

    With `guards`, a session that would remove too much of the playbook is held: the report says why
    (`held`) and the playbook returned is the one given, unchanged.
    """
    before = playbook.size()
    tagged, evaluations = apply_evaluations(playbook, reflector.bullet_tags, exposed)
    changed, report = apply_operations(
        tagged,
        curator.operations,
        sections=sections,
        guards=guards,
        near=near,
        aliases=aliases,
        proposed=curator.truncated_from,
    )
    final, pruned = prune(changed, reports_carried(reported, applied_merges(report)) if reported else None)
    report = report.model_copy(
        update={
            "evaluations": evaluations,
            "pruned": pruned,
            "entries_before": before,
            "entries_after": final.size(),
        }
    )
    if guards is not None:
        # Every entry that goes is deleted, merged away or pruned: when that many could not pass the limit, the
        # exact count (a pass over both playbooks) is not needed.
        most = len(pruned) + sum(
            1 if o.type == "DELETE" else len(o.target_ids) - 1
            for o in report.outcomes
            if o.status == "applied" and o.type in ("DELETE", "MERGE")
        )
        limit = max(guards.max_removed, guards.max_removed_share * before)
        removed = removed_entries(playbook, final, report) if most > limit else 0
        if removed > guards.max_removed and removed > guards.max_removed_share * before:
            held = (
                f"mass_change: this session would remove {removed} of {before} entries (limit: more than"
                f" {guards.max_removed} and more than {guards.max_removed_share:.0%})"
            )
            return playbook, report.model_copy(update={"held": held})
    return final, report


def removed_entries(before: Playbook, after: Playbook, report: ApplyReport) -> int:
    """How many live entries a session took away: deleted, pruned, or merged into fewer (a MERGE of n is n-1)."""
    kept = {e.name for items in after.sections.values() for e in items}
    gone = sum(1 for items in before.sections.values() for e in items if e.name not in kept)
    return gone - report.applied("MERGE")
