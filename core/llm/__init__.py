"""LLM providers behind one interface: anthropic, batch, heuristic, replay.

The package exports the interface and the providers that need no SDK; the `anthropic` providers live in
`core.llm.claude` and `core.llm.batches` and are imported where a run needs them, because the SDK takes
about 2 s to import and most commands never call a model.
"""

from __future__ import annotations

from core.llm.base import LLMRequest, LLMResponse, Provider, Usage
from core.llm.heuristic import HeuristicProvider
from core.llm.pricing import CostCap
from core.llm.replay import ReplayProvider

__all__ = [
    "CostCap",
    "HeuristicProvider",
    "LLMRequest",
    "LLMResponse",
    "Provider",
    "ReplayProvider",
    "Usage",
]
