"""Run-wide limits on starting model calls: a deadline, a call cap, a circuit breaker, a stop on a refused key.

A provider never raises, so without this a bad key, a server answering 500 forever or one that hangs
costs every session of the night its own failure (and a hang 10 minutes each). `CallGuard` sees every
answer; once it has stopped, no new call starts: calls already queued come back at once as `stopped`
failures, which are never counted against a session, so the sessions wait for the next run.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

from core.llm.base import Failure, LLMRequest, LLMResponse, Provider

__all__ = ["CallGuard", "GuardedProvider"]


class CallGuard:
    """Shared by every step of one run; thread-safe.

    Args:
        deadline: wall-clock time (`time.time()`) after which no call starts; None for none.
        breaker_after: consecutive failures of one kind that stop the run's calls (0: never).
        max_calls: calls the run may start at most (a plan's allowance: `max_calls`); None for no cap.
        clock: the time source (tests pass their own).
    """

    def __init__(
        self,
        *,
        deadline: float | None = None,
        breaker_after: int = 5,
        max_calls: int | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.deadline = deadline
        self.breaker_after = breaker_after
        self.max_calls = max_calls
        self.started = 0
        self.clock = clock
        self._lock = threading.Lock()
        self._streak: tuple[Failure | None, int, str] = (None, 0, "")
        self.stopped: str | None = None  # why calls stopped, once they have
        self.refused_key: str | None = None  # the API's words when it refused the key

    def blocked(self) -> str | None:
        """Why no call may start now, or None."""
        with self._lock:
            return self._blocked()

    def _blocked(self) -> str | None:
        if self.stopped is None and self.deadline is not None and self.clock() >= self.deadline:
            self.stopped = "the run deadline (`max_run_minutes`) has passed"
        return self.stopped

    def start(self, calls: int = 1) -> str | None:
        """Count `calls` about to start, or say why they may not (then nothing is counted)."""
        with self._lock:
            why = self._blocked()
            if why is None and self.max_calls is not None and self.started + calls > self.max_calls:
                why = (
                    f"the run's call cap (`max_calls` = {self.max_calls}) is reached; the other sessions wait for"
                    " the next run"
                )
                if calls == 1:
                    self.stopped = why
            if why is None:
                self.started += calls
            return why

    def record(self, response: LLMResponse) -> None:
        """Count one answer: a success resets the breaker; a refused key stops everything at once."""
        with self._lock:
            if response.failure == "stopped":
                return
            if response.error is None:
                self._streak = (None, 0, "")
                return
            if response.failure == "auth":
                self.refused_key = response.error
                self.stopped = f"the API refused the key ({response.error})"
                return
            kind, n, _ = self._streak
            n = n + 1 if kind == response.failure else 1
            self._streak = (response.failure, n, response.error)
            if self.breaker_after and n >= self.breaker_after and self.stopped is None:
                self.stopped = f"{n} model calls in a row failed the same way (last: {response.error})"


class GuardedProvider(Provider):
    """`inner`, behind a `CallGuard`: calls start only while the guard allows, and every answer is counted."""

    def __init__(
        self, inner: Provider, guard: CallGuard, slot: Callable[[], AbstractContextManager[object]] | None = None
    ) -> None:
        """`slot`: held around every call (a share of a limit all of an organisation's workers draw from)."""
        self.inner = inner
        self.guard = guard
        self.slot = slot
        self.name = inner.name
        self.cacheable = inner.cacheable
        self.warm_cache_first = inner.warm_cache_first
        self.batches = inner.batches

    def _stopped(self, request: LLMRequest, why: str) -> LLMResponse:
        return LLMResponse(provider=self.name, model=request.model, error=f"not started: {why}", failure="stopped")

    def complete(self, request: LLMRequest) -> LLMResponse:
        """The inner provider's answer, or a `stopped` failure without any call."""
        why = self.guard.start()
        if why:
            return self._stopped(request, why)
        with self.slot() if self.slot is not None else nullcontext():
            response = self.inner.complete(request)
        self.guard.record(response)
        return response

    def complete_many(self, requests: list[LLMRequest]) -> list[LLMResponse]:
        """The inner provider's answers (one batch), or `stopped` failures without any call."""
        why = self.guard.start(len(requests))
        if why:
            return [self._stopped(r, why) for r in requests]
        responses = self.inner.complete_many(requests)
        for response in responses:
            self.guard.record(response)
        return responses

    def slots(self) -> int | None:
        """The inner provider's server's slots."""
        return self.inner.slots()
