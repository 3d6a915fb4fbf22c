"""The steps of a curation run (`flows.run.steps`), one at a time, on sessions ingested from transcript files: what
each step hands the next, with a model that answers per session (the boundary) and everything else real."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.llm.base import LLMRequest, LLMResponse, Provider
from core.llm.pricing import CostCap
from core.selection import SessionFilter
from core.store.db import open_db
from core.store.ingest import ingest
from core.store.ledger import failed_sessions, pending_sessions
from core.store.versions import current_version, load_version
from flows.config import Settings
from flows.models.providers import ProviderSpec
from flows.run.run_state import RunContext
from flows.run.steps import (
    apply_epoch_sessions,
    curate_sessions,
    next_epoch,
    reflect_sessions,
    select_sessions,
)
from flows.workspace import Workspace
from tests.helpers import claude_session, write_session

START = datetime(2026, 4, 1, 9, tzinfo=UTC)


class Answers(Provider):
    """A model that answers each session's reflector and curator call from a script, and counts the calls."""

    name = "script"
    cacheable = True  # its answers may be reused from the exchange store, as a paid model's are

    def __init__(self, script: dict[tuple[str, str], str]) -> None:
        self.script = script
        self.calls: list[tuple[str, str]] = []

    def complete(self, request: LLMRequest) -> LLMResponse:
        key = (request.step, request.session_id or "")
        self.calls.append(key)
        text = self.script.get(key)
        if text is None:
            return LLMResponse(provider=self.name, model=request.model, error="no answer", failure="server")
        return LLMResponse(provider=self.name, model=request.model, text=text)


def reflector(analysis: str) -> str:
    return json.dumps({"analysis": analysis, "bullet_tags": []})


def curator(*texts: str) -> str:
    return json.dumps({"reasoning": "r", "operations": [{"type": "ADD", "text": t} for t in texts]})


def context(tmp_path: Path, model: Answers, **overrides: object) -> RunContext:
    settings = Workspace.of(Settings(db=tmp_path / "s.duckdb", out_dir=tmp_path / "out", **overrides))  # type: ignore[arg-type]
    spec = ProviderSpec(kind="anthropic", reflector_model="r", curator_model="c")

    def factory(spec: ProviderSpec, settings: Settings, cap: CostCap) -> Provider:
        return model

    return RunContext(
        db=settings.database(),
        config=settings.run_config("default", spec),
        spec=spec,
        handle=settings.handle(spec, factory),
        run_id="run-test",
    )


@pytest.fixture
def sessions(tmp_path: Path) -> list[str]:
    """Three ingested sessions a day apart, and one too short to be worth a call."""
    ids = ["a", "b", "c"]
    for i, sid in enumerate(ids):
        write_session(tmp_path / "t" / f"{sid}.jsonl", sid, START + timedelta(days=i), error=True)
    claude_session(tmp_path / "t" / "tiny.jsonl", "tiny", START, [("user", "hi"), ("assistant", "Hello.")])
    with open_db(tmp_path / "s.duckdb") as con:
        ingest(con, [tmp_path / "t"])
    return ids


def test_select_takes_pending_sessions_oldest_first_and_skips_the_short_one(
    tmp_path: Path, sessions: list[str]
) -> None:
    ctx = context(tmp_path, Answers({}))
    selection = select_sessions(ctx, SessionFilter())
    assert selection.pending == sessions and list(selection.skipped) == ["tiny"]
    assert "too short" in selection.skipped["tiny"] and selection.resumed == []
    again = select_sessions(ctx, SessionFilter(limit=1))
    assert again.pending == ["a"] and again.skipped == {}  # the short one was marked: not judged twice


def test_an_epoch_flows_through_reflect_curate_and_apply(tmp_path: Path, sessions: list[str]) -> None:
    model = Answers(
        {
            ("reflector", "a"): reflector("pytest is not on PATH here"),
            ("curator", "a"): curator("Run tests with `python -m pytest`: plain `pytest` is not on PATH."),
            ("reflector", "b"): reflector(""),  # found nothing: no curator call
            ("reflector", "c"): reflector("lint fails"),
            # no curator answer for c: its call fails
        }
    )
    ctx = context(tmp_path, model)
    epoch = next_epoch(ctx, select_sessions(ctx).pending)
    assert (epoch.epoch_no, epoch.base_version, epoch.session_ids) == (1, 0, sessions)
    reflections = reflect_sessions(ctx, epoch)
    assert [r.session_id for r in reflections] == sessions and all(r.output is not None for r in reflections)
    curations = curate_sessions(ctx, epoch, reflections)
    assert ("curator", "b") not in model.calls
    by_id = {c.session_id: c for c in curations}
    assert by_id["b"].output is not None and by_id["b"].output.operations == []
    assert by_id["c"].output is None and by_id["c"].error_kind == "call"
    applied = apply_epoch_sessions(ctx, epoch, reflections, curations)
    assert [(a.session_id, a.status) for a in applied] == [("a", "applied"), ("b", "applied"), ("c", "failed")]
    with open_db(tmp_path / "s.duckdb") as con:
        assert current_version(con, "default") == 1  # a's; b found nothing and changed nothing: no version
        texts = [e.text for _, e in load_version(con, "default").entries()]
        assert texts == ["Run tests with `python -m pytest`: plain `pytest` is not on PATH."]
        assert [p.session_id for p in pending_sessions(con, "default")] == ["c"]  # a failed call: tried again
        assert failed_sessions(con, "default") == []  # and never counted against the session


def test_a_killed_run_resumes_its_open_epoch_without_calling_twice(tmp_path: Path, sessions: list[str]) -> None:
    script = {("reflector", s): reflector("x") for s in sessions}
    script |= {("curator", s): curator(f"lesson {s}") for s in sessions}
    ctx = context(tmp_path, Answers(script))
    epoch = next_epoch(ctx, select_sessions(ctx).pending)
    curate_sessions(ctx, epoch, reflect_sessions(ctx, epoch))  # then the run dies, before applying
    later = Answers(script)
    ctx2 = context(tmp_path, later)
    resumed = select_sessions(ctx2)
    assert resumed.pending == [] and [e.session_ids for e in resumed.resumed] == [sessions]
    assert resumed.resumed[0].base_version == epoch.base_version  # judged against the same frozen playbook
    reflections = reflect_sessions(ctx2, resumed.resumed[0])
    curations = curate_sessions(ctx2, resumed.resumed[0], reflections)
    assert later.calls == []  # every answer came from the exchange store: nothing paid twice
    applied = apply_epoch_sessions(ctx2, resumed.resumed[0], reflections, curations)
    assert [a.status for a in applied] == ["applied"] * 3
    assert select_sessions(ctx2).resumed == []  # the epoch is closed
