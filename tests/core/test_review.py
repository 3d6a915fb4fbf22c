"""Review invariants: rejecting every pending change gives back the approved texts and sections; approving
every change leaves the newest version as it is; a change is listed once."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.models import Entry, Playbook
from core.review import review_changes, undo_changes
from core.sections import DEFAULT_SECTIONS
from tests.profiles import examples

SECTIONS = list(DEFAULT_SECTIONS.names)[:3]


@st.composite
def playbooks(draw: st.DrawFn) -> Playbook:
    names = draw(st.lists(st.sampled_from([f"e-{i}" for i in range(8)]), unique=True, max_size=8))
    sections: dict[str, list[Entry]] = {s: [] for s in DEFAULT_SECTIONS.names}
    for name in names:
        text = draw(st.sampled_from(["alpha", "beta", "gamma"]))
        sections[draw(st.sampled_from(SECTIONS))].append(
            Entry(name=name, text=text, helpful=draw(st.integers(0, 3)), harmful=draw(st.integers(0, 3)))
        )
    return Playbook(sections=sections)


def shape(playbook: Playbook) -> set[tuple[str, str, str]]:
    return {(s, e.name, e.text) for s, e in playbook.entries()}


@settings(max_examples=examples(300))
@given(approved=playbooks(), current=playbooks())
def test_rejecting_everything_restores_the_approved_playbook(approved: Playbook, current: Playbook) -> None:
    changes = review_changes(approved, current)
    assert len({c.name for c in changes}) == len(changes)
    assert shape(undo_changes(current, approved, changes)) == shape(approved)
    assert shape(undo_changes(current, approved, [])) == shape(current)
    assert review_changes(current, current) == []
