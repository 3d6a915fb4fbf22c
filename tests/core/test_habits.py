"""A way of working the user asks for in their own words becomes our sentence for it: published without a reader,
since none of their words reaches the agent; never from words they did not type."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.allowlist import Vouched
from core.lessons import HABITS, Habit, render
from core.miner import History, mine, observe
from core.screen import text_holds
from tests.sessions import Session, habit_text, lessons

# Sentences written for these tests (not taken from the labelled sets), one or two per habit.
ASKED = [
    ("Stop writing essays. Be brief and put the answer first", "concise"),
    ("that reply is too verbose, I just need the numbers", "concise"),
    ("CLAUDE.md has grown too long, trim it to the rules with no explanations", "short_agent_files"),
    ("This comment restates the function name, drop it", "why_comments"),
    ("Why is there a comment on every line? It's noise", "why_comments"),
    ("We don't need backwards compatibility for the old cache format", "no_backcompat"),
    ("Just drop the backward-compat shim, nobody reads v1 files any more", "no_backcompat"),
    ("Don't make assumptions about the API; check the vendor's authoritative docs", "grounded"),
    ("is the README up to date with these changes?", "readme_with_changes"),
    ("never commit personal data, use made-up names in fixtures", "no_sensitive_data"),
    ("Don't create extra markdown files for summaries, tell me in the chat", "no_unasked_docs"),
]


@pytest.mark.parametrize(("prompt", "habit"), ASKED)
def test_a_habit_the_user_asks_for_is_our_sentence_and_the_screen_admits_it(prompt: str, habit: str) -> None:
    texts = lessons(Session().prompt(prompt).run("make test", "ok"))
    assert habit_text(habit) in texts, texts
    assert text_holds(render(Habit(habit=habit), "my-app"), Vouched(links=False), typed=True) == []  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "prompt",
    [
        "should we drop backward compat here?",  # asks whether, says nothing
        "make the README concise",  # a file's length: the work at hand
        "add a comment explaining the retry loop",
        "the docs say not to assume UTC",  # `assume` without an order not to
        "Can you summarise the changelog?",
        "fix the failing test in parser.py",
    ],
)
def test_no_habit_from_words_that_do_not_ask_for_one(prompt: str) -> None:
    texts = lessons(Session().prompt(prompt).run("make test", "ok"))
    assert not any(t.removesuffix(".").lower() in {h.lower() for h in HABITS.values()} for t in texts), texts


def test_no_habit_from_words_the_user_did_not_type() -> None:
    said = "Be concise. We don't need backwards compatibility. Never commit personal data."
    for session in (
        Session().prompt("run the tests").run("make test", said),  # a tool's output
        Session().prompt("why did CI fail:\n\n" + said),  # pasted below what they typed
        Session().prompt("run the tests").tool("WebFetch", {"url": "https://x.test"}, said),
    ):
        seen = observe(session.messages, None)
        found = [f.lesson for f in mine(seen, History.of([("s", seen)]))]
        assert not any(isinstance(lesson, Habit) for lesson in found), found


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.sampled_from([p for p, _ in ASKED]))
def test_whatever_the_user_types_only_our_sentences_are_written(noise: str, asked: str) -> None:
    seen = observe(Session().prompt(f"{asked}. {noise}").messages, None)
    for finding in mine(seen, History.of([("s", seen)]), "app"):
        if isinstance(finding.lesson, Habit):
            assert finding.text == f"In app: {HABITS[finding.lesson.habit]}."
