"""The seeds' LLM functions for users of the hook scripts: `extract_keypoints`, `run_reflector`, `run_curator`.

Each takes and returns the seeds' dict shapes and never raises: a failed call (API error after retries,
text without JSON, anything unexpected) gives the seeds' empty result.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any

from core.curator import describe_budget, describe_neighbours, parse_curator, parse_reflection
from core.models import Playbook, SessionMessage
from core.playbook_json import playbook_from_dict
from core.prompts import load_template
from core.reflector import build_request, describe_sections, parse_reflector, playbook_text, reflection_from_dict
from core.render import render_session
from core.sections import DEFAULT_SECTIONS

__all__ = ["extract_keypoints", "run_curator", "run_reflector"]

log = logging.getLogger("playbook")


def _default_provider() -> Any:
    from core.llm.claude import AnthropicProvider, make_client  # the SDK loads only when no provider is given

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
    try:
        reflection = reflection_from_dict(reflector_output if isinstance(reflector_output, dict) else {})
        if not reflection.analysis.strip():  # seed 003: the reflector found nothing, so no call and no cost
            return {"reasoning": "", "operations": []}
        model_pb = playbook_from_dict(playbook)
        text = _call(
            "curator",
            provider,
            model,
            {"reflection": reflection},
            model_pb,
            reflection=reflection.model_dump_json(include={"analysis", "bullet_tags"}, indent=2),
            neighbours=describe_neighbours(()),  # the hook scripts' API has no sentence model at hand
            budget=describe_budget(None),
        )
        parsed = parse_curator(text)
        if parsed is not None:
            return {"reasoning": parsed.reasoning, "operations": parsed.operations}
    except Exception as exc:
        log.warning("run_curator failed: %s", exc)
    return {"reasoning": "", "operations": []}
