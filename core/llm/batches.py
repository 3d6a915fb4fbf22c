"""The `batch` provider: the Message Batches API for backfills, at half the price.

An epoch's requests are submitted together (split to respect 100,000 requests and 256 MB per batch),
polled until the batch ends, and collected by `custom_id`. Errored (other than invalid requests) and
expired requests are resubmitted for a few rounds; what still fails comes back as an error response. A result
that stopped at its output limit comes back as a failed call (`truncated`) without being resubmitted: the same
request would stop at the same limit.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import anthropic

from core.llm.base import Failure, LLMRequest, LLMResponse, Provider
from core.llm.claude import classify, describe_error, message_params, stopped_short, text_of, usage_of
from core.llm.pricing import CostCap, cost_usd

__all__ = ["MAX_BATCH_BYTES", "MAX_BATCH_REQUESTS", "BatchProvider", "split_batches"]

MAX_BATCH_REQUESTS = 100_000
MAX_BATCH_BYTES = 256 * 1024 * 1024


def split_batches(
    items: Sequence[dict[str, Any]], *, max_requests: int = MAX_BATCH_REQUESTS, max_bytes: int = MAX_BATCH_BYTES
) -> list[list[dict[str, Any]]]:
    """Group batch request items so each group respects both limits (with headroom for the envelope)."""
    groups: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] = []
    size = 0
    budget = int(max_bytes * 0.95)
    for item in items:
        item_size = len(json.dumps(item).encode())
        if current and (len(current) >= max_requests or size + item_size > budget):
            groups.append(current)
            current, size = [], 0
        current.append(item)
        size += item_size
    if current:
        groups.append(current)
    return groups


class BatchProvider(Provider):
    """Batch calls through `client.messages.batches`. Never raises."""

    name = "batch"
    cacheable = True
    batches = True

    def __init__(
        self,
        client: anthropic.Anthropic,
        *,
        cost_cap: CostCap | None = None,
        poll_interval_s: float = 30.0,
        max_rounds: int = 3,
        max_wait_s: float = 24 * 3600,
        sleep: Callable[[float], None] = time.sleep,
        max_requests: int = MAX_BATCH_REQUESTS,
        max_bytes: int = MAX_BATCH_BYTES,
    ) -> None:
        self.client = client
        self.cost_cap = cost_cap or CostCap(None)
        self.poll_interval_s = poll_interval_s
        self.max_rounds = max_rounds
        self.max_wait_s = max_wait_s
        self.sleep = sleep
        self.max_requests = max_requests
        self.max_bytes = max_bytes
        self.batches_submitted = 0

    def complete(self, request: LLMRequest) -> LLMResponse:
        """A batch of one."""
        return self.complete_many([request])[0]

    def complete_many(self, requests: list[LLMRequest]) -> list[LLMResponse]:
        """Answer every request, in order, through as few batches as the limits allow."""
        ids = [f"r{i}-{r.prompt_hash()[:16]}" for i, r in enumerate(requests)]
        by_id = dict(zip(ids, requests, strict=True))
        results: dict[str, LLMResponse] = {}
        pending = list(ids)
        last_error: dict[str, str] = {}
        for _ in range(self.max_rounds):
            if not pending:
                break
            if self.cost_cap.exhausted():
                break
            items = [{"custom_id": cid, "params": message_params(by_id[cid], structured=True)} for cid in pending]
            retry: list[str] = []
            for group in split_batches(items, max_requests=self.max_requests, max_bytes=self.max_bytes):
                outcome = self._run_batch(group, by_id)
                for cid in (item["custom_id"] for item in group):
                    got = outcome.get(cid)
                    if isinstance(got, LLMResponse):
                        results[cid] = got
                    else:
                        kind, message = got if got else ("missing", "no result returned")
                        last_error[cid] = f"{kind}: {message}"
                        if kind in ("invalid_request", "invalid_request_error", "auth"):  # resubmitting cannot help
                            failure: Failure = "auth" if kind == "auth" else "bad_request"
                            results[cid] = self._failed(by_id[cid], last_error[cid], failure)
                        else:
                            retry.append(cid)
            pending = retry
        for cid in pending:
            reason = self.cost_cap.message() if self.cost_cap.exhausted() else last_error.get(cid, "not processed")
            why: Failure = "cost_cap" if self.cost_cap.exhausted() else "other"
            results[cid] = self._failed(by_id[cid], f"{reason} (after {self.max_rounds} batch rounds)", why)
        return [results[cid] for cid in ids]

    def _failed(self, request: LLMRequest, error: str, failure: Failure) -> LLMResponse:
        return LLMResponse(provider=self.name, model=request.model, error=error, failure=failure)

    def _run_batch(
        self, group: list[dict[str, Any]], by_id: dict[str, LLMRequest]
    ) -> dict[str, LLMResponse | tuple[str, str]]:
        """Submit, poll, collect. Returns a response per succeeded id, or (error kind, message)."""
        started = time.perf_counter()
        try:
            batch = self.client.messages.batches.create(requests=group)  # type: ignore[arg-type]
            self.batches_submitted += 1
            waited = 0.0
            while batch.processing_status != "ended":
                if waited >= self.max_wait_s:
                    self.client.messages.batches.cancel(batch.id)
                    return {item["custom_id"]: ("expired", "batch did not end in time") for item in group}
                self.sleep(self.poll_interval_s)
                waited += self.poll_interval_s
                batch = self.client.messages.batches.retrieve(batch.id)
            out: dict[str, LLMResponse | tuple[str, str]] = {}
            for entry in self.client.messages.batches.results(batch.id):
                cid = entry.custom_id
                result = entry.result
                if result.type == "succeeded":
                    request = by_id[cid]
                    usage = usage_of(result.message.usage)
                    cost = cost_usd(request.model, usage, batch=True)
                    self.cost_cap.add(cost)
                    answered = LLMResponse(
                        text=text_of(result.message.content),
                        provider=self.name,
                        model=request.model,
                        usage=usage,
                        cost_usd=cost,
                        latency_ms=(time.perf_counter() - started) * 1000,
                    )
                    out[cid] = stopped_short(answered, result.message, request)
                elif result.type == "errored":
                    error = getattr(result, "error", None)
                    inner = getattr(error, "error", None)
                    kind = getattr(inner, "type", None) or "api_error"
                    out[cid] = (kind, str(getattr(inner, "message", "")) or "errored")
                else:
                    out[cid] = (str(result.type), "request " + str(result.type))
            return out
        except Exception as exc:
            kind = "auth" if classify(exc) == "auth" else "api_error"
            return {item["custom_id"]: (kind, describe_error(exc)) for item in group}
