"""A model API that refuses the key, fails forever, hangs, answers HTML or runs past the deadline: the run
stops with one diagnosis instead of one failure per session, and says so in its status and exit code.
The model is reached through the real `anthropic` client; only its transport is replaced (or, for the
command line, a loopback stand-in for the Messages API answers)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx2
import pytest
from typer.testing import CliRunner

from core.errors import AuthError
from core.llm.claude import AnthropicProvider, make_client
from core.llm.guard import CallGuard
from core.llm.pricing import CostCap
from core.store.db import open_db
from core.store.ingest import ingest
from core.store.ledger import failed_sessions
from flows.cli import app
from flows.config import Settings
from flows.models.providers import ProviderSpec
from flows.run.curation import run_curation
from flows.workspace import Workspace
from tests.helpers import message
from tests.servers import JsonHandler, serving

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "data" / "samples" / "claude-code"
MODEL = ProviderSpec(
    kind="anthropic", reflector_model="claude-sonnet-4-5", curator_model="claude-sonnet-4-5", key_source="`TEST_KEY`"
)
CURATION = json.dumps({"reasoning": "r", "operations": [{"type": "ADD", "text": "Check the port first."}]})


@pytest.fixture
def settings(tmp_path: Path) -> Workspace:
    db = tmp_path / "f.duckdb"
    with open_db(db) as con:
        ingest(con, [SAMPLES / "claude-code-log", SAMPLES / "claude-code-viewer", SAMPLES / "spotter"])
    return Workspace.of(
        Settings(db=db, out_dir=tmp_path / "out", epoch_size=1, concurrency=2, max_retries=0, min_messages=1)
    )


def factory_for(handler: Callable[[httpx2.Request], httpx2.Response], seen: list[str]):  # type: ignore[no-untyped-def]
    def record(request: httpx2.Request) -> httpx2.Response:
        seen.append(
            json.loads(request.content).get("output_config", {}).get("format", {}).get("schema", {}).get("title", "?")
        )
        return handler(request)

    def factory(spec: ProviderSpec, settings: Settings, cap: CostCap) -> AnthropicProvider:
        client = make_client(
            api_key="k",
            max_retries=settings.max_retries,
            http_client=httpx2.Client(transport=httpx2.MockTransport(record)),
        )
        return AnthropicProvider(client, cost_cap=cap)

    return factory


def answer(request: httpx2.Request) -> httpx2.Response:
    curator = "operations" in json.dumps(json.loads(request.content).get("output_config", {}))
    if curator:
        text = CURATION
    else:  # a different analysis per session, as a model would write (the curator prompt carries it)
        text = json.dumps({"analysis": f"session of {len(request.content)} bytes", "bullet_tags": []})
    return httpx2.Response(200, json=message(text, input_tokens=5, output_tokens=5))


def test_a_refused_key_stops_the_run_at_the_first_call(settings: Workspace) -> None:
    calls: list[str] = []
    refuse = lambda r: httpx2.Response(  # noqa: E731
        401, json={"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}
    )
    with pytest.raises(AuthError) as caught:
        run_curation(settings, "default", MODEL, factory=factory_for(refuse, calls))
    assert len(calls) == 1
    assert str(caught.value) == (
        "The model API refused the key from `TEST_KEY` (HTTP 401: invalid x-api-key); set a valid key, or run"
        " with `--llm heuristic`."
    )
    with open_db(settings.settings.db) as con:
        assert failed_sessions(con, "default") == []  # the sessions are not to blame: nothing counted
        status = con.execute("SELECT status FROM runs").fetchall()
    assert status == [("failed",)]


@pytest.mark.parametrize(
    ("name", "handler", "expected"),
    [
        (
            "500 forever",
            lambda r: httpx2.Response(500, json={"type": "error", "error": {"type": "api_error", "message": "boom"}}),
            "HTTP 500",
        ),
        ("hang", lambda r: (_ for _ in ()).throw(httpx2.ReadTimeout("timed out", request=r)), "timeout"),
        (
            "HTML 200",
            lambda r: httpx2.Response(
                200, text="<html><body>Sign in</body></html>", headers={"content-type": "text/html"}
            ),
            "not a Messages API reply",
        ),
    ],
)
@pytest.mark.slow
def test_a_broken_server_opens_the_breaker_and_the_rest_waits(
    settings: Workspace, name: str, handler: Callable[[httpx2.Request], httpx2.Response], expected: str
) -> None:
    calls: list[str] = []
    run = run_curation(
        Workspace.of(settings.settings.model_copy(update={"breaker_failures": 3})),
        "default",
        MODEL,
        factory=factory_for(handler, calls),
    )
    assert len(calls) == 3, name  # then no call starts
    assert run.status == "failed" and run.sessions_applied == 0
    assert run.stopped is not None and "3 model calls in a row failed the same way" in run.stopped
    assert expected in run.stopped
    assert any("wait for the next run" in n for n in run.notices)
    with open_db(settings.settings.db) as con:
        assert failed_sessions(con, "default") == []  # failed calls are never counted against a session
    fixed = run_curation(settings, "default", MODEL, factory=factory_for(answer, calls))
    assert fixed.status == "ok" and fixed.sessions_applied == run.sessions_considered  # nothing was lost


@pytest.mark.slow
def test_the_deadline_ends_the_run_with_what_it_finished(settings: Workspace) -> None:
    now = [0.0]
    calls: list[str] = []

    def slow(request: httpx2.Request) -> httpx2.Response:
        now[0] += 60.0  # each call takes a minute of the run's clock
        return answer(request)

    guard = CallGuard(deadline=150.0, clock=lambda: now[0])
    run = run_curation(settings, "default", MODEL, factory=factory_for(slow, calls), guard=guard)
    assert len(calls) == 3  # two calls of session 1, one of session 2; none after the deadline
    assert run.sessions_applied == 1 and run.status == "partial"
    assert run.stopped == "the run deadline (`max_run_minutes`) has passed"
    rest = run_curation(settings, "default", MODEL, factory=factory_for(answer, calls))
    assert rest.sessions_applied == run.sessions_considered - 1 and rest.status == "ok"


class _StandIn(JsonHandler):
    """A loopback Messages API that refuses every key."""

    requests = 0

    def do_POST(self) -> None:
        type(self).requests += 1
        self.body()
        self.answer({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}, 401)


@pytest.mark.slow
def test_cli_says_in_one_line_that_the_key_was_refused_and_exits_1(
    settings: Workspace, monkeypatch: pytest.MonkeyPatch, prefect_api: str
) -> None:
    with serving(_StandIn) as url:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-wrong-key-0000000000000000")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        result = CliRunner().invoke(app, ["curate", "--db", str(settings.settings.db), "--llm", "anthropic", "--json"])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: The model API refused the key from `ANTHROPIC_API_KEY` (HTTP 401: invalid x-api-key); set a valid"
        " key, or run with `--llm heuristic`."
    )
    assert _StandIn.requests == 1


@pytest.mark.slow
def test_a_reflection_whose_curator_call_failed_is_not_paid_again(settings: Workspace) -> None:
    steps: list[str] = []
    broken = {"on": True}

    def curator_down_once(request: httpx2.Request) -> httpx2.Response:
        curator = "operations" in json.dumps(json.loads(request.content).get("output_config", {}))
        steps.append("curator" if curator else "reflector")
        if curator and broken["on"]:
            broken["on"] = False  # the first session's curator call fails; everything else works
            return httpx2.Response(529, json={"type": "error", "error": {"type": "overloaded_error", "message": "x"}})
        return answer(request)

    first = run_curation(settings, "default", MODEL, factory=factory_for(curator_down_once, []))
    assert first.sessions_failed == 1 and first.sessions_applied >= 1  # the others moved the playbook on
    steps.clear()
    second = run_curation(settings, "default", MODEL, factory=factory_for(curator_down_once, []))
    assert second.sessions_applied == 1 and steps == ["curator"]  # its reflection was reused, not paid again
    assert second.calls_cached == 1
