"""Every edge case of the operation semantics (the seeds' scenarios), through the seeds' dict API (`core.compat`)."""

from __future__ import annotations

import copy
import logging
from typing import Any

import pytest

from core import compat
from core.compat import apply_structured_operations, prune_harmful, update_playbook_data

SECTIONS = list(compat.SECTION_SLUGS)


def pb(**sections: list[tuple[str, str, int, int]]) -> dict[str, Any]:
    """A seeds-shaped playbook; keyword names are slugs (pat, mis, pref, ctx, oth)."""
    by_slug = {slug: name for name, slug in compat.SECTION_SLUGS.items()}
    out: dict[str, Any] = {"version": "1.0", "last_updated": None, "sections": {s: [] for s in SECTIONS}}
    for slug, items in sections.items():
        out["sections"][by_slug[slug]] = [{"name": n, "text": t, "helpful": h, "harmful": x} for n, t, h, x in items]
    return out


def entries(playbook: dict[str, Any], section: str) -> list[tuple[str, str, int, int]]:
    return [(e["name"], e["text"], e["helpful"], e["harmful"]) for e in playbook["sections"][section]]


def all_texts(playbook: dict[str, Any]) -> list[str]:
    return [e["text"] for items in playbook["sections"].values() for e in items]


def ops(playbook: dict[str, Any], *operations: dict[str, Any]) -> dict[str, Any]:
    return update_playbook_data(playbook, {"operations": list(operations), "evaluations": []})


# --- ADD --------------------------------------------------------------------------------------


def test_scn_002_01_add_creates_entry_in_target_section() -> None:
    result = ops(
        pb(pat=[("pat-001", "use types", 5, 1)]),
        {"type": "ADD", "text": "prefer composition", "section": "PATTERNS & APPROACHES"},
    )
    assert entries(result, "PATTERNS & APPROACHES") == [
        ("pat-001", "use types", 5, 1),
        ("pat-002", "prefer composition", 0, 0),
    ]


def test_scn_002_02_add_defaults_to_others() -> None:
    result = ops(pb(), {"type": "ADD", "text": "some insight"})
    assert entries(result, "OTHERS") == [("oth-001", "some insight", 0, 0)]


def test_scn_002_03_add_skips_duplicate_text_across_sections() -> None:
    playbook = pb(oth=[("oth-001", "prefer pathlib", 2, 0)])
    result = ops(playbook, {"type": "ADD", "text": "prefer pathlib", "section": "PATTERNS & APPROACHES"})
    assert result["sections"] == playbook["sections"]


@pytest.mark.parametrize("text", ["", "   ", None, 42])
def test_scn_002_04_add_skips_empty_text(text: object) -> None:
    playbook = pb()
    result = ops(playbook, {"type": "ADD", "text": text, "section": "OTHERS"})
    assert result["sections"] == playbook["sections"]


@pytest.mark.parametrize("section", ["mistakes to avoid", "  MISTAKES to avoid  "])
def test_scn_002_05_add_resolves_section_case_insensitively(section: str) -> None:
    result = ops(pb(), {"type": "ADD", "text": "new tip", "section": section})
    assert entries(result, "MISTAKES TO AVOID") == [("mis-001", "new tip", 0, 0)]


# --- MERGE ------------------------------------------------------------------------------------


def test_scn_003_01_merge_combines_two_entries() -> None:
    result = ops(
        pb(pat=[("pat-001", "use type hints", 5, 1), ("pat-003", "annotate return types", 3, 0)]),
        {"type": "MERGE", "source_ids": ["pat-001", "pat-003"], "merged_text": "use complete type annotations"},
    )
    assert entries(result, "PATTERNS & APPROACHES") == [("pat-004", "use complete type annotations", 8, 1)]


def test_scn_003_02_merge_with_explicit_section() -> None:
    result = ops(
        pb(pat=[("pat-001", "hint A", 2, 0)], oth=[("oth-001", "hint B", 1, 0)]),
        {
            "type": "MERGE",
            "source_ids": ["pat-001", "oth-001"],
            "merged_text": "combined hint",
            "section": "PATTERNS & APPROACHES",
        },
    )
    assert entries(result, "PATTERNS & APPROACHES") == [("pat-002", "combined hint", 3, 0)]
    assert entries(result, "OTHERS") == []


def test_scn_003_03_merge_filters_missing_ids() -> None:
    result = ops(
        pb(pat=[("pat-001", "A", 2, 0), ("pat-002", "B", 1, 0)]),
        {"type": "MERGE", "source_ids": ["pat-001", "pat-002", "pat-999"], "merged_text": "combined"},
    )
    assert entries(result, "PATTERNS & APPROACHES") == [("pat-003", "combined", 3, 0)]


def test_scn_003_04_merge_skipped_with_one_valid_id() -> None:
    playbook = pb(pat=[("pat-001", "A", 2, 0)])
    result = ops(playbook, {"type": "MERGE", "source_ids": ["pat-001", "pat-999"], "merged_text": "combined"})
    assert result["sections"] == playbook["sections"]


def test_scn_003_05_merge_skipped_with_fewer_than_two_source_ids() -> None:
    playbook = pb(pat=[("pat-001", "A", 2, 0)])
    result = ops(playbook, {"type": "MERGE", "source_ids": ["pat-001"], "merged_text": "rewritten"})
    assert result["sections"] == playbook["sections"]


def test_scn_003_06_merge_inherits_section_of_first_valid_source() -> None:
    result = ops(
        pb(mis=[("mis-001", "avoid globals", 3, 0)], oth=[("oth-001", "no bare except", 1, 0)]),
        {"type": "MERGE", "source_ids": ["mis-001", "oth-001"], "merged_text": "combined advice"},
    )
    assert entries(result, "MISTAKES TO AVOID") == [("mis-002", "combined advice", 4, 0)]
    assert entries(result, "OTHERS") == []


def test_scn_003_07_merge_after_delete_of_first_source() -> None:
    result = ops(
        pb(pat=[("pat-001", "A", 2, 0), ("pat-002", "B", 1, 0), ("pat-003", "C", 3, 0)]),
        {"type": "DELETE", "target_id": "pat-001", "reason": "obsolete"},
        {"type": "MERGE", "source_ids": ["pat-001", "pat-002", "pat-003"], "merged_text": "combined"},
    )
    assert entries(result, "PATTERNS & APPROACHES") == [("pat-004", "combined", 4, 0)]


def test_scn_003_08_merge_skipped_when_all_ids_missing(caplog: pytest.LogCaptureFixture) -> None:
    playbook = pb(pat=[("pat-001", "use type hints", 5, 1)])
    with caplog.at_level(logging.WARNING, logger="playbook"):
        result = ops(playbook, {"type": "MERGE", "source_ids": ["pat-999", "pat-888"], "merged_text": "combined"})
    assert entries(result, "PATTERNS & APPROACHES") == [("pat-001", "use type hints", 5, 1)]
    assert "'pat-999' not found" in caplog.text and "'pat-888' not found" in caplog.text


# --- DELETE -----------------------------------------------------------------------------------


def test_scn_004_01_delete_removes_entry_and_logs_reason(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="playbook"):
        result = ops(
            pb(mis=[("mis-001", "bad advice", 0, 2)]),
            {"type": "DELETE", "target_id": "mis-001", "reason": "contradicts project standards"},
        )
    assert entries(result, "MISTAKES TO AVOID") == []
    assert "mis-001" in caplog.text and "bad advice" in caplog.text
    assert "contradicts project standards" in caplog.text
    assert "contradicts" not in str(result)  # the reason is never stored


def test_scn_004_02_delete_skips_missing_id(caplog: pytest.LogCaptureFixture) -> None:
    playbook = pb(pat=[("pat-001", "A", 1, 0)])
    with caplog.at_level(logging.WARNING, logger="playbook"):
        result = ops(playbook, {"type": "DELETE", "target_id": "pat-999", "reason": "cleanup"})
    assert result["sections"] == playbook["sections"]
    assert "DELETE: target_id 'pat-999' not found" in caplog.text


def test_scn_004_03_delete_with_empty_target_id() -> None:
    playbook = pb(pat=[("pat-001", "A", 1, 0)])
    assert ops(playbook, {"type": "DELETE", "target_id": "", "reason": "cleanup"})["sections"] == playbook["sections"]


# --- sequencing and atomicity -----------------------------------------------------------------


def test_scn_005_01_delete_before_merge() -> None:
    result = ops(
        pb(oth=[("oth-001", "A", 1, 0), ("oth-002", "B", 2, 0), ("oth-003", "C", 3, 0)]),
        {"type": "DELETE", "target_id": "oth-001", "reason": "outdated"},
        {"type": "MERGE", "source_ids": ["oth-002", "oth-003"], "merged_text": "combined BC"},
    )
    assert entries(result, "OTHERS") == [("oth-004", "combined BC", 5, 0)]


def test_scn_005_02_add_then_merge_referencing_new_entry() -> None:
    result = ops(
        pb(oth=[("oth-001", "prefer pathlib", 2, 0)]),
        {"type": "ADD", "text": "use structured logging", "section": "OTHERS"},
        {
            "type": "MERGE",
            "source_ids": ["oth-002", "oth-001"],
            "merged_text": "prefer pathlib and use structured logging for all file operations",
        },
    )
    assert entries(result, "OTHERS") == [
        ("oth-003", "prefer pathlib and use structured logging for all file operations", 2, 0)
    ]


class Hostile(dict[str, Any]):
    """An operation object whose `.get` raises: an unexpected failure in the middle of applying."""

    def get(self, *args: object, **kwargs: object) -> Any:
        raise RuntimeError("injected failure")


def test_scn_005_03_exception_rolls_back() -> None:
    playbook = pb(pat=[("pat-001", "A", 5, 1)])
    snapshot = copy.deepcopy(playbook)
    operations = [{"type": "ADD", "text": "applied first"}, Hostile(type="ADD", text="will fail")]
    result = update_playbook_data(playbook, {"operations": operations, "evaluations": []})
    assert result["sections"] == snapshot["sections"]
    assert playbook == snapshot


def test_scn_005_04_skipped_operations_do_not_roll_back() -> None:
    result = ops(
        pb(oth=[("oth-001", "keep me", 1, 0)]),
        {"type": "DELETE", "target_id": "nonexistent", "reason": "cleanup"},
        {"type": "ADD", "text": "new entry", "section": "OTHERS"},
    )
    assert entries(result, "OTHERS") == [("oth-001", "keep me", 1, 0), ("oth-002", "new entry", 0, 0)]


# --- precedence -------------------------------------------------------------------------------


def test_scn_008_01_operations_win_over_new_key_points() -> None:
    result = update_playbook_data(
        pb(),
        {
            "operations": [{"type": "ADD", "text": "from ops", "section": "OTHERS"}],
            "new_key_points": ["from nkp"],
            "evaluations": [],
        },
    )
    assert all_texts(result) == ["from ops"]


def test_scn_008_02_new_key_points_used_without_operations_key() -> None:
    result = update_playbook_data(pb(), {"new_key_points": ["legacy point"], "evaluations": []})
    assert entries(result, "OTHERS") == [("oth-001", "legacy point", 0, 0)]


def test_scn_008_03_empty_operations_still_suppress_new_key_points() -> None:
    result = update_playbook_data(
        pb(), {"operations": [], "new_key_points": ["should not be added"], "evaluations": []}
    )
    assert all_texts(result) == []


# --- truncation and unknown types ------------------------------------------------------------


def _adds(n: int) -> list[dict[str, Any]]:
    return [{"type": "ADD", "text": f"tip {i}"} for i in range(n)]


@pytest.mark.parametrize(("n", "kept"), [(15, 10), (10, 10), (11, 10)])
def test_scn_009_01_03_04_truncation_boundary(n: int, kept: int, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="playbook"):
        result = update_playbook_data(pb(), {"operations": _adds(n), "evaluations": []})
    assert all_texts(result) == [f"tip {i}" for i in range(kept)]
    assert (f"truncated from {n} to 10" in caplog.text) == (n > 10)


def test_scn_009_02_unknown_or_missing_type_skipped(caplog: pytest.LogCaptureFixture) -> None:
    playbook = pb(pat=[("pat-001", "A", 1, 0)])
    with caplog.at_level(logging.INFO, logger="playbook"):
        result = ops(
            playbook,
            {"type": "REPLACE", "target_id": "pat-001", "text": "rewritten"},
            {"target_id": "pat-001", "text": "rewritten"},
        )
    assert result["sections"] == playbook["sections"]
    assert "Unknown operation type: 'REPLACE'" in caplog.text
    assert "Unknown operation type: ''" in caplog.text


# --- UPDATE -----------------------------------------------------------------------------------


def test_scn_013_01_update_revises_text_only() -> None:
    new = "use type hints for all function parameters and return values"
    result = ops(pb(pat=[("pat-001", "use type hints", 5, 1)]), {"type": "UPDATE", "target_id": "pat-001", "text": new})
    assert entries(result, "PATTERNS & APPROACHES") == [("pat-001", new, 5, 1)]


def test_scn_013_02_update_skips_missing_id(caplog: pytest.LogCaptureFixture) -> None:
    playbook = pb(pat=[("pat-001", "A", 1, 0)])
    with caplog.at_level(logging.WARNING, logger="playbook"):
        result = ops(playbook, {"type": "UPDATE", "target_id": "pat-999", "text": "new text"})
    assert result["sections"] == playbook["sections"]
    assert "UPDATE: target_id 'pat-999' not found" in caplog.text


@pytest.mark.parametrize(
    "op",
    [
        {"type": "UPDATE", "target_id": "", "text": "new text"},
        {"type": "UPDATE", "target_id": "pat-001", "text": ""},
    ],
)
def test_scn_013_03_04_update_validation(op: dict[str, Any]) -> None:
    playbook = pb(pat=[("pat-001", "use type hints", 5, 1)])
    assert ops(playbook, op)["sections"] == playbook["sections"]


# --- apply_structured_operations --------------------------------------------------------------


def test_scn_014_01_structured_ops_deep_copy() -> None:
    playbook = pb(pat=[("pat-001", "A", 5, 1)])
    snapshot = copy.deepcopy(playbook)
    result = apply_structured_operations(playbook, [{"type": "ADD", "text": "new insight", "section": "OTHERS"}])
    assert entries(result, "OTHERS") == [("oth-001", "new insight", 0, 0)]
    assert playbook == snapshot


def test_scn_014_02_structured_ops_rollback() -> None:
    playbook = pb(pat=[("pat-001", "A", 5, 1)])
    snapshot = copy.deepcopy(playbook)
    result = apply_structured_operations(playbook, [{"type": "ADD", "text": "x"}, Hostile(type="ADD", text="y")])
    assert result == snapshot and playbook == snapshot


def test_scn_014_03_structured_ops_update() -> None:
    result = apply_structured_operations(
        pb(pat=[("pat-001", "old text", 3, 0)]), [{"type": "UPDATE", "target_id": "pat-001", "text": "revised text"}]
    )
    assert entries(result, "PATTERNS & APPROACHES") == [("pat-001", "revised text", 3, 0)]


def test_scn_014_04_empty_operations_return_same_object() -> None:
    playbook = pb(pat=[("pat-001", "A", 5, 1)])
    assert apply_structured_operations(playbook, []) is playbook
    assert entries(playbook, "PATTERNS & APPROACHES") == [("pat-001", "A", 5, 1)]


# --- pruning ----------------------------------------------------------------------------------


def test_scn_015_01_prune_removes_threshold_entries() -> None:
    result = prune_harmful(pb(mis=[("mis-001", "bad advice", 1, 4)], oth=[("oth-001", "good tip", 5, 0)]))
    assert entries(result, "MISTAKES TO AVOID") == []
    assert entries(result, "OTHERS") == [("oth-001", "good tip", 5, 0)]


def test_scn_015_02_prune_keeps_zero_evaluation_entries() -> None:
    result = prune_harmful(pb(oth=[("oth-001", "new entry", 0, 0)]))
    assert entries(result, "OTHERS") == [("oth-001", "new entry", 0, 0)]


def test_scn_015_03_prune_keeps_equal_counters() -> None:
    result = prune_harmful(pb(pat=[("pat-001", "controversial", 3, 3)]))
    assert entries(result, "PATTERNS & APPROACHES") == [("pat-001", "controversial", 3, 3)]


def test_scn_015_04_prune_logs_entry(caplog: pytest.LogCaptureFixture, tmp_path: Any) -> None:
    text = "bad advice that is very long and should be truncated in the log output" * 2
    with caplog.at_level(logging.WARNING, logger="playbook"):
        result = compat.prune_harmful(pb(mis=[("mis-001", text, 0, 5)]), diagnostics_dir=tmp_path)
    assert entries(result, "MISTAKES TO AVOID") == []
    assert "Pruned mis-001 (helpful=0, harmful=5)" in caplog.text
    assert text[:80] in caplog.text and text not in caplog.text
    assert "mis-001" in (tmp_path / "curator_report.json").read_text()


@pytest.mark.parametrize(
    ("helpful", "harmful", "pruned"),
    [
        (0, 0, False),
        (0, 2, False),
        (0, 3, True),
        (2, 3, True),
        (3, 3, False),
        (4, 3, False),
        (4, 5, True),
        (10, 9, False),
    ],
)
def test_pruning_decision_table(helpful: int, harmful: int, pruned: bool) -> None:
    result = prune_harmful(pb(oth=[("oth-001", "x", helpful, harmful)]))
    assert (entries(result, "OTHERS") == []) is pruned


def test_pruning_runs_after_operations_in_same_cycle() -> None:
    # A merged entry whose summed counters cross the threshold is pruned in the same cycle.
    result = ops(
        pb(oth=[("oth-001", "A", 0, 2), ("oth-002", "B", 0, 2)]),
        {"type": "MERGE", "source_ids": ["oth-001", "oth-002"], "merged_text": "AB"},
    )
    assert entries(result, "OTHERS") == []


# --- evaluations ------------------------------------------------------------------------------


def test_evaluations_count_helpful_and_harmful_and_ignore_neutral() -> None:
    result = update_playbook_data(
        pb(pat=[("pat-001", "A", 0, 0), ("pat-002", "B", 1, 1)]),
        {
            "evaluations": [
                {"name": "pat-001", "rating": "helpful"},
                {"name": "pat-002", "rating": "harmful"},
                {"name": "pat-002", "rating": "neutral"},
                {"name": "pat-001", "rating": "very good"},
                {"name": "ghost-001", "rating": "helpful"},
                "garbage",
            ],
        },
    )
    assert entries(result, "PATTERNS & APPROACHES") == [("pat-001", "A", 1, 0), ("pat-002", "B", 1, 2)]


def test_evaluations_run_after_operations_path() -> None:
    # Seeds' order: operations, then evaluations, then pruning.
    result = update_playbook_data(
        pb(),
        {
            "operations": [{"type": "ADD", "text": "fresh"}],
            "evaluations": [{"name": "oth-001", "rating": "helpful"}],
        },
    )
    assert entries(result, "OTHERS") == [("oth-001", "fresh", 1, 0)]


def test_update_playbook_data_never_mutates_input() -> None:
    playbook = pb(pat=[("pat-001", "A", 0, 3)], oth=[("oth-001", "B", 0, 0)])
    snapshot = copy.deepcopy(playbook)
    update_playbook_data(
        playbook,
        {
            "evaluations": [{"name": "pat-001", "rating": "harmful"}],
            "operations": [{"type": "DELETE", "target_id": "oth-001"}],
        },
    )
    assert playbook == snapshot
