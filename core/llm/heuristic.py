"""The `heuristic` provider: no model at all; the rules miner (`core.miner`) over the normalised session.

Its lessons are the miner's: the project's own commands, corrections the session's commands show, test
commands that select nothing, and what the user said when they stopped a call or corrected the agent, each
with its evidence. A playbook id cited in a session without tool errors gets a helpful tag (neutral when errors
occurred). Its output says plainly that no model was used. It answers the same requests as the live provider
and its text goes through the same extraction and validation.

No text passes between its two steps: the reflector step's analysis is a summary for people, and the curator step
builds its ADD operations from the typed lessons of the same evidence (`request.context`: the session's messages
or observations, its project's history), each operation carrying the typed lesson its text was written from. The
lessons are worked out and redacted once per session: the reflector step's are held until the curator step of the
same evidence (the same observation and history objects) takes them.
"""

from __future__ import annotations

import json
from typing import Any

from core.lessons import render
from core.llm.base import LLMRequest, LLMResponse, Provider
from core.miner import Finding, History, Observed, mine, observe
from core.models import MAX_OPERATIONS, Playbook, SessionMessage
from core.redact import Redactor

__all__ = ["NOTICE", "HeuristicProvider", "heuristic_lessons"]

NOTICE = "[heuristic: no model was used]"
# The most sessions whose reflector-step lessons are held for their curator step: a run's epoch at a time, so this
# only bounds what sessions whose curator step never came (a run stopped between its steps) leave behind.
HELD_SESSIONS = 4096


def _redacted(value: Any, redactor: Redactor) -> Any:
    """Every string in `value` (a typed lesson's fields, dumped) with secrets and personal data taken out."""
    if isinstance(value, str):
        return redactor.text(value)
    if isinstance(value, list | tuple):
        return [_redacted(v, redactor) for v in value]
    if isinstance(value, dict):
        return {k: _redacted(v, redactor) for k, v in value.items()}
    return value


def heuristic_lessons(
    messages: list[SessionMessage],
    redactor: Redactor | None = None,
    *,
    observed: Observed | None = None,
    history: History | None = None,
    project: str | None = None,
) -> list[Finding]:
    """The miner's findings for a session, with secrets and personal data taken out of every field of each typed
    lesson before its text is written. Without `history`, the session is its own evidence (the hook scripts' API
    sees one session)."""
    redactor = redactor or Redactor()
    seen = observed if observed is not None else observe(messages)
    found = mine(seen, history if history is not None else History.of([("this session", seen)]), project)
    cleaned = []
    for f in found:
        lesson = type(f.lesson).model_validate(_redacted(f.lesson.model_dump(), redactor))
        cleaned.append(
            f.model_copy(
                update={
                    "lesson": lesson,
                    "text": render(lesson, project),
                    "trigger": redactor.text(f.trigger),
                    "evidence": redactor.text(f.evidence),
                }
            )
        )
    return cleaned


def _word_char(c: str) -> bool:
    return c.isalnum() or c in "_-"


def _cites(text: str, name: str) -> bool:
    """True when `name` occurs in `text` as a whole id (not inside a longer word)."""
    at = text.find(name)
    while at >= 0:
        end = at + len(name)
        if (at == 0 or not _word_char(text[at - 1])) and (end == len(text) or not _word_char(text[end])):
            return True
        at = text.find(name, at + 1)
    return False


def _cited_ids(messages: list[SessionMessage], playbook: Playbook) -> list[str]:
    ids = [e.name for _, e in playbook.entries()]
    if not ids:
        return []
    text = "\n".join((m.text or "") + (m.tool_input or "") for m in messages if not m.is_meta)
    return [i for i in ids if _cites(text, i)]


def _reflect(messages: list[SessionMessage], playbook: Playbook, lessons: list[Finding]) -> dict[str, Any]:
    errors = sum(1 for m in messages if m.kind == "tool_result" and m.is_error)
    cited = _cited_ids(messages, playbook)
    tag = "neutral" if errors else "helpful"
    lines = [
        f"{NOTICE} Rules applied to {len(messages)} message parts: {errors} tool error(s),"
        f" {len(lessons)} lesson(s), {len(cited)} cited playbook id(s)."
    ]
    lines += [f"- {x.text}" for x in lessons]  # for people (`playbook why`) and the near-duplicate finder
    return {
        "analysis": "\n".join(lines),
        "bullet_tags": [
            {"name": i, "tag": tag, "rationale": f"{NOTICE} cited in a session with {errors} tool error(s)"}
            for i in cited
        ],
    }


def _curate(lessons: list[Finding]) -> dict[str, Any]:
    operations = [
        {
            "type": "ADD",
            "text": x.text,
            "section": x.section,
            "trigger": x.trigger,
            "lesson": x.lesson.model_dump(mode="json"),
        }
        | ({"tainted": x.taint} if x.taint else {})
        | ({"evidence": x.evidence} if x.evidence else {})
        for x in lessons
    ]
    return {
        "reasoning": f"{NOTICE} one ADD per rule-based lesson; duplicates are skipped by the engine.",
        "operations": operations[:MAX_OPERATIONS],
    }


class HeuristicProvider(Provider):
    """Deterministic, free, offline. Never raises."""

    name = "heuristic"
    cacheable = False

    def __init__(self, redactor: Redactor | None = None) -> None:
        self.redactor = redactor or Redactor()
        # Each session's lessons from its reflector step, with the evidence they were mined from (held by reference:
        # the curator step reuses them only when handed the very same objects, so they cannot differ).
        self._held: dict[str, tuple[Observed, History | None, str | None, list[Finding]]] = {}

    def _lessons(self, request: LLMRequest) -> list[Finding]:
        """The session's lessons: the reflector step's, held, when the curator step comes with the same evidence;
        else mined and redacted here (and held for the curator step when this is the reflector step)."""
        context = request.context
        observed, history, project = context.get("observed"), context.get("history"), context.get("project")
        key = request.session_id
        if key is not None and request.step == "curator" and observed is not None:
            held = self._held.pop(key, None)
            if held is not None and held[0] is observed and held[1] is history and held[2] == project:
                return held[3]
        lessons = heuristic_lessons(
            context.get("messages") or [], self.redactor, observed=observed, history=history, project=project
        )
        if key is not None and request.step == "reflector" and observed is not None:
            self._held.pop(key, None)  # re-inserted last: the oldest held go first
            self._held[key] = (observed, history, project, lessons)
            while len(self._held) > HELD_SESSIONS:
                del self._held[next(iter(self._held))]
        return lessons

    def complete(self, request: LLMRequest) -> LLMResponse:
        """Answer from `request.context` instead of a model."""
        try:
            context = request.context
            playbook = context["playbook"]
            lessons = self._lessons(request)
            if request.step == "curator":
                payload = _curate(lessons)
            else:
                reflected = _reflect(context["messages"], playbook, lessons)
                if request.step == "reflector":
                    payload = reflected
                else:
                    payload = {
                        "evaluations": [{"name": t["name"], "rating": t["tag"]} for t in reflected["bullet_tags"]],
                        "operations": _curate(lessons)["operations"],
                    }
        except (KeyError, TypeError) as exc:
            return LLMResponse(provider=self.name, model="heuristic", error=f"heuristic input missing: {exc}")
        return LLMResponse(text=json.dumps(payload, ensure_ascii=False), provider=self.name, model="heuristic")
