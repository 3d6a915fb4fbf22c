"""A branch the user says the project uses ("since we use the branch name `renovate/reconfigure` for this kind of
change", "the branch is called release/next"): its name, typed, as a lesson an agent may read without a person
reading it first. The sentence it comes from says for what, in the user's words, and stays a quote that waits for
review (`core.said`); this lesson carries the name alone, checked as git checks a branch's name
(`core.lessons.BranchName`), never a word of the sentence around it."""

from __future__ import annotations

from collections.abc import Iterable

import re2
from pydantic import ValidationError

from core.candidates import Candidate
from core.lessons import BranchName, Preference

__all__ = ["branch_names"]

# The name after the words that introduce it: in quotes or backticks, or bare.
_NAME = "([`\"'\u201c\u2018]?)" r"([A-Za-z0-9_][A-Za-z0-9_./-]{0,99})"
# How a sentence says the project uses a branch: "we use (the branch name) X", "the branch is called X", "changes go
# on the branch X". Only what the user states of the project: not a question, not a branch to avoid (`_DENIED`).
_USES = re2.compile(
    r"(?i)(?:\bwe (?:use|name|call|keep)\b[^.;!?]{0,40}?\bbranch(?:es)?(?: (?:name[sd]?|called|named))?"
    r"|\bbranch(?:es)? (?:is|are) (?:always )?(?:called|named)"
    r"|\b(?:goes|go) (?:on|to|into) (?:a |the )?branch(?: (?:called|named))?) " + _NAME
)
_DENIED = re2.compile(r"(?i)\b(?:not|never|don'?t|do not|no|without|instead of|rather than|avoid)\b")
_SENTENCE_END = re2.compile(r"[.!?](?:\s|$)")
# A bare word is a branch's name only when it is shaped like one (`release/next`, `fix-123`), not an English word
# ("we use the branch name for ...").
_NAME_SHAPED = re2.compile(r"[/_\d-]")


def _named(text: str) -> Iterable[str]:
    """The branch names `text` says the project uses."""
    for match in _USES.finditer(text):
        before = text[: match.start()]
        start = max((m.end() for m in _SENTENCE_END.finditer(before)), default=0)
        after = _SENTENCE_END.search(text[match.end() :])
        asks = (text[match.end() + after.start()] if after else text.rstrip()[-1:]) == "?"
        if asks or _DENIED.search(before[start:]):
            continue  # a question, or a branch the sentence says not to use
        quote, name = match.group(1), match.group(2)
        name = name.rstrip("./")
        if quote or _NAME_SHAPED.search(name):
            yield name


def branch_names(preferences: Iterable[Preference]) -> list[Candidate]:
    """A candidate for each branch the user's words (`core.said`: what they typed as a lasting rule or a fact of the
    project) say the project uses, once each."""
    found: dict[str, Candidate] = {}
    for preference in preferences:
        for name in _named(preference.said):
            try:
                lesson = BranchName(branch=name)
            except ValidationError:
                continue
            found.setdefault(
                name,
                Candidate(key=f"branch|{name}", section="USER PREFERENCES", lesson=lesson, trigger=name),
            )
    return list(found.values())
