"""`--llm NAME` parsed once into a `ProviderSpec`, and the providers built from it for a run.

NAME is anthropic, batch, openai, claude-cli, codex-cli, heuristic, replay:FILE or auto. `auto` uses what this
machine already has, in this order: an Anthropic API key; `claude` logged in (a Claude subscription); `codex`
logged in (a ChatGPT plan); an OpenAI-compatible server (`openai_base_url`); else the rules (no model)."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from core.errors import ConfigError
from core.llm import CostCap, HeuristicProvider, Provider, ReplayProvider
from core.llm.heuristic import NOTICE
from core.llm.logins import claude_login, codex_login
from flows.config import Settings

__all__ = ["ProviderFactory", "ProviderHandle", "ProviderKind", "ProviderSpec", "make_provider", "resolve_provider"]

ProviderKind = Literal["anthropic", "batch", "heuristic", "replay", "openai", "claude-cli", "codex-cli"]


class ProviderSpec(BaseModel):
    """The provider a run uses, resolved from `--llm` and the settings before any work starts."""

    model_config = ConfigDict(frozen=True)

    kind: ProviderKind
    replay_path: Path | None = None
    reflector_model: str
    curator_model: str
    notices: tuple[str, ...] = ()
    reason: str | None = None  # why `auto` chose it
    key_source: str | None = None  # where the API key came from, for the one line that says it was refused

    @property
    def label(self) -> str:
        """How runs and summaries name it: `anthropic`, `replay:FILE`, ..."""
        return f"replay:{self.replay_path}" if self.kind == "replay" else self.kind

    @property
    def calls_a_model(self) -> bool:
        """False for the rules (`heuristic`): no model reads anything, nothing is paid, nothing is judged."""
        return self.kind != "heuristic"

    @property
    def subscription(self) -> bool:
        """True for the CLIs a plan pays for (`claude-cli`, `codex-cli`): counted in calls, capped per run."""
        return self.kind in ("claude-cli", "codex-cli")

    @property
    def local(self) -> bool:
        """True for an OpenAI-compatible server (llama.cpp, vLLM, ...): small models, smaller per-call limits."""
        return self.kind == "openai"

    @property
    def batched(self) -> bool:
        """True for the Message Batches API (half the price, answers within a day)."""
        return self.kind == "batch"


# Builds the provider a run uses (once per run); the cost cap counts what the run spends.
ProviderFactory = Callable[[ProviderSpec, Settings, CostCap], Provider]


class ProviderHandle:
    """A run's one provider (and its one SDK client), built on first use: a run with nothing to do never loads
    the SDK. Thread-safe; shared by reference by every step, through Prefect tasks too."""

    def __init__(self, build: Callable[[], Provider]) -> None:
        self._build = build
        self._provider: Provider | None = None
        self._lock = threading.Lock()

    @classmethod
    def of(cls, spec: ProviderSpec, settings: Settings, factory: ProviderFactory) -> ProviderHandle:
        """The handle of `spec`'s provider, with a cost cap of `cost_cap_usd` for the run."""
        return cls(lambda: factory(spec, settings, CostCap(settings.cost_cap_usd)))

    def get(self) -> Provider:
        """The provider, built the first time."""
        with self._lock:
            if self._provider is None:
                self._provider = self._build()
            return self._provider


def _key(settings: Settings) -> str | None:
    return settings.anthropic_api_key.get_secret_value() if settings.anthropic_api_key else None


def _key_source() -> str:
    for name in ("PLAYBOOK_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY"):
        if os.environ.get(name):
            return f"`{name}`"
    return "`anthropic_api_key` in playbook.toml"


def resolve_provider(llm: str | ProviderSpec, settings: Settings, *, estimate_only: bool = False) -> ProviderSpec:
    """Parse `llm` once; `auto` picks what this machine has (the module docstring gives the order).
    `estimate_only`: the spec prices a run (`--dry-run`) and never calls, so a missing key is no error.

    Raises:
        ConfigError: a provider that needs a key has none, a replay file is missing, or the name is unknown.
    """
    if isinstance(llm, ProviderSpec):
        return llm
    notices: list[str] = []
    spec = llm
    reason = None
    if spec == "auto":
        spec, reason = _auto(settings)
        if spec == "heuristic":
            notices.append(f"No model is set up here: using the rules (heuristic provider). {NOTICE}")
    models = {"reflector_model": settings.reflector_model, "curator_model": settings.curator_model}
    if spec.startswith("replay:"):
        path = Path(spec.split(":", 1)[1])
        if not path.is_file():
            raise ConfigError(f"Replay file `{path}` does not exist; pass `--llm replay:FILE` with a JSONL recording.")
        return ProviderSpec(kind="replay", replay_path=path, **models)
    if spec in ("anthropic", "batch"):
        if not _key(settings) and not estimate_only:
            raise ConfigError(
                f"The `{spec}` provider needs an Anthropic API key; set ANTHROPIC_API_KEY (or"
                " PLAYBOOK_ANTHROPIC_API_KEY), or pass `--llm heuristic`."
            )
        return ProviderSpec(
            kind=spec,  # type: ignore[arg-type]
            notices=tuple(notices),
            key_source=_key_source() if _key(settings) else None,
            reason=reason,
            **models,
        )
    if spec == "heuristic":
        return ProviderSpec(kind="heuristic", notices=tuple(notices or [NOTICE]), reason=reason, **models)
    if spec == "openai":
        if not settings.openai_base_url:
            raise ConfigError(
                "The `openai` provider needs `openai_base_url` (PLAYBOOK_OPENAI_BASE_URL), e.g."
                " http://127.0.0.1:8080/v1 for llama.cpp's server."
            )
        return ProviderSpec(
            kind="openai", notices=tuple(notices), key_source="`openai_api_key`", reason=reason, **models
        )
    if spec == "claude-cli":
        if shutil.which(settings.claude_cli) is None:
            raise ConfigError(
                f"The `claude-cli` provider runs `{settings.claude_cli} -p`, which is not on PATH; install Claude Code"
                " or set `claude_cli` to its path."
            )
        return ProviderSpec(
            kind="claude-cli", notices=tuple(notices), key_source="the Claude Code login", reason=reason, **models
        )
    if spec == "codex-cli":
        if shutil.which(settings.codex_cli) is None:
            raise ConfigError(
                f"The `codex-cli` provider runs `{settings.codex_cli} exec`, which is not on PATH; install the Codex"
                " CLI or set `codex_cli` to its path."
            )
        codex = {"reflector_model": settings.codex_model or "codex", "curator_model": settings.codex_model or "codex"}
        return ProviderSpec(
            kind="codex-cli", notices=tuple(notices), key_source="the Codex login", reason=reason, **codex
        )
    raise ConfigError(
        f"Unknown provider `{spec}`; use anthropic, batch, openai, claude-cli, codex-cli, heuristic, replay:FILE or"
        " auto."
    )


def _auto(settings: Settings) -> tuple[str, str]:
    """(the provider `auto` picks here, and why): see the module docstring for the order."""
    if _key(settings):
        return "anthropic", f"an Anthropic API key is set ({_key_source()})"
    how = claude_login(settings.claude_cli)
    if how is not None:
        return "claude-cli", f"`{settings.claude_cli}` is logged in ({how})"
    how = codex_login(settings.codex_cli)
    if how is not None:
        return "codex-cli", f"`{settings.codex_cli}` is logged in ({how})"
    if settings.openai_base_url:
        return "openai", f"`openai_base_url` is set ({settings.openai_base_url})"
    return "heuristic", "no API key, no logged-in `claude` or `codex`, no `openai_base_url`"


def make_provider(spec: ProviderSpec, settings: Settings, cap: CostCap) -> Provider:
    """The default factory: the provider `spec` names, configured from `settings`."""
    if spec.kind == "heuristic":
        return HeuristicProvider(settings.redactor())
    if spec.kind == "replay":
        assert spec.replay_path is not None  # set by resolve_provider for every replay spec
        return ReplayProvider(spec.replay_path)
    if spec.kind == "claude-cli":
        from core.llm.claude_cli import ClaudeCliProvider

        return ClaudeCliProvider(settings.claude_cli, timeout=settings.claude_cli_timeout_s, cost_cap=cap)
    if spec.kind == "codex-cli":
        from core.llm.codex_cli import CodexCliProvider

        return CodexCliProvider(settings.codex_cli, model=settings.codex_model, timeout=settings.claude_cli_timeout_s)
    if spec.kind == "openai":
        from core.llm.openai_compat import OpenAICompatProvider

        assert settings.openai_base_url is not None  # checked by resolve_provider
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
        return OpenAICompatProvider(
            settings.openai_base_url,
            api_key=key,
            timeout=settings.limits(spec.local).request_timeout_s,
            cost_cap=cap,
            prices=settings.prices,
        )
    # The SDK is imported only for the providers that use it (about 2 s): read commands never pay for it.
    from core.llm.batches import BatchProvider
    from core.llm.claude import AnthropicProvider, make_client

    client = make_client(
        api_key=_key(settings),
        base_url=settings.anthropic_base_url,
        timeout=settings.limits(spec.local).request_timeout_s,
        max_retries=settings.max_retries,
        retry_after_cap=settings.retry_after_cap_s,
    )
    if spec.kind == "batch":
        return BatchProvider(client, cost_cap=cap)
    return AnthropicProvider(
        client,
        cost_cap=cap,
        prices=settings.prices,
        local=settings.local_server(spec.local),
        deadline_s=settings.limits(spec.local).request_timeout_s,
    )
