"""The provider interface: a request in, a response out, never an exception."""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Failure", "LLMRequest", "LLMResponse", "Payload", "Provider", "Step", "Usage", "failed"]

Step = Literal["reflector", "curator", "reflection"]
# Why a call failed, so the run can react to the kind and not to wording: `auth` stops the run at once,
# a run of failures of one kind opens the circuit breaker, `stopped` calls were never started.
Failure = Literal[
    "auth", "rate_limit", "server", "timeout", "connection", "bad_request", "bad_reply", "cost_cap", "stopped", "other"
]


class Usage(BaseModel):
    """Token counts of one call, cache reads and writes included."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


class Payload(BaseModel):
    """Seed 004's accounting of one request: its estimated size against the step's budget, and what
    compaction dropped to make it fit (stored with the exchange)."""

    tokens_est: int
    budget_tokens: int | None = None
    compacted: bool = False
    dropped_fields: list[str] = Field(default_factory=list)
    compaction_reason: str | None = None


class LLMRequest(BaseModel):
    """One model call: cached system prefix, per-session user text, and the expected output schema."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    step: Step
    session_id: str | None = None
    model: str
    system: str
    user: str
    schema_name: str
    max_tokens: int = 4096
    # Inputs for providers that need no model (heuristic); never part of the prompt or its hash.
    context: dict[str, Any] = Field(default_factory=dict, exclude=True)
    payload: Payload | None = Field(default=None, exclude=True)  # set by the request builders

    def prompt_hash(self) -> str:
        """Identity of the prompt: the same hash means the same answer may be reused."""
        payload = json.dumps([self.step, self.model, self.system, self.user, self.schema_name, self.max_tokens])
        return hashlib.sha256(payload.encode()).hexdigest()


class LLMResponse(BaseModel):
    """What came back; `error` is set (and `text` None) when the call failed after retries."""

    text: str | None = None
    provider: str
    model: str
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float = 0.0
    latency_ms: float = 0.0
    error: str | None = None
    failure: Failure | None = None  # the kind of `error`
    cached: bool = False

    @property
    def ok(self) -> bool:
        """True when there is text to parse."""
        return self.error is None and self.text is not None


class Provider(Protocol):
    """Anything that answers LLM requests; subclass it to inherit the defaults below.

    Capabilities are part of the interface, so the run loop reads them instead of probing:
    `cacheable` (answers may be reused from the exchange store), `warm_cache_first` (one call before
    fanning out, so the others read the prompt cache it wrote) and `batches` (the provider answers a
    whole epoch at once through `complete_many`).
    """

    name: str
    cacheable: bool = False
    warm_cache_first: bool = False
    batches: bool = False

    def complete(self, request: LLMRequest) -> LLMResponse:
        """Answer one request; never raises."""
        ...

    def complete_many(self, requests: list[LLMRequest]) -> list[LLMResponse]:
        """Answer several requests in order; never raises. One by one unless the provider batches."""
        return [self.complete(r) for r in requests]


def failed(provider: str, request: LLMRequest, error: str, failure: Failure, started: float) -> LLMResponse:
    """The response of a call that failed: no text, the error in one line, its kind, and how long it took
    (`started`: `time.perf_counter()` when the call began)."""
    return LLMResponse(
        provider=provider,
        model=request.model,
        error=error,
        failure=failure,
        latency_ms=(time.perf_counter() - started) * 1000,
    )
