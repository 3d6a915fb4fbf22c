"""Prefect flows and tasks: ingest, curate, nightly and backfill. Only orchestration lives here.

The run loop is `flows.curation`, the nightly job `flows.nightly`, the steps `flows.steps`. Tasks are per epoch
(reflect, curate, apply), never per session: a task costs ~10 ms and a subflow ~1 s here. Retries: the SDK
retries HTTP; a Prefect task retries only on TransientError. Flows take the settings and the provider as typed
values when the CLI has resolved them; a deployment's strings go through `flows.deployments`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import Task, flow, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.client.schemas.objects import TaskRun
from prefect.states import State

from core.errors import TransientError
from core.models import CuratorOutput, ReflectorOutput
from core.runsummary import RunKind, RunSummary
from core.selection import SessionFilter
from core.store.ingest import IngestSummary
from core.transcripts import Format
from flows.config import Settings, load_settings
from flows.context import Database
from flows.curation import fail_if_nothing_worked, run_curation
from flows.exports import ExportRules, export_files
from flows.ingest import ingest_with
from flows.nightly import NightlyResult, run_nightly
from flows.providers import ProviderFactory, ProviderSpec, make_provider
from flows.steps import (
    Epoch,
    RunContext,
    SessionApply,
    StepResult,
    Steps,
    apply_epoch_sessions,
    curate_sessions,
    reflect_sessions,
)

__all__ = ["backfill_flow", "curate_flow", "ingest_flow", "nightly_flow", "task_steps", "transient_only"]


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
def ingest_task(settings: Settings, paths: list[Path | str], fmt: Format | None = None) -> IngestSummary:
    """Ingest transcript folders (and teams' buckets) into the database."""
    return ingest_with(settings, paths, fmt)


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


def task_steps() -> Steps:
    """The steps as Prefect tasks (retries, and task runs visible in the UI)."""
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
    settings: Settings | None = None, paths: list[Path | str] | None = None, fmt: Format | None = None
) -> IngestSummary:
    """Ingest the given (or configured) transcript folders."""
    settings = settings or load_settings()
    with Database.of(settings).lock("playbook ingest", patient=True):
        return ingest_task(settings, paths or settings.transcripts, fmt)


@flow(name="curate", log_prints=True)
def curate_flow(
    settings: Settings,
    provider: ProviderSpec,
    playbook: str,
    chosen: SessionFilter | None = None,
    kind: RunKind = "curate",
    factory: ProviderFactory | None = None,  # None: make_provider (a function default has no JSON schema)
) -> RunSummary:
    """Curate one playbook from the sessions it has not seen yet (under the run lock), then export it."""
    db = Database.of(settings)
    with db.lock(f"playbook {kind}", patient=True):
        summary = run_curation(
            settings, playbook, provider, steps=task_steps(), factory=factory or make_provider, kind=kind, chosen=chosen
        )
        export_files(db, ExportRules.of(settings, playbook), settings.out_dir)
    _artifacts(summary)
    fail_if_nothing_worked([summary])
    return summary


@flow(name="nightly", log_prints=True)
def nightly_flow(
    settings: Settings,
    provider: ProviderSpec,
    transcripts: list[Path | str] | None = None,
    playbooks: list[str] | None = None,
    factory: ProviderFactory | None = None,  # None: make_provider (a function default has no JSON schema)
) -> list[RunSummary]:
    """Ingest, then curate every configured playbook, then write its exports and evolution report, and publish."""
    with Database.of(settings).lock("playbook nightly", patient=True):
        result = run_nightly(
            settings,
            provider,
            transcripts or settings.transcripts,
            ingest=ingest_task,
            steps=task_steps(),
            factory=factory or make_provider,
            playbooks=playbooks,
        )
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
    settings: Settings,
    provider: ProviderSpec,
    playbook: str,
    chosen: SessionFilter,
    factory: ProviderFactory | None = None,  # None: make_provider (a function default has no JSON schema)
) -> RunSummary:
    """Curate historical sessions in a date range, through the Message Batches API by default."""
    return curate_flow.fn(settings, provider, playbook, chosen, kind="backfill", factory=factory)
