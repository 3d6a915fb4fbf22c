"""Reflector step: prompt assembly from a rendered session and the frozen playbook; output parsing."""

from __future__ import annotations

from typing import Any

from core.export import format_bullets
from core.jsonx import extract_json
from core.llm.base import LLMRequest
from core.models import BulletTag, Playbook, ReflectorOutput
from core.prompts import PromptTemplate
from core.render import RenderResult
from core.sections import SectionSet

__all__ = ["describe_sections", "parse_reflector", "reflector_request"]


def describe_sections(sections: SectionSet) -> str:
    """One line per section, for prompts."""
    return "\n".join(f"- {s.name} ({s.slug}): {s.description}".rstrip(": ") for s in sections.sections)


def playbook_text(playbook: Playbook) -> str:
    """The playbook with ids, in the ACE bullet format agents can cite."""
    return format_bullets(playbook) or "(the playbook is empty)"


def reflector_request(
    template: PromptTemplate,
    rendered: RenderResult,
    playbook: Playbook,
    sections: SectionSet,
    *,
    model: str,
    session_id: str,
    session_meta: str = "",
    max_tokens: int = 4096,
    context: dict[str, Any] | None = None,
) -> LLMRequest:
    """The reflector call for one session; the system part is identical for a whole epoch."""
    system, user = template.render(
        sections=describe_sections(sections),
        playbook=playbook_text(playbook),
        transcript=rendered.text,
        session_meta=session_meta or session_id,
    )
    return LLMRequest(
        step="reflector",
        session_id=session_id,
        model=model,
        system=system,
        user=user,
        schema_name=template.manifest.output_schema,
        max_tokens=max_tokens,
        context=context or {},
    )


def parse_reflector(text: str | None) -> ReflectorOutput | None:
    """Validated reflector output, or None when the text holds no JSON object.

    Malformed bullet tags are dropped one by one rather than failing the whole output.
    """
    data = extract_json(text)
    if data is None:
        return None
    analysis = data.get("analysis", "")
    tags = []
    for item in data.get("bullet_tags") or []:
        if isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("tag"), str):
            rationale = item.get("rationale", "")
            tags.append(
                BulletTag(
                    name=item["name"],
                    tag=item["tag"],
                    rationale=rationale if isinstance(rationale, str) else str(rationale),
                )
            )
    return ReflectorOutput(analysis=analysis if isinstance(analysis, str) else str(analysis), bullet_tags=tags)
