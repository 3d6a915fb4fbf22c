"""Curation runs below the Prefect level: exact playbooks from replayed model texts, idempotency, resume
after a killed run with no call paid twice, failed calls retried next run, and one run per database."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from core.errors import ConfigError, DatabaseBusyError
from core.io.lock import run_lock
from core.llm.base import LLMRequest, LLMResponse
from core.selection import SessionFilter
from core.store.db import open_db
from core.store.history import history
from core.store.ingest import ingest
from core.store.versions import load_version
from flows.config import Settings
from flows.run.curation import run_curation
from flows.workspace import Workspace
from tests.helpers import expose
from tests.servers import HOLD_LOCK, lock_holder

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "data" / "samples" / "claude-code"
# Three real sessions, oldest first (2025-07-05, 2025-07-14, 2025-09-03).
SESSIONS = [
    "0d3a8e6f-290f-4105-a327-a2496e5e2a83",
    "37f83ec9-f2ea-42a9-925e-0d5c105cb6e8",
    "fe5e1c67-53e7-4862-81ae-d0e013e3270b",
]


def fenced(obj: dict[str, Any]) -> str:
    return "Here is my answer:\n```json\n" + json.dumps(obj) + "\n```"


REPLAY: list[dict[str, Any]] = [
    {
        "session_id": SESSIONS[0],
        "step": "reflector",
        "text": fenced({"analysis": "tests were run blindly", "bullet_tags": []}),
    },
    {
        "session_id": SESSIONS[0],
        "step": "curator",
        "text": fenced(
            {
                "reasoning": "two lessons",
                "operations": [
                    {
                        "type": "ADD",
                        "text": "Run the narrowest failing test first.",
                        "section": "patterns & approaches",
                    },
                    {"type": "ADD", "text": "Read the first assertion before editing.", "section": "MISTAKES TO AVOID"},
                    {"type": "DELETE", "target_id": "pat-404", "reason": "hallucinated"},
                ],
            }
        ),
    },
    {
        "session_id": SESSIONS[1],
        "step": "reflector",
        "text": json.dumps(
            {
                "analysis": "cache tests",
                "bullet_tags": [
                    {"name": "pat-001", "tag": "helpful", "rationale": "ran one test"},
                    {"name": "mis-001", "tag": "harmful", "rationale": "misled"},
                ],
            }
        ),
    },
    {
        "session_id": SESSIONS[1],
        "step": "curator",
        "text": json.dumps(
            {
                "reasoning": "sharpen",
                "operations": [
                    {
                        "type": "UPDATE",
                        "target_id": "pat-001",
                        "text": "Run the narrowest failing test first (pytest -x -k).",
                    },
                    {"type": "ADD", "text": "Keep cache versions in one constant.", "section": "PROJECT CONTEXT"},
                ],
            }
        ),
    },
    {
        "session_id": SESSIONS[2],
        "step": "reflector",
        "text": "Analysis follows. "
        + json.dumps(
            {
                "analysis": "setup session",
                "bullet_tags": [
                    {"name": "mis-001", "tag": "harmful", "rationale": "x"},
                    {"name": "ctx-001", "tag": "helpful", "rationale": "y"},
                ],
            }
        ),
    },
    {
        "session_id": SESSIONS[2],
        "step": "curator",
        "text": json.dumps(
            {
                "reasoning": "merge",
                "operations": [
                    {
                        "type": "MERGE",
                        "source_ids": ["pat-001", "ctx-001"],
                        "merged_text": "Test narrowly; keep cache versions in one constant.",
                        "section": "OTHERS",
                    }
                ],
            }
        ),
    },
]

EXPECTED = {  # version -> entries (section, id, text, helpful, harmful)
    1: [
        ("PATTERNS & APPROACHES", "pat-001", "Run the narrowest failing test first.", 0, 0),
        ("MISTAKES TO AVOID", "mis-001", "Read the first assertion before editing.", 0, 0),
    ],
    2: [
        ("PATTERNS & APPROACHES", "pat-001", "Run the narrowest failing test first (pytest -x -k).", 1, 0),
        ("MISTAKES TO AVOID", "mis-001", "Read the first assertion before editing.", 0, 1),
        ("PROJECT CONTEXT", "ctx-001", "Keep cache versions in one constant.", 0, 0),
    ],
    3: [
        ("MISTAKES TO AVOID", "mis-001", "Read the first assertion before editing.", 0, 2),
        ("OTHERS", "oth-001", "Test narrowly; keep cache versions in one constant.", 2, 0),
    ],
}


def entries(db: Path, version: int) -> list[tuple[str, str, str, int, int]]:
    with open_db(db) as con:
        model = load_version(con, "default", version)
    return [(s, e.name, e.text, e.helpful, e.harmful) for s, e in model.entries()]


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Workspace, Path]:
    db = tmp_path / "flow.duckdb"
    # A session too short to learn from: one prompt and one answer.
    brief = tmp_path / "brief" / "brief.jsonl"
    brief.parent.mkdir()
    brief.write_text(
        "\n".join(
            json.dumps(
                {
                    "type": role,
                    "sessionId": "brief-1",
                    "uuid": f"b{i}",
                    "timestamp": "2025-01-01T00:00:0{i}Z",
                    "message": {"role": role, "content": text},
                }
            )
            for i, (role, text) in enumerate([("user", "hello"), ("assistant", "hi")])
        )
        + "\n"
    )
    with open_db(db) as con:
        ingest(
            con,
            [
                SAMPLES / "claude-code-log" / "-Users-dain-workspace-claude-code-log-sample",
                SAMPLES / "claude-code-viewer",
                brief,
            ],
        )
    # The agents of the later sessions had the entries their reflections tag (as the SessionStart hook records).
    expose(db, {SESSIONS[1]: ["pat-001", "mis-001"], SESSIONS[2]: ["mis-001", "ctx-001"]})
    replay = tmp_path / "replay.jsonl"
    replay.write_text("\n".join(json.dumps(r) for r in REPLAY) + "\n")
    settings = Workspace.of(Settings(db=db, out_dir=tmp_path / "out", epoch_size=2, concurrency=2))
    return settings, replay


@pytest.mark.slow
def test_replay_run_gives_the_exact_playbook_version_by_version(setup: tuple[Workspace, Path]) -> None:
    settings, replay = setup
    report = run_curation(settings, "default", settings.provider(f"replay:{replay}"))
    assert (report.status, report.sessions_applied, report.sessions_failed) == ("ok", 3, 0)
    # the fourth session (one prompt, one answer) is too short: skipped with a reason
    assert report.sessions_skipped == 1 and "too short" in next(iter(report.skips.values()))
    for version, expected in EXPECTED.items():
        assert entries(settings.settings.db, version) == expected
    assert report.ops == {
        "ADD": {"applied": 3, "skipped": 0},
        "UPDATE": {"applied": 1, "skipped": 0},
        "MERGE": {"applied": 1, "skipped": 0},
        "DELETE": {"applied": 0, "skipped": 1},
        "unknown": {"applied": 0, "skipped": 0},
    }
    assert report.evaluations == 4 and report.epochs == 2
    with open_db(settings.settings.db) as con:
        rows = history(con, "default")
        assert [(r.version, r.session_id) for r in rows] == [
            (0, None),
            *list(zip([1, 2, 3], SESSIONS, strict=True)),
        ]
        reasons = con.execute("SELECT reason FROM operations WHERE status = 'skipped'").fetchall()
        assert reasons == [("DELETE: target_id 'pat-404' not found",)]
        run = con.execute("SELECT status, sessions_applied, ops_applied FROM runs").fetchall()
        assert run == [("ok", 3, 5)]


@pytest.mark.slow
def test_second_run_applies_nothing_and_calls_no_model(setup: tuple[Workspace, Path]) -> None:
    settings, replay = setup
    run_curation(settings, "default", settings.provider(f"replay:{replay}"))
    again = run_curation(settings, "default", settings.provider(f"replay:{replay}"))
    assert (again.status, again.sessions_considered, again.calls_made, again.calls_cached) == ("nothing-to-do", 0, 0, 0)
    assert entries(settings.settings.db, 3) == EXPECTED[3]


@pytest.mark.slow
def test_limit_holds_on_a_first_run(setup: tuple[Workspace, Path]) -> None:
    # DuckDB 2.0.0 (and still 2.0.1) drops the LIMIT of the pending query while the playbook has no ledger rows yet.
    settings, replay = setup
    first = run_curation(settings, "default", settings.provider(f"replay:{replay}"), chosen=SessionFilter(limit=2))
    assert first.sessions_considered == 2
    rest = run_curation(settings, "default", settings.provider(f"replay:{replay}"), chosen=SessionFilter(limit=5))
    assert rest.sessions_considered == 2  # the third session and the short one; nothing twice
    assert first.sessions_applied + rest.sessions_applied == 3


@pytest.mark.slow
def test_failed_call_is_not_applied_and_is_retried_next_run(setup: tuple[Workspace, Path]) -> None:
    settings, replay = setup
    partial = replay.with_name("partial.jsonl")
    partial.write_text(
        "\n".join(json.dumps(r) for r in REPLAY if (r["session_id"], r["step"]) != (SESSIONS[1], "curator")) + "\n"
    )
    first = run_curation(settings, "default", settings.provider(f"replay:{partial}"))
    assert (first.status, first.sessions_applied, first.sessions_failed) == ("partial", 2, 1)
    assert first.failures == {SESSIONS[1]: f"no recorded curator response for session {SESSIONS[1]}"}
    second = run_curation(settings, "default", settings.provider(f"replay:{replay}"))
    assert (second.status, second.sessions_applied) == ("ok", 1)


def test_unknown_provider_and_missing_key_fail_before_any_work(setup: tuple[Workspace, Path]) -> None:
    settings, _ = setup
    with pytest.raises(ConfigError, match="Unknown provider `gpt`"):
        settings.provider("gpt")
    with pytest.raises(ConfigError, match="The `anthropic` provider needs an Anthropic API key"):
        Workspace.of(settings.settings.model_copy(update={"anthropic_api_key": None})).provider("anthropic")


KILL_SCRIPT = textwrap.dedent("""
    import os, signal, sys, json
    from pathlib import Path
    from flows.config import Settings
    from flows.workspace import Workspace
    import flows.run.steps as steps
    from flows.run.curation import run_curation
    import tests.flows.stub as stub

    real = steps.write_version
    calls = {"n": 0}
    def dying(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == int(sys.argv[3]):
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)
    steps.write_version = dying
    settings = Workspace.of(Settings(db=Path(sys.argv[1]), epoch_size=2))
    run_curation(settings, "default", stub.spec(settings), factory=stub.factory(Path(sys.argv[2])))
    assert "prefect" not in sys.modules  # the run loop needs no Prefect
""")


@pytest.mark.slow
@pytest.mark.parametrize("kill_at", [1, 2, 3])
def test_killed_run_resumes_to_the_same_playbook_paying_nothing_twice(
    setup: tuple[Workspace, Path], tmp_path: Path, kill_at: int
) -> None:
    from tests.flows import stub

    settings, replay = setup
    uninterrupted = tmp_path / "uninterrupted.duckdb"
    shutil.copy(settings.settings.db, uninterrupted)
    other = Workspace.of(settings.settings.model_copy(update={"db": uninterrupted}))
    run_curation(other, "default", stub.spec(other), factory=stub.factory(replay))

    proc = subprocess.run(
        [sys.executable, "-c", KILL_SCRIPT, str(settings.settings.db), str(replay), str(kill_at)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == -9, proc.stderr[-2000:]
    resumed = run_curation(settings, "default", stub.spec(settings), factory=stub.factory(replay))
    assert resumed.status == "ok"
    for version in EXPECTED:
        assert entries(settings.settings.db, version) == entries(uninterrupted, version) == EXPECTED[version]
    with open_db(settings.settings.db) as con:
        paid_twice = con.execute(
            "SELECT prompt_hash, count(*) FROM llm_calls WHERE provider = 'stub' GROUP BY 1 HAVING count(*) > 1"
        ).fetchall()
        paid = con.execute("SELECT count(*) FROM llm_calls WHERE provider = 'stub'").fetchone()
    assert paid_twice == [] and paid == (6,)  # 3 sessions x 2 steps, each paid exactly once
    with open_db(settings.settings.db) as con:
        statuses = [r[0] for r in con.execute("SELECT status FROM runs ORDER BY started_at").fetchall()]
    assert statuses == ["interrupted", "ok"]  # the killed run no longer says `running`


def test_one_run_per_database(setup: tuple[Workspace, Path]) -> None:
    settings, _replay = setup
    with lock_holder(settings.settings.db), pytest.raises(DatabaseBusyError) as err:
        with run_lock(settings.settings.db, "playbook curate"):
            pass
    assert str(err.value).startswith(f"Database `{settings.settings.db}` is in use by process ")
    assert "(playbook nightly since " in str(err.value)
    with run_lock(settings.settings.db, "after"):  # released: the next run proceeds
        pass


def test_lock_is_reentrant_within_a_process(setup: tuple[Workspace, Path]) -> None:
    settings, _replay = setup
    with run_lock(settings.settings.db, "playbook nightly"):
        with run_lock(settings.settings.db, "the flow the CLI started"):  # taken once: the flow finds it held
            pass
        holder = subprocess.run(
            [sys.executable, "-c", HOLD_LOCK, str(settings.settings.db), "second"],
            cwd=ROOT,
            input="\n",
            capture_output=True,
            text=True,
        )
    assert holder.returncode == 1 and "is in use by process" in holder.stderr  # still held after the inner exit


def test_retry_condition_only_for_transient_errors() -> None:
    from prefect.states import Completed, Failed

    from core.errors import DatabaseBusyError, StoreError
    from flows.run.pipeline import transient_only

    assert transient_only(None, None, Failed(data=DatabaseBusyError("busy"))) is True  # type: ignore[arg-type]
    assert transient_only(None, None, Failed(data=StoreError("bad"))) is False  # type: ignore[arg-type]
    assert transient_only(None, None, Completed(data=1)) is False  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("mode", "concurrency", "warmed"),
    [
        ("always", 4, True),
        ("auto", 2, True),  # two waves anyway: one call ahead costs a fraction of a wave
        ("auto", 4, False),  # one wave: a call ahead would double the step's wall time
        ("never", 2, False),
    ],
)
def test_cache_warming_by_one_call_before_fanning_out(mode: str, concurrency: int, warmed: bool) -> None:
    import threading

    from core.llm.base import LLMRequest, LLMResponse, Provider
    from flows.run.fanout import answer_requests

    events: list[tuple[str, str]] = []
    lock = threading.Lock()
    second = threading.Event()  # a second call began: the first ends only then, or after 2 s (alone, as warmed)

    class Warming(Provider):
        name, cacheable, warm_cache_first = "warming", False, True

        def complete(self, request: LLMRequest) -> LLMResponse:
            with lock:
                events.append(("start", request.session_id or ""))
                if len(events) > 1:
                    second.set()
            second.wait(2)  # not a fixed sleep: a loaded machine may start the others late
            with lock:
                events.append(("end", request.session_id or ""))
            return LLMResponse(text="{}", provider="warming", model="m")

    requests = [
        LLMRequest(
            step="reflector", session_id=f"s{i}", model="m", system="S", user=f"U{i}", schema_name="ReflectorOutput"
        )
        for i in range(4)
    ]
    batches = list(answer_requests(Warming(), requests, [0, 1, 2, 3], concurrency=concurrency, warm_cache=mode))
    answered = dict(pair for batch in batches for pair in batch)
    assert sorted(answered) == [0, 1, 2, 3]
    # Warmed: the first call finished before any other began.
    assert (events[:2] == [("start", "s0"), ("end", "s0")]) == warmed
    assert {e for e in events if e[0] == "start"} == {("start", f"s{i}") for i in range(4)}


@pytest.mark.slow
def test_a_session_whose_output_never_parses_is_quarantined_and_blocks_nothing(
    setup: tuple[Workspace, Path], tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from flows.cli import app

    settings, replay = setup
    settings = Workspace.of(settings.settings.model_copy(update={"max_attempts": 2}))
    broken = tmp_path / "broken.jsonl"
    broken.write_text(
        "\n".join(
            json.dumps({**r, "text": "I cannot answer in JSON."})
            if (r["session_id"], r["step"]) == (SESSIONS[1], "reflector")
            else json.dumps(r)
            for r in REPLAY
        )
        + "\n"
    )
    first = run_curation(settings, "default", settings.provider(f"replay:{broken}"))
    assert (first.sessions_applied, first.sessions_failed, first.quarantined) == (2, 1, [])  # the others went on
    second = run_curation(settings, "default", settings.provider(f"replay:{broken}"))
    assert (second.sessions_applied, second.quarantined) == (0, [SESSIONS[1]])
    third = run_curation(settings, "default", settings.provider(f"replay:{broken}"))
    assert (third.status, third.sessions_considered) == ("nothing-to-do", 0)  # quarantined: not retried
    listed = CliRunner().invoke(app, ["sessions", "--failed", "--json", "--db", str(settings.settings.db)])
    rows = json.loads(listed.stdout)
    assert [(r["session_id"], r["attempts"], r["status"]) for r in rows] == [(SESSIONS[1], 2, "quarantined")]
    assert rows[0]["reason"] == "unparseable model output (no JSON object)"
    retried = CliRunner().invoke(app, ["retry", SESSIONS[1], "--db", str(settings.settings.db)])
    assert retried.exit_code == 0 and "1 session(s)" in retried.stdout
    fixed = run_curation(settings, "default", settings.provider(f"replay:{replay}"))
    assert (fixed.sessions_applied, fixed.sessions_failed) == (1, 0)
    after = CliRunner().invoke(app, ["sessions", "--failed", "--json", "--db", str(settings.settings.db)])
    assert json.loads(after.stdout) == []


def test_a_failed_call_is_never_counted_against_the_session(setup: tuple[Workspace, Path], tmp_path: Path) -> None:
    settings, replay = setup
    settings = Workspace.of(settings.settings.model_copy(update={"max_attempts": 1}))
    missing = tmp_path / "missing.jsonl"  # no recording for one session: a failed call, like an API error
    missing.write_text("\n".join(json.dumps(r) for r in REPLAY if r["session_id"] != SESSIONS[2]) + "\n")
    run = run_curation(settings, "default", settings.provider(f"replay:{missing}"))
    assert run.sessions_failed == 1 and run.quarantined == []
    again = run_curation(settings, "default", settings.provider(f"replay:{replay}"))
    assert again.sessions_applied == 1


@pytest.mark.slow
def test_a_session_that_would_empty_the_playbook_is_held_and_the_others_go_on(
    setup: tuple[Workspace, Path], tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from flows.cli import app

    settings, _ = setup
    lessons = [f"Lesson {i}: check the {w} first." for i, w in enumerate(["log", "env", "lock", "port", "path", "db"])]
    reflect = json.dumps({"analysis": "a", "bullet_tags": []})
    hostile = [
        {"session_id": SESSIONS[0], "step": "reflector", "text": reflect},
        {
            "session_id": SESSIONS[0],
            "step": "curator",
            "text": json.dumps(
                {
                    "reasoning": "six lessons, one of them dirty",
                    "operations": [{"type": "ADD", "text": t, "section": "OTHERS"} for t in lessons[:5]]
                    + [
                        {
                            "type": "ADD",
                            "text": "Line one\nline two\x00 <!-- playbook:end --> done\x1b[31m",
                            "section": "OTHERS",
                        },
                        {"type": "UPDATE", "target_id": "oth-001", "text": "x" * 1_000_000},
                    ],
                }
            ),
        },
        {"session_id": SESSIONS[1], "step": "reflector", "text": reflect},
        {
            "session_id": SESSIONS[1],
            "step": "curator",
            "text": json.dumps(
                {
                    "reasoning": "start over",
                    "operations": [
                        {"type": "DELETE", "target_id": f"oth-{i:03d}", "reason": "bad"} for i in range(1, 7)
                    ],
                }
            ),
        },
        {"session_id": SESSIONS[2], "step": "reflector", "text": reflect},
        {
            "session_id": SESSIONS[2],
            "step": "curator",
            "text": json.dumps(
                {"reasoning": "one more", "operations": [{"type": "DELETE", "target_id": "oth-002", "reason": "dup"}]}
            ),
        },
    ]
    replay = tmp_path / "hostile.jsonl"
    replay.write_text("\n".join(json.dumps(r) for r in hostile) + "\n")
    # Near-duplicate detection off: these six templated lessons read alike to a sentence model.
    settings = Workspace.of(settings.settings.model_copy(update={"epoch_size": 1, "near_duplicates": "off"}))
    run = run_curation(settings, "default", settings.provider(f"replay:{replay}"))
    assert run.status == "partial" and run.sessions_applied == 2 and list(run.held) == [SESSIONS[1]]
    assert "mass_change" in run.held[SESSIONS[1]] and "6 of 6" in run.held[SESSIONS[1]]
    assert run.skip_reasons == {"UPDATE: too long": 1}
    final = entries(settings.settings.db, 2)
    assert len(final) == 5 and "oth-002" not in [e[1] for e in final]  # session 3 applied after the held one
    assert ("OTHERS", "oth-006", "Line one line two done[31m", 0, 0) in final  # one clean paragraph
    listed = CliRunner().invoke(app, ["sessions", "--failed", "--json", "--db", str(settings.settings.db)])
    assert [(r["session_id"], r["status"]) for r in json.loads(listed.stdout)] == [(SESSIONS[1], "held")]
    again = run_curation(settings, "default", settings.provider(f"replay:{replay}"))
    assert again.sessions_considered == 0  # held: waits for a person, not retried on its own
    assert CliRunner().invoke(app, ["retry", SESSIONS[1], "--db", str(settings.settings.db)]).exit_code == 0
    allowed = Workspace.of(settings.settings.model_copy(update={"max_removed": 100}))
    accepted = run_curation(allowed, "default", allowed.provider(f"replay:{replay}"))
    assert accepted.sessions_applied == 1 and entries(settings.settings.db, 3) == []
    assert any("shrank the playbook from 5 to 0" in n for n in accepted.notices)


@pytest.mark.slow
def test_an_answer_is_stored_within_a_second_while_another_call_is_still_out(setup: tuple[Workspace, Path]) -> None:
    """Answers are held at most `STORE_EVERY_S` before they are stored: a slow call does not keep the answers
    that came before it in memory, where a kill would lose them."""
    import threading

    from flows.run.steps import STORE_EVERY_S
    from tests.flows import stub

    settings, replay = setup
    settings = Workspace.of(settings.settings.model_copy(update={"epoch_size": 3, "concurrency": 3}))
    release = threading.Event()

    class Slow(stub.StubProvider):
        def complete(self, request: LLMRequest) -> LLMResponse:
            if request.session_id == SESSIONS[2]:
                release.wait(timeout=30)  # the third session's call is still out
            return super().complete(request)

    done: dict[str, Any] = {}
    runner = threading.Thread(
        target=lambda: done.update(
            summary=run_curation(settings, "default", stub.spec(settings), factory=lambda s, t, c: Slow(replay))
        )
    )
    runner.start()
    try:
        stored: set[str] = set()
        deadline = time.monotonic() + 3 * STORE_EVERY_S + 5
        while time.monotonic() < deadline and stored != {SESSIONS[0], SESSIONS[1]}:
            time.sleep(0.2)
            with open_db(settings.settings.db, wait=5) as con:
                rows = con.execute("SELECT session_id FROM llm_calls WHERE step = 'reflector'").fetchall()
            stored = {r[0] for r in rows}
        assert stored == {SESSIONS[0], SESSIONS[1]}  # stored while the third call has not returned
    finally:
        release.set()
        runner.join(timeout=60)
    assert done["summary"].status == "ok" and done["summary"].sessions_applied == 3
