"""The steps of a curation run as plain functions: select, reflect, curate, apply.

Prefect tasks in `flows.pipeline` are thin wrappers around these, so the logic is tested without a
Prefect server. Each step receives the database path and ids, opens DuckDB itself, and closes it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import duckdb
from pydantic import BaseModel

from core.curator import curator_request, parse_curator
from core.llm.base import LLMRequest, LLMResponse, Provider
from core.models import CuratorOutput, Playbook, ReflectorOutput
from core.operations import apply_session
from core.prompts import PromptTemplate, load_template
from core.reflector import parse_reflector, reflector_request
from core.render import render_session
from core.sections import SectionSet
from core.store.db import open_db
from core.store.exchanges import cached_response, record_exchange
from core.store.playbooks import (
    current_version,
    ensure_playbook,
    load_version,
    mark_session,
    sections_of,
    write_version,
)
from core.store.runs import close_epoch, open_epochs, plan_epoch, run_spend
from core.store.sessions import load_messages, pending_sessions
from flows.config import Settings
from flows.providers import make_provider

__all__ = [
    "Epoch",
    "SessionApply",
    "StepResult",
    "apply_epoch_sessions",
    "curate_sessions",
    "next_epoch",
    "reflect_sessions",
    "select_sessions",
]


class Epoch(BaseModel):
    """Sessions judged against the same frozen playbook version."""

    epoch_no: int
    base_version: int
    session_ids: list[str]


class StepResult(BaseModel):
    """One session's outcome of one LLM step."""

    session_id: str
    output: dict[str, Any] | None = None
    error: str | None = None
    response: LLMResponse | None = None


class SessionApply(BaseModel):
    """What applying one session did."""

    session_id: str
    status: str  # applied | failed
    version: int | None = None
    reason: str | None = None
    report: dict[str, Any] | None = None


def select_sessions(
    db: Path,
    playbook: str,
    settings: Settings,
    *,
    project: str | None = None,
    since: Any = None,
    until: Any = None,
    limit: int | None = None,
) -> tuple[list[str], dict[str, str], list[Epoch]]:
    """(pending session ids oldest first, skipped {id: reason}, epochs left open by a killed run)."""
    with open_db(db) as con:
        ensure_playbook(con, playbook)
        resumed: list[Epoch] = []
        in_open: set[str] = set()
        for epoch_no, base, ids in open_epochs(con, playbook):
            done = {
                r[0]
                for r in con.execute(
                    "SELECT session_id FROM applied_sessions WHERE playbook = ? AND session_id IN (SELECT unnest(?))",
                    [playbook, ids],
                ).fetchall()
            }
            remaining = [i for i in ids if i not in done]
            in_open.update(ids)
            if remaining:
                resumed.append(Epoch(epoch_no=epoch_no, base_version=base, session_ids=remaining))
            else:
                close_epoch(con, playbook, epoch_no)
        pending: list[str] = []
        skipped: dict[str, str] = {}
        for row in pending_sessions(con, playbook, project=project, since=since, until=until, limit=limit):
            if row["session_id"] in in_open:
                continue
            if row["n_messages"] < settings.min_messages or row["n_user_prompts"] == 0:
                reason = (
                    f"too short: {row['n_messages']} messages, {row['n_user_prompts']} user prompts"
                    f" (minimum {settings.min_messages} messages and 1 prompt)"
                )
                mark_session(con, playbook, row["session_id"], "skipped", reason)
                skipped[row["session_id"]] = reason
                continue
            pending.append(row["session_id"])
    return pending, skipped, resumed


def next_epoch(db: Path, playbook: str, session_ids: list[str], run_id: str) -> Epoch:
    """Record the next epoch, frozen at the playbook's current version."""
    with open_db(db) as con:
        base = current_version(con, playbook)
        number = plan_epoch(con, playbook, base, session_ids, run_id)
    return Epoch(epoch_no=number, base_version=base, session_ids=session_ids)


def _answer(
    con: duckdb.DuckDBPyConnection,
    provider: Provider,
    requests: list[LLMRequest],
    concurrency: int,
) -> Iterator[tuple[int, LLMResponse]]:
    """Responses as they arrive: reused from earlier runs when possible, else from the provider."""
    todo: list[int] = []
    for i, request in enumerate(requests):
        hit = cached_response(con, request) if provider.cacheable else None
        if hit is not None:
            yield i, hit
        else:
            todo.append(i)
    if not todo:
        return
    many = getattr(provider, "complete_many", None)
    if many is not None:  # the batch API answers an epoch at once
        for i, response in zip(todo, many([requests[i] for i in todo]), strict=True):
            yield i, response
        return
    if getattr(provider, "warm_cache_first", False) and len(todo) > 1:
        # A cache entry exists only once a first response has started: one call warms the shared
        # system prefix (the frozen playbook), then the rest fan out and read it.
        first = todo.pop(0)
        yield first, provider.complete(requests[first])
    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        futures = {pool.submit(provider.complete, requests[i]): i for i in todo}
        for future in as_completed(futures):
            yield futures[future], future.result()


def _run_step(
    db: Path,
    playbook: str,
    epoch: Epoch,
    settings: Settings,
    llm: str,
    run_id: str,
    build: Callable[[duckdb.DuckDBPyConnection, Playbook, SectionSet, PromptTemplate], list[LLMRequest]],
    template_name: str,
    parse: Callable[[str | None], BaseModel | None],
) -> list[StepResult]:
    with open_db(db) as con:
        frozen = load_version(con, playbook, epoch.base_version)
        sections = sections_of(con, playbook)
        override = [settings.prompts_dir / playbook, settings.prompts_dir] if settings.prompts_dir else []
        template = load_template(template_name, override_dirs=override)  # fails before any model call
        requests = build(con, frozen, sections, template)
        provider = make_provider(llm, settings, spent_usd=run_spend(con, run_id))
        results: dict[int, StepResult] = {}
        for i, response in _answer(con, provider, requests, settings.concurrency):
            parsed = parse(response.text) if response.ok else None
            # Recorded as soon as it arrives: a run killed later reuses it instead of paying again.
            record_exchange(
                con,
                requests[i],
                response,
                parsed=parsed,
                playbook=playbook,
                playbook_version=epoch.base_version,
                run_id=run_id,
            )
            error = response.error or (None if parsed is not None else "unparseable model output (no JSON object)")
            results[i] = StepResult(
                session_id=requests[i].session_id or "",
                response=response,
                error=error,
                output=parsed.model_dump() if parsed is not None else None,
            )
    return [results[i] for i in range(len(requests))]


def reflect_sessions(
    db: Path, playbook: str, epoch: Epoch, settings: Settings, llm: str, run_id: str
) -> list[StepResult]:
    """Reflector calls for an epoch's sessions, against the epoch's frozen playbook."""

    def build(
        con: duckdb.DuckDBPyConnection, frozen: Playbook, sections: SectionSet, template: PromptTemplate
    ) -> list[LLMRequest]:
        requests = []
        for session_id in epoch.session_ids:
            messages = load_messages(con, session_id)
            info = con.execute(
                "SELECT project, started_at, format FROM sessions WHERE session_id = ?", [session_id]
            ).fetchone()
            meta = f"{session_id} ({info[2]}, project {info[0]}, started {info[1]})" if info else session_id
            requests.append(
                reflector_request(
                    template,
                    render_session(messages, settings.max_input_tokens),
                    frozen,
                    sections,
                    model=settings.reflector_model,
                    session_id=session_id,
                    session_meta=meta,
                    context={"messages": messages, "playbook": frozen},
                )
            )
        return requests

    return _run_step(db, playbook, epoch, settings, llm, run_id, build, "reflector", parse_reflector)


def curate_sessions(
    db: Path, playbook: str, epoch: Epoch, reflections: list[StepResult], settings: Settings, llm: str, run_id: str
) -> list[StepResult]:
    """Curator calls for the sessions whose reflection succeeded (reflector output only, no transcript)."""
    usable = [r for r in reflections if r.output is not None]

    def build(
        con: duckdb.DuckDBPyConnection, frozen: Playbook, sections: SectionSet, template: PromptTemplate
    ) -> list[LLMRequest]:
        return [
            curator_request(
                template,
                ReflectorOutput.model_validate(r.output),
                frozen,
                sections,
                model=settings.curator_model,
                session_id=r.session_id,
                context={"reflection": ReflectorOutput.model_validate(r.output), "playbook": frozen},
            )
            for r in usable
        ]

    curated = {
        r.session_id: r for r in _run_step(db, playbook, epoch, settings, llm, run_id, build, "curator", parse_curator)
    }
    return [
        curated.get(r.session_id) or StepResult(session_id=r.session_id, error=f"reflector: {r.error}")
        for r in reflections
    ]


def apply_epoch_sessions(
    db: Path, playbook: str, epoch: Epoch, reflections: list[StepResult], curations: list[StepResult], run_id: str
) -> list[SessionApply]:
    """Apply strictly in session order, one new version per session; failed sessions stay pending."""
    by_session = {c.session_id: c for c in curations}
    results: list[SessionApply] = []
    with open_db(db) as con:
        sections = sections_of(con, playbook)
        parent = current_version(con, playbook)
        current = load_version(con, playbook, parent)  # kept in memory: one rebuild per epoch, not per session
        for reflection in reflections:
            curation = by_session.get(reflection.session_id)
            if reflection.output is None or curation is None or curation.output is None:
                reason = reflection.error or (curation.error if curation else "no curator result")
                results.append(SessionApply(session_id=reflection.session_id, status="failed", reason=reason))
                continue
            new, report = apply_session(
                current,
                ReflectorOutput.model_validate(reflection.output),
                CuratorOutput.model_validate(curation.output),
                sections=sections,
            )
            version = write_version(
                con,
                playbook,
                new,
                source="session",
                session_id=reflection.session_id,
                report=report,
                run_id=run_id,
                expected_parent=parent,
            )
            parent, current = version, new
            results.append(
                SessionApply(
                    session_id=reflection.session_id, status="applied", version=version, report=report.model_dump()
                )
            )
        close_epoch(con, playbook, epoch.epoch_no)
    return results


def timed(phases: dict[str, float], name: str) -> Callable[[], None]:
    """Start timing a phase; call the returned function to add the elapsed seconds."""
    started = time.perf_counter()

    def stop() -> None:
        phases[name] = phases.get(name, 0.0) + time.perf_counter() - started

    return stop
