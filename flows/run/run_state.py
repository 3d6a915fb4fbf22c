"""What a curation run carries between its steps: its context and memory, its epochs, and each step's results.

`flows.run.steps` holds the steps themselves; these are the values they take and return, shared with the run loop
(`flows.run.curation`) and the Prefect tasks (`flows.run.pipeline`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Literal, NamedTuple, TypeVar

import duckdb
from pydantic import BaseModel, ConfigDict, Field

from core.agent_reports import applied_merges, reports_carried
from core.llm.base import LLMResponse, Provider
from core.llm.embed import VectorIndex
from core.llm.guard import CallGuard
from core.miner import History, Observed
from core.models import ApplyReport, CuratorOutput, Playbook, ReflectorOutput
from core.operations import NearFinder
from core.redact import Redactor
from core.sections import SectionSet
from core.store.exposure import reported_harm
from core.store.registry import sections_of
from core.store.versions import Tip, current_version, load_version
from flows.context import Database, RunConfig
from flows.models.providers import ProviderHandle, ProviderSpec

__all__ = [
    "Epoch",
    "ErrorKind",
    "RunContext",
    "RunMemo",
    "Selection",
    "SessionApply",
    "StepResult",
    "Steps",
]

OutputT = TypeVar("OutputT", ReflectorOutput, CuratorOutput)


@dataclass
class RunMemo:
    """What one run keeps in memory between its steps and epochs, so a session's cost does not grow with the
    playbook: the versions it rebuilt (immutable values; one per playbook, the newest asked for), each
    playbook's open rows as it last wrote them, entry vectors it read, and entry texts the redactor has
    already passed. Shared by reference, like the guard."""

    versions: dict[str, tuple[int, Playbook]] = field(default_factory=dict)
    tips: dict[str, Tip] = field(default_factory=dict)
    vectors: dict[str, dict[str, Any]] = field(default_factory=dict)
    clean: set[str] = field(default_factory=set)
    # The engine's near-duplicate finder per (model, threshold): its matrix of every text seen grows through the
    # run instead of being stacked again each epoch.
    finders: dict[tuple[str, float], NearFinder] = field(default_factory=dict)
    # Every entry and proposed text's vector, by embedder (`core.llm.embed.VectorIndex`): the curator step's
    # neighbours and the engine's near-duplicate finder read one matrix that grows through the run.
    indexes: dict[str, VectorIndex] = field(default_factory=dict)
    # By embedder: the texts whose vector is stored (computed by the run or before it), whether read or not.
    stored: dict[str, set[str]] = field(default_factory=dict)
    # By embedder and by what they were checked against (`stored`, or `vectors`: read): the live texts' mappings
    # whose every text was in it (`core.layered.unseen_texts`).
    covered: dict[tuple[str, str], list[Mapping[str, int]]] = field(default_factory=dict)
    # The rules miner's evidence per project, added up once per run (`_mining`), and what it observed in each
    # session's messages at the reflector step, which the curator step's typed lessons are built from.
    histories: dict[str | None, History] = field(default_factory=dict)
    observed: dict[str, Observed] = field(default_factory=dict)
    # The sessions the run took (its epochs'), whose evidence the rules weigh beside what was observed before.
    chosen: set[str] = field(default_factory=set)
    # What the rules' evidence pass observed in each whole session of the run, with the folder it was observed in:
    # the session's own reflector step takes it instead of observing the same messages again.
    evidence: dict[str, tuple[str | None, Observed]] = field(default_factory=dict)
    # The entries each session of the current epoch had (`flows.run.shown.exposure_names`), by epoch number: read
    # once for its three steps.
    exposed: dict[int, dict[str, set[str]]] = field(default_factory=dict)
    # The sessions of each epoch applied before (`previous_applies`), read at its reflector step for its apply step
    # (only the apply step marks them), by epoch number.
    applied: dict[int, dict[str, tuple[datetime | None, int]]] = field(default_factory=dict)
    # For the rules: each session's (project, folder), read at its reflector step, for its curator step.
    places: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    # Each playbook's sections: written when it is created and never changed, so read once a run, not once a step.
    sections: dict[str, SectionSet] = field(default_factory=dict)
    # Each playbook's merged wordings (`core.consolidate.merged_wordings`) with the entry ids its merge history names:
    # read once a run, and again only after an epoch applied a MERGE or an ADD of one of those ids (or failed).
    merged: dict[str, tuple[frozenset[str], dict[str, str]]] = field(default_factory=dict)
    # Each playbook's harmful tags that are agents' reports, by entry id (`reported`): they alone never prune.
    reports: dict[str, dict[str, int]] = field(default_factory=dict)

    def reported(self, con: duckdb.DuckDBPyConnection, name: str) -> dict[str, int]:
        """`reported_harm`, read once a run: agents' reports are counted when the run starts, not during it."""
        held = self.reports.get(name)
        if held is None:
            held = self.reports[name] = reported_harm(con, name)
        return held

    def carry_reports(self, name: str, report: ApplyReport) -> None:
        """After a session applied: the entries its MERGEs made carry their sources' reports for the rest of the
        run (`reports_carried`)."""
        held = self.reports.get(name)
        if held and (merges := applied_merges(report)):
            self.reports[name] = reports_carried(held, merges)

    def section_set(self, con: duckdb.DuckDBPyConnection, name: str) -> SectionSet:
        """`sections_of`, read once a run."""
        held = self.sections.get(name)
        if held is None:
            held = self.sections[name] = sections_of(con, name)
        return held

    def version(self, con: duckdb.DuckDBPyConnection, name: str, version: int | None = None) -> Playbook:
        """`load_version`, rebuilt once: a version's content never changes."""
        number = current_version(con, name) if version is None else version
        held = self.versions.get(name)
        if held is not None and held[0] == number:
            return held[1]
        playbook = load_version(con, name, number)
        self.versions[name] = (number, playbook)
        return playbook

    def index(self, embedder: str) -> VectorIndex:
        """The run's `VectorIndex` of `embedder`'s vectors (made on first use)."""
        return self.indexes.setdefault(embedder, VectorIndex())

    def wrote(self, name: str, version: int, playbook: Playbook) -> None:
        """`playbook` was just stored as `version` of `name`: the next epoch starts from it without a rebuild."""
        self.versions[name] = (version, playbook)


class RunContext(BaseModel):
    """What every step of one run needs, resolved once when the run starts: the database, the run's
    configuration, the provider's spec and the handle that builds its one instance, and the run id."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    db: Database
    config: RunConfig
    spec: ProviderSpec
    handle: ProviderHandle
    run_id: str
    # Shared by every step of the run (a reference, also through Prefect tasks): deadline and breaker.
    guard: CallGuard = Field(default_factory=CallGuard)
    memo: RunMemo = Field(default_factory=RunMemo)
    # Held around every model call: a slot of a limit shared with other workers (Prefect's global concurrency
    # limit when the run is a Prefect flow run); None: no such limit.
    slot: Callable[[], AbstractContextManager[object]] | None = None

    @property
    def provider(self) -> Provider:
        """The run's provider, the one instance every call goes through (built on first use)."""
        return self.handle.get()

    @property
    def playbook(self) -> str:
        """The playbook the run curates."""
        return self.config.playbook

    @property
    def redactor(self) -> Redactor:
        """The redactor every text passes before a model, an entry or a store sees it."""
        return self.config.redactor


class Epoch(BaseModel):
    """Sessions judged against the same frozen playbook version."""

    epoch_no: int
    base_version: int
    session_ids: list[str]


# Why a step has no output for a session: the call failed (worth retrying as is, never counted against the
# session), or the session or the model's answer could not be processed (counted; quarantined when it repeats).
ErrorKind = Literal["call", "output", "preparation"]


class StepResult(BaseModel, Generic[OutputT]):
    """One session's outcome of one LLM step: the validated output, or why there is none."""

    session_id: str
    output: OutputT | None = None
    error: str | None = None
    error_kind: ErrorKind | None = None
    response: LLMResponse | None = None


class SessionApply(BaseModel):
    """What applying one session did."""

    session_id: str
    status: Literal["applied", "failed", "quarantined", "held"]
    version: int | None = None
    reason: str | None = None
    report: ApplyReport | None = None


class Selection(NamedTuple):
    """Pending sessions oldest first, sessions skipped with their reason, and epochs a killed run left open."""

    pending: list[str]
    skipped: dict[str, str]
    resumed: list[Epoch]


Reflect = Callable[[RunContext, Epoch], list[StepResult[ReflectorOutput]]]
Curate = Callable[[RunContext, Epoch, list[StepResult[ReflectorOutput]]], list[StepResult[CuratorOutput]]]
Apply = Callable[
    [RunContext, Epoch, list[StepResult[ReflectorOutput]], list[StepResult[CuratorOutput]]], list[SessionApply]
]


class Steps(NamedTuple):
    """The three per-epoch steps a run sequences: plain functions, or Prefect tasks wrapping them."""

    reflect: Reflect
    curate: Curate
    apply: Apply
