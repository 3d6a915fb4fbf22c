"""The OpenAI-compatible provider at its boundary (httpx2.MockTransport inside its real client): the schema
goes as a grammar-shaped `response_format` with bounded strings and lists, a 200 answer without JSON gets
one JSON-only retry, local models cost 0 unless the price table names them, and it never raises."""

from __future__ import annotations

import json

import httpx2
import pytest

from core.curator import parse_curator
from core.llm.base import LLMRequest
from core.llm.openai_compat import JSON_ONLY, OpenAICompatProvider
from core.llm.pricing import CostCap
from core.models import CuratorOutput
from core.schemas import bounded_schema

REQUEST = LLMRequest(
    step="curator", model="smollm2", system="sys", user="usr", schema_name="CuratorOutput", max_tokens=50
)


def completion(text: str, prompt: int = 40, completion_tokens: int = 10, finish: str = "stop") -> dict:
    return {
        "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": finish}],
        "model": "/models/SmolLM2.gguf",
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion_tokens},
    }


def provider(answers: list[object], bodies: list[dict], **kwargs: object) -> OpenAICompatProvider:
    def handler(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        answer = answers[min(len(bodies), len(answers)) - 1]
        if isinstance(answer, httpx2.Response):
            return answer
        return httpx2.Response(200, json=answer)

    client = httpx2.Client(transport=httpx2.MockTransport(handler))
    return OpenAICompatProvider("http://127.0.0.1:9/v1/", http_client=client, **kwargs)  # type: ignore[arg-type]


def test_the_schema_is_sent_as_a_bounded_grammar() -> None:
    bodies: list[dict] = []
    answer = provider([completion('{"reasoning": "r", "operations": []}')], bodies).complete(REQUEST)
    (body,) = bodies
    assert body["max_tokens"] == 50 and body["messages"][0] == {"role": "system", "content": "sys"}
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "CuratorOutput"
    schema = fmt["json_schema"]["schema"]
    # Bounded to what 50 tokens hold: an answer cut at the token limit would not be JSON.
    assert schema["properties"]["operations"]["maxItems"] == 1
    assert schema["properties"]["reasoning"]["maxLength"] == 40
    op = schema["properties"]["operations"]["items"]["properties"]
    assert op["text"]["maxLength"] == 40 and op["source_ids"]["maxItems"] == 1 and "maxLength" not in op["type"]
    roomy = bounded_schema("CuratorOutput", 4096)["properties"]
    assert roomy["reasoning"]["maxLength"] == 1000 and roomy["operations"]["maxItems"] == 10
    assert roomy["operations"]["items"]["properties"]["text"]["maxLength"] == 500
    assert isinstance(parse_curator(answer.text), CuratorOutput)
    assert (answer.model, answer.usage.input_tokens, answer.cost_usd, answer.error) == (
        "/models/SmolLM2.gguf",
        40,
        0.0,
        None,
    )


def test_a_reply_without_json_is_asked_once_more_for_json_only() -> None:
    bodies: list[dict] = []
    answers = [completion("Sure! Here are my thoughts."), completion('{"reasoning": "r", "operations": []}', 45, 12)]
    answer = provider(answers, bodies).complete(REQUEST)
    assert len(bodies) == 2 and JSON_ONLY not in bodies[0]["messages"][1]["content"]
    assert bodies[1]["messages"][1]["content"].endswith(JSON_ONLY)
    assert answer.text == '{"reasoning": "r", "operations": []}'
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (85, 22)  # both calls counted
    stubborn: list[dict] = []
    again = provider([completion("no json, ever")], stubborn).complete(REQUEST)
    assert len(stubborn) == 2 and again.error is None and parse_curator(again.text) is None  # recorded as unparseable


def test_an_answer_cut_at_max_tokens_is_a_failed_call_and_not_asked_again() -> None:
    """`finish_reason: length`: the grammar's bounds did not hold the answer within `max_tokens`. Asked again with
    a JSON-only note it would stop at the same limit, so it is not; the call is `truncated`, its text kept."""
    bodies: list[dict] = []
    cut = '{"reasoning": "r", "operations": [{"type": "ADD", "text": "x"}'
    answer = provider([completion(cut, finish="length")], bodies).complete(REQUEST)
    assert len(bodies) == 1 and (answer.ok, answer.failure, answer.text) == (False, "truncated", cut)
    assert answer.error == (
        "truncated: the model stopped at its output limit (`finish_reason: length`) before the answer ended; raise"
        " `curator_max_tokens` (now 50) if it repeats"
    )
    empty = provider([completion("", finish="length")], []).complete(REQUEST)  # all of it spent thinking
    assert empty.failure == "truncated"


def test_local_models_cost_nothing_unless_priced() -> None:
    free = provider([completion("{}", 1_000_000, 1_000_000)], []).complete(REQUEST)
    assert free.cost_usd == 0.0
    priced = provider([completion("{}", 1_000_000, 1_000_000)], [], prices={"smollm2": (0.1, 0.2, 0.0, 0.0)}).complete(
        REQUEST
    )
    assert priced.cost_usd == pytest.approx(0.3)


@pytest.mark.parametrize(
    ("answer", "failure"),
    [
        (httpx2.Response(401, text="bad key"), "auth"),
        (httpx2.Response(429, text="slow down"), "rate_limit"),
        (httpx2.Response(503, text="loading model"), "server"),
        (httpx2.Response(400, text="bad schema"), "bad_request"),
        (httpx2.Response(200, text="<html>login</html>"), "bad_reply"),
        (httpx2.Response(200, json={"object": "error"}), "bad_reply"),
        (httpx2.Response(200, json={"choices": {"0": "x"}}), "bad_reply"),
        (httpx2.Response(200, json={"choices": ["x"]}), "bad_reply"),
    ],
)
def test_failures_come_back_as_errors_never_raised(answer: httpx2.Response, failure: str) -> None:
    result = provider([answer], []).complete(REQUEST)
    assert result.text is None and result.failure == failure and result.error


def test_the_cost_cap_stops_calls() -> None:
    cap = CostCap(0.0)
    bodies: list[dict] = []
    result = provider([completion("{}")], bodies, cost_cap=cap).complete(REQUEST)
    assert bodies == [] and result.failure == "cost_cap"
