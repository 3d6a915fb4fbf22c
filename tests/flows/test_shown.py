"""What each session of an epoch was shown: the entries its agent had, looked up by id in the epoch's frozen
playbook, are exactly those a filter over the whole playbook keeps, in its order; the ids a session's answers may
name are the playbook's and its agent's, as one set."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from core.models import Entry, Playbook
from flows.run.shown import exposed_playbooks, known_ids

SECTIONS = ["STRATEGIES", "COMMANDS", "PITFALLS", "OTHERS"]
NAMES = st.sampled_from([f"e-{i:03d}" for i in range(40)] + ["ge-001", "other-9"])


@st.composite
def playbooks(draw: Any, unique: bool = True) -> Playbook:
    """A playbook of up to 40 entries over four sections (some empty), ids unique unless told."""
    names = draw(st.lists(NAMES, max_size=40, unique=unique))
    where = draw(st.lists(st.sampled_from(SECTIONS), min_size=len(names), max_size=len(names)))
    sections: dict[str, list[Entry]] = {s: [] for s in SECTIONS}
    for i, (name, section) in enumerate(zip(names, where, strict=True)):
        sections[section].append(Entry(name=name, text=f"lesson {i}", helpful=i % 3))
    return Playbook(sections=sections)


def _filtered(frozen: Playbook, had: set[str]) -> Playbook:
    """What each session was shown, by the definition: a pass over the whole playbook."""
    return frozen.model_copy(
        update={"sections": {s: [e for e in v if e.name in had] for s, v in frozen.sections.items()}}
    )


# The callers pass the exposure they read (`names`), so no database or run is needed: None stands for both.
@settings(max_examples=200, deadline=None)
@given(st.data(), st.booleans())
def test_each_session_is_shown_what_a_filter_over_the_whole_playbook_keeps(data: Any, unique: bool) -> None:
    frozen = data.draw(playbooks(unique=unique))
    had = {f"s{i}": data.draw(st.sets(NAMES, max_size=12)) for i in range(3)}
    got = exposed_playbooks(None, None, frozen, list(had), had)  # type: ignore[arg-type]
    for sid, names in had.items():
        want = _filtered(frozen, names)
        assert got[sid] == want
        assert list(got[sid].sections) == list(frozen.sections)  # every section, empty ones too, in order
    # A second epoch's playbook (another object) is read afresh, not from the first's.
    later = data.draw(playbooks(unique=unique))
    again = exposed_playbooks(None, None, later, list(had), had)  # type: ignore[arg-type]
    assert all(again[sid] == _filtered(later, names) for sid, names in had.items())


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_the_ids_a_session_may_name_are_the_playbooks_and_its_agents(data: Any) -> None:
    frozen = data.draw(playbooks())
    had = {f"s{i}": data.draw(st.sets(NAMES, max_size=12)) for i in range(3)}
    got = known_ids(None, None, frozen, list(had), had)  # type: ignore[arg-type]
    ids = {e.name for _, e in frozen.entries()}
    for sid, names in had.items():
        want = ids | names
        assert set(got[sid]) == want and len(got[sid]) == len(want)
        for name in [*want, "pat-001", "e-999"]:
            assert (name in got[sid]) == (name in want)
