"""The `heuristic` provider: no model at all; the rules miner (`core.miner`) over the normalised session.

Its lessons are the miner's: the project's own commands, corrections the session's commands show, test
commands that select nothing, and what the user said when they stopped a call or corrected the agent, each
with its evidence. A playbook id cited in a session without tool errors gets a helpful tag (neutral when errors
occurred). Its output says plainly that no model was used. It answers the same requests as the live provider
and its text goes through the same extraction and validation.
"""

from __future__ import annotations

import json
import re
from typing import Any

from core.llm.base import LLMRequest, LLMResponse, Provider
from core.miner import Finding, History, Observed, mine, observe
from core.models import MAX_OPERATIONS, Playbook, ReflectorOutput, SessionMessage
from core.redact import Redactor

__all__ = ["NOTICE", "HeuristicProvider", "heuristic_lessons"]

NOTICE = "[heuristic: no model was used]"
_LESSON = re.compile(
    r"^LESSON \[(?P<section>[^\]]+)\] (?P<text>.+)$(?:\nTRIGGER (?P<trigger>.+)$)?(?:\nTAINTED (?P<taint>.+)$)?"
    r"(?:\nEVIDENCE (?P<evidence>.+)$)?",
    re.MULTILINE,
)


def heuristic_lessons(
    messages: list[SessionMessage],
    redactor: Redactor | None = None,
    *,
    observed: Observed | None = None,
    history: History | None = None,
    project: str | None = None,
) -> list[Finding]:
    """The miner's findings for a session, with secrets and personal data taken out of the quoted text.
    Without `history`, the session is its own evidence (the hook scripts' API sees one session)."""
    redactor = redactor or Redactor()
    seen = observed if observed is not None else observe(messages)
    found = mine(seen, history if history is not None else History.of([("this session", seen)]), project)
    return [f.model_copy(update={"text": redactor.text(f.text), "trigger": redactor.text(f.trigger)}) for f in found]


def _cited_ids(messages: list[SessionMessage], playbook: Playbook) -> list[str]:
    ids = [e.name for _, e in playbook.entries()]
    if not ids:
        return []
    text = "\n".join((m.text or "") + (m.tool_input or "") for m in messages if not m.is_meta)
    return [i for i in ids if re.search(rf"(?<![\w-]){re.escape(i)}(?![\w-])", text)]


def _reflect(
    messages: list[SessionMessage], playbook: Playbook, redactor: Redactor, context: dict[str, Any]
) -> dict[str, Any]:
    errors = sum(1 for m in messages if m.kind == "tool_result" and m.is_error)
    lessons = heuristic_lessons(
        messages,
        redactor,
        observed=context.get("observed"),
        history=context.get("history"),
        project=context.get("project"),
    )
    cited = _cited_ids(messages, playbook)
    tag = "neutral" if errors else "helpful"
    lines = [
        f"{NOTICE} Rules applied to {len(messages)} message parts: {errors} tool error(s),"
        f" {len(lessons)} lesson(s), {len(cited)} cited playbook id(s)."
    ]
    for x in lessons:
        lines += [f"LESSON [{x.section}] {x.text}", f"TRIGGER {x.trigger}"]
        lines += [f"TAINTED {x.taint}"] if x.taint else []
        lines += [f"EVIDENCE {x.evidence}"] if x.evidence else []
    return {
        "analysis": "\n".join(lines),
        "bullet_tags": [
            {"name": i, "tag": tag, "rationale": f"{NOTICE} cited in a session with {errors} tool error(s)"}
            for i in cited
        ],
    }


def _curate(reflection: ReflectorOutput) -> dict[str, Any]:
    operations = [
        {"type": "ADD", "text": m.group("text"), "section": m.group("section"), "trigger": m.group("trigger")}
        | ({"tainted": m.group("taint")} if m.group("taint") else {})
        | ({"evidence": m.group("evidence")} if m.group("evidence") else {})
        for m in _LESSON.finditer(reflection.analysis)
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

    def complete(self, request: LLMRequest) -> LLMResponse:
        """Answer from `request.context` instead of a model."""
        try:
            playbook = request.context["playbook"]
            if request.step == "curator":
                payload = _curate(request.context["reflection"])
            else:
                reflected = _reflect(request.context["messages"], playbook, self.redactor, request.context)
                if request.step == "reflector":
                    payload = reflected
                else:
                    curated = _curate(ReflectorOutput(analysis=reflected["analysis"]))
                    payload = {
                        "evaluations": [{"name": t["name"], "rating": t["tag"]} for t in reflected["bullet_tags"]],
                        "operations": curated["operations"],
                    }
        except (KeyError, TypeError) as exc:
            return LLMResponse(provider=self.name, model="heuristic", error=f"heuristic input missing: {exc}")
        return LLMResponse(text=json.dumps(payload, ensure_ascii=False), provider=self.name, model="heuristic")
