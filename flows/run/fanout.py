"""The model-call fan-out: a step's requests answered by the provider, as the answers arrive (a thread per call in
flight, up to the run's concurrency; the batch API at once), with the first call alone when it should warm the
prompt cache for the others; and one request outside an epoch."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from core.llm.base import LLMRequest, LLMResponse, Provider

__all__ = ["answer_requests", "ask_once", "warms_cache"]


def warms_cache(provider: Provider, mode: str, waiting: int, concurrency: int) -> bool:
    """Whether a step's first call runs alone, to write the prompt cache the others then read.

    `always`: whenever the provider caches and more than one call waits. `never`: the calls fan out at once
    (more concurrency; each call of the first wave writes its own cache entry). `auto`: only when the calls
    outnumber `concurrency`: there are several waves anyway, so one call ahead costs a fraction of a wave,
    while with a single wave it would double the step's wall time.
    """
    if not provider.warm_cache_first or waiting < 2 or mode == "never":
        return False
    return mode == "always" or waiting > concurrency


def answer_requests(
    provider: Provider,
    requests: list[LLMRequest],
    todo: list[int],
    concurrency: int,
    warm_cache: str = "auto",
    tick: float | None = None,
) -> Iterator[list[tuple[int, LLMResponse]]]:
    """The provider's responses to `requests[i]` for `i` in `todo`, as they arrive: each batch holds every
    answer that had arrived when the previous one was taken. With `tick`, an empty batch comes when nothing
    arrived for that long, so the caller can store what it holds without waiting for the next answer."""
    if not todo:
        return
    if provider.batches:  # the batch API answers an epoch at once
        yield list(zip(todo, provider.complete_many([requests[i] for i in todo]), strict=True))
        return
    todo = list(todo)
    # No more calls in flight than the server answers at once: the others would wait in its queue, where their
    # deadline runs (a one-slot local server timed out 4 of 5 calls sent together).
    concurrency = min(concurrency, provider.slots() or concurrency)
    if warms_cache(provider, warm_cache, len(todo), concurrency):
        # A cache entry exists only once a first response has started: one call warms the shared
        # system prefix (the frozen playbook), then the rest fan out and read it.
        first = todo.pop(0)
        yield [(first, provider.complete(requests[first]))]
    pool = ThreadPoolExecutor(max_workers=max(1, concurrency))
    try:
        waiting = {pool.submit(provider.complete, requests[i]): i for i in todo}
        while waiting:
            done, _ = wait(waiting, timeout=tick, return_when=FIRST_COMPLETED)
            yield sorted((waiting.pop(future), future.result()) for future in done)
    except BaseException:
        # Ctrl-C, or a caller that stopped reading: the calls not started are dropped, and the ones in flight are
        # not waited for (a call holds its thread until its deadline, minutes); their answers would be unread.
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


def ask_once(provider: Provider, request: LLMRequest) -> LLMResponse:
    """One request outside an epoch (a consolidation's curator call), through the batch API when that is the
    provider's only way."""
    return provider.complete_many([request])[0] if provider.batches else provider.complete(request)
