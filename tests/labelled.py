"""The labelled set of data/lessons/mined.json and how a playbook scores against it (the miner's test and bench
share this): recall of the labelled lessons, the share of entries that match one, and junk."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LABELLED = ROOT / "data" / "lessons" / "mined.json"

# What the agent's own tools already enforce or report: a lesson that restates one is noise.
TOOL_RULES = re.compile(
    r"(?i)has not been read yet|read it first|string to replace not found|found \d+ matches of the string|"
    r"exceeds maximum allowed tokens|sibling tool call errored|is not running, so cannot be killed|"
    r"doesn't want to (?:proceed|take this action)"
)
PATH = re.compile(r"(?:/Users/|/home/|~/|[A-Za-z]:\\\\)\S+")
BARE_EXIT = re.compile(r'(?i)fails with "?(?:exit code \d+|error)"?[,:.]')


@dataclass
class Score:
    """How a set of entries does against the labelled lessons."""

    lessons: int
    entries: int
    found: list[str] = field(default_factory=list)  # ids of labelled lessons some entry matches
    matching: list[str] = field(default_factory=list)  # entries that match a labelled lesson
    junk: dict[str, list[str]] = field(default_factory=dict)  # kind -> entries

    @property
    def recall(self) -> float:
        """The share of labelled lessons some entry states."""
        return len(self.found) / self.lessons if self.lessons else 0.0

    @property
    def precision(self) -> float:
        """The share of entries that state a labelled lesson."""
        return len(self.matching) / self.entries if self.entries else 0.0

    @property
    def junk_count(self) -> int:
        """Entries of a junk kind."""
        return sum(len(v) for v in self.junk.values())


def labelled() -> dict[str, Any]:
    """The labelled set."""
    data: dict[str, Any] = json.loads(LABELLED.read_text(encoding="utf-8"))
    return data


def _has(text: str, token: str | list[str]) -> bool:
    low = text.lower()
    return any(t.lower() in low for t in token) if isinstance(token, list) else token.lower() in low


def matches(text: str, lesson: dict[str, Any]) -> bool:
    """True when `text` holds every token of `lesson`."""
    return all(_has(text, t) for t in lesson["tokens"])


def _shape(text: str) -> str:
    """The text with paths and numbers set aside, for "the same lesson twice"."""
    return re.sub(r"\d+", "N", PATH.sub("PATH", re.sub(r"`[^`]*/[^`]*`", "`PATH`", text))).lower()


def score(entries: list[str]) -> Score:
    """Score entry texts against every labelled lesson."""
    lessons = [lesson for s in labelled()["sessions"].values() for lesson in s["lessons"]]
    result = Score(lessons=len(lessons), entries=len(entries))
    result.found = [lesson["id"] for lesson in lessons if any(matches(e, lesson) for e in entries)]
    result.matching = [e for e in entries if any(matches(e, lesson) for lesson in lessons)]
    junk: dict[str, list[str]] = {"path_as_fix": [], "tool_rule": [], "bare_exit_code": [], "same_twice": []}
    seen: set[str] = set()
    for e in entries:
        if PATH.search(e):
            junk["path_as_fix"].append(e)
        if TOOL_RULES.search(e):
            junk["tool_rule"].append(e)
        if BARE_EXIT.search(e):
            junk["bare_exit_code"].append(e)
        if _shape(e) in seen:
            junk["same_twice"].append(e)
        seen.add(_shape(e))
    result.junk = {k: v for k, v in junk.items() if v}
    return result
