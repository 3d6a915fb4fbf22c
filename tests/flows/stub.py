"""A cacheable in-process provider answering from a replay file (so caching and payment can be tested)."""

from __future__ import annotations

from pathlib import Path

from core.llm.base import LLMRequest, LLMResponse, Usage
from core.llm.pricing import CostCap
from core.llm.replay import ReplayProvider
from flows.config import Settings
from flows.models.providers import ProviderFactory, ProviderSpec
from flows.workspace import Workspace


class StubProvider(ReplayProvider):
    """Like replay, but each answer 'costs' and may be reused from the exchange store."""

    name = "stub"
    cacheable = True

    def complete(self, request: LLMRequest) -> LLMResponse:
        response = super().complete(request)
        return response.model_copy(
            update={"provider": "stub", "usage": Usage(input_tokens=100, output_tokens=10), "cost_usd": 0.001}
        )


def spec(ws: Workspace) -> ProviderSpec:
    """The spec a stubbed run records (its factory decides what actually answers)."""
    return ProviderSpec(
        kind="anthropic", reflector_model=ws.settings.reflector_model, curator_model=ws.settings.curator_model
    )


def factory(replay: Path) -> ProviderFactory:
    """A provider factory whose providers answer from `replay`."""

    def build(spec: ProviderSpec, settings: Settings, cap: CostCap) -> StubProvider:
        return StubProvider(replay)

    return build
