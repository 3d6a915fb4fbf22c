"""Prefect flows and tasks: ingest, curate, nightly and backfill. Only orchestration lives here.

The run loop is `flows.runs`; the steps are `flows.steps`. Tasks are per epoch (reflect, curate, apply),
never per session: a task costs ~10 ms and a subflow ~1 s here. Retries: the SDK retries HTTP; a Prefect
task retries only on TransientError. Flows take the settings as a typed value when the CLI has built
them, and build them once from the environment when a deployment runs them.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from prefect import Task, flow, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.client.schemas.objects import TaskRun
from prefect.states import State

from core.errors import RunFailedError, TransientError
from core.models import CuratorOutput, ReflectorOutput
from core.runsummary import RunSummary
from core.store.db import back_up
from core.store.ingest import IngestSummary
from core.store.lock import run_lock
from core.transcripts import Format
from flows.config import Settings, load_settings
from flows.evolution import write_evolution_report
from flows.providers import ProviderFactory, ProviderSpec, make_provider, resolve_provider
from flows.runs import (
    export_playbook,
    needs_consolidation,
    pending_review,
    publish_targets,
    run_consolidation,
    run_curation,
    run_ingest,
)
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
    """Ingest transcript folders into the database."""
    return run_ingest(settings, paths, fmt)


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
    with run_lock(settings.db, "playbook ingest", wait=settings.busy_wait_s):
        return ingest_task(settings, paths or settings.transcripts, fmt)


def _fail_if_nothing_worked(summaries: list[RunSummary]) -> None:
    """Fail the flow run (so Prefect and cron see it) when every session the run attempted failed."""
    failed = [s for s in summaries if s.status == "failed"]
    if failed and len(failed) == len(summaries):
        first = next(iter(failed[0].failures.values()), "no reason recorded")
        attempted = sum(s.sessions_failed for s in failed)
        raise RunFailedError(
            f"Every session this run attempted failed ({attempted}); the first reason: {first}",
            list(summaries),
        )


def _curate_and_export(
    settings: Settings, name: str, provider: ProviderSpec, factory: ProviderFactory | None, kind: str, **filters: Any
) -> RunSummary:
    """One playbook's run through the Prefect tasks, under the run lock, then its exports and artifacts."""
    with run_lock(settings.db, f"playbook {kind}", wait=settings.busy_wait_s):
        summary = run_curation(
            settings, name, provider, steps=task_steps(), factory=factory or make_provider, kind=kind, **filters
        )
        export_playbook(settings, name)
    _artifacts(summary)
    _fail_if_nothing_worked([summary])
    return summary


@flow(name="curate", log_prints=True)
def curate_flow(
    settings: Settings | None = None,
    llm: str | ProviderSpec | None = None,
    playbook: str | None = None,
    epoch_size: int | None = None,
    limit: int | None = None,
    project: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    factory: ProviderFactory | None = None,
) -> RunSummary:
    """Curate one playbook from the sessions it has not seen yet, then export it."""
    settings = settings or load_settings()
    provider = resolve_provider(llm or settings.llm, settings)
    return _curate_and_export(
        settings,
        playbook or settings.playbook,
        provider,
        factory,
        "curate",
        project=project,
        since=since,
        until=until,
        limit=limit,
        epoch_size=epoch_size,
    )


@flow(name="nightly", log_prints=True)
def nightly_flow(
    settings: Settings | None = None,
    llm: str | ProviderSpec | None = None,
    transcripts: list[Path | str] | None = None,
    playbooks: list[str] | None = None,
    factory: ProviderFactory | None = None,
) -> list[RunSummary]:
    """Ingest, then curate every configured playbook, then write its exports and evolution report."""
    settings = settings or load_settings()
    provider = resolve_provider(llm or settings.llm, settings)  # fails fast, before any work
    summaries = []
    with run_lock(settings.db, "playbook nightly", wait=settings.busy_wait_s):
        back_up(settings.db, settings.backups)  # before anything writes: a copy to go back to
        ingest_task(settings, transcripts or settings.transcripts)
        for name in playbooks or settings.playbooks:
            summary = run_curation(
                settings, name, provider, steps=task_steps(), factory=factory or make_provider, kind="nightly"
            )
            why = needs_consolidation(settings, summary, provider)
            if why is not None:
                merged, _ = run_consolidation(settings, name, provider=provider, factory=factory or make_provider)
                summary.notices.append(
                    f"Consolidated because {why}: {merged.ops.get('MERGE', {}).get('applied', 0)} cluster(s) merged,"
                    f" {merged.entries_before} -> {merged.entries_after} entries."
                )
                summary.notices.extend(merged.notices)
                summary.entries_after = merged.entries_after
            exported = export_playbook(settings, name)
            page = write_evolution_report(
                settings.db,
                name,
                settings.out_dir / "report" / name,
                settings.redactor(),
                wait=settings.busy_wait_s,
                budget=settings.budget(name),
                stale_after_days=settings.stale_after_days,
            ).index
            summaries.append(summary)
            pending = pending_review(settings, name)
            waiting = (
                f"\n\n## {len(pending)} change(s) await review (exports keep the approved version)\n\n"
                + "\n".join(f"- {c.number}. {c.kind} `{c.name}`: {c.after or c.before}" for c in pending)
                + f"\n\nReview them with `playbook review -p {name}` (or `--approve-all`, `--reject N,...`).\n"
                if pending
                else ""
            )
            if pending:
                summary.notices.append(f"{len(pending)} change(s) await `playbook review -p {name}`.")
            _artifacts(
                summary,
                "\nExported: "
                + ", ".join(f"`{p}`" for p in exported)
                + f"\n\nEvolution report: `{page.resolve()}` (open it in a browser)\n"
                + waiting,
            )
        published = publish_targets(settings, playbooks or settings.playbooks)
    for result in published:
        owner = next((x for x in summaries if x.playbook == result.playbook), None)
        if owner is not None and result.status == "refused":
            owner.notices.append(f"Export target refused: {result.message}")
    if published:
        create_markdown_artifact(
            key="published-targets",
            markdown="| playbook | file | result |\n|---|---|---|\n"
            + "\n".join(f"| {r.playbook} | `{r.path}` | {r.status} {r.message} |" for r in published),
            description="Export targets written by this nightly run",
        )
    _fail_if_nothing_worked(summaries)
    return summaries


@flow(name="backfill", log_prints=True)
def backfill_flow(
    since: datetime,
    until: datetime,
    settings: Settings | None = None,
    llm: str | ProviderSpec = "batch",
    playbook: str | None = None,
    epoch_size: int = 50,
    factory: ProviderFactory | None = None,
) -> RunSummary:
    """Curate historical sessions in a date range, through the Message Batches API by default."""
    settings = settings or load_settings()
    provider = resolve_provider(llm, settings)
    return _curate_and_export(
        settings,
        playbook or settings.playbook,
        provider,
        factory,
        "backfill",
        since=since,
        until=until,
        epoch_size=epoch_size,
    )
