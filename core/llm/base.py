"""The provider interface: a request in, a response out, never an exception."""

from __future__ import annotations

import functools
import hashlib
import json
import time
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ANSWER_FAILURES",
    "MAX_ANSWER_BYTES",
    "Failure",
    "LLMRequest",
    "LLMResponse",
    "Payload",
    "Provider",
    "Step",
    "Usage",
    "answer_too_large",
    "cut_short",
    "failed",
]

Step = Literal["reflector", "curator", "reflection"]
# Why a call failed, so the run can react to the kind and not to wording: `auth` stops the run at once,
# a run of failures of one kind opens the circuit breaker, `stopped` calls were never started, `truncated`: the
# model stopped at its output limit, so its text is not a whole answer.
Failure = Literal[
    "auth",
    "rate_limit",
    "server",
    "timeout",
    "connection",
    "bad_request",
    "bad_reply",
    "truncated",
    "cost_cap",
    "stopped",
    "other",
]
# Failures of the answer rather than of the call: counted against the session like an answer of the wrong shape
# (quarantined after `max_attempts`), where a failed call is tried again as it is, never counted.
ANSWER_FAILURES: frozenset[Failure] = frozenset({"truncated"})
# The most of one answer a provider reads (an HTTP body once decoded, a CLI's output), then it stops reading and the
# call fails (`bad_reply`): an answer of `max_tokens` is at most a few hundred KB, and one server's 1.5 GB answer
# drove the process to 5.9 GB before the database ran out of memory.
MAX_ANSWER_BYTES = 16 * 1024 * 1024


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
        """Identity of the prompt: the same hash means the same answer may be reused.

        The sha256 of `json.dumps([step, model, system, user, schema_name, max_tokens])`, computed from the
        hash state of its prefix up to the system prompt, which an epoch's requests share (it holds the whole
        playbook): the long part is encoded and hashed once, not once per request.
        """
        hasher = _prefix_hash(self.step, self.model, self.system).copy()
        hasher.update(
            f"{json.dumps(self.user)}, {json.dumps(self.schema_name)}, {json.dumps(self.max_tokens)}]".encode()
        )
        return hasher.hexdigest()


@functools.lru_cache(maxsize=32)
def _prefix_hash(step: str, model: str, system: str) -> Any:
    # `json.dumps` of a list is its items' encodings joined by ", " inside brackets: the prefix stands alone.
    return hashlib.sha256(f"[{json.dumps(step)}, {json.dumps(model)}, {json.dumps(system)}, ".encode())


class LLMResponse(BaseModel):
    """What came back; `error` is set (and `text` None) when the call failed after retries. A `truncated` answer
    keeps its text for the exchange log, never to be parsed."""

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

    def slots(self) -> int | None:
        """How many requests the server answers at once, when it says (a local server's slots); None: unknown.
        The run sends no more than that at a time, so the rest wait in its own queue, not the server's."""
        return None


def cut_short(response: LLMResponse, said: str, limited: LLMRequest | None = None) -> LLMResponse:
    """`response` as a failed call: the model stopped at its output limit (`said`: how its API said so), so its
    text is no whole answer. Text, usage and cost stay: they were paid for. `limited`: the request, when its
    `max_tokens` is the limit the model reached (the next step names the setting that raises it)."""
    error = f"truncated: the model stopped at its output limit ({said}) before the answer ended"
    if limited is not None:
        setting = f"`{limited.step}_max_tokens`" if limited.step != "reflection" else "`max_tokens`"
        error += f"; raise {setting} (now {limited.max_tokens:,}) if it repeats"
    return response.model_copy(update={"error": error, "failure": "truncated"})


def answer_too_large(source: str) -> str:
    """The error of a call whose answer passed `MAX_ANSWER_BYTES` (`source`: what sent it, in a few words)."""
    return (
        f"bad reply: answer larger than {MAX_ANSWER_BYTES >> 20} MiB from {source}, read no further (an answer of"
        " `max_tokens` is a few hundred KB at most)"
    )


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
