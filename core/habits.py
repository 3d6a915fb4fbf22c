"""The ways of working a user asks for in their own words, as typed lessons.

"Be concise", "we don't need backward compatibility", "the comment should say only the why": a user's sentence
that asks for one of a fixed few habits (`core.lessons.HABITS`) makes that habit's lesson, written as our sentence.
Their words only choose which of our sentences is written; none of them reaches the agent, so the lesson needs no
reader, where a quote of the same words waits in `playbook review`. Read in what the user typed of their prompts
only (`core.said.typed_words`: not what they pasted, not a tool's output, not a sub-agent's prompt).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import re2

from core.lessons import Habit, HabitName
from core.models import SessionMessage
from core.said import sentences, some_sentence, typed_words

__all__ = ["habits"]


@dataclass(frozen=True)
class _Cue:
    """The first pattern must match a sentence and the others it or the next few (`_WINDOW`); `unless`, when it
    matches that sentence, says it is about something else; `asking`: a question may ask for it ("does the readme
    reflect the changes?", "why the comment?")."""

    habit: HabitName
    every: tuple[re2._Regexp, ...]
    unless: re2._Regexp | None = None
    asking: bool = False


def _re(pattern: str) -> re2._Regexp:
    return re2.compile("(?i)" + pattern)


_NOT = r"(?:don'?t|do not|never|no need to|stop|no)"
_COMPAT = r"backwards?[- ]compat\w*"
_CUES = (
    _Cue(
        "concise",
        (_re(r"\b(?:concise(?:ly)?|too verbose|too long to read|be brief|briefly|shorter answers?)\b"),),
        # how concise a file or a comment should be is another habit's, or the work at hand's
        unless=_re(r"\b(?:agents\.md|claude\.md|readme|comments?|docstrings?|commit|code|function|variable|title)\b"),
    ),
    _Cue(
        "short_agent_files",
        (_re(r"\b(?:agents|claude)\.md\b"), _re(r"\b(?:concise|short(?:er)?|terse|no explanations?|too long)\b")),
    ),
    _Cue(
        "why_comments",
        (
            _re(r"\bcomments?\b"),
            _re(
                r"\b(?:only the why|the why\b|not the what|say(?:s)? the .?what|restat\w+|irrelevant|what'?s its value"
                r"|too (?:big|long|many)|noise|unnecessary|redundant)"
            ),
        ),
        asking=True,
    ),
    _Cue(
        "no_backcompat",
        (
            _re(
                r"\b(?:(?:don'?t|do not|no|won'?t) (?:need|want|keep|add|care about|bother with) (?:any |the )?"
                rf"{_COMPAT}|no {_COMPAT}|hard[- ]deprecat\w*|(?:drop|skip|remove) (?:the )?{_COMPAT})"
            ),
        ),
    ),
    _Cue(
        "grounded",
        (
            _re(
                r"\b(?:(?:don'?t|do not|never|stop) (?:make |making )?assum\w*|without assum\w*"
                r"|authoritative (?:documentation|docs|sources?)"
                r"|ground (?:your |the |all )?(?:decisions|recommendations|claims|answers|findings))"
            ),
        ),
    ),
    _Cue(
        "readme_with_changes",
        (
            _re(r"\breadme\b"),
            _re(r"\b(?:reflect\w*|up[- ]to[- ]date|update[sd]?|in sync)\b"),
            _re(r"\bchanges?\b|\bnew (?:features?|options?|commands?|flags?)\b"),
        ),
        asking=True,
    ),
    _Cue(
        "no_sensitive_data",
        (
            _re(
                r"\b(?:never|don'?t|do not|without) (?:ever )?(?:push|commit|include|share|expose|put)\w* (?:any )?"
                r"(?:sensitive|personal|private) (?:data|info\w*|details)"
            ),
        ),
    ),
    _Cue(
        "no_unasked_docs",
        (
            _re(
                rf"\b(?:{_NOT} (?:creat|writ|add|mak)\w* (?:new |extra |separate |more |any )*"
                r"(?:docs?|documentation|markdown|summary|summaries)(?: files?| pages?| documents?)"
                r"|removed (?:the |those |these |all )?(?:new |extra )?(?:docs?|documentation|markdown) files?)"
            ),
        ),
    ),
)
# A cue's words may fall in neighbouring sentences ("Why the comment in `.gitignore`? ... Delete if its irrelevant").
_WINDOW = 3


def _asks(sentence: str) -> bool:
    return sentence.rstrip().endswith("?")


def habits(messages: Sequence[SessionMessage]) -> list[Habit]:
    """The habits the user asked for in the session's prompts, each once, in the order first asked."""
    found: dict[HabitName, Habit] = {}
    for m in messages:
        if not m.is_prompt or m.is_sidechain or not m.text or (typed := typed_words(m.text)) is None:
            continue
        split = sentences(typed)
        # the cues whose first words some sentence says: the others cost one search, not one a sentence
        said = [cue for cue in _CUES if cue.habit not in found and some_sentence(cue.every[0], split)]
        for i, sentence in enumerate(split if said else ()):
            for cue in said:
                if cue.habit in found or not cue.every[0].search(sentence):
                    continue
                if (not cue.asking and _asks(sentence)) or (cue.unless is not None and cue.unless.search(sentence)):
                    continue
                # the window opens at the sentence that says the first thing, so each habit is read once from it
                near = " ".join(s for s in split[i : i + _WINDOW] if cue.asking or not _asks(s))
                if all(p.search(near) for p in cue.every[1:]):
                    found[cue.habit] = Habit(habit=cue.habit)
    return list(found.values())
