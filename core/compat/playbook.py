"""The seeds' dict-based API over the engine, for users of the hook scripts (re-exported by `core.compat`).

Dicts have the seeds' playbook.json shape (`core.playbook_json`). Every function here converts to the
typed models, runs the engine in `core.operations`, and converts back. Diagnostics (the summary, skipped
operations, evaluations, the prune report) go to the `playbook` logger and, only when the caller passes
`diagnostics_dir`, to files in that folder. The seeds' LLM functions (`extract_keypoints`, `run_reflector`,
`run_curator`) are in `core.compat.llm`.
"""

from __future__ import annotations

import copy
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.errors import NoSectionsError
from core.io.files import read_text, write_atomic
from core.jsonx import extract_json
from core.markdown import format_bullets
from core.models import ApplyReport, Playbook
from core.operations import apply_evaluations, apply_operations, next_entry_id, prune
from core.playbook_json import (
    MAX_PLAYBOOK_BYTES,
    decode,
    default_dict,
    encode,
    playbook_from_dict,
    playbook_to_dict,
    repair_entries,
)
from core.prompts import DEFAULT_PROMPTS_DIR
from core.sections import DEFAULT_SECTIONS

__all__ = [
    "SECTION_SLUGS",
    "apply_structured_operations",
    "extract_json",
    "format_playbook",
    "generate_keypoint_name",
    "load_playbook",
    "prune_harmful",
    "save_playbook",
    "update_playbook_data",
]

log = logging.getLogger("playbook")

SECTION_SLUGS: dict[str, str] = DEFAULT_SECTIONS.slugs


def generate_keypoint_name(section_entries: list[dict[str, Any]], slug: str) -> str:
    """Next id for a section: `{slug}-NNN`, one above the highest number used in `section_entries`."""
    return next_entry_id((str(e.get("name", "")) for e in section_entries if isinstance(e, dict)), slug)


def _emit(report: ApplyReport, diagnostics_dir: Path | None) -> None:
    """Log the report the way the seeds' diagnostics did; write files only when asked."""
    if report.proposed or report.evaluations:
        log.info("%s", report.summary())
    for outcome in report.outcomes:
        if outcome.status == "skipped" and "not found" in outcome.reason:
            log.warning("%s", outcome.reason)  # each skipped operation, with its reason
        if outcome.status == "applied" and outcome.type == "DELETE":
            log.info(  # the evaluations
                "DELETE applied: target_id=%r, text=%r, reason=%r",
                outcome.entry_id,
                (outcome.old_text or "")[:80],
                outcome.reason,
            )
        if outcome.status == "applied" and outcome.type == "UPDATE":
            log.info(  # the entries pruned
                "UPDATE applied: target_id=%r, old=%r, new=%r",
                outcome.entry_id,
                (outcome.old_text or "")[:80],
                (outcome.new_text or "")[:80],
            )
    for p in report.pruned:
        log.warning("Pruned %s (helpful=%d, harmful=%d): %s", p.name, p.helpful, p.harmful, p.text[:80])
    if report.rolled_back:
        log.error("Operations rolled back: %s", report.rolled_back)
    if diagnostics_dir is not None:
        diagnostics_dir.mkdir(parents=True, exist_ok=True)
        (diagnostics_dir / "curator_ops_summary.txt").write_text(report.summary() + "\n", encoding="utf-8")
        (diagnostics_dir / "curator_report.json").write_text(report.model_dump_json(indent=2), encoding="utf-8")


def _apply_curator_operations(
    playbook: dict[str, Any], operations: list[Any], *, limit: int | None = 10
) -> tuple[dict[str, Any], ApplyReport]:
    """Apply operations to `playbook` (already a deep copy: it is updated in place and returned)."""
    model = playbook_from_dict(playbook)
    result, report = apply_operations(model, operations, limit=limit)
    if report.rolled_back:
        raise RuntimeError(report.rolled_back)
    playbook["sections"] = playbook_to_dict(result)["sections"]
    return playbook, report


def apply_structured_operations(
    playbook: dict[str, Any], operations: list[Any], *, diagnostics_dir: Path | None = None
) -> dict[str, Any]:
    """Apply ADD/UPDATE/MERGE/DELETE operations to a deep copy of `playbook`.

    Returns the modified copy; the original object unchanged on an unexpected exception; and the very
    same object when `operations` is empty.
    """
    if not operations:
        return playbook
    try:
        result, report = _apply_curator_operations(copy.deepcopy(playbook), operations)
    except Exception as exc:
        _emit(ApplyReport(proposed=len(operations), rolled_back=f"{type(exc).__name__}: {exc}"), diagnostics_dir)
        return playbook
    _emit(report, diagnostics_dir)
    return result


def _legacy_key_point(item: object) -> dict[str, Any] | None:
    """A legacy `new_key_points` item as an ADD operation."""
    if isinstance(item, str):
        return {"type": "ADD", "text": item}
    if isinstance(item, dict):
        return {"type": "ADD", "text": item.get("text"), "section": item.get("section")}
    return None


def update_playbook_data(
    playbook: dict[str, Any], extraction_result: dict[str, Any], *, diagnostics_dir: Path | None = None
) -> dict[str, Any]:
    """Apply an extraction result: operations (or legacy new_key_points), evaluations, pruning.

    The `operations` key, when present (even empty), takes precedence and `new_key_points` is ignored.
    Operations run on a deep copy; an unexpected exception there rolls back to the
    original playbook. The caller's dict is never mutated, and nothing raises: an
    existing entry the contract cannot hold is repaired (a negative counter becomes 0) or set aside untouched
    and put back in the result (no id or no text), each with a logged reason.
    """
    playbook, aside, repairs = repair_entries(playbook)
    for reason in repairs:
        log.warning("update_playbook_data: %s", reason)
    report = ApplyReport()
    current = playbook
    try:
        if "operations" in extraction_result:
            operations = extraction_result.get("operations")
            if isinstance(operations, list) and operations:
                try:
                    current, report = _apply_curator_operations(copy.deepcopy(playbook), operations)
                except Exception as exc:
                    current = playbook
                    report = ApplyReport(proposed=len(operations), rolled_back=f"{type(exc).__name__}: {exc}")
        else:
            legacy = [op for op in map(_legacy_key_point, extraction_result.get("new_key_points") or []) if op]
            if legacy:
                # The legacy path had no 10-item limit (the hook scripts rely on it).
                current, report = _apply_curator_operations(copy.deepcopy(playbook), legacy, limit=None)
        model = playbook_from_dict(current)
        evaluations = extraction_result.get("evaluations") or []
        model, eval_outcomes = apply_evaluations(model, evaluations if isinstance(evaluations, list) else [])
        model, pruned = prune(model)
    except (
        Exception
    ) as exc:  # nothing raises here (the hook scripts run it unattended); the playbook comes back as it was, and why
        failed = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        _emit(report.model_copy(update={"rolled_back": failed}), diagnostics_dir)
        return _put_back(copy.deepcopy(playbook), aside)
    report = report.model_copy(update={"evaluations": eval_outcomes, "pruned": pruned})
    _emit(report, diagnostics_dir)
    return _put_back(playbook_to_dict(model, base=current), aside)


def _put_back(playbook: dict[str, Any], aside: dict[str, list[Any]]) -> dict[str, Any]:
    """The entries `repair_entries` set aside, back at the end of their sections (nothing hand-written is lost)."""
    sections = playbook.get("sections")
    if not aside or not isinstance(sections, dict):
        return playbook
    for raw, items in aside.items():
        name = raw if raw in sections else DEFAULT_SECTIONS.resolve(raw)
        sections.setdefault(name, []).extend(copy.deepcopy(items))
    return playbook


def prune_harmful(playbook: dict[str, Any], *, diagnostics_dir: Path | None = None) -> dict[str, Any]:
    """Remove entries with harmful >= 3 and harmful > helpful; returns a new dict."""
    model, pruned = prune(playbook_from_dict(playbook))
    _emit(ApplyReport(pruned=pruned), diagnostics_dir)
    return playbook_to_dict(model, base=playbook)


def load_playbook(path: Path | str) -> dict[str, Any]:
    """Read a playbook.json, filling in missing sections.

    A file without `contract_version` (the seeds' own files, the legacy flat `key_points` list) is migrated
    to contract 1, and the `playbook` logger says so; the next `save_playbook` writes the version. Returns
    the default (empty) playbook when the file does not exist.

    Raises:
        PlaybookFileError: the file exists but is unreadable, larger than `MAX_PLAYBOOK_BYTES`, corrupt (an entry
            whose id is not of the shape playbook makes included), or of a contract version this program does not
            read (the message names the file and the versions it reads). It is never replaced.
    """
    path = Path(path)
    if not path.exists():
        return default_dict()
    return decode(read_text(path, max_bytes=MAX_PLAYBOOK_BYTES), str(path))


def save_playbook(playbook: dict[str, Any], path: Path | str) -> None:
    """Write `playbook` atomically (temporary file, then rename), setting `last_updated`.

    Raises:
        NoSectionsError: the dict has no `sections` (an `AssertionError`, as the hook scripts' assert, and a
            `PlaybookFileError`).
        PlaybookFileError: the file cannot be written.
    """
    path = Path(path)
    if not isinstance(playbook, dict) or not isinstance(playbook.get("sections"), dict):
        raise NoSectionsError(f"Refusing to write `{path}`: the playbook has no `sections` object.")
    write_atomic(path, encode({**playbook, "last_updated": datetime.now(UTC).isoformat(timespec="seconds")}))


# What the hook scripts' prompts/playbook.txt does: the sections inside a text that tells the agent what the
# ids and counters mean. Kept in code too, for an installation whose template file cannot be read.
_PLAYBOOK_WRAPPER = "# Playbook: lessons from earlier sessions\n\n{key_points}\n"


def _wrapper() -> str:
    try:
        text = (DEFAULT_PROMPTS_DIR / "playbook.txt").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("Prompt `playbook.txt` cannot be read (%s); using the built-in wrapper.", exc)
        return _PLAYBOOK_WRAPPER
    return text if "{key_points}" in text else _PLAYBOOK_WRAPPER


def format_playbook(playbook: dict[str, Any] | Playbook) -> str:
    """The playbook as the agent reads it (the hook scripts' `playbook.txt`): an explanation of ids and
    counters, then each non-empty section as `## NAME` and `[id] helpful=H harmful=X :: text` lines; "" when
    the playbook is empty, so nothing is injected."""
    bullets = format_bullets(playbook if isinstance(playbook, Playbook) else playbook_from_dict(playbook))
    return _wrapper().replace("{key_points}", bullets) if bullets else ""
