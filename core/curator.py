"""Curator step: prompt assembly from the reflector's output (never the transcript); output parsing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.budget import BudgetUse
from core.errors import AnswerError
from core.llm.base import LLMRequest
from core.models import MAX_OPERATIONS, CuratorOutput, Entry, Playbook, ReflectorOutput
from core.prompts import PromptTemplate
from core.reflector import some_ids
from core.request import build_request, describe_sections, playbook_text
from core.schemas import answer_document
from core.sections import SectionSet

__all__ = [
    "curator_request",
    "describe_budget",
    "describe_neighbours",
    "parse_curator",
    "parse_reflection",
    "phantom_targets",
    "read_curator",
    "read_reflection",
]


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


def read_curator(text: str | None) -> CuratorOutput:
    """The curator's answer in `text`, checked whole against its shape (`core.schemas.answer_document`): a key
    it lacks takes its default.

    Each operation stays raw: the engine validates it and records why it skipped it. Only the first
    MAX_OPERATIONS are kept (the engine would consider no more); how many there were is `truncated_from`.

    Raises:
        AnswerError: no JSON object, JSON cut short, or an answer of another shape; the message says which.
    """
    data = answer_document(text, "CuratorOutput")
    operations = data.get("operations", [])
    return CuratorOutput(
        reasoning=data.get("reasoning", ""),
        operations=operations[:MAX_OPERATIONS],
        truncated_from=len(operations) if len(operations) > MAX_OPERATIONS else None,
    )


def parse_curator(text: str | None) -> CuratorOutput | None:
    """`read_curator`, or None when `text` holds no answer of the curator's shape (the seeds' dict API)."""
    try:
        return read_curator(text)
    except AnswerError:
        return None


def read_reflection(text: str | None) -> dict[str, Any]:
    """The seeds' one-call mode (`extract_keypoints`), checked whole against its shape: `operations` only when the
    model gave a list.

    Raises:
        AnswerError: no JSON object, JSON cut short, or an answer of another shape; the message says which.
    """
    data = answer_document(text, "ReflectionOutput")
    result: dict[str, Any] = {
        "new_key_points": data.get("new_key_points", []),
        "evaluations": data.get("evaluations", []),
    }
    if isinstance(data.get("operations"), list):
        result["operations"] = data["operations"]
    return result


def parse_reflection(text: str | None) -> dict[str, Any] | None:
    """`read_reflection`, or None when `text` holds no answer of its shape (the seeds' dict API)."""
    try:
        return read_reflection(text)
    except AnswerError:
        return None


def phantom_targets(output: CuratorOutput, known: set[str]) -> str | None:
    """Why the curator's answer belongs to no request of ours when it adds nothing and no entry its operations name
    is one of the `known` ids (a small model merging an example's `pat-001` and `pat-002`), else None: a failed
    call, retried and counted. Unknown ids among real ones are the engine's to skip, as the seeds have it."""
    named: list[str] = []
    for op in output.operations:
        if not isinstance(op, dict) or op.get("type") == "ADD":
            return None
        sources = op.get("source_ids")
        ids = [op.get("target_id"), *(sources if isinstance(sources, list) else [])]
        named += [i for i in ids if isinstance(i, str) and i]
    if not named or any(i in known for i in named):
        return None
    return f"wrong answer: every entry its operations name is one the playbook does not have ({some_ids(named)})"
