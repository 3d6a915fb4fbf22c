"""Adherence on histories with a known truth: sessions that followed a command lesson, ignored it, or never met its
situation are told apart exactly, and the holdout's comparison recovers the true difference."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.actions import call_actions
from core.adherence import outcome, simple_of, tally
from core.guards import guards_of
from core.hooks import guard_answer, simple_commands
from core.impact import Arm, holdout_estimate
from core.lessons import Command, CommandFact, Correction, HiddenFailure, render
from tests.profiles import examples

NPM = Correction(how="program", failed=Command(words=("npm", "install")), worked=Command(words=("pnpm", "install")))
GUARDS = [g.model_dump() for g in guards_of(NPM, playbook="default", entry="mis-001", text=render(NPM, None))]
FOLLOWED, IGNORED, NOTHING = "pnpm install --frozen-lockfile", "npm install left-pad", "ls -la"


def session(truth: str | None, noise: list[str]) -> list[tuple[tuple[str, ...], str | None, None, None]]:
    """A session's stored commands (words, folder, pipe, here document): unrelated ones, then the lesson's situation
    as `truth` says."""
    lines = list(noise)
    if truth is not None:
        lines.append(FOLLOWED if truth == "followed" else IGNORED)
        lines.append(IGNORED if truth == "followed" else FOLLOWED)  # only the first counts
    return [(tuple(line.split()), None, None, None) for line in lines]


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


# The invariant: adherence reads a stored command as the PreToolUse hook reads the live line.
MODULE = Correction(
    how="module",
    failed=Command(words=("python3",)),
    worked=Command(words=("uv", "run", "python3")),
    modules=("yaml",),
)
LESSONS: dict[str, Correction | HiddenFailure] = {
    "module": MODULE,
    "program": NPM,
    "folder": Correction(
        how="folder",
        failed=Command(words=("node", "build.js")),
        worked=Command(words=("node", "build.js"), folder="assets"),
    ),
    "hidden": HiddenFailure(command=Command(words=("mix", "test")), filter="tail"),
}
CWD = "/src/app"
_STATEMENTS = ["import yaml", "import json", "import os, sys", "from yaml import safe_load", "print(1 + 2)", "x = 1"]
_NOISE_LINES = ["ls -la", "git status", 'echo "a  b"', "cat README.md", "grep -n 'x y' notes.txt"]


@st.composite
def lines(draw: st.DrawFn, kind: str) -> tuple[str, bool]:
    """A command line of the kind a session runs (a `cd` before, quotes, code given by `-c` or a here document,
    pipes, other commands around), and whether the lesson's situation comes up in it."""
    code = draw(st.sampled_from(["; ", "\n"])).join(
        draw(st.lists(st.sampled_from(_STATEMENTS), min_size=1, max_size=3))
    )
    pipe = draw(st.sampled_from(["", " | tail -5", " 2>&1 | tail -3", " | grep -v x"]))
    body = None
    if kind == "module":
        program = draw(st.sampled_from(["python3", "/usr/bin/python3", "uv run python3"]))
        how = draw(st.sampled_from(["c2", "c1", "doc", "doc-", "m", "script", "scratch", "version"]))
        if how in ("doc", "doc-"):
            head, body = f"{program}{' -' if how == 'doc-' else ''} <<'EOF'", code
        else:
            head = {
                "c2": f'{program} -c "{code}"',
                "c1": f"{program} -c '{code}'",
                "m": f"{program} -m {draw(st.sampled_from(['yaml', 'json', 'pytest']))}",
                "script": f"{program} tools/gen.py",
                "scratch": f"{program} /tmp/scratch.py",
                "version": f"{program} --version",
            }[how]
    else:
        head = draw(
            st.sampled_from(
                {
                    "program": ["npm install", "npm install --save 'left pad'", "pnpm install", "/usr/bin/npm install"],
                    "folder": ["node build.js", "node build.js --out 'dist dir'"],
                    "hidden": ["mix test", 'mix test --only "slow one"'],
                }[kind]
            )
        )
    main = draw(st.booleans())
    folder = draw(st.sampled_from(["", "assets", "web", "/src/app/assets"]))
    before = [f"cd {folder}"] if folder else []
    before += draw(st.lists(st.sampled_from(_NOISE_LINES), max_size=2))
    after = draw(st.lists(st.sampled_from(_NOISE_LINES), max_size=2))
    joiner = draw(st.sampled_from([" && ", "; ", "\n"]))
    line = joiner.join([*before, head + pipe if main else "ls"])
    if main and body is not None:
        line += f"\n{body}\nEOF"
        joiner = "\n"  # what follows a here document starts on a line of its own
    return (joiner.join([line, *after]) if after else line), main


def _snapshot(guards: list[dict[str, object]]) -> dict[str, object]:
    """The hook snapshot of one playbook holding `guards` (what `playbook hook` writes for the PreToolUse hook)."""
    return {"holdout": 0.0, "playbooks": [{"name": "default", "version": 1, "entries": [], "guards": guards}]}


@settings(max_examples=examples(300), deadline=None)
@given(st.sampled_from(sorted(LESSONS)).flatmap(lambda kind: st.tuples(st.just(kind), lines(kind))))
def test_adherence_reads_a_stored_command_as_the_hook_reads_the_live_line(case: tuple[str, tuple[str, bool]]) -> None:
    kind, (line, comes_up) = case
    guards = [g.model_dump() for g in guards_of(LESSONS[kind], playbook="default", entry="e-1", text="lesson")]
    stored = call_actions([(1, "Bash", json.dumps({"command": line}))])
    got = outcome(guards, (simple_of(a.words, a.folder, a.piped_into, a.stdin) for a in stored), CWD)
    _, _, given_ = guard_answer(_snapshot(guards), "s-1", CWD, line)
    live = ("ignored" if given_ else "followed") if comes_up else None
    assert got == live


def test_old_split_words_misread_the_code_that_minus_c_is_given() -> None:
    """What the stored text gave adherence before: `python3 -c import yaml` is code `import`, which does not parse,
    so the call needing `yaml` read as followed; its words read `yaml` and the lesson as ignored."""
    guards = [g.model_dump() for g in guards_of(MODULE, playbook="default", entry="e-1", text="lesson")]
    (action,) = call_actions([(1, "Bash", json.dumps({"command": 'python3 -c "import yaml"'}))])
    assert outcome(guards, [simple_of(action.text.split(" "), None)], CWD) == "followed"
    assert outcome(guards, [simple_of(action.words, None)], CWD) == "ignored"
