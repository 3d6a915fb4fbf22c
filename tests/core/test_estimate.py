"""The cost estimate against a figure computed by hand."""

from __future__ import annotations

import pytest

from core.estimate import estimate_cost


def test_the_estimate_matches_a_hand_computed_figure() -> None:
    # 3 sessions, epochs of 2: each step writes its 1,000-token prefix twice (epochs [2, 1]) and reads it once.
    reflector = ("claude-sonnet-4-5", [(1000, 2000)] * 3)
    curator = ("claude-haiku-4-5", [(1000, 500)] * 3)
    got = estimate_cost(["a", "b", "c"], [reflector, curator], epoch_size=2, per_call=500)
    # sonnet: 6,000 in x $3 + 2,000 write x $3.75 + 1,000 read x $0.30 + 1,500 out x $15 = $0.0483
    # haiku:  1,500 in x $1 + 2,000 write x $1.25 + 1,000 read x $0.10 + 1,500 out x $5  = $0.0116
    assert got.live_usd == pytest.approx(0.0483 + 0.0116)
    assert got.batch_usd == pytest.approx((0.0483 + 0.0116) / 2)
    assert (got.calls, got.input_tokens, got.cache_write_tokens, got.cache_read_tokens, got.output_tokens) == (
        6,
        7500,
        4000,
        2000,
        3000,
    )
    assert got.cache_reuse == pytest.approx(2000 / 13500, abs=1e-4)


def test_a_local_server_costs_nothing() -> None:
    got = estimate_cost(["a"], [("smollm2", [(100, 100)])], epoch_size=8, per_call=50, local=True)
    assert got.live_usd == 0.0 and got.calls == 1
