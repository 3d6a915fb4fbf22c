"""Review before publishing: pending changes and held entries, and the decisions on both (`playbook review`).

The changes are those since the last approved version of a playbook that requires review; the held entries
are those the screen holds, and those `playbook revalidate` finds outdated (here, beside the other commands that
change what the hooks serve and write their snapshot again)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel

from core.errors import ConfigError
from core.guards import bound_lesson, guards_of
from core.operations import spared_by_reports
from core.playbook_screen import Screened
from core.redact import mask_playbook
from core.review import ReviewChange, review_changes, undo_changes
from core.store.citations import record_checks
from core.store.exposure import reported_harm
from core.store.guards import entry_lessons, set_hard
from core.store.held_ids import held_ids
from core.store.published import approved_version, record_review
from core.store.registry import require_playbook
from core.store.screening import release_holds
from core.store.versions import current_version, load_version, write_version
from flows.context import Database
from flows.delivery.exports import ExportRules, exported_version, screened, without_held_ids
from flows.delivery.hook import refreshes_snapshot
from flows.delivery.sources import Source, outdated, sources_of
from flows.workspace import Workspace

__all__ = [
    "Decide",
    "Decision",
    "Hardened",
    "ReviewOutcome",
    "harden",
    "held_entries",
    "pending_review",
    "release_held",
    "revalidate",
    "review",
]


class ReviewOutcome(BaseModel):
    """What a review saw and did: the approved and newest versions, the pending changes and held entries, and
    (once decided) the version now approved and the changes rejected (undone in it)."""

    required: bool
    approved_version: int
    newest_version: int
    pending: list[ReviewChange]
    held: list[Screened]
    outdated: dict[str, str] = {}  # entry id -> why what it rests on no longer holds (held from every export)
    # Entries held by their id (an older version stored one playbook never makes): only JSON shows them, escaped.
    held_ids: list[str] = []
    # Entries only agents' reports would prune (`core.operations.should_prune`): kept until a person retires them.
    reported: list[str] = []
    decided: bool = False
    version: int | None = None
    approved: int = 0
    rejected: list[str] = []


# Given the pending changes, the numbers of those rejected; None: decide nothing now (only list them).
Decide = Callable[[list[ReviewChange]], set[int] | None]


class Decision(BaseModel):
    """A decision given by flags: `--reject 1,3,mis-002` (change numbers or entry ids), `--reject-all`, and
    `--approve-all` for every change not rejected."""

    approve_all: bool = False
    reject: str | None = None
    reject_all: bool = False

    def rejected(self, changes: list[ReviewChange]) -> set[int]:
        """The numbers of the rejected changes.

        Raises:
            ConfigError: a part of `reject` names no pending change, or some change is left undecided.
        """
        if self.reject_all:
            return {c.number for c in changes}
        by_name = {c.name: c.number for c in changes}
        picked: set[int] = set()
        for part in (p.strip() for p in (self.reject or "").split(",") if p.strip()):
            if part.isdigit() and 1 <= int(part) <= len(changes):
                picked.add(int(part))
            elif part in by_name:
                picked.add(by_name[part])
            else:
                raise ConfigError(f"`{part}` is not a pending change (numbers 1-{len(changes)} or their entry ids).")
        if not self.approve_all and len(picked) < len(changes):
            raise ConfigError(
                f"{len(changes) - len(picked)} change(s) are neither approved nor rejected; add --approve-all to"
                " approve the rest."
            )
        return picked


@refreshes_snapshot
def review(ws: Workspace, playbook: str, decide: Decide | None = None, reviewer: str | None = None) -> ReviewOutcome:
    """List what awaits review, and with `decide`, apply the decision: approve every change not rejected; a
    rejected change becomes a new version that undoes it (history keeps both).

    Raises:
        ConfigError: the playbook is neither configured nor created.
    """
    db = ws.database(playbook)
    rules = ws.rules(playbook)
    with db.write("playbook review", create=False) as con:
        if playbook not in ws.playbooks:  # configured playbooks are created on first use
            require_playbook(con, playbook)
        base, newest = approved_version(con, playbook), current_version(con, playbook)
        approved, current = load_version(con, playbook, base), load_version(con, playbook, newest)
        # An entry held by its id is not shown as a change (nor undone by a rejection: `undo_changes` goes by name).
        shown, _ = without_held_ids(con, playbook, current)
        changes = review_changes(without_held_ids(con, playbook, approved)[0], shown)
        exported = mask_playbook(load_version(con, playbook, exported_version(con, rules)), rules.redactor)
        held = screened(con, rules, exported)[1]
        outcome = ReviewOutcome(
            required=rules.review_required,
            approved_version=base,
            newest_version=newest,
            pending=changes,
            held=held,
            outdated=outdated(con, playbook),
            held_ids=sorted(held_ids(con, playbook)),
            reported=spared_by_reports(shown, reported_harm(con, playbook)),
        )
        rejected = decide(changes) if (decide is not None and changes) else None
        if rejected is None:
            return outcome
        drop = [c for c in changes if c.number in rejected]
        version = newest
        if drop:
            version = write_version(
                con,
                playbook,
                undo_changes(current, approved, drop),
                source="review",
                note=f"review: rejected {', '.join(c.name for c in drop)}",
                expected_parent=newest,
            )
        record_review(con, playbook, version, len(changes) - len(drop), len(drop), reviewer)
    return outcome.model_copy(
        update={
            "decided": True,
            "version": version,
            "approved": len(changes) - len(drop),
            "rejected": [c.name for c in drop],
        }
    )


def held_entries(ws: Workspace, playbook: str) -> list[Screened]:
    """The entries of `playbook`'s exported version that the screen holds, with the rules that hold them."""
    rules = ws.rules(playbook)
    with ws.database(playbook).open(create=False) as con:
        model = mask_playbook(load_version(con, playbook, exported_version(con, rules)), rules.redactor)
        return screened(con, rules, model)[1]


@refreshes_snapshot
def release_held(ws: Workspace, playbook: str, names: Sequence[str], by: str | None) -> list[Screened]:
    """Release held entries for export, as they read now (a later change of the text is screened again).

    Raises:
        ConfigError: a name is not a held entry (nothing is released then).
    """
    db = ws.database(playbook)
    rules = ws.rules(playbook)
    with db.write("playbook review", create=False) as con:
        model = mask_playbook(load_version(con, playbook, exported_version(con, rules)), rules.redactor)
        held = {h.name: h for h in screened(con, rules, model)[1]}
        unknown = [n for n in names if n not in held]
        if unknown:
            raise ConfigError(
                f"`{unknown[0]}` is not held by the screen in playbook `{playbook}`; `playbook review` lists the held"
                " entries. Nothing was released."
            )
        chosen = [held[n] for n in names]
        release_holds(con, playbook, chosen, by)
        return chosen


@refreshes_snapshot
def revalidate(ws: Workspace, playbook: str) -> list[Source]:
    """`playbook revalidate`: check every entry's citations now, record each check (with the commit of a git
    repository), and return them, outdated first. The hooks' snapshot is written again: an entry found outdated
    is held from the hooks and the MCP server now, not from the next publish or nightly on."""
    with ws.database(playbook).write("playbook revalidate", create=False) as con:
        require_playbook(con, playbook)
        texts = {e.name: e.text for _, e in load_version(con, playbook).entries()}
        found = [s.model_copy(update={"text": texts.get(s.entry_id, "")}) for s in sources_of(con, playbook).values()]
        record_checks(con, playbook, [(s.entry_id, s.root, s.commit, s.reason) for s in found])
    return sorted(found, key=lambda s: ({"held": 0, "ok": 1}.get(s.status, 2), s.entry_id))


def pending_review(db: Database, rules: ExportRules) -> list[ReviewChange]:
    """The changes awaiting `playbook review` (none when the playbook does not require review)."""
    if not rules.review_required:
        return []
    with db.open() as con:
        approved = load_version(con, rules.playbook, approved_version(con, rules.playbook))
        current = load_version(con, rules.playbook)
        return review_changes(
            without_held_ids(con, rules.playbook, approved)[0], without_held_ids(con, rules.playbook, current)[0]
        )


class Hardened(BaseModel):
    """An entry whose guards a person made hard (they refuse the call) or soft again (they add the lesson)."""

    name: str
    text: str
    hard: bool
    refuses: bool  # whether its guard refuses anything (only the failing form of a command is refused)


@refreshes_snapshot
def harden(ws: Workspace, playbook: str, names: Sequence[str], hard: bool, by: str | None) -> list[Hardened]:
    """Make the guards of entries hard rules (`hard`: a call they match is refused, with the lesson as the reason)
    or soft again (the lesson is added to the agent's context); the hooks' snapshot is written again.

    Raises:
        ConfigError: a name is not a live entry with a guard (nothing is changed then).
    """
    with ws.database(playbook).write("playbook review", create=False) as con:
        live = {e.name: e.text for _, e in load_version(con, playbook).entries()}
        lessons = entry_lessons(con, playbook)
        found: list[Hardened] = []
        for name in names:
            lesson = bound_lesson(lessons.get(name), live.get(name, ""))
            guards = guards_of(lesson, playbook=playbook, entry=name, text=live[name], hard=True) if lesson else []
            if not guards:
                raise ConfigError(
                    f"`{name}` is not an entry of playbook `{playbook}` with a guard (a command lesson the rules"
                    " miner wrote); `playbook hook guards` lists them. Nothing was changed."
                )
            refuses = any(g.refusable for g in guards)
            found.append(Hardened(name=name, text=guards[0].text, hard=hard, refuses=refuses))
        set_hard(con, playbook, list(names), hard, by)
    return found
