"""Prices per million tokens, for cost accounting and the cost cap (batch requests cost half)."""

from __future__ import annotations

from core.llm.base import Usage

__all__ = ["BATCH_DISCOUNT", "PRICES", "cost_usd"]

# (input, output, cache write, cache read) in USD per million tokens, by model family.
PRICES: dict[str, tuple[float, float, float, float]] = {
    "opus": (5.0, 25.0, 6.25, 0.50),
    "sonnet": (3.0, 15.0, 3.75, 0.30),
    "haiku": (1.0, 5.0, 1.25, 0.10),
}
BATCH_DISCOUNT = 0.5


def cost_usd(model: str, usage: Usage, *, batch: bool = False) -> float:
    """Cost of one call; unknown models are priced like sonnet so the cap still bites."""
    family = next((f for f in PRICES if f in model.lower()), "sonnet")
    price_in, price_out, price_write, price_read = PRICES[family]
    total = (
        usage.input_tokens * price_in
        + usage.output_tokens * price_out
        + usage.cache_write_tokens * price_write
        + usage.cache_read_tokens * price_read
    ) / 1_000_000
    return total * (BATCH_DISCOUNT if batch else 1.0)
