"""The `heuristic` provider: no model at all, deterministic rules over the normalised session.

- a tool error followed by a successful call of the same tool -> a MISTAKES TO AVOID lesson;
- an explicit user correction ("no, ...", "don't ...", "instead ...") -> a USER PREFERENCES lesson;
- a playbook id cited in a session without tool errors -> a helpful tag (neutral when errors occurred).

Its output says plainly that no model was used. It answers the same requests as the live provider and
its text goes through the same extraction and validation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from core.llm.base import LLMRequest, LLMResponse, Provider
from core.models import MAX_OPERATIONS, Playbook, ReflectorOutput, SessionMessage
from core.redact import Redactor
from core.screen import text_holds, url_hosts

__all__ = ["NOTICE", "Finding", "HeuristicProvider", "heuristic_lessons", "raw_findings"]

NOTICE = "[heuristic: no model was used]"
_LESSON = re.compile(
    r"^LESSON \[(?P<section>[^\]]+)\] (?P<text>.+)$(?:\nTRIGGER (?P<trigger>.+)$)?(?:\nTAINTED (?P<taint>.+)$)?",
    re.MULTILINE,
)
_CORRECTION = re.compile(
    r"^\s*(no[,.! ]|nope\b|don'?t\b|do not\b|stop\b|instead\b|actually\b|never\b|always\b|please don'?t\b|"
    r"that'?s (?:wrong|not)\b|wrong\b|not like that\b|use \S+ instead\b)",
    re.IGNORECASE,
)
_REJECTED = "The user doesn't want to"  # a refusal by the user, not a failure of the tool
_INFORMATIVE = re.compile(r"(?i)(error|failed|failure|exception|not found|no such|denied|invalid|cannot|unable)")
MAX_LESSONS = 4


def _first_line(text: str, limit: int) -> str:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    line = re.sub(r"\s+", " ", line)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _error_line(text: str, limit: int) -> str:
    """The most telling line of an error: the first that names an error, else the first non-empty one."""
    lines = [line.strip() for line in text.splitlines() if line.strip().strip("=-_ ")]
    telling = [line for line in lines if _INFORMATIVE.search(line) and not line.lower().startswith("traceback")]
    return _first_line((telling or lines or [""])[0], limit)


def _describe_input(name: str, raw: str | None) -> str:
    try:
        value = json.loads(raw or "")
    except ValueError:
        return _first_line(raw or "", 120)
    if isinstance(value, dict):
        for key in ("command", "cmd", "file_path", "path", "pattern", "query", "url"):
            if isinstance(value.get(key), str | list):
                shown = value[key] if isinstance(value[key], str) else " ".join(map(str, value[key]))
                return _first_line(shown, 120)
    return _first_line(json.dumps(value), 120)


class Finding(NamedTuple):
    """A lesson the rules found: its section and text, the literal it came from (`trigger`: the error line, the
    user's words), and why it must not be exported unseen (`taint`: its fix was copied from text the agent read
    rather than written by the user), or None."""

    section: str
    text: str
    trigger: str
    taint: str | None = None


# A fix shorter than this is too common to say where it was copied from.
_TAINT_MIN_CHARS = 12


def _taint(fix: str, read: list[str], prompts: list[str]) -> str | None:
    """Why `fix` rests only on what the agent read: it occurs in tool output (a fetched page, a command's output)
    before the agent ran it, and in none of the user's prompts."""
    needle = fix.strip()
    if len(needle) < _TAINT_MIN_CHARS or any(needle in p for p in prompts):
        return None
    if any(needle in r for r in read):
        return f"its fix `{_first_line(needle, 60)}` was copied from tool output, not from anything the user wrote"
    return None


def raw_findings(messages: list[SessionMessage]) -> list[Finding]:
    """The lessons the rules find, in session order, before any redaction. Only the user's own words and the
    session's own successful actions make a lesson: a fix the screen would hold (`core.screen`: a fetched command
    run, a destructive or credential command, an instruction to the agent, a stranger's host) is never proposed,
    and one copied from tool output is marked `taint` (held at export until a person releases it)."""
    lessons: list[Finding] = []
    calls: dict[str, tuple[str, str | None]] = {}
    failed: dict[str, str] = {}  # tool name -> first error line, waiting for a successful retry
    read: list[str] = []  # tool output so far: what the agent read, written by anyone
    prompts = [m.text for m in messages if m.is_prompt and m.text]
    hosts = {h for p in prompts for h in url_hosts(p)}
    for m in messages:
        if m.is_sidechain or m.is_meta:
            continue
        if m.kind == "tool_use" and m.tool_use_id:
            calls[m.tool_use_id] = (m.tool_name or "tool", m.tool_input)
        elif m.kind == "tool_result" and m.tool_use_id in calls:
            name, raw_input = calls[m.tool_use_id]
            text = m.text or ""
            if m.is_error and _REJECTED not in text:
                failed.setdefault(name, _error_line(text, 100) or "an error")
            elif not m.is_error and name in failed:
                error = failed.pop(name)
                fix = _describe_input(name, raw_input)
                lesson = f'When `{name}` fails with "{error}", do what worked next: {fix}'
                if not text_holds(lesson, hosts):
                    lessons.append(Finding("MISTAKES TO AVOID", lesson, error[:80], _taint(fix, read, prompts)))
            read.append(text)
        elif m.is_prompt and m.text and _CORRECTION.match(m.text):
            said = _first_line(m.text, 160)
            lesson = f'Follow the user\'s correction: "{said}"'
            if not text_holds(lesson, hosts):
                lessons.append(Finding("USER PREFERENCES", lesson, said[:80]))
    return lessons


def heuristic_lessons(messages: list[SessionMessage], redactor: Redactor | None = None) -> list[Finding]:
    """`raw_findings` with secrets and personal data taken out of the quoted text, at most MAX_LESSONS."""
    redactor = redactor or Redactor()
    found = dict.fromkeys(
        f._replace(text=redactor.text(f.text), trigger=redactor.text(f.trigger)) for f in raw_findings(messages)
    )
    return list(found)[:MAX_LESSONS]


def _cited_ids(messages: list[SessionMessage], playbook: Playbook) -> list[str]:
    ids = [e.name for _, e in playbook.entries()]
    if not ids:
        return []
    text = "\n".join((m.text or "") + (m.tool_input or "") for m in messages if not m.is_meta)
    return [i for i in ids if re.search(rf"(?<![\w-]){re.escape(i)}(?![\w-])", text)]


def _reflect(
    messages: list[SessionMessage], playbook: Playbook, redactor: Redactor, elsewhere: Mapping[str, int] | None
) -> dict[str, Any]:
    errors = sum(1 for m in messages if m.kind == "tool_result" and m.is_error)
    found = heuristic_lessons(messages, redactor)
    # In a pipeline run, a rule proposes only an error-then-fix whose error other sessions hit too: one
    # session's accident is not a lesson. (The hook scripts' API sees one session and keeps every finding.)
    lessons = found
    if elsewhere is not None:
        lessons = [x for x in found if x.section == "MISTAKES TO AVOID" and elsewhere.get(x.trigger, 0) >= 1]
    cited = _cited_ids(messages, playbook)
    tag = "neutral" if errors else "helpful"
    held = len(found) - len(lessons)
    lines = [
        f"{NOTICE} Rules applied to {len(messages)} message parts: {errors} tool error(s),"
        f" {len(lessons)} lesson(s), {len(cited)} cited playbook id(s)."
        + (f" {held} finding(s) seen in no other session were left out." if held else "")
    ]
    for x in lessons:
        lines += [f"LESSON [{x.section}] {x.text}", f"TRIGGER {x.trigger}"] + (
            [f"TAINTED {x.taint}"] if x.taint else []
        )
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
                reflected = _reflect(
                    request.context["messages"], playbook, self.redactor, request.context.get("elsewhere")
                )
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
