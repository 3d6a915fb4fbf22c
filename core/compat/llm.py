"""The seeds' LLM functions for users of the hook scripts: `extract_keypoints`, `run_reflector`, `run_curator`.

Each takes and returns the seeds' dict shapes and never raises: a failed call (API error after retries,
text without JSON, anything unexpected) gives the seeds' empty result; a prompt whose manifest does not
hold or a request over its token budget gives it too, before any call, logged at error level. As in the
seeds, the three are coroutines; `*_sync` are the same functions for callers without an event loop.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from typing import Any

from core.curator import describe_budget, describe_neighbours, parse_curator, parse_reflection
from core.errors import BudgetError, PromptError
from core.llm.base import LLMRequest
from core.models import Playbook, SessionMessage
from core.playbook_json import playbook_from_dict
from core.prompts import load_template
from core.reflector import parse_reflector, reflection_from_dict
from core.request import build_request, describe_sections, playbook_text, session_request
from core.sections import DEFAULT_SECTIONS

__all__ = [
    "extract_keypoints",
    "extract_keypoints_sync",
    "run_curator",
    "run_curator_sync",
    "run_reflector",
    "run_reflector_sync",
]

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


def _request(
    step: str,
    model: str,
    context: dict[str, Any],
    playbook: Playbook,
    budget_tokens: int,
    session: list[SessionMessage] | None = None,
    **values: str,
) -> LLMRequest:
    values = {"sections": describe_sections(DEFAULT_SECTIONS), "playbook": playbook_text(playbook), **values}
    common: dict[str, Any] = {
        "model": model,
        "session_id": context.get("session_id"),
        "context": {**context, "playbook": playbook},
        "budget_tokens": budget_tokens,
    }
    if session is not None:  # the transcript is rendered into what the rest of the request leaves
        return session_request(load_template(step), values, session, **common)[0]
    return build_request(load_template(step), values, **common)


def _answer(step: str, provider: Any, request: LLMRequest) -> str | None:
    response = (provider or _default_provider()).complete(request)
    if not response.ok:
        log.warning("%s call failed: %s", step, response.error)
    return response.text if response.ok else None


def _failed(step: str, exc: Exception) -> None:
    """Never raise (the seeds' contract), but a broken prompt manifest or a refused budget is a configuration
    error, not a bad answer: it is logged as one."""
    if isinstance(exc, PromptError | BudgetError):
        log.error("%s refused before any call: %s", step, exc)
    else:
        log.warning("%s failed: %s", step, exc)


def extract_keypoints_sync(
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
        session = _messages_as_session(messages)
        request = _request(
            "reflection", model, {"messages": session}, playbook_from_dict(playbook), budget_tokens, session
        )
        return parse_reflection(_answer("reflection", provider, request)) or empty
    except Exception as exc:
        _failed("extract_keypoints", exc)
        return empty


def run_reflector_sync(
    transcript: str | list[Any],
    playbook: dict[str, Any],
    *,
    provider: Any = None,
    model: str = "claude-sonnet-4-5",
    budget_tokens: int = 24_000,
) -> dict[str, Any]:
    """Reflector step (seeds): `{"analysis", "bullet_tags"}`; `{"analysis": "", "bullet_tags": []}` on failure.

    A list of messages is rendered within the budget (compacted if need be); a transcript given as text is
    sent as it is, or refused when the request would exceed the budget.
    """
    try:
        model_pb = playbook_from_dict(playbook)
        if isinstance(transcript, str):
            context = {"messages": _messages_as_session([{"role": "user", "content": transcript}])}
            request = _request(
                "reflector",
                model,
                context,
                model_pb,
                budget_tokens,
                transcript=transcript,
                session_meta="(single session)",
            )
        else:
            session = _messages_as_session(transcript)
            request = _request(
                "reflector",
                model,
                {"messages": session},
                model_pb,
                budget_tokens,
                session,
                session_meta="(single session)",
            )
        parsed = parse_reflector(_answer("reflector", provider, request))
        if parsed is not None:
            return parsed.model_dump(include={"analysis", "bullet_tags"})
    except Exception as exc:
        _failed("run_reflector", exc)
    return {"analysis": "", "bullet_tags": []}


def run_curator_sync(
    reflector_output: dict[str, Any],
    playbook: dict[str, Any],
    *,
    provider: Any = None,
    model: str = "claude-sonnet-4-5",
    budget_tokens: int = 24_000,
) -> dict[str, Any]:
    """Curator step: `{"reasoning", "operations"}`; the empty result on any failure."""
    try:
        reflection = reflection_from_dict(reflector_output if isinstance(reflector_output, dict) else {})
        if not reflection.analysis.strip():  # the reflector found nothing: no call and no cost
            log.info("run_curator: the reflection is empty; no curator call")
            return {"reasoning": "", "operations": []}
        request = _request(
            "curator",
            model,
            {"reflection": reflection},
            playbook_from_dict(playbook),
            budget_tokens,
            reflection=reflection.model_dump_json(include={"analysis", "bullet_tags"}, indent=2),
            neighbours=describe_neighbours(()),  # the hook scripts' API has no sentence model at hand
            budget=describe_budget(None),
        )
        parsed = parse_curator(_answer("curator", provider, request))
        if parsed is not None:
            return {"reasoning": parsed.reasoning, "operations": parsed.operations}
    except Exception as exc:
        _failed("run_curator", exc)
    return {"reasoning": "", "operations": []}


# The hook scripts await these: coroutines that run the call in a worker thread, so an event
# loop that awaits several sessions at once is never blocked by one.


async def extract_keypoints(
    messages: list[Any], playbook: dict[str, Any], diagnostic_name: str | None = None, **options: Any
) -> dict[str, Any]:
    """Coroutine of `extract_keypoints_sync` (the seeds' signature; same options)."""
    return await asyncio.to_thread(extract_keypoints_sync, messages, playbook, diagnostic_name, **options)


async def run_reflector(transcript: str | list[Any], playbook: dict[str, Any], **options: Any) -> dict[str, Any]:
    """Coroutine of `run_reflector_sync` (the seeds' signature; same options)."""
    return await asyncio.to_thread(run_reflector_sync, transcript, playbook, **options)


async def run_curator(reflector_output: dict[str, Any], playbook: dict[str, Any], **options: Any) -> dict[str, Any]:
    """Coroutine of `run_curator_sync` (the seeds' signature; same options)."""
    return await asyncio.to_thread(run_curator_sync, reflector_output, playbook, **options)
