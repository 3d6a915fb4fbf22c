"""Prices per million tokens, for cost accounting and the cost cap (batch requests cost half)."""

from __future__ import annotations

import threading

from core.llm.base import Usage

__all__ = ["BATCH_DISCOUNT", "PRICES", "CostCap", "Prices", "cost_usd"]

# (input, output, cache write, cache read) in USD per million tokens, by model family.
PRICES: dict[str, tuple[float, float, float, float]] = {
    "opus": (5.0, 25.0, 6.25, 0.50),
    "sonnet": (3.0, 15.0, 3.75, 0.30),
    "haiku": (1.0, 5.0, 1.25, 0.10),
}
BATCH_DISCOUNT = 0.5


Prices = dict[str, tuple[float, float, float, float]]


def cost_usd(
    model: str, usage: Usage, *, batch: bool = False, prices: Prices | None = None, local: bool = False
) -> float:
    """Cost of one call. `prices` (model name or family -> USD per million tokens) comes first; on Anthropic's
    API an unknown model is priced like sonnet so the cap still bites, while on another server (`local`) a
    model `prices` does not name is free."""
    name = model.lower()
    table = dict(prices or {}) if local else {**PRICES, **(prices or {})}
    found = next((table[k] for k in sorted(table, key=len, reverse=True) if k.lower() in name), None)
    if found is None:
        if local:
            return 0.0
        found = PRICES["sonnet"]
    price_in, price_out, price_write, price_read = found
    total = (
        usage.input_tokens * price_in
        + usage.output_tokens * price_out
        + usage.cache_write_tokens * price_write
        + usage.cache_read_tokens * price_read
    ) / 1_000_000
    return total * (BATCH_DISCOUNT if batch else 1.0)


class CostCap:
    """A per-run spending limit shared by the providers of one run (thread-safe)."""

    def __init__(self, limit_usd: float | None) -> None:
        self.limit_usd = limit_usd
        self.spent_usd = 0.0
        self._lock = threading.Lock()

    def exhausted(self) -> bool:
        """True once the spend has reached the limit: no new call may start."""
        with self._lock:
            return self.limit_usd is not None and self.spent_usd >= self.limit_usd

    def add(self, amount: float) -> None:
        """Record spend."""
        with self._lock:
            self.spent_usd += amount

    def message(self) -> str:
        """The error recorded for a call the cap prevented."""
        return f"cost cap of ${self.limit_usd:.2f} reached (spent ${self.spent_usd:.2f}); no new model calls this run"
