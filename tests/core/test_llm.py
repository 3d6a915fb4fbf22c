"""Providers tested at the HTTP boundary: httpx2.MockTransport inside the real anthropic client."""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core import compat
from core.compat import llm as seeds
from core.curator import curator_request, parse_curator
from core.llm import CostCap, HeuristicProvider, LLMRequest, ReplayProvider
from core.llm.batches import BatchProvider, split_batches
from core.llm.claude import AnthropicProvider, make_client
from core.models import ReflectorOutput, SessionMessage
from core.operations import apply_operations, empty_playbook
from core.playbook_json import playbook_from_dict, playbook_to_dict
from core.prompts import load_template
from core.render import render_session
from core.sections import DEFAULT_SECTIONS
from tests.helpers import message

Handler = Callable[[httpx2.Request], httpx2.Response]


class Recorder:
    """A MockTransport handler that answers from a script and records every request."""

    def __init__(self, *responses: Callable[[httpx2.Request], httpx2.Response] | httpx2.Response) -> None:
        self.responses = list(responses)
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        step = self.responses.pop(0) if len(self.responses) > 1 else self.responses[0]
        return step(request) if callable(step) else step

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests if r.content]


def provider(
    handler: Recorder,
    *,
    cap: float | None = None,
    max_retries: int = 2,
    retry_after_cap: float = 0.01,
    timeout: float = 5.0,
) -> AnthropicProvider:
    client = make_client(
        api_key="sk-ant-test-key-000000000000",
        max_retries=max_retries,
        timeout=timeout,
        retry_after_cap=retry_after_cap,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )
    return AnthropicProvider(client, cost_cap=CostCap(cap))


def curator_call(text_playbook: bool = True) -> LLMRequest:
    return curator_request(
        load_template("curator"),
        ReflectorOutput(analysis="the build failed twice"),
        empty_playbook(),
        DEFAULT_SECTIONS,
        model="claude-sonnet-4-5",
        session_id="s1",
    )


def ok(text: str, **usage: int) -> httpx2.Response:
    return httpx2.Response(200, json=message(text, **usage))


def test_success_uses_cached_system_prefix_and_structured_output() -> None:
    rec = Recorder(ok('{"reasoning": "r", "operations": []}', cache_write=800, cache_read=0))
    response = provider(rec).complete(curator_call())
    assert response.ok and parse_curator(response.text) is not None
    body = rec.bodies()[0]
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert "# Playbook" in body["system"][0]["text"]
    assert body["output_config"]["format"]["type"] == "json_schema"
    assert "transcript" not in body["messages"][0]["content"].lower()  # the curator never sees it
    # 1000 in x $3 + 200 out x $15 + 800 cache write x $3.75, per million tokens
    assert response.usage.cache_write_tokens == 800
    assert response.cost_usd == pytest.approx((1000 * 3 + 200 * 15 + 800 * 3.75) / 1e6)


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"reasoning": "fenced", "operations": [{"type": "ADD", "text": "x"}]}\n```',
        'Here you go:\n{"reasoning": "prose", "operations": [{"type": "ADD", "text": "x"}]}\nThanks!',
    ],
)
def test_fenced_or_wrapped_json(text: str) -> None:
    result = seeds.run_curator_sync(
        {"analysis": "a"}, compat.load_playbook(Path("/none")), provider=provider(Recorder(ok(text)))
    )
    assert result["operations"] == [{"type": "ADD", "text": "x"}]


def test_invalid_json_gives_the_seeds_empty_result() -> None:
    result = seeds.run_curator_sync(
        {"analysis": "a"},
        compat.load_playbook(Path("/none")),
        provider=provider(Recorder(ok("I think you should add a lesson."))),
    )
    assert result == {"reasoning": "", "operations": []}


def test_schema_invalid_operations_are_skipped_with_reasons() -> None:
    text = json.dumps(
        {
            "reasoning": "r",
            "operations": [
                {"type": "ADD", "text": ""},
                {"type": "DELETE", "target_id": "pat-404"},
                {"type": "RENAME"},
                "not an object",
                {"type": "ADD", "text": "Keep lockfiles committed.", "section": "project context"},
            ],
        }
    )
    response = provider(Recorder(ok(text))).complete(curator_call())
    curated = parse_curator(response.text)
    assert curated is not None
    result, report = apply_operations(empty_playbook(), curated.operations)
    assert [e.name for _, e in result.entries()] == ["ctx-001"]
    assert [o.reason for o in report.outcomes if o.status == "skipped"] == [
        "ADD: empty or missing text",
        "DELETE: target_id 'pat-404' not found",
        "Unknown operation type: 'RENAME'",
        "Operation is not an object: str",
    ]


def test_an_answer_cut_at_max_tokens_is_a_failed_call() -> None:
    """The Messages API answers 200 with `stop_reason: max_tokens`: the text is kept for the record, never parsed,
    and paid for; the call is `truncated`, with the setting that raises the limit."""
    cut = '{"reasoning": "two lessons", "operations": [{"type": "ADD", "text": "Pin the toolchain."}'
    rec = Recorder(httpx2.Response(200, json={**message(cut, output_tokens=4096), "stop_reason": "max_tokens"}))
    response = provider(rec).complete(curator_call())
    assert (response.ok, response.failure, response.text) == (False, "truncated", cut)
    assert response.error == (
        "truncated: the model stopped at its output limit (`stop_reason: max_tokens`) before the answer ended; raise"
        " `curator_max_tokens` (now 4,096) if it repeats"
    )
    assert response.usage.output_tokens == 4096 and response.cost_usd > 0 and len(rec.requests) == 1
    whole = provider(Recorder(ok(cut + "]}"))).complete(curator_call())  # the same answer, ended: a good one
    assert whole.ok and whole.failure is None


def test_429_retry_after_is_capped() -> None:
    rec = Recorder(
        httpx2.Response(
            429,
            headers={"retry-after": "3600"},
            json={"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
        ),
        ok('{"reasoning": "", "operations": []}'),
    )
    started = time.perf_counter()
    response = provider(rec, retry_after_cap=0.05).complete(curator_call())
    assert response.ok and len(rec.requests) == 2
    assert time.perf_counter() - started < 5  # an hour was asked for; the cap held


def test_529_overloaded_then_success() -> None:
    rec = Recorder(
        httpx2.Response(529, json={"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}),
        ok('{"reasoning": "ok", "operations": []}'),
    )
    response = provider(rec).complete(curator_call())
    assert response.ok and len(rec.requests) == 2


def test_400_is_not_retried() -> None:
    rec = Recorder(
        httpx2.Response(
            400, json={"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens too large"}}
        )
    )
    response = provider(rec).complete(curator_call())
    assert not response.ok and response.error is not None and response.error.startswith("HTTP 400")
    assert len(rec.requests) == 1


def test_timeout_after_retries_returns_error() -> None:
    def hang(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ReadTimeout("timed out", request=request)

    rec = Recorder(hang)
    response = provider(rec, max_retries=2).complete(curator_call())
    assert response.error == "timeout" and len(rec.requests) == 3
    result = seeds.run_curator_sync(
        {"analysis": "a"}, compat.load_playbook(Path("/none")), provider=provider(Recorder(hang), max_retries=0)
    )
    assert result == {"reasoning": "", "operations": []}


def test_structured_output_refused_falls_back_to_text() -> None:
    rec = Recorder(
        httpx2.Response(
            400,
            json={"type": "error", "error": {"type": "invalid_request_error", "message": "output_config: unsupported"}},
        ),
        ok('Sure. {"reasoning": "text mode", "operations": []}'),
    )
    prov = provider(rec)
    response = prov.complete(curator_call())
    assert response.ok and parse_curator(response.text) is not None
    assert "output_config" in rec.bodies()[0] and "output_config" not in rec.bodies()[1]
    assert prov.structured_output is False


def test_cost_cap_stops_new_calls() -> None:
    rec = Recorder(ok('{"reasoning": "", "operations": []}', input_tokens=1_000_000, output_tokens=0))
    prov = provider(rec, cap=2.0)
    assert prov.complete(curator_call()).ok  # $3 spent: over the $2 cap
    blocked = prov.complete(curator_call())
    assert blocked.error == "cost cap of $2.00 reached (spent $3.00); no new model calls this run"
    assert len(rec.requests) == 1


def test_redaction_before_anything_leaves_the_machine() -> None:
    secret_session = [
        SessionMessage(
            seq=0,
            role="user",
            kind="text",
            is_prompt=True,
            text="deploy with ANTHROPIC_API_KEY=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv and postgres://app:s3cr3t@db/x",
        ),
        SessionMessage(
            seq=1,
            role="assistant",
            kind="tool_use",
            tool_name="Bash",
            tool_use_id="t1",
            tool_input=json.dumps({"command": "curl -H 'Authorization: Bearer abcdefghijklmnop123456' x"}),
        ),
        SessionMessage(
            seq=2,
            role="tool",
            kind="tool_result",
            tool_use_id="t1",
            is_error=True,
            text="-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----",
        ),
    ]
    rendered = render_session(secret_session, 10_000)
    assert rendered.redactions == 4
    from core.reflector import reflector_request

    request, _ = reflector_request(
        load_template("reflector"),
        secret_session,
        empty_playbook(),
        DEFAULT_SECTIONS,
        budget_tokens=10_000,
        model="claude-sonnet-4-5",
        session_id="s1",
    )
    rec = Recorder(ok('{"analysis": "a", "bullet_tags": []}'))
    provider(rec).complete(request)
    sent = rec.requests[0].content.decode()
    for secret in ("sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv", "s3cr3t", "abcdefghijklmnop123456", "b3BlbnNzaC1rZXk"):
        assert secret not in sent
    assert sent.count("[REDACTED") == 4


# --- batches -----------------------------------------------------------------------------------


class FakeBatchAPI:
    """The Message Batches endpoints, answering each submitted request by a rule on its custom_id round."""

    def __init__(self, outcomes: dict[int, list[str]]) -> None:
        self.outcomes = outcomes  # request index -> result type per round it is submitted in
        self.submitted: list[list[str]] = []
        self.polls = 0
        self.seen: dict[int, int] = {}

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        if request.method == "POST" and path.endswith("/messages/batches"):
            ids = [item["custom_id"] for item in json.loads(request.content)["requests"]]
            self.submitted.append(ids)
            return httpx2.Response(200, json=self.batch(len(self.submitted), "in_progress"))
        if path.endswith("/results"):
            number = int(path.split("/")[-2].removeprefix("batch_"))
            lines = [json.dumps(self.result(cid, number)) for cid in self.submitted[number - 1]]
            return httpx2.Response(
                200, content="\n".join(lines).encode(), headers={"content-type": "application/binary"}
            )
        number = int(path.rsplit("/", 1)[-1].removeprefix("batch_"))
        self.polls += 1
        # The first poll of a batch finds it still running; from the second on it has ended.
        self.seen[number] = self.seen.get(number, 0) + 1
        return httpx2.Response(200, json=self.batch(number, "ended" if self.seen[number] > 1 else "in_progress"))

    def batch(self, number: int, status: str) -> dict[str, Any]:
        return {
            "id": f"batch_{number}",
            "type": "message_batch",
            "processing_status": status,
            "request_counts": {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0},
            "created_at": "2026-11-21T00:00:00Z",
            "expires_at": "2026-11-22T00:00:00Z",
            "ended_at": None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"https://api.anthropic.com/v1/messages/batches/batch_{number}/results"
            if status == "ended"
            else None,
        }

    def result(self, cid: str, number: int) -> dict[str, Any]:
        index = int(cid.split("-")[0][1:])
        rounds = self.outcomes[index]
        kind = rounds[min(sum(cid in s for s in self.submitted[:number]) - 1, len(rounds) - 1)]
        if kind == "succeeded":
            return {
                "custom_id": cid,
                "result": {"type": "succeeded", "message": message(f'{{"reasoning": "r{index}", "operations": []}}')},
            }
        if kind == "max_tokens":
            cut = {**message(f'{{"reasoning": "r{index}", "operations": [{{"type": "ADD"}}'), "stop_reason": kind}
            return {"custom_id": cid, "result": {"type": "succeeded", "message": cut}}
        if kind in ("api_error", "invalid_request"):
            return {
                "custom_id": cid,
                "result": {
                    "type": "errored",
                    "error": {
                        "type": "error",
                        "error": {
                            "type": "invalid_request_error" if kind == "invalid_request" else "api_error",
                            "message": kind,
                        },
                    },
                },
            }
        return {"custom_id": cid, "result": {"type": kind}}


def test_batch_lifecycle_with_errored_and_expired_items() -> None:
    api = FakeBatchAPI(
        {
            0: ["succeeded"],
            1: ["api_error", "succeeded"],
            2: ["expired", "succeeded"],
            3: ["expired", "expired", "expired"],
        }
    )
    client = make_client(
        api_key="sk-ant-test", max_retries=0, http_client=httpx2.Client(transport=httpx2.MockTransport(api))
    )
    sleeps: list[float] = []
    prov = BatchProvider(client, poll_interval_s=7, sleep=sleeps.append, max_rounds=3)
    responses = prov.complete_many([curator_call() for _ in range(4)])
    assert [r.ok for r in responses] == [True, True, True, False]
    assert [parse_curator(r.text).reasoning for r in responses[:3]] == ["r0", "r1", "r2"]  # type: ignore[union-attr]
    assert responses[3].error == "expired: request expired (after 3 batch rounds)"
    assert [len(s) for s in api.submitted] == [4, 3, 1]
    assert sleeps and set(sleeps) == {7}
    # Batch prices are half: 1000 in x $3 + 200 out x $15 per million, halved.
    assert responses[0].cost_usd == pytest.approx((1000 * 3 + 200 * 15) / 1e6 / 2)


def test_a_batch_result_cut_at_max_tokens_is_a_failed_call_not_resubmitted() -> None:
    api = FakeBatchAPI({0: ["max_tokens"], 1: ["succeeded"]})
    client = make_client(
        api_key="sk-ant-test", max_retries=0, http_client=httpx2.Client(transport=httpx2.MockTransport(api))
    )
    cut, fine = BatchProvider(client, poll_interval_s=0, sleep=lambda s: None).complete_many(
        [curator_call(), curator_call()]
    )
    assert (cut.failure, cut.text, fine.ok) == ("truncated", '{"reasoning": "r0", "operations": [{"type": "ADD"}', True)
    assert "`stop_reason: max_tokens`" in (cut.error or "") and cut.cost_usd > 0
    assert [len(s) for s in api.submitted] == [2]  # the same request would stop at the same limit


def test_batch_invalid_request_is_not_resubmitted() -> None:
    api = FakeBatchAPI({0: ["invalid_request"], 1: ["succeeded"]})
    client = make_client(
        api_key="sk-ant-test", max_retries=0, http_client=httpx2.Client(transport=httpx2.MockTransport(api))
    )
    responses = BatchProvider(client, poll_interval_s=0, sleep=lambda s: None).complete_many(
        [curator_call(), curator_call()]
    )
    assert responses[0].error == "invalid_request_error: invalid_request" and responses[1].ok
    assert [len(s) for s in api.submitted] == [2]


def test_split_batches_respects_both_limits() -> None:
    items = [{"custom_id": f"r{i}", "params": {"x": "y" * 100}} for i in range(10)]
    assert [len(g) for g in split_batches(items, max_requests=4)] == [4, 4, 2]
    one = len(json.dumps(items[0]).encode())
    assert [len(g) for g in split_batches(items, max_bytes=int(one * 3.2 / 0.95))] == [3, 3, 3, 1]


# --- offline providers -------------------------------------------------------------------------


def test_replay_goes_through_the_same_parsing(tmp_path: Path) -> None:
    path = tmp_path / "replay.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"session_id": "s1", "step": "curator", "text": '```json\n{"reasoning": "rec"}\n```'}),
                "not json",
            ]
        )
    )
    prov = ReplayProvider(path)
    assert prov.bad_lines == 1
    response = prov.complete(curator_call())
    parsed = parse_curator(response.text)
    assert parsed is not None and (parsed.reasoning, parsed.operations) == ("rec", [])
    missing = prov.complete(curator_call().model_copy(update={"session_id": "s2"}))
    assert missing.error == "no recorded curator response for session s2"


def test_heuristic_rules_say_no_model_was_used() -> None:
    session = [
        SessionMessage(seq=0, role="user", kind="text", is_prompt=True, text="run the tests, see pat-001"),
        SessionMessage(
            seq=1,
            role="assistant",
            kind="tool_use",
            tool_name="Bash",
            tool_use_id="a",
            tool_input='{"command": "pytest"}',
        ),
        SessionMessage(
            seq=2,
            role="tool",
            kind="tool_result",
            tool_use_id="a",
            is_error=True,
            text="ModuleNotFoundError: No module named 'app'",
        ),
        SessionMessage(
            seq=3,
            role="assistant",
            kind="tool_use",
            tool_name="Bash",
            tool_use_id="b",
            tool_input='{"command": "python -m pytest"}',
        ),
        SessionMessage(seq=4, role="tool", kind="tool_result", tool_use_id="b", text="3 passed"),
        SessionMessage(seq=5, role="user", kind="text", is_prompt=True, text="No, don't use print; use logging."),
    ]
    playbook = playbook_from_dict(
        {
            "sections": {
                "OTHERS": [],
                "PATTERNS & APPROACHES": [{"name": "pat-001", "text": "Run tests with python -m pytest."}],
            }
        }
    )
    reflected = seeds.run_reflector_sync(
        [{"role": "user", "content": "x"}], playbook_to_dict(playbook), provider=HeuristicProvider()
    )
    assert reflected["analysis"].startswith("[heuristic: no model was used]")
    from core.llm.heuristic import heuristic_lessons

    assert [(f.kind, f.section, f.text, f.trigger) for f in heuristic_lessons(session)] == [
        (
            "preference",
            "USER PREFERENCES",
            'The user said: "No, don\'t use print; use logging.".',
            "No, don't use print; use logging.",
        ),
        (
            "correction",
            "MISTAKES TO AVOID",
            "`pytest` fails here; `python -m pytest` works.",
            "ModuleNotFoundError: No module named 'app'",
        ),
        ("fact", "PROJECT CONTEXT", "Run the tests with `python -m pytest`.", "python -m pytest"),
    ]


def test_extract_keypoints_operations_key_only_when_list() -> None:
    playbook = compat.load_playbook(Path("/none"))
    with_ops = seeds.extract_keypoints_sync(
        [{"role": "user", "content": "hi"}],
        playbook,
        provider=provider(
            Recorder(ok('{"evaluations": [{"name": "pat-001", "rating": "helpful"}], "operations": []}'))
        ),
    )
    assert with_ops == {
        "new_key_points": [],
        "evaluations": [{"name": "pat-001", "rating": "helpful"}],
        "operations": [],
    }
    for value in ("null", '"x"', "3", "{}"):
        result = seeds.extract_keypoints_sync(
            [],
            playbook,
            provider=provider(Recorder(ok(f'{{"new_key_points": ["p"], "evaluations": [], "operations": {value}}}'))),
        )
        assert "operations" not in result and result["new_key_points"] == ["p"]
    failed = seeds.extract_keypoints_sync([], playbook, provider=provider(Recorder(httpx2.Response(400, json={}))))
    assert failed == {"new_key_points": [], "evaluations": []}


def test_run_reflector_never_raises() -> None:
    assert seeds.run_reflector_sync("transcript", {"sections": "broken"}) == {"analysis": "", "bullet_tags": []}
    result = seeds.run_reflector_sync(
        "t",
        compat.load_playbook(Path("/none")),
        provider=provider(
            Recorder(ok('{"analysis": "went fine", "bullet_tags": [{"name": "pat-001", "tag": "helpful"}, 5]}'))
        ),
    )
    assert result == {"analysis": "went fine", "bullet_tags": [{"name": "pat-001", "tag": "helpful", "rationale": ""}]}


def test_the_hook_script_functions_are_coroutines_that_run_side_by_side() -> None:
    """Seeds 001/002: the hook scripts `await` extract_keypoints, run_reflector and run_curator; several awaited
    together run at once (each call in a worker thread), through the real client."""
    for fn in (seeds.extract_keypoints, seeds.run_reflector, seeds.run_curator):
        assert inspect.iscoroutinefunction(fn)
    playbook = compat.load_playbook(Path("/none"))
    release = threading.Barrier(3, timeout=10)  # each answer waits until all three requests are in flight

    def answer(text: str) -> Callable[[httpx2.Request], httpx2.Response]:
        def respond(request: httpx2.Request) -> httpx2.Response:
            release.wait()
            return ok(text)

        return respond

    reflector, curator, one_call = (
        Recorder(answer('{"analysis": "the build failed", "bullet_tags": []}')),
        Recorder(answer('{"reasoning": "r", "operations": [{"type": "ADD", "text": "Pin the toolchain."}]}')),
        Recorder(answer('{"evaluations": [], "operations": []}')),
    )

    async def session() -> list[dict[str, Any]]:
        return list(
            await asyncio.gather(
                seeds.run_reflector("USER: build it", playbook, provider=provider(reflector)),
                seeds.run_curator({"analysis": "the build failed"}, playbook, provider=provider(curator)),
                seeds.extract_keypoints([{"role": "user", "content": "hi"}], playbook, provider=provider(one_call)),
            )
        )

    reflected, curated, extracted = asyncio.run(session())
    assert reflected == {"analysis": "the build failed", "bullet_tags": []}
    assert curated["operations"] == [{"type": "ADD", "text": "Pin the toolchain."}]
    assert extracted == {"new_key_points": [], "evaluations": [], "operations": []}


@given(
    st.sampled_from(["reflector", "curator", "reflection"]),
    st.text(max_size=20),
    st.text(max_size=300),
    st.text(max_size=300),
    st.text(max_size=20),
    st.integers(min_value=1, max_value=1 << 20),
)
def test_the_prompt_hash_is_the_sha256_of_the_whole_prompt_however_it_is_computed(
    step: str, model: str, system: str, user: str, schema: str, max_tokens: int
) -> None:
    """The hash keeps its meaning (and stored exchanges stay reusable) though its prefix is hashed once."""
    request = LLMRequest(step=step, model=model, system=system, user=user, schema_name=schema, max_tokens=max_tokens)
    whole = json.dumps([step, model, system, user, schema, max_tokens])
    assert request.prompt_hash() == hashlib.sha256(whole.encode()).hexdigest()
    other = request.model_copy(update={"user": user + "x"})  # a second request sharing the prefix
    assert other.prompt_hash() != request.prompt_hash()
