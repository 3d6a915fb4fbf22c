"""`--llm anthropic|batch|heuristic|replay:FILE|auto` -> a provider for one task of one run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from core.errors import ConfigError
from core.llm import AnthropicProvider, BatchProvider, CostCap, HeuristicProvider, Provider, ReplayProvider, make_client
from core.llm.heuristic import NOTICE
from flows.config import Settings

__all__ = ["Factory", "make_provider", "register_provider", "resolve_llm"]

Factory = Callable[[Settings, CostCap], Provider]
_EXTRA: dict[str, Factory] = {}


def register_provider(name: str, factory: Factory) -> None:
    """Make `--llm NAME` build a custom provider (used by bench/ for an in-process stub)."""
    _EXTRA[name] = factory


def _key(settings: Settings) -> str | None:
    return settings.anthropic_api_key.get_secret_value() if settings.anthropic_api_key else None


def resolve_llm(spec: str, settings: Settings) -> tuple[str, list[str]]:
    """The concrete provider for `spec`, and notices for the run summary.

    Raises:
        ConfigError: a provider that needs a key has none, or the spec is unknown.
    """
    notices: list[str] = []
    if spec == "auto":
        if _key(settings):
            spec = "anthropic"
        else:
            spec = "heuristic"
            notices.append(f"No Anthropic API key is configured: using the heuristic provider. {NOTICE}")
    if spec in ("anthropic", "batch") and not _key(settings):
        raise ConfigError(
            f"The `{spec}` provider needs an Anthropic API key; set ANTHROPIC_API_KEY (or"
            " PLAYBOOK_ANTHROPIC_API_KEY), or pass `--llm heuristic`."
        )
    if spec.startswith("replay:"):
        path = Path(spec.split(":", 1)[1])
        if not path.is_file():
            raise ConfigError(f"Replay file `{path}` does not exist; pass `--llm replay:FILE` with a JSONL recording.")
    elif spec not in ("anthropic", "batch", "heuristic") and spec not in _EXTRA:
        raise ConfigError(f"Unknown provider `{spec}`; use anthropic, batch, heuristic, replay:FILE or auto.")
    if spec == "heuristic" and not notices:
        notices.append(NOTICE)
    return spec, notices


def make_provider(spec: str, settings: Settings, *, spent_usd: float = 0.0) -> Provider:
    """A provider for an already resolved spec; the cost cap starts from what the run has spent."""
    cap = CostCap(settings.cost_cap_usd)
    cap.add(spent_usd)
    if spec in _EXTRA:
        return _EXTRA[spec](settings, cap)
    if spec == "heuristic":
        return HeuristicProvider()
    if spec.startswith("replay:"):
        return ReplayProvider(Path(spec.split(":", 1)[1]))
    client = make_client(
        api_key=_key(settings),
        base_url=settings.anthropic_base_url,
        timeout=settings.request_timeout_s,
        max_retries=settings.max_retries,
        retry_after_cap=settings.retry_after_cap_s,
    )
    if spec == "batch":
        return BatchProvider(client, cost_cap=cap)
    return AnthropicProvider(client, cost_cap=cap)
