"""A cacheable in-process provider answering from a replay file (so caching and payment can be tested)."""

from __future__ import annotations

from pathlib import Path

from core.llm.base import LLMRequest, LLMResponse, Usage
from core.llm.replay import ReplayProvider
from flows.providers import register_provider


class StubProvider(ReplayProvider):
    """Like replay, but each answer 'costs' and may be reused from the exchange store."""

    name = "stub"
    cacheable = True

    def complete(self, request: LLMRequest) -> LLMResponse:
        response = super().complete(request)
        return response.model_copy(
            update={"provider": "stub", "usage": Usage(input_tokens=100, output_tokens=10), "cost_usd": 0.001}
        )


def register(replay: Path) -> None:
    """Make `--llm stub` answer from `replay`."""
    register_provider("stub", lambda settings, cap: StubProvider(replay))
