"""OpenAI-compatible servers (llama.cpp, vLLM, LM Studio, Ollama's `/v1`): `/chat/completions` with the output
schema as `response_format`, which such servers turn into a grammar, so even a small model answers in the
schema. The schema bounds string lengths and list sizes, so a constrained answer always ends. One that stopped at
`max_tokens` all the same (`finish_reason` `length`) is a failed call (`truncated`), whatever its text holds."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx2

from core.jsonx import extract_json
from core.llm.base import Failure, LLMRequest, LLMResponse, Provider, Usage, cut_short, failed
from core.llm.deadline import CallEnded, DeadlineTransport, call_deadline
from core.llm.pricing import CostCap, Prices, cost_usd
from core.schemas import bounded_schema

__all__ = ["JSON_ONLY", "OpenAICompatProvider"]

# Said once more when a server answers 200 with no JSON object (one that ignores `response_format`).
JSON_ONLY = "Answer with one JSON object that follows the schema, and nothing else: no prose, no code fence."


class _Status(Exception):
    def __init__(self, code: int, text: str) -> None:
        super().__init__(f"HTTP {code}: {' '.join(text.split())[:300]}")
        self.code = code


def _failure_of(code: int) -> Failure:
    if code in (401, 403):
        return "auth"
    if code == 429:
        return "rate_limit"
    return "server" if code >= 500 else "bad_request"


class OpenAICompatProvider(Provider):
    """Calls `<base_url>/chat/completions`. Never raises: failures come back as `LLMResponse.error`."""

    name = "openai"
    cacheable = True

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout: float = 120.0,
        cost_cap: CostCap | None = None,
        prices: Prices | None = None,
        http_client: httpx2.Client | None = None,
    ) -> None:
        """`prices`: USD per million tokens by model; a model it does not name costs 0 (a local server)."""
        self.url = base_url.rstrip("/") + "/chat/completions"
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = http_client or httpx2.Client(timeout=timeout, transport=DeadlineTransport())
        self.headers = headers
        self.timeout = timeout
        self.cost_cap = cost_cap or CostCap(None)
        self.prices = prices
        self._slots: int | None = None  # 0 once asked and the server did not say

    def slots(self) -> int | None:
        """The server's `total_slots` from llama.cpp's `GET /props` (asked once); None where it does not say."""
        if self._slots is None:
            self._slots = _server_slots(self.client, self.url.removesuffix("/chat/completions"), self.headers)
        return self._slots or None

    def _body(self, request: LLMRequest, *, insist: bool) -> dict[str, Any]:
        user = f"{request.user}\n\n{JSON_ONLY}" if insist else request.user
        return {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "messages": [{"role": "system", "content": request.system}, {"role": "user", "content": user}],
            "response_format": {
                "type": "json_schema",
                "json_schema": {
                    "name": request.schema_name,
                    "strict": True,
                    "schema": bounded_schema(request.schema_name, request.max_tokens),
                },
            },
        }

    def _post(self, body: dict[str, Any]) -> tuple[str, str, Usage, bool]:
        """(text, model, usage, whether it stopped at `max_tokens`) of one completion."""
        response = self.client.post(self.url, json=body, headers=self.headers, timeout=self.timeout)
        if response.status_code != 200:
            raise _Status(response.status_code, response.text)
        data = response.json()
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ValueError(f"not a chat completion: the server answered {' '.join(response.text.split())[:120]!r}")
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        choice = choices[0]
        message = choice.get("message")
        text = (message.get("content") if isinstance(message, dict) else None) or ""
        return (
            str(text),
            str(data.get("model") or body["model"]),
            Usage(
                input_tokens=int(usage.get("prompt_tokens") or 0),
                output_tokens=int(usage.get("completion_tokens") or 0),
            ),
            choice.get("finish_reason") == "length",
        )

    def complete(self, request: LLMRequest) -> LLMResponse:
        """One call; with no JSON object in a 200 answer, one more with a JSON-only instruction."""
        if self.cost_cap.exhausted():
            return LLMResponse(
                provider=self.name, model=request.model, error=self.cost_cap.message(), failure="cost_cap"
            )
        started = time.perf_counter()
        total = Usage()
        try:
            with call_deadline(self.timeout):  # both tries together: `timeout` bounds the whole call
                text, model, total, cut = self._ask(request)
        except CallEnded as exc:  # an answer too large, or a wait asked for past the deadline
            return failed(self.name, request, str(exc), exc.failure, started)
        except httpx2.TimeoutException:
            return failed(self.name, request, f"timeout: no whole answer within {self.timeout:g} s", "timeout", started)
        except httpx2.HTTPError as exc:
            return failed(self.name, request, f"connection error: {exc}", "connection", started)
        except _Status as exc:
            return failed(self.name, request, str(exc), _failure_of(exc.code), started)
        except (ValueError, json.JSONDecodeError) as exc:
            return failed(self.name, request, str(exc)[:300], "bad_reply", started)
        cost = cost_usd(model, total, prices=self.prices, local=True)
        self.cost_cap.add(cost)
        response = LLMResponse(
            text=text,
            provider=self.name,
            model=model,
            usage=total,
            cost_usd=cost,
            latency_ms=(time.perf_counter() - started) * 1000,
        )
        return cut_short(response, "`finish_reason: length`", request) if cut else response

    def _ask(self, request: LLMRequest) -> tuple[str, str, Usage, bool]:
        """The answer, with one more JSON-only try when the first holds no JSON object (not when it stopped at
        `max_tokens`: asked again, it would stop there again); the last flag says it stopped there."""
        total = Usage()
        text, model, cut = "", request.model, False
        for insist in (False, True):
            text, model, usage, cut = self._post(self._body(request, insist=insist))
            total = Usage(
                input_tokens=total.input_tokens + usage.input_tokens,
                output_tokens=total.output_tokens + usage.output_tokens,
            )
            if cut or extract_json(text) is not None:
                break
        return text, model, total, cut


def _server_slots(client: httpx2.Client, base_url: str, headers: dict[str, str]) -> int:
    """`total_slots` of llama.cpp's server (`GET /props`, beside `/v1`), or 0 when the server does not say: other
    servers answer 404, and a slow one is not waited for."""
    try:
        with call_deadline(_PROPS_TIMEOUT_S):
            response = client.get(base_url.removesuffix("/v1") + "/props", headers=headers, timeout=_PROPS_TIMEOUT_S)
        found = response.json().get("total_slots") if response.status_code == 200 else None
    except (httpx2.HTTPError, ValueError, AttributeError):
        return 0
    return found if isinstance(found, int) and not isinstance(found, bool) and 0 < found <= _MOST_SLOTS else 0


_PROPS_TIMEOUT_S = 5.0
_MOST_SLOTS = 64  # the run's own concurrency ceiling: a larger figure is no reason to send more
