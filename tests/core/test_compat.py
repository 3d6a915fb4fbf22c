"""The rest of the seeds' dict API: ids, load/save and formatting."""

from __future__ import annotations

import json
import logging
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
    with pytest.raises(AssertionError):  # what the hook scripts raise there (they assert)
        compat.save_playbook({"version": "1.0"}, path)
    assert path.read_text() == "{}"


def test_format_playbook() -> None:
    data = compat.load_playbook(Path("/nonexistent"))
    assert compat.format_playbook(data) == ""
    data["sections"]["PATTERNS & APPROACHES"] = [{"name": "pat-001", "text": "use types", "helpful": 5, "harmful": 1}]
    data["sections"]["OTHERS"] = [{"name": "oth-001", "text": "misc", "helpful": 0, "harmful": 0}]
    text = compat.format_playbook(data)
    # The hook scripts' playbook.txt: a text that explains ids and counters, then the sections.
    assert text.startswith("# Playbook") and "`helpful=H harmful=X`" in text and "`[id]`" in text
    assert text.endswith(
        "## PATTERNS & APPROACHES\n[pat-001] helpful=5 harmful=1 :: use types\n\n"
        "## OTHERS\n[oth-001] helpful=0 harmful=0 :: misc\n"
    )
    assert "{key_points}" not in text


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


def test_update_raises_nothing_for_an_entry_the_contract_cannot_hold(caplog: pytest.LogCaptureFixture) -> None:
    """Seed 000: update_playbook_data never raises; a negative counter is repaired to 0, an entry without text is
    set aside and put back untouched, each with a logged reason; the rest is updated as usual."""
    blank = {"name": "o-1", "text": "", "helpful": -2, "harmful": 0}
    odd = {
        "version": "1.0",
        "sections": {
            "OTHERS": [blank, "a bare string"],
            "PATTERNS & APPROACHES": [{"name": "pat-001", "text": "use types", "helpful": -3, "harmful": "x"}],
        },
    }
    before = json.dumps(odd)
    with caplog.at_level(logging.WARNING, logger="playbook"):
        out = compat.update_playbook_data(
            odd,
            {
                "evaluations": [{"name": "pat-001", "rating": "helpful"}],
                "operations": [{"type": "ADD", "text": "Pin the toolchain.", "section": "OTHERS"}],
            },
        )
    assert json.dumps(odd) == before  # the caller's dict is untouched
    assert out["sections"]["PATTERNS & APPROACHES"] == [
        {"name": "pat-001", "text": "use types", "helpful": 1, "harmful": 0}
    ]
    assert [e["text"] if isinstance(e, dict) else e for e in out["sections"]["OTHERS"]] == [
        "Pin the toolchain.",
        "",
        "a bare string",
    ]
    assert "helpful=-3 repaired to 0" in caplog.text and "harmful='x' repaired to 0" in caplog.text
    assert "'o-1' in OTHERS has no id or no text; left as it is" in caplog.text
    for result in ({}, {"operations": []}, {"new_key_points": ["legacy lesson"]}, {"evaluations": "junk"}):
        again = compat.update_playbook_data(odd, result)
        assert blank in again["sections"]["OTHERS"]  # never lost, whatever the result holds


def test_a_seeds_file_is_migrated_to_contract_1_and_says_so(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "playbook.json"
    entry = {"name": "pat-001", "text": "use types", "helpful": 2, "harmful": 0}
    path.write_text(json.dumps({"version": "1.0", "sections": {"PATTERNS & APPROACHES": [entry]}}))
    with caplog.at_level(logging.INFO, logger="playbook"):
        data = compat.load_playbook(path)
    assert data["contract_version"] == 1 and data["sections"]["PATTERNS & APPROACHES"] == [entry]
    assert "no contract_version: migrated" in caplog.text and str(path) in caplog.text
    compat.save_playbook(data, path)
    assert path.read_text().startswith('{\n  "contract_version": 1,')  # written first, every time
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="playbook"):
        assert compat.load_playbook(path)["sections"] == data["sections"]
    assert "migrated" not in caplog.text  # a file of the current contract needs no migration


@pytest.mark.parametrize("version", [7, 0, "1", 1.5, None, True])
def test_an_unknown_contract_version_is_refused(tmp_path: Path, version: object) -> None:
    path = tmp_path / "playbook.json"
    content = json.dumps({"contract_version": version, "version": "1.0", "sections": {}})
    path.write_text(content)
    with pytest.raises(PlaybookFileError) as err:
        compat.load_playbook(path)
    assert f"`{path}`" in str(err.value) and f"contract_version {version!r}" in str(err.value)
    assert "this playbook reads 1" in str(err.value)
    assert path.read_text() == content  # left untouched
