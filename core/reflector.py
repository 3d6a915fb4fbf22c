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

__all__ = [
    "build_request",
    "describe_sections",
    "parse_reflector",
    "playbook_text",
    "reflection_from_dict",
    "reflector_request",
]


def describe_sections(sections: SectionSet) -> str:
    """One line per section, for prompts."""
    return "\n".join(f"- {s.name} ({s.slug}): {s.description}".rstrip(": ") for s in sections.sections)


def playbook_text(playbook: Playbook) -> str:
    """The playbook with ids, in the ACE bullet format agents can cite."""
    return format_bullets(playbook) or "(the playbook is empty)"


def build_request(
    template: PromptTemplate,
    values: dict[str, str],
    *,
    model: str,
    session_id: str | None,
    max_tokens: int = 4096,
    context: dict[str, Any] | None = None,
) -> LLMRequest:
    """A request from a template and its placeholder values; the manifest names the output schema."""
    system, user = template.render(**values)
    return LLMRequest(
        step=template.manifest.prompt_id,  # type: ignore[arg-type]
        session_id=session_id,
        model=model,
        system=system,
        user=user,
        schema_name=template.manifest.output_schema,
        max_tokens=max_tokens,
        context=context or {},
    )


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
    values = {
        "sections": describe_sections(sections),
        "playbook": playbook_text(playbook),
        "transcript": rendered.text,
        "session_meta": session_meta or session_id,
    }
    return build_request(template, values, model=model, session_id=session_id, max_tokens=max_tokens, context=context)


def reflection_from_dict(data: dict[str, Any]) -> ReflectorOutput:
    """Reflector output from an untrusted dict: malformed bullet tags are dropped one by one."""
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
    return ReflectorOutput(analysis=analysis if isinstance(analysis, str) else str(analysis or ""), bullet_tags=tags)


def parse_reflector(text: str | None) -> ReflectorOutput | None:
    """Validated reflector output, or None when the text holds no JSON object."""
    data = extract_json(text)
    return None if data is None else reflection_from_dict(data)
