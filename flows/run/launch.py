"""Starting a run from a command (`curate`, `recurate`, `backfill`, `nightly`): one implementation for the four.

Before any orchestration it checks the run's price against `--max-cost`, and whether there is work at all: an
idle run is recorded like any other but never starts Prefect (its start-up costs seconds). A run with work takes
the run lock here (failing fast when another holds it). With a Prefect server configured (`PREFECT_API_URL`, or
the active Prefect profile) that answers, it runs the Prefect flow with the local settings of `flows.run._runtime`, so
the run shows in the Prefect UI with its tasks, retries and artifacts; without one, the same loop and steps run
directly: Prefect's ephemeral API would cost a command seconds to tens of seconds and report to nobody.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from core.errors import ConfigError
from core.estimate import Estimate
from core.io.objects import is_url
from core.runsummary import RunKind, RunSummary
from core.selection import CALLS_PER_SESSION, SessionFilter
from core.store.db import open_db
from core.store.ingest import needs_ingest
from core.store.ledger import count_pending
from core.store.registry import require_playbook
from flows.context import Database
from flows.delivery.exports import export_files
from flows.delivery.hook import refreshes_snapshot
from flows.models.providers import ProviderSpec
from flows.prefect_api import HEALTH_TIMEOUT_S, answers, prefect_api
from flows.run.curation import fail_if_nothing_worked, run_curation
from flows.run.estimate import estimate_run
from flows.run.ingest import check_sources, ingest_with
from flows.run.nightly import run_nightly
from flows.run.sessions import requeue
from flows.workspace import Workspace

__all__ = ["Launch", "Launched", "Quote", "Requeue", "estimate", "launch"]


class Requeue(BaseModel):
    """`recurate`: make the sessions the rules (or any run) applied since `since` pending again first."""

    model_config = ConfigDict(frozen=True)

    since: datetime
    source: Literal["heuristic", "any"] = "heuristic"


class Launch(BaseModel):
    """What a run command asks for."""

    model_config = ConfigDict(frozen=True)

    kind: RunKind
    llm: str | ProviderSpec | None = None  # `--llm`; None: the `llm` setting
    playbook: str  # for `nightly`: unused, every configured playbook runs
    chosen: SessionFilter = SessionFilter()
    transcripts: list[Path | str] = Field(default_factory=list)  # `nightly`: what it ingests (default: configured)
    create: bool = False  # the playbook may be created (curate --create, or a configured one)
    max_cost: float | None = None  # refuse to start when the estimate is above this (USD)
    per_call: int = 600  # output tokens assumed per call in the estimate
    requeue: Requeue | None = None


class Launched(BaseModel):
    """What the run did: one summary per playbook run, and the sessions `recurate` made pending again."""

    summaries: list[RunSummary]
    requeued: list[str] = Field(default_factory=list)


class Quote(BaseModel):
    """What a run would send and cost, and to which provider."""

    estimate: Estimate
    provider: ProviderSpec
    max_calls: int | None = None  # a subscription's calls per run (`max_calls`); None: not capped

    @property
    def price(self) -> float:
        """The price the run would pay: through batches for the batch provider, live otherwise (a server of one's
        own is priced from `prices` only); nothing on a plan (paid per month, not per token) or for the rules."""
        if self.provider.subscription or not self.provider.calls_a_model:
            return 0.0
        return self.estimate.batch_usd if self.provider.batched else self.estimate.live_usd

    @property
    def runs(self) -> int:
        """How many runs the sessions take under the call cap (1 when not capped): each run takes the sessions
        its calls can finish (`SessionFilter.within_calls`)."""
        if self.max_calls is None or not self.estimate.sessions:
            return 1
        per_run = max(1, self.max_calls // CALLS_PER_SESSION)
        return -(-len(self.estimate.sessions) // per_run)


def estimate(ws: Workspace, request: Launch) -> Quote:
    """What the run would send and cost (`--dry-run`); nothing is written and no model is called.

    Raises:
        ConfigError: the provider is unknown or lacks what it needs (a key, a server, a file).
    """
    provider = ws.provider(request.llm, estimate_only=True)
    est = estimate_run(ws, request.playbook, provider, request.chosen, per_call=request.per_call)
    return Quote(estimate=est, provider=provider, max_calls=ws.settings.max_calls if provider.subscription else None)


def launch(
    ws: Workspace,
    request: Launch,
    *,
    watching: Callable[[], AbstractContextManager[object]] = nullcontext,
) -> Launched:
    """Run what `request` asks, as its command does (see the module docstring), then refresh the hooks' snapshot.
    `watching`: a context around the flow run (the CLI's progress bars).

    Raises:
        ConfigError: the estimate is above `max_cost`, a transcript folder does not exist, `recurate` has no model.
        RunFailedError: every session the run attempted failed (its summaries are on the error).
    """
    if request.kind == "nightly":  # its flow writes the snapshot itself, as a scheduled nightly no command launches
        return _launch(ws, request, watching=watching)
    return refreshes_snapshot(_launch)(ws, request, watching=watching)


def _launch(
    ws: Workspace,
    request: Launch,
    *,
    watching: Callable[[], AbstractContextManager[object]] = nullcontext,
) -> Launched:
    # The run lock of what the run writes first: the store for a nightly (it ingests), else the playbook's database.
    db = ws.store if request.kind == "nightly" else ws.database(request.playbook)
    provider = ws.provider(request.llm)  # fails fast, before Prefect starts
    request = request.model_copy(update={"llm": provider})
    if request.kind == "nightly" and not request.transcripts:
        request = request.model_copy(update={"transcripts": list(ws.settings.transcripts)})
    if request.max_cost is not None:
        quote = estimate(ws, request)
        if quote.price > request.max_cost:
            raise ConfigError(
                f"The estimated cost, ${quote.price:.4f} for {len(quote.estimate.sessions)} session(s), is above"
                f" --max-cost ${request.max_cost:.4f}; nothing was sent (`--dry-run` shows the estimate)."
            )
    requeued: list[str] = []
    if request.requeue is not None:
        if not provider.calls_a_model:
            raise ConfigError(
                "recurate needs a model: set ANTHROPIC_API_KEY, or `openai_base_url` for a local server, or pass"
                " `--llm anthropic` / `--llm openai` / `--llm replay:FILE`."
            )
        requeued = requeue(ws, request.playbook, request.requeue.since, request.requeue.source)
        if not requeued:
            return Launched(summaries=[], requeued=[])
    playbooks = ws.playbooks if request.kind == "nightly" else [request.playbook]
    if request.kind == "backfill":
        with db.read() as con:
            if request.playbook not in ws.playbooks:
                require_playbook(con, request.playbook)
    elif request.requeue is None and _idle(ws, db, request, playbooks):
        return Launched(summaries=[_quiet_run(ws, db, name, provider, request.kind) for name in playbooks])
    api = prefect_api()
    notices: list[str] = []
    if api is not None and not answers(api):
        notices.append(
            f"The Prefect API at {api} did not answer within {HEALTH_TIMEOUT_S:g} s; the run went ahead without"
            " Prefect (it is recorded in DuckDB as always: `playbook runs`)."
        )
        api = None
    with db.lock(f"playbook {_label(request)}"):
        if api is None:  # no server to report to: the same loop and steps, without Prefect's start-up
            with watching():
                summaries = _plain(ws, provider, request, playbooks, notices)
            return Launched(summaries=summaries, requeued=requeued)
        # Prefect, only for runs that have work and a server; the flows' module first, as it sets up Prefect's log
        # handlers that `local_run` must find.
        from flows.run import pipeline
        from flows.run._runtime import local_run

        with watching(), local_run():
            return Launched(summaries=_flow(pipeline, ws, provider, request, playbooks), requeued=requeued)


def _plain(
    ws: Workspace, provider: ProviderSpec, request: Launch, playbooks: list[str], notices: list[str]
) -> list[RunSummary]:
    """The run without Prefect: what the flows do, with the plain steps (the run lock is the caller's)."""
    if request.kind == "nightly":
        result = run_nightly(ws, provider, request.transcripts, ingest=ingest_with, playbooks=playbooks)
        summaries = result.summaries
    else:
        kind: RunKind = "backfill" if request.kind == "backfill" else "curate"
        db = ws.database(request.playbook)
        with nullcontext(db) if provider.calls_a_model else db.held() as db:  # the rules: one opening of the file
            summary = run_curation(ws, request.playbook, provider, kind=kind, chosen=request.chosen, db=db)
            export_files(db, ws.rules(request.playbook), ws.out_dir)
        summaries = [summary]
    for summary in summaries:
        summary.notices.extend(notices)
    fail_if_nothing_worked(summaries)
    return summaries


def _label(request: Launch) -> str:
    return "recurate" if request.requeue is not None else request.kind


def _flow(
    pipeline: ModuleType, ws: Workspace, provider: ProviderSpec, request: Launch, playbooks: list[str]
) -> list[RunSummary]:
    if request.kind == "nightly":
        summaries: list[RunSummary] = pipeline.nightly_flow(
            ws, provider, transcripts=request.transcripts, playbooks=playbooks
        )
        return summaries
    if request.kind == "backfill":
        return [pipeline.backfill_flow(ws, provider, request.playbook, request.chosen)]
    return [pipeline.curate_flow(ws, provider, request.playbook, request.chosen)]


def _idle(ws: Workspace, db: Database, request: Launch, playbooks: list[str]) -> bool:
    """True when there is nothing to ingest or curate. It also fails loudly on a transcript folder that does not
    exist and on a playbook nobody created. An object-storage source always counts as work (listing it is the
    ingest step's job)."""
    sources = request.transcripts
    if request.kind == "nightly":
        # None, a wrong path, or no transcript at all: said before anything runs; the folders walked once, into
        # the files the idle check below stats.
        sources = check_sources(sources)
    if any(is_url(s) for s in sources):
        return False
    folders = [Path(s) for s in sources]
    for path in folders:
        if not path.exists():
            raise ConfigError(f"Transcript path `{path}` does not exist; check the path or `transcripts`.")
    create = request.create or request.kind == "nightly" or request.playbook in ws.playbooks
    store = ws.store
    if create and not store.path.exists():
        return False  # the first run: everything is work
    if folders:
        with open_db(store.path, create=False, wait=store.wait_s) as con:
            if needs_ingest(con, folders):
                return False
    for name in playbooks:
        own = ws.database(name)
        if create and not own.path.exists():
            return False  # a shard's first run
        with open_db(own.path, create=False, wait=own.wait_s, store=own.store) as con:
            if not create:
                require_playbook(con, name)
            if count_pending(con, name, ws.settings.idle_minutes):
                return False
    return True


def _quiet_run(ws: Workspace, db: Database, playbook: str, provider: ProviderSpec, kind: RunKind) -> RunSummary:
    """A run with nothing to do: recorded like any other, without Prefect (it would only add start-up time)."""
    with ws.database(playbook).lock(f"playbook {kind}"):
        return run_curation(ws, playbook, provider, kind=kind)
