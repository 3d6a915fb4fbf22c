"""The values a command or a run is given, each built from the settings by its own `of`: the database it works on
(`Database`), what a curation run needs (`RunConfig`), what decides an export (`ExportRules`) and how a team's
bucket is read (`RemoteSource`). `flows.workspace.Workspace` is the one place that builds them; below it nothing
reads `Settings` (as dlt hands each step its own small configuration)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import duckdb
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from core.budget import Budget
from core.io.lock import run_lock
from core.models import Guards
from core.selection import Consent
from core.store.db import open_db, open_to_read, translate_error
from core.targets import ExportTarget
from flows.config import Settings, StepLimits

if TYPE_CHECKING:
    from core.llm.embed import Embedder
    from core.redact import Redactor
    from flows.models.providers import ProviderSpec

if not TYPE_CHECKING:
    # At run time pydantic takes a redactor as it is (it is built by `run_config` or `ExportRules.of`, never parsed):
    # importing `core.redact` compiles its rules, ~25 ms of CPU a read command that shows no text does not need.
    Redactor = Any

__all__ = ["Database", "ExportRules", "RemoteSource", "RunConfig", "run_config", "shard_path"]


def shard_path(store: Path, playbook: str) -> Path:
    """The file of `playbook`'s shard beside the store: `data/playbook.duckdb` -> `data/playbook.<playbook>.duckdb`."""
    return store.with_name(f"{store.stem}.{playbook}{store.suffix or '.duckdb'}")


class Database(BaseModel):
    """One database file and how to reach it: `wait_s` for a command that finds it taken (`--wait`),
    `busy_wait_s` for each of a run's own brief opens, `backups` kept by `nightly`. `store`: for a playbook's
    shard (`shard = "playbook"`), the shared store its sessions are read from (attached read-only)."""

    model_config = ConfigDict(frozen=True)

    path: Path
    wait_s: float = 15.0
    busy_wait_s: float = 120.0
    backups: int = 3
    store: Path | None = None

    @classmethod
    def of(cls, settings: Settings, playbook: str | None = None) -> Database:
        """The database `playbook` (default: the settings' one) is kept in: the one file, or with `shard =
        "playbook"` its own shard (which also reads the store's sessions)."""
        if settings.shard == "playbook":
            return cls.store_of(settings).model_copy(
                update={"path": shard_path(settings.db, playbook or settings.playbook), "store": settings.db}
            )
        return cls.store_of(settings)

    def for_playbook(self, playbook: str) -> Database:
        """The database of `playbook` beside this one: its shard when this is a shard (or a store with shards in
        use), else this very database."""
        return self if self.store is None else self.model_copy(update={"path": shard_path(self.store, playbook)})

    @classmethod
    def store_of(cls, settings: Settings) -> Database:
        """The database ingest writes sessions to (the one file, or the shared store of the shards)."""
        return cls(path=settings.db, wait_s=settings.wait_s, busy_wait_s=settings.busy_wait_s, backups=settings.backups)

    _held: duckdb.DuckDBPyConnection | None = PrivateAttr(default=None)

    @contextmanager
    def open(self, *, create: bool = True, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection for a run's step (waits `busy_wait_s` for a reader to let go); inside `held`, a cursor of
        the connection it holds."""
        if self._held is not None:
            cursor = self._held.cursor()  # its own transactions, safe to use from a step's own thread
            try:
                yield cursor
            except duckdb.Error as exc:
                raise translate_error(self.path, exc) from exc
            finally:
                cursor.close()
            return
        with open_db(self.path, read_only=read_only, create=create, wait=self.busy_wait_s, store=self.store) as con:
            yield con

    @contextmanager
    def held(self) -> Iterator[Database]:
        """This database with one connection open until the block ends, which every `open` inside it uses.

        For a run whose steps call no model (the rules): reopening the file for each of its ~13 steps an epoch was a
        fifth of a keyless nightly's CPU (the checks, the migration test and a checkpoint each time). A run that
        waits on a model keeps its brief opens, so readers get the file between its calls. Held already: itself."""
        if self._held is not None:
            yield self
            return
        with open_db(self.path, wait=self.busy_wait_s, store=self.store) as con:
            holding = self.model_copy()
            holding._held = con
            yield holding

    @contextmanager
    def read(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection to an existing database for a command that reads (read commands never create one): read-only
        unless the file needs a migration first (`core.store.db.open_to_read`); inside `held`, a cursor of the
        connection it holds (a process cannot open a file read-only while it has it open to write)."""
        if self._held is not None:
            with self.open() as con:
                yield con
            return
        with open_to_read(self.path, wait=self.wait_s, store=self.store) as con:
            yield con

    @contextmanager
    def lock(self, what: str, *, patient: bool = False) -> Iterator[None]:
        """The run lock every writer takes (one writer at a time), waiting `wait_s`; `patient`: `busy_wait_s`,
        for a flow nobody watches (a scheduled run waits out a command rather than fail)."""
        with run_lock(self.path, what, wait=self.busy_wait_s if patient else self.wait_s):
            yield

    @contextmanager
    def write(self, what: str, *, create: bool = True) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection for a command that writes, under the run lock."""
        with self.lock(what), open_db(self.path, create=create, wait=self.wait_s, store=self.store) as con:
            yield con

    @property
    def remote_root(self) -> Path:
        """Where objects fetched from teams' buckets are kept (beside the database)."""
        return self.path.parent / "remote"

    def remote_cache(self, url: str) -> Path:
        """The cache folder of one object-storage URL (one folder per URL)."""
        return self.remote_root / hashlib.sha256(url.encode()).hexdigest()[:12]


class RunConfig(BaseModel):
    """What one curation run of one playbook needs of the settings, resolved once when it starts."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    playbook: str
    limits: StepLimits
    budget: Budget
    guards: Guards
    redactor: Redactor
    near_duplicates: Literal["auto", "minilm", "lexical", "off"] = "auto"
    near_duplicate_threshold: float | None = None
    # Scoping (`[playbook_settings.NAME] projects`): (globs, inside) when it applies, and the global playbook a
    # bound playbook's sessions also curate.
    scope: tuple[list[str], bool] | None = None
    companion: str | None = None
    consent: Consent = Consent()
    min_messages: int = 4
    idle_minutes: float = 30.0
    max_attempts: int = 3
    epoch_size: int = 8
    concurrency: int = 4
    warm_cache: Literal["auto", "always", "never"] = "auto"
    cost_cap_usd: float = 20.0
    prompt_dirs: tuple[Path, ...] = ()
    shrink_warning_share: float = 0.2
    rejudge_after_days: float = 7.0
    consolidate_floor: float | None = None
    judge_max_entries: int = 60

    def similarity(self) -> tuple[Embedder, float] | None:
        """The sentence model and the near-duplicate threshold, or None when detection is off (loaded once per
        process)."""
        return None if self.near_duplicates == "off" else self.sentence_model()

    def sentence_model(self) -> tuple[Embedder, float]:
        """The sentence model and its threshold even with `near_duplicates = "off"` (for `consolidate`, which is
        asked for explicitly)."""
        from core.llm.embed import load_embedder  # numpy and the model only for the runs that use them

        embedder = load_embedder("auto" if self.near_duplicates == "off" else self.near_duplicates)
        return embedder, self.near_duplicate_threshold or embedder.threshold


def run_config(settings: Settings, playbook: str, provider: ProviderSpec | None) -> RunConfig:
    """The run configuration of `playbook`, for `provider` (its per-call limits; None: no model)."""
    prompt_dirs = (settings.prompts_dir / playbook, settings.prompts_dir) if settings.prompts_dir else ()
    return RunConfig(
        playbook=playbook,
        limits=settings.limits(provider is not None and provider.local),
        budget=settings.budget(playbook),
        guards=settings.guards(),
        redactor=settings.redactor(),
        near_duplicates=settings.near_duplicates,
        near_duplicate_threshold=settings.near_duplicate_threshold,
        scope=settings.session_scope(playbook),
        companion=settings.companion(playbook),
        consent=Consent(
            exclude_contributors=tuple(settings.exclude_contributors),
            exclude_projects=tuple(settings.exclude_projects),
        ),
        min_messages=settings.min_messages,
        idle_minutes=settings.idle_minutes,
        max_attempts=settings.max_attempts,
        epoch_size=settings.epoch_size,
        concurrency=settings.concurrency,
        warm_cache=settings.warm_cache,
        cost_cap_usd=settings.cost_cap_usd,
        prompt_dirs=prompt_dirs,
        shrink_warning_share=settings.shrink_warning_share,
        rejudge_after_days=settings.rejudge_after_days,
        consolidate_floor=settings.consolidate_floor,
        judge_max_entries=settings.judge_max_entries,
    )


def _default_redactor() -> Redactor:
    """A redactor with no personal patterns of the user's (what an `ExportRules` built without settings masks)."""
    from core.redact import Redactor

    return Redactor()


class ExportRules(BaseModel):
    """What decides an export of one playbook, resolved once from the settings."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    playbook: str
    review_required: bool = False
    budget: Budget = Budget()
    stale_after_days: float = 90.0
    min_contributors: int = 2
    redactor: Redactor = Field(default_factory=_default_redactor)
    targets: tuple[ExportTarget, ...] = ()

    @classmethod
    def of(cls, settings: Settings, playbook: str) -> ExportRules:
        """The rules the settings give `playbook`."""
        options = settings.options(playbook)
        return cls(
            playbook=playbook,
            review_required=options.review == "required",
            budget=settings.budget(playbook),
            stale_after_days=settings.stale_after_days,
            min_contributors=settings.min_contributors,
            redactor=settings.redactor(),
            targets=tuple(options.targets),
        )


class RemoteSource(BaseModel):
    """How a team's bucket is read: the store's options (endpoint, profile) and the contributors who withdrew."""

    model_config = ConfigDict(frozen=True)

    storage_options: dict[str, Any] = Field(default_factory=dict)
    exclude_contributors: tuple[str, ...] = ()

    @classmethod
    def of(cls, settings: Settings) -> RemoteSource:
        """How the settings read a bucket."""
        return cls(storage_options=settings.storage_options, exclude_contributors=tuple(settings.exclude_contributors))
