"""The seeds' dict-based API over the engine, for users of the hook scripts and for import/export.

Dicts have the seeds' playbook.json shape:
`{"version", "last_updated", "sections": {name: [{"name", "text", "helpful", "harmful"}]}}`.
Every function here converts to the typed models, runs the engine in `core.operations`, and converts
back. Diagnostics (OBS-CUR-001..004, the prune report) go to the `playbook` logger and, only when the
caller passes `diagnostics_dir`, to files in that folder.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.errors import PlaybookFileError
from core.export import format_bullets
from core.jsonx import extract_json
from core.models import ApplyReport, Entry, Playbook, SessionMessage
from core.operations import (
    apply_evaluations,
    apply_operations,
    empty_playbook,
    next_entry_id,
    prune,
)
from core.sections import DEFAULT_SECTIONS, SectionSet

__all__ = [
    "SECTION_SLUGS",
    "apply_structured_operations",
    "extract_json",
    "extract_keypoints",
    "format_playbook",
    "generate_keypoint_name",
    "load_playbook",
    "playbook_from_dict",
    "playbook_to_dict",
    "prune_harmful",
    "run_curator",
    "run_reflector",
    "save_playbook",
    "update_playbook_data",
]

log = logging.getLogger("playbook")

SECTION_SLUGS: dict[str, str] = DEFAULT_SECTIONS.slugs


def generate_keypoint_name(section_entries: list[dict[str, Any]], slug: str) -> str:
    """Next id for a section: `{slug}-NNN`, one above the highest number used in `section_entries`."""
    return next_entry_id((str(e.get("name", "")) for e in section_entries if isinstance(e, dict)), slug)


def playbook_from_dict(data: dict[str, Any], *, sections: SectionSet = DEFAULT_SECTIONS) -> Playbook:
    """The typed playbook of a seeds-shaped dict; sections are normalised to the canonical set."""
    by_name: dict[str, list[Entry]] = {name: [] for name in sections.names}
    for raw_name, items in (data.get("sections") or {}).items():
        target = by_name[sections.resolve(raw_name)]
        for item in items or []:
            target.append(Entry.model_validate(item))
    return Playbook(
        version=str(data.get("version", "1.0")),
        last_updated=data.get("last_updated"),
        sections=by_name,
    )


def playbook_to_dict(playbook: Playbook, base: dict[str, Any] | None = None) -> dict[str, Any]:
    """The seeds-shaped dict of `playbook`; other top-level keys of `base` are carried over."""
    out: dict[str, Any] = {k: v for k, v in (base or {}).items() if k != "sections"}
    out.setdefault("version", playbook.version)
    out.setdefault("last_updated", playbook.last_updated)
    out["sections"] = {name: [e.model_dump() for e in items] for name, items in playbook.sections.items()}
    return out


def _emit(report: ApplyReport, diagnostics_dir: Path | None) -> None:
    """Log the report the way the seeds' diagnostics did; write files only when asked."""
    if report.proposed or report.evaluations:
        log.info("%s", report.summary())
    for outcome in report.outcomes:
        if outcome.status == "skipped" and "not found" in outcome.reason:
            log.warning("%s", outcome.reason)  # OBS-CUR-002
        if outcome.status == "applied" and outcome.type == "DELETE":
            log.info(  # OBS-CUR-003
                "DELETE applied: target_id=%r, text=%r, reason=%r",
                outcome.entry_id,
                (outcome.old_text or "")[:80],
                outcome.reason,
            )
        if outcome.status == "applied" and outcome.type == "UPDATE":
            log.info(  # OBS-CUR-004
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
    """Apply ADD/UPDATE/MERGE/DELETE operations to a deep copy of `playbook` (REQ-CUR-014).

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

    The `operations` key, when present (even empty), takes precedence and `new_key_points` is ignored
    (REQ-CUR-008). Operations run on a deep copy; an unexpected exception there rolls back to the
    original playbook (REQ-CUR-006). The caller's dict is never mutated.
    """
    report = ApplyReport()
    current = playbook
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
            # The legacy path had no 10-item limit (CON-CUR-001: behaviour unchanged).
            current, report = _apply_curator_operations(copy.deepcopy(playbook), legacy, limit=None)

    model = playbook_from_dict(current)
    evaluations = extraction_result.get("evaluations") or []
    model, eval_outcomes = apply_evaluations(model, evaluations if isinstance(evaluations, list) else [])
    model, pruned = prune(model)
    report = report.model_copy(update={"evaluations": eval_outcomes, "pruned": pruned})
    _emit(report, diagnostics_dir)
    return playbook_to_dict(model, base=current)


def prune_harmful(playbook: dict[str, Any], *, diagnostics_dir: Path | None = None) -> dict[str, Any]:
    """Remove entries with harmful >= 3 and harmful > helpful (REQ-CUR-015); returns a new dict."""
    model, pruned = prune(playbook_from_dict(playbook))
    _emit(ApplyReport(pruned=pruned), diagnostics_dir)
    return playbook_to_dict(model, base=playbook)


def _default_playbook_dict() -> dict[str, Any]:
    return playbook_to_dict(empty_playbook(), base={"version": "1.0", "last_updated": None})


def _migrate_key_points(key_points: list[Any]) -> list[dict[str, Any]]:
    """Legacy flat `key_points` -> OTHERS entries (strings become `kpt_NNN`, `score` -> counters)."""
    entries: list[dict[str, Any]] = []
    for i, item in enumerate(key_points, start=1):
        if isinstance(item, str):
            entries.append({"name": f"kpt_{i:03d}", "text": item, "helpful": 0, "harmful": 0})
            continue
        if not isinstance(item, dict):
            continue
        score = item.get("score")
        helpful = item.get("helpful", max(score, 0) if isinstance(score, int | float) else 0)
        harmful = item.get("harmful", max(-score, 0) if isinstance(score, int | float) else 0)
        entries.append(
            {
                "name": item.get("name") or f"kpt_{i:03d}",
                "text": item.get("text", ""),
                "helpful": int(helpful),
                "harmful": int(harmful),
            }
        )
    return entries


def load_playbook(path: Path | str) -> dict[str, Any]:
    """Read a playbook.json, migrating the legacy flat format and filling in missing sections.

    Returns the default (empty) playbook when the file does not exist.

    Raises:
        PlaybookFileError: the file exists but is unreadable or corrupt. It is never replaced.
    """
    path = Path(path)
    if not path.exists():
        return _default_playbook_dict()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PlaybookFileError(f"Cannot read playbook `{path}`: {exc.strerror}; check its permissions.") from exc
    except (UnicodeDecodeError, ValueError) as exc:
        raise PlaybookFileError(
            f"Playbook `{path}` is not valid JSON ({exc}); fix or move it, it was left untouched."
        ) from exc
    if not isinstance(data, dict):
        raise PlaybookFileError(f"Playbook `{path}` is not a JSON object; fix or move it, it was left untouched.")
    if "sections" not in data and isinstance(data.get("key_points"), list):
        data = {
            "version": data.get("version", "1.0"),
            "last_updated": data.get("last_updated"),
            "sections": {"OTHERS": _migrate_key_points(data["key_points"])},
        }
    if not isinstance(data.get("sections", {}), dict):
        raise PlaybookFileError(f"Playbook `{path}` has a `sections` value that is not an object; fix it.")
    try:
        model = playbook_from_dict(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise PlaybookFileError(
            f"Playbook `{path}` has an invalid entry ({first['msg']}: {first.get('input')!r}); fix it."
        ) from exc
    base = {k: v for k, v in data.items() if k != "key_points"}
    return playbook_to_dict(model, base=base)


def save_playbook(playbook: dict[str, Any], path: Path | str) -> None:
    """Write `playbook` atomically (temporary file, then rename), setting `last_updated`.

    Raises:
        PlaybookFileError: the dict has no `sections`, or the file cannot be written.
    """
    path = Path(path)
    if not isinstance(playbook, dict) or not isinstance(playbook.get("sections"), dict):
        raise PlaybookFileError(f"Refusing to write `{path}`: the playbook has no `sections` object.")
    data = {k: v for k, v in playbook.items() if k != "key_points"}
    data["last_updated"] = datetime.now(UTC).isoformat(timespec="seconds")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise PlaybookFileError(f"Cannot write playbook `{path}`: {exc.strerror}.") from exc


def format_playbook(playbook: dict[str, Any] | Playbook) -> str:
    """Each non-empty section as `## NAME` then `[id] helpful=H harmful=X :: text` lines; "" when empty."""
    return format_bullets(playbook if isinstance(playbook, Playbook) else playbook_from_dict(playbook))


# --- the seeds' LLM functions ------------------------------------------------------------------
# Each returns the seeds' shape and never raises: a failed call (API error after retries, text
# without JSON, anything unexpected) gives the seeds' empty result. Their imports are local because
# the LLM layer loads the anthropic SDK, which users of the dict API above should not pay for.


def _default_provider() -> Any:
    from core.llm.claude import AnthropicProvider, make_client

    return AnthropicProvider(
        make_client(api_key=os.environ.get("ANTHROPIC_API_KEY"), base_url=os.environ.get("ANTHROPIC_BASE_URL"))
    )


def _messages_as_session(messages: list[Any]) -> list[SessionMessage]:
    out = []
    for seq, m in enumerate(messages):
        if isinstance(m, dict):
            content = m.get("content")
            text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
            role = str(m.get("role", "user"))
            out.append(SessionMessage(seq=seq, role=role, kind="text", text=text, is_prompt=role == "user"))
    return out


def _call(
    step: str, provider: Any, model: str, context: dict[str, Any], playbook: Playbook, **values: str
) -> str | None:
    from core.prompts import load_template
    from core.reflector import build_request, describe_sections, playbook_text

    values = {"sections": describe_sections(DEFAULT_SECTIONS), "playbook": playbook_text(playbook), **values}
    request = build_request(
        load_template(step),
        values,
        model=model,
        session_id=context.get("session_id"),
        context={**context, "playbook": playbook},
    )
    response = (provider or _default_provider()).complete(request)
    if not response.ok:
        log.warning("%s call failed: %s", step, response.error)
    return response.text if response.ok else None


def extract_keypoints(
    messages: list[Any],
    playbook: dict[str, Any],
    diagnostic_name: str | None = None,
    *,
    provider: Any = None,
    model: str = "claude-sonnet-4-5",
    budget_tokens: int = 24_000,
) -> dict[str, Any]:
    """One-call reflection (seeds): `evaluations`, `new_key_points`, and `operations` only when given."""
    from core.curator import parse_reflection
    from core.render import render_session

    empty: dict[str, Any] = {"new_key_points": [], "evaluations": []}
    try:
        model_pb = playbook_from_dict(playbook)
        session = _messages_as_session(messages)
        text = _call(
            "reflection",
            provider,
            model,
            {"messages": session},
            model_pb,
            transcript=render_session(session, budget_tokens).text,
        )
        return parse_reflection(text) or empty
    except Exception as exc:
        log.warning("extract_keypoints failed: %s", exc)
        return empty


def run_reflector(
    transcript: str | list[Any],
    playbook: dict[str, Any],
    *,
    provider: Any = None,
    model: str = "claude-sonnet-4-5",
    budget_tokens: int = 24_000,
) -> dict[str, Any]:
    """Reflector step (seeds): `{"analysis", "bullet_tags"}`; `{"analysis": "", "bullet_tags": []}` on failure."""
    from core.reflector import parse_reflector
    from core.render import render_session

    try:
        model_pb = playbook_from_dict(playbook)
        session = _messages_as_session(
            transcript if isinstance(transcript, list) else [{"role": "user", "content": transcript}]
        )
        text = _call(
            "reflector",
            provider,
            model,
            {"messages": session},
            model_pb,
            transcript=transcript if isinstance(transcript, str) else render_session(session, budget_tokens).text,
            session_meta="(single session)",
        )
        parsed = parse_reflector(text)
        if parsed is not None:
            return parsed.model_dump(include={"analysis", "bullet_tags"})
    except Exception as exc:
        log.warning("run_reflector failed: %s", exc)
    return {"analysis": "", "bullet_tags": []}


def run_curator(
    reflector_output: dict[str, Any],
    playbook: dict[str, Any],
    *,
    provider: Any = None,
    model: str = "claude-sonnet-4-5",
) -> dict[str, Any]:
    """Curator step (REQ-CUR-010): `{"reasoning", "operations"}`; the empty result on any failure."""
    from core.curator import parse_curator
    from core.reflector import reflection_from_dict

    try:
        reflection = reflection_from_dict(reflector_output if isinstance(reflector_output, dict) else {})
        model_pb = playbook_from_dict(playbook)
        text = _call(
            "curator",
            provider,
            model,
            {"reflection": reflection},
            model_pb,
            reflection=reflection.model_dump_json(include={"analysis", "bullet_tags"}, indent=2),
        )
        parsed = parse_curator(text)
        if parsed is not None:
            return {"reasoning": parsed.reasoning, "operations": parsed.operations}
    except Exception as exc:
        log.warning("run_curator failed: %s", exc)
    return {"reasoning": "", "operations": []}
