"""The workspace: the resolved settings of one command or one deployment run, and everything built from them,
each built once and kept (the store, each playbook's database and export rules, the provider a `--llm` names, a
run's configuration, how a team's bucket is read). Every library function takes it, or the one piece it needs,
instead of the settings (as every command of dlt goes through its `Pipeline`, and of datasette through its
`Datasette`)."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, PrivateAttr

from core.errors import ConfigError
from core.playbook_names import PLAYBOOK_NAME_RULE, is_playbook_name
from flows.config import Settings
from flows.context import Database, ExportRules, RemoteSource, RunConfig, run_config

if TYPE_CHECKING:  # the providers load the model clients' modules: only the commands that run a model need them
    from core.redact import Redactor
    from flows.models.providers import ProviderFactory, ProviderHandle, ProviderSpec

__all__ = ["Workspace"]


class Workspace(BaseModel):
    """The settings of one command or run, and what is built from them (on first use, then kept). A Prefect flow
    takes it as a parameter: it travels as its settings, and the pieces are built again where the flow runs."""

    model_config = ConfigDict(frozen=True, ignored_types=(cached_property,))

    settings: Settings
    _databases: dict[str | None, Database] = PrivateAttr(default_factory=dict)
    _rules: dict[str, ExportRules] = PrivateAttr(default_factory=dict)
    _providers: dict[tuple[str, bool], ProviderSpec] = PrivateAttr(default_factory=dict)

    @classmethod
    def of(cls, settings: Settings) -> Workspace:
        """The workspace of `settings`."""
        return cls(settings=settings)

    @property
    def playbook(self) -> str:
        """The playbook a command works on when it names none."""
        return self.settings.playbook

    @property
    def playbooks(self) -> list[str]:
        """The playbooks a nightly curates, in order."""
        return self.settings.playbooks

    @property
    def out_dir(self) -> Path:
        """Where a run writes its exports and reports."""
        return self.settings.out_dir

    @cached_property
    def store(self) -> Database:
        """The database ingest writes sessions to (the one file, or the shared store of the shards)."""
        return Database.store_of(self.settings)

    def database(self, playbook: str | None = None) -> Database:
        """The database `playbook` (default: the workspace's) is kept in.

        Raises:
            ConfigError: `playbook` is not a playbook name (a name given to a command as an argument).
        """
        if playbook is not None:
            _check_name(playbook)
        if playbook not in self._databases:
            self._databases[playbook] = Database.of(self.settings, playbook)
        return self._databases[playbook]

    def rules(self, playbook: str | None = None) -> ExportRules:
        """What decides an export of `playbook` (default: the workspace's)."""
        name = _check_name(playbook or self.playbook)
        if name not in self._rules:
            self._rules[name] = ExportRules.of(self.settings, name)
        return self._rules[name]

    def provider(self, llm: str | ProviderSpec | None = None, *, estimate_only: bool = False) -> ProviderSpec:
        """The provider `llm` names (default: the settings' `llm`), resolved once: `auto` looks at this machine
        (keys, logins) the first time only. `estimate_only`: to price a run, which needs no key.

        Raises:
            ConfigError: the provider cannot be used here (see `resolve_provider`).
        """
        from flows.models.providers import ProviderSpec, resolve_provider

        if isinstance(llm, ProviderSpec):
            return llm
        key = (llm or self.settings.llm, estimate_only)
        if key not in self._providers:
            self._providers[key] = resolve_provider(key[0], self.settings, estimate_only=estimate_only)
        return self._providers[key]

    def handle(self, spec: ProviderSpec, factory: ProviderFactory) -> ProviderHandle:
        """A run's one provider of `spec`, built by `factory` on first use, with the run's cost cap."""
        from flows.models.providers import ProviderHandle

        return ProviderHandle.of(spec, self.settings, factory)

    def run_config(self, playbook: str, provider: ProviderSpec | None) -> RunConfig:
        """What a curation run of `playbook` with `provider` (None: no model) needs of the settings."""
        return run_config(self.settings, playbook, provider)

    @cached_property
    def redactor(self) -> Redactor:
        """What masks secrets in everything the workspace shows or sends (built once: it compiles its rules)."""
        return self.settings.redactor()

    @cached_property
    def remote(self) -> RemoteSource:
        """How a team's bucket is read."""
        return RemoteSource.of(self.settings)


def _check_name(playbook: str) -> str:
    """`playbook` when it is a playbook name: the settings check theirs, and this every name a command passes on
    (`playbook new NAME`, `publish -p NAME`), before any file is named after it."""
    if not is_playbook_name(playbook):
        raise ConfigError(f"{playbook!r} is not a playbook name; use {PLAYBOOK_NAME_RULE}.")
    return playbook
