"""The rest of the seeds' dict API: ids, load/save and formatting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core import compat
from core.errors import PlaybookFileError


def test_section_slugs_in_canonical_order() -> None:
    assert list(compat.SECTION_SLUGS.items()) == [
        ("PATTERNS & APPROACHES", "pat"),
        ("MISTAKES TO AVOID", "mis"),
        ("USER PREFERENCES", "pref"),
        ("PROJECT CONTEXT", "ctx"),
        ("OTHERS", "oth"),
    ]


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        ([], "pat-001"),
        (["pat-001", "pat-003"], "pat-004"),
        (["pat-999"], "pat-1000"),
        (["pat-1000", "pat-002"], "pat-1001"),
        (["kpt_001", "oth-005", "pat-x"], "pat-001"),
    ],
)
def test_generate_keypoint_name(names: list[str], expected: str) -> None:
    assert compat.generate_keypoint_name([{"name": n} for n in names], "pat") == expected


def test_load_missing_file_returns_default(tmp_path: Path) -> None:
    data = compat.load_playbook(tmp_path / "nope.json")
    assert data == {"version": "1.0", "last_updated": None, "sections": {s: [] for s in compat.SECTION_SLUGS}}


def test_load_fills_missing_sections_and_resolves_case(tmp_path: Path) -> None:
    path = tmp_path / "playbook.json"
    path.write_text(
        json.dumps(
            {
                "version": "1.0",
                "sections": {"patterns & approaches": [{"name": "pat-001", "text": "A", "helpful": 1, "harmful": 0}]},
            }
        )
    )
    data = compat.load_playbook(path)
    assert list(data["sections"]) == list(compat.SECTION_SLUGS)
    assert data["sections"]["PATTERNS & APPROACHES"][0]["name"] == "pat-001"


def test_load_migrates_legacy_key_points(tmp_path: Path) -> None:
    path = tmp_path / "playbook.json"
    path.write_text(
        json.dumps(
            {
                "version": "1.0",
                "key_points": [
                    "plain string",
                    {"name": "kpt_007", "text": "scored up", "score": 2},
                    {"text": "scored down", "score": -3},
                ],
            }
        )
    )
    data = compat.load_playbook(path)
    assert "key_points" not in data
    assert data["sections"]["OTHERS"] == [
        {"name": "kpt_001", "text": "plain string", "helpful": 0, "harmful": 0},
        {"name": "kpt_007", "text": "scored up", "helpful": 2, "harmful": 0},
        {"name": "kpt_003", "text": "scored down", "helpful": 0, "harmful": 3},
    ]


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "[1, 2]",
        '{"sections": []}',
        '{"sections": {"OTHERS": [{"name": "x", "text": "y", "helpful": -1}]}}',
    ],
)
def test_load_corrupt_file_raises_and_keeps_file(tmp_path: Path, content: str) -> None:
    path = tmp_path / "playbook.json"
    path.write_text(content)
    with pytest.raises(PlaybookFileError) as err:
        compat.load_playbook(path)
    assert f"`{path}`" in str(err.value)
    assert path.read_text() == content


def test_save_roundtrip_sets_last_updated_and_drops_key_points(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "playbook.json"
    data = compat.load_playbook(tmp_path / "none.json")
    data["key_points"] = ["stale"]
    data["sections"]["OTHERS"].append({"name": "oth-001", "text": "x", "helpful": 1, "harmful": 0})
    compat.save_playbook(data, path)
    saved = json.loads(path.read_text())
    assert "key_points" not in saved and saved["last_updated"]
    assert compat.load_playbook(path)["sections"] == data["sections"]
    assert [p.name for p in path.parent.iterdir()] == ["playbook.json"]  # no temp file left


def test_save_refuses_playbook_without_sections(tmp_path: Path) -> None:
    path = tmp_path / "playbook.json"
    path.write_text("{}")
    with pytest.raises(PlaybookFileError, match="no `sections`"):
        compat.save_playbook({"version": "1.0"}, path)
    assert path.read_text() == "{}"


def test_format_playbook() -> None:
    data = compat.load_playbook(Path("/nonexistent"))
    assert compat.format_playbook(data) == ""
    data["sections"]["PATTERNS & APPROACHES"] = [{"name": "pat-001", "text": "use types", "helpful": 5, "harmful": 1}]
    data["sections"]["OTHERS"] = [{"name": "oth-001", "text": "misc", "helpful": 0, "harmful": 0}]
    assert compat.format_playbook(data) == (
        "## PATTERNS & APPROACHES\n[pat-001] helpful=5 harmful=1 :: use types\n\n"
        "## OTHERS\n[oth-001] helpful=0 harmful=0 :: misc"
    )


def test_legacy_key_points_never_share_a_name(tmp_path: Path) -> None:
    path = tmp_path / "playbook.json"
    path.write_text(
        json.dumps(
            {"key_points": ["plain string", {"name": "kpt_001", "text": "named"}, {"name": "kpt_001", "text": "twin"}]}
        )
    )
    names = [e["name"] for e in compat.load_playbook(path)["sections"]["OTHERS"]]
    assert len(names) == len(set(names)) == 3 and "kpt_001" in names
    data = compat.load_playbook(path)
    assert [e["text"] for e in data["sections"]["OTHERS"] if e["name"] == "kpt_001"] == ["named"]


def test_update_raises_nothing_for_an_entry_the_contract_cannot_hold() -> None:
    odd = {"version": "1.0", "sections": {"OTHERS": [{"name": "o-1", "text": "", "helpful": -2, "harmful": 0}]}}
    for result in ({}, {"operations": []}, {"evaluations": [{"name": "o-1", "rating": "helpful"}]}):
        out = compat.update_playbook_data(odd, result)
        assert out == odd and out is not odd  # unchanged, and the caller's dict is not the one returned
