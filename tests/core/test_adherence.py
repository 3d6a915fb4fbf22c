"""Adherence on histories with a known truth: sessions that followed a command lesson, ignored it, or never met its
situation are told apart exactly, and the holdout's comparison recovers the true difference."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.adherence import outcome, simple_of, tally
from core.guards import guards_of
from core.hooks import simple_commands
from core.impact import Arm, holdout_estimate
from core.lessons import Command, CommandFact, Correction, HiddenFailure, render

NPM = Correction(how="program", failed=Command(words=("npm", "install")), worked=Command(words=("pnpm", "install")))
GUARDS = [g.model_dump() for g in guards_of(NPM, playbook="default", entry="mis-001", text=render(NPM, None))]
FOLLOWED, IGNORED, NOTHING = "pnpm install --frozen-lockfile", "npm install left-pad", "ls -la"


def session(truth: str | None, noise: list[str]) -> list[tuple[str, str | None, str | None]]:
    """A session's stored commands: unrelated ones, then the lesson's situation as `truth` says."""
    commands = [(c, None, None) for c in noise]
    if truth is not None:
        commands.append((FOLLOWED if truth == "followed" else IGNORED, None, None))
        commands.append((IGNORED if truth == "followed" else FOLLOWED, None, None))  # only the first counts
    return commands


NOISE = st.lists(st.sampled_from(["ls -la", "git status", "pytest -q", "cat README.md", "pnpm-lock check"]), max_size=5)


@given(st.sampled_from(["followed", "ignored", None]), NOISE)
def test_a_session_s_first_command_about_the_lesson_decides(truth: str | None, noise: list[str]) -> None:
    got = outcome(GUARDS, (simple_of(*c) for c in session(truth, noise)), "/src/app")
    assert got == truth


@pytest.mark.parametrize(
    ("lesson", "followed", "ignored"),
    [
        (CommandFact(category="test", command=Command(words=("uv", "run", "pytest"))), "uv run pytest -q", "pytest -q"),
        (
            Correction(
                how="folder",
                failed=Command(words=("node", "build.js")),
                worked=Command(words=("node", "build.js"), folder="assets"),
            ),
            "cd assets && node build.js",
            "node build.js",
        ),
        (HiddenFailure(command=Command(words=("mix", "test")), filter="tail"), "mix test", "mix test 2>&1 | tail -5"),
    ],
)
def test_each_kind_of_command_lesson_is_followed_or_ignored(lesson: object, followed: str, ignored: str) -> None:
    guards = [g.model_dump() for g in guards_of(lesson, playbook="default", entry="x", text="x")]  # type: ignore[arg-type]
    assert outcome(guards, simple_commands(followed), "/src/app") == "followed"
    assert outcome(guards, simple_commands(ignored), "/src/app") == "ignored"
    assert outcome(guards, simple_commands("git status"), "/src/app") is None


def test_the_holdout_recovers_how_much_the_lesson_changes_what_agents_do() -> None:
    """Over 200 histories of 300 sessions each (a third never meet the situation), agents that had the lesson follow
    it 80 % of the time and agents without it 30 %: the counts are the truth exactly, and the 95 % interval on the
    share ignored covers the true -50 points in about 95 % of histories and calls it `helps` in every one."""
    covered = helps = 0
    for seed in range(200):
        rng = random.Random(seed)
        commands, truth = {}, {}
        for i in range(300):
            held = i % 2 == 1
            fired = rng.random() < 2 / 3
            kind = ("followed" if rng.random() < (0.3 if held else 0.8) else "ignored") if fired else None
            commands[f"s{i}"] = ("/src/app", session(kind, ["git status"]))
            truth[f"s{i}"] = kind
        shown = [s for s in commands if int(s[1:]) % 2 == 0]
        held_out = [s for s in commands if int(s[1:]) % 2 == 1]
        had, kept = tally(GUARDS, shown, commands), tally(GUARDS, held_out, commands)
        assert had.fired == sum(truth[s] is not None for s in shown)
        assert had.followed == sum(truth[s] == "followed" for s in shown)
        assert kept.followed == sum(truth[s] == "followed" for s in held_out)
        est = holdout_estimate(
            Arm(sessions=had.fired, triggered=had.fired - had.followed),
            Arm(sessions=kept.fired, triggered=kept.fired - kept.followed),
        )
        assert est.ci_low is not None and est.ci_high is not None
        covered += est.ci_low <= -0.5 <= est.ci_high
        helps += est.verdict == "helps"
    assert covered >= 180 and helps == 200
