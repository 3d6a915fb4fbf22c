"""What a run would cost, before it runs: token counts of the requests it would send (from the same
renderer and prompt builders), the prompt cache the epochs would reuse, and the price live and in batches."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from core.llm.base import Usage
from core.llm.pricing import BATCH_DISCOUNT, Prices, cost_usd

__all__ = ["Estimate", "estimate_cost"]


class Estimate(BaseModel):
    """A run's expected calls, tokens and price; `output_tokens` is an assumption (`per_call` each)."""

    sessions: list[str]
    calls: int
    input_tokens: int  # billed at the input price (the per-session part of each prompt)
    cache_write_tokens: int  # the shared system prefix, written once per epoch and step
    cache_read_tokens: int  # ... and read by the epoch's other calls
    output_tokens: int
    live_usd: float
    batch_usd: float
    cache_reuse: float  # share of prompt tokens read from the cache


def estimate_cost(
    sessions: Sequence[str],
    steps: Sequence[tuple[str, Sequence[tuple[int, int]]]],
    *,
    epoch_size: int,
    per_call: int,
    prices: Prices | None = None,
    local: bool = False,
) -> Estimate:
    """Price `steps`: (model, [(system tokens, user tokens) per session]) each. Within an epoch of
    `epoch_size` sessions the first call of a step writes its system prefix to the cache and the others read
    it; every call is assumed to write `per_call` output tokens. Batches cost `BATCH_DISCOUNT` of live."""
    total = Usage()
    live = 0.0
    calls = 0
    for model, shapes in steps:
        usage = Usage()
        for i, (system, user) in enumerate(shapes):
            first = i % max(1, epoch_size) == 0
            usage = Usage(
                input_tokens=usage.input_tokens + user,
                output_tokens=usage.output_tokens + per_call,
                cache_write_tokens=usage.cache_write_tokens + (system if first else 0),
                cache_read_tokens=usage.cache_read_tokens + (0 if first else system),
            )
        calls += len(shapes)
        live += cost_usd(model, usage, prices=prices, local=local)
        total = Usage(
            input_tokens=total.input_tokens + usage.input_tokens,
            output_tokens=total.output_tokens + usage.output_tokens,
            cache_write_tokens=total.cache_write_tokens + usage.cache_write_tokens,
            cache_read_tokens=total.cache_read_tokens + usage.cache_read_tokens,
        )
    prompt = total.input_tokens + total.cache_write_tokens + total.cache_read_tokens
    return Estimate(
        sessions=list(sessions),
        calls=calls,
        input_tokens=total.input_tokens,
        cache_write_tokens=total.cache_write_tokens,
        cache_read_tokens=total.cache_read_tokens,
        output_tokens=total.output_tokens,
        live_usd=round(live, 6),
        batch_usd=round(live * BATCH_DISCOUNT, 6),
        cache_reuse=round(total.cache_read_tokens / prompt, 4) if prompt else 0.0,
    )
