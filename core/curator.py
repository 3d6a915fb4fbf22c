"""Curator step: prompt assembly from the reflector's output (never the transcript); output parsing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.budget import BudgetUse
from core.jsonx import extract_json
from core.llm.base import LLMRequest
from core.models import MAX_OPERATIONS, CuratorOutput, Entry, Playbook, ReflectorOutput
from core.prompts import PromptTemplate
from core.request import build_request, describe_sections, playbook_text
from core.sections import SectionSet

__all__ = ["curator_request", "describe_budget", "describe_neighbours", "parse_curator", "parse_reflection"]


def curator_request(
    template: PromptTemplate,
    reflection: ReflectorOutput,
    playbook: Playbook,
    sections: SectionSet,
    *,
    model: str,
    session_id: str | None,
    max_tokens: int = 4096,
    context: dict[str, Any] | None = None,
    neighbours: Sequence[tuple[str, Sequence[tuple[Entry, float]]]] = (),
    budget: BudgetUse | None = None,
    note: str | None = None,
    budget_tokens: int | None = None,
    shown: str | None = None,
) -> LLMRequest:
    """The curator call: reflector output + the same frozen playbook (never the transcript: the curator works
    from the diagnosis).

    `neighbours`: for findings of the reflection, the live entries closest to each, so the curator can
    UPDATE or MERGE them instead of adding the same lesson in new words. `note`: said after the budget (the
    scope of a project playbook's session). `budget_tokens`: the request's token budget (over it, refused
    before the call). `shown`: `playbook_text(playbook)` when the caller has it already (one rendering for an
    epoch's requests).

    Raises:
        BudgetError: the request does not fit `budget_tokens`.
    """
    values = {
        "sections": describe_sections(sections),
        "playbook": playbook_text(playbook) if shown is None else shown,
        "reflection": reflection.model_dump_json(include={"analysis", "bullet_tags"}, indent=2),
        "neighbours": describe_neighbours(neighbours),
        "budget": describe_budget(budget) + (f"\n\n{note}" if note else ""),
    }
    return build_request(
        template,
        values,
        model=model,
        session_id=session_id,
        max_tokens=max_tokens,
        context=context,
        budget_tokens=budget_tokens,
    )


def describe_budget(use: BudgetUse | None) -> str:
    """The budget line of the curator prompt; over budget, the curator is asked to make room."""
    if use is None:
        return "Budget: none set."
    line = f"Budget: {use.entries} of {use.max_entries} entries, about {use.tokens:,} of {use.max_tokens:,} tokens."
    if use.over:
        line += (
            " The playbook is OVER its budget: prefer MERGE of overlapping entries and DELETE of weak or outdated"
            " ones; ADD only a lesson clearly more valuable than the weakest entry."
        )
    return line


def describe_neighbours(neighbours: Sequence[tuple[str, Sequence[tuple[Entry, float]]]]) -> str:
    """The neighbours block of the curator prompt: each finding, then the entries that already say something
    close to it, with their similarity."""
    if not neighbours:
        return "(none: no live entry is close to what the Reflector found)"
    lines = []
    for finding, entries in neighbours:
        lines.append(f"- Finding: {finding}")
        lines += [f"  - [{e.name}] (similarity {score:.2f}) {e.text}" for e, score in entries]
    return "\n".join(lines)


def parse_curator(text: str | None) -> CuratorOutput | None:
    """Curator output, or None when the text holds no JSON object.

    A partial object is accepted with defaults; a non-list `operations` counts as none.
    Each operation stays raw: the engine validates it and records why it skipped it. Only the first
    MAX_OPERATIONS are kept (the engine would consider no more); how many there were is `truncated_from`.
    """
    data = extract_json(text)
    if data is None:
        return None
    reasoning = data.get("reasoning", "")
    operations = data.get("operations")
    operations = operations if isinstance(operations, list) else []
    return CuratorOutput(
        reasoning=reasoning if isinstance(reasoning, str) else str(reasoning),
        operations=operations[:MAX_OPERATIONS],
        truncated_from=len(operations) if len(operations) > MAX_OPERATIONS else None,
    )


def parse_reflection(text: str | None) -> dict[str, Any] | None:
    """The seeds' one-call mode (`extract_keypoints`): `operations` only when the model gave a list."""
    data = extract_json(text)
    if data is None:
        return None
    result: dict[str, Any] = {
        "new_key_points": data.get("new_key_points") if isinstance(data.get("new_key_points"), list) else [],
        "evaluations": data.get("evaluations") if isinstance(data.get("evaluations"), list) else [],
    }
    if isinstance(data.get("operations"), list):
        result["operations"] = data["operations"]
    return result
