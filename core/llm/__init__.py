"""LLM providers behind one interface: anthropic, batch, heuristic, replay."""

from __future__ import annotations

from core.llm.base import LLMRequest, LLMResponse, Provider, Usage
from core.llm.batches import BatchProvider
from core.llm.claude import AnthropicProvider, CostCap, make_client
from core.llm.heuristic import HeuristicProvider
from core.llm.replay import ReplayProvider

__all__ = [
    "AnthropicProvider",
    "BatchProvider",
    "CostCap",
    "HeuristicProvider",
    "LLMRequest",
    "LLMResponse",
    "Provider",
    "ReplayProvider",
    "Usage",
    "make_client",
]
