"""Review before publishing: what changed since the approved version, and undoing what a reviewer rejects.
The changes are those between the last approved version and the newest one. Counter-only changes are not
shown: they do not change what an agent reads."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from core.models import Entry, Playbook

__all__ = ["ReviewChange", "review_changes", "undo_changes"]


class ReviewChange(BaseModel):
    """One entry's change awaiting review, numbered for the command line."""

    number: int
    kind: Literal["added", "removed", "changed"]
    name: str
    section: str
    before: str | None = None  # the approved text (and section, when it moved)
    after: str | None = None


def review_changes(approved: Playbook, current: Playbook) -> list[ReviewChange]:
    """Entries added, removed, or with a new text or section since `approved`, in playbook order."""
    old = {e.name: (s, e) for s, e in approved.entries()}
    new = {e.name: (s, e) for s, e in current.entries()}
    found: list[tuple[str, str, str, str | None, str | None]] = []
    for name, (section, entry) in new.items():
        if name not in old:
            found.append(("added", name, section, None, entry.text))
        elif (old[name][0], old[name][1].text) != (section, entry.text):
            before = old[name][1].text if old[name][0] == section else f"[{old[name][0]}] {old[name][1].text}"
            found.append(("changed", name, section, before, entry.text))
    found += [("removed", n, s, e.text, None) for n, (s, e) in old.items() if n not in new]
    return [
        ReviewChange(number=i, kind=kind, name=name, section=section, before=before, after=after)  # type: ignore[arg-type]
        for i, (kind, name, section, before, after) in enumerate(found, 1)
    ]


def undo_changes(current: Playbook, approved: Playbook, rejected: list[ReviewChange]) -> Playbook:
    """`current` with each rejected change undone: an added entry taken out, a removed one put back as it was
    approved, a changed one given back its approved text and section (its counters stay current)."""
    old = {e.name: (s, e) for s, e in approved.entries()}
    undo = {c.name: c for c in rejected}
    sections: dict[str, list[Entry]] = {name: [] for name in current.sections}
    for section, entry in current.entries():
        change = undo.get(entry.name)
        if change is None:
            sections[section].append(entry)
        elif change.kind == "changed":
            was_section, was = old[entry.name]
            sections.setdefault(was_section, []).append(entry.model_copy(update={"text": was.text}))
    for change in rejected:
        if change.kind == "removed":
            was_section, was = old[change.name]
            sections.setdefault(was_section, []).append(was)
    return current.model_copy(update={"sections": sections})
