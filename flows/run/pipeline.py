"""Prefect flows and tasks: ingest, curate, nightly and backfill. Only orchestration lives here.

The run loop is `flows.run.curation`, the nightly job `flows.run.nightly`, the steps `flows.run.steps`. Tasks are per
epoch (reflect, curate, apply), never per session: a task costs ~10 ms and a subflow ~1 s here. Retries: the SDK
retries HTTP; a Prefect task retries only on TransientError. Flows take the settings and the provider as typed
values when the CLI has resolved them; a deployment's strings go through `flows.run.deployments`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from prefect import Task, flow, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.client.schemas.objects import FlowRun, TaskRun
from prefect.states import State

from core.errors import TransientError
from core.models import CuratorOutput, ReflectorOutput
from core.runsummary import RunFailedError, RunKind, RunSummary
from core.selection import SessionFilter
from core.store.db import back_up
from core.store.ingest import IngestSummary
from core.transcripts import Format
from flows.config import load_settings
from flows.delivery.exports import export_files
from flows.models.providers import ProviderFactory, ProviderSpec, make_provider
from flows.run.curation import fail_if_nothing_worked, run_curation
from flows.run.ingest import ingest_with
from flows.run.nightly import NightlyResult, finish_nightly, run_nightly
from flows.run.run_state import Epoch, RunContext, SessionApply, StepResult, Steps
from flows.run.steps import apply_epoch_sessions, curate_sessions, plain_steps, reflect_sessions
from flows.workspace import Workspace

__all__ = [
    "CURATE_DEPLOYMENT",
    "backfill_flow",
    "curate_flow",
    "ingest_flow",
    "model_call_slot",
    "nightly_flow",
    "task_steps",
    "transient_only",
]


def transient_only(task: Task[Any, Any], task_run: TaskRun, state: State[Any]) -> bool:
    """Retry a task only when it failed with a TransientError (e.g. the database was busy)."""
    try:
        state.result()
    except TransientError:
        return True
    except Exception:
        return False
    return False


@task(
    name="ingest-transcripts",
    cache_policy=NO_CACHE,
    retries=2,
    retry_delay_seconds=[2, 10],
    retry_condition_fn=transient_only,
)
def ingest_task(ws: Workspace, paths: list[Path | str], fmt: Format | None = None) -> IngestSummary:
    """Ingest transcript folders (and teams' buckets) into the database."""
    return ingest_with(ws, paths, fmt)


@task(name="reflect-epoch", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=5, retry_condition_fn=transient_only)
def reflect_task(ctx: RunContext, epoch: Epoch) -> list[StepResult[ReflectorOutput]]:
    """Reflector calls for one epoch."""
    return reflect_sessions(ctx, epoch)


@task(name="curate-epoch", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=5, retry_condition_fn=transient_only)
def curate_task(
    ctx: RunContext, epoch: Epoch, reflections: list[StepResult[ReflectorOutput]]
) -> list[StepResult[CuratorOutput]]:
    """Curator calls for one epoch."""
    return curate_sessions(ctx, epoch, reflections)


@task(
    name="apply-epoch", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=[1, 5], retry_condition_fn=transient_only
)
def apply_task(
    ctx: RunContext,
    epoch: Epoch,
    reflections: list[StepResult[ReflectorOutput]],
    curations: list[StepResult[CuratorOutput]],
) -> list[SessionApply]:
    """Apply one epoch's sessions in order, one version each."""
    return apply_epoch_sessions(ctx, epoch, reflections, curations)


def task_steps(provider: ProviderSpec | None = None) -> Steps:
    """The steps as Prefect tasks (retries, and task runs visible in the UI) for a run that calls a model; for the
    rules, the plain steps inside the flow run: there is no call to retry and the run holds the database from start
    to end, so a task run an epoch bought nothing for ~40 ms of CPU a session (three task runs an epoch of 8)."""
    if provider is not None and not provider.calls_a_model:
        return plain_steps()
    return Steps(reflect_task, curate_task, apply_task)


def _artifacts(summary: RunSummary, extra: str = "") -> None:
    """A keyed markdown summary and a table of counts, visible in the Prefect UI."""
    create_markdown_artifact(
        key=f"playbook-{summary.kind}-report",
        markdown=summary.to_markdown() + extra,
        description=f"{summary.kind} run {summary.run_id}",
    )
    create_table_artifact(
        key=f"playbook-{summary.kind}-counts", table=[{"metric": k, "value": v} for k, v in summary.summary_rows()]
    )


@flow(name="ingest", log_prints=True)
def ingest_flow(
    ws: Workspace | None = None, paths: list[Path | str] | None = None, fmt: Format | None = None
) -> IngestSummary:
    """Ingest the given (or configured) transcript folders."""
    ws = ws or Workspace.of(load_settings())
    with ws.store.lock("playbook ingest", patient=True):
        return ingest_task(ws, paths or ws.settings.transcripts, fmt)


@flow(name="curate", log_prints=True)
def curate_flow(
    ws: Workspace,
    provider: ProviderSpec,
    playbook: str,
    chosen: SessionFilter | None = None,
    kind: RunKind = "curate",
    factory: ProviderFactory | None = None,  # None: make_provider (a function default has no JSON schema)
) -> RunSummary:
    """Curate one playbook from the sessions it has not seen yet (under the run lock), then export it."""
    db = ws.database(playbook)
    # The rules wait on no model: the run and its export go through one opening of the file (`Database.held`).
    with db.lock(f"playbook {kind}", patient=True), nullcontext(db) if provider.calls_a_model else db.held() as db:
        summary = run_curation(
            ws,
            playbook,
            provider,
            steps=task_steps(provider),
            factory=factory or make_provider,
            kind=kind,
            chosen=chosen,
            slot=model_call_slot(ws),
            db=db,
        )
        export_files(db, ws.rules(playbook), ws.out_dir)
    _artifacts(summary)
    fail_if_nothing_worked([summary])
    return summary


@flow(name="nightly", log_prints=True)
def nightly_flow(
    ws: Workspace,
    provider: ProviderSpec,
    transcripts: list[Path | str] | None = None,
    playbooks: list[str] | None = None,
    factory: ProviderFactory | None = None,  # None: make_provider (a function default has no JSON schema)
) -> list[RunSummary]:
    """Ingest, then curate every configured playbook, then write its exports and evolution report, and publish.
    With shards and a work pool, the playbooks' curation runs are flow runs of the pool's workers."""
    if ws.settings.shard == "playbook" and ws.settings.work_pool:
        return _fan_out(ws, provider, transcripts or ws.settings.transcripts, playbooks or ws.playbooks)
    with ws.store.lock("playbook nightly", patient=True):
        result = run_nightly(
            ws,
            provider,
            transcripts or ws.settings.transcripts,
            ingest=ingest_task,
            steps=task_steps(provider),
            factory=factory or make_provider,
            playbooks=playbooks,
        )
    _nightly_artifacts(result)
    fail_if_nothing_worked(result.summaries)
    return result.summaries


def model_call_slot(ws: Workspace) -> Callable[[], AbstractContextManager[object]] | None:
    """A slot of the global concurrency limit `model_calls_limit`, held around each model call, when the run reports
    to a Prefect server (with no such limit on the server, calls go ahead: `strict=False`)."""
    name = ws.settings.model_calls_limit
    if not name or not os.environ.get("PREFECT_API_URL"):
        return None
    from prefect.concurrency.sync import concurrency

    return lambda: concurrency(name, occupy=1, strict=False)


CURATE_DEPLOYMENT = "curate-playbook/curate-playbook"
FAN_OUT_POLL_S = 2.0


def _fan_out(
    ws: Workspace, provider: ProviderSpec, transcripts: Sequence[Path | str], playbooks: Sequence[str]
) -> list[RunSummary]:
    """The nightly on a work pool: ingest into the store here, then one flow run of the `curate-playbook`
    deployment per playbook (each curates and exports its own shard, on whichever worker takes it), waited for;
    then the reports and the export targets here. Nothing two runs write is shared: each has its shard."""
    from prefect.client.orchestration import get_client
    from prefect.deployments import run_deployment

    store = ws.store
    with store.lock("playbook nightly", patient=True):
        back_up(store.path, store.backups)
        ingest_task(ws, list(transcripts))
    started = datetime.now(UTC)
    runs: list[FlowRun] = [
        run_deployment(  # type: ignore[misc]  # called from a sync flow: the sync variant answers
            CURATE_DEPLOYMENT, parameters={"playbook": name, "llm": provider.label}, timeout=0, as_subflow=False
        )
        for name in playbooks
    ]
    # Each run ends on its worker: waited for here, within the run's time limit (with no worker on the pool the
    # runs would stay scheduled, and the nightly would wait for ever).
    deadline = time.monotonic() + ws.settings.max_run_minutes * 60 if ws.settings.max_run_minutes else None
    with get_client(sync_client=True) as client:
        pending = {run.id for run in runs}
        while pending:
            pending = {i for i in pending if not (state := client.read_flow_run(i).state) or not state.is_final()}
            if pending and deadline is not None and time.monotonic() > deadline:
                raise RunFailedError(
                    f"{len(pending)} of {len(runs)} curation runs on work pool `{ws.settings.work_pool}` did not end"
                    f" within max_run_minutes ({ws.settings.max_run_minutes:g}); is a worker running"
                    f" (`prefect worker start -p {ws.settings.work_pool}`)? What finished is kept; the next nightly"
                    " curates the rest."
                )
            if pending:
                time.sleep(FAN_OUT_POLL_S)
    result = finish_nightly(ws, list(playbooks), since=started)
    _nightly_artifacts(result)
    fail_if_nothing_worked(result.summaries)
    return result.summaries


def _nightly_artifacts(result: NightlyResult) -> None:
    for done in result.playbooks:
        pending = done.pending
        waiting = (
            f"\n\n## {len(pending)} change(s) await review (exports keep the approved version)\n\n"
            + "\n".join(f"- {c.number}. {c.kind} `{c.name}`: {c.after or c.before}" for c in pending)
            + f"\n\nReview them with `playbook review -p {done.summary.playbook}` (or `--approve-all`,"
            " `--reject N,...`).\n"
            if pending
            else ""
        )
        _artifacts(
            done.summary,
            "\nExported: "
            + ", ".join(f"`{p}`" for p in done.exported)
            + f"\n\nEvolution report: `{done.report.resolve()}` (open it in a browser)\n"
            + waiting,
        )
    if result.published:
        create_markdown_artifact(
            key="published-targets",
            markdown="| playbook | file | result |\n|---|---|---|\n"
            + "\n".join(f"| {r.playbook} | `{r.path}` | {r.status} {r.message} |" for r in result.published),
            description="Export targets written by this nightly run",
        )


@flow(name="backfill", log_prints=True)
def backfill_flow(
    ws: Workspace,
    provider: ProviderSpec,
    playbook: str,
    chosen: SessionFilter,
    factory: ProviderFactory | None = None,  # None: make_provider (a function default has no JSON schema)
) -> RunSummary:
    """Curate historical sessions in a date range, through the Message Batches API by default."""
    return curate_flow.fn(ws, provider, playbook, chosen, kind="backfill", factory=factory)
