"""Prefect flows: ingest, curate, nightly and backfill.

Tasks are per epoch (reflect, curate, apply), never per session: a task costs ~10 ms and a subflow ~1 s
here. Model calls inside a task run with bounded concurrency; exchanges are stored as they arrive, so
a rerun never pays twice. Retries: the SDK retries HTTP; a Prefect task retries only on TransientError.
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from prefect import Task, flow, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.client.schemas.objects import TaskRun
from prefect.states import State

from core.compat import playbook_to_dict
from core.errors import PlaybookError, TransientError
from core.export import to_markdown
from core.models import ApplyReport
from core.runreport import RunReport
from core.store.db import open_db
from core.store.ingest import IngestSummary, ingest
from core.store.lock import run_lock
from core.store.playbooks import load_version
from core.store.runs import finish_run, start_run
from flows import _runtime  # noqa: F401  (Prefect settings before Prefect is imported)
from flows.config import Settings, load_settings
from flows.curation import (
    Epoch,
    SessionApply,
    StepResult,
    apply_epoch_sessions,
    curate_sessions,
    next_epoch,
    reflect_sessions,
    select_sessions,
    timed,
)
from flows.progress import emit
from flows.providers import resolve_llm
from flows.report import build_report

__all__ = ["backfill_flow", "curate_flow", "ingest_flow", "nightly_flow", "run_curation", "run_ingest"]


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
def ingest_task(db: Path, paths: list[Path], fmt: str) -> IngestSummary:
    """Ingest transcript folders into the database."""
    with open_db(db) as con:
        return ingest(
            con,
            paths,
            fmt=fmt,  # type: ignore[arg-type]
            progress=lambda done, total: emit("ingest", done, total),
        )


@task(name="reflect-epoch", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=5, retry_condition_fn=transient_only)
def reflect_task(db: Path, playbook: str, epoch: Epoch, settings: Settings, llm: str, run_id: str) -> list[StepResult]:
    """Reflector calls for one epoch."""
    return reflect_sessions(db, playbook, epoch, settings, llm, run_id)


@task(name="curate-epoch", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=5, retry_condition_fn=transient_only)
def curate_task(
    db: Path, playbook: str, epoch: Epoch, reflections: list[StepResult], settings: Settings, llm: str, run_id: str
) -> list[StepResult]:
    """Curator calls for one epoch."""
    return curate_sessions(db, playbook, epoch, reflections, settings, llm, run_id)


@task(
    name="apply-epoch", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=[1, 5], retry_condition_fn=transient_only
)
def apply_task(
    db: Path, playbook: str, epoch: Epoch, reflections: list[StepResult], curations: list[StepResult], run_id: str
) -> list[SessionApply]:
    """Apply one epoch's sessions in order, one version each."""
    return apply_epoch_sessions(db, playbook, epoch, reflections, curations, run_id)


def new_run_id(kind: str) -> str:
    """Sortable, unique: kind, UTC time, random suffix."""
    return f"{kind}-{datetime.now(UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"


def run_ingest(db: Path, paths: list[Path], fmt: str = "auto") -> IngestSummary:
    """The ingest task (usable inside any flow)."""
    if not paths:
        raise PlaybookError(
            "No transcript folders configured; pass paths, or set `transcripts` in playbook.toml or"
            " PLAYBOOK_TRANSCRIPTS."
        )
    return ingest_task(db, paths, fmt)


def run_curation(
    settings: Settings,
    playbook: str,
    llm: str,
    *,
    kind: str = "curate",
    run_id: str | None = None,
    project: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int | None = None,
    epoch_size: int | None = None,
    use_tasks: bool = True,
) -> RunReport:
    """Curate one playbook: select pending sessions, then reflect, curate and apply epoch by epoch.

    With `use_tasks=False` the same steps run as plain functions (tests, benchmarks, no Prefect API).
    """
    db = settings.db
    reflect: Any = reflect_task if use_tasks else reflect_sessions
    curate: Any = curate_task if use_tasks else curate_sessions
    apply: Any = apply_task if use_tasks else apply_epoch_sessions
    spec, notices = resolve_llm(llm, settings)
    report = RunReport(run_id=run_id or new_run_id(kind), kind=kind, playbook=playbook, provider=spec, notices=notices)
    started = time.perf_counter()
    with open_db(db) as con:
        start_run(con, report.run_id, kind, playbook, spec)
    try:
        stop = timed(report.phase_seconds, "select")
        pending, skipped, resumed = select_sessions(
            db, playbook, settings, project=project, since=since, until=until, limit=limit
        )
        stop()
        report.skips = skipped
        report.sessions_skipped = len(skipped)
        size = max(1, epoch_size or settings.epoch_size)
        total = sum(len(e.session_ids) for e in resumed) + len(pending)
        report.sessions_considered = total + len(skipped)
        done = 0
        emit("curate", 0, total)
        queue = list(pending)
        while resumed or queue:
            if resumed:
                epoch = resumed.pop(0)
            else:
                chunk, queue = queue[:size], queue[size:]
                epoch = next_epoch(db, playbook, chunk, report.run_id)
            report.epochs += 1
            stop = timed(report.phase_seconds, "reflect")
            reflections = reflect(db, playbook, epoch, settings, spec, report.run_id)
            stop()
            stop = timed(report.phase_seconds, "curate")
            curations = curate(db, playbook, epoch, reflections, settings, spec, report.run_id)
            stop()
            for step, results in (("reflector", reflections), ("curator", curations)):
                for r in results:
                    if r.response is not None:
                        report.add_call(step, r.response)
            stop = timed(report.phase_seconds, "apply")
            applied = apply(db, playbook, epoch, reflections, curations, report.run_id)
            stop()
            for result in applied:
                if result.status == "applied" and result.report is not None and result.version is not None:
                    report.add_apply(ApplyReport.model_validate(result.report), result.version)
                else:
                    report.sessions_failed += 1
                    report.failures[result.session_id] = result.reason or "failed"
            done += len(epoch.session_ids)
            emit("curate", done, total)
        if report.sessions_failed and report.sessions_applied:
            report.status = "partial"
        elif report.sessions_failed:
            report.status = "failed"
        elif not total:
            report.status = "nothing-to-do"
        else:
            report.status = "ok"
    except BaseException:
        report.status = "failed"
        raise
    finally:
        report.duration_s = time.perf_counter() - started
        with open_db(db) as con:
            finish_run(con, report)
    return report


def export_playbook(settings: Settings, playbook: str) -> list[Path]:
    """Write `<out_dir>/<playbook>.md` and `.json` (the seeds' playbook.json)."""
    with open_db(settings.db) as con:
        model = load_version(con, playbook)
    settings.out_dir.mkdir(parents=True, exist_ok=True)
    md = settings.out_dir / f"{playbook}.md"
    js = settings.out_dir / f"{playbook}.json"
    md.write_text(to_markdown(model, title=f"Playbook `{playbook}`"), encoding="utf-8")
    js.write_text(json.dumps(playbook_to_dict(model), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return [md, js]


def _artifacts(report: RunReport, extra: str = "") -> None:
    """A keyed markdown summary and a table of counts, visible in the Prefect UI."""
    create_markdown_artifact(
        key=f"playbook-{report.kind}-report",
        markdown=report.to_markdown() + extra,
        description=f"{report.kind} run {report.run_id}",
    )
    create_table_artifact(
        key=f"playbook-{report.kind}-counts", table=[{"metric": k, "value": v} for k, v in report.summary_rows()]
    )


@flow(name="ingest", log_prints=True)
def ingest_flow(paths: list[str] | None = None, db: str | None = None, fmt: str = "auto") -> dict[str, int]:
    """Ingest the configured transcript folders."""
    settings = load_settings(db=Path(db) if db else None)
    targets = [Path(p) for p in paths] if paths else settings.transcripts
    with run_lock(settings.db, "playbook ingest"):
        summary = run_ingest(settings.db, targets, fmt)
    return {
        "new": summary.count("new"),
        "changed": summary.count("changed"),
        "failed": summary.count("failed"),
        "sessions": summary.sessions,
        "messages": summary.messages,
    }


@flow(name="curate", log_prints=True)
def curate_flow(
    playbook: str | None = None,
    db: str | None = None,
    llm: str = "auto",
    epoch_size: int | None = None,
    limit: int | None = None,
    project: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> dict[str, Any]:
    """Curate one playbook from the sessions it has not seen yet."""
    settings = load_settings(db=Path(db) if db else None, playbook=playbook)
    with run_lock(settings.db, "playbook curate"):
        report = run_curation(
            settings,
            settings.playbook,
            llm,
            project=project,
            since=since,
            until=until,
            limit=limit,
            epoch_size=epoch_size,
        )
        export_playbook(settings, settings.playbook)
    _artifacts(report)
    return report.model_dump()


@flow(name="nightly", log_prints=True)
def nightly_flow(
    db: str | None = None, llm: str = "auto", transcripts: list[str] | None = None, playbooks: list[str] | None = None
) -> list[dict[str, Any]]:
    """Ingest, then curate every configured playbook, then report and export."""
    settings = load_settings(db=Path(db) if db else None)
    targets = [Path(p) for p in transcripts] if transcripts else settings.transcripts
    names = playbooks or settings.playbooks
    resolve_llm(llm, settings)  # fail fast (no key for anthropic, unknown provider) before any work
    reports = []
    with run_lock(settings.db, "playbook nightly"):
        run_ingest(settings.db, targets)
        for name in names:
            report = run_curation(settings, name, llm, kind="nightly")
            exported = export_playbook(settings, name)
            page = build_report(settings.db, name, settings.out_dir / "report" / name)["index"]
            reports.append(report)
            _artifacts(
                report,
                "\nExported: "
                + ", ".join(f"`{p}`" for p in exported)
                + f"\n\nEvolution report: `{page.resolve()}` (open it in a browser)\n",
            )
    return [r.model_dump() for r in reports]


@flow(name="backfill", log_prints=True)
def backfill_flow(
    since: datetime,
    until: datetime,
    db: str | None = None,
    llm: str = "batch",
    playbook: str | None = None,
    epoch_size: int = 50,
) -> dict[str, Any]:
    """Curate historical sessions in a date range, through the Message Batches API by default."""
    settings = load_settings(db=Path(db) if db else None, playbook=playbook)
    with run_lock(settings.db, "playbook backfill"):
        report = run_curation(
            settings, settings.playbook, llm, kind="backfill", since=since, until=until, epoch_size=epoch_size
        )
        export_playbook(settings, settings.playbook)
    _artifacts(report)
    return report.model_dump()
