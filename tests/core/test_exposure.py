"""Which entries a starting session is given: another project's facts never, everything else as before."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from core.exposure import Snapshot, SnapshotPlaybook, about_projects
from core.hooks import start_context
from core.models import Entry

NAMES = st.sampled_from(["api", "web", "claude-code-log", "spotter-fum", "x"])
TEXTS = st.one_of(
    st.builds(lambda p, rest: f"In {p}: {rest}", NAMES, st.text(min_size=1, max_size=20).filter(str.strip)),
    st.text(min_size=1, max_size=30).filter(str.strip),
)


@given(st.lists(TEXTS, min_size=1, max_size=12), st.sets(NAMES, max_size=4), NAMES)
def test_a_session_is_never_given_another_projects_entry(texts: list[str], known: set[str], here: str) -> None:
    entries = [("OTHERS", Entry(name=f"oth-{i:03d}", text=t)) for i, t in enumerate(texts)]
    bound = about_projects(entries, known)
    for _, entry in entries:
        project = bound.get(entry.name)
        if project is not None:
            assert project in known and entry.text.startswith(f"In {project}: ")
        else:
            assert not any(entry.text.startswith(f"In {p}: ") for p in known)
    snapshot = Snapshot(
        written_at=datetime(2026, 1, 1, tzinfo=UTC),
        playbooks=[SnapshotPlaybook(name="default", version=1, entries=entries, projects=bound)],
    )
    _text, (got,) = start_context(snapshot.model_dump(mode="json"), "s-1", f"/home/u/src/{here}")
    assert got.held_out == []
    assert got.shown == [e.name for _, e in entries if bound.get(e.name, here) == here]
