"""The `anthropic` provider: the official SDK, Messages API, prompt caching, structured output.

Retries live in the SDK (408/409/429/5xx, exponential backoff with jitter); this module only caps how
long a `retry-after` header may make us wait, and never waits past the call's deadline (`core.llm.deadline`,
whose transport ends a call at once when the server asks for a longer wait than it has left). Structured output
is asked for where the server supports it; when a server refuses it (some local servers reached through
`ANTHROPIC_BASE_URL`), the provider switches to plain text, which goes through the same robust JSON extraction.
An answer that stopped at its output limit (`stop_reason` `max_tokens`) is a failed call (`truncated`), whatever
its text holds.
"""

from __future__ import annotations

import time
from typing import Any

import anthropic
import httpx2

from core.llm.base import Failure, LLMRequest, LLMResponse, Provider, Usage, cut_short
from core.llm.deadline import DeadlineTransport, call_deadline, call_over, ended_by, remaining
from core.llm.pricing import CostCap, Prices, cost_usd
from core.schemas import OUTPUT_SCHEMAS

__all__ = ["TRUNCATED_STOPS", "AnthropicProvider", "make_client", "stopped_short"]

# The Messages API's `stop_reason`s that say the text was cut at a limit, not ended by the model.
TRUNCATED_STOPS = frozenset({"max_tokens", "model_context_window_exceeded"})


class _CappedAnthropic(anthropic.Anthropic):
    """The SDK client with an upper bound on `retry-after` waits (the SDK obeys any value), and none past the call's
    deadline."""

    retry_after_cap: float = 60.0

    def _calculate_retry_timeout(self, remaining_retries: int, options: Any, response_headers: Any = None) -> float:
        if call_over():  # the retry fails at once (deadline passed, or the call ended): no point waiting for it
            return 0.0
        wait = min(super()._calculate_retry_timeout(remaining_retries, options, response_headers), self.retry_after_cap)
        left = remaining()
        # A backoff longer than the time left would sleep through the deadline; cut, the retry then fails at once.
        return wait if left is None else max(0.0, min(wait, left))


def make_client(
    *,
    api_key: str | None,
    base_url: str | None = None,
    timeout: float = 120.0,
    max_retries: int = 4,
    retry_after_cap: float = 60.0,
    http_client: httpx2.Client | None = None,
) -> anthropic.Anthropic:
    """An SDK client; tests pass an `httpx2.Client(transport=httpx2.MockTransport(...))`. By default its requests
    go through `DeadlineTransport`, so a call inside `call_deadline` ends by its deadline."""
    client = _CappedAnthropic(
        api_key=api_key,
        base_url=base_url,
        timeout=timeout,
        max_retries=max_retries,
        http_client=http_client or httpx2.Client(transport=DeadlineTransport(), timeout=timeout),
    )
    client.retry_after_cap = retry_after_cap
    return client


def usage_of(raw: Any) -> Usage:
    """Our Usage from the SDK's usage object (or dict)."""
    get = raw.get if isinstance(raw, dict) else (lambda k, d=None: getattr(raw, k, d))
    return Usage(
        input_tokens=get("input_tokens", 0) or 0,
        output_tokens=get("output_tokens", 0) or 0,
        cache_read_tokens=get("cache_read_input_tokens", 0) or 0,
        cache_write_tokens=get("cache_creation_input_tokens", 0) or 0,
    )


def message_params(request: LLMRequest, *, structured: bool) -> dict[str, Any]:
    """Messages API parameters: the frozen playbook sits in a cached system prefix."""
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "system": [{"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": request.user}],
    }
    if structured:
        params["output_config"] = {"format": {"type": "json_schema", "schema": OUTPUT_SCHEMAS[request.schema_name]}}
    return params


def text_of(content: Any) -> str:
    """Concatenated text blocks of a message's content (SDK objects or dicts)."""
    parts = []
    for block in content or []:
        kind = block.get("type") if isinstance(block, dict) else getattr(block, "type", None)
        if kind == "text":
            parts.append(block.get("text", "") if isinstance(block, dict) else block.text)
    return "".join(parts)


def describe_error(exc: BaseException) -> str:
    """One line for the exchange log."""
    ended = ended_by(exc)
    if ended is not None:  # the transport's reason, which the SDK wraps as a connection error
        return str(ended)
    if isinstance(exc, anthropic.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        inner = body.get("error") if isinstance(body.get("error"), dict) else body
        said = inner.get("message") if isinstance(inner, dict) else None
        return f"HTTP {exc.status_code}: {str(said or exc.message)[:300]}"
    if isinstance(exc, anthropic.APITimeoutError):
        return "timeout"
    if isinstance(exc, anthropic.APIConnectionError):
        return f"connection error: {exc}"
    return f"{type(exc).__name__}: {str(exc)[:300]}"


def classify(exc: BaseException) -> Failure:
    """The kind of a failed call, from the SDK's exception."""
    ended = ended_by(exc)
    if ended is not None:
        return ended.failure
    if isinstance(exc, anthropic.AuthenticationError | anthropic.PermissionDeniedError):
        return "auth"
    if isinstance(exc, anthropic.RateLimitError):
        return "rate_limit"
    if isinstance(exc, anthropic.APITimeoutError):
        return "timeout"
    if isinstance(exc, anthropic.APIConnectionError):
        return "connection"
    if isinstance(exc, anthropic.APIStatusError):
        return "server" if exc.status_code >= 500 else "bad_request"
    if isinstance(exc, anthropic.APIResponseValidationError):
        return "bad_reply"
    return "other"


def stopped_short(response: LLMResponse, message: Any, request: LLMRequest) -> LLMResponse:
    """`response`, a failed call (`truncated`) when `message` (SDK object or dict) stopped at a limit."""
    get = message.get if isinstance(message, dict) else (lambda k, d=None: getattr(message, k, d))
    stop = get("stop_reason")
    if stop not in TRUNCATED_STOPS:
        return response
    return cut_short(response, f"`stop_reason: {stop}`", request if stop == "max_tokens" else None)


def _not_a_message(message: object) -> str | None:
    """Why an HTTP 200 body is not a Messages API reply (an HTML login page, a proxy's JSON), or None."""
    if isinstance(message, anthropic.types.Message) and message.usage is not None and message.content is not None:
        return None
    shown = message if isinstance(message, str) else repr(message)
    return f"not a Messages API reply: the server answered {' '.join(shown.split())[:120]!r}"


def _refuses_structured_output(exc: anthropic.BadRequestError) -> bool:
    text = str(exc).lower()
    return any(word in text for word in ("output_config", "output_format", "json_schema", "structured"))


class AnthropicProvider(Provider):
    """Live Messages API calls. Never raises: failures come back as `LLMResponse.error`."""

    name = "anthropic"
    cacheable = True
    warm_cache_first = True

    def __init__(
        self,
        client: anthropic.Anthropic,
        *,
        cost_cap: CostCap | None = None,
        structured_output: bool = True,
        prices: Prices | None = None,
        local: bool = False,
        deadline_s: float | None = None,
    ) -> None:
        """`prices`, `local`: see `cost_usd` (`local`: the client talks to a server other than Anthropic's).
        `deadline_s`: how long one call may take in all, retries included (`request_timeout_s`)."""
        self.deadline_s = deadline_s
        self.client = client
        self.cost_cap = cost_cap or CostCap(None)
        self.structured_output = structured_output
        self.prices = prices
        self.local = local

    def complete(self, request: LLMRequest) -> LLMResponse:
        """One call, with the SDK's retries; the seeds' empty result is the caller's on error."""
        if self.cost_cap.exhausted():
            return LLMResponse(
                provider=self.name, model=request.model, error=self.cost_cap.message(), failure="cost_cap"
            )
        started = time.perf_counter()
        try:
            with call_deadline(self.deadline_s):
                try:
                    message = self.client.messages.create(**message_params(request, structured=self.structured_output))
                except anthropic.BadRequestError as exc:
                    if not (self.structured_output and _refuses_structured_output(exc)):
                        raise
                    self.structured_output = False  # this server has no structured output: text from now on
                    message = self.client.messages.create(**message_params(request, structured=False))
        except Exception as exc:
            return LLMResponse(
                provider=self.name,
                model=request.model,
                error=describe_error(exc),
                failure=classify(exc),
                latency_ms=(time.perf_counter() - started) * 1000,
            )
        wrong = _not_a_message(message)
        if wrong:
            return LLMResponse(
                provider=self.name,
                model=request.model,
                error=wrong,
                failure="bad_reply",
                latency_ms=(time.perf_counter() - started) * 1000,
            )
        usage = usage_of(message.usage)
        cost = cost_usd(request.model, usage, prices=self.prices, local=self.local)
        self.cost_cap.add(cost)
        response = LLMResponse(
            text=text_of(message.content),
            provider=self.name,
            model=str(message.model or request.model),
            usage=usage,
            cost_usd=cost,
            latency_ms=(time.perf_counter() - started) * 1000,
        )
        return stopped_short(response, message, request)
