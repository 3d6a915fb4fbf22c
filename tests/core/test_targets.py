"""Export targets, byte for byte: every agent's file rendered from one playbook, into an empty place and
beside hand-written text; the golden files in tests/data/targets were read line by line when written."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import PlaybookFileError
from core.models import Entry, Playbook
from core.targets import TARGET_FILES, ExportTarget, render_target

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "targets"
PLAYBOOK = Playbook(
    sections={
        "MISTAKES TO AVOID": [Entry(name="mis-001", text="Run tests with `python -m pytest`.", helpful=3)],
        "USER PREFERENCES": [Entry(name="use-001", text="Log with `logging`, never `print`.")],
    }
)
HAND_WRITTEN = "# Team notes\n\nKeep this line.\n"


@pytest.mark.parametrize("kind", sorted(TARGET_FILES))
def test_every_target_is_rendered_byte_for_byte(kind: str) -> None:
    target = ExportTarget(kind=kind, repo=Path("/repo"))  # type: ignore[arg-type]
    assert target.file() == Path("/repo") / TARGET_FILES[kind]
    fresh = render_target(target, "api", PLAYBOOK, None, note="1 more entry left out to fit the budget.")
    assert fresh.encode() == (GOLDEN / f"{kind}.txt").read_bytes()
    again = render_target(target, "api", PLAYBOOK, fresh, note="1 more entry left out to fit the budget.")
    assert again == fresh  # publishing twice changes nothing
    if target.owned:
        with pytest.raises(PlaybookFileError, match="exists and was not written by playbook"):
            render_target(target, "api", PLAYBOOK, HAND_WRITTEN)
    else:
        beside = render_target(target, "api", PLAYBOOK, HAND_WRITTEN)
        assert beside.startswith(HAND_WRITTEN + "\n<!-- playbook:begin")
        assert beside.endswith("<!-- playbook:end -->\n")


def test_a_target_names_exactly_one_place() -> None:
    with pytest.raises(ValueError, match="needs exactly one of `path` or `repo`"):
        ExportTarget(kind="cursor")
    with pytest.raises(ValueError, match="needs exactly one"):
        ExportTarget(kind="cursor", path=Path("a"), repo=Path("b"))
