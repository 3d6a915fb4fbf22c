"""Section sets: canonical defaults, resolution, and sections.yaml validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import SectionsError
from core.models import Playbook
from core.operations import apply_operations, empty_playbook
from core.sections import DEFAULT_SECTIONS, load_sections_yaml


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("USER PREFERENCES", "USER PREFERENCES"),
        ("  project context ", "PROJECT CONTEXT"),
        ("Misc", "OTHERS"),
        ("", "OTHERS"),
        (None, "OTHERS"),
        (7, "OTHERS"),
    ],
)
def test_resolve(raw: object, expected: str) -> None:
    assert DEFAULT_SECTIONS.resolve(raw) == expected


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sections.yaml"
    path.write_text(text)
    return path


def test_custom_sections_drive_ids(tmp_path: Path) -> None:
    sections = load_sections_yaml(
        _write(
            tmp_path,
            """
sections:
  - {name: SQL, slug: sql, description: Query lessons}
  - {name: MISC, slug: misc}
fallback: MISC
""",
        )
    )
    result, report = apply_operations(
        empty_playbook(sections),
        [
            {"type": "ADD", "text": "use CTEs", "section": "sql"},
            {"type": "ADD", "text": "anything", "section": "OTHERS"},
        ],
        sections=sections,
    )
    assert isinstance(result, Playbook)
    assert [(s, e.name) for s, e in result.entries()] == [("SQL", "sql-001"), ("MISC", "misc-001")]
    assert report.applied("ADD") == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "sections:\n  - {name: A, slug: a}\n  - {name: a, slug: b}\nfallback: A\n",
            "Section name `a` is declared twice",
        ),
        (
            "sections:\n  - {name: A, slug: a}\n  - {name: B, slug: a}\nfallback: A\n",
            "Slug `a` is used by two sections",
        ),
        ("sections:\n  - {name: A, slug: a}\n", "Fallback section `OTHERS` is not declared"),
        (
            "sections:\n  - {name: A, slug: 'A B'}\nfallback: A\n",
            "Slug `A B` of section `A` is not a lowercase identifier",
        ),
        ("sections: {}\n", "must hold a `sections:` list"),
        ("sections: [\n", "is not valid YAML"),
        ("sections:\n  - {slug: a}\n", "has an invalid section"),
    ],
)
def test_invalid_sections_file_named(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(SectionsError) as err:
        load_sections_yaml(path)
    assert message in str(err.value)
    assert str(path) in str(err.value)


def test_unreadable_sections_file(tmp_path: Path) -> None:
    with pytest.raises(SectionsError, match="Cannot read sections file"):
        load_sections_yaml(tmp_path / "missing.yaml")
