"""`playbook impact` on histories with a known truth (tests/histories.py): lessons that lower, leave alone or raise
their trigger's rate. Through the CLI on one history written in real shapes (session files and the hook's
ledger), the arms are exactly the history's; over many histories, the estimator finds the sign, its intervals
cover the truth, and a lesson with no effect is seldom called helpful."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from core.hooks import held_out
from core.impact import Arm, did_estimate, holdout_estimate
from flows.cli import app
from tests.helpers import claude_session
from tests.histories import (
    LESSONS,
    START,
    Session,
    holdout_arms,
    holdout_history,
    rollout_arms,
    rollout_history,
    write_history,
)

runner = CliRunner()
SEEDS = 200


def seeded_db(tmp_path: Path, history: list) -> tuple[str, dict[str, str]]:  # type: ignore[type-arg]
    """A database holding the history, its hook ledger merged, and the three lessons with their triggers (added by
    a session older than every other, through a replayed answer)."""
    db = tmp_path / "i.duckdb"
    write_history(history, tmp_path / "t", tmp_path / "hook" / "i-exposure.jsonl")
    turns = [("user", "set up"), ("assistant", [{"type": "text", "text": "ok"}])]
    claude_session(tmp_path / "t" / "seed" / "seed.jsonl", "seed", START - timedelta(days=60), turns)
    adds = [
        {"type": "ADD", "section": "MISTAKES TO AVOID", "text": f"Lesson about {x.trigger}.", "trigger": x.trigger}
        for x in LESSONS
    ]
    answers = tmp_path / "r.jsonl"
    answers.write_text(
        json.dumps({"session_id": "seed", "step": "reflector", "text": json.dumps({"analysis": "a"})})
        + "\n"
        + json.dumps({"session_id": "seed", "step": "curator", "text": json.dumps({"operations": adds})})
        + "\n"
    )
    env = {"PLAYBOOK_MIN_MESSAGES": "1", "PLAYBOOK_OUT_DIR": str(tmp_path / "out"), "PLAYBOOK_NEAR_DUPLICATES": "off"}
    assert runner.invoke(app, ["ingest", str(tmp_path / "t"), "--db", str(db)]).exit_code == 0
    done = runner.invoke(app, ["curate", "--llm", f"replay:{answers}", "--limit", "1", "--db", str(db)], env=env)
    assert done.exit_code == 0, done.output
    return str(db), env


@pytest.mark.slow
def test_impact_through_the_cli_counts_the_holdout_exactly(tmp_path: Path) -> None:
    history = holdout_history(seed=7, sessions=240)
    db, env = seeded_db(tmp_path, history)
    rows = {r["entry_id"]: r for r in json.loads(runner.invoke(app, ["impact", "--json", "--db", db], env=env).stdout)}
    assert set(rows) == {x.entry_id for x in LESSONS}
    for lesson in LESSONS:
        row = rows[lesson.entry_id]
        exposed, held = holdout_arms(history, lesson.entry_id)
        assert row["method"] == "holdout"
        assert (row["exposed"]["sessions"], row["exposed"]["triggered"]) == (exposed.sessions, exposed.triggered)
        assert (row["unexposed"]["sessions"], row["unexposed"]["triggered"]) == (held.sessions, held.triggered)
        expected = holdout_estimate(exposed, held)
        assert (row["effect"], row["ci_low"], row["ci_high"], row["verdict"]) == (
            expected.effect,
            expected.ci_low,
            expected.ci_high,
            expected.verdict,
        )
        assert {"entry_id", "text", "exposed", "unexposed", "effect", "ci_low", "ci_high", "verdict"} <= set(row)
        assert row["context_tokens"] == row["tokens"] * exposed.sessions
    assert rows["mis-001"]["verdict"] == "helps" and rows["mis-003"]["verdict"] == "hurts"
    one = runner.invoke(app, ["impact", "mis-001", "--db", db], env=env)
    assert one.exit_code == 0 and "helps" in one.stdout
    life = json.loads(runner.invoke(app, ["why", "mis-001", "--json", "--db", db], env=env).stdout)
    assert life["impact"]["verdict"] == "helps"
    stale = runner.invoke(app, ["stale", "--db", db], env=env)
    assert "mis-003" in stale.stdout and "mis-001" not in stale.stdout  # it hurts: a candidate, with its cost
    missing = runner.invoke(app, ["impact", "mis-404", "--db", db], env=env)
    assert missing.exit_code == 1 and missing.stderr.startswith("Error: No live entry `mis-404`")


@pytest.mark.slow
def test_impact_through_the_cli_without_a_holdout_is_a_difference_in_differences(tmp_path: Path) -> None:
    history = rollout_history(seed=3, per_period=25)
    db, env = seeded_db(tmp_path, history)
    rows = {r["entry_id"]: r for r in json.loads(runner.invoke(app, ["impact", "--json", "--db", db], env=env).stdout)}
    for lesson in LESSONS:
        arms = rollout_arms(history, lesson.entry_id)
        row = rows[lesson.entry_id]
        assert row["method"] == "diff-in-diff"
        got = [row["arms"][k] for k in ("before", "after", "control_before", "control_after")]
        # The session that added the lessons is one more that never had them, before the rollout.
        seed = arms[2].model_copy(update={"sessions": arms[2].sessions + 1})
        expected = (arms[0], arms[1], seed, arms[3])
        assert [(a["sessions"], a["triggered"]) for a in got] == [(a.sessions, a.triggered) for a in expected]
        assert row["verdict"] == did_estimate(*expected).verdict


@pytest.mark.slow
def test_impact_ignores_ledger_lines_of_sessions_that_predate_the_entry_or_were_never_stored(tmp_path: Path) -> None:
    """A hook can only give a session what exists when it starts: a ledger line (anyone can append one) that says
    an older session had the lessons, or names a session that is not stored, is counted by no arm, in `impact`,
    the report's figures, `stale` or adherence alike (they read `v_exposure`)."""
    history = holdout_history(seed=11, sessions=60)
    # A stored session from before the lessons existed, in which mis-001's situation came up, said to have had
    # mis-001 and to have been kept from the others; and a session never stored, said to have had them all.
    lessons = {x.entry_id for x in LESSONS}
    old = Session("before-1", "proj-0", START - timedelta(days=30), hooked=True, triggered={"mis-001"})
    old.shown, old.held = {"mis-001"}, lessons - {"mis-001"}
    ghost = Session("never-stored", "proj-1", START + timedelta(hours=1), hooked=True, shown=lessons)
    ledger = tmp_path / "hook" / "i-exposure.jsonl"
    write_history([old], tmp_path / "t", ledger)
    write_history([ghost], tmp_path / "elsewhere", ledger)  # its file is never ingested
    db, env = seeded_db(tmp_path, history)

    rows = {r["entry_id"]: r for r in json.loads(runner.invoke(app, ["impact", "--json", "--db", db], env=env).stdout)}
    for lesson in LESSONS:
        exposed, held = holdout_arms(history, lesson.entry_id)  # the history's own sessions, and only them
        row = rows[lesson.entry_id]
        assert row["method"] == "holdout"
        assert (row["exposed"]["sessions"], row["exposed"]["triggered"]) == (exposed.sessions, exposed.triggered)
        assert (row["unexposed"]["sessions"], row["unexposed"]["triggered"]) == (held.sessions, held.triggered)
    merged = "SELECT count(*) AS n FROM exposures WHERE session_id IN ('before-1', 'never-stored')"
    assert json.loads(runner.invoke(app, ["sql", merged, "--json", "--db", db]).stdout) == [{"n": 6}]  # merged...
    counted = "SELECT count(*) AS n FROM v_exposure WHERE session_id IN ('before-1', 'never-stored')"
    assert json.loads(runner.invoke(app, ["sql", counted, "--json", "--db", db]).stdout) == [{"n": 0}]  # ...not had


def _verdicts(design: str) -> dict[str, dict[str, float]]:
    found: dict[str, dict[str, float]] = {x.entry_id: {"cover": 0, "helps": 0, "hurts": 0} for x in LESSONS}
    for seed in range(SEEDS):
        history = holdout_history(seed) if design == "holdout" else rollout_history(seed)
        for x in LESSONS:
            arms = holdout_arms(history, x.entry_id) if design == "holdout" else rollout_arms(history, x.entry_id)
            est = holdout_estimate(*arms) if design == "holdout" else did_estimate(*arms)  # type: ignore[arg-type]
            assert est.ci_low is not None and est.ci_high is not None
            found[x.entry_id]["cover"] += (est.ci_low <= x.effect <= est.ci_high) / SEEDS
            found[x.entry_id]["helps"] += (est.verdict == "helps") / SEEDS
            found[x.entry_id]["hurts"] += (est.verdict == "hurts") / SEEDS
    return found


@pytest.mark.slow
def test_the_holdout_estimate_recovers_the_truth_over_many_histories() -> None:
    found = _verdicts("holdout")
    assert all(f["cover"] >= 0.9 for f in found.values()), found
    assert found["mis-002"]["helps"] <= 0.05 and found["mis-002"]["hurts"] <= 0.05  # no effect
    assert found["mis-001"]["helps"] >= 0.9 and found["mis-003"]["hurts"] >= 0.9  # the sign, found
    assert found["mis-001"]["hurts"] == 0 and found["mis-003"]["helps"] == 0


@pytest.mark.slow
def test_the_difference_in_differences_recovers_the_truth_over_many_histories() -> None:
    found = _verdicts("rollout")
    assert all(f["cover"] >= 0.9 for f in found.values()), found
    assert found["mis-002"]["helps"] <= 0.05 and found["mis-002"]["hurts"] <= 0.05
    assert found["mis-001"]["helps"] >= 0.7 and found["mis-003"]["hurts"] >= 0.5  # less power without randomising
    assert found["mis-001"]["hurts"] == 0 and found["mis-003"]["helps"] == 0


def test_too_few_sessions_is_said_as_such() -> None:
    few = holdout_estimate(Arm(sessions=19, triggered=1), Arm(sessions=200, triggered=40))
    assert (few.verdict, few.effect) == ("insufficient", None)
    assert did_estimate(Arm(sessions=50), Arm(sessions=50), Arm(sessions=5), Arm(sessions=50)).verdict == "insufficient"


@given(
    st.integers(0, 400).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))),
    st.integers(0, 400).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))),
)
def test_an_interval_holds_its_effect_and_its_verdict_follows_it(a: tuple[int, int], b: tuple[int, int]) -> None:
    est = holdout_estimate(Arm(sessions=a[0], triggered=a[1]), Arm(sessions=b[0], triggered=b[1]))
    if est.verdict == "insufficient":
        assert min(a[0], b[0]) < 20
        return
    assert est.ci_low is not None and est.ci_high is not None and est.effect is not None
    assert -1 <= est.effect <= 1 and est.ci_low < est.ci_high and -1.5 < est.ci_low and est.ci_high < 1.5
    assert est.verdict == ("helps" if est.ci_high < 0 else "hurts" if est.ci_low > 0 else "no-effect")


@given(st.text(min_size=1, max_size=20), st.floats(0.0, 0.5))
def test_the_holdout_is_the_same_for_a_session_every_time(session: str, share: float) -> None:
    first = held_out(session, "default", "pat-001", share)
    assert first == held_out(session, "default", "pat-001", share)
    assert not held_out(session, "default", "pat-001", 0.0)
