"""Reflector step: prompt assembly from a rendered session and the frozen playbook; output parsing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.errors import AnswerError
from core.llm.base import LLMRequest
from core.models import MAX_BULLET_TAGS, BulletTag, Playbook, ReflectorOutput, SessionMessage
from core.prompts import PromptTemplate
from core.redact import Redactor
from core.render import RenderResult
from core.request import describe_sections, playbook_text, session_request
from core.schemas import answer_document
from core.sections import SectionSet

__all__ = ["parse_reflector", "phantom_tags", "read_reflector", "reflection_from_dict", "reflector_request", "some_ids"]

_NONE = "(none: the agent had no playbook entry in this session, so there is nothing to tag)"


def reflector_request(
    template: PromptTemplate,
    messages: Sequence[SessionMessage],
    playbook: Playbook,
    sections: SectionSet,
    *,
    budget_tokens: int,
    redactor: Redactor | None = None,
    model: str,
    session_id: str,
    session_meta: str = "",
    max_tokens: int = 4096,
    context: dict[str, Any] | None = None,
    shown: str | None = None,
) -> tuple[LLMRequest, RenderResult]:
    """The reflector call for one session within `budget_tokens`; the system part is identical for every session.
    `playbook`: the entries the session's agent had (they go with the session, in the user part); `shown`: their
    text when the caller has it already.

    Raises:
        BudgetError: the session cannot fit the budget even compacted.
    """
    had = (playbook_text(playbook) if playbook.size() else _NONE) if shown is None else shown
    values = {
        "sections": describe_sections(sections),
        "playbook": had,
        "session_meta": session_meta or session_id,
    }
    return session_request(
        template,
        values,
        messages,
        budget_tokens=budget_tokens,
        redactor=redactor,
        model=model,
        session_id=session_id,
        max_tokens=max_tokens,
        context=context,
    )


def reflection_from_dict(data: dict[str, Any]) -> ReflectorOutput:
    """Reflector output from an untrusted dict: malformed bullet tags are dropped one by one, and each entry keeps
    only its first verdict, at most MAX_BULLET_TAGS of them."""
    analysis = data.get("analysis", "")
    tags: list[BulletTag] = []
    seen: set[str] = set()
    items = data.get("bullet_tags")
    for item in items if isinstance(items, list) else []:
        if len(tags) >= MAX_BULLET_TAGS:
            break
        if isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("tag"), str):
            if item["name"] in seen:
                continue
            seen.add(item["name"])
            rationale = item.get("rationale", "")
            tags.append(
                BulletTag(
                    name=item["name"],
                    tag=item["tag"],
                    rationale=rationale if isinstance(rationale, str) else str(rationale),
                )
            )
    return ReflectorOutput(analysis=analysis if isinstance(analysis, str) else str(analysis or ""), bullet_tags=tags)


def read_reflector(text: str | None) -> ReflectorOutput:
    """The reflector's answer in `text`: checked whole against its shape (`core.schemas.answer_document`), then its
    bullet tags one by one (`reflection_from_dict`).

    Raises:
        AnswerError: no JSON object, JSON cut short, or an answer of another shape; the message says which.
    """
    return reflection_from_dict(answer_document(text, "ReflectorOutput"))


def parse_reflector(text: str | None) -> ReflectorOutput | None:
    """`read_reflector`, or None when `text` holds no answer of the reflector's shape (the seeds' dict API)."""
    try:
        return read_reflector(text)
    except AnswerError:
        return None


def phantom_tags(output: ReflectorOutput, known: set[str]) -> str | None:
    """Why the reflector's answer belongs to no request of ours when no entry it tags is one of the `known` ids (the
    playbook's and the session's; a small model copies an example's ids or makes them up: `pat-001` ... `pat-005`
    on an empty playbook), else None. Such an answer is a failed call, retried and counted; an unknown tag among
    real ones is the engine's to skip, as the seeds skip an unknown id."""
    if not output.bullet_tags:
        return None
    if any(tag.name in known for tag in output.bullet_tags):
        return None
    named = some_ids([t.name for t in output.bullet_tags])
    return f"wrong answer: every entry it tags is one the playbook does not have ({named})"


def some_ids(ids: Sequence[str]) -> str:
    """The first three of `ids`, quoted and cut to 40 characters each (a model's words), and how many more."""
    shown = ", ".join(f"`{i[:40]}`" for i in ids[:3])
    return shown + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
